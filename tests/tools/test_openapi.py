"""OpenAPI 3.x / Swagger 2.0 loading: fixtures → expected ToolSpecs; malformed docs → SourceError."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from factory.tools.openapi import fetch_spec, load_openapi, snake_case
from factory.tools.sources import SourceError
from tests.tools.conftest import FIXTURES

SWAGGER = FIXTURES / "datagokr_swagger2.json"
OAS3 = FIXTURES / "airline_oas3.yaml"


def _load(path: Path, **kw: Any) -> dict[str, Any]:
    tools = load_openapi(
        fetch_spec(str(path)), domain="test", platform=kw.pop("platform", None), spec_locator=str(path), **kw
    )
    return {t.name: t for t in tools}


def test_swagger2_datagokr_style() -> None:
    tools = _load(SWAGGER)
    assert list(tools) == ["get_airport_list", "get_airport_detail", "post_register_airport", "upload_notice"]
    t = tools["get_airport_list"]
    assert t.platform == "국토교통부-공항-정보-서비스"  # info.title slug
    assert t.source.base_url == "https://apis.data.go.kr/1613000/AirportInfo"
    assert t.method == "GET" and t.path == "/getAirportList"
    # path-level $ref parameter + operation-level params, all resolved
    assert set(t.params) == {"serviceKey", "pageNo", "numOfRows", "_type", "airportNm"}
    assert t.required_params == ["serviceKey", "airportNm"]
    assert t.params["_type"]["enum"] == ["xml", "json"]
    assert set(t.param_locations.values()) == {"query"}
    # envelope shape found through $ref + allOf
    assert t.records_path == "response.body.items.item"
    assert t.total_count_path == "response.body.totalCount"
    assert t.envelope is not None and t.envelope.code_path == "response.header.resultCode"
    assert t.envelope.message_path == "response.header.resultMsg"
    gp = t.generic_params
    assert (gp.key, gp.key_in, gp.page, gp.page_size, gp.format) == (
        "serviceKey",
        "query",
        "pageNo",
        "numOfRows",
        ["_type"],
    )
    assert t.semantic_params() == ["airportNm"]
    f = t.output_fields
    assert set(f) == {"airportId", "airportNm", "location.lat", "location.lon", "kind", "nearby"}
    assert f["location.lat"].type == "number" and f["location.lat"].description == "위도"
    assert f["kind"].enum == ["international", "domestic"]
    assert not t.state_changing

    d = tools["get_airport_detail"]
    assert d.param_locations == {"serviceKey": "query", "airportId": "path"}
    assert d.records_path is None  # Airport.nearby is the record's own kind, not an envelope
    assert "airportNm" in d.output_fields

    reg = tools["post_register_airport"]  # no operationId: method_path synthesized
    assert reg.state_changing
    # in: body with allOf of a $ref + extra props → one body param per property
    assert {k for k, v in reg.param_locations.items() if v == "body"} == {
        "airportId", "airportNm", "location", "kind", "nearby", "operator"
    }  # fmt: skip
    assert set(reg.required_params) == {"serviceKey", "airportId", "airportNm"}
    # recursive $ref (Airport.nearby → Airport) terminates with a stub
    assert "recursive" in json.dumps(reg.input_schema)

    form = tools["upload_notice"]
    assert form.param_locations == {"title": "body", "body": "body"}
    assert form.input_schema["x-content-type"] == "application/x-www-form-urlencoded"
    assert form.generic_params.key is None


def test_openapi3_yaml_security_requestbody_extensions() -> None:
    tools = _load(OAS3, platform="airline-registry", base_url="http://127.0.0.1:9/v1")
    assert set(tools) == {"list_airlines", "get_airline", "list_categories", "create_playlist", "get_api_key"}
    la = tools["list_airlines"]
    assert la.platform == "airline-registry" and la.source.base_url == "http://127.0.0.1:9/v1"
    assert la.records_path == "data"
    assert set(la.output_fields) == {"carrier", "name", "headquarters.city", "headquarters.country"}
    # apiKey security scheme in header becomes the key parameter
    assert la.generic_params.key == "X-API-Key" and la.generic_params.key_in == "header"
    assert la.param_locations["X-API-Key"] == "header" and "X-API-Key" in la.required_params
    assert (la.generic_params.page, la.generic_params.page_size) == ("page", "per_page")
    assert la.semantic_params() == ["name"]

    ga = tools["get_airline"]  # path-level $ref parameter from components.parameters
    assert ga.param_locations["carrier"] == "path" and "carrier" in ga.required_params
    assert ga.params["carrier"]["description"] == "Two-letter carrier code."
    assert ga.records_path is None and "headquarters.city" in ga.output_fields

    lc = tools["list_categories"]  # vendor extensions win over inference
    assert lc.records_path == "items" and lc.total_count_path == "count" and lc.realtime
    assert lc.generic_params.format == ["fmt"] and lc.generic_params.key_in == "header"
    assert lc.output_fields["parent"].type == "object"  # recursive schema cut, not exploded

    cp = tools["create_playlist"]  # requestBody through components.requestBodies $ref
    assert cp.state_changing and cp.method == "POST"
    assert cp.param_locations["name"] == "body" and cp.param_locations["track_ids"] == "body"
    assert "name" in cp.required_params and "track_ids" not in cp.required_params

    key = tools["get_api_key"]
    assert key.key_acquisition is not None and key.key_acquisition.output_field == "api_key"
    assert key.generic_params.key is None and not key.params  # security: [] on the operation
    assert not key.state_changing  # key acquisition is not a state change


def test_relative_server_url_resolved_against_spec_url() -> None:
    doc = fetch_spec(str(OAS3))
    tools = load_openapi(doc, domain="d", platform="p", spec_locator="http://example.test/specs/openapi.yaml")
    assert tools[0].source.base_url == "http://example.test/v1"


def _oas31(**paths: Any) -> dict[str, Any]:
    return {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": paths}


def test_openapi31_nullable_and_inference() -> None:
    doc = _oas31(
        **{
            "/things": {
                "get": {
                    "parameters": [
                        {"name": "api_key", "in": "query", "required": True, "schema": {"type": "string"}},
                        {"name": "pageNo", "in": "query", "schema": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
                        {"name": "numOfRows", "in": "query", "schema": {"type": "integer"}},
                        {"name": "type", "in": "query", "schema": {"type": "string", "default": "json"}},
                        {"name": "q", "in": "query", "schema": {"type": ["string", "null"]}},
                    ],
                    "responses": {
                        "200": {
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
                                        },
                                    }
                                }
                            }
                        }
                    },
                }
            }
        }
    )
    (t,) = load_openapi(doc, domain="d", platform=None, spec_locator="mem://x")
    assert t.name == "get_things" and t.platform == "t"
    assert t.records_path is None  # a top-level array is the record list
    assert t.output_fields["n"].type == "integer"
    gp = t.generic_params
    assert (gp.key, gp.page, gp.page_size, gp.format) == ("api_key", "pageNo", "numOfRows", ["type"])
    assert t.semantic_params() == ["q"]


def test_snake_case() -> None:
    assert snake_case("getFlightList") == "get_flight_list"
    assert snake_case("HTTPResponseCode") == "http_response_code"
    assert snake_case("list-flights v2") == "list_flights_v2"


# --------------------------------------------------------------------------- malformed documents

GOOD = _oas31(**{"/a": {"get": {"operationId": "a", "responses": {"200": {"description": "ok"}}}}})


def _broken(mutate: Any) -> dict[str, Any]:
    doc = copy.deepcopy(GOOD)
    mutate(doc)
    return doc


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"info": {}, "paths": {}}, "no 'openapi' or 'swagger' version"),
        (_broken(lambda d: d.update(openapi="4.0.0")), "unsupported OpenAPI version"),
        ({"swagger": "1.2", "paths": {"/a": {}}}, "unsupported Swagger version"),
        (_broken(lambda d: d.pop("paths")), "no paths"),
        (_broken(lambda d: d.update(paths={})), "no paths"),
        (_broken(lambda d: d["paths"]["/a"]["get"].update(responses=[200])), "operation GET /a: responses is a list"),
        (
            _broken(
                lambda d: d["paths"]["/a"]["get"]["responses"]["200"].update(
                    content={"application/json": {"schema": {"$ref": "#/components/schemas/Missing"}}}
                )
            ),
            "unresolvable $ref '#/components/schemas/Missing'",
        ),  # fmt: skip
        (_broken(lambda d: d["paths"]["/a"]["get"].update(parameters=[{"in": "query"}])), "lacks 'name' or 'in'"),
        (
            _broken(lambda d: d["paths"].update({"/b": {"get": {"operationId": "a", "responses": {"200": {}}}}})),
            "duplicate tool name 'a'",
        ),  # fmt: skip
        (_broken(lambda d: d["paths"].update({"/b": "nope"})), "path item '/b' is not a mapping"),
        (_broken(lambda d: d["paths"]["/a"].update(parameters=[{"$ref": "other.yaml#/p"}])), "non-local $ref"),
    ],
)
def test_malformed_documents_raise_source_error(doc: dict[str, Any], needle: str) -> None:
    with pytest.raises(SourceError) as err:
        load_openapi(doc, domain="d", platform="p", spec_locator="specs/broken.json")
    msg = str(err.value)
    assert "specs/broken.json" in msg
    assert needle in msg


def test_fetch_spec_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json: [", encoding="utf-8")
    with pytest.raises(SourceError, match=r"bad\.json: not valid JSON or YAML"):
        fetch_spec(str(bad))
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("just a string\n", encoding="utf-8")
    with pytest.raises(SourceError, match="not an OpenAPI document"):
        fetch_spec(str(scalar))
    with pytest.raises(SourceError, match=r"missing\.json: cannot read file"):
        fetch_spec(str(tmp_path / "missing.json"))


def test_fetch_spec_unreachable_url() -> None:
    from tests.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/openapi.json"
    with pytest.raises(SourceError) as err:
        fetch_spec(url, timeout_s=2)
    assert url in str(err.value) and "cannot fetch" in str(err.value)


def test_fetch_and_load_live_fastapi_spec(fault_server: Any) -> None:
    url = f"{fault_server.url}/openapi.json"
    doc = fetch_spec(url)
    tools = {t.name: t for t in load_openapi(doc, domain="d", platform=None, spec_locator=url)}
    assert tools["list_flights"].platform == "fault-lab"
    assert tools["list_flights"].source.base_url == fault_server.url  # no servers: the spec's origin
    assert tools["get_api_key"].key_acquisition is not None
    assert tools["create_playlist"].params["body"]["x-raw-body"] is True
    with pytest.raises(SourceError, match="HTTP 404"):
        fetch_spec(f"{fault_server.url}/nope.json")
