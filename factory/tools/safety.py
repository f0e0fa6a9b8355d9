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

`refusal` says whether the project allows one: ``probes.allow_destructive: true`` allows every
destructive tool; a source's ``allow_destructive_tools`` allows the ones it names. A refused tool
is not probed (listed in `tool_probes` metadata as skipped), gets no skeleton edge, and the
executor answers a call to it locally (endpoint_unavailable, attempts=0) without sending it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factory.config import ProjectConfig
    from factory.tools.spec import ToolSpec

__all__ = ["DESTRUCTIVE_WORDS", "destructive_name", "mcp_destructive", "openapi_destructive", "refusal"]

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


def refusal(spec: ToolSpec, cfg: ProjectConfig) -> str | None:
    """Why the project does not execute `spec` (a destructive tool it did not opt into), or None."""
    if not spec.destructive or cfg.probes.allow_destructive:
        return None
    if spec.domain in cfg.domain_names:
        for src in cfg.domain(spec.domain).sources:
            named = spec.name in src.allow_destructive_tools or spec.original_name in src.allow_destructive_tools
            if named and src.platform in (None, spec.platform):
                return None
    return (
        f"destructive tool {spec.qualified_name} ({spec.method}) not executed: opt in with "
        "probes.allow_destructive or the source's allow_destructive_tools"
    )
