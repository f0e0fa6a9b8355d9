"""The geo-mcp demo server over real stdio, the MCP loader, and MCP calls through the executor."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from factory.config import ExecutorConfig, SourceConfig
from factory.tools.executor import run_calls
from factory.tools.mcp import classify_error_text, interpret_result, load_mcp
from factory.tools.outcomes import Outcome
from factory.tools.sources import SourceError
from factory.tools.spec import ToolSpec

GEO = SourceConfig(kind="mcp", platform="geo-mcp", command=["python", "-m", "factory.demo.mcp_server"])


@pytest.fixture(scope="module")
def geo_tools() -> dict[str, ToolSpec]:
    return {t.name: t for t in load_mcp(GEO, "aviation")}


def test_load_mcp_lists_typed_tools(geo_tools: dict[str, ToolSpec]) -> None:
    assert set(geo_tools) == {"airport_coordinates", "great_circle_distance", "airports_near", "airport_timezone"}
    near = geo_tools["airports_near"]
    assert near.method == "MCP" and near.platform == "geo-mcp" and near.domain == "aviation"
    assert near.source.kind == "mcp" and near.source.locator == "python -m factory.demo.mcp_server"
    assert near.param_locations == {"iata": "mcp", "radius_km": "mcp", "limit": "mcp"}
    assert near.required_params == ["iata"]
    assert near.params["radius_km"]["type"] == "number" and near.params["iata"]["description"]
    assert near.records_path == "airports" and near.total_count_path == "count"
    assert set(near.output_fields) == {"iata", "name", "city", "country", "distance_km"}
    assert "$defs" not in near.output_schema
    coords = geo_tools["airport_coordinates"]
    assert coords.records_path is None and coords.output_fields["lat"].type == "number"
    assert all(t.description for t in geo_tools.values())


def test_execute_mcp_tools_for_real(geo_tools: dict[str, ToolSpec]) -> None:
    cfg = ExecutorConfig(timeout_s=20, max_retries=0)
    near, coords, dist, bad, missing = run_calls(
        list(geo_tools.values()),
        [
            ("airports_near", {"iata": "JFK", "radius_km": 40, "limit": 5}),
            ("airport_coordinates", {"iata": "ICN"}),
            ("great_circle_distance", {"origin_iata": "JFK", "dest_iata": "ICN"}),
            ("airport_coordinates", {"iata": "QQQ"}),
            ("great_circle_distance", {"origin_iata": "JFK"}),
        ],
        cfg,
        sources=[GEO],
    )
    assert near.outcome is Outcome.SEMANTIC_SUCCESS, near.detail
    assert near.record_count >= 2 and near.records[0]["iata"] == "LGA" and near.total_count == near.record_count
    assert coords.outcome is Outcome.SEMANTIC_SUCCESS and coords.records[0]["tz"] == "Asia/Seoul"
    assert coords.body["country"] == "KR"  # no records path: the body is the one record
    assert dist.records[0]["km"] == pytest.approx(11_070, rel=0.02)
    assert bad.outcome is Outcome.SCHEMA_MISMATCH and "QQQ" in bad.detail
    assert missing.outcome is Outcome.MISSING_FIELD, missing.detail


def test_server_that_exits_at_start() -> None:
    src = SourceConfig(
        kind="mcp", platform="broken",
        command=[sys.executable, "-c", "import sys; sys.stderr.write('needs mcp<2\\n'); sys.exit(2)"],
    )  # fmt: skip
    with pytest.raises(SourceError) as err:
        load_mcp(src, "aviation")
    msg = str(err.value)
    assert "closed the connection at start" in msg and "needs mcp<2" in msg and sys.executable in msg


def test_missing_command_and_dead_server_in_executor() -> None:
    with pytest.raises(SourceError, match="cannot be started"):
        load_mcp(SourceConfig(kind="mcp", command=["/nonexistent/mcp-server"]), "d")
    from factory.tools.spec import SourceRef

    ghost = ToolSpec(domain="d", platform="ghost", name="t", description="d", method="MCP",
                     source=SourceRef(kind="mcp", locator=f"{sys.executable} -c 'raise SystemExit(1)'"))  # fmt: skip
    (r,) = run_calls([ghost], [("t", {})], ExecutorConfig(timeout_s=5))
    assert r.outcome is Outcome.ENDPOINT_UNAVAILABLE and "closed the connection at start" in r.detail


def _result(text: str, is_error: bool = False, structured: Any = None) -> Any:
    return SimpleNamespace(content=[SimpleNamespace(type="text", text=text)], is_error=is_error,
                           structured_content=structured)  # fmt: skip


@pytest.mark.parametrize(
    ("result", "outcome", "body"),
    [
        (_result('{"a": 1}'), None, {"a": 1}),
        (_result("{'a': 1, 'b': (1, 2), 'c': None}"), None, {"a": 1, "b": [1, 2], "c": None}),  # Python repr
        (_result("Error: rate limit exceeded, try later"), Outcome.RATE_LIMIT, None),  # isError false, error text
        (_result("Error executing tool x: 1 validation error\niata\n  Field required"), Outcome.MISSING_FIELD, None),
        (_result("Unknown tool: nope", is_error=True), Outcome.ENDPOINT_UNAVAILABLE, None),
        (_result("{'error': 'invalid api key'}"), Outcome.AUTH_ERROR, None),
        (_result("plain words"), None, {"text": "plain words"}),
        (_result("", structured={"x": [1]}), None, {"x": [1]}),
    ],
)
def test_interpret_result_by_content(result: Any, outcome: Outcome | None, body: Any) -> None:
    got_outcome, got_body, _ = interpret_result(result)
    assert got_outcome is outcome
    assert got_body == body


def test_classify_error_text() -> None:
    assert classify_error_text("Internal server error") is Outcome.SERVER_ERROR
    assert classify_error_text("request timed out") is Outcome.TIMEOUT
    assert classify_error_text("something odd") is Outcome.UNCATEGORIZED


def test_stdio_server_starts_in_the_project_folder(tmp_path, monkeypatch) -> None:
    """A relative path in an MCP command line is the project's, not the working directory's."""
    from factory.config import parse_config
    from factory.tools.registry import ToolRegistry, executor_factory
    from factory.tools.sources import load_domain_tools

    (tmp_path / "servers").mkdir()
    (tmp_path / "servers" / "geo.py").write_text(
        "import runpy\nrunpy.run_module('factory.demo.mcp_server', run_name='__main__')\n", encoding="utf-8"
    )
    text = "name: t\ndomains:\n  - name: d\n    sources:\n      - {kind: mcp, platform: geo, command: [python, servers/geo.py]}\n"
    cfg = parse_config(text, project_dir=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    tools = load_domain_tools(cfg.domains[0], cfg)
    assert {t.name for t in tools} >= {"airport_coordinates"}
    make = executor_factory(cfg, ["d"], ToolRegistry(tools))

    async def call():
        async with make() as ex:
            return await ex.call("airport_coordinates", {"iata": "ICN"})

    import asyncio

    r = asyncio.run(call())
    assert r.outcome is Outcome.SEMANTIC_SUCCESS, r.detail
