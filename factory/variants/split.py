"""Aggregation: split (Table 1, App. C.1) — one tool becomes several, an argument's value moving into
the tool name.

- ``fully split``: every enumerable argument (an ``enum``, a boolean) is baked into the tool name:
  ``get_delay_statistics(group_by, ...)`` becomes ``get_delay_statistics__group_by_carrier(...)`` and
  so on; an optional one also gets an ``_unset`` tool that leaves it out;
- ``interval split``: one non-enumerable argument (the first required semantic number, else the first
  required semantic string) keeps its place but each tool accepts only one interval of its range,
  cut at 1, 2 or 4 points (numbers at powers of ten, strings alphabetically, case-insensitively).
"""

import copy
import itertools
from collections.abc import Sequence
from typing import Any

from factory.variants.core import (
    Call,
    Catalog,
    CheckedSession,
    Execute,
    NotApplicable,
    Outcome,
    Reject,
    ToolDef,
    Variant,
    VariantError,
    encode_calls,
    slug,
    tool_name,
    unique_name,
    with_tools,
)

UNSET = object()
MAX_SPLIT = 24  # at most this many tools from one native tool (more enumerable arguments stay arguments)
NUMBER_CUTS = {1: [100], 2: [10, 1000], 4: [10, 100, 1000, 10000]}
STRING_CUTS = {1: ["n"], 2: ["i", "r"], 4: ["e", "j", "o", "t"]}


def _types(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type")
    out = {t} if isinstance(t, str) else set(t or [])
    for alt in schema.get("anyOf") or []:
        out |= _types(alt)
    return out


def enum_values(schema: dict[str, Any]) -> list[Any] | None:
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return list(schema["enum"])
    if _types(schema) == {"boolean"}:
        return [True, False]
    return None


def _value_slug(v: Any) -> str:
    return "true" if v is True else "false" if v is False else slug(v, 24)


def fully_split(catalog: Catalog, *, vid: str | None = None) -> Variant:
    """Bake every enumerable argument into the tool names."""
    taken = {t.name for t in catalog.tools}
    tools: list[ToolDef] = []
    table: dict[str, tuple[str, dict[str, Any]]] = {}  # split tool → (native tool, baked values; UNSET: absent)
    encode_to: dict[tuple[str, str], str] = {}
    for t in catalog.tools:
        enums: list[tuple[str, list[Any]]] = []
        size = 1
        for p, sch in t.properties.items():
            vals = enum_values(sch)
            if vals is None:
                continue
            options = vals + ([UNSET] if p not in t.required else [])
            if size * len(options) > MAX_SPLIT:
                continue
            size *= len(options)
            enums.append((p, options))
        if not enums:
            tools.append(t)
            continue
        taken.discard(t.name)
        for combo in itertools.product(*(o for _, o in enums)):
            baked = {p: v for (p, _), v in zip(enums, combo, strict=True)}
            parts = [f"{p}_{'unset' if v is UNSET else _value_slug(v)}" for p, v in baked.items()]
            name = unique_name(tool_name(t.name, *parts), taken)
            props = {k: v for k, v in t.properties.items() if k not in baked}
            params: dict[str, Any] = {"type": "object", "properties": copy.deepcopy(props)}
            req = [r for r in t.required if r in props]
            if req:
                params["required"] = req
            said = ", ".join(f"{p} {'left out' if v is UNSET else '= ' + repr(v)}" for p, v in baked.items())
            tools.append(ToolDef(name, f"{t.description} (With {said}.)", params, t.cls, t.generic))
            table[name] = (t.name, {p: v for p, v in baked.items()})
            encode_to[(t.name, _combo_key(baked))] = name
    if not table:
        raise NotApplicable(f"fully split: no tool of {catalog.domain!r} has an enumerable argument")
    schema = with_tools(catalog, tools)
    split_of = {native for native, _ in table.values()}
    enum_params = {native: [p for p in vals] for native, vals in ((n, b) for n, b in table.values())}

    def bake(c: Call) -> Call:
        baked = {p: c.arguments.get(p, UNSET) for p in enum_params[c.name]}
        name = encode_to.get((c.name, _combo_key(baked)))
        if name is None:
            raise VariantError(f"fully split: {c.name} has no tool for {baked}")
        return Call(name, {k: v for k, v in c.arguments.items() if k not in baked}, c.label, c.step)

    def encode(trace: Sequence[Call]) -> list[Call]:
        return encode_calls(trace, split_of, bake)

    def decode(tool: ToolDef, call: Call) -> Outcome:
        if tool.name not in table:
            return Execute(call)
        native, baked = table[tool.name]
        args = dict(call.arguments)
        args.update({p: v for p, v in baked.items() if v is not UNSET})
        return Execute(Call(native, args, call.label, call.step))

    return Variant(
        id=vid or "split_full",
        operator="split",
        method="full",
        schema=schema,
        base=catalog,
        encoder=encode,
        decoder=lambda: CheckedSession(schema, decode),
        instruction="Some choices are part of the tool name: pick the tool whose name states the value you need.",
    )


def _combo_key(baked: dict[str, Any]) -> str:
    return repr(sorted((p, "<unset>" if v is UNSET else repr(v)) for p, v in baked.items()))


def split_argument(t: ToolDef) -> tuple[str, str] | None:
    """(argument, 'number' | 'string') that interval split cuts, or None."""
    for kind in ("number", "string"):
        for p in t.required:
            sch = t.properties.get(p) or {}
            if p in t.generic or enum_values(sch) is not None:
                continue
            ty = _types(sch)
            if kind == "number" and ty and ty <= {"integer", "number"}:
                return p, kind
            if kind == "string" and ty == {"string"}:
                return p, kind
    return None


def _interval(value: Any, cuts: list[Any], kind: str) -> int | None:
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        v: Any = value
    else:
        if not isinstance(value, str):
            return None
        v = value.casefold()
    return sum(1 for c in cuts if v >= c)


def interval_split(catalog: Catalog, cuts: int = 1, *, vid: str | None = None) -> Variant:
    """Cut one non-enumerable argument of every tool that has one into `cuts` + 1 intervals."""
    if cuts not in NUMBER_CUTS:
        raise VariantError(f"interval split: cuts must be one of {sorted(NUMBER_CUTS)}, got {cuts}")
    taken = {t.name for t in catalog.tools}
    tools: list[ToolDef] = []
    table: dict[str, tuple[str, str, str, list[Any], int]] = {}  # tool → (native, arg, kind, cuts, interval)
    by_native: dict[str, list[str]] = {}
    for t in catalog.tools:
        found = split_argument(t)
        if found is None:
            tools.append(t)
            continue
        p, kind = found
        points: list[Any] = list(NUMBER_CUTS[cuts] if kind == "number" else STRING_CUTS[cuts])
        taken.discard(t.name)
        names = []
        for i in range(len(points) + 1):
            lo, hi = (points[i - 1] if i else None), (points[i] if i < len(points) else None)
            if lo is None:
                label, said = f"below_{lo_hi(hi)}", f"{p} below {hi!r}"
            elif hi is None:
                label, said = f"from_{lo_hi(lo)}", f"{p} from {lo!r} on"
            else:
                label, said = f"{lo_hi(lo)}_to_{lo_hi(hi)}", f"{p} from {lo!r} up to (not including) {hi!r}"
            if kind == "string":
                said += " (alphabetically, ignoring case)"
            name = unique_name(tool_name(t.name, f"{slug(p)}_{label}"), taken)
            params = copy.deepcopy(t.parameters)
            sch = params["properties"][p]
            sch["description"] = f"{sch.get('description') or ''} Only {said}.".strip()
            if kind == "number":
                if lo is not None:
                    sch["minimum"] = lo
                if hi is not None:
                    sch["exclusiveMaximum"] = hi
            tools.append(ToolDef(name, f"{t.description} (Only for {said}.)", params, t.cls, t.generic))
            table[name] = (t.name, p, kind, points, i)
            names.append(name)
        by_native[t.name] = names
    if not table:
        raise NotApplicable(f"interval split: no tool of {catalog.domain!r} has a non-enumerable argument to cut")
    schema = with_tools(catalog, tools)

    def route(c: Call) -> Call:
        _, p, kind, points, _ = table[by_native[c.name][0]]
        i = _interval(c.arguments.get(p), points, kind)
        if i is None:
            raise VariantError(f"interval split: {c.name}.{p} = {c.arguments.get(p)!r} is not a {kind}")
        return Call(by_native[c.name][i], dict(c.arguments), c.label, c.step)

    def encode(trace: Sequence[Call]) -> list[Call]:
        return encode_calls(trace, by_native, route)

    def decode(tool: ToolDef, call: Call) -> Outcome:
        if tool.name not in table:
            return Execute(call)
        native, p, kind, points, i = table[tool.name]
        got = _interval(call.arguments.get(p), points, kind)
        if got != i:
            return Reject(f"{tool.name}: {p}={call.arguments.get(p)!r} is outside this tool's interval", "schema")
        return Execute(Call(native, dict(call.arguments), call.label, call.step))

    return Variant(
        id=vid or f"split_interval_{cuts}",
        operator="split",
        method=f"interval_{cuts}",
        schema=schema,
        base=catalog,
        encoder=encode,
        decoder=lambda: CheckedSession(schema, decode),
        instruction="Some tools exist once per value range: pick the tool whose range contains your value.",
    )


def lo_hi(v: Any) -> str:
    return slug(v, 12)
