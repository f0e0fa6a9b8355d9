"""Made-up structured values for inputs that take objects (a tool that creates records).

Argument discovery finds scalars (schema examples, descriptions, other tools' outputs); an input
such as the MCP memory server's ``create_entities(entities: [{name, entityType, observations[]}])``
has none of those, so without a made-up value nothing is ever created and every reader of the
service answers from an empty store.  `object_values` builds one small value from the input's
JSON Schema: every required property (all properties when none is marked required), strings as
``example-<property>-1`` unless the schema offers an example, default, enum or const, numbers at
their minimum (else 1), booleans false, arrays with one element.  The values are weak candidates:
they are used only where nothing better is known, and only for inputs that take objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from factory.tools.schema import non_null_schema

MAX_DEPTH = 4  # nested objects deeper than this are not made up (the value would not be small)


def _own_value(schema: Mapping[str, Any]) -> tuple[bool, Any]:
    """(True, value) where the schema itself offers one: const, example(s), default, enum."""
    if "const" in schema:
        return True, schema["const"]
    for key in ("example", "default"):
        if schema.get(key) is not None:
            return True, schema[key]
    for key in ("examples", "enum"):
        vals = schema.get(key)
        if isinstance(vals, list) and vals:
            return True, vals[0]
    return False, None


def made_value(schema: Mapping[str, Any], name: str, depth: int = 0) -> Any:
    """One value fitting `schema` (see the module doc) for a property called `name`; None when the
    schema gives no type to build from or nests too deep."""
    s = non_null_schema(dict(schema))
    found, value = _own_value(s)
    if found:
        return value
    t = s.get("type")
    if t == "string":
        return f"example-{name}-1"
    if t in ("integer", "number"):
        lo = s.get("minimum")
        return lo if isinstance(lo, int | float) and not isinstance(lo, bool) else 1
    if t == "boolean":
        return False
    if depth >= MAX_DEPTH:
        return None
    if t == "array":
        items = s.get("items")
        item = made_value(items, name, depth + 1) if isinstance(items, Mapping) else None
        return [item] if item is not None else None
    if t == "object" or (t is None and isinstance(s.get("properties"), Mapping)):
        props = s.get("properties") or {}
        if not isinstance(props, Mapping) or not props:
            return None
        required = [p for p in s.get("required") or [] if p in props] or list(props)
        out: dict[str, Any] = {}
        for p in required:
            v = made_value(props[p], str(p), depth + 1) if isinstance(props[p], Mapping) else None
            if v is None:
                return None  # a required property without a value: the object would be rejected
            out[str(p)] = v
        return out
    return None


def object_values(schema: Mapping[str, Any], name: str) -> list[Any]:
    """Made-up candidates of an input that takes an object or a list of objects (empty for any
    other input: scalars and lists of scalars are left to argument discovery)."""
    s = non_null_schema(dict(schema))
    items = s.get("items") if s.get("type") == "array" else None
    takes_objects = s.get("type") == "object" or (
        isinstance(items, Mapping) and non_null_schema(dict(items)).get("type") == "object"
    )
    if not takes_objects:
        return []
    value = made_value(s, name)
    return [value] if value is not None else []
