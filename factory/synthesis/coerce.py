"""Typed argument values (pure): every argument a trajectory sends has its parameter's JSON-Schema type.

Values reach a call from several places: probe and observation arguments (seeds), fields of an
upstream record (bridges), DEFAULT values of an edge plan and required arguments taken from the
edge cache.  Records often carry numbers as strings ("1" for an integer id) and codes as numbers,
so each value is converted to the type the target parameter's schema declares when the
arguments are built:

- integer: an int, an integral float (2.0) or a string of an integer ("1", " 12 ") becomes an int;
- number: an int/float stays, a numeric string becomes an int when integral, else a float;
- string: a str stays, an int/float becomes its decimal text (1 → "1", 2.0 → "2"), a bool "true"/"false";
- boolean: a bool stays, "true"/"false"/"1"/"0" and the ints 0/1 become a bool;
- array: a list keeps its items (each converted to the item schema), a scalar becomes a one-item list;
- a schema with several types (``anyOf``, ``type: [..]``) keeps a value whose type is one of them,
  else tries them in order; null-only or untyped schemas keep the value as it is.

A value that cannot be converted (text for an integer, 1.5 for an integer, a value outside an
``enum``) raises `Uncoercible`; the synthesis turns it into the rejection ``uncoercible_value``.
"""

import math
import re
from collections.abc import Mapping
from typing import Any

_INT = re.compile(r"^[+-]?\d+$")
_NUM = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_SCALARS = ("string", "integer", "number", "boolean")


class Uncoercible(ValueError):
    """A value that has no form of its parameter's type."""


def schema_types(schema: Mapping[str, Any] | None) -> list[str]:
    """The JSON-Schema types a (resolved) parameter schema admits, in order, without 'null'."""
    if not isinstance(schema, Mapping):
        return []
    out: list[str] = []
    t = schema.get("type")
    for x in t if isinstance(t, list) else [t] if isinstance(t, str) else []:
        if x != "null" and x not in out:
            out.append(x)
    for key in ("anyOf", "oneOf"):
        for alt in schema.get(key) or []:
            for x in schema_types(alt):
                if x not in out:
                    out.append(x)
    if not out and schema.get("enum"):
        v = schema["enum"][0]
        out.append(_type_of(v) or "string")
    return out


def _type_of(v: Any) -> str | None:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return None


def _fits(v: Any, t: str) -> bool:
    kind = _type_of(v)
    if t == "number":
        return kind in ("integer", "number") and math.isfinite(v)
    if t == "integer" and kind == "number":
        return False
    return kind == t


def _to(v: Any, t: str, schema: Mapping[str, Any]) -> Any:
    """`v` as type `t`; Uncoercible when it has no such form."""
    kind = _type_of(v)
    if t == "integer":
        if kind == "integer":
            return v
        if kind == "number" and math.isfinite(v) and float(v).is_integer():
            return int(v)
        if kind == "string" and _INT.match(v.strip()):
            return int(v.strip())
        if kind == "string" and _NUM.match(v.strip()) and float(v).is_integer():
            return int(float(v))
    elif t == "number":
        if kind in ("integer", "number") and math.isfinite(v):
            return v
        if kind == "string" and _NUM.match(v.strip()):
            x = float(v)
            return int(x) if x.is_integer() and _INT.match(v.strip()) else x
    elif t == "string":
        if kind == "string":
            return v
        if kind == "boolean":
            return "true" if v else "false"
        if kind == "integer":
            return str(v)
        if kind == "number" and math.isfinite(v):
            return str(int(v)) if float(v).is_integer() else repr(float(v))
    elif t == "boolean":
        if kind == "boolean":
            return v
        if kind == "string" and v.strip().lower() in ("true", "false", "1", "0"):
            return v.strip().lower() in ("true", "1")
        if kind == "integer" and v in (0, 1):
            return bool(v)
    elif t == "array":
        items = schema.get("items") if isinstance(schema.get("items"), Mapping) else {}
        seq = v if isinstance(v, list) else [v]
        return [coerce_value(x, items) for x in seq]
    elif t == "object" and kind == "object":
        return v
    raise Uncoercible(f"{v!r} ({kind or type(v).__name__}) has no {t} form")


def coerce_value(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """`value` converted to the type `schema` declares (see the module doc); Uncoercible when impossible."""
    if value is None or not isinstance(schema, Mapping):
        return value
    types = schema_types(schema)
    if not types:
        return value
    out: Any = _UNSET
    if any(_fits(value, t) for t in types):
        out = value
    else:
        errors = []
        for t in types:
            try:
                out = _to(value, t, schema)
                break
            except Uncoercible as e:
                errors.append(str(e))
        if out is _UNSET:
            raise Uncoercible("; ".join(errors))
    if isinstance(out, list) and "array" in types and isinstance(schema.get("items"), Mapping):
        out = [coerce_value(x, schema["items"]) for x in out]
    enum = schema.get("enum")
    if enum and out not in enum:
        raise Uncoercible(f"{out!r} is not one of {enum[:8]!r}")
    return out


_UNSET = object()


def coerce_args(params: Mapping[str, Mapping[str, Any]], args: Mapping[str, Any], tool: str = "") -> dict[str, Any]:
    """Every argument converted to its parameter's schema (`ToolSpec.params`); unknown parameters unchanged.

    Raises Uncoercible naming the tool and the parameter."""
    out: dict[str, Any] = {}
    for k, v in args.items():
        try:
            out[k] = coerce_value(v, params.get(k))
        except Uncoercible as e:
            raise Uncoercible(f"{tool + '.' if tool else ''}{k}: {e}") from None
    return out
