"""Recorded answers (`responses: record`, factory.tools.transports.recorded): a service that answers at
random (a dynamic mock) becomes a stable environment; state changes and failures stay live."""

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import httpx

from factory.config import ExecutorConfig, SourceConfig
from factory.io import Store
from factory.tools.executor import ToolExecutor
from factory.tools.spec import GenericParams, SourceRef, ToolSpec
from factory.tools.transports.recorded import RECORDINGS_DIR, Recordings

SECRET = "sk-recorded-test-0123456789"
REF = SourceRef(kind="openapi", locator="spec.json", base_url="http://mock.test", recorded=True)


def _tool(name: str, method: str = "GET", **kw: Any) -> ToolSpec:
    return ToolSpec(
        domain="d",
        platform="mock",
        name=name,
        description=name,
        method=method,
        path=f"/{name}",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}, "api_key": {"type": "string"}}},
        param_locations={"id": "query", "api_key": "header"},
        generic_params=GenericParams(key="api_key"),
        source=REF,
        **kw,
    )


GET, POST = _tool("get_pet"), _tool("add_pet", "POST", state_changing=True)


def _run(store: Store, calls: list[tuple[str, dict[str, Any]]], status: int = 200) -> tuple[list[Any], int]:
    """The calls' first records through a fresh executor over a mock answering a new random-like value each
    time (and, with `status` 500, failing); how many requests reached the mock."""
    counter = itertools.count(1)
    hits = []

    def answer(req: httpx.Request) -> httpx.Response:
        hits.append(req.url.path)
        n = next(counter)
        return httpx.Response(status, json={"id": req.url.params.get("id"), "name": f"pet-{n}", "password": f"pw{n}"})

    client = httpx.AsyncClient(transport=httpx.MockTransport(answer))

    async def go() -> list[Any]:
        ex = ToolExecutor(
            [GET, POST], ExecutorConfig(max_retries=0), api_keys={"mock": SECRET}, http_client=client,
            recordings=Recordings(store),
        )  # fmt: skip
        async with ex:
            return [(await ex.call(n, a)) for n, a in calls]

    try:
        results = asyncio.run(go())
    finally:
        asyncio.run(client.aclose())
    return [r.records[0] if r.records else r.outcome.value for r in results], len(hits)


def test_a_read_only_call_is_answered_as_first_recorded_in_every_later_executor(tmp_path: Path) -> None:
    store = Store(tmp_path)
    first, sent = _run(store, [("get_pet", {"id": "7"}), ("get_pet", {"id": "7"}), ("get_pet", {"id": "8"})])
    assert sent == 2 and first[0] == first[1] == {"id": "7", "name": "pet-1", "password": "pw1"}  # data kept
    assert first[2]["name"] == "pet-2"
    again, sent = _run(store, [("get_pet", {"id": "8"}), ("get_pet", {"id": "7"})])  # another stage, same answers
    assert sent == 0 and again == [first[2], first[0]]
    files = sorted((tmp_path / RECORDINGS_DIR / "mock").glob("*.json"))
    assert len(files) == 2
    stored = [json.loads(p.read_text()) for p in files]
    assert {s["args"]["api_key"] for s in stored} == {"<KEY>"}
    assert all(SECRET not in p.read_text() for p in files)  # the key is neither in the name nor in the file


def test_state_changes_and_failures_are_never_recorded(tmp_path: Path) -> None:
    store = Store(tmp_path)
    posted, sent = _run(store, [("add_pet", {"id": "1"}), ("add_pet", {"id": "1"})])
    assert sent == 2 and posted[0] != posted[1]  # each POST reaches the service
    failed, sent = _run(store, [("get_pet", {"id": "3"})], status=500)
    assert sent == 1 and failed == ["server_error"]
    ok, sent = _run(store, [("get_pet", {"id": "3"})])  # the failure was not recorded: tried live again
    assert sent == 1 and ok[0]["name"] == "pet-1"
    assert len(list((tmp_path / RECORDINGS_DIR).rglob("*.json"))) == 1  # the successful get_pet(3) alone


def test_a_live_source_is_not_recorded_and_its_inventory_entry_is_unchanged(tmp_path: Path) -> None:
    live = GET.model_copy(update={"source": REF.model_copy(update={"recorded": False})})
    assert "recorded" not in live.model_dump()["source"] and GET.model_dump()["source"]["recorded"] is True
    assert SourceConfig(kind="openapi", spec="x.json").responses == "live"
    ex = ToolExecutor([live], ExecutorConfig(max_retries=0), recordings=Recordings(Store(tmp_path)))
    assert not any(type(t).__name__ == "RecordingTransport" for t in ex._transports.values())
