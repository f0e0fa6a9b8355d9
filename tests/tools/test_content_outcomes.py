"""Outcomes by content: unflagged error texts and HTTP 200 error envelopes, by their whole shape.

The texts of `REAL` were recorded from real third-party MCP servers
(fixtures/mcp_real_results.json); the others are written in the shapes services use.
"""

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from factory.config import ExecutorConfig
from factory.tools.executor import ToolExecutor
from factory.tools.mcp import interpret_result
from factory.tools.outcomes import Outcome, classify_error, error_envelope, error_text_rule
from factory.tools.spec import SourceRef, ToolSpec

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "mcp_real_results.json").read_text())


def _result(text: str, is_error: bool = False, structured: Any = None) -> Any:
    return SimpleNamespace(content=[SimpleNamespace(type="text", text=text)], is_error=is_error,
                           structured_content=structured)  # fmt: skip


def _recorded(server: str, tool: str, **args: Any) -> Any:
    for c in FIXTURE["servers"][server]["calls"]:
        if c["tool"] == tool and all(c["args"].get(k) == v for k, v in args.items()):
            r = c["result"]
            content = [SimpleNamespace(**x) for x in r["content"]]
            return SimpleNamespace(content=content, is_error=r["isError"], structured_content=r["structuredContent"])
    raise KeyError(f"{server}.{tool} {args} is not recorded")


# ------------------------------------------------------------------ real servers, isError false


@pytest.mark.parametrize(
    ("server", "tool", "args", "outcome", "rule"),
    [
        ("sqlite", "read_query", {"query": "select * from nope"}, Outcome.SCHEMA_MISMATCH, "database_error"),
        ("sqlite", "read_query", {"query": "delete from users"}, Outcome.SCHEMA_MISMATCH, "not_allowed"),
        ("duckdb", "query", {"query": "select * from nope"}, Outcome.SCHEMA_MISMATCH, "database_error"),
    ],
)
def test_unflagged_error_texts_of_real_servers(server: str, tool: str, args: dict, outcome: Outcome, rule: str) -> None:
    res = _recorded(server, tool, **args)
    assert res.is_error is False  # the server did not flag it
    got, body, detail = interpret_result(res)
    assert got is outcome
    assert body is None
    assert detail.startswith(f"[content rule {rule}] ")
    assert res.content[0].text.strip()[:40] in detail


def test_real_data_that_mentions_errors_is_data() -> None:
    rows = interpret_result(_recorded("sqlite", "read_query", query="select * from users"))
    assert rows[0] is None and rows[1][0] == {"id": 1, "name": "ann", "error_rate": 0.1}
    listing = interpret_result(_recorded("filesystem", "list_directory"))  # {content: "[FILE] error.log ..."}
    assert listing[0] is None and {"type": "file", "name": "error.log"} in listing[1]
    found = interpret_result(_recorded("filesystem", "search_files"))
    assert found[0] is None and found[1] == [{"path": "/tmp/obs/data/fs/error.log"}]
    empty = interpret_result(_recorded("sqlite", "describe_table", table_name="nope"))
    assert empty == (None, [], "")  # an empty answer is not an error


@pytest.mark.parametrize("text", ["No matches found", "No results.", "Nothing found", "no items were found"])
def test_a_text_saying_nothing_was_found_is_an_empty_answer(text: str) -> None:
    """server-filesystem's search_files answers {content: "No matches found"}: 0 records, never a record
    holding that sentence (it would become an answer); as plain text alike."""
    assert interpret_result(_result(text, structured={"content": text})) == (None, [], "")
    assert interpret_result(_result(text)) == (None, [], "")
    for data in ("No matches found in 3 of 10 folders; see /srv/log", "Nothing", "[FILE] no results found.txt"):
        assert interpret_result(_result(data))[1] not in ([], None), data


# ------------------------------------------------------------------ one class at a time, exact texts


@pytest.mark.parametrize(
    ("text", "outcome", "rule"),
    [
        ("Error: rate limit exceeded, retry in 30 seconds", Outcome.RATE_LIMIT, "rate_limit"),
        ("Error: request timed out after 10s", Outcome.TIMEOUT, "timeout"),
        ("Error: permission denied for relation users", Outcome.AUTH_ERROR, "auth"),
        ("Error: Invalid API key provided", Outcome.AUTH_ERROR, "auth"),
        ("Error: field required: repo_path", Outcome.MISSING_FIELD, "missing_argument"),
        ("Database error: no such table: nope", Outcome.SCHEMA_MISMATCH, "database_error"),
        ("Error: Only SELECT queries are allowed for read_query", Outcome.SCHEMA_MISMATCH, "not_allowed"),
        ("Entity with name Nobody not found", Outcome.SCHEMA_MISMATCH, "not_found"),
        ("ENOENT: no such file or directory, open '/data/missing.txt'", Outcome.SCHEMA_MISMATCH, "no_such_file"),
        ("EISDIR: illegal operation on a directory, read", Outcome.SCHEMA_MISMATCH, "wrong_path_kind"),
        ("ENOTDIR: not a directory, scandir '/srv/notes/a.txt'", Outcome.SCHEMA_MISMATCH, "wrong_path_kind"),
        ("Invalid timezone: 'No time zone found with key users'", Outcome.SCHEMA_MISMATCH, "invalid_argument"),
        ("Error: Invalid branch type: VARCHAR", Outcome.SCHEMA_MISMATCH, "invalid_argument"),
        ("Error: service unavailable, try again later", Outcome.ENDPOINT_UNAVAILABLE, "unavailable"),
        ("Database error: database is locked", Outcome.SERVER_ERROR, "database_unavailable"),
        (
            'Traceback (most recent call last):\n  File "s.py", line 3, in run\nZeroDivisionError: division by zero',
            Outcome.SERVER_ERROR,
            "server_error",
        ),
        ("Error: the flux capacitor is sad", Outcome.UNCATEGORIZED, "unmatched"),
        ("Error: no such table: orders\nQuery: select * from orders", Outcome.SCHEMA_MISMATCH, "database_error"),
        ("Failed to read /srv/repo/HEAD: no such file or directory", Outcome.SCHEMA_MISMATCH, "no_such_file"),
    ],
)
def test_each_class_from_an_unflagged_text(text: str, outcome: Outcome, rule: str) -> None:
    assert error_text_rule(text) is not None, text
    got, body, detail = interpret_result(_result(text))
    assert (got, body) == (outcome, None)
    assert detail == f"[content rule {rule}] {text}"
    assert classify_error(text) == (outcome, rule)


@pytest.mark.parametrize(
    "text",
    [
        "[FILE] a.txt\n[FILE] error.log\n[DIR] sub",  # a listing naming error.log
        "/var/log/app/error.log",  # a path
        "error.log",
        "Error rates by month:\nJan 0.1\nFeb 0.2",  # a report about errors
        "Errors: 0\nWarnings: 2",
        "The page was not found in 3 of 10 crawls; retried them all.\nDone: 10 pages",  # two lines of prose
        "name: not found handler\nkind: route",  # key: value data
        "Failed jobs: 3\nSucceeded jobs: 10",  # a record counting failures
        "plain words",
    ],
)
def test_text_that_merely_contains_error_words_is_data(text: str) -> None:
    assert error_text_rule(text) in (None, "failure_lead")  # a weak lead yields to the data the text holds
    got, body, _ = interpret_result(_result(text))
    assert got is None and body is not None


# ------------------------------------------------------------------ envelopes (MCP and HTTP 200)

ENVELOPES = [
    ({"error": "Invalid API key"}, Outcome.AUTH_ERROR, "error_field/auth"),
    ({"error": {"code": 429, "message": "Too many requests"}}, Outcome.RATE_LIMIT, "error_field/rate_limit"),
    ({"errors": [{"message": "Argument 'id' is required"}], "data": None}, Outcome.MISSING_FIELD,
     "errors_list/missing_argument"),
    ({"success": False, "message": "Station QQQ does not exist"}, Outcome.SCHEMA_MISMATCH, "success_false/not_found"),
    ({"ok": False, "error": "ratelimited"}, Outcome.RATE_LIMIT, "error_field/rate_limit"),
    ({"status": "error", "message": "Internal server error"}, Outcome.SERVER_ERROR, "status_error/server_error"),
    ({"status": "fail", "code": 503}, Outcome.SERVER_ERROR, "status_error/status_code"),
    ({"status": "error", "code": 404}, Outcome.SCHEMA_MISMATCH, "status_error/status_code"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "outcome", "rule"), ENVELOPES)
def test_error_envelopes(body: dict, outcome: Outcome, rule: str) -> None:
    got = error_envelope(body)
    assert got is not None and got[:2] == (outcome, rule)
    mcp = interpret_result(_result(json.dumps(body)))
    assert mcp[0] is outcome and mcp[2].startswith(f"[content rule {rule}] ")


@pytest.mark.parametrize(
    "body",
    [
        {"id": 1, "name": "ann", "error_rate": 0.1},  # a record with an error-ish field
        {"id": 7, "status": "error", "job": "nightly"},  # a job record whose status is error: other keys
        {"error": None, "data": {"x": 1}},  # an envelope that did not fail
        {"errors": [], "data": {"x": 1}},
        {"errors": [{"message": "partial"}], "data": {"x": 1}},  # data came back
        {"success": True, "message": "created"},
        {"status": "ok"},
        [{"error": "x"}],  # a list of records
    ],
)
def test_bodies_that_are_not_envelopes(body: Any) -> None:
    assert error_envelope(body) is None


HTTP_TOOL = ToolSpec(
    domain="d",
    platform="svc",
    name="get_thing",
    description="get a thing",
    input_schema={"type": "object", "properties": {"id": {"type": "string"}}, "required": []},
    param_locations={"id": "query"},
    source=SourceRef(kind="openapi", locator="spec.json", base_url="http://svc.test"),
)


def _http_call(body: Any) -> Any:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda req: httpx.Response(200, json=body)))

    async def go() -> Any:
        async with ToolExecutor([HTTP_TOOL], ExecutorConfig(max_retries=0), http_client=client) as ex:
            return await ex.call("get_thing", {"id": "x"})

    try:
        return asyncio.run(go())
    finally:
        asyncio.run(client.aclose())


@pytest.mark.parametrize(("body", "outcome", "rule"), ENVELOPES[:3] + ENVELOPES[5:6])
def test_http_200_error_envelopes_through_the_executor(body: dict, outcome: Outcome, rule: str) -> None:
    res = _http_call(body)
    assert res.status_code == 200 and res.outcome is outcome
    assert res.detail.startswith(f"HTTP 200: [content rule {rule}] ")


def test_http_200_record_with_error_words_is_a_success() -> None:
    res = _http_call({"id": 7, "status": "error", "job": "nightly", "error_rate": 0.5})
    assert res.outcome is Outcome.SEMANTIC_SUCCESS and res.records == [
        {"id": 7, "status": "error", "job": "nightly", "error_rate": 0.5}
    ]
