"""The executor against hostile tools (issue 21 items 2, 3, 7, 9): a loopback HTTP service and a stdio MCP server.

Every failure mode is classified (never raised), bounded in time, bytes and requests.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from factory.config import ExecutorConfig, SourceConfig
from factory.io import dumps
from factory.tools.executor import ToolExecutor, run_many
from factory.tools.mcp import load_mcp, run_sync
from factory.tools.openapi import fetch_spec, load_openapi
from factory.tools.outcomes import CallResult, Outcome
from factory.tools.spec import ToolSpec
from tests.hostile.http_executor import BIG_BYTES, HostileHttp, hostile_http

REPO = Path(__file__).resolve().parents[2]
CFG = ExecutorConfig(
    timeout_s=1.0,
    max_retries=2,
    backoff_base_s=0.01,
    max_backoff_s=0.05,
    max_records_kept=5,
    max_response_bytes=1_000_000,
    max_retry_after_s=2.0,
    breaker_threshold=3,
)


@pytest.fixture(scope="module")
def http() -> Iterator[HostileHttp]:
    with hostile_http() as h:
        yield h


@pytest.fixture(scope="module")
def http_tools(http: HostileHttp) -> list[ToolSpec]:
    url = f"{http.url}/openapi.json"
    return load_openapi(fetch_spec(url), domain="h", platform="hostile", spec_locator=url, base_url=http.url)


def run_http(tools: list[ToolSpec], calls: list[tuple[str, dict[str, Any]]], cfg: ExecutorConfig = CFG
             ) -> tuple[list[CallResult], dict[str, dict[str, int]]]:  # fmt: skip
    """Run `calls` in one executor; the results and the executor's per-tool request counts."""
    box: dict[str, Any] = {}

    async def go() -> list[CallResult]:
        async with ToolExecutor(tools, cfg) as ex:
            out = [await ex.call(t, a) for t, a in calls]
            box["counts"] = ex.call_counts()
            return out

    return run_sync(go()), box["counts"]


def stored_size(r: CallResult) -> int:
    return len(r.model_dump_json())


# --------------------------------------------------------------------------- HTTP


def test_http_deep_nesting_is_a_structural_failure(http: HostileHttp, http_tools: list[ToolSpec]) -> None:
    (r,), _ = run_http(http_tools, [("deep", {})])
    assert r.outcome is Outcome.SCHEMA_MISMATCH and r.outcome.group == "structural"
    assert "nested" in r.detail
    assert r.attempts == 1  # not transient: never retried


def test_http_big_body_is_cut_at_the_cap(http: HostileHttp, http_tools: list[ToolSpec]) -> None:
    t0 = time.monotonic()
    (r,), _ = run_http(http_tools, [("big", {})])
    assert time.monotonic() - t0 < 10
    assert r.outcome is Outcome.SCHEMA_MISMATCH and "too large" in r.detail
    assert r.attempts == 1
    assert http.state.big_bytes_sent < BIG_BYTES / 2  # the body was read as a stream and abandoned at the cap
    assert stored_size(r) < 10_000


def test_http_large_record_is_stored_bounded(http_tools: list[ToolSpec]) -> None:
    """Under the cap, what a result keeps is bounded by max_stored_bytes (cut strings), with the body's digest."""
    cfg = CFG.model_copy(update={"max_response_bytes": 100_000_000, "max_stored_bytes": 20_000})
    (r,), _ = run_http(http_tools, [("big", {})], cfg)
    assert r.outcome.is_success and r.record_count == 1
    assert stored_size(r) < 40_000
    kept = dumps(r.records) + dumps(r.body)
    assert "xxxx" in kept and len(kept) < 25_000  # a bounded sample of the record, not the 50 MB string
    assert r.truncated and r.body_digest.startswith("sha256:")


def test_http_retry_after_beyond_ceiling_marks_tool_unavailable(http: HostileHttp, http_tools: list[ToolSpec]) -> None:
    before = http.state.hits["retry_after"]
    t0 = time.monotonic()
    results, counts = run_http(http_tools, [("retry_after", {})] * 5)
    assert time.monotonic() - t0 < 5
    assert http.state.hits["retry_after"] - before == 1  # one request, then the tool is off for the session
    assert results[0].outcome is Outcome.RATE_LIMIT and "3600" in results[0].detail
    assert all(r.outcome is Outcome.ENDPOINT_UNAVAILABLE and r.attempts == 0 for r in results[1:])
    c = counts["hostile.retry_after"]
    assert c["requests"] == 1 and c["short_circuited"] == 4


def test_http_server_error_forever_opens_the_breaker(http: HostileHttp, http_tools: list[ToolSpec]) -> None:
    before = http.state.hits["fail"]
    results, counts = run_http(http_tools, [("fail", {})] * 20 + [("ok", {"q": "a"})])
    assert http.state.hits["fail"] - before == CFG.breaker_threshold
    assert results[0].outcome is Outcome.SERVER_ERROR
    assert results[-2].outcome is Outcome.ENDPOINT_UNAVAILABLE and "circuit" in results[-2].detail
    assert results[-1].outcome is Outcome.SEMANTIC_SUCCESS  # other tools are unaffected
    assert counts["hostile.fail"] == {"calls": 20, "requests": 3, "short_circuited": 19}


def test_http_hanging_endpoint_is_bounded(http: HostileHttp, http_tools: list[ToolSpec]) -> None:
    cfg = CFG.model_copy(update={"timeout_s": 0.3})
    before = http.state.hits["hang"]
    t0 = time.monotonic()
    results, counts = run_http(http_tools, [("hang", {})] * 10, cfg)
    assert time.monotonic() - t0 < 5
    assert http.state.hits["hang"] - before <= CFG.breaker_threshold
    assert results[0].outcome is Outcome.TIMEOUT
    assert results[-1].outcome is Outcome.ENDPOINT_UNAVAILABLE
    assert counts["hostile.hang"]["requests"] == CFG.breaker_threshold


def test_retry_after_within_ceiling_is_honoured() -> None:
    ex = ToolExecutor([], CFG.model_copy(update={"max_backoff_s": 0.05, "max_retry_after_s": 10.0}))
    assert ex._backoff(1, 3.0) == 3.0  # not cut to max_backoff_s
    assert ex._backoff(1, None) == pytest.approx(0.01)


# --------------------------------------------------------------------------- MCP

HOSTILE_MCP = [sys.executable, "-m", "tests.hostile.mcp_executor"]


@pytest.fixture()
def mcp_env(tmp_path: Path) -> Iterator[tuple[SourceConfig, list[ToolSpec], Path]]:
    src = SourceConfig(kind="mcp", platform="hmcp", command=HOSTILE_MCP, env={"HOSTILE_MCP_DIR": str(tmp_path)})
    old = os.getcwd()
    os.chdir(REPO)
    try:
        specs = load_mcp(src, "h", cwd=REPO)
        (tmp_path / "starts").unlink(missing_ok=True)
        yield src, specs, tmp_path
    finally:
        os.chdir(old)


def run_mcp(env: tuple[SourceConfig, list[ToolSpec], Path], calls: list[tuple[str, dict[str, Any]]],
            cfg: ExecutorConfig = CFG, concurrent: bool = False
            ) -> tuple[list[CallResult], dict[str, dict[str, int]]]:  # fmt: skip
    src, specs, _ = env
    box: dict[str, Any] = {}

    async def go() -> list[CallResult]:
        async with ToolExecutor(specs, cfg, sources=[src], workdir=REPO) as ex:
            if concurrent:
                out = await ex.call_many(calls)
            else:
                out = [await ex.call(t, a) for t, a in calls]
            box["counts"] = ex.call_counts()
            return out

    return run_sync(go()), box["counts"]


def lines(d: Path, name: str) -> list[str]:
    p = d / name
    return p.read_text(encoding="utf-8").split() if p.exists() else []


def test_mcp_deep_nesting_is_a_structural_failure(mcp_env: Any) -> None:
    (r, after), _ = run_mcp(mcp_env, [("deep", {}), ("ok", {"q": "a"})])
    assert r.outcome is Outcome.SCHEMA_MISMATCH and "nested" in r.detail
    assert after.outcome is Outcome.SEMANTIC_SUCCESS


def test_mcp_big_result_is_capped(mcp_env: Any) -> None:
    cfg = CFG.model_copy(update={"timeout_s": 5.0})
    (r, after), _ = run_mcp(mcp_env, [("big", {"mb": 3}), ("ok", {"q": "a"})], cfg)
    assert r.outcome is Outcome.SCHEMA_MISMATCH and "too large" in r.detail and r.attempts == 1
    assert stored_size(r) < 10_000
    assert after.outcome is Outcome.SEMANTIC_SUCCESS


@pytest.mark.slow
def test_mcp_50mb_result_does_not_starve_other_tools(mcp_env: Any) -> None:
    # 5 s per call leaves room for the server itself building and writing 50 MB on a loaded machine; the
    # starvation this catches (the SDK's quadratic line reader) took minutes
    cfg = CFG.model_copy(update={"timeout_s": 5.0})
    t0 = time.monotonic()
    results, _ = run_mcp(mcp_env, [("big", {})] + [("ok", {"q": str(i)}) for i in range(4)], cfg, concurrent=True)
    assert time.monotonic() - t0 < 20
    assert results[0].outcome is Outcome.SCHEMA_MISMATCH and "too large" in results[0].detail
    assert all(r.outcome is Outcome.SEMANTIC_SUCCESS for r in results[1:])


def test_mcp_failing_and_hanging_tools_are_bounded(mcp_env: Any) -> None:
    cfg = CFG.model_copy(update={"timeout_s": 1.5})  # roomy for `ok` on a loaded machine; `hang` never answers
    results, counts = run_mcp(mcp_env, [("fail", {})] * 8 + [("hang", {})] * 6 + [("ok", {})], cfg)
    calls = lines(mcp_env[2], "calls")
    assert calls.count("fail") <= CFG.breaker_threshold and calls.count("hang") <= CFG.breaker_threshold
    assert results[7].outcome is Outcome.ENDPOINT_UNAVAILABLE and results[13].outcome is Outcome.ENDPOINT_UNAVAILABLE
    assert results[-1].outcome is Outcome.GENERIC_ONLY_SUCCESS
    assert counts["hmcp.fail"]["short_circuited"] >= 5


def test_mcp_crash_restarts_and_is_attributed_to_the_tool(mcp_env: Any) -> None:
    results, _ = run_mcp(mcp_env, [("crash", {}), ("ok", {"q": "a"}), ("crash_once", {}), ("ok", {"q": "b"})])
    crash, ok1, once, ok2 = results
    assert crash.outcome is Outcome.SERVER_ERROR and "crash" in crash.detail
    assert ok1.outcome is Outcome.SEMANTIC_SUCCESS  # the next call restarted the server
    # crash_once: the server was restarted and the call retried once
    assert once.outcome.is_success and dumps(once.records) == dumps([{"items": [{"recovered": True}]}])
    assert ok2.outcome is Outcome.SEMANTIC_SUCCESS
    d = mcp_env[2]
    assert lines(d, "calls").count("crash") == 2  # the call and its one retry
    assert len(lines(d, "starts")) <= 4


def test_mcp_crash_among_concurrent_calls_is_attributed_to_the_tool(mcp_env: Any) -> None:
    """The shared server dies under four calls at once (item 9 with the session pool): only the tool
    that kills it fails; the calls that merely shared the server are retried (in a server of their
    own) and succeed, and their tool's circuit breaker stays closed."""
    cfg = CFG.model_copy(update={"timeout_s": 5.0})
    calls = (
        [("slow", {"q": str(i)}) for i in range(3)] + [("crash", {})] + [("slow", {"q": "late"}), ("ok", {"q": "a"})]
    )
    results, counts = run_mcp(mcp_env, calls, cfg, concurrent=True)
    crash = results[3]
    assert crash.outcome is Outcome.SERVER_ERROR and "crashed on this tool" in crash.detail
    others = results[:3] + results[4:]
    assert [r.outcome for r in others] == [Outcome.SEMANTIC_SUCCESS] * 5, [r.detail for r in others]
    assert counts["hmcp.slow"]["short_circuited"] == 0 and counts["hmcp.ok"]["short_circuited"] == 0
    assert lines(mcp_env[2], "calls").count("crash") <= 3  # the call, at most one retry and one isolated attempt


def test_probe_metadata_counts_requests() -> None:
    from factory.ingest import probe_metadata

    rows = [{"tool": "a", "outcome": "server_error", "record_count": 0, "total_count": None, "args": {}}]
    meta = probe_metadata(rows, ["a"], {"p.a": {"requests": 3, "short_circuited": 2, "calls": 5}})
    assert meta["requests_sent"] == 3 and meta["calls_short_circuited"] == 2


def test_run_many_still_works(http_tools: list[ToolSpec]) -> None:
    (r,) = run_many(lambda: ToolExecutor(http_tools, CFG), [("ok", {"q": "z"})])
    assert r.outcome is Outcome.SEMANTIC_SUCCESS and dumps(r.records)


def test_mcp_answer_over_the_message_cap_fails_only_its_call(mcp_env: Any, caplog: pytest.LogCaptureFixture) -> None:
    # 1 MB result with a 100 kB result cap: over the stdio message cap, so the reader discards it unparsed
    cfg = CFG.model_copy(update={"max_response_bytes": 100_000, "timeout_s": 5.0})
    with caplog.at_level("WARNING", logger="factory.tools.mcp_stdio"):
        (r, after), _ = run_mcp(mcp_env, [("big", {"mb": 1}), ("ok", {"q": "a"})], cfg)
    assert r.outcome is Outcome.SCHEMA_MISMATCH and "too large" in r.detail and r.attempts == 1
    assert after.outcome is Outcome.SEMANTIC_SUCCESS
    cut = [re.search(r"is (\d+) bytes, over the (\d+)-byte cap", m) for m in caplog.messages]
    sizes = [(int(m.group(1)), int(m.group(2))) for m in cut if m]
    assert len(sizes) == 1 and sizes[0][0] > 1024 * 1024 > sizes[0][1]  # counted whole, never parsed
    assert lines(mcp_env[2], "starts") == lines(mcp_env[2], "starts")[:1]  # the same server answered both
