"""Observed output schemas: what a tool without a declared output schema returns, from its results.

Most MCP tools and many OpenAPI responses declare no output schema, so nothing downstream would
know their fields and no edge could start from them.  Two steps close the gap:

1. `parse_text` reads the text a tool answers with into a value: JSON, JSON inside a markdown
   fence, a Python repr of a list/dict/tuple (`ast.literal_eval`, never `eval`), a markdown
   table, simple ``key: value`` line blocks (blocks separated by blank lines are records), and
   rows without names (a list of tuples, e.g. a database cursor's rows) as records with
   positional names ``col_0``, ``col_1`` ... (`positional_rows`).  The MCP result reader uses it,
   so every stage's records come from the same reading.
2. `observe_schemas` infers, from a domain's successful probe rows (their records as the
   executor extracted them), a JSON Schema of one record and its flattened fields, for each tool
   whose spec declares none.  The result is stored in the `tool_probes` value
   (``observed_schemas``: per tool ``output_schema_source`` declared | inferred | none, with
   the inferred schema, fields and the number of records it rests on); `with_observed` gives a
   spec its inferred fields, so every stage that lists a tool's output fields (skeleton, value
   types, synthesis) uses declared and inferred fields alike (`ToolRegistry.from_inventories`
   with the probes).

The records path of a tool is never changed by inference (the executor extracts records the
same way whether or not the fields were inferred), so results stay comparable across stages.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from factory.tools.bounds import TooDeep, too_deep
from factory.tools.schema import flatten_fields, infer_records_path, is_array_of_objects, non_null_schema
from factory.tools.spec import OutputField, ToolSpec

DECLARED, INFERRED, NONE = "declared", "inferred", "none"
SCHEMA_SOURCES = (DECLARED, INFERRED, NONE)
POSITIONAL = "col_{}"
TEXT_KEY = "text"  # the record of a text answer that holds no structure: {"text": ...}
OBSERVED_DESCRIPTION = "observed in results (the tool declares no output schema)"
MAX_RECORDS_OBSERVED = 200  # records per tool that feed the inference
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)\n?```", re.DOTALL)
_KV_LINE = re.compile(r"^\s*([A-Za-z_][\w .()/-]{0,40}?)\s*:\s+(\S.*?)\s*$")
_TITLE_LINE = re.compile(r"^\s*[A-Za-z][\w .()/-]{0,60}:\s*$")
_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")


# --------------------------------------------------------------------------- reading text


def parse_text(text: str) -> Any:
    """The value a tool's text answer holds (see the module doc), or None when it holds none.

    Raises `TooDeep` for JSON nested beyond the interpreter's limit (a hostile body).
    """
    s = (text or "").strip()
    if not s:
        return None
    value = _parse_literal(s)
    if value is None:
        value = _parse_fenced(s)
    if value is None:
        value = _parse_markdown_table(s)
    if value is None:
        value = _parse_key_values(s)
    return positional_rows(value) if value is not None else None


def _parse_literal(s: str) -> Any:
    """JSON, else a Python literal of a container (or None/True/False); None when neither."""
    try:
        return json.loads(s)
    except RecursionError:
        raise TooDeep(too_deep()) from None
    except ValueError:
        pass
    if s[0] in "[{(" or s in ("None", "True", "False"):
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            return None
        return _jsonable(value)
    return None


def _parse_fenced(s: str) -> Any:
    """The value inside the one markdown code fence of the text (prose around it is allowed)."""
    fences = _FENCE.findall(s)
    if len(fences) != 1:
        return None
    inner = fences[0][1].strip()
    return _parse_literal(inner) if inner else None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _parse_markdown_table(s: str) -> list[dict[str, Any]] | None:
    """A markdown pipe table (header, separator, rows) as records named by the header."""
    lines = [ln for ln in s.splitlines() if ln.strip()]
    if len(lines) < 2 or not _MD_SEPARATOR.match(lines[1]) or "|" not in lines[0]:
        return None
    header = _cells(lines[0])
    names = [h or POSITIONAL.format(i) for i, h in enumerate(header)]
    rows = []
    for ln in lines[2:]:
        if "|" not in ln:
            return None
        cells = _cells(ln)
        if len(cells) != len(names):
            return None
        rows.append({n: _scalar(c) for n, c in zip(names, cells, strict=True)})
    return rows


def _parse_key_values(s: str) -> Any:
    """``key: value`` lines as a record; blocks separated by blank lines whose keys repeat as records.

    A first line ending in a colon (``Commit history:``) is a title and skipped.  Every other
    non-empty line must be a ``key: value`` line (a value may continue on indented lines), with
    at least two keys in all: otherwise the text is prose, not a record.
    """
    lines = s.splitlines()
    if lines and _TITLE_LINE.match(lines[0]):
        lines = lines[1:]
    blocks: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    last_key: str | None = None
    for ln in lines:
        if not ln.strip():
            if current:
                blocks.append(current)
            current, last_key = {}, None
            continue
        m = _KV_LINE.match(ln)
        if m and not ln[:1].isspace():
            key = m.group(1).strip()
            if key in current:  # a repeated key without a blank line starts the next record
                blocks.append(current)
                current = {}
            current[key] = _scalar(m.group(2))
            last_key = key
        elif last_key is not None and ln[:1].isspace():  # continuation of the previous value
            current[last_key] = f"{current[last_key]}\n{ln.strip()}"
        else:
            return None
    if current:
        blocks.append(current)
    if not blocks or sum(len(b) for b in blocks) < 2:
        return None
    if len(blocks) == 1:
        return blocks[0]
    keys = set(blocks[0])
    if not all(len(set(b) & keys) >= max(1, len(keys) // 2) for b in blocks[1:]):
        return None  # blocks that are not records of one kind
    return blocks


def _scalar(text: str) -> Any:
    """A cell or value as int/float/bool/None when it is exactly one, else the text."""
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none"):
        return None
    if _NUMBER.match(t) and not (len(t) > 1 and t.lstrip("-").startswith("0") and "." not in t):
        try:
            return int(t) if re.fullmatch(r"-?\d+", t) else float(t)
        except ValueError:
            return t
    return t


def _jsonable(obj: Any) -> Any:
    """Python reprs may hold tuples/sets/bytes: make the value JSON-shaped (tuples become lists)."""
    if isinstance(obj, tuple):  # keep a tuple recognizable as a row until `positional_rows`
        return _Row(_jsonable(x) for x in obj)
    if isinstance(obj, list):
        return [_jsonable(x) for x in obj]
    if isinstance(obj, set | frozenset):
        return [_jsonable(x) for x in sorted(obj, key=repr)]
    if isinstance(obj, dict):
        return {str(k) if not isinstance(k, str) else k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    return str(obj)


class _Row(list):
    """A tuple read from a Python repr: a row whose columns have no names."""


def positional_rows(value: Any) -> Any:
    """Rows without names as records: a list of tuples/lists (every item one, equal length) becomes
    records ``{"col_0": ..., "col_1": ...}``; a top-level tuple of scalars is one such record.
    A list of lists from JSON is a row list too when every row has the same length ≥ 2."""
    if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
        tuples = all(isinstance(r, _Row) for r in value)
        width = {len(r) for r in value}
        if len(width) == 1 and (tuples or width.pop() >= 2) and not any(isinstance(r, list) and not r for r in value):
            if all(not isinstance(c, list | dict) for r in value for c in r):
                return [{POSITIONAL.format(i): c for i, c in enumerate(r)} for r in value]
    if isinstance(value, _Row) and value and all(not isinstance(c, list | dict) for c in value):
        return {POSITIONAL.format(i): c for i, c in enumerate(value)}
    return _plain(value)


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(x) for x in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------- schemas from values


def _value_schema(v: Any) -> dict[str, Any]:
    if v is None:
        return {"type": "null"}
    if isinstance(v, bool):
        return {"type": "boolean"}
    if isinstance(v, int):
        return {"type": "integer"}
    if isinstance(v, float):
        return {"type": "number"}
    if isinstance(v, str):
        if _DATE_TIME.match(v):
            return {"type": "string", "format": "date-time"}
        if _DATE.match(v):
            return {"type": "string", "format": "date"}
        return {"type": "string"}
    if isinstance(v, list):
        items = merge_schemas(_value_schema(x) for x in v) if v else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    if isinstance(v, dict):
        return {
            "type": "object",
            "properties": {str(k): _value_schema(x) for k, x in v.items()},
            "required": sorted(str(k) for k in v),
        }
    return {"type": "string"}


def merge_schemas(schemas: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One schema every given value schema fits (types widened: integer+number → number, a null
    only makes a field optional, other mixes → string; objects: union of properties, required
    where every object has it)."""
    out: dict[str, Any] = {}
    for s in schemas:
        out = s if not out else _merge2(out, s)
    return out


def _merge2(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    ta, tb = a.get("type"), b.get("type")
    if ta == "null":
        return b
    if tb == "null" or a == b:
        return a
    if ta == tb == "object":
        pa, pb = a.get("properties", {}), b.get("properties", {})
        props = {k: _merge2(pa[k], pb[k]) if k in pa and k in pb else pa.get(k) or pb[k] for k in [*pa, *pb]}
        req = sorted(set(a.get("required", [])) & set(b.get("required", [])))
        return {"type": "object", "properties": props, "required": req}
    if ta == tb == "array":
        items = merge_schemas([x for x in (a.get("items"), b.get("items")) if x])
        return {"type": "array", "items": items} if items else {"type": "array"}
    if {ta, tb} == {"integer", "number"}:
        return {"type": "number"}
    if ta == tb == "string":
        same = a.get("format") if a.get("format") == b.get("format") else None
        return {"type": "string", "format": same} if same else {"type": "string"}
    return {"type": "string"}


def record_schema_of(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON Schema of one record, merged over observed records ({} when there are none).
    A field only ever seen null is a string (its type is unknown, its values are text when present)."""
    return _null_as_string(merge_schemas(_value_schema(dict(r)) for r in records if isinstance(r, Mapping)))


def _null_as_string(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.get("type") == "null":
        return {"type": "string"}
    out = dict(schema)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _null_as_string(v) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict) and out["items"]:
        out["items"] = _null_as_string(out["items"])
    return out


def primary_records_path(output_schema: Mapping[str, Any]) -> str | None:
    """`infer_records_path`, and where it finds several arrays of objects at the top level (a
    knowledge graph's ``entities`` and ``relations``), the first one declared: the tool's primary
    collection.  None when there is no array of objects at the top level."""
    found = infer_records_path(dict(output_schema))
    if found is not None:
        return found
    props = non_null_schema(output_schema).get("properties") or {}
    return next((name for name, sub in props.items() if is_array_of_objects(sub)), None)


# --------------------------------------------------------------------------- per tool


def has_declared_schema(spec: ToolSpec) -> bool:
    return bool(spec.output_fields)


def observe_schemas(specs: Iterable[ToolSpec], rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per tool name: ``output_schema_source`` and, for inferred ones, ``record_schema``, ``fields``
    (name → type) and ``records_observed``, from the successful probe rows' records.

    A tool with declared output fields is ``declared``; one without, whose successes returned at
    least one record with a field, ``inferred``; any other ``none`` (its output stays unknown).
    Key-acquisition tools are left out (their records are keys).
    """
    records: dict[str, list[dict[str, Any]]] = {}
    whole: dict[str, int] = {}  # records seen whole (a probe's first record), per tool
    for r in rows:
        if not str(r.get("outcome", "")).endswith("success"):
            continue
        got = records.setdefault(str(r.get("tool")), [])
        if len(got) >= MAX_RECORDS_OBSERVED:
            continue
        first = r.get("first_record")
        if isinstance(first, Mapping) and first and set(first) != {TEXT_KEY}:  # free text is no structure
            got.append(dict(first))
            whole[str(r.get("tool"))] = whole.get(str(r.get("tool")), 0) + 1
        for field, values in (r.get("sample_values") or {}).items():  # more values of the scalar fields
            if field == TEXT_KEY and set(r.get("sample_values") or {}) == {TEXT_KEY}:
                continue
            for v in values:
                got.append({field: v})
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        if spec.key_acquisition is not None:
            continue
        if has_declared_schema(spec):
            out[spec.name] = {"output_schema_source": DECLARED, "fields": _field_types(spec.output_fields)}
            continue
        seen = records.get(spec.name) or []
        schema = record_schema_of(seen)
        fields = flatten_fields(schema) if schema.get("properties") else {}
        if not fields:
            out[spec.name] = {"output_schema_source": NONE, "fields": {}, "records_observed": whole.get(spec.name, 0)}
            continue
        out[spec.name] = {
            "output_schema_source": INFERRED,
            "record_schema": schema,
            "fields": _field_types(fields),
            "records_observed": whole.get(spec.name, 0),
        }
    return out


def _field_types(fields: Mapping[str, OutputField]) -> dict[str, str]:
    return {name: f.type for name, f in sorted(fields.items())}


def with_observed(spec: ToolSpec, observed: Mapping[str, Any] | None) -> ToolSpec:
    """`spec` with its inferred output fields (unchanged when declared or nothing was inferred)."""
    if not observed or observed.get("output_schema_source") != INFERRED or has_declared_schema(spec):
        return spec
    schema = observed.get("record_schema") or {}
    fields = {
        name: f if f.description else f.model_copy(update={"description": OBSERVED_DESCRIPTION})
        for name, f in flatten_fields(schema).items()
    }
    return spec.model_copy(update={"output_fields": fields})


def observed_in(probes: Mapping[str, Mapping[str, Any]] | None) -> dict[tuple[str, str], dict[str, Any]]:
    """``(domain, tool name) → observed schema`` from `tool_probes` values keyed by domain."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for domain, value in (probes or {}).items():
        for name, obs in ((value or {}).get("observed_schemas") or {}).items():
            out[(domain, name)] = obs
    return out


def schema_sources(observed: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """How many tools have each output schema source."""
    counts = dict.fromkeys(SCHEMA_SOURCES, 0)
    for obs in observed.values():
        counts[obs.get("output_schema_source", NONE)] += 1
    return counts


def observed_metadata(observed: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Probe metadata on output schemas: counts per source and the inferred tools with their fields."""
    from factory.report import Markdown, md_table

    inferred = [
        {
            "tool": name,
            "fields": ", ".join(f"{f} ({t})" for f, t in obs.get("fields", {}).items()),
            "records": obs.get("records_observed", 0),
        }
        for name, obs in sorted(observed.items())
        if obs.get("output_schema_source") == INFERRED
    ]
    unknown = sorted(n for n, obs in observed.items() if obs.get("output_schema_source") == NONE)
    return {
        "output_schema_sources": schema_sources(observed),
        "inferred_output_schemas": md_table(inferred, limit=50) if inferred else Markdown("_none_"),
        "tools_without_output_schema": Markdown(", ".join(unknown) or "_none_"),
    }


def schema_source_map(specs: Iterable[ToolSpec], probes: Mapping[str, Mapping[str, Any]] | None) -> dict[str, str]:
    """Tool id → where its output fields come from (declared | inferred | none), for stage values."""
    seen = observed_in(probes)
    out = {}
    for s in specs:
        obs = seen.get((s.domain, s.name))
        if obs is not None:
            out[s.tool_id] = str(obs.get("output_schema_source", NONE))
        else:  # not probed (a destructive tool left out): declared or unknown
            out[s.tool_id] = DECLARED if s.output_fields else NONE
    return dict(sorted(out.items()))
