"""`factory plan`: what probing would do, per domain, without executing any tool.

For each tool of a domain's inventory: probed (with the kind of value each parameter would get) or
held back (with the reason from `factory.tools.safety.refusal`: a state change from a
``side_effects: read_only`` source, or a destructive tool not opted into). Reading the inventory
lists an MCP server's tools and fetches OpenAPI documents; no tool is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from factory.tools.safety import refusal
from factory.tools.schema import non_null_schema, schema_type

if TYPE_CHECKING:
    from factory.config import ProjectConfig
    from factory.tools.spec import ToolSpec

__all__ = ["format_plan", "plan_tools", "value_kind"]


def value_kind(tool: ToolSpec, param: str) -> str:
    """The kind of value a probe gives `param` (what `factory.ingest`'s probe arguments draw from)."""
    g = tool.generic_params
    if param == g.key:
        return "API key (the executor's)"
    if param == g.page:
        return "page 1"
    if param == g.page_size:
        return "page size ≤ 10"
    schema = non_null_schema(tool.params.get(param, {}))
    if param in g.format:
        return "response format (json)"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return f"enum ({len(schema['enum'])} values)"
    found = [k for k in ("example", "examples", "default") if schema.get(k) not in (None, [], "")]
    if found:
        return "schema " + "/".join(found)
    kind = schema_type(schema) or "value"
    fmt = f", format {schema['format']}" if schema.get("format") else ""
    return f"{kind}{fmt} seen in other tools' outputs"


def plan_tools(tools: list[ToolSpec], cfg: ProjectConfig) -> dict[str, list[dict[str, Any]]]:
    """``{"probe": [...], "held": [...]}``: one entry per tool (name, method, and either the value kind
    of each parameter, required first, or the reason it is held back)."""
    probe: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for t in tools:
        why = refusal(t, cfg)
        entry: dict[str, Any] = {"tool": t.qualified_name, "method": t.method}
        if why:
            held.append({**entry, "reason": why})
            continue
        required = [p for p in t.params if p in t.required_params]
        optional = [p for p in t.params if p not in t.required_params]
        entry["values"] = {p: value_kind(t, p) for p in required}
        entry["optional"] = {p: value_kind(t, p) for p in optional}
        probe.append(entry)
    return {"probe": probe, "held": held}


def format_plan(domain: str, plan: dict[str, list[dict[str, Any]]], per_tool: int) -> str:
    """The plan of one domain as text (what `factory plan` prints)."""
    lines = [
        f"domain {domain}: {len(plan['probe'])} tool(s) would be probed (up to {per_tool} calls each), "
        f"{len(plan['held'])} held back"
    ]
    for e in plan["probe"]:
        args = ", ".join(f"{p}: {k}" for p, k in e["values"].items()) or "no required arguments"
        opt = f"; optional: {', '.join(f'{p}: {k}' for p, k in e['optional'].items())}" if e["optional"] else ""
        lines.append(f"  probe {e['tool']} ({e['method']}): {args}{opt}")
    for e in plan["held"]:
        lines.append(f"  held  {e['tool']} ({e['method']}): {e['reason']}")
    return "\n".join(lines)
