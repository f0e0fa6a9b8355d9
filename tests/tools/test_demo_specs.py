"""Every demo platform's OpenAPI document loads through `load_openapi`, and schema drift shows in fingerprints.

The demo app is driven in-process through Starlette's TestClient *without* its
lifespan (no data warm-up thread): serving the documents needs no data.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from factory.config import DemoConfig
from factory.tools.fingerprint import fingerprint_by_platform
from factory.tools.openapi import load_openapi
from factory.tools.spec import ToolSpec

demo_app = pytest.importorskip("factory.demo.app")
testclient = pytest.importorskip("fastapi.testclient")


def load_demo_tools(cfg: DemoConfig) -> list[ToolSpec]:
    client = testclient.TestClient(demo_app.create_app(cfg))  # no `with`: lifespan (warm-up) not started
    tools: list[ToolSpec] = []
    for platform, (domain, _, _) in demo_app.PLATFORMS.items():
        resp = client.get(f"/{platform}/openapi.json")
        assert resp.status_code == 200, platform
        tools += load_openapi(
            resp.json(),
            domain=domain,
            platform=platform,
            spec_locator=f"demo://{platform}",
            base_url=f"{cfg.base_url}/{platform}",
        )
    return tools


def test_all_demo_platforms_load() -> None:
    tools = load_demo_tools(DemoConfig())
    by_platform: dict[str, list[ToolSpec]] = defaultdict(list)
    by_domain: dict[str, list[str]] = defaultdict(list)
    for t in tools:
        by_platform[t.platform].append(t)
        by_domain[t.domain].append(t.name)
    assert set(by_platform) == set(demo_app.PLATFORMS)
    for platform, specs in by_platform.items():
        assert len(specs) >= 2, platform
        assert sum(t.key_acquisition is not None for t in specs) == 1, platform  # one key tool per platform
        for t in specs:
            assert t.description and t.input_schema["type"] == "object"
            assert set(t.required_params) <= set(t.params)
            assert set(t.param_locations) == set(t.params)
            if t.key_acquisition is None:
                assert t.generic_params.key, f"{platform}.{t.name} has no key parameter"
    for domain, names in by_domain.items():
        assert len(names) == len(set(names)), f"duplicate tool names in {domain}"
    # paginated GET list tools have a records path and paging params
    listed = [t for t in tools if t.records_path]
    assert listed and all(t.generic_params.page for t in listed if t.total_count_path and t.method == "GET")


def test_schema_versions_change_fingerprints() -> None:
    v1 = fingerprint_by_platform(load_demo_tools(DemoConfig()))
    drifted = [p for p, (_, _, changed) in demo_app.PLATFORMS.items() if changed]
    assert drifted
    v2 = fingerprint_by_platform(load_demo_tools(DemoConfig(schema_versions={p: "v2" for p in drifted})))
    for p in demo_app.PLATFORMS:
        assert (v1[p] != v2[p]) == (p in drifted), p
