"""Tool structure of a task or benchmark row: call groups, tool-sequence signature, edges.

- Call groups: golden actions grouped by `step` (parallel calls share a step), in step order,
  with API-key acquisition calls removed (a fixed property of the open-API environment, not of
  the task: EDGE Appendix H.2).
- Structure signature: each group's distinct tool names sorted and joined by "|", groups joined
  by ">", consecutive equal groups collapsed (a FAN of five calls and a list of the same tool three
  times in a row have one signature). Two rows have the same structure when these strings are equal.
- Function-pair (dependency) edges: (u, v) for every junction where an output field of tool u
  feeds a parameter of tool v; key acquisition never forms one, and any edge touching a key tool
  is dropped as well.
- Adjacency edges: every call of a group linked to every call of the next group (occurrences
  counted with multiplicity), key-acquisition calls removed first.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from factory.records import unrestricted

Edge = tuple[str, str]


class ToolSequenceError(ValueError):
    """A tool sequence that cannot be read (wrong types)."""


def key_tools_of_inventories(inventories: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Names of the key-acquisition tools (ToolSpec.key_acquisition set) of every inventory."""
    out: set[str] = set()
    for inv in inventories.values():
        for t in inv.get("tools") or []:
            if t.get("key_acquisition"):
                out.add(t["name"])
    return out


def key_tools_of_task(task: Mapping[str, Any]) -> set[str]:
    """Key-acquisition tools a task declares in system_state.api_key.acquire_with."""
    acq = ((task.get("system_state") or {}).get("api_key") or {}).get("acquire_with")
    if isinstance(acq, str):
        return {acq}
    if isinstance(acq, Mapping):
        return {v for v in acq.values() if isinstance(v, str)}
    return set()


def call_groups(actions: Iterable[Mapping[str, Any]], key_tools: set[str] | frozenset[str]) -> list[list[str]]:
    """Tool names per step (step order, call order within a step), key-acquisition calls removed."""
    by_step: dict[int, list[str]] = {}
    for a in actions:
        if a["tool"] in key_tools:
            continue
        by_step.setdefault(int(a["step"]), []).append(a["tool"])
    return [by_step[s] for s in sorted(by_step)]


def groups_from_tools(value: Any, key_tools: set[str] | frozenset[str] = frozenset()) -> list[list[str]]:
    """Call groups from a benchmark-style tool sequence: a list whose items are tool names,
    {"name": ...} / {"tool": ...} objects (one sequential call each) or lists of those (parallel calls)."""
    if not isinstance(value, list):
        raise ToolSequenceError(f"a tool sequence must be a list, got {type(value).__name__}")

    def name(x: Any) -> str:
        if isinstance(x, str) and x.strip():
            return x.strip()
        if isinstance(x, Mapping):
            for k in ("name", "tool"):
                if isinstance(x.get(k), str) and x[k].strip():
                    return x[k].strip()
        raise ToolSequenceError(f"cannot read a tool name from {x!r}")

    groups = []
    for item in value:
        names = [name(x) for x in item] if isinstance(item, list) else [name(item)]
        names = [n for n in names if n not in key_tools]
        if names:
            groups.append(names)
    return groups


def signature(groups: list[list[str]]) -> str:
    parts: list[str] = []
    for g in groups:
        p = "|".join(sorted(set(g)))
        if not parts or parts[-1] != p:
            parts.append(p)
    return ">".join(parts)


def task_groups(task: Mapping[str, Any], key_tools: set[str] | frozenset[str] = frozenset()) -> list[list[str]]:
    """The task's call groups. A refusal (a policy that changes the answer) publishes no golden call: its question
    is still the unrestricted task's, so its structure is the unrestricted path's (kept as lineage under
    `policy.unrestricted`): a benchmark paraphrase of it collides like one of any other task."""
    actions = task.get("golden_actions") or unrestricted(task).get("golden_actions") or []
    return call_groups(actions, set(key_tools) | key_tools_of_task(task))


def task_signature(task: Mapping[str, Any], key_tools: set[str] | frozenset[str] = frozenset()) -> str:
    return signature(task_groups(task, key_tools))


def _tool_of(endpoint: str) -> str:
    return endpoint.split(".", 1)[0]


def dependency_edges(task: Mapping[str, Any], key_tools: set[str] | frozenset[str] = frozenset()) -> list[Edge]:
    """Function-pair edges (u, v) of the task's junctions, one occurrence per junction."""
    keys = set(key_tools) | key_tools_of_task(task)
    out = []
    for j in task.get("junctions") or []:
        u, v = _tool_of(j.get("from") or j.get("from_") or ""), _tool_of(j.get("to") or "")
        if u and v and u not in keys and v not in keys:
            out.append((u, v))
    return out


def adjacency_edges(groups: list[list[str]]) -> list[Edge]:
    """Every call of a group linked to every call of the next group (with multiplicity)."""
    out: list[Edge] = []
    for g1, g2 in zip(groups, groups[1:], strict=False):
        out.extend((u, v) for u in g1 for v in g2)
    return out
