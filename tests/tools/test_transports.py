"""The executor's orchestration around a transport: dispatch by source kind, retries, NotSent, lifetime."""

import asyncio
from typing import Any

import pytest

from factory.config import ExecutorConfig
from factory.tools import transports
from factory.tools.executor import ToolExecutor, run_calls
from factory.tools.outcomes import Outcome
from factory.tools.spec import SourceRef, ToolSpec
from factory.tools.transports import Exchange, NotSent, Transport, TransportOptions

CFG = ExecutorConfig(timeout_s=1, max_retries=2, backoff_base_s=0.01, max_backoff_s=0.05, max_records_kept=5)
TOOL = ToolSpec(
    domain="d",
    platform="p",
    name="t",
    description="t",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": []},
    source=SourceRef(kind="openapi", locator="fake"),
)


class Scripted(Transport):
    """Answers each send with the next scripted Exchange; records its lifetime."""

    kind = "openapi"
    script: list[Exchange] = []
    log: list[str] = []

    def __init__(self, options: TransportOptions) -> None:
        super().__init__(options)
        self.sent = 0

    async def open(self) -> None:
        Scripted.log.append("open")

    async def close(self) -> None:
        Scripted.log.append("close")

    async def prepare(self, tool: ToolSpec, args: dict[str, Any]) -> Any:
        if args.get("q") == "unsendable":
            raise NotSent(Outcome.MISSING_FIELD, "cannot send this")
        return dict(args)

    async def send(self, tool: ToolSpec, prepared: Any) -> Exchange:
        Scripted.log.append(f"send {prepared.get('q')}")
        ex = Scripted.script.pop(0)
        return Exchange(ex.outcome, ex.status_code, ex.body, ex.detail, retry=ex.retry, retry_after=ex.retry_after)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> type[Scripted]:
    monkeypatch.setitem(transports.TRANSPORTS, "openapi", Scripted)
    Scripted.script, Scripted.log = [], []
    return Scripted


def test_the_table_maps_each_source_kind() -> None:
    assert set(transports.TRANSPORTS) == {"openapi", "mcp", "retrieval"}
    for kind, cls in transports.TRANSPORTS.items():
        assert issubclass(cls, Transport) and cls.kind == kind


def test_transient_failures_are_retried_then_the_body_interpreted(scripted: type[Scripted]) -> None:
    scripted.script = [
        Exchange(Outcome.RATE_LIMIT, 429, detail="slow down", retry=True, retry_after=0.0),
        Exchange(Outcome.TIMEOUT, detail="late", retry=True),
        Exchange(None, 200, body=[{"a": 1}, {"a": 2}]),
    ]
    [res] = run_calls([TOOL], [("t", {"q": "x"})], CFG)
    assert res.outcome is Outcome.SEMANTIC_SUCCESS and res.attempts == 3 and res.record_count == 2
    assert scripted.log == ["open", "send x", "send x", "send x", "close"]


def test_retries_stop_at_max_retries_with_the_last_failure(scripted: type[Scripted]) -> None:
    scripted.script = [Exchange(Outcome.SERVER_ERROR, 502, detail=f"try {i}", retry=True) for i in range(5)]
    [res] = run_calls([TOOL], [("t", {"q": "x"})], CFG)
    assert res.outcome is Outcome.SERVER_ERROR and res.attempts == CFG.max_retries + 1 and res.detail == "try 2"
    assert len(scripted.script) == 5 - (CFG.max_retries + 1)


def test_a_final_failure_is_not_retried(scripted: type[Scripted]) -> None:
    scripted.script = [Exchange(Outcome.AUTH_ERROR, 401, detail="no"), Exchange(None, 200, body={})]
    [res] = run_calls([TOOL], [("t", {"q": "x"})], CFG)
    assert res.outcome is Outcome.AUTH_ERROR and res.attempts == 1 and len(scripted.script) == 1


def test_not_sent_is_classified_locally(scripted: type[Scripted]) -> None:
    [res] = run_calls([TOOL], [("t", {"q": "unsendable"})], CFG)
    assert res.outcome is Outcome.MISSING_FIELD and res.attempts == 0 and res.detail == "cannot send this"
    assert not any(e.startswith("send") for e in scripted.log)


def test_calls_need_an_open_executor(scripted: type[Scripted]) -> None:
    with pytest.raises(RuntimeError, match="async with"):
        asyncio.run(ToolExecutor([TOOL], CFG).call("t", {}))
