"""JSON-Schema helpers shared by the loaders and the transports (public).

What a loader needs to turn a response schema into records and fields, and what a transport
needs to read an input schema:

- `dig` follows a dotted path through a parsed body;
- `non_null_schema`, `schema_type`, `is_object_schema`, `is_array_of_objects`, `schema_at`
  read (resolved) schemas, including OpenAPI 3.1 / FastAPI ``anyOf [X, null]`` optionals;
- `infer_records_path`, `record_schema`, `flatten_fields`, `infer_total_count_path` find
  the record list of a response schema, one record's schema, its dotted fields, its total count;
- `RefResolver` resolves local ``$ref``s (cycles cut with a `RECURSIVE_FLAG` stub) and
  `merge_all_of` merges ``allOf``.

Input-schema annotations the loaders write and the HTTP transport reads: `CONTENT_TYPE_KEY`
(top level: the body is sent as a form) and `RAW_BODY_FLAG` (a body property sent as the
whole body).  Malformed ``$ref``s raise `SourceError` (`factory.tools.locators`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from factory.tools.locators import SourceError
from factory.tools.spec import OutputField

TOTAL_COUNT_NAMES = ("totalCount", "total_count", "totalcount", "total", "totalResults", "total_results", "count")
AMBIGUOUS_TOTAL_NAMES = ("total", "count")  # a total count only when an integer beside a records list
ENVELOPE_RECORDS_PATH = "response.body.items.item"
MAX_FLATTEN_DEPTH = 4

RAW_BODY_FLAG = "x-raw-body"
RECURSIVE_FLAG = "x-recursive-ref"
CONTENT_TYPE_KEY = "x-content-type"
FORM_CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")  # values of CONTENT_TYPE_KEY


def dig(obj: Any, path: str | None) -> Any:
    """Follow a dotted path through nested mappings (numeric parts index lists); None when absent."""
    if not path:
        return obj
    cur = obj
    for part in path.split("."):
        if isinstance(cur, Mapping):
            if part not in cur:
                return None
            cur = cur[part]
        elif isinstance(cur, list) and part.lstrip("-").isdigit():
            idx = int(part)
            if not -len(cur) <= idx < len(cur):
                return None
            cur = cur[idx]
        else:
            return None
    return cur


def non_null_schema(schema: Any) -> dict[str, Any]:
    """The non-null branch of ``anyOf/oneOf [X, {type: null}]`` (OpenAPI 3.1 / FastAPI optionals)."""
    if not isinstance(schema, dict):
        return {}
    for key in ("anyOf", "oneOf"):
        variants = schema.get(key)
        if isinstance(variants, list):
            real = [v for v in variants if isinstance(v, dict) and v.get("type") != "null"]
            if len(real) == 1:
                merged = {k: v for k, v in schema.items() if k != key}
                merged.update(real[0])
                return merged
    return schema


def schema_type(schema: Any) -> str:
    """A single JSON Schema type name for a (resolved) schema."""
    s = non_null_schema(schema)
    t = s.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if isinstance(t, str):
        return t
    if "properties" in s:
        return "object"
    if "items" in s:
        return "array"
    if "enum" in s and s["enum"]:
        v = s["enum"][0]
        return {bool: "boolean", int: "integer", float: "number"}.get(type(v), "string")
    return "string"


def is_object_schema(schema: Any) -> bool:
    s = non_null_schema(schema)
    return isinstance(s, dict) and (schema_type(s) == "object" or "properties" in s)


def is_array_of_objects(schema: Any) -> bool:
    s = non_null_schema(schema)
    return schema_type(s) == "array" and is_object_schema(s.get("items"))


def infer_records_path(schema: dict[str, Any]) -> str | None:
    """The dotted path of the record list in a response schema, or None.

    Prefers the data.go.kr envelope ``response.body.items.item``; otherwise the
    unique array-of-objects property (searched without entering arrays); among
    several, the unique shallowest one.  A top-level array gives None (the body
    itself is the list of records), and so does an object with an ``id`` of its own:
    it is the record (the petstore's Pet holds ``tags``, an array of objects; counting
    them answered "how many pets" with the number of tags).
    """
    s = non_null_schema(schema)
    if not s or schema_type(s) == "array":
        return None
    if schema_at(s, ENVELOPE_RECORDS_PATH) is not None:
        return ENVELOPE_RECORDS_PATH
    own = {k.lower(): non_null_schema(v) for k, v in (s.get("properties") or {}).items()}
    if "id" in own and schema_type(own["id"]) in ("integer", "string", "number"):
        return None
    found: list[str] = []

    def walk(node: dict[str, Any], prefix: str, depth: int) -> None:
        if depth > MAX_FLATTEN_DEPTH:
            return
        for name, sub in (node.get("properties") or {}).items():
            sub = non_null_schema(sub)
            path = f"{prefix}{name}"
            if is_array_of_objects(sub):
                items = non_null_schema(sub.get("items"))
                item_props = set(items.get("properties") or {})
                parent_props = set(node.get("properties") or {})
                if items.get(RECURSIVE_FLAG) or (item_props and item_props == parent_props):
                    continue  # a record nesting more of its own kind (e.g. Airport.nearby), not an envelope
                found.append(path)
            elif is_object_schema(sub):
                walk(sub, path + ".", depth + 1)

    walk(s, "", 0)
    if len(found) == 1:
        return found[0]
    if found:
        depths = [p.count(".") for p in found]
        shallow = [p for p, d in zip(found, depths, strict=True) if d == min(depths)]
        if len(shallow) == 1:
            return shallow[0]
    return None


def schema_at(schema: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The sub-schema at a dotted property path (None when absent)."""
    cur: Any = non_null_schema(schema)
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        if schema_type(cur) == "array":
            cur = non_null_schema(cur.get("items"))
        props = cur.get("properties") if isinstance(cur, dict) else None
        if not isinstance(props, dict) or part not in props:
            return None
        cur = non_null_schema(props[part])
    return cur if isinstance(cur, dict) else None


def record_schema(output_schema: dict[str, Any], records_path: str | None) -> dict[str, Any]:
    """The schema of ONE record: items of the records path (or the object there), else the body."""
    s = non_null_schema(output_schema)
    if records_path:
        at = schema_at(s, records_path)
        if at is None:
            return {}
        s = at
    if schema_type(s) == "array":
        s = non_null_schema(s.get("items"))
    return s if isinstance(s, dict) else {}


def flatten_fields(schema: dict[str, Any], *, max_depth: int = MAX_FLATTEN_DEPTH) -> dict[str, OutputField]:
    """Fields of a record schema as dotted paths (nested objects flattened, arrays kept whole)."""
    out: dict[str, OutputField] = {}

    def walk(node: dict[str, Any], prefix: str, depth: int) -> None:
        for name, sub in (node.get("properties") or {}).items():
            sub = non_null_schema(sub) if isinstance(sub, dict) else {}
            path = f"{prefix}{name}"
            if is_object_schema(sub) and sub.get("properties") and depth < max_depth:
                walk(sub, path + ".", depth + 1)
                continue
            enum = sub.get("enum")
            out[path] = OutputField(
                name=path,
                type=schema_type(sub),
                description=str(sub.get("description") or sub.get("title") or ""),
                enum=list(enum) if isinstance(enum, list) else None,
                format=sub.get("format") if isinstance(sub.get("format"), str) else None,
            )

    walk(non_null_schema(schema), "", 0)
    return out


def infer_total_count_path(schema: dict[str, Any], records_path: str | None) -> str | None:
    """A total-count field near the records (same envelope), by conventional names; None if absent."""
    s = non_null_schema(schema)
    if schema_type(s) != "object":
        return None
    candidates: list[str] = []
    if records_path:
        parts = records_path.split(".")
        for i in range(len(parts) - 1, -1, -1):
            candidates.append(".".join(parts[:i]))
    candidates.append("")
    seen: set[str] = set()
    for base in candidates:
        if base in seen:
            continue
        seen.add(base)
        node = schema_at(s, base) if base else s
        props = (node or {}).get("properties") or {}
        for name in TOTAL_COUNT_NAMES:
            if name in props and schema_type(props[name]) in ("integer", "number", "string"):
                if name in AMBIGUOUS_TOTAL_NAMES and (records_path is None or schema_type(props[name]) != "integer"):
                    continue  # a record's own `total`/`count` (an amount in USD is a number) is a field
                return f"{base}.{name}" if base else name
    return None


# --------------------------------------------------------------------------- $ref resolution


class RefResolver:
    """Resolves local ``$ref``s recursively and merges ``allOf``; cycles are cut with a stub."""

    def __init__(self, doc: dict[str, Any], locator: str) -> None:
        self.doc = doc
        self.locator = locator

    def lookup(self, ref: str, where: str) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise SourceError(f"spec {self.locator}: unsupported non-local $ref {ref!r} at {where}")
        node: Any = self.doc
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SourceError(f"spec {self.locator}: unresolvable $ref {ref!r} at {where}")
        return node

    def resolve(self, node: Any, where: str, stack: tuple[str, ...] = ()) -> Any:
        if isinstance(node, list):
            return [self.resolve(x, f"{where}[{i}]", stack) for i, x in enumerate(node)]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            ref = node["$ref"]
            if ref in stack:
                name = str(ref).rsplit("/", 1)[-1]
                return {"type": "object", "description": f"(recursive reference to {name})", RECURSIVE_FLAG: name}
            target = self.resolve(self.lookup(ref, where), where, stack + (ref,))
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if siblings and isinstance(target, dict):
                target = {**target, **self.resolve(siblings, where, stack)}
            return target
        out = {k: self.resolve(v, f"{where}.{k}", stack) for k, v in node.items()}
        if isinstance(out.get("allOf"), list):
            out = merge_all_of(out)
        return out


def merge_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    """Merge a (resolved) ``allOf`` into one object schema: properties and required are unioned."""
    parts = [p for p in schema.get("allOf", []) if isinstance(p, dict)]
    merged: dict[str, Any] = {}
    props: dict[str, Any] = {}
    required: list[str] = []
    for part in parts + [{k: v for k, v in schema.items() if k != "allOf"}]:
        part = merge_all_of(part) if "allOf" in part else part
        for k, v in part.items():
            if k == "properties" and isinstance(v, dict):
                props.update(v)
            elif k == "required" and isinstance(v, list):
                required.extend(r for r in v if r not in required)
            elif k not in merged:
                merged[k] = v
    if props:
        merged["properties"] = props
        merged.setdefault("type", "object")
    if required:
        merged["required"] = required
    return merged
