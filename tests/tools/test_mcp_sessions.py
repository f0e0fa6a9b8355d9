"""Persistent MCP sessions (issue 13 item 4): one server start per run, private servers for state
changes, a counted restart after a crash, a clean stop and no orphan processes."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from factory.config import ExecutorConfig, SourceConfig
from factory.tools.executor import ToolExecutor
from factory.tools.mcp import load_mcp, run_sync
from factory.tools.outcomes import CallResult, Outcome
from factory.tools.spec import ToolSpec
from factory.tools.transports.mcp_pool import close_mcp_sessions, mcp_pool

REPO = Path(__file__).resolve().parents[2]
CFG = ExecutorConfig(timeout_s=20, max_retries=0)


def descendants(pid: int | None = None) -> set[int]:
    """Process ids of every live descendant of `pid` (this process by default), from /proc."""
    root = os.getpid() if pid is None else pid
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] == "Z":  # a zombie has exited
            continue
        parent[int(entry)] = int(fields[1])
    out: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in out}
        out |= frontier
    return out


def settle(expected: set[int], within_s: float = 10.0) -> set[int]:
    """The descendants once they equal `expected` (or after `within_s`): processes take a moment to exit."""
    deadline = time.monotonic() + within_s
    while True:
        now = descendants()
        if now == expected or time.monotonic() > deadline:
            return now
        time.sleep(0.05)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[SourceConfig, list[ToolSpec], Path]]:
    close_mcp_sessions()
    src = SourceConfig(
        kind="mcp",
        platform="smcp",
        command=["python", "-m", "tests.tools.servers.stateful_mcp"],
        env={"STATEFUL_MCP_DIR": str(tmp_path)},
    )
    specs = load_mcp(src, "s", cwd=REPO)
    (tmp_path / "starts").unlink(missing_ok=True)  # the listing's own start is not the executors'
    try:
        yield src, specs, tmp_path
    finally:
        close_mcp_sessions()


def starts(d: Path) -> list[str]:
    p = d / "starts"
    return p.read_text(encoding="utf-8").split() if p.exists() else []


def run(env: Any, calls: list[tuple[str, dict[str, Any]]], *, episodes: bool = False,
        cfg: ExecutorConfig = CFG) -> list[CallResult]:  # fmt: skip
    """One executor (on a loop of its own, as stages do), calls made one after the other."""
    src, specs, _ = env

    async def go() -> list[CallResult]:
        async with ToolExecutor(specs, cfg, sources=[src], workdir=REPO) as ex:
            if episodes:
                return await ex.call_many(calls, episodes=True)
            return [await ex.call(t, a) for t, a in calls]

    return run_sync(go())


def test_one_server_start_for_many_executors_and_a_clean_stop(server: Any) -> None:
    """One start for a run however long it goes without calling (a run holds the pool: the reaper,
    even at a moment far past the idle timeout, stops nothing until the run ends); between runs an
    idle server is stopped, and a clean stop leaves no process behind."""
    pool, locator = mcp_pool(), server[1][0].source.locator
    before = descendants()
    with pool.hold():  # as run_pipeline does for a whole run
        results = [r for _ in range(3) for r in run(server, [("list_items", {})])]  # three executors, three loops
        assert pool.reap_idle(time.monotonic() + 10 * pool.idle_close_s) == 0  # a long stage without calls
        with pool.hold():  # holds nest
            results += [r for _ in range(3) for r in run(server, [("list_items", {})])]
        assert pool.held
    assert not pool.held
    assert all(r.outcome is Outcome.GENERIC_ONLY_SUCCESS for r in results), [r.detail for r in results]
    pids = {r.body["pid"] for r in results}
    assert len(pids) == 1 and len(starts(server[2])) == 1  # one process served them all
    assert pool.stats()[locator] == {"shared_starts": 1, "private_starts": 0, "restarts": 0, "idle_stops": 0}
    assert pids <= descendants() - before  # still running between executors and after the run ...
    # ... until it is idle between runs (the idle clock started afresh when the run released the pool)
    assert pool.reap_idle(time.monotonic() + pool.idle_close_s / 2) == 0
    assert pool.reap_idle(time.monotonic() + 2 * pool.idle_close_s) == 1
    assert pool.stats()[locator]["idle_stops"] == 1 and settle(before) == before
    (again,) = run(server, [("list_items", {})])  # the next run starts it again
    assert again.body["pid"] not in pids and pool.stats()[locator]["shared_starts"] == 2
    close_mcp_sessions()
    assert settle(before) == before  # ... and stopped at the end: no orphan
    pids.add(again.body["pid"])
    assert not any(Path(f"/proc/{p}").exists() and "Z" not in Path(f"/proc/{p}/stat").read_text() for p in pids)


def test_state_changes_run_in_a_private_server_of_their_episode(server: Any) -> None:
    before = descendants()
    # an executor without episodes: its first state change moves it to a server of its own
    first, added, seen = run(server, [("list_items", {}), ("add_item", {"name": "a"}), ("list_items", {})])
    assert added.body["items"] == ["a"] and seen.body["items"] == ["a"] and seen.body["pid"] == added.body["pid"]
    assert first.body["pid"] != added.body["pid"]  # the read before the change went to the shared server
    (shared,) = run(server, [("list_items", {})])
    assert shared.body == {"items": [], "pid": first.body["pid"]}  # the shared session never changed
    # concurrent episodes: each change in a server of its own, none sees another's
    results = run(server, [("add_item", {"name": f"e{i}"}) for i in range(3)], episodes=True)
    assert [r.body["items"] for r in results] == [["e0"], ["e1"], ["e2"]]
    assert len({r.body["pid"] for r in results}) == 3
    stats = mcp_pool().stats()[server[1][0].source.locator]
    assert stats["shared_starts"] == 1 and stats["private_starts"] == 4
    # an episode inside an executor that changed state reads the executor's server until it changes state itself
    src, specs, _ = server

    async def nested() -> list[CallResult]:
        async with ToolExecutor(specs, CFG, sources=[src], workdir=REPO) as ex:
            changed = await ex.call("add_item", {"name": "outer"})
            read, own = await ex.in_episode(_two(ex))
            return [changed, read, own]

    async def _two(ex: ToolExecutor) -> list[CallResult]:
        return [await ex.call("list_items", {}), await ex.call("add_item", {"name": "inner"})]

    changed, read, own = run_sync(nested())
    assert read.body == changed.body and own.body["items"] == ["inner"] and own.body["pid"] != changed.body["pid"]
    # private servers stopped with their episode / executor: only the shared one is left
    assert settle(before | {first.body["pid"]}) == before | {first.body["pid"]}
    assert mcp_pool().stats()[specs[0].source.locator]["private_starts"] == 6
    close_mcp_sessions()
    assert settle(before) == before


def test_a_crashed_server_is_restarted_once_and_counted(server: Any) -> None:
    before = descendants()
    (ok,) = run(server, [("list_items", {})])
    (once,) = run(server, [("crash_once", {})])  # the shared server dies; restarted, the call retried
    assert once.outcome.is_success and once.body["recovered"] is True, once.detail
    assert once.body["pid"] != ok.body["pid"]
    (after,) = run(server, [("list_items", {})])  # a later executor uses the restarted server
    assert after.body["pid"] == once.body["pid"]
    stats = mcp_pool().stats()[server[1][0].source.locator]
    assert stats["restarts"] == 1 and stats["shared_starts"] == 2 and len(starts(server[2])) == 2
    # a tool that kills its server every time: restarted once, then the crash is the tool's
    dead, again = run(server, [("die", {}), ("list_items", {})])
    assert dead.outcome is Outcome.SERVER_ERROR and "crashed on this tool twice" in dead.detail
    assert again.outcome is Outcome.GENERIC_ONLY_SUCCESS  # the next call started the server afresh
    close_mcp_sessions()
    assert settle(before) == before


def test_per_executor_sessions_keep_the_old_lifetime(server: Any) -> None:
    before = descendants()
    cfg = CFG.model_copy(update={"mcp_sessions": "per_executor"})
    a = run(server, [("add_item", {"name": "x"}), ("list_items", {})], cfg=cfg)
    b = run(server, [("list_items", {})], cfg=cfg)
    assert a[1].body["items"] == ["x"] and b[0].body["items"] == []  # each executor: a fresh server
    assert len(starts(server[2])) == 2
    assert settle(before) == before  # each stopped with its executor


def test_run_pipeline_holds_the_pool_for_the_whole_run() -> None:
    """Every stage of `run_pipeline` (what `factory run` and the realtools tests call) runs under a hold."""
    from types import SimpleNamespace

    from sensors.jobs import PIPELINE_STAGES, run_pipeline

    held: list[bool] = []
    job = SimpleNamespace(asset_layer=SimpleNamespace(executable_asset_keys=[]))
    defs = SimpleNamespace(resolve_job_def=lambda name: job)

    def runner(defs: Any, job_name: str, **kw: Any) -> Any:
        held.append(mcp_pool().held)
        return SimpleNamespace(success=True, run_id="0" * 8, get_asset_check_evaluations=lambda: [])

    job.asset_layer.executable_asset_keys = [SimpleNamespace(to_user_string=lambda: "x")]
    run_pipeline(defs, None, ["d"], runner=runner, progress=lambda m: None)  # type: ignore[arg-type]
    assert held == [True] * len(PIPELINE_STAGES) and not mcp_pool().held
