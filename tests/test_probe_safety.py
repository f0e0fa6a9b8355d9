"""Issue 21 #6: destructive tools are not probed (nor executed at all) unless the project opts in."""

import asyncio

from factory import ingest
from factory.config import parse_config
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.sources import load_domain_tools
from tests.hostile.http_destructive import DestructiveService

DESTRUCTIVE = {"delete_all", "replace_item", "create_item", "purge_cache"}
WRITES = {"add_note"}  # a POST marked non-destructive: it still changes state
SAFE = {"list_items", "search_items"}  # GET, and a POST marked x-state-changing: false


def _cfg(tmp_path, url: str, extra: str = "", source_extra: str = ""):
    text = f"""name: t
data_dir: {tmp_path / "data"}
executor: {{timeout_s: 2, max_retries: 0}}
{extra}
domains:
  - name: shop
    sources:
      - {{kind: openapi, platform: store, spec: "{url}/openapi.json"{source_extra}}}
"""
    return parse_config(text, source="f.yaml", project_dir=tmp_path)


def _probe(cfg):
    inventory, _ = ingest.build_inventory(cfg.domain("shop"), cfg)
    return ingest.run_probes(inventory, cfg, progress=lambda m: None)


def test_destructive_endpoints_are_not_probed_by_default(tmp_path):
    with DestructiveService() as svc:
        cfg = _cfg(tmp_path, svc.url)
        value, meta = _probe(cfg)
        assert svc.count("DELETE", "/all") == 0
        assert svc.destructive_calls() == 0, dict(svc.calls)
        assert svc.count("GET", "/items") > 0 and svc.count("POST", "/search") > 0
        assert svc.count("POST", "/notes") == 0  # a source is side_effects: read_only unless it says otherwise
    assert {r["tool"] for r in value["rows"]} == SAFE
    assert {s["tool"] for s in value["skipped"]} == DESTRUCTIVE | WRITES
    note = next(s["reason"] for s in value["skipped"] if s["tool"] == "add_note")
    assert note == (
        "store.add_note (POST) changes state and its source is side_effects: read_only: inventoried, never "
        "executed; set side_effects: allow_writes on the source to execute it"
    )
    assert meta["skipped_destructive_tools"] == 5 and "delete_all" in str(meta["skipped_tools"])
    # the coverage gate counts the probed tools only
    frame = ingest.probes_by_tool_frame(value["rows"], sorted(SAFE | WRITES | DESTRUCTIVE), value["skipped"])
    assert sorted(frame["tool"]) == sorted(SAFE) and frame["has_success"].all()


def test_allow_writes_executes_writes_but_not_destructive_tools(tmp_path):
    with DestructiveService() as svc:
        value, _ = _probe(_cfg(tmp_path, svc.url, source_extra=", side_effects: allow_writes"))
        assert svc.count("POST", "/notes") > 0
        assert svc.destructive_calls() == 0, dict(svc.calls)
    assert {r["tool"] for r in value["rows"]} == SAFE | WRITES
    assert {s["tool"] for s in value["skipped"]} == DESTRUCTIVE


def test_the_executor_never_sends_a_refused_tool(tmp_path):
    with DestructiveService() as svc:
        cfg = _cfg(tmp_path, svc.url)
        registry = ToolRegistry(load_domain_tools(cfg.domain("shop"), cfg))

        async def go():
            async with executor_factory(cfg, ["shop"], registry)() as ex:
                return await ex.call_many([("delete_all", {}), ("replace_item", {"item_id": 1}), ("list_items", {})])

        gone, replaced, listed = asyncio.run(go())
        assert svc.destructive_calls() == 0
    assert gone.outcome == "endpoint_unavailable" and gone.attempts == 0 and "allow_destructive" in gone.detail
    assert replaced.outcome == "endpoint_unavailable" and listed.ok


def test_opt_in_per_source_and_per_project(tmp_path):
    with DestructiveService() as svc:
        value, _ = _probe(_cfg(tmp_path, svc.url, source_extra=", allow_destructive_tools: [delete_all]"))
        assert svc.count("DELETE", "/all") > 0
        assert svc.count("PUT", "/items/1") == 0 and svc.count("GET", "/purge") == 0
        assert {s["tool"] for s in value["skipped"]} == (DESTRUCTIVE | WRITES) - {"delete_all"}  # named: executed
    with DestructiveService() as svc:
        value, _ = _probe(
            _cfg(
                tmp_path / "all",
                svc.url,
                extra="probes: {allow_destructive: true}",
                source_extra=", side_effects: allow_writes",
            )
        )
        assert value["skipped"] == [] and svc.count("PUT", "/items/1") > 0 and svc.count("GET", "/purge") > 0


def test_classification_rules():
    from mcp.types import ToolAnnotations

    from factory.tools.safety import destructive_name, mcp_destructive, openapi_destructive

    assert destructive_name("delete_all") and destructive_name("dropTable") and destructive_name("remove-user")
    assert not destructive_name("create_playlist") and not destructive_name("address_lookup")
    assert openapi_destructive("POST", {}, "create_playlist", key_acquisition=False)
    assert not openapi_destructive("POST", {"x-destructive": False}, "create_playlist", key_acquisition=False)
    assert not openapi_destructive("POST", {}, "get_key", key_acquisition=True)
    assert openapi_destructive("GET", {}, "wipe_cache", key_acquisition=False)
    assert not openapi_destructive("GET", {}, "list_flights", key_acquisition=False)
    assert mcp_destructive(ToolAnnotations(destructiveHint=True), "lookup")
    assert mcp_destructive(ToolAnnotations(readOnlyHint=False), "lookup")  # MCP default: destructive
    assert not mcp_destructive(ToolAnnotations(readOnlyHint=False, destructiveHint=False), "add_row")
    assert not mcp_destructive(ToolAnnotations(readOnlyHint=True), "remove_duplicates_view")
    assert mcp_destructive(None, "drop_table") and not mcp_destructive(None, "airport_coordinates")


def test_demo_creates_stay_usable_and_no_demo_tool_is_destructive():
    from factory.config import DemoConfig
    from tests.tools.test_demo_specs import load_demo_tools

    tools = load_demo_tools(DemoConfig())
    assert [t.name for t in tools if t.destructive] == []
    changing = {t.name for t in tools if t.state_changing}
    assert {"create_playlist", "add_track_to_playlist", "create_invoice"} <= changing
