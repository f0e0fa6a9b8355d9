"""Loader hardening (issue 13, item 7): YAML scalars read as an OpenAPI document means them, errors
with line numbers, OpenAPI 3.0 / Swagger keywords normalized to JSON Schema 2020-12, relative
server URLs, parameter/body name collisions, valid function names. One test per class, with the
text a user sees."""

from __future__ import annotations

import logging
import textwrap

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from factory.ingest import inventory_frame
from factory.tools.openapi import load_openapi, parse_spec_text, to_json_schema, valid_tool_name
from factory.tools.sources import SourceError, function_names
from factory.tools.transports.http import build_request


def _doc(
    paths: str,
    head: str = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com/v1'}]\n",
):
    return parse_spec_text(head + "paths:\n" + textwrap.indent(textwrap.dedent(paths), "  "), "spec.yaml")


def _tools(doc, locator: str = "spec.yaml", **kw):
    return {t.name: t for t in load_openapi(doc, domain="d", platform="p", spec_locator=locator, **kw)}


def test_yaml_timestamps_equals_and_yaml11_numbers_stay_strings():
    doc = _doc(
        """
        /ages:
          get:
            operationId: getAges
            parameters:
              - {name: since, in: query, schema: {type: string, example: 2024-01-31, default: 2001-12-14t21:59:43.10-05:00}}
              - {name: op, in: query, schema: {type: string, enum: [=, <, yes, no, "on"], default: =}}
            responses:
              '200':
                description: ok
                content:
                  application/json:
                    schema:
                      type: object
                      properties:
                        18_24: {type: integer}
                        0777: {type: string}
                        1:30: {type: string}
                        count: {type: integer, maximum: 10000000000000000000000, minimum: 0x10}
        """
    )
    t = _tools(doc)["get_ages"]
    since = t.params["since"]
    assert since["example"] == "2024-01-31" and since["default"] == "2001-12-14t21:59:43.10-05:00"
    assert t.params["op"]["enum"] == ["=", "<", "yes", "no", "on"] and t.params["op"]["default"] == "="
    props = t.output_schema["properties"]
    assert list(props) == ["18_24", "0777", "1:30", "count"]
    assert props["count"]["minimum"] == 16  # plain ints (decimal, hex) are still numbers


def test_a_timestamp_out_of_range_no_longer_escapes_as_a_bare_value_error():
    doc = parse_spec_text("openapi: 3.0.0\ninfo: {title: t, version: 1}\nx-date: 2024-13-45\npaths: {}\n", "s.yaml")
    assert doc["x-date"] == "2024-13-45"


def test_yaml_errors_name_the_line_and_column():
    with pytest.raises(SourceError) as e:
        parse_spec_text("openapi: 3.0.0\npaths:\n  /a:\n    get: {responses: [1, 2}\n", "api.yaml")
    assert str(e.value) == (
        "spec api.yaml: not valid JSON or YAML at line 4, column 27: while parsing a flow sequence "
        "expected ',' or ']', but got '}'"
    )
    with pytest.raises(SourceError) as e:
        parse_spec_text("openapi: 3.0.0\ninfo: a\n  title: b\n", "api.yaml")
    assert (
        str(e.value) == "spec api.yaml: not valid JSON or YAML at line 3, column 8: mapping values are not allowed here"
    )


def test_openapi30_keywords_become_valid_json_schema_2020_12():
    raw = {
        "type": "object",
        "properties": {
            "age": {
                "type": "integer",
                "minimum": 18,
                "exclusiveMinimum": True,
                "maximum": 99,
                "exclusiveMaximum": False,
            },
            "nick": {"type": "string", "nullable": True, "description": "nickname", "example": "bo"},
            "legacy": {"type": "string", "x-nullable": True, "x-order": 3},
            "upload": {"type": "file"},
            "kind": {"type": "string", "required": True, "enum": ["a"]},
            "tags": {"type": "array", "items": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
        },
        "example": {"upload": {"type": "file"}},  # data: never rewritten
    }
    with pytest.raises(SchemaError):  # what the gate used to reject
        Draft202012Validator.check_schema(raw)
    out = to_json_schema(raw)
    Draft202012Validator.check_schema(out)
    p = out["properties"]
    assert p["age"] == {"type": "integer", "exclusiveMinimum": 18, "maximum": 99}
    assert p["nick"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "nickname", "example": "bo"}
    assert p["legacy"] == {"anyOf": [{"type": "string", "x-order": 3}, {"type": "null"}]}
    assert p["upload"] == {"type": "string", "format": "binary"}
    assert p["kind"] == {"type": "string", "enum": ["a"]}
    assert p["tags"]["items"] == {"type": "number", "exclusiveMinimum": 0}
    assert out["example"] == {"upload": {"type": "file"}}


def test_loaded_tools_pass_the_inventory_schema_check():
    doc = _doc(
        """
        /people/{id}:
          get:
            operationId: getPerson
            parameters:
              - {name: id, in: path, required: true, schema: {type: integer, minimum: 0, exclusiveMinimum: true}}
            responses:
              '200':
                description: ok
                content:
                  application/json:
                    schema: {type: object, properties: {age: {type: integer, nullable: true, exclusiveMaximum: true, maximum: 150}}}
        """
    )
    frame = inventory_frame({"tools": [t.model_dump(mode="json") for t in _tools(doc).values()], "fingerprint": None})
    assert frame["input_schema_valid"].all() and frame["output_schema_valid"].all(), frame.to_dict("records")


def test_swagger_file_parameter_is_a_binary_string():
    doc = parse_spec_text(
        textwrap.dedent(
            """
            swagger: '2.0'
            info: {title: t, version: '1'}
            host: api.example.com
            paths:
              /upload:
                post:
                  operationId: upload
                  consumes: [multipart/form-data]
                  parameters: [{name: file, in: formData, type: file, required: true}]
                  responses: {'200': {description: ok, schema: {type: file}}}
            """
        ),
        "s.yaml",
    )
    t = _tools(doc)["upload"]
    assert t.params["file"]["type"] == "string" and t.params["file"]["format"] == "binary"
    assert t.output_schema == {"type": "string", "format": "binary"}


def test_relative_server_url_resolves_against_the_spec_url_and_warns_for_a_file(caplog):
    paths = """
        /a:
          get:
            operationId: getA
            responses: {'200': {description: ok}}
        """
    head = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: /api/v2}]\n"
    doc = _doc(paths, head)
    by_url = _tools(doc, "https://example.org/specs/openapi.yaml")["get_a"]
    assert by_url.source.base_url == "https://example.org/api/v2"
    with caplog.at_level(logging.WARNING, logger="factory.tools.openapi"):
        by_file = _tools(doc, "/tmp/openapi.yaml")["get_a"]
    assert by_file.source.base_url is None
    assert (
        "spec /tmp/openapi.yaml: the server URL '/api/v2' is relative and the spec was read from a file, so calls "
        "have no base URL; set the source's base_url" in caplog.text
    )
    assert build_request(by_file, {}) == (
        "no base URL for p.get_a: the source sets no base_url and its spec (/tmp/openapi.yaml) names no absolute "
        "server URL; set base_url on the source"
    )
    configured = _tools(doc, "/tmp/openapi.yaml", base_url="http://localhost:9000")["get_a"]
    assert build_request(configured, {})[0] == "http://localhost:9000/a"


def test_a_body_property_never_overrides_the_path_parameter_of_the_same_name():
    doc = _doc(
        """
        /accounts/{account_slug}/members:
          post:
            operationId: addMember
            parameters: [{name: account_slug, in: path, required: true, schema: {type: string}}]
            requestBody:
              required: true
              content:
                application/json:
                  schema:
                    type: object
                    required: [account_slug, email]
                    properties: {account_slug: {type: string}, email: {type: string}}
            responses: {'201': {description: ok}}
        """
    )
    t = _tools(doc)["add_member"]
    assert t.param_locations == {"account_slug": "path", "body_account_slug": "body", "email": "body"}
    assert t.param_wire_names == {"body_account_slug": "account_slug"}
    assert set(t.required_params) == {"account_slug", "body_account_slug", "email"}
    url, kw = build_request(t, {"account_slug": "acme", "body_account_slug": "other", "email": "a@b.c"})
    assert url == "https://api.example.com/v1/accounts/acme/members"
    assert kw["json"] == {"account_slug": "other", "email": "a@b.c"}


def test_swagger_body_parameter_listed_first_still_leaves_the_path_parameter_its_name():
    doc = parse_spec_text(
        textwrap.dedent(
            """
            swagger: '2.0'
            info: {title: t, version: '1'}
            host: api.example.com
            paths:
              /items/{id}:
                put:
                  operationId: putItem
                  parameters:
                    - {name: payload, in: body, schema: {type: object, properties: {id: {type: integer}, name: {type: string}}}}
                    - {name: id, in: path, required: true, type: string}
                  responses: {'200': {description: ok}}
            """
        ),
        "s.yaml",
    )
    t = _tools(doc)["put_item"]
    assert t.param_locations == {"id": "path", "body_id": "body", "name": "body"}
    url, kw = build_request(t, {"id": "x7", "body_id": 7, "name": "n"})
    assert url.endswith("/items/x7") and kw["json"] == {"id": 7, "name": "n"}


def test_function_names_are_valid_deterministic_and_keep_the_original():
    long = "get_" + "very_long_resource_name_" * 4 + "list"
    assert valid_tool_name("get_a") == "get_a"
    assert valid_tool_name("files.read") == "files_read"
    first = valid_tool_name(long)
    assert first == valid_tool_name(long) and len(first) <= 64
    assert first.startswith("get_very_long_resource_name_") and first != valid_tool_name(long + "x")
    assert valid_tool_name("files.read", taken={"files_read"}) != "files_read"

    doc = _doc(
        f"""
        /a:
          get:
            operationId: {long}
            responses: {{'200': {{description: ok}}}}
        """
    )
    (t,) = function_names(list(_tools(doc).values()))
    assert t.name == first and t.original_name == long
    assert t.tool_id == f"d/p/{first}"


def test_an_operation_without_responses_loads_with_no_output_schema():
    doc = _doc(
        """
        /cookies:
          get:
            operationId: getCookies
            parameters: [{name: flavour, in: query, schema: {type: string}}]
        """
    )
    t = _tools(doc)["get_cookies"]
    assert t.output_schema == {} and t.output_fields == {} and set(t.params) == {"flavour"}
