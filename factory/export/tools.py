"""OpenAI function definitions for a task's tools, built from the ToolSpecs of its available tools.

A task names its tools by name (`available_tools`) and its calls by (platform, tool). `TaskTools`
resolves both to ToolSpecs through the `ToolRegistry` (bare names by its one rule,
`ToolRegistry.resolve`; an unknown or ambiguous name raises `ToolResolutionError`), chooses the function name each tool is exposed under (the tool name,
or `<platform>__<name>` when two of the task's tools share a name) and renders the definitions.
Vendor keywords (`x-...`) are removed from the parameter schemas; the API-key parameter is kept
and documented, or hidden (`exports.key_param`).
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from factory.tools.registry import ToolRegistry, ToolResolutionError
from factory.tools.spec import ToolSpec

__all__ = ["TaskTools", "ToolResolutionError", "clean_schema", "function_name", "tool_names"]

_NAME_OK = re.compile(r"[^A-Za-z0-9_-]")
_SCHEMA_CHILDREN = ("items", "additionalProperties", "not", "contains")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def clean_schema(schema: Any) -> Any:
    """A JSON Schema without vendor (`x-...`) keywords; property names are left alone."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k.startswith("x-"):
            continue
        if k in ("properties", "patternProperties", "$defs", "definitions") and isinstance(v, dict):
            out[k] = {name: clean_schema(sub) for name, sub in v.items()}
        elif k in _SCHEMA_CHILDREN:
            out[k] = clean_schema(v)
        elif k in _SCHEMA_LISTS and isinstance(v, list):
            out[k] = [clean_schema(x) for x in v]
        else:
            out[k] = v
    return out


def function_name(spec: ToolSpec, qualified: bool) -> str:
    name = f"{spec.platform}__{spec.name}" if qualified else spec.name
    return _NAME_OK.sub("_", name)[:64]


class TaskTools:
    """The tools of one task: specs in a stable order, the exposed function names, definitions."""

    def __init__(self, task: Mapping[str, Any], registry: ToolRegistry, key_param: str = "documented"):
        self.hidden_keys = key_param == "hidden"
        platforms = {*task.get("platforms", []), *(a["platform"] for a in task["golden_actions"])}
        specs: dict[tuple[str, str], ToolSpec] = {}
        for a in task["golden_actions"]:
            s = registry.platform_tool(a["platform"], a["tool"])
            specs[(s.platform, s.name)] = s
        for name in task.get("available_tools") or []:
            if any(n == name for _, n in specs):
                continue
            s = registry.resolve(name, platforms=platforms, domain=task["domain"])
            specs[(s.platform, s.name)] = s
        if self.hidden_keys:
            specs = {k: s for k, s in specs.items() if s.key_acquisition is None}
        self.specs = [specs[k] for k in sorted(specs, key=lambda k: (k[1], k[0]))]
        counts: dict[str, int] = {}
        for s in self.specs:
            counts[s.name] = counts.get(s.name, 0) + 1
        self.names = {(s.platform, s.name): function_name(s, counts[s.name] > 1) for s in self.specs}

    def visible(self, action: Mapping[str, Any]) -> bool:
        """Whether a golden action appears in the conversation (key calls are left out when keys are hidden)."""
        return (action["platform"], action["tool"]) in self.names

    def name_of(self, action: Mapping[str, Any]) -> str:
        return self.names[(action["platform"], action["tool"])]

    def spec_of(self, action: Mapping[str, Any]) -> ToolSpec:
        return next(s for s in self.specs if (s.platform, s.name) == (action["platform"], action["tool"]))

    def call_args(self, action: Mapping[str, Any]) -> dict[str, Any]:
        """Arguments as the model sends them: the key as <KEY> (documented) or left out (hidden)."""
        args = dict(action.get("args") or {})
        key = self.spec_of(action).generic_params.key
        if key and self.hidden_keys:
            args.pop(key, None)
        return args

    def definitions(self) -> list[dict[str, Any]]:
        """OpenAI `tools` entries ({"type": "function", "function": {name, description, parameters}})."""
        return [self.definition(s) for s in self.specs]

    def definition(self, spec: ToolSpec) -> dict[str, Any]:
        params = clean_schema(spec.input_schema) or {"type": "object", "properties": {}}
        params = {"type": "object", "properties": {}, **params}
        key = spec.generic_params.key
        if key and self.hidden_keys:
            params["properties"] = {k: v for k, v in params["properties"].items() if k != key}
            if "required" in params:
                params["required"] = [r for r in params["required"] if r != key]
        return {
            "type": "function",
            "function": {
                "name": self.names[(spec.platform, spec.name)],
                "description": " ".join(spec.description.split()),
                "parameters": params,
            },
        }

    def key_tools(self) -> dict[str, str]:
        """platform → function name of its key-acquisition tool (documented keys only)."""
        return {s.platform: self.names[(s.platform, s.name)] for s in self.specs if s.key_acquisition is not None}


def tool_names(definitions: Sequence[Mapping[str, Any]]) -> list[str]:
    return [d["function"]["name"] for d in definitions]
