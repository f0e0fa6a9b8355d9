"""What every filter needs to know about one task, derived once (pure).

A `TaskContext` ties a Task row to its trajectory (seeds, thresholds, bridge values), its tools'
specs, and the dataflow of its golden actions: which step's output feeds which later call
(`Link`s, from the task's junction records), which actions the answer reads, which actions only
fetch an API key.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factory.synthesis import answers
from factory.synthesis.junctions import junction_ends
from factory.tools.registry import ToolRegistry
from factory.tools.spec import ToolSpec


@dataclass(frozen=True)
class Link:
    """One junction as executed: `fields` of `up_tool` at `up_step` fill `params` of the `down` actions."""

    up_step: int
    up_tool: str
    fields: tuple[str, ...]
    down_step: int
    down_tool: str
    params: tuple[str, ...]
    down: tuple[int, ...]  # indices of the golden actions (pages included) that carry the bound params
    process: dict[str, Any] | None = None
    type: str = "SEQ"


@dataclass
class TaskContext:
    task: dict[str, Any]
    trajectory: dict[str, Any] | None
    specs: list[ToolSpec | None]  # per golden action (None: unknown tool)
    seeds: list[Any] = field(default_factory=list)
    thresholds: list[Any] = field(default_factory=list)
    bridges: list[Any] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    key_actions: set[int] = field(default_factory=set)
    answer_actions: set[int] = field(default_factory=set)

    @property
    def actions(self) -> list[dict[str, Any]]:
        return self.task["golden_actions"]

    @property
    def language(self) -> str:
        return self.task.get("language", "en")

    @property
    def allowed_values(self) -> list[Any]:
        """Values the query may state: seed arguments and process-node thresholds."""
        return [*self.seeds, *self.thresholds]

    def steps(self) -> list[int]:
        return sorted({a["step"] for a in self.actions})

    def step_actions(self, step: int) -> list[int]:
        return [i for i, a in enumerate(self.actions) if a["step"] == step]

    def key_step(self, step: int) -> bool:
        idx = self.step_actions(step)
        return bool(idx) and all(i in self.key_actions for i in idx)

    def links_from(self, step: int) -> list[Link]:
        return [lk for lk in self.links if lk.up_step == step]

    def passed_values(self, step: int) -> list[Any]:
        """Distinct values the step's output hands to later calls (the bound arguments)."""
        out: list[Any] = []
        for lk in self.links_from(step):
            for i in lk.down:
                for p in lk.params:
                    v = self.actions[i]["args"].get(p)
                    if v is not None and v not in out:
                        out.append(v)
        return out

    def realtime_actions(self) -> list[int]:
        return [i for i, s in enumerate(self.specs) if s is not None and s.realtime]


def answer_calls(spec: Any, actions: Sequence[Mapping[str, Any]]) -> set[int]:
    """Every golden-action position an answer spec reads (counts, values, arms, condition, parts); a spec
    whose references name no golden action reads nothing here (the rules stage reports it as malformed)."""
    try:
        return answers.positions(spec, actions)
    except answers.SpecError:
        return set()


def build_links(actions: Sequence[Mapping[str, Any]], junctions: Sequence[Mapping[str, Any]]) -> list[Link]:
    """Links of the golden actions from the task's junction records (CMP arms share one link)."""
    out: dict[tuple, Link] = {}
    for j in junctions:
        if (ends := junction_ends(j)) is None:
            continue
        up_tool, fields, down_tool, params = ends
        down_steps = sorted(
            {a["step"] for a in actions if a["tool"] == down_tool and all(q in (a.get("args") or {}) for q in params)}
        )
        for ds in down_steps:
            ups = [a["step"] for a in actions if a["tool"] == up_tool and a["step"] < ds]
            if not ups:
                continue
            us = max(ups)
            down = tuple(
                i
                for i, a in enumerate(actions)
                if a["step"] == ds and a["tool"] == down_tool and all(q in (a.get("args") or {}) for q in params)
            )
            key = (us, up_tool, fields, ds, down_tool, params)
            if key not in out:
                out[key] = Link(
                    us, up_tool, fields, ds, down_tool, params, down, j.get("process"), j.get("type", "SEQ")
                )
            break  # a junction feeds the first later step that calls its target
    return sorted(out.values(), key=lambda lk: (lk.down_step, lk.up_step, lk.up_tool))


def _flat(values: Sequence[Any]) -> list[Any]:
    return [v for v in values if v is not None and not isinstance(v, dict | list)]


def build_context(task: dict[str, Any], trajectory: Mapping[str, Any] | None, specs: ToolRegistry) -> TaskContext:
    actions = task.get("golden_actions") or []
    tool_specs = [specs.lookup(a.get("platform", ""), a.get("tool", "")) for a in actions]
    links = build_links(actions, task.get("junctions") or [])
    ctx = TaskContext(task=task, trajectory=dict(trajectory) if trajectory else None, specs=tool_specs, links=links)
    ctx.key_actions = {i for i, s in enumerate(tool_specs) if s is not None and s.key_acquisition is not None}
    ctx.answer_actions = answer_calls(task.get("answer_spec") or {}, actions)
    if trajectory is not None:
        ctx.seeds = _flat([s.get("value") for s in trajectory.get("seeds") or []])
        ctx.thresholds = _flat(list(trajectory.get("thresholds") or []))
        ctx.bridges = _flat(list(trajectory.get("bridge_values") or []))
    else:  # no trajectory: seeds are the first real step's arguments, bridges the bound arguments
        first = next((s for s in ctx.steps() if not ctx.key_step(s)), None)
        for i in ctx.step_actions(first) if first is not None else []:
            spec = tool_specs[i]
            generic = spec.generic_params.names() if spec is not None else set()
            ctx.seeds += _flat([v for k, v in actions[i]["args"].items() if k not in generic and v != "<KEY>"])
        ctx.thresholds = _flat([(j.get("process") or {}).get("threshold") for j in task.get("junctions") or []])
        ctx.bridges = _flat([v for s in ctx.steps() for v in ctx.passed_values(s)])
    return ctx
