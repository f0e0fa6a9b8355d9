"""The variant validator (§3.4), a blocking check: every task's reference trace a* is encoded into the
variant, replayed through the execution adapter and executed; the variant passes only when, for every
task, the decoded native actions equal a* (same operations, same arguments, same order), nothing was
rejected, every call returned what it returns natively, and the final state hashes equal native's.
"""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from factory.variants.actions import NativeAction, as_trace
from factory.variants.adapter import AdapterSession, ExecuteFn, TraceRun, World, run_trace
from factory.variants.core import Call, Catalog, Variant

FAILURES = ("encode", "rejected", "actions", "results", "state")


@dataclass
class TaskCheck:
    variant: str
    task: str
    passed: bool
    failure: str = ""  # one of FAILURES
    detail: str = ""
    calls: int = 0  # variant calls in the trace
    trace: list[Call] = field(default_factory=list)
    run: TraceRun | None = None

    def row(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "task": self.task,
            "passed": self.passed,
            "failure": self.failure or None,
            "detail": self.detail,
            "calls": self.calls,
        }


@dataclass
class Reference:
    """A task's native run: its actions' keys, result digests and final state hashes."""

    keys: list[str]
    results: list[str]
    state: dict[str, str | None]


async def _replay(world: World, session: AdapterSession, trace: Sequence[Call]) -> tuple[TraceRun, dict[str, Any]]:
    async def body(execute: ExecuteFn) -> TraceRun:
        return await run_trace(session, trace, execute)

    return await world.episode(body)


def _first_difference(got: list[str], want: list[str]) -> str:
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return f"call {i}: got {g}, want {w}"
    return f"{len(got)} calls, want {len(want)}"


async def check_task(
    world: World, variant: Variant, native: Catalog, task_id: str, actions: Sequence[NativeAction], ref: Reference
) -> TaskCheck:
    try:
        trace = variant.encoder(as_trace(actions))
    except Exception as e:  # an encoder that cannot express a* fails the variant, with why
        return TaskCheck(variant.id, task_id, False, "encode", f"{type(e).__name__}: {e}")
    run, state = await _replay(world, AdapterSession(variant, native, "normal"), trace)
    check = TaskCheck(variant.id, task_id, True, calls=len(trace), trace=trace, run=run)
    keys = [c.key() for c in run.executed]
    if run.rejected:
        s = run.rejected[0]
        check.passed, check.failure, check.detail = False, "rejected", f"{s.call.name}: {s.reason}"
    elif keys != ref.keys:
        check.passed, check.failure, check.detail = False, "actions", _first_difference(keys, ref.keys)
    elif run.results != ref.results:
        check.passed, check.failure = False, "results"
        check.detail = _first_difference(run.results, ref.results)
    elif state != ref.state:
        check.passed, check.failure, check.detail = False, "state", f"state {state} != native {ref.state}"
    return check


async def reference_run(world: World, native: Catalog, actions: Sequence[NativeAction]) -> Reference:
    from factory.variants.core import identity

    run, state = await _replay(world, AdapterSession(identity(native), native), as_trace(actions))
    return Reference([c.key() for c in run.executed], run.results, state)


@dataclass
class Validation:
    checks: list[TaskCheck]
    native_failures: dict[str, str]  # task → why its native run is not a usable reference

    def passed(self, variant: str) -> bool:
        mine = [c for c in self.checks if c.variant == variant]
        return bool(mine) and all(c.passed for c in mine)

    def by_variant(self) -> dict[str, list[TaskCheck]]:
        out: dict[str, list[TaskCheck]] = {}
        for c in self.checks:
            out.setdefault(c.variant, []).append(c)
        return out


async def avalidate(
    world: World,
    native: Catalog,
    variants: Sequence[Variant],
    tasks: Sequence[tuple[str, Sequence[NativeAction]]],
    concurrency: int = 8,
) -> Validation:
    """Check every variant on every task (see module doc). A task whose native run is rejected or fails
    is no reference (reported in `native_failures`) and is left out of every variant's check."""
    sem = asyncio.Semaphore(max(1, concurrency))

    async def bounded(aw: Any) -> Any:
        async with sem:
            return await aw

    refs = await asyncio.gather(*(bounded(reference_run(world, native, a)) for _, a in tasks))
    usable: list[tuple[str, Sequence[NativeAction], Reference]] = []
    bad: dict[str, str] = {}
    for (tid, actions), ref in zip(tasks, refs, strict=True):
        want = [a.key() for a in actions]
        if ref.keys != want:
            bad[tid] = "native trace rejected by the native schema: " + _first_difference(ref.keys, want)
        else:
            usable.append((tid, actions, ref))
    checks = await asyncio.gather(
        *(bounded(check_task(world, v, native, tid, a, ref)) for v in variants for tid, a, ref in usable)
    )
    return Validation(list(checks), bad)


def validate(
    world: World,
    native: Catalog,
    variants: Sequence[Variant],
    tasks: Sequence[tuple[str, Sequence[NativeAction]]],
    concurrency: int = 8,
) -> Validation:
    return asyncio.run(avalidate(world, native, variants, tasks, concurrency))
