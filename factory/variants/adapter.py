"""The execution adapter (§3.1): decodes variant calls — protocol sequences with their state included —
into native actions and executes them through a world (the real `ToolExecutor`, or a test double).

Modes: ``normal`` rejects every call that is not valid in the presented schema; ``schema_form``
(App. E.1) executes an off-schema call when it is itself a valid native call, so a model that means
the right action but writes it in the wrong form is measured apart from one that does not.
"""

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from factory.tools.spec import ToolSpec
from factory.variants.core import (
    Call,
    Catalog,
    ChainSession,
    CheckedSession,
    Execute,
    Outcome,
    Reject,
    Reply,
    Variant,
    substitute,
)

Mode = Literal["normal", "schema_form"]
MODES = ("normal", "schema_form")
T = TypeVar("T")
ExecuteFn = Callable[[Call], Awaitable[dict[str, Any]]]


class AdapterSession:
    """One episode's decoder: the variant's protocol state over a final check against the native schema."""

    def __init__(self, variant: Variant, native: Catalog, mode: Mode = "normal") -> None:
        if mode not in MODES:
            raise ValueError(f"adapter mode must be one of {MODES}, got {mode!r}")
        self.variant, self.native, self.mode = variant, native, mode
        self._chain = ChainSession([variant.decoder(), CheckedSession(native)])
        self._native = CheckedSession(native)

    def decode(self, call: Call) -> tuple[Outcome, bool]:
        """(outcome, off_schema): off_schema is True when schema-form mode decoded a rejected call."""
        out = self._chain.handle(call)
        if isinstance(out, Reject) and self.mode == "schema_form":
            alt = self._native.handle(call)
            if isinstance(alt, Execute):
                return alt, True
        return out, False


@dataclass
class TraceStep:
    call: Call
    kind: Literal["executed", "reply", "rejected"]
    native: Call | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    reject_kind: str = ""
    off_schema: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "call": self.call.as_dict(),
            "kind": self.kind,
            "native": self.native.as_dict() if self.native else None,
            "reason": self.reason,
            "reject_kind": self.reject_kind,
            "off_schema": self.off_schema,
        }


@dataclass
class TraceRun:
    steps: list[TraceStep]

    @property
    def executed(self) -> list[Call]:
        return [s.native for s in self.steps if s.kind == "executed" and s.native is not None]

    @property
    def rejected(self) -> list[TraceStep]:
        return [s for s in self.steps if s.kind == "rejected"]

    @property
    def results(self) -> list[str]:
        return [str(s.payload.get("digest", "")) for s in self.steps if s.kind == "executed"]


async def run_trace(session: AdapterSession, trace: Sequence[Call], execute: ExecuteFn) -> TraceRun:
    """Replay a variant trace: references filled from earlier replies, each call decoded, native actions
    executed. A call whose reference cannot be filled (its protocol step was rejected) is rejected too."""
    replies: dict[str, dict[str, Any]] = {}
    steps: list[TraceStep] = []
    for raw in trace:
        try:
            call = Call(raw.name, substitute(raw.arguments, replies), raw.label, raw.step)
        except KeyError as e:
            steps.append(TraceStep(raw, "rejected", reason=f"unresolved reference: {e}", reject_kind="protocol"))
            continue
        out, off = session.decode(call)
        if isinstance(out, Reject):
            steps.append(TraceStep(call, "rejected", reason=out.reason, reject_kind=out.kind))
        elif isinstance(out, Reply):
            if call.label:
                replies[call.label] = out.payload
            steps.append(TraceStep(call, "reply", payload=out.payload))
        else:
            result = await execute(out.call)
            if call.label:
                replies[call.label] = result
            steps.append(TraceStep(call, "executed", native=out.call, payload=result, off_schema=off))
    return TraceRun(steps)


# --------------------------------------------------------------------------- worlds


class World(Protocol):
    async def episode(self, body: Callable[[ExecuteFn], Awaitable[T]]) -> tuple[T, dict[str, str | None]]:
        """Run `body(execute)` in an isolated episode; return its value and the state hashes at its end."""
        ...


def result_digest(records: Any, total: Any, ok: bool, outcome: str) -> str:
    blob = json.dumps([ok, outcome, total, records], sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()


class ExecutorWorld:
    """Native actions through a live `ToolExecutor` (keys injected, results redacted); every episode is an
    executor episode, so a state change in one never shows in another; state hashes come from each
    stateful platform's state tool, read in the same episode.

    With `reuse`, a read-only call (not `state_changing`) made while its episode has changed no state is
    sent once and its result reused for the same (tool, arguments) — such a call sees the shared session,
    which no episode changes — and so is the final state read of an episode that changed nothing. A
    decoded call that differs in any argument is a different key and is executed for real.
    """

    def __init__(
        self,
        executor: Any,
        specs: Mapping[str, ToolSpec],
        state_specs: Mapping[str, ToolSpec],
        *,
        reuse: bool = False,
    ) -> None:
        self.ex, self.specs, self.state_specs, self.reuse = executor, dict(specs), dict(state_specs), reuse
        self._memo: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.sent = 0  # calls actually sent to the executor
        self.reused = 0

    async def _send(self, spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
        self.sent += 1
        r = await self.ex.call(spec, dict(args))
        return {
            "ok": r.ok,
            "outcome": r.outcome.value,
            "total_count": r.total_count,
            "record_count": r.record_count,
            "records": r.records,
            "digest": result_digest(r.records if r.records else r.body, r.total_count, r.ok, r.outcome.value),
            **({} if r.ok else {"error": r.detail}),
        }

    async def _memoized(self, spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
        key = json.dumps([spec.platform, spec.name, args], sort_keys=True, ensure_ascii=False, default=str)
        fut = self._memo.get(key)
        if fut is not None:
            self.reused += 1
            return await asyncio.shield(fut)
        fut = asyncio.get_running_loop().create_future()
        self._memo[key] = fut
        try:
            out = await self._send(spec, args)
        except BaseException as e:
            del self._memo[key]
            fut.set_exception(e)
            fut.exception()  # retrieved: waiters get it, nobody else
            raise
        fut.set_result(out)
        return out

    async def episode(self, body: Callable[[ExecuteFn], Awaitable[T]]) -> tuple[T, dict[str, str | None]]:
        changed = False

        async def execute(call: Call) -> dict[str, Any]:
            nonlocal changed
            spec = self.specs.get(call.name)
            if spec is None:
                return {"ok": False, "outcome": "unknown_tool", "digest": "", "error": f"no native tool {call.name!r}"}
            if spec.state_changing:
                changed = True
            if self.reuse and not changed:
                return await self._memoized(spec, call.arguments)
            return await self._send(spec, call.arguments)

        async def go() -> tuple[T, dict[str, str | None]]:
            value = await body(execute)
            states: dict[str, str | None] = {}
            for platform, spec in sorted(self.state_specs.items()):
                r = await (self._memoized(spec, {}) if self.reuse and not changed else self._send(spec, {}))
                rec = r["records"][0] if r["ok"] and r["records"] else None
                states[platform] = str(rec.get("state_hash")) if isinstance(rec, dict) else None
            return value, states

        return await self.ex.in_episode(go())


def state_specs(specs: Sequence[ToolSpec]) -> dict[str, ToolSpec]:
    """platform → its state tool (the tool whose output has `state_hash`), for every platform that has one."""
    out: dict[str, ToolSpec] = {}
    for s in sorted(specs, key=lambda s: s.name):
        if "state_hash" in s.output_fields and s.platform not in out:
            out[s.platform] = s
    return out
