"""Edges between tools of the npm reference MCP servers, from their recorded answers.

fixtures/npm_mcp_results.json holds tools/list and tools/call results recorded from
@modelcontextprotocol/server-memory and server-filesystem (2026.8.31).  The edges the issue expects:
read_graph / create_entities → open_nodes (an array input `names` filled from the records' `name`,
wrapped in a list) and list_directory → read_text_file (the listing's text parsed into entries whose
path is the listed directory joined with the name).
"""

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from factory.graph import plan as plans
from factory.ingest import _probe_row
from factory.llm.rules import edge_proposal
from factory.llm.schemas import EdgeProposalInput, ToolBrief
from factory.semtypes import ADMITTED_CHECKS, ValueTypes, check_binding, infer_types
from factory.synthesis.minimal import _bound_equal
from factory.tools.made_values import made_value, object_values
from factory.tools.mcp import interpret_result, tool_to_spec
from factory.tools.observed import (
    INFERRED,
    observe_schemas,
    parse_text,
    single_text_field,
    text_field_value,
    with_listing_paths,
)
from factory.tools.safety import call_writes_first, creates_data, empty_reads_to_repeat, writes_first
from factory.tools.spec import SourceRef, ToolSpec

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "npm_mcp_results.json").read_text())
FS = "/tmp/rec-fs"  # the folder the filesystem server was started on when the answers were recorded


def _specs(server: str) -> dict[str, ToolSpec]:
    ref = SourceRef(kind="mcp", locator=f"recorded {server}")
    out = {}
    for name, t in FIXTURE["servers"][server]["tools"].items():
        ann = t.get("annotations") or {}
        annotations = SimpleNamespace(
            read_only_hint=ann.get("readOnlyHint"), destructive_hint=ann.get("destructiveHint")
        )
        tool = SimpleNamespace(name=name, description=t["description"], title=None, input_schema=t["inputSchema"],
                               output_schema=t["outputSchema"], annotations=annotations if ann else None)  # fmt: skip
        out[name] = tool_to_spec(tool, domain="d", platform=server.removeprefix("npm-"), source=ref)
    return out


def _calls(server: str, tool: str) -> list[dict[str, Any]]:
    return [c for c in FIXTURE["servers"][server]["calls"] if c["tool"] == tool]


def _result(call: dict[str, Any]) -> Any:
    r = call["result"]
    return SimpleNamespace(content=[SimpleNamespace(**x) for x in r["content"]], is_error=r["isError"],
                           structured_content=r["structuredContent"])  # fmt: skip


def _body(server: str, tool: str, index: int = 0) -> Any:
    call = _calls(server, tool)[index]
    outcome, body, detail = interpret_result(_result(call))
    assert outcome is None, detail
    return with_listing_paths(body, call["args"])


# --------------------------------------------------------------------------- reading the filesystem's text


def test_listing_texts_are_records() -> None:
    assert _body("npm-filesystem", "list_directory") == [
        {"type": "file", "name": "a.txt", "path": f"{FS}/a.txt"},
        {"type": "directory", "name": "sub", "path": f"{FS}/sub"},
    ]
    sized = _body("npm-filesystem", "list_directory_with_sizes")  # the "Total: …" trailer is no entry
    assert sized == [
        {"type": "file", "name": "a.txt", "size": "12 B", "path": f"{FS}/a.txt"},
        {"type": "directory", "name": "sub", "path": f"{FS}/sub"},
    ]
    tree = _body("npm-filesystem", "directory_tree")  # JSON text: top-level entries get their path
    assert [(e["name"], e["path"]) for e in tree] == [("a.txt", f"{FS}/a.txt"), ("sub", f"{FS}/sub")]
    assert _body("npm-filesystem", "list_allowed_directories") == [{"path": FS}]
    assert _body("npm-filesystem", "search_files") == [
        {"path": f"{FS}/a.txt"}, {"path": f"{FS}/sub"}, {"path": f"{FS}/sub/b.md"}
    ]  # fmt: skip
    info = _body("npm-filesystem", "get_file_info")
    assert info["size"] == 12 and info["isFile"] is True


def test_plain_text_stays_text() -> None:
    assert _body("npm-filesystem", "read_text_file") == {"content": "hello world\n"}
    assert _body("npm-filesystem", "search_files", 1) == []  # "No matches found": nothing found, not a record
    assert parse_text("[FILE] a.txt\nsome prose") is None  # a listing is listing lines only
    assert parse_text("/tmp/a.txt and more words") is None


def test_single_text_field_schema_is_not_a_declared_record() -> None:
    specs = _specs("npm-filesystem")
    listing = specs["list_directory"]
    assert single_text_field(listing.output_schema) == "content"
    assert listing.output_fields == {} and listing.records_path is None  # fields come from the parsed text
    graph = _specs("npm-memory")["read_graph"]
    assert single_text_field(graph.output_schema) is None and "name" in graph.output_fields
    assert text_field_value({"content": 3}) == {"content": 3}
    assert text_field_value({"a": "[FILE] x", "b": "y"}) == {"a": "[FILE] x", "b": "y"}


def test_listing_paths_need_one_directory_argument() -> None:
    entries = [{"type": "file", "name": "a.txt"}]
    assert with_listing_paths(entries, {"path": "/d/"}) == [{"type": "file", "name": "a.txt", "path": "/d/a.txt"}]
    assert with_listing_paths(entries, {"path": "C:\\d"})[0]["path"] == "C:\\d\\a.txt"
    assert with_listing_paths(entries, {}) == entries
    assert with_listing_paths(entries, {"path": "/a", "dir": "/b"}) == entries  # which one was listed?
    assert with_listing_paths([{"name": "a.txt"}], {"path": "/d"}) == [{"name": "a.txt"}]  # not a listing entry


def _fs_rows() -> tuple[dict[str, ToolSpec], list[dict[str, Any]]]:
    specs = _specs("npm-filesystem")
    rows = []
    for c in FIXTURE["servers"]["npm-filesystem"]["calls"]:
        outcome, body, detail = interpret_result(_result(c))
        body = with_listing_paths(body, c["args"])
        records = body if isinstance(body, list) else [body] if body else []
        res = SimpleNamespace(
            records=records,
            args=c["args"],
            outcome=SimpleNamespace(
                value="semantic_success" if outcome is None else outcome.value, group=""
            ),  # fmt: skip
            status_code=None,
            detail=detail,
            record_count=len(records),
            total_count=None,
            attempts=1,
            elapsed_ms=1.0,
            call_digest="x",
            key_like_redacted=0,
            cardinality=lambda f, r=records: len(r),
        )
        rows.append(_probe_row(specs[c["tool"]], res, 1, 0))  # type: ignore[arg-type]
    return specs, rows


def test_list_directory_feeds_read_text_file_by_path() -> None:
    specs, rows = _fs_rows()
    observed = observe_schemas(specs.values(), rows)
    assert observed["list_directory"]["output_schema_source"] == INFERRED
    assert observed["list_directory"]["fields"] == {"name": "string", "path": "string", "type": "string"}
    assert observed["read_text_file"]["fields"] == {"content": "string"}
    from factory.tools.observed import with_observed

    lister = with_observed(specs["list_directory"], observed["list_directory"])
    reader = specs["read_text_file"]
    brief_src = ToolBrief.from_spec(lister, {"path": [f"{FS}/a.txt"], "name": ["a.txt"]})
    proposal = edge_proposal(EdgeProposalInput(source=brief_src, target=ToolBrief.from_spec(reader)))
    assert [(b.target_param, b.source_field, b.transform) for b in proposal.bindings] == [("path", "path", None)]
    tids = {t.tool_id: t for t in (lister, reader)}
    inf = infer_types(tids, {"d": {"rows": rows}})
    types = ValueTypes({tid: inf.tool_types(tid) for tid in inf.entities}, inf.parents)
    assert types.field_type(lister.tool_id, "path") == types.param_type(reader.tool_id, "path") == "path"
    check, why = check_binding(types, lister.tool_id, "path", reader.tool_id, "path", [f"{FS}/a.txt"], [])
    assert check in ADMITTED_CHECKS, why


# --------------------------------------------------------------------------- read_graph → open_nodes


def test_read_graph_name_fills_open_nodes_names_wrapped() -> None:
    specs = _specs("npm-memory")
    graph, nodes = specs["read_graph"], specs["open_nodes"]
    src = ToolBrief.from_spec(graph, {"name": ["example-name-1"]})
    tgt = ToolBrief.from_spec(nodes)
    assert tgt.param("names") is not None and tgt.param("names").items_type == "string"  # type: ignore[union-attr]
    proposal = edge_proposal(EdgeProposalInput(source=src, target=tgt))
    assert [(b.target_param, b.source_field, b.transform) for b in proposal.bindings] == [("names", "name", "wrap")]
    kept, dropped = plans.validate_bindings(graph, nodes, [b.model_dump() for b in proposal.bindings])
    assert kept == [{"target_param": "names", "source_field": "name", "transform": "wrap"}] and not dropped
    plan = plans.compile_plan(nodes, kept, {})
    record = _body("npm-memory", "read_graph", 1)["entities"][0]
    args = plans.fill_args(plan, record)
    assert args == {"names": ["example-name-1"]} == _calls("npm-memory", "open_nodes")[0]["args"]
    # the recorded open_nodes answer is the entity: the edge works on the real server
    assert _body("npm-memory", "open_nodes")["entities"][0]["name"] == "example-name-1"


def test_no_wrap_for_other_inputs() -> None:
    specs = _specs("npm-memory")
    src = ToolBrief.from_spec(specs["read_graph"], {"name": ["example-name-1"]})
    proposal = edge_proposal(EdgeProposalInput(source=src, target=ToolBrief.from_spec(specs["search_nodes"])))
    assert all(b.transform != "wrap" for b in proposal.bindings)  # query: string is no array
    # an array of objects (create_entities.entities) takes no scalar field
    proposal = edge_proposal(EdgeProposalInput(source=src, target=ToolBrief.from_spec(specs["create_entities"])))
    assert not proposal.bindings


def test_entities_of_the_records_path_type_names() -> None:
    specs = _specs("npm-memory")
    tids = {s.tool_id: s for s in specs.values()}
    inf = infer_types(tids, {})
    types = ValueTypes({tid: inf.tool_types(tid) for tid in inf.entities}, inf.parents)
    graph, nodes = specs["read_graph"].tool_id, specs["open_nodes"].tool_id
    assert types.field_type(graph, "name") == "entity.name"  # records under `entities`, not graph.name
    assert types.param_type(nodes, "names") == "entity.name"  # an array input typed by its element
    assert types.field_type(specs["create_entities"].tool_id, "name") == "entity.name"
    check, why = check_binding(types, graph, "name", nodes, "names", ["example-name-1"], [])
    assert check == "equal", why


def test_wrap_transform_and_replay_equality() -> None:
    assert plans.apply_transform("a", "wrap") == ["a"]
    assert plans.apply_transform(["a", "b"], "wrap") == ["a", "b"]
    assert "wrap" in plans.TRANSFORMS
    assert _bound_equal("example-name-1", ["example-name-1"])
    assert not _bound_equal("example-name-1", ["other"])
    assert not _bound_equal("a", ["a", "b"])


# --------------------------------------------------------------------------- creating before reading


def test_made_up_entities_fit_create_entities() -> None:
    schema = _specs("npm-memory")["create_entities"].params["entities"]
    assert object_values(schema, "entities") == [_calls("npm-memory", "create_entities")[0]["args"]["entities"]]
    assert object_values({"type": "string"}, "q") == []  # scalars are argument discovery's
    assert object_values({"type": "array", "items": {"type": "string"}}, "names") == []
    assert made_value({"type": "object", "properties": {"k": {"type": "object"}}, "required": ["k"]}, "x") is None
    assert made_value({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}}, "x") == {"n": 3}


def test_creating_tools_are_called_first_and_one_at_a_time() -> None:
    specs = _specs("npm-memory")
    assert creates_data(specs["create_entities"]) and creates_data(specs["add_observations"])
    assert not creates_data(specs["read_graph"]) and not creates_data(specs["delete_entities"])
    order = [specs["read_graph"], specs["create_entities"], specs["open_nodes"], specs["create_relations"]]
    assert writes_first(order) == [[1, 3], [0, 2]]
    log: list[list[str]] = []

    class Ex:
        async def call_many(self, calls: list[tuple[ToolSpec, dict[str, Any]]], episodes: bool = False) -> list[str]:
            assert episodes
            log.append([t.name for t, _ in calls])
            return [f"res:{t.name}" for t, _ in calls]

    results = asyncio.run(call_writes_first(Ex(), [(t, {}) for t in order]))
    assert results == ["res:read_graph", "res:create_entities", "res:open_nodes", "res:create_relations"]
    assert log == [["create_entities"], ["create_relations"], ["read_graph", "open_nodes"]]


def test_empty_reads_are_repeated_after_data_was_created() -> None:
    specs = _specs("npm-memory")
    rows = [
        {"tool": "read_graph", "round": 1, "args": {}, "outcome": "generic_only_success", "record_count": 0},
        {"tool": "search_nodes", "round": 1, "args": {"query": "x"}, "outcome": "semantic_success", "record_count": 2},
        {"tool": "create_entities", "round": 2, "args": {}, "outcome": "semantic_success", "record_count": 1},
    ]
    again = empty_reads_to_repeat(rows, specs, 2)
    assert [(t.name, a) for t, a in again] == [("read_graph", {})]
    assert empty_reads_to_repeat(rows, specs, 1) == []  # nothing was created in round 1
    failed = [*rows[:2], {**rows[2], "outcome": "schema_mismatch", "record_count": 0}]
    assert empty_reads_to_repeat(failed, specs, 2) == []
    repeated = [*rows, {**rows[0], "round": 2, "repeat_of_round": 2}]
    assert empty_reads_to_repeat(repeated, specs, 3) == []  # a read is repeated once


@pytest.mark.parametrize("tool", ["delete_entities", "write_file"])
def test_destructive_tools_never_count_as_creating(tool: str) -> None:
    specs = {**_specs("npm-memory"), **_specs("npm-filesystem")}
    assert specs[tool].destructive and not creates_data(specs[tool])


def test_unhinted_creating_tools_are_held_back_from_read_only_sources() -> None:
    from factory.config import load_config
    from factory.tools.safety import refusal

    cfg = load_config()
    hinted = _specs("npm-memory")["create_entities"]
    assert hinted.state_changing  # readOnlyHint: false
    memory = hinted.model_copy(update={"state_changing": False})  # the same tool from a server without hints
    assert creates_data(memory)
    src = {"kind": "mcp", "platform": "memory", "command": ["mcp-server-memory"]}
    base = cfg.model_dump(mode="json")
    for side_effects, held in (("read_only", True), ("allow_writes", False)):
        domains = [{"name": "d", "language": "en", "sources": [{**src, "side_effects": side_effects}]}]
        c = type(cfg).model_validate({**base, "domains": domains})
        why = refusal(memory, c)
        assert (why is not None) is held, why
        if held:
            assert "side_effects: read_only" in str(why)
    assert refusal(_specs("npm-memory")["read_graph"], c) is None


def test_memory_slots_are_typed_from_their_records_and_descriptions() -> None:
    """Typed enough for the lexicon gate: the kinds and names of entities and relations are typed,
    free texts (observations, messages) and object inputs stay unknown."""
    specs = _specs("npm-memory")
    inf = infer_types({s.tool_id: s for s in specs.values()}, {})
    types = ValueTypes({tid: inf.tool_types(tid) for tid in inf.entities}, inf.parents)

    def t(tool: str, kind: str, name: str) -> str | None:
        tid = specs[tool].tool_id
        return types.field_type(tid, name) if kind == "field" else types.param_type(tid, name)

    assert t("read_graph", "field", "entityType") == "entity.type"
    assert t("create_relations", "field", "relationType") == "relation.type"
    assert t("create_relations", "field", "from") == t("create_relations", "field", "to") == "entity.name"
    assert t("add_observations", "field", "entityName") == "entity.name"  # not observation.entity_name
    assert t("read_graph", "field", "observations") == "unknown"
    assert t("create_entities", "param", "entities") == "unknown"
    slots = [v for tid in inf.entities for k in ("params", "fields") for v in inf.tool_types(tid).get(k, {}).values()]
    unknown = sum(1 for v in slots if (v["type"] if isinstance(v, dict) else v) == "unknown")
    assert unknown / len(slots) <= 0.5  # lexicon.max_unknown_share's default
