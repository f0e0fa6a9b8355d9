"""Sessions against the demo service (issue 21 item 12): a session's fault sequence and state are its own.

- Faults are drawn per API key: a new session meets the same faults for the same requests, whatever
  other sessions (an earlier run) sent before.
- Executor episodes: a state-changing call inside an episode runs in a fresh session of the episode's
  own, so concurrent episodes never see each other's state and the shared session never changes.
"""

import asyncio
from typing import Any

import pytest

from factory.config import DemoConfig, ExecutorConfig, FaultProfile
from factory.demo.service import DemoService
from factory.tools.executor import ToolExecutor
from factory.tools.openapi import fetch_spec, load_openapi
from factory.tools.outcomes import Outcome
from factory.tools.spec import ToolSpec
from tests.conftest import free_port

CFG = ExecutorConfig(timeout_s=5.0, max_retries=0, backoff_base_s=0.01, max_backoff_s=0.05)
STORE_PLAYLISTS = 18  # Chinook's own playlists: a session's first created playlist is 19


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    cfg = DemoConfig(port=free_port(), startup_timeout_s=60)
    with DemoService(cfg, log_dir=tmp_path_factory.mktemp("logs")) as svc:
        yield svc


def _tools(demo: DemoService, platform: str, domain: str) -> list[ToolSpec]:
    doc = fetch_spec(demo.spec_url(platform))
    return load_openapi(doc, domain=domain, platform=platform, spec_locator=demo.spec_url(platform))


@pytest.fixture(scope="module")
def store(demo) -> list[ToolSpec]:
    return _tools(demo, "chinook-store", "music")


def test_fault_sequence_is_per_session(demo) -> None:
    tools = _tools(demo, "airline-registry", "aviation")
    cfg = CFG.model_copy(update={"breaker_threshold": 100})

    async def session() -> list[Outcome]:  # one executor: one key, one session; requests one after another
        async with ToolExecutor(tools, cfg) as ex:
            return [(await ex.call("get_airline", {"carrier": "DL"})).outcome for _ in range(12)]

    demo.set_faults("airline-registry", FaultProfile(seed=5, server_error=0.5))
    try:
        first = asyncio.run(session())
        second = asyncio.run(session())  # a new session after 12 requests of the first
    finally:
        demo.set_faults("airline-registry", None)
    assert set(first) == {Outcome.SERVER_ERROR, Outcome.SEMANTIC_SUCCESS}  # the draws vary along the sequence
    assert second == first


def _run(store: list[ToolSpec], go) -> Any:
    async def main() -> Any:
        async with ToolExecutor(store, CFG) as ex:
            return await go(ex)

    return asyncio.run(main())


def test_each_call_an_episode_isolates_state_changes(store: list[ToolSpec]) -> None:
    calls = [
        ("create_playlist", {"name": "A"}),
        ("create_playlist", {"name": "B"}),
        ("list_playlists", {"per_page": 100}),
        ("get_state_hash", {}),
    ]

    async def go(ex: ToolExecutor) -> tuple[list, list, Any]:
        isolated = await ex.call_many(calls, episodes=True)
        shared = await ex.call_many(calls)
        fresh = await ex.call("get_state_hash", {})
        return isolated, shared, fresh

    isolated, shared, after = _run(store, go)
    assert all(r.ok for r in isolated + shared), [r.detail for r in isolated + shared]
    # every create in its own fresh session: the same first id; the shared session saw none of them
    assert [r.records[0]["playlist_id"] for r in isolated[:2]] == [STORE_PLAYLISTS + 1] * 2
    assert isolated[2].total_count == STORE_PLAYLISTS
    # without episodes both creates land in the shared session, in whatever order they arrive
    assert sorted(r.records[0]["playlist_id"] for r in shared[:2]) == [STORE_PLAYLISTS + 1, STORE_PLAYLISTS + 2]
    assert after.records[0]["state_hash"] != isolated[3].records[0]["state_hash"]  # the shared session changed


def test_an_episode_keeps_its_own_state_across_its_calls(store: list[ToolSpec]) -> None:
    async def path(ex: ToolExecutor, track_id: int) -> list:
        before = await ex.call("get_state_hash", {})
        made = await ex.call("create_playlist", {"name": "Road trip"})
        pid = made.records[0]["playlist_id"]
        added = await ex.call("add_track_to_playlist", {"playlist_id": pid, "track_id": track_id})
        tracks = await ex.call("list_playlist_tracks", {"playlist_id": pid})
        after = await ex.call("get_state_hash", {})
        return [before, made, added, tracks, after]

    async def go(ex: ToolExecutor) -> tuple[list, list, Any]:
        a, b = await asyncio.gather(ex.in_episode(path(ex, 1)), ex.in_episode(path(ex, 2)))
        return a, b, await ex.call("get_state_hash", {})

    a, b, shared_after = _run(store, go)
    for run, track in ((a, 1), (b, 2)):
        before, made, added, tracks, after = run
        assert all(r.ok for r in run), [r.detail for r in run]
        assert made.records[0]["playlist_id"] == STORE_PLAYLISTS + 1
        assert added.records[0]["track_count"] == 1  # only its own track: the other episode's add is elsewhere
        assert [r["track_id"] for r in tracks.records] == [track]
        assert after.records[0]["state_hash"] != before.records[0]["state_hash"]
    fresh = a[0].records[0]["state_hash"]
    assert b[0].records[0]["state_hash"] == fresh  # reads before the first state change: the shared session
    assert shared_after.records[0]["state_hash"] == fresh  # which no episode changed
    assert a[4].records[0]["state_hash"] != b[4].records[0]["state_hash"]  # different tracks, different states
