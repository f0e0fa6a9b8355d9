"""Source resolution and domain-level loading (OpenAPI files, demo:// URLs, MCP, failures)."""

from __future__ import annotations

from typing import Any

import pytest

from factory.config import DemoConfig, DomainConfig, ProjectConfig, SourceConfig
from factory.tools.sources import SourceError, load_domain_tools, load_source_tools, resolve_source
from tests.conftest import free_port
from tests.tools.conftest import FIXTURES

OAS3 = str(FIXTURES / "airline_oas3.yaml")
SWAGGER = str(FIXTURES / "datagokr_swagger2.json")
DEMO = DemoConfig(host="127.0.0.1", port=8765)


def project(*sources: SourceConfig, demo: DemoConfig = DEMO) -> ProjectConfig:
    return ProjectConfig(demo=demo, domains=[DomainConfig(name="aviation", sources=list(sources))])


def test_resolve_demo_and_plain_sources() -> None:
    demo = SourceConfig(kind="openapi", platform="flight-ops", spec="demo://flight-ops")
    assert resolve_source(demo, DEMO) == (
        "http://127.0.0.1:8765/flight-ops/openapi.json",
        "http://127.0.0.1:8765/flight-ops",
    )
    pinned = SourceConfig(kind="openapi", spec="demo://flight-ops", base_url="http://proxy/fo")
    assert resolve_source(pinned, DEMO)[1] == "http://proxy/fo"
    plain = SourceConfig(kind="openapi", spec=OAS3)
    assert resolve_source(plain, DEMO) == (OAS3, None)
    mcp = SourceConfig(kind="mcp", command=["python", "-m", "factory.demo.mcp_server"])
    assert resolve_source(mcp, DEMO) == ("python -m factory.demo.mcp_server", None)
    with pytest.raises(SourceError, match="demo:// needs a platform"):
        resolve_source(SourceConfig(kind="openapi", spec="demo://"), DEMO)


def test_load_domain_tools_from_files() -> None:
    cfg = project(
        SourceConfig(kind="openapi", platform="airline-registry", spec=OAS3, realtime_tools=["getAirline"]),
        SourceConfig(kind="openapi", platform="airport-info", spec=SWAGGER),
    )
    tools = load_domain_tools(cfg.domains[0], cfg)
    assert len(tools) == 9
    assert {t.platform for t in tools} == {"airline-registry", "airport-info"}
    assert all(t.domain == "aviation" for t in tools)
    assert next(t for t in tools if t.name == "get_airline").realtime


def test_duplicate_tool_names_in_a_domain() -> None:
    cfg = project(
        SourceConfig(kind="openapi", platform="one", spec=OAS3),
        SourceConfig(kind="openapi", platform="two", spec=OAS3),
    )
    with pytest.raises(SourceError, match="duplicate tool name 'list_airlines'") as err:
        load_domain_tools(cfg.domains[0], cfg)
    assert "two" in str(err.value) and "one" in str(err.value)


def test_failing_source_is_named(tmp_path: Any) -> None:
    missing = str(tmp_path / "nope.yaml")
    cfg = project(SourceConfig(kind="openapi", platform="ghost", spec=missing))
    with pytest.raises(SourceError, match="nope.yaml"):
        load_domain_tools(cfg.domains[0], cfg)
    # demo:// with nothing listening: the resolved URL is named
    demo = DemoConfig(port=free_port())
    cfg = project(SourceConfig(kind="openapi", platform="flight-ops", spec="demo://flight-ops"), demo=demo)
    with pytest.raises(SourceError, match=rf"127\.0\.0\.1:{demo.port}/flight-ops/openapi\.json"):
        load_domain_tools(cfg.domains[0], cfg)


def test_load_source_tools_mcp() -> None:
    src = SourceConfig(kind="mcp", platform="geo-mcp", command=["python", "-m", "factory.demo.mcp_server"])
    tools = load_source_tools(src, "aviation", DEMO)
    assert {t.platform for t in tools} == {"geo-mcp"} and len(tools) == 4
