"""ToolRegistry: lookups over the inventories, the one name-resolution rule, the executor factory."""

from typing import Any

import pytest

from factory.config import ExecutorConfig, ProjectConfig
from factory.tools.executor import ToolExecutor, run_many
from factory.tools.openapi import fetch_spec, load_openapi
from factory.tools.registry import ToolRegistry, ToolResolutionError, env_api_keys, executor_config, executor_factory
from factory.tools.spec import KeyAcquisition, SourceRef, ToolSpec
from tests.tools.conftest import FLIGHTS, SECRET_KEY, LiveServer


def _spec(domain: str, platform: str, name: str, *, key_tool: bool = False) -> ToolSpec:
    return ToolSpec(
        domain=domain,
        platform=platform,
        name=name,
        description=name,
        key_acquisition=KeyAcquisition(output_field="key") if key_tool else None,
        source=SourceRef(kind="openapi", locator=f"demo://{platform}"),
    )


SPECS = [
    _spec("music", "catalog", "search"),
    _spec("music", "catalog", "find"),
    _spec("music", "store", "zz_key", key_tool=True),
    _spec("music", "store", "a_key", key_tool=True),
    _spec("aviation", "flight-ops", "search"),
    _spec("aviation", "flight-ops", "list_flights"),
    _spec("aviation", "shared", "ping"),
    _spec("korea", "census", "search"),
    _spec("korea", "shared", "ping"),
]


def _inventories(specs: list[ToolSpec] = SPECS) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for s in specs:
        out.setdefault(s.domain, {"domain": s.domain, "tools": []})["tools"].append(s.model_dump(mode="json"))
    return out


@pytest.fixture(scope="module")
def reg() -> ToolRegistry:
    return ToolRegistry.from_inventories(_inventories())


# --------------------------------------------------------------------------- lookups


def test_registry_is_a_mapping_by_tool_id_in_domain_order(reg: ToolRegistry) -> None:
    assert list(reg)[:3] == ["aviation/flight-ops/search", "aviation/flight-ops/list_flights", "aviation/shared/ping"]
    assert len(reg) == len(SPECS) and "music/catalog/find" in reg and "music/catalog/nope" not in reg
    assert reg["korea/census/search"] == SPECS[7] and reg["korea/census/search"].tool_id == "korea/census/search"
    assert dict(reg) == {s.tool_id: s for s in SPECS}
    assert reg.domains() == ["aviation", "korea", "music"]
    assert reg.platforms() == ["catalog", "census", "flight-ops", "shared", "store"]


def test_lookups_by_domain_platform_name_and_qualified_name(reg: ToolRegistry) -> None:
    assert [s.name for s in reg.in_domain("music")] == ["search", "find", "zz_key", "a_key"]
    assert reg.in_domain("nowhere") == []
    assert [s.domain for s in reg.on_platform("shared")] == ["aviation", "korea"]
    assert [s.tool_id for s in reg.in_domains(["korea", "music"])][:2] == ["korea/census/search", "korea/shared/ping"]
    assert sorted(s.domain for s in reg.named("search")) == ["aviation", "korea", "music"]
    assert reg.get_qualified("catalog.find").domain == "music"
    assert reg.platform_tool("flight-ops", "list_flights").domain == "aviation"
    assert reg.lookup("census", "list_flights") is None
    # a platform served in two domains: (platform, name) names the first domain's tool
    assert reg.by_platform_name[("shared", "ping")].domain == "aviation"
    with pytest.raises(ToolResolutionError, match=r"tool nope\.x is in no tool_inventory"):
        reg.get_qualified("nope.x")
    with pytest.raises(ToolResolutionError, match=r"tool census\.list_flights is in no tool_inventory"):
        reg.platform_tool("census", "list_flights")


def test_key_tool_is_the_first_by_name(reg: ToolRegistry) -> None:
    assert reg.key_tool("store").name == "a_key"
    assert reg.key_tool("catalog") is None


def test_from_inventory_reads_one_domain() -> None:
    one = ToolRegistry.from_inventory(_inventories()["korea"])
    assert list(one) == ["korea/census/search", "korea/shared/ping"]
    assert ToolRegistry.from_inventory({"domain": "x", "tools": []}).specs() == []


# --------------------------------------------------------------------------- the name rule


@pytest.mark.parametrize(
    ("platforms", "domain", "expected"),
    [
        # platforms ∧ domain first: the export's old rule (platforms first) took aviation's search here
        ({"flight-ops", "catalog"}, "music", "music/catalog/search"),
        ({"flight-ops"}, "music", "aviation/flight-ops/search"),  # then platforms
        ({"nowhere"}, "korea", "korea/census/search"),  # then the domain
        (set(), "nowhere", None),  # then anywhere: three different tools → ambiguous
    ],
)
def test_resolution_order(reg: ToolRegistry, platforms: set[str], domain: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(ToolResolutionError, match="ambiguous"):
            reg.resolve("search", platforms=platforms, domain=domain)
    else:
        assert reg.resolve("search", platforms=platforms, domain=domain).tool_id == expected


def test_anywhere_when_unique(reg: ToolRegistry) -> None:
    assert (
        reg.resolve("list_flights", platforms={"catalog"}, domain="music").tool_id == "aviation/flight-ops/list_flights"
    )


def test_ambiguous_name_is_an_error_naming_the_candidates(reg: ToolRegistry) -> None:
    with pytest.raises(ToolResolutionError) as err:
        reg.resolve("search", platforms={"flight-ops", "catalog"}, domain="korea")
    msg = str(err.value)
    assert "'search' is ambiguous" in msg and "aviation/flight-ops/search" in msg and "music/catalog/search" in msg
    assert "korea/census/search" not in msg  # the platforms pool decided, the domain pool was not reached


def test_one_tool_served_in_two_domains_is_not_ambiguous(reg: ToolRegistry) -> None:
    assert reg.resolve("ping", platforms={"shared"}, domain="music").tool_id == "aviation/shared/ping"
    assert reg.resolve("ping", platforms={"shared"}, domain="korea").tool_id == "korea/shared/ping"


def test_unknown_name_is_an_error_naming_the_domains(reg: ToolRegistry) -> None:
    with pytest.raises(
        ToolResolutionError, match=r"'nope' is in no tool_inventory \(domains: aviation, korea, music\)"
    ):
        reg.resolve("nope", platforms={"catalog"}, domain="music")


# --------------------------------------------------------------------------- executors


def _cfg(url: str) -> ProjectConfig:
    src = {
        "kind": "openapi",
        "platform": "lab",
        "spec": f"{url}/openapi.json",
        "base_url": url,
        "api_key_env": "LAB_KEY",
    }
    return ProjectConfig.model_validate(
        {
            "domains": [{"name": "test", "sources": [src]}],
            "executor": {"timeout_s": 5, "max_retries": 0, "max_records_kept": 1},
            "synthesis": {"max_scan_records": 3},
        }
    )


@pytest.fixture(scope="module")
def lab(fault_server: LiveServer) -> tuple[ProjectConfig, ToolRegistry]:
    url = fault_server.url
    specs = load_openapi(fetch_spec(f"{url}/openapi.json"), domain="test", platform="lab",
                         spec_locator=f"{url}/openapi.json", base_url=url)  # fmt: skip
    stray = _spec("undeclared", "elsewhere", "list_flights")  # a domain the config does not declare
    return _cfg(url), ToolRegistry([*specs, stray])


def test_executor_config_scan_profile(lab: tuple[ProjectConfig, ToolRegistry]) -> None:
    cfg, _ = lab
    assert executor_config(cfg) is cfg.executor
    scan = executor_config(cfg, scan=True)
    assert scan.max_records_kept == cfg.synthesis.max_scan_records == 3
    assert scan.model_dump(exclude={"max_records_kept"}) == cfg.executor.model_dump(exclude={"max_records_kept"})
    assert isinstance(scan, ExecutorConfig) and cfg.executor.max_records_kept == 1  # the config is not changed


def test_env_api_keys_only_from_declared_domains(lab, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, _ = lab
    monkeypatch.delenv("LAB_KEY", raising=False)
    assert env_api_keys(cfg, ["test"]) == {}
    monkeypatch.setenv("LAB_KEY", SECRET_KEY)
    assert env_api_keys(cfg, ["test", "undeclared"]) == {"lab": SECRET_KEY}


def test_factory_keeps_records_by_profile_and_takes_keys_from_env(
    lab, fault_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, reg = lab
    monkeypatch.setenv("LAB_KEY", SECRET_KEY)
    key_calls = fault_server.state.hits[("key", "")]
    call = [("list_flights", {"per_page": 10})]
    plain = run_many(executor_factory(cfg, ["test"], reg), call)[0]
    scan = run_many(executor_factory(cfg, ["test"], reg, scan=True), call)[0]
    assert plain.ok and scan.ok and plain.record_count == scan.record_count == len(FLIGHTS)
    assert len(plain.records) == 1 and len(scan.records) == 3
    assert plain.args["serviceKey"] == "<KEY>" and SECRET_KEY not in plain.model_dump_json()
    assert fault_server.state.hits[("key", "")] == key_calls  # the environment's key, no acquisition call


def test_factory_domains(lab) -> None:
    cfg, reg = lab
    explicit = executor_factory(cfg, ["test", "undeclared"], reg)()
    assert isinstance(explicit, ToolExecutor)
    assert "elsewhere.list_flights" in explicit.tools and "lab.list_flights" in explicit.tools
    declared = executor_factory(cfg, None, reg)()  # None: the registry's domains the config declares
    assert "elsewhere.list_flights" not in declared.tools and "lab.list_flights" in declared.tools
    assert executor_factory(cfg, None, reg)() is not declared  # a factory: a fresh executor per call
