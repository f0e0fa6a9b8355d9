"""Per-tool representation (Table 1): operators that change a tool in place — nest, rename, strip
descriptions, reorder arguments. None of them changes which native operation a call selects or the
minimum call path; the decoder still rejects calls that are not valid in the presented form.
"""

import copy
import hashlib
import random
from collections.abc import Sequence
from typing import Any, Literal

from factory.variants.core import (
    Call,
    Catalog,
    CheckedSession,
    Execute,
    NotApplicable,
    Outcome,
    ToolDef,
    Variant,
    VariantError,
    encode_calls,
    object_schema,
    slug,
    tool_name,
    with_tools,
)

NEST_FIELD = {"all": "params", "optional": "options"}


def nest(catalog: Catalog, which: Literal["all", "optional"] = "all", *, vid: str | None = None) -> Variant:
    """Pack a tool's arguments (all of them, or only the optional ones) into one object, one level deep."""
    if which not in NEST_FIELD:
        raise VariantError(f"nest: which must be 'all' or 'optional', got {which!r}")
    wrapper = NEST_FIELD[which]
    packed: dict[str, list[str]] = {}
    tools = []
    for t in catalog.tools:
        props = t.properties
        inner = [p for p in props if which == "all" or p not in t.required]
        if not inner or wrapper in props:
            tools.append(t)
            continue
        inner_req = [r for r in t.required if r in inner]
        outer = {p: s for p, s in props.items() if p not in inner}
        outer[wrapper] = {
            **object_schema({p: props[p] for p in inner}, inner_req),
            "description": f"The {'arguments' if which == 'all' else 'optional arguments'} of {t.name}.",
        }
        req = [r for r in t.required if r not in inner] + ([wrapper] if inner_req else [])
        tools.append(ToolDef(t.name, t.description, object_schema(outer, req), t.cls, t.generic))
        packed[t.name] = inner
    if not packed:
        raise NotApplicable(f"nest {which}: no tool of {catalog.domain!r} has arguments to pack")
    schema = with_tools(catalog, tools)

    def pack(c: Call) -> Call:
        inner = {k: v for k, v in c.arguments.items() if k in packed[c.name]}
        args = {k: v for k, v in c.arguments.items() if k not in packed[c.name]}
        if inner or which == "all":
            args[wrapper] = inner
        return Call(c.name, args, c.label, c.step)

    def encode(trace: Sequence[Call]) -> list[Call]:
        return encode_calls(trace, packed, pack)

    def decode(tool: ToolDef, call: Call) -> Outcome:
        if tool.name not in packed:
            return Execute(call)
        args = {k: v for k, v in call.arguments.items() if k != wrapper}
        args.update(call.arguments.get(wrapper) or {})
        return Execute(Call(tool.name, args, call.label, call.step))

    return Variant(
        id=vid or f"nest_{which}",
        operator="nest",
        method=which,
        schema=schema,
        base=catalog,
        encoder=encode,
        decoder=lambda: CheckedSession(schema, decode),
        instruction=f"Put the tool's {'arguments' if which == 'all' else 'optional arguments'} inside `{wrapper}`.",
    )


def opaque_name(name: str, seed: int) -> str:
    return "fn_" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:8]


def rename(
    catalog: Catalog, style: Literal["namespaced", "opaque"] = "namespaced", *, seed: int = 0, vid: str | None = None
) -> Variant:
    """New function names: the class as a namespace prefix, or opaque identifiers (the description stays)."""
    if style == "namespaced":
        mapping = {t.name: tool_name(slug(t.cls or catalog.domain), t.name) for t in catalog.tools}
    elif style == "opaque":
        mapping = {t.name: opaque_name(t.name, seed) for t in catalog.tools}
    else:
        raise VariantError(f"rename: style must be 'namespaced' or 'opaque', got {style!r}")
    if len(set(mapping.values())) != len(mapping):
        raise VariantError(f"rename {style}: two tools of {catalog.domain!r} get the same name")
    back = {v: k for k, v in mapping.items()}
    schema = with_tools(
        catalog, [ToolDef(mapping[t.name], t.description, t.parameters, t.cls, t.generic) for t in catalog.tools]
    )

    def encode(trace: Sequence[Call]) -> list[Call]:
        return [Call(mapping.get(c.name, c.name), c.arguments, c.label, c.step) for c in trace]

    def decode(tool: ToolDef, call: Call) -> Outcome:
        return Execute(Call(back[tool.name], call.arguments, call.label, call.step))

    return Variant(
        id=vid or f"rename_{style}",
        operator="rename",
        method=style,
        schema=schema,
        base=catalog,
        encoder=encode,
        decoder=lambda: CheckedSession(schema, decode),
        instruction=(
            "Tool names start with their service as a namespace."
            if style == "namespaced"
            else "Tool names are opaque identifiers: choose tools by their descriptions."
        ),
    )


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in ("description", "title", "examples")}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _same(trace: Sequence[Call]) -> list[Call]:
    return list(trace)


def strip_descriptions(catalog: Catalog, *, vid: str | None = None) -> Variant:
    """Function and parameter descriptions removed; names and types stay."""
    schema = with_tools(catalog, [ToolDef(t.name, "", _strip(t.parameters), t.cls, t.generic) for t in catalog.tools])
    return Variant(
        id=vid or "strip_descriptions",
        operator="strip",
        method="descriptions",
        schema=schema,
        base=catalog,
        encoder=_same,
        decoder=lambda: CheckedSession(schema),
        instruction="Tools have no descriptions: infer what they do from their names and arguments.",
    )


def reorder(catalog: Catalog, *, seed: int = 0, vid: str | None = None) -> Variant:
    """The declared property order (and so `required`) changes: reversed, or shuffled with `seed` > 0."""
    tools = []
    changed = False
    for t in catalog.tools:
        names = list(t.properties)
        if seed:
            random.Random(f"{seed}:{t.name}").shuffle(names)
        else:
            names.reverse()
        changed |= names != list(t.properties)
        params = copy.deepcopy(t.parameters)
        params["properties"] = {p: t.properties[p] for p in names}
        if t.required:
            params["required"] = [p for p in names if p in t.required]
        tools.append(ToolDef(t.name, t.description, params, t.cls, t.generic))
    if not changed:
        raise NotApplicable(f"reorder: no tool of {catalog.domain!r} has two arguments")
    schema = with_tools(catalog, tools)
    return Variant(
        id=vid or "reorder_arguments",
        operator="reorder",
        method="reversed" if not seed else f"shuffled_{seed}",
        schema=schema,
        base=catalog,
        encoder=_same,
        decoder=lambda: CheckedSession(schema),
        instruction="",
    )
