"""Safe probing (issue 13, item 6): `side_effects: read_only | allow_writes` per source, MCP
annotations, and `factory plan` (a dry run that calls nothing)."""

from mcp.types import Tool, ToolAnnotations

from factory.cli import main
from factory.config import parse_config
from factory.plan import format_plan, plan_tools
from factory.tools.mcp import tool_to_spec
from factory.tools.safety import refusal
from factory.tools.spec import SourceRef
from tests.hostile.http_destructive import DestructiveService


def _cfg(tmp_path, source: str, extra: str = ""):
    text = f"name: t\ndata_dir: {tmp_path / 'data'}\n{extra}\ndomains:\n  - name: d\n    sources:\n      - {source}\n"
    return parse_config(text, source="f.yaml", project_dir=tmp_path)


def _mcp(name: str, **hints) -> object:
    tool = Tool(
        name=name,
        description=name,
        inputSchema={"type": "object", "properties": {}},
        annotations=ToolAnnotations(**hints) if hints else None,
    )
    return tool_to_spec(tool, domain="d", platform="mem", source=SourceRef(kind="mcp", locator="npx mem"))


def test_mcp_annotations_decide_under_read_only_and_allow_writes(tmp_path):
    read_only = _cfg(tmp_path, "{kind: mcp, platform: mem, command: [npx, mem]}")
    writes = _cfg(tmp_path, "{kind: mcp, platform: mem, command: [npx, mem], side_effects: allow_writes}")
    reader = _mcp("read_graph", readOnlyHint=True)
    creator = _mcp("create_entities", readOnlyHint=False, destructiveHint=False)
    wiper = _mcp("wipe_graph", readOnlyHint=False, destructiveHint=True)
    plain = _mcp("get_time")  # no annotations, no destructive word: a read
    assert refusal(reader, read_only) is None and refusal(plain, read_only) is None
    assert refusal(creator, read_only) == (
        "mem.create_entities (MCP) changes state and its source is side_effects: read_only: inventoried, never "
        "executed; set side_effects: allow_writes on the source to execute it"
    )
    assert refusal(creator, writes) is None
    assert "destructive tool mem.wipe_graph (MCP) not executed" in refusal(wiper, writes)
    assert refusal(wiper, read_only).endswith("(its source is also side_effects: read_only)")
    named = _cfg(tmp_path, "{kind: mcp, platform: mem, command: [npx, mem], allow_destructive_tools: [wipe_graph]}")
    assert refusal(wiper, named) is None  # named explicitly: executed


def test_demo_sources_default_to_allow_writes_others_to_read_only(tmp_path):
    cfg = _cfg(tmp_path, "{kind: openapi, platform: s, spec: 'demo://chinook-store'}")
    assert cfg.domain("d").sources[0].writes_allowed
    cfg = _cfg(tmp_path, "{kind: openapi, platform: s, spec: 'https://api.example.com/openapi.json'}")
    assert not cfg.domain("d").sources[0].writes_allowed
    cfg = _cfg(tmp_path, "{kind: openapi, platform: s, spec: 'demo://chinook-store', side_effects: read_only}")
    assert not cfg.domain("d").sources[0].writes_allowed


def test_plan_lists_probed_and_held_tools_with_value_kinds(tmp_path):
    from factory.tools.sources import load_domain_tools

    with DestructiveService() as svc:
        cfg = _cfg(tmp_path, f"{{kind: openapi, platform: store, spec: '{svc.url}/openapi.json'}}")
        plan = plan_tools(load_domain_tools(cfg.domain("d"), cfg), cfg)
        assert sum(svc.calls.values()) == 1  # the document only: GET /openapi.json
    probed = {e["tool"]: e for e in plan["probe"]}
    held = {e["tool"]: e["reason"] for e in plan["held"]}
    assert set(probed) == {"store.list_items", "store.search_items"}
    assert set(held) == {
        "store.delete_all", "store.replace_item", "store.create_item", "store.purge_cache", "store.add_note",
    }  # fmt: skip
    assert "side_effects: read_only" in held["store.add_note"]
    text = format_plan("d", plan, 3)
    assert text.splitlines()[0] == "domain d: 2 tool(s) would be probed (up to 3 calls each), 5 held back"
    assert "  probe store.list_items (GET): no required arguments" in text
    assert "  held  store.add_note (POST): store.add_note (POST) changes state" in text


def test_factory_plan_command_calls_no_tool(tmp_path, capsys):
    with DestructiveService() as svc:
        cfg = tmp_path / "factory.yaml"
        cfg.write_text(
            f"name: t\ndomains:\n  - name: shop\n    sources:\n"
            f"      - {{kind: openapi, platform: store, spec: '{svc.url}/openapi.json'}}\n"
        )
        rc = main(["--config", str(cfg), "plan"])
        calls = dict(svc.calls)
    out = capsys.readouterr().out
    assert rc == 0, out
    assert calls == {"GET /openapi.json": 1}
    assert "domain shop: 2 tool(s) would be probed" in out and "held  store.delete_all (DELETE)" in out
    assert "nothing was executed" in out
