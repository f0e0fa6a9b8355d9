"""Which tools may be executed: destructive tools are left alone unless the project opts in.

A tool is *destructive* (`ToolSpec.destructive`, decided by its loader with `openapi_destructive`
or `mcp_destructive`) when calling it may destroy or overwrite state, or when its effect is
unknown and could be that:

- OpenAPI: an explicit ``x-destructive: true|false`` decides. Otherwise DELETE, PUT and PATCH
  are destructive; a POST is destructive unless it is marked safe (``x-state-changing: false``:
  a read served by POST, or ``x-destructive: false``: a non-destructive create) or it is the
  platform's key-acquisition call. GET/HEAD/OPTIONS are not.
- MCP: ``readOnlyHint: true`` or ``destructiveHint: false`` → not destructive;
  ``destructiveHint: true``, or ``readOnlyHint: false`` without a destructive hint (the MCP
  default for destructiveHint is true) → destructive. Without annotations: the name rule.
- Any kind without an explicit mark: a name with a word such as delete, drop, remove, destroy,
  purge, truncate, wipe, erase, reset or clear (``delete_all``, ``dropTable``) is destructive.

State changes (`ToolSpec.state_changing`: POST/PUT/PATCH/DELETE unless a POST is marked safe as
above or acquires a key; MCP ``readOnlyHint: false``, or a destructive tool; and an MCP tool named
for creating, ``create_…``/``add_…``: `creates_data`) are executed only from
a source with ``side_effects: allow_writes`` (the default for demo:// sources; any other source is
``read_only`` unless it says otherwise): elsewhere such a tool is inventoried and shown, never executed.

`refusal` says whether the project allows one: ``probes.allow_destructive: true`` allows every
destructive tool; a source's ``allow_destructive_tools`` allows the ones it names. A refused tool
is not probed (listed in `tool_probes` metadata as skipped), gets no skeleton edge, and the
executor answers a call to it locally (endpoint_unavailable, attempts=0) without sending it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factory.config import ProjectConfig, SourceConfig
    from factory.tools.spec import ToolSpec

__all__ = [
    "CREATING_WORDS",
    "DESTRUCTIVE_WORDS",
    "creates_data",
    "destructive_name",
    "mcp_destructive",
    "openapi_destructive",
    "refusal",
    "sources_of",
    "writes_first",
]

DESTRUCTIVE_WORDS = frozenset(
    {"delete", "del", "drop", "remove", "rm", "destroy", "purge", "truncate", "wipe", "erase", "reset", "clear"}
)
OVERWRITING_METHODS = frozenset({"DELETE", "PUT", "PATCH"})
# first words of a tool name that make or add data (create_entities, add_observations, insertRow)
CREATING_WORDS = frozenset(
    {"create", "add", "insert", "write", "post", "put", "save", "upload", "append", "new", "register"}
)


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def destructive_name(name: str) -> bool:
    """True when a word of the tool's name says it destroys something (``delete_all``, ``dropTable``)."""
    return any(w in DESTRUCTIVE_WORDS for w in _words(name))


def openapi_destructive(method: str, op: dict[str, Any], name: str, *, key_acquisition: bool) -> bool:
    """Whether an OpenAPI operation is destructive (see the module docstring)."""
    explicit = op.get("x-destructive")
    if isinstance(explicit, bool):
        return explicit
    if destructive_name(name) or destructive_name(str(op.get("operationId") or "")):
        return True
    method = method.upper()
    if method in OVERWRITING_METHODS:
        return True
    if method == "POST":
        return not (key_acquisition or op.get("x-state-changing") is False)
    return False


def mcp_destructive(annotations: Any, name: str) -> bool:
    """Whether an MCP tool is destructive, from its annotations (hints) or else its name."""
    read_only = getattr(annotations, "readOnlyHint", getattr(annotations, "read_only_hint", None))
    hint = getattr(annotations, "destructiveHint", getattr(annotations, "destructive_hint", None))
    if read_only is True or hint is False:
        return False
    if hint is True or read_only is False:
        return True
    return destructive_name(name)


def sources_of(spec: ToolSpec, cfg: ProjectConfig) -> list[SourceConfig]:
    """The configured sources `spec` may come from: the one naming its platform, else those of its kind
    that name none (the platform then came from the document or server)."""
    if spec.domain not in cfg.domain_names:
        return []
    sources = cfg.domain(spec.domain).sources
    named = [s for s in sources if s.platform == spec.platform]
    return named or [s for s in sources if s.platform is None and s.kind == spec.source.kind]


def refusal(spec: ToolSpec, cfg: ProjectConfig) -> str | None:
    """Why the project does not execute `spec`, or None.

    A tool named in its source's ``allow_destructive_tools`` is executed (an explicit opt-in). Else a
    destructive tool needs ``probes.allow_destructive``, and any tool that changes state needs a source
    with ``side_effects: allow_writes`` (the default only for demo:// sources)."""
    sources = sources_of(spec, cfg)
    if any({spec.name, spec.original_name} & set(src.allow_destructive_tools) for src in sources):
        return None
    writes = bool(sources) and all(s.writes_allowed for s in sources)
    if spec.destructive and not cfg.probes.allow_destructive:
        return (
            f"destructive tool {spec.qualified_name} ({spec.method}) not executed: opt in with "
            "probes.allow_destructive or the source's allow_destructive_tools"
            + ("" if writes else " (its source is also side_effects: read_only)")
        )
    if (spec.state_changing or creates_data(spec)) and not writes:
        return (
            f"{spec.qualified_name} ({spec.method}) changes state and its source is side_effects: read_only: "
            "inventoried, never executed; set side_effects: allow_writes on the source to execute it"
        )
    return None


def creates_data(spec: ToolSpec) -> bool:
    """Whether calling `spec` may make data other tools then read: a state-changing tool that is not
    destructive, or an MCP tool whose name starts with a creating verb (a ``create_entities`` served
    without hints: only its name says it changes state; `refusal` holds such a tool back from a
    read-only source like any other state change)."""
    if spec.destructive or spec.key_acquisition is not None:
        return False
    ws = _words(spec.original_name or spec.name)
    return spec.state_changing or (spec.method == "MCP" and bool(ws and ws[0] in CREATING_WORDS))


def writes_first(tools: list[ToolSpec]) -> list[list[int]]:
    """Phases of one probe round, as positions in `tools` (one per call): the calls of tools that create
    data first, then every other call, so a reader probed in the same round sees what was created
    (``create_entities`` before ``read_graph``/``open_nodes`` of a memory server that starts empty).
    Empty phases are left out; positions keep their order within a phase."""
    writers = [i for i, t in enumerate(tools) if creates_data(t)]
    readers = [i for i, t in enumerate(tools) if not creates_data(t)]
    return [p for p in (writers, readers) if p]


async def call_writes_first(ex: Any, calls: list[tuple[ToolSpec, dict[str, Any]]]) -> list[Any]:
    """`ex.call_many(calls, episodes=True)` in the phases of `writes_first`: the creating calls one at a
    time (a store that reads, changes and rewrites one file loses concurrent writes: the memory server
    kept only the relation of a create_entities/create_relations pair), then the others concurrently.
    Results in the order of `calls`."""
    results: list[Any] = [None] * len(calls)
    for phase in writes_first([t for t, _ in calls]):
        groups = [[i] for i in phase] if creates_data(calls[phase[0]][0]) else [phase]  # phases are all one kind
        for group in groups:
            got = await ex.call_many([calls[i] for i in group], episodes=True)
            for i, res in zip(group, got, strict=True):
                results[i] = res
    return results


def empty_reads_to_repeat(
    rows: list[dict[str, Any]], tools: dict[str, ToolSpec], round_no: int
) -> list[tuple[ToolSpec, dict[str, Any]]]:
    """Calls to repeat once after round `round_no` created data: the reads of earlier rounds that
    succeeded with no record (a store that was still empty), when a tool that creates data succeeded
    with records in this round.  Each (tool, args) once; reads already repeated are not repeated again."""
    created = any(
        r.get("round") == round_no
        and r.get("tool") in tools
        and creates_data(tools[r["tool"]])
        and str(r.get("outcome", "")).endswith("success")
        and (r.get("record_count") or 0) > 0
        for r in rows
    )
    if not created:
        return []
    repeated = {(r["tool"], dumps_args(r.get("args"))) for r in rows if r.get("repeat_of_round") is not None}
    out: list[tuple[ToolSpec, dict[str, Any]]] = []
    seen: set[tuple[str, str]] = set()
    for r in rows:
        name = r.get("tool")
        if r.get("round", round_no) >= round_no or name not in tools or creates_data(tools[name]):
            continue
        if not str(r.get("outcome", "")).endswith("success") or (r.get("record_count") or 0) > 0:
            continue
        key = (name, dumps_args(r.get("args")))
        if key in seen or key in repeated:
            continue
        seen.add(key)
        out.append((tools[name], dict(r.get("args") or {})))
    return out


def dumps_args(args: Any) -> str:
    import json

    return json.dumps(args or {}, sort_keys=True, default=str)
