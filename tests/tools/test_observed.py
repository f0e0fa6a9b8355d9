"""Observed output schemas: reading text answers, inferring fields, and the stages seeing them.

Real answers come from fixtures/mcp_real_results.json (recorded from mcp-server-sqlite,
mcp-server-duckdb, mcp-server-git and @modelcontextprotocol/server-memory).
"""

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from factory.config import ExecutorConfig
from factory.graph import plan as plans
from factory.ingest import _probe_row
from factory.tools import transports
from factory.tools.executor import ToolExecutor
from factory.tools.mcp import interpret_result, tool_to_spec
from factory.tools.observed import (
    DECLARED,
    INFERRED,
    NONE,
    observe_schemas,
    parse_text,
    primary_records_path,
    schema_source_map,
    with_observed,
)
from factory.tools.registry import ToolRegistry
from factory.tools.spec import SourceRef, ToolSpec
from factory.tools.transports import Exchange, Transport

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "mcp_real_results.json").read_text())


# ------------------------------------------------------------------ reading text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("[{'name': 'users'}, {'name': 'orders'}]", [{"name": "users"}, {"name": "orders"}]),  # Python repr
        ("[('Oslo', 700000), ('Bergen', 285000)]", [{"col_0": "Oslo", "col_1": 700000},
                                                     {"col_0": "Bergen", "col_1": 285000}]),  # unnamed rows
        ("[('cities',)]", [{"col_0": "cities"}]),
        ("[[1, 'a'], [2, 'b']]", [{"col_0": 1, "col_1": "a"}, {"col_0": 2, "col_1": "b"}]),  # JSON rows
        ("[[1, 2, 3]]", [{"col_0": 1, "col_1": 2, "col_2": 3}]),
        ("[1, 2, 3]", [1, 2, 3]),  # a list of scalars stays one
        ("Found these:\n```json\n[{\"id\": 3}]\n```\nDone.", [{"id": 3}]),  # fenced JSON in prose
        ("```\n{'k': (1, 2)}\n```", {"k": [1, 2]}),
        ("| name | pop |\n|------|----:|\n| Oslo | 700000 |\n| Bergen | 285000 |",
         [{"name": "Oslo", "pop": 700000}, {"name": "Bergen", "pop": 285000}]),
        ("size: 6\nisDirectory: false\npermissions: 644", {"size": 6, "isDirectory": False, "permissions": 644}),
        ("Commit history:\nCommit: ab12\nAuthor: t\n\nCommit: cd34\nAuthor: u\n",
         [{"Commit": "ab12", "Author": "t"}, {"Commit": "cd34", "Author": "u"}]),
        ("Commit: ab12\nMessage: first line\n  second line", {"Commit": "ab12", "Message": "first line\nsecond line"}),
        ("plain words", None),
        ("Repository status:\nOn branch master\nnothing to commit", None),  # prose, not key: value
        ("note: one line only", None),  # a single key is a sentence, not a record
        ("__import__('os').system('true')", None),  # never evaluated
        ("", None),
    ],
)  # fmt: skip
def test_parse_text(text: str, value: Any) -> None:
    assert parse_text(text) == value


def test_real_git_log_is_a_record() -> None:
    (call,) = [c for c in FIXTURE["servers"]["git"]["calls"] if c["tool"] == "git_log"]
    body = parse_text(call["result"]["content"][0]["text"])
    assert set(body) == {"Commit", "Author", "Date", "Message"} and len(body["Commit"]) == 40


def test_primary_records_path_of_a_graph() -> None:
    schema = FIXTURE["servers"]["memory"]["tools"]["read_graph"]["outputSchema"]
    assert primary_records_path(schema) == "entities"  # entities and relations: the first declared
    assert primary_records_path({"type": "object", "properties": {"n": {"type": "integer"}}}) is None


# ------------------------------------------------------------------ real tools through the executor


class Replay(Transport):
    """An MCP transport that answers each call with the recorded real result, read as the real one reads it."""

    kind = "mcp"
    server = "sqlite"

    async def prepare(self, tool: ToolSpec, args: dict[str, Any]) -> Any:
        return args

    async def send(self, tool: ToolSpec, prepared: Any) -> Exchange:
        for c in FIXTURE["servers"][Replay.server]["calls"]:
            if c["tool"] == tool.name and c["args"] == prepared:
                r = c["result"]
                res = SimpleNamespace(content=[SimpleNamespace(**x) for x in r["content"]], is_error=r["isError"],
                                      structured_content=r["structuredContent"])  # fmt: skip
                outcome, body, detail = interpret_result(res)
                return Exchange(outcome, body=body, detail=detail)
        raise AssertionError(f"{tool.name} {prepared} not recorded")


def _specs(server: str) -> list[ToolSpec]:
    ref = SourceRef(kind="mcp", locator=f"recorded {server}")
    return [
        tool_to_spec(
            SimpleNamespace(
                name=name,
                description=f"{name} of {server}",
                title=None,
                input_schema=t["inputSchema"],
                output_schema=t["outputSchema"],
                annotations=None,
            ),  # fmt: skip
            domain="d",
            platform=server,
            source=ref,
        )
        for name, t in FIXTURE["servers"][server]["tools"].items()
    ]


def _probe_rows(server: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[ToolSpec], list[dict[str, Any]]]:
    monkeypatch.setitem(transports.TRANSPORTS, "mcp", Replay)
    Replay.server = server
    specs = _specs(server)
    by_name = {s.name: s for s in specs}
    calls = [(by_name[c["tool"]], c["args"]) for c in FIXTURE["servers"][server]["calls"] if c["tool"] in by_name]

    async def go() -> list[Any]:
        async with ToolExecutor(specs, ExecutorConfig(max_retries=0)) as ex:
            return await ex.call_many(calls)

    results = asyncio.run(go())
    return specs, [_probe_row(t, r, 1, 0) for (t, _), r in zip(calls, results, strict=True)]


def test_sqlite_fields_are_inferred_from_probe_results(monkeypatch: pytest.MonkeyPatch) -> None:
    specs, rows = _probe_rows("sqlite", monkeypatch)
    assert all(not s.output_fields for s in specs)  # mcp-server-sqlite declares no output schema
    observed = observe_schemas(specs, rows)
    assert observed["list_tables"]["output_schema_source"] == INFERRED
    assert observed["list_tables"]["fields"] == {"name": "string"}
    assert observed["describe_table"]["fields"] == {
        "cid": "integer", "dflt_value": "string", "name": "string", "notnull": "integer", "pk": "integer",
        "type": "string",
    }  # fmt: skip
    read = observed["read_query"]["fields"]
    assert read["error_rate"] == "number" and read["id"] == "integer" and read["name"] == "string"
    # the failures (Database error / Only SELECT, isError false) did not feed the inference
    assert not any("Database" in f or "Error" in f for f in read)


def test_inferred_fields_make_list_tables_a_source_of_describe_table(monkeypatch: pytest.MonkeyPatch) -> None:
    specs, rows = _probe_rows("sqlite", monkeypatch)
    inventory = {"d": {"domain": "d", "tools": [s.model_dump(mode="json") for s in specs]}}
    probes = {"d": {"rows": rows, "observed_schemas": observe_schemas(specs, rows)}}
    bare = ToolRegistry.from_inventories(inventory)
    seen = ToolRegistry.from_inventories(inventory, probes)
    lt, dt = seen.platform_tool("sqlite", "list_tables"), seen.platform_tool("sqlite", "describe_table")
    assert not bare.platform_tool("sqlite", "list_tables").output_fields
    assert set(lt.output_fields) == {"name"} and "observed" in lt.output_fields["name"].description
    kept, dropped = plans.validate_bindings(lt, dt, [{"target_param": "table_name", "source_field": "name"}])
    assert kept and not dropped
    assert schema_source_map(seen.specs(), probes)["d/sqlite/list_tables"] == INFERRED
    assert lt.records_path is None and lt.output_schema == {}  # the executor reads records as before


def test_declared_schemas_win_and_text_only_tools_stay_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    specs, rows = _probe_rows("memory", monkeypatch)
    graph = next(s for s in specs if s.name == "read_graph")
    assert graph.records_path == "entities" and {"name", "entityType"} <= set(graph.output_fields)
    observed = observe_schemas(specs, rows)
    assert observed["read_graph"]["output_schema_source"] == DECLARED
    assert with_observed(graph, {"output_schema_source": INFERRED, "record_schema": {}}) is graph
    names = next(s for s in specs if s.name == "open_nodes")
    kept, _ = plans.validate_bindings(graph, names, [{"target_param": "names", "source_field": "name"}])
    assert kept  # read_graph → open_nodes can be proposed
    git_specs, git_rows = _probe_rows("git", monkeypatch)
    git = observe_schemas(git_specs, git_rows)
    assert git["git_log"]["output_schema_source"] == INFERRED
    assert set(git["git_log"]["fields"]) == {"Author", "Commit", "Date", "Message"}
    assert git["git_log"]["fields"]["Date"] == "string"
    assert git["git_status"]["output_schema_source"] == NONE  # prose: no structure to bind from


def test_value_types_see_inferred_fields_and_admit_list_tables_to_describe_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from factory.config import load_config
    from factory.lexicon import build_lexicon
    from factory.semtypes import ADMITTED_CHECKS, ValueTypes, check_binding
    from factory.tools.observed import observed_metadata

    specs, rows = _probe_rows("sqlite", monkeypatch)
    observed = observe_schemas(specs, rows)
    inventory = {"d": {"domain": "d", "fingerprint": "f", "tools": [s.model_dump(mode="json") for s in specs]}}
    probes = {"d": {"rows": rows, "observed_schemas": observed}}
    value, meta = build_lexicon("d", inventory, probes, load_config())
    assert value["output_schema_sources"]["d/sqlite/list_tables"] == INFERRED
    assert meta["inferred_output_fields"] >= 7  # list_tables.name, describe_table's six fields, ...
    types = ValueTypes.from_lexicons({"d": value})
    assert types.field_type("d/sqlite/list_tables", "name") == types.param_type("d/sqlite/describe_table", "table_name")
    check, why = check_binding(types, "d/sqlite/list_tables", "name", "d/sqlite/describe_table", "table_name",
                               ["users", "orders"], ["users"])  # fmt: skip
    assert check in ADMITTED_CHECKS, why
    shown = observed_metadata(observed)
    assert shown["output_schema_sources"] == {DECLARED: 0, INFERRED: 3, NONE: 0}
    assert "list_tables" in str(shown["inferred_output_schemas"])
