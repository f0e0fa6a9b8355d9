"""Native actions (§3.1): every golden call normalized into an operation plus typed arguments.

A task's target native trajectory a* is its golden path as an agent must issue it: key-acquisition
calls left out (the executor acquires keys, App. B.1), hidden parameters (the API key, format
switches) dropped, and every value typed by the parameter's schema (a recorded "1" where the schema
says integer becomes 1). The native catalog is the domain's offered tools in the same form.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factory.eval.oracle import coerce
from factory.eval.scoring import is_key_action, key_tool_names
from factory.ingest import signature_text
from factory.llm.agent import offered_from_spec
from factory.tools.executor import KEY_PLACEHOLDER
from factory.tools.spec import ToolSpec
from factory.variants.core import Call, Catalog, ToolDef, VariantError


@dataclass(frozen=True)
class NativeAction:
    """One native action: the operation (native tool name), its platform and its typed arguments."""

    operation: str
    arguments: dict[str, Any]
    platform: str = ""
    step: int = 0

    def key(self) -> str:
        return json.dumps([self.operation, self.arguments], sort_keys=True, ensure_ascii=False, default=str)

    def as_call(self, label: str = "") -> Call:
        return Call(self.operation, dict(self.arguments), label=label, step=self.step)

    def as_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "arguments": self.arguments, "platform": self.platform, "step": self.step}


def native_tool(spec: ToolSpec) -> ToolDef:
    """A ToolSpec as the agent sees it (key and format parameters hidden), classed by its platform."""
    offered = offered_from_spec(spec)
    generic = tuple(p for p in (spec.generic_params.page, spec.generic_params.page_size) if p)
    return ToolDef(
        name=spec.name,
        description=spec.description,
        parameters=offered.parameters,
        cls=spec.platform,
        generic=generic,
        text=signature_text(spec.model_dump(mode="json")),  # tool_catalog's text: its cached embedding is reused
    )


def native_catalog(domain: str, specs: Iterable[ToolSpec]) -> Catalog:
    """The domain's native schema S0: every tool an agent is offered (key tools excluded), by name."""
    tools = sorted(
        (native_tool(s) for s in specs if s.domain == domain and s.key_acquisition is None),
        key=lambda t: (t.cls, t.name),
    )
    seen: dict[str, str] = {}
    for t in tools:
        if t.name in seen:
            raise VariantError(
                f"domain {domain!r}: tool name {t.name!r} is offered by {seen[t.name]!r} and {t.cls!r}; "
                "schema variants need unique tool names per domain"
            )
        seen[t.name] = t.cls
    return Catalog(domain, tuple(tools))


def native_actions(task: Mapping[str, Any], specs: Mapping[tuple[str, str], ToolSpec]) -> list[NativeAction]:
    """The task's target native trajectory a*: its golden calls as native actions (see module doc)."""
    keys = key_tool_names(task["system_state"])
    out: list[NativeAction] = []
    for a in task["golden_actions"]:
        if is_key_action(a, specs, keys):
            continue
        spec = specs.get((a["platform"], a["tool"]))
        if spec is None:
            raise VariantError(f"task {str(task.get('id'))[:19]}: no tool {a['platform']}/{a['tool']} in the inventory")
        tool = native_tool(spec)
        props = tool.properties
        args = {k: coerce(v, props.get(k) or {}) for k, v in a["args"].items() if k in props and v != KEY_PLACEHOLDER}
        out.append(NativeAction(operation=a["tool"], arguments=args, platform=a["platform"], step=int(a["step"])))
    return out


def target_trajectory(task: Mapping[str, Any], specs: Mapping[tuple[str, str], ToolSpec]) -> list[dict[str, Any]]:
    """a* as plain rows (what a task row carries as `target_actions`)."""
    return [a.as_dict() for a in native_actions(task, specs)]


def as_trace(actions: Sequence[NativeAction]) -> list[Call]:
    """a* as a trace on the native catalog; call i is labelled 'a<i>'."""
    return [a.as_call(f"a{i}") for i, a in enumerate(actions)]


def action_keys(calls: Iterable[Call | NativeAction]) -> list[str]:
    return [c.key() for c in calls]
