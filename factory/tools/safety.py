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
above or acquires a key; MCP ``readOnlyHint: false``, or a destructive tool) are executed only from
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

__all__ = ["DESTRUCTIVE_WORDS", "destructive_name", "mcp_destructive", "openapi_destructive", "refusal", "sources_of"]

DESTRUCTIVE_WORDS = frozenset(
    {"delete", "del", "drop", "remove", "rm", "destroy", "purge", "truncate", "wipe", "erase", "reset", "clear"}
)
OVERWRITING_METHODS = frozenset({"DELETE", "PUT", "PATCH"})


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
    if spec.state_changing and not writes:
        return (
            f"{spec.qualified_name} ({spec.method}) changes state and its source is side_effects: read_only: "
            "inventoried, never executed; set side_effects: allow_writes on the source to execute it"
        )
    return None
