"""OpenAPI 3.0/3.1 and Swagger 2.0 → ToolSpec.

`load_openapi` turns every operation of a document into one `ToolSpec`:
parameters (path-level and operation-level; path/query/header; JSON or form
request bodies; Swagger ``in: body`` / ``formData``) become one JSON Schema
object, the 2xx response schema becomes the output schema, and the fields of
one record are flattened into dotted paths.  Local ``$ref``s are resolved
recursively (cycles are cut), ``allOf`` is merged.

Vendor extensions per operation override inference:
``x-records-path``, ``x-total-count-path``, ``x-result-envelope``,
``x-generic-params``, ``x-key-acquisition``, ``x-state-changing``, ``x-realtime``.

Input-schema conventions the executor relies on (both are JSON Schema
annotations, harmless to a model reading the schema):

- top-level ``"x-content-type": "application/x-www-form-urlencoded"`` (or
  ``multipart/form-data``) when body params are sent as a form (JSON otherwise);
- a body property carrying ``"x-raw-body": true`` is sent as the whole body
  (request bodies that are not objects with properties).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlparse

import httpx
import yaml

from factory.tools.locators import SourceError, slugify
from factory.tools.safety import openapi_destructive
from factory.tools.schema import (
    CONTENT_TYPE_KEY,
    FORM_CONTENT_TYPES,
    RAW_BODY_FLAG,
    RefResolver,
    flatten_fields,
    infer_records_path,
    infer_total_count_path,
    non_null_schema,
    record_schema,
    schema_at,
)
from factory.tools.spec import (
    GenericParams,
    KeyAcquisition,
    ParamLocation,
    ResultEnvelope,
    SourceRef,
    ToolSpec,
)

logger = logging.getLogger(__name__)

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
STATE_CHANGING_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

AUTH_HEADER = "Authorization"
KEY_NAMES = {"servicekey", "service_key", "api_key", "apikey", "key", "api-key", "x-api-key", "access_key", "authkey"}
PAGE_NAMES = {"page", "pageno", "page_no", "pagenumber", "page_number", "pageindex", "page_index"}
PAGE_SIZE_NAMES = {
    "numofrows", "num_of_rows", "per_page", "perpage", "page_size", "pagesize", "limit", "size", "rows",
}  # fmt: skip
FORMAT_NAMES = {"_type", "type", "format", "returntype", "return_type", "resulttype", "datatype", "data_type"}
FORMAT_ALWAYS = {"_type", "returntype", "return_type", "resulttype", "datatype"}
ENVELOPE_CODE_PATH = "response.header.resultCode"


# --------------------------------------------------------------------------- fetching


def fetch_spec(locator: str, *, timeout_s: float = 30.0) -> dict[str, Any]:
    """Read an OpenAPI/Swagger document from an http(s) URL or a local JSON/YAML file."""
    text: str
    if locator.startswith(("http://", "https://")):
        try:
            resp = httpx.get(locator, timeout=timeout_s, follow_redirects=True)
        except httpx.HTTPError as e:
            raise SourceError(f"spec {locator}: cannot fetch: {type(e).__name__}: {e}") from e
        if resp.status_code >= 400:
            raise SourceError(f"spec {locator}: HTTP {resp.status_code} when fetching the document")
        text = resp.text
    else:
        path = Path(unquote(urlparse(locator).path) if locator.startswith("file://") else locator)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise SourceError(f"spec {locator}: cannot read file: {e.strerror or e}") from e
    return parse_spec_text(text, locator)


class SpecYamlLoader(yaml.SafeLoader):
    """A SafeLoader that reads scalars the way an OpenAPI document means them (YAML 1.2 core schema):
    timestamps (``2024-01-01``), ``=`` and YAML-1.1 forms such as ``18_24`` (1824), ``0777`` (511),
    ``1:30`` (90) or ``yes``/``no``/``on``/``off`` stay strings; only plain decimal/hex integers,
    floats, ``true``/``false`` and ``null`` are typed."""


SpecYamlLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?(?:0|[1-9][0-9]*)|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:(?:\.[0-9]+|(?:0|[1-9][0-9]*)\.[0-9]*)(?:[eE][-+]?[0-9]+)?|(?:0|[1-9][0-9]*)[eE][-+]?[0-9]+)"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
):
    SpecYamlLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def load_yaml_text(text: str, locator: str) -> Any:
    """YAML text read with `SpecYamlLoader`; errors are SourceErrors with the line and column."""
    try:
        return yaml.load(text, Loader=SpecYamlLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = " ".join(x for x in (e.context, e.problem) if x) or type(e).__name__
        raise SourceError(f"spec {locator}: not valid JSON or YAML{where}: {what}") from e
    except (yaml.YAMLError, ValueError, OverflowError) as e:
        raise SourceError(f"spec {locator}: not valid JSON or YAML: {type(e).__name__}: {e}") from e


def parse_spec_text(text: str, locator: str) -> dict[str, Any]:
    """Parse JSON (or YAML) text into a mapping, raising SourceError naming `locator`."""
    try:
        doc = json.loads(text)
    except ValueError:
        doc = load_yaml_text(text, locator)
    if not isinstance(doc, dict):
        raise SourceError(f"spec {locator}: not an OpenAPI document (top level is {type(doc).__name__}, not a mapping)")
    return doc


# --------------------------------------------------------------------------- small helpers


def snake_case(name: str) -> str:
    """``getFlightList`` → ``get_flight_list``; non-alphanumerics become ``_``."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = re.sub(r"[^0-9A-Za-z]+", "_", s).strip("_").lower()
    s = re.sub(r"_+", "_", s)
    if not s:
        return "op"
    return f"op_{s}" if s[0].isdigit() else s


TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what OpenAI-style function calling accepts


def valid_tool_name(name: str, taken: Iterable[str] = ()) -> str:
    """`name` when it is a valid function name (``^[a-zA-Z0-9_-]{1,64}$``) not in `taken`; else a
    deterministic valid one: other characters become ``_``, and a name too long (or taken) keeps
    its first characters plus 8 hex digits of its sha256, so distinct names stay distinct."""
    taken = set(taken)
    if TOOL_NAME.match(name) and name not in taken:
        return name
    clean = re.sub(r"[^a-zA-Z0-9_-]+", "_", name).strip("_") or "tool"
    if len(clean) <= 64 and clean not in taken:
        return clean
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()
    for i in range(len(digest) - 7):
        out = f"{clean[:55].rstrip('_')}_{digest[i : i + 8]}"
        if out not in taken:
            return out
    raise ValueError(f"no free tool name for {name!r}")  # pragma: no cover - 2^32 collisions


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
               "unevaluatedItems", "unevaluatedProperties", "additionalItems")  # fmt: skip
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def to_json_schema(schema: Any) -> Any:
    """An OpenAPI 3.0 / Swagger 2.0 schema object as valid JSON Schema 2020-12 (a new object):
    boolean ``exclusiveMinimum``/``exclusiveMaximum`` (3.0) become the numeric bound; ``nullable``
    and Swagger's ``x-nullable`` become ``anyOf [.., {type: null}]``; ``type: file`` becomes
    ``{type: string, format: binary}``; a boolean ``required`` on a property (a common 3.0 slip) is
    dropped. Other ``x-`` keywords stay (JSON Schema ignores unknown keywords). Examples, defaults
    and enums are data and are left as they are."""
    if isinstance(schema, list):
        return [to_json_schema(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k in _SCHEMA_MAPS and isinstance(v, dict):
            out[k] = {name: to_json_schema(sub) for name, sub in v.items()}
        elif k in _SCHEMA_ONE or k in _SCHEMA_LISTS:
            out[k] = to_json_schema(v)
        else:
            out[k] = v
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = out.get(bound)
        if isinstance(flag, bool):
            del out[bound]
            if flag and isinstance(out.get(limit), int | float) and not isinstance(out.get(limit), bool):
                out[bound] = out.pop(limit)
    if out.get("type") == "file":
        out["type"], out["format"] = "string", "binary"
    if isinstance(out.get("required"), bool):
        del out["required"]
    nullable = out.pop("nullable", None)
    x_nullable = out.pop("x-nullable", None)
    if nullable is True or x_nullable is True:
        if isinstance(out.get("type"), list):
            out["type"] = [*out["type"], "null"] if "null" not in out["type"] else out["type"]
            if isinstance(out.get("enum"), list) and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        elif out:
            notes: dict[str, Any] = {
                k: out.pop(k) for k in ("description", "title", "default", "example", "examples") if k in out
            }
            out = {"anyOf": [out, {"type": "null"}], **notes}
    return out


# --------------------------------------------------------------------------- loading


def load_openapi(
    doc: dict[str, Any],
    *,
    domain: str,
    platform: str | None,
    spec_locator: str,
    base_url: str | None = None,
    realtime_tools: Iterable[str] = (),
) -> list[ToolSpec]:
    """All operations of an OpenAPI 3.x / Swagger 2.0 document as ToolSpecs (document order).

    Raises SourceError (naming `spec_locator` and the problem) for malformed documents.
    """
    loc = spec_locator
    if not isinstance(doc, dict):
        raise SourceError(f"spec {loc}: not an OpenAPI document (top level is {type(doc).__name__})")
    version = doc.get("openapi") or doc.get("swagger")
    if not version:
        raise SourceError(f"spec {loc}: no 'openapi' or 'swagger' version field; not an OpenAPI/Swagger document")
    version = str(version)
    swagger2 = "swagger" in doc and "openapi" not in doc
    if swagger2 and not version.startswith("2."):
        raise SourceError(f"spec {loc}: unsupported Swagger version {version!r} (2.0 is supported)")
    if not swagger2 and not version.startswith("3."):
        raise SourceError(f"spec {loc}: unsupported OpenAPI version {version!r} (3.0 and 3.1 are supported)")
    paths = doc.get("paths")
    if not isinstance(paths, dict) or not paths:
        raise SourceError(f"spec {loc}: no paths (the document defines no operations)")

    raw_info = doc.get("info")
    info = raw_info if isinstance(raw_info, dict) else {}
    plat = platform or slugify(str(info.get("title") or "api"))
    base = base_url or _base_url_from_doc(doc, loc, swagger2)
    source = SourceRef(kind="openapi", locator=loc, base_url=base)
    resolver = RefResolver(doc, loc)
    realtime = set(realtime_tools)
    security_schemes = _security_schemes(doc, resolver, swagger2)

    tools: list[ToolSpec] = []
    names: dict[str, str] = {}
    for path, item in paths.items():
        where = f"paths.{path}"
        if not isinstance(item, dict):
            raise SourceError(f"spec {loc}: path item {path!r} is not a mapping")
        item = resolver.resolve(item, where) if "$ref" in item else item
        shared_params = item.get("parameters") or []
        for method in HTTP_METHODS:
            op = item.get(method)
            if op is None:
                continue
            op_where = f"{method.upper()} {path}"
            if not isinstance(op, dict):
                raise SourceError(f"spec {loc}: operation {op_where} is not a mapping")
            tool = _load_operation(
                doc=doc,
                op=op,
                method=method.upper(),
                path=path,
                shared_params=shared_params,
                resolver=resolver,
                swagger2=swagger2,
                security_schemes=security_schemes,
                domain=domain,
                platform=plat,
                source=source,
                realtime=realtime,
                where=op_where,
            )
            if tool.name in names:
                raise SourceError(
                    f"spec {loc}: duplicate tool name {tool.name!r} for {op_where} and {names[tool.name]}"
                    " (operationIds must be unique)"
                )
            names[tool.name] = op_where
            tools.append(tool)
    if not tools:
        raise SourceError(f"spec {loc}: no operations under paths")
    logger.debug("spec %s: %d operations loaded for platform %s", loc, len(tools), plat)
    return tools


def _base_url_from_doc(doc: dict[str, Any], locator: str, swagger2: bool) -> str | None:
    spec_is_url = locator.startswith(("http://", "https://"))
    if swagger2:
        host = doc.get("host")
        base_path = str(doc.get("basePath") or "")
        if host:
            schemes = doc.get("schemes") or []
            scheme = schemes[0] if schemes else (urlparse(locator).scheme if spec_is_url else "https")
            return f"{scheme}://{host}{base_path}".rstrip("/")
        if spec_is_url:
            return urljoin(locator, base_path or "/").rstrip("/")
        logger.warning("spec %s: no host and the spec was read from a file: set the source's base_url", locator)
        return None
    servers = doc.get("servers")
    if isinstance(servers, list) and servers and isinstance(servers[0], dict) and servers[0].get("url"):
        url = str(servers[0]["url"])
        for name, var in (servers[0].get("variables") or {}).items():
            if isinstance(var, dict) and "default" in var:
                url = url.replace("{" + name + "}", str(var["default"]))
        if urlparse(url).scheme:
            return url.rstrip("/")
        if spec_is_url:
            return urljoin(locator, url).rstrip("/")
        logger.warning(
            "spec %s: the server URL %r is relative and the spec was read from a file, so calls have no base "
            "URL; set the source's base_url",
            locator,
            url,
        )
        return None
    if spec_is_url:
        return urljoin(locator, "/").rstrip("/")
    logger.warning("spec %s: no servers and the spec was read from a file: set the source's base_url", locator)
    return None


def _security_schemes(doc: dict[str, Any], resolver: RefResolver, swagger2: bool) -> dict[str, dict[str, Any]]:
    raw = doc.get("securityDefinitions") if swagger2 else (doc.get("components") or {}).get("securitySchemes")
    if not isinstance(raw, dict):
        return {}
    out = {}
    for name, scheme in raw.items():
        scheme = resolver.resolve(scheme, f"securitySchemes.{name}")
        if isinstance(scheme, dict):
            out[name] = scheme
    return out


def _param_schema(param: dict[str, Any], swagger2: bool) -> dict[str, Any]:
    """JSON Schema of a (resolved, non-body) parameter."""
    if "schema" in param and isinstance(param["schema"], dict):
        schema = copy.deepcopy(param["schema"])
    elif isinstance(param.get("content"), dict) and param["content"]:
        media = next(iter(param["content"].values()))
        schema = copy.deepcopy((media or {}).get("schema") or {})
    else:  # Swagger 2 non-body: the schema keywords sit on the parameter itself
        keys = ("type", "format", "enum", "items", "default", "minimum", "maximum", "pattern", "maxLength",
                "minLength", "minItems", "maxItems")  # fmt: skip
        schema = {k: copy.deepcopy(param[k]) for k in keys if k in param}
        if schema.get("type") == "file":
            schema = {"type": "string", "format": "binary"}
    if param.get("description") and "description" not in schema:
        schema["description"] = param["description"]
    return schema


def _load_operation(
    *,
    doc: dict[str, Any],
    op: dict[str, Any],
    method: str,
    path: str,
    shared_params: list[Any],
    resolver: RefResolver,
    swagger2: bool,
    security_schemes: dict[str, dict[str, Any]],
    domain: str,
    platform: str,
    source: SourceRef,
    realtime: set[str],
    where: str,
) -> ToolSpec:
    loc = source.locator
    op_id = op.get("operationId")
    name = snake_case(str(op_id)) if op_id else snake_case(f"{method.lower()}_{path}")

    # ---- parameters: path-level first, overridden by operation-level (same name + in)
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for i, raw in enumerate(list(shared_params) + list(op.get("parameters") or [])):
        p = resolver.resolve(raw, f"{where} parameters[{i}]")
        if not isinstance(p, dict) or not p.get("name") or not p.get("in"):
            raise SourceError(f"spec {loc}: operation {where}: parameter #{i} lacks 'name' or 'in'")
        merged[(str(p["name"]), str(p["in"]))] = p

    properties: dict[str, Any] = {}
    required: list[str] = []
    locations: dict[str, ParamLocation] = {}
    wire_names: dict[str, str] = {}
    content_type: str | None = None

    def add(pname: str, schema: dict[str, Any], location: ParamLocation, is_required: bool) -> None:
        arg = pname
        if pname in properties:
            if locations[pname] == location:
                logger.warning("spec %s: %s: parameter %r declared twice in %s; keeping the first",
                               loc, where, pname, location)  # fmt: skip
                return
            # the same name in two places (a body property `account_slug` beside the path's
            # {account_slug}): both kept, the later one as `<location>_<name>`, sent under its own name
            arg = f"{location}_{pname}"
            n = 2
            while arg in properties:
                arg, n = f"{location}_{pname}_{n}", n + 1
            wire_names[arg] = pname
            logger.info("spec %s: %s: %s parameter %r is argument %r (the %s parameter has the name)",
                        loc, where, location, pname, arg, locations[pname])  # fmt: skip
        properties[arg] = to_json_schema(schema)
        locations[arg] = location
        if is_required:
            required.append(arg)

    form_params: list[dict[str, Any]] = []
    bodies: list[tuple[str, dict[str, Any]]] = []
    for (pname, pin), p in merged.items():
        if pin in ("path", "query", "header"):
            add(pname, _param_schema(p, swagger2), pin, bool(p.get("required")) or pin == "path")  # type: ignore[arg-type]
        elif pin == "body":  # Swagger 2; added after the path/query/header parameters keep their names
            bodies.append((pname, p))
        elif pin == "formData":
            form_params.append(p)
        else:
            logger.info("spec %s: %s: parameter %r in %s is not supported; skipped", loc, where, pname, pin)
    for pname, p in bodies:
        schema = resolver.resolve(p.get("schema") or {}, f"{where} body")
        _add_body(add, schema, bool(p.get("required", True)), pname)
    if form_params:
        has_file = any(p.get("type") == "file" for p in form_params)
        content_type = "multipart/form-data" if has_file else "application/x-www-form-urlencoded"
        consumes = op.get("consumes") or doc.get("consumes") or []
        if "multipart/form-data" in consumes:
            content_type = "multipart/form-data"
        for p in form_params:
            add(str(p["name"]), _param_schema(p, swagger2), "body", bool(p.get("required")))

    if not swagger2 and op.get("requestBody") is not None:
        body = resolver.resolve(op["requestBody"], f"{where} requestBody")
        content = body.get("content") if isinstance(body, dict) else None
        if isinstance(content, dict) and content:
            media_type, media = _pick_media(content, json_first=True)
            schema = (media or {}).get("schema") or {}
            if media_type in FORM_CONTENT_TYPES:
                content_type = media_type
            _add_body(add, schema, body.get("required", True) is not False, "body")

    # ---- security: apiKey schemes become the key parameter; bearer/basic schemes (http bearer/basic,
    # oauth2, openIdConnect) the Authorization header, filled by the executor with the source's token
    generic_ext = op.get("x-generic-params")
    key_name, key_in, key_scheme = None, "query", None
    scheme_names = _op_security_names(doc, op)
    for scheme_name in scheme_names:
        scheme = security_schemes.get(scheme_name) or {}
        if scheme.get("type") == "apiKey" and scheme.get("in") in ("query", "header") and scheme.get("name"):
            key_name, key_in = str(scheme["name"]), str(scheme["in"])
            if key_name not in properties:
                add(key_name, {"type": "string", "description": str(scheme.get("description") or "API key.")},
                    key_in, True)  # type: ignore[arg-type]  # fmt: skip
            break
    else:
        for scheme_name in scheme_names:
            key_scheme = auth_scheme(security_schemes.get(scheme_name) or {})
            if key_scheme is not None:
                key_name, key_in = AUTH_HEADER, "header"
                if key_name not in properties:
                    what = "Bearer token" if key_scheme == "bearer" else "HTTP basic credentials (user:password)"
                    desc = str(security_schemes[scheme_name].get("description") or f"{what}.")
                    add(key_name, {"type": "string", "description": desc}, "header",
                        not _security_optional(doc, op))  # fmt: skip
                break

    input_schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if content_type and any(v == "body" for v in locations.values()):
        input_schema[CONTENT_TYPE_KEY] = content_type

    # ---- responses
    responses = op.get("responses")
    if responses is None or responses == {}:  # optional in OpenAPI 3.1: the tool simply declares no output
        logger.info("spec %s: operation %s declares no responses; no output schema", loc, where)
        responses = {}
    if not isinstance(responses, dict):
        raise SourceError(f"spec {loc}: operation {where}: responses is a {type(responses).__name__}, not a mapping")
    output_schema = to_json_schema(_success_schema(responses, resolver, swagger2, where))

    records_path = op.get("x-records-path") or infer_records_path(output_schema)
    rec_schema = record_schema(output_schema, records_path)
    output_fields = flatten_fields(rec_schema)
    total_count_path = op.get("x-total-count-path") or infer_total_count_path(output_schema, records_path)

    envelope = _envelope(op, output_schema, loc, where)
    generic = _generic_params(generic_ext, properties, locations, key_name, key_in, loc, where, key_scheme)
    key_acq = None
    if isinstance(op.get("x-key-acquisition"), dict):
        try:
            key_acq = KeyAcquisition.model_validate(op["x-key-acquisition"])
        except ValueError as e:
            raise SourceError(f"spec {loc}: operation {where}: invalid x-key-acquisition: {e}") from e

    state_changing = op.get("x-state-changing")
    if state_changing is None:
        state_changing = method in STATE_CHANGING_METHODS and key_acq is None
    destructive = openapi_destructive(method, op, name, key_acquisition=key_acq is not None)
    desc_parts = [str(op.get(k)).strip() for k in ("summary", "description") if op.get(k)]
    description = ". ".join(p.rstrip(".") for p in desc_parts if p) if desc_parts else f"{method} {path}"
    if desc_parts and not description.endswith("."):
        description += "."

    return ToolSpec(
        domain=domain,
        platform=platform,
        name=name,
        description=description,
        method=method,
        path=path,
        input_schema=input_schema,
        param_locations=locations,
        param_wire_names=wire_names,
        output_schema=output_schema,
        output_fields=output_fields,
        records_path=records_path or None,
        total_count_path=total_count_path or None,
        envelope=envelope,
        generic_params=generic,
        key_acquisition=key_acq,
        state_changing=bool(state_changing) or destructive,
        destructive=destructive,
        realtime=bool(op.get("x-realtime")) or name in realtime or str(op_id) in realtime,
        source=source,
    )


def _add_body(add: Any, schema: Any, body_required: bool, raw_name: str) -> None:
    """Object bodies contribute one body param per property; other bodies one raw param."""
    s = non_null_schema(schema) if isinstance(schema, dict) else {}
    props = s.get("properties") if isinstance(s, dict) else None
    if isinstance(props, dict) and props:
        req = set(s.get("required") or []) if body_required else set()
        for pname, psch in props.items():
            add(str(pname), psch if isinstance(psch, dict) else {}, "body", pname in req)
    elif s:
        add(raw_name, {**s, RAW_BODY_FLAG: True}, "body", body_required)


def _pick_media(content: dict[str, Any], *, json_first: bool) -> tuple[str, dict[str, Any] | None]:
    types = list(content)
    for mt in types:
        if mt.split(";")[0].strip() == "application/json":
            return mt, content[mt]
    for mt in types:
        if "json" in mt:
            return mt, content[mt]
    for mt in types:
        if mt in FORM_CONTENT_TYPES or mt == "*/*":
            return mt, content[mt]
    return types[0], content[types[0]]


def _success_schema(responses: dict[str, Any], resolver: RefResolver, swagger2: bool, where: str) -> dict[str, Any]:
    responses = {str(k): v for k, v in responses.items()}  # YAML may give integer status codes
    codes = list(responses)
    order: list[str] = [c for c in ("200", "201") if c in codes]
    order += sorted(c for c in codes if c.startswith("2") and c not in order)
    order += [c for c in codes if c.upper() == "2XX" and c not in order]
    if "default" in codes:
        order.append("default")
    for code in order:
        resp = resolver.resolve(responses.get(code), f"{where} responses.{code}")
        if not isinstance(resp, dict):
            continue
        if swagger2:
            schema = resp.get("schema")
        else:
            content = resp.get("content")
            if not isinstance(content, dict) or not content:
                continue
            mt, media = _pick_media(content, json_first=True)
            if "json" not in mt and mt != "*/*":
                continue
            schema = (media or {}).get("schema")
        if isinstance(schema, dict):
            return schema
    return {}


def _op_security_names(doc: dict[str, Any], op: dict[str, Any]) -> list[str]:
    sec = op.get("security", doc.get("security"))
    names: list[str] = []
    if isinstance(sec, list):
        for req in sec:
            if isinstance(req, dict):
                names.extend(str(k) for k in req)
    return names


def _security_optional(doc: dict[str, Any], op: dict[str, Any]) -> bool:
    """Whether the operation may be called without credentials (an empty requirement `{}` among its alternatives)."""
    sec = op.get("security", doc.get("security"))
    return isinstance(sec, list) and any(isinstance(req, dict) and not req for req in sec)


def auth_scheme(scheme: dict[str, Any]) -> str | None:
    """How a security scheme's credential goes in the Authorization header: ``bearer`` (http bearer, oauth2,
    openIdConnect), ``basic`` (http basic) or None (apiKey schemes and schemes the executor cannot fill)."""
    kind = str(scheme.get("type") or "")
    if kind in ("oauth2", "openIdConnect"):
        return "bearer"
    if kind == "http":
        return {"bearer": "bearer", "basic": "basic"}.get(str(scheme.get("scheme") or "").lower())
    if kind == "basic":  # Swagger 2.0
        return "basic"
    return None


def _envelope(op: dict[str, Any], output_schema: dict[str, Any], loc: str, where: str) -> ResultEnvelope | None:
    ext = op.get("x-result-envelope")
    if isinstance(ext, dict):
        try:
            data = dict(ext)
            for k in ("ok_codes", "no_data_codes"):
                if k in data:
                    data[k] = [str(c) for c in data[k]]
            return ResultEnvelope.model_validate(data)
        except ValueError as e:
            raise SourceError(f"spec {loc}: operation {where}: invalid x-result-envelope: {e}") from e
    if schema_at(output_schema, ENVELOPE_CODE_PATH) is not None:
        msg = "response.header.resultMsg" if schema_at(output_schema, "response.header.resultMsg") else None
        return ResultEnvelope(code_path=ENVELOPE_CODE_PATH, message_path=msg)
    return None


def _generic_params(
    ext: Any,
    properties: dict[str, Any],
    locations: dict[str, ParamLocation],
    key_name: str | None,
    key_in: str,
    loc: str,
    where: str,
    key_scheme: str | None = None,
) -> GenericParams:
    if isinstance(ext, dict):
        data = dict(ext)
        if isinstance(data.get("format"), str):
            data["format"] = [data["format"]]
        if data.get("key") and "key_in" not in data:
            where_in = locations.get(data["key"], "query")
            data["key_in"] = where_in if where_in in ("query", "header", "body") else "query"
        try:
            return GenericParams.model_validate(data)
        except ValueError as e:
            raise SourceError(f"spec {loc}: operation {where}: invalid x-generic-params: {e}") from e
    lower = {n.lower(): n for n in properties}
    if key_name is None:
        for cand in lower:
            if cand in KEY_NAMES:
                key_name = lower[cand]
                where_in = locations.get(key_name, "query")
                key_in = where_in if where_in in ("query", "header", "body") else "query"
                break
    page = next((lower[n] for n in lower if n in PAGE_NAMES), None)
    page_size = next((lower[n] for n in lower if n in PAGE_SIZE_NAMES), None)
    formats = []
    for low, real in lower.items():
        if low not in FORMAT_NAMES or real in (key_name, page, page_size):
            continue
        sch = non_null_schema(properties[real])
        values = [str(v).lower() for v in (sch.get("enum") or [])] + [str(sch.get("default", "")).lower()]
        if low in FORMAT_ALWAYS or "json" in values:
            formats.append(real)
    return GenericParams(key=key_name, key_in=key_in, key_scheme=key_scheme, page=page, page_size=page_size,  # type: ignore[arg-type]
                         format=formats)  # fmt: skip
