"""ToolExecutor against a real local HTTP service with injected faults."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from factory.config import ExecutorConfig
from factory.tools.executor import ToolExecutor, run_calls
from factory.tools.openapi import fetch_spec, load_openapi
from factory.tools.outcomes import CallResult, Outcome
from factory.tools.spec import ToolSpec
from tests.conftest import free_port
from tests.tools.conftest import FLIGHTS, SECRET_KEY, LiveServer

CFG = ExecutorConfig(timeout_s=0.5, max_retries=2, backoff_base_s=0.01, max_backoff_s=2.0, max_records_kept=3)


@pytest.fixture(scope="module")
def tools(fault_server: LiveServer) -> dict[str, ToolSpec]:
    url = f"{fault_server.url}/openapi.json"
    specs = load_openapi(fetch_spec(url), domain="test", platform="lab", spec_locator=url, base_url=fault_server.url)
    return {t.name: t for t in specs}


def run(tools: dict[str, ToolSpec], calls: list[tuple[Any, dict[str, Any]]], cfg: ExecutorConfig = CFG,
        api_keys: dict[str, str] | None = None) -> list[CallResult]:  # fmt: skip
    return run_calls(list(tools.values()), calls, cfg, api_keys)


def one(tools: dict[str, ToolSpec], name: str, args: dict[str, Any], **kw: Any) -> CallResult:
    return run(tools, [(name, args)], **kw)[0]


def assert_no_secret(*results: CallResult) -> None:
    for r in results:
        assert SECRET_KEY not in r.model_dump_json(), r.model_dump_json()


KEYS = {"lab": SECRET_KEY}


def test_success_semantic_vs_generic(tools: dict[str, ToolSpec]) -> None:
    sem, gen = run(tools, [("list_flights", {"carrier": "UA"}), ("list_flights", {"page": 1, "per_page": 2})],
                   api_keys=KEYS)  # fmt: skip
    assert sem.outcome is Outcome.SEMANTIC_SUCCESS
    assert sem.record_count == 2 and sem.total_count == 2 and sem.status_code == 200
    assert [r["flight"] for r in sem.records] == [1545, 1714]
    assert sem.args == {"carrier": "UA", "serviceKey": "<KEY>"}
    assert sem.call_digest.startswith("sha256:") and sem.attempts == 1
    assert gen.outcome is Outcome.GENERIC_ONLY_SUCCESS  # only paging + key
    assert gen.record_count == 2 and gen.total_count == len(FLIGHTS)
    assert_no_secret(sem, gen)


def test_key_acquired_once_and_never_leaks(tools: dict[str, ToolSpec], fault_server: LiveServer) -> None:
    before = fault_server.state.hits[("key", "")]
    calls = [("list_flights", {"carrier": c}) for c in ("UA", "AA", "DL", "UA")]
    calls.append(("get_api_key", {}))  # calling the key tool directly: its answer is redacted too
    results = run(tools, calls)
    assert [r.outcome for r in results[:4]] == [Outcome.SEMANTIC_SUCCESS] * 4
    assert fault_server.state.hits[("key", "")] - before == 2  # once lazily (under a lock) + the direct call
    key_result = results[4]
    assert key_result.outcome is Outcome.GENERIC_ONLY_SUCCESS
    assert key_result.records[0]["data"]["serviceKey"] == "<KEY>"
    assert key_result.records[0]["data"]["note"] == "your key is <KEY>"
    assert_no_secret(*results)


def test_caller_key_wins_and_bad_key_is_auth_error(tools: dict[str, ToolSpec]) -> None:
    r = one(tools, "list_flights", {"carrier": "UA", "serviceKey": "wrong-key-123456"}, api_keys=KEYS)
    assert r.outcome is Outcome.AUTH_ERROR and r.status_code == 401
    assert "wrong-key-123456" not in r.model_dump_json()  # a caller's key is a secret too
    assert r.args["serviceKey"] == "<KEY>"


def test_placeholder_key_is_injected(tools: dict[str, ToolSpec]) -> None:
    r = one(tools, "list_flights", {"carrier": "DL", "serviceKey": "<KEY>"}, api_keys=KEYS)
    assert r.outcome is Outcome.SEMANTIC_SUCCESS and r.record_count == 1


def test_429_retry_after_honoured(tools: dict[str, ToolSpec], fault_server: LiveServer) -> None:
    t0 = time.monotonic()
    r = one(tools, "flaky", {"mode": "r429", "tag": "a"}, api_keys=KEYS)
    elapsed = time.monotonic() - t0
    assert r.outcome is Outcome.SEMANTIC_SUCCESS and r.attempts == 3
    assert fault_server.state.hits[("r429", "a")] == 3
    times = fault_server.state.hit_times[("r429", "a")]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(g >= 0.28 for g in gaps), gaps  # Retry-After: 0.3, not backoff_base 0.01
    assert elapsed >= 0.6


def test_429_integer_retry_after(tools: dict[str, ToolSpec], fault_server: LiveServer) -> None:
    r = one(tools, "flaky", {"mode": "r429int", "tag": "b"}, api_keys=KEYS)
    times = fault_server.state.hit_times[("r429int", "b")]
    assert r.outcome.is_success and r.attempts == 2 and times[1] - times[0] >= 0.95


def test_429_exhausted_is_rate_limit_and_retry_after_capped(
    tools: dict[str, ToolSpec], fault_server: LiveServer
) -> None:
    cfg = CFG.model_copy(update={"max_backoff_s": 0.1, "max_retries": 1})
    t0 = time.monotonic()
    r = one(tools, "flaky", {"mode": "r429big", "tag": "c"}, cfg=cfg, api_keys=KEYS)
    assert r.outcome is Outcome.RATE_LIMIT and r.status_code == 429 and r.attempts == 1
    assert fault_server.state.hits[("r429big", "c")] == 1  # issue 21 #7: beyond max_retry_after_s, no retry
    assert time.monotonic() - t0 < 2.0  # Retry-After 3600 is not waited for: the tool is off for the run


def test_500_retried_then_server_error(tools: dict[str, ToolSpec], fault_server: LiveServer) -> None:
    r = one(tools, "flaky", {"mode": "e500", "tag": "d"}, api_keys=KEYS)
    assert r.outcome is Outcome.SERVER_ERROR and r.status_code == 500
    assert r.attempts == 3 and fault_server.state.hits[("e500", "d")] == 3
    assert "<KEY>" in r.detail  # the server echoed the key; it is redacted
    assert_no_secret(r)


def test_502_recovers(tools: dict[str, ToolSpec], fault_server: LiveServer) -> None:
    r = one(tools, "flaky", {"mode": "e502then", "tag": "e"}, api_keys=KEYS)
    assert r.outcome is Outcome.SEMANTIC_SUCCESS and r.attempts == 2


def test_timeout_retried(tools: dict[str, ToolSpec], fault_server: LiveServer) -> None:
    cfg = CFG.model_copy(update={"timeout_s": 0.3, "max_retries": 1})
    r = one(tools, "flaky", {"mode": "slow", "tag": "f"}, cfg=cfg, api_keys=KEYS)
    assert r.outcome is Outcome.TIMEOUT and r.attempts == 2 and r.status_code is None
    assert fault_server.state.hits[("slow", "f")] == 2


@pytest.mark.parametrize(
    ("mode", "outcome", "status"),
    [
        ("e401", Outcome.AUTH_ERROR, 401),
        ("e403", Outcome.AUTH_ERROR, 403),
        ("e503", Outcome.ENDPOINT_UNAVAILABLE, 503),
        ("notjson", Outcome.UNCATEGORIZED, 200),
        ("gone", Outcome.SCHEMA_MISMATCH, 404),
        ("empty", Outcome.MISSING_FIELD, 200),
    ],
)
def test_not_retried_classes(
    tools: dict[str, ToolSpec], fault_server: LiveServer, mode: str, outcome: Outcome, status: int
) -> None:
    r = one(tools, "flaky", {"mode": mode, "tag": "g"}, api_keys=KEYS)
    assert (r.outcome, r.status_code, r.attempts) == (outcome, status, 1), r.detail
    assert fault_server.state.hits[(mode, "g")] == 1
    assert_no_secret(r)


def test_unknown_route_is_endpoint_unavailable(tools: dict[str, ToolSpec]) -> None:
    gone = tools["flaky"].model_copy(update={"name": "moved", "path": "/no/such/{mode}"})
    r = run({"moved": gone}, [(gone, {"mode": "x"})])[0]
    assert r.outcome is Outcome.ENDPOINT_UNAVAILABLE and r.status_code == 404


def test_422_missing_vs_type(tools: dict[str, ToolSpec]) -> None:
    missing, wrong, ok = run(
        tools,
        [
            ("strict", {"carrier": "UA"}),
            ("strict", {"carrier": "UA", "year": "abc"}),
            ("strict", {"carrier": "UA", "year": 2013}),
        ],  # fmt: skip
    )
    assert missing.outcome is Outcome.MISSING_FIELD and missing.status_code == 422
    assert wrong.outcome is Outcome.SCHEMA_MISMATCH and wrong.status_code == 422
    assert ok.outcome is Outcome.SEMANTIC_SUCCESS and ok.records == [{"carrier": "UA", "year": 2013}]


def test_missing_path_param_is_local_missing_field(tools: dict[str, ToolSpec], fault_server: LiveServer) -> None:
    r = one(tools, "flaky", {"tag": "h"}, api_keys=KEYS)
    assert r.outcome is Outcome.MISSING_FIELD and r.attempts == 0 and "mode" in r.detail


@pytest.mark.parametrize(
    ("code", "outcome", "count"),
    [
        ("00", Outcome.SEMANTIC_SUCCESS, 2),
        ("single", Outcome.SEMANTIC_SUCCESS, 1),
        ("03", Outcome.SEMANTIC_SUCCESS, 0),
        ("30", Outcome.AUTH_ERROR, 0),
        ("20", Outcome.AUTH_ERROR, 0),
        ("22", Outcome.RATE_LIMIT, 0),
        ("10", Outcome.SCHEMA_MISMATCH, 0),
        ("11", Outcome.MISSING_FIELD, 0),
        ("99", Outcome.UNCATEGORIZED, 0),
    ],
)
def test_korean_envelope_codes(tools: dict[str, ToolSpec], code: str, outcome: Outcome, count: int) -> None:
    r = one(tools, "get_stats", {"code": code, "sido": "서울특별시"}, api_keys=KEYS)
    assert r.outcome is outcome, r.detail
    assert r.record_count == count
    if code == "00":
        assert r.total_count == 2 and r.records[0]["sido"] == "서울특별시"
        assert r.args["_type"] == "json"  # format param filled from its enum
    if code == "03":
        assert r.total_count == 0 and "no data" in r.detail
    if code == "30":
        assert "SERVICE_KEY_IS_NOT_REGISTERED_ERROR" in r.detail
    assert_no_secret(r)


def test_envelope_generic_only(tools: dict[str, ToolSpec]) -> None:
    r = one(tools, "get_stats", {"pageNo": 1, "numOfRows": 5}, api_keys=KEYS)
    # `code` has a default on the server; only generic params were sent
    assert r.outcome is Outcome.GENERIC_ONLY_SUCCESS and r.record_count == 2


def test_records_truncated_to_max_kept(tools: dict[str, ToolSpec]) -> None:
    cfg = CFG.model_copy(update={"max_records_kept": 1})
    r = one(tools, "list_flights", {"page": 1}, cfg=cfg, api_keys=KEYS)
    assert r.record_count == 4 and len(r.records) == 1


def test_body_and_delete(tools: dict[str, ToolSpec]) -> None:
    created, deleted = run(
        tools,
        [
            ("create_playlist", {"body": {"name": "Road trip", "track_ids": [1, 2]}}),
            ("delete_playlist", {"playlist_id": 7}),
        ],  # fmt: skip
    )
    assert created.outcome is Outcome.SEMANTIC_SUCCESS and created.status_code == 201
    assert created.records[0]["received"] == {"name": "Road trip", "track_ids": [1, 2]}
    assert deleted.outcome is Outcome.SEMANTIC_SUCCESS and deleted.status_code == 204 and deleted.record_count == 0


def test_closed_port_is_endpoint_unavailable(tools: dict[str, ToolSpec]) -> None:
    port = free_port()
    dead = tools["strict"].model_copy(
        update={"source": tools["strict"].source.model_copy(update={"base_url": f"http://127.0.0.1:{port}"})}
    )
    r = run({"strict": dead}, [(dead, {"carrier": "UA", "year": 1})])[0]
    assert r.outcome is Outcome.ENDPOINT_UNAVAILABLE and r.attempts == 1 and r.status_code is None


def test_concurrency_bounded_per_platform(tools: dict[str, ToolSpec], fault_server: LiveServer) -> None:
    fault_server.state.max_inflight = 0
    cfg = CFG.model_copy(update={"concurrency_per_platform": 2})
    results = run(tools, [("concurrent", {"i": i}) for i in range(6)], cfg=cfg)
    assert all(r.outcome is Outcome.SEMANTIC_SUCCESS for r in results)
    assert [r.records[0]["i"] for r in results] == list(range(6))  # input order kept
    assert fault_server.state.max_inflight == 2


def test_platform_concurrency_override_and_pooled_connections(
    tools: dict[str, ToolSpec], fault_server: LiveServer
) -> None:
    """Issue 20: one platform at 16 calls in flight over kept-alive connections; the pool bounds it."""
    fault_server.state.max_inflight = 0
    fault_server.state.peers.clear()
    cfg = CFG.model_copy(update={"concurrency_per_platform": 2, "platform_concurrency": {"lab": 16}})
    results = run(tools, [("concurrent", {"i": i}) for i in range(32)], cfg=cfg)
    assert [r.records[0]["i"] for r in results] == list(range(32))
    assert 2 < fault_server.state.max_inflight <= 16  # the override, not the default of 2 (timing: load)
    assert len(fault_server.state.peers) <= 16  # 32 calls over at most 16 kept-alive connections
    fault_server.state.max_inflight = 0
    small = cfg.model_copy(update={"max_connections": 4})
    assert all(r.ok for r in run(tools, [("concurrent", {"i": i}) for i in range(8)], cfg=small))
    assert 1 <= fault_server.state.max_inflight <= 4  # the pool bounds what the platform allows


def test_async_interface_and_digest(tools: dict[str, ToolSpec]) -> None:
    async def go() -> tuple[CallResult, CallResult]:
        async with ToolExecutor(list(tools.values()), CFG, KEYS) as ex:
            a = await ex.call("list_flights", {"carrier": "AA"})
            b = await ex.call(tools["list_flights"], {"carrier": "AA"})
            return a, b

    a, b = asyncio.run(go())
    assert a.call_digest == b.call_digest and a.outcome is Outcome.SEMANTIC_SUCCESS
    with pytest.raises(KeyError, match="unknown tool"):
        ToolExecutor([]).tool("nope")
