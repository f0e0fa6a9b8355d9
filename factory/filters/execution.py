"""The execution judge of decorative steps (stage 2) and the tool plumbing of stage 3 (pure core, asyncio).

A step is *intermediate* when its output fills arguments of a later call (a `Link`). For each one
the judge re-executes the rest of the trajectory, in a fresh executor session, with

- ``perturb``: the values it passed on replaced by other valid values of the same field (other
  records of the same call, probe samples of the tool, the parameter's examples), up to
  `filters.perturbations` alternatives; later junctions are re-derived from the new results
  (the junction's field, DRV process node and inferred transform);
- ``drop``: the bound arguments removed from the downstream calls.

A step that feeds nothing later and is not read by the answer is re-executed without it (``skip``).

Every variant ends ``same`` (it ran and the answer is unchanged; for ``drop``: the downstream
calls returned exactly the same results), ``changed`` or ``inconclusive`` (a call failed, no
alternative value). The step is decorative when skipping it leaves the answer, dropping its values
leaves the downstream results, or at least two perturbations ran and none changed the answer.
A step that passes on only values the query itself states (seed values) is skippable without
execution.
"""

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factory.filters.compare import as_number, same_answer
from factory.filters.context import Link, TaskContext
from factory.graph.plan import TRANSFORMS, apply_transform
from factory.synthesis import answers
from factory.synthesis.execute import call_row
from factory.synthesis.junctions import apply_operator, distinct_keys, key_of
from factory.tools.executor import ToolExecutor
from factory.tools.fingerprint import sha256_digest
from factory.tools.outcomes import CallResult, is_success_outcome

MakeExecutor = Callable[[], ToolExecutor]


class Sessions:
    """Wraps a `make_executor` factory, remembering every executor it made (for their secrets)."""

    def __init__(self, make_executor: MakeExecutor):
        self._make = make_executor
        self.executors: list[ToolExecutor] = []
        self.calls = 0

    def __call__(self) -> ToolExecutor:
        ex = self._make()
        self.executors.append(ex)
        return ex

    def secrets(self) -> set[str]:
        return {s for ex in self.executors for s in ex.known_secrets()}


# --------------------------------------------------------------------------- running actions


@dataclass
class RunOut:
    results: list[CallResult | None]
    problem: str | None = None  # a call failed, or the re-derived dataflow changed shape
    failed: bool = False  # the problem is a failed call (inconclusive), not a changed structure


def _records(results: Sequence[CallResult | None], idx: Sequence[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in idx:
        r = results[i]
        if r is not None:
            out.extend(r.records)
    return out


def _like(new: Any, orig: Any) -> Any:
    """`new` in the type of the argument it replaces."""
    if isinstance(orig, bool) or new is None:
        return new
    if isinstance(orig, int):
        n = as_number(new)
        return int(n) if n is not None and float(n).is_integer() else new
    if isinstance(orig, float):
        n = as_number(new)
        return n if n is not None else new
    if isinstance(orig, str):
        if isinstance(new, float) and new.is_integer():
            return str(int(new))
        return str(new)
    return new


def _same(a: Any, b: Any) -> bool:
    return str(_like(a, b)) == str(b)


def infer_transforms(link: Link, up_records: Sequence[Mapping[str, Any]], bound: Sequence[tuple]) -> list[str | None]:
    """Per bound field, the binding transform that turns upstream values into the sent arguments."""
    out: list[str | None] = []
    for k, f in enumerate(link.fields):
        vals = [r.get(f) for r in up_records if r.get(f) is not None]
        chosen: str | None = None
        for t in (None, *TRANSFORMS):
            if all(any(_same(apply_transform(v, t), b[k]) for v in vals) for b in bound):
                chosen = t
                break
        out.append(chosen)
    return out


def _keys(link: Link, records: Sequence[Mapping[str, Any]]) -> list[tuple]:
    kept = apply_operator(records, link.process) if link.process else records
    return distinct_keys(kept, list(link.fields))


def _bound(ctx: TaskContext, i: int, link: Link) -> tuple:
    return tuple(ctx.actions[i]["args"].get(p) for p in link.params)


def derive(
    ctx: TaskContext, link: Link, base: Sequence[CallResult | None], new: Sequence[CallResult | None]
) -> dict[int, dict[str, Any]] | str:
    """Arguments of the link's downstream calls re-derived from `new` upstream results (or a problem)."""
    up_idx = [i for i in ctx.step_actions(link.up_step) if ctx.actions[i]["tool"] == link.up_tool]
    old_recs, new_recs = _records(base, up_idx), _records(new, up_idx)
    try:
        k_old, k_new = _keys(link, old_recs), _keys(link, new_recs)
    except (ValueError, TypeError, KeyError) as e:
        return f"process node no longer applies: {e}"
    if len(k_old) != len(k_new):
        return f"{link.up_tool} now yields {len(k_new)} junction value(s) instead of {len(k_old)}"
    bound = [_bound(ctx, i, link) for i in link.down]
    transforms = infer_transforms(link, old_recs, bound)

    def sent(key: tuple, like: tuple) -> tuple:
        return tuple(_like(apply_transform(v, t), o) for v, t, o in zip(key, transforms, like, strict=True))

    out: dict[int, dict[str, Any]] = {}
    for i, b in zip(link.down, bound, strict=True):
        pos = next((j for j, k in enumerate(k_old) if [str(x) for x in sent(k, b)] == [str(x) for x in b]), None)
        if pos is None:
            return f"cannot trace {b} of {ctx.actions[i]['tool']} back to {link.up_tool}"
        out[i] = {**ctx.actions[i]["args"], **dict(zip(link.params, sent(k_new[pos], b), strict=True))}
    return out


async def run_variant(
    ctx: TaskContext,
    make_executor: MakeExecutor,
    base: Sequence[CallResult | None],
    start_step: int,
    override: Mapping[int, dict[str, Any]],
    skip: frozenset[int] = frozenset(),
    relink: bool = True,
) -> RunOut:
    """Re-execute from `start_step` (earlier steps reuse `base`), `override` args, `skip` actions;
    with `relink`, the arguments of links whose upstream step was re-executed are re-derived."""
    results: list[CallResult | None] = [None] * len(ctx.actions)
    async with make_executor() as ex:
        for step in ctx.steps():
            idx = ctx.step_actions(step)
            if step < start_step:
                for i in idx:
                    results[i] = base[i]
                continue
            args: dict[int, dict[str, Any]] = {}
            for lk in ctx.links if relink else []:
                if lk.down_step == step and lk.up_step >= start_step:
                    d = derive(ctx, lk, base, results)
                    if isinstance(d, str):
                        return RunOut(results, d)
                    args.update(d)
            args.update({i: a for i, a in override.items() if i in idx})
            todo = [i for i in idx if i not in skip]
            got = await ex.call_many(
                [
                    (f"{ctx.actions[i]['platform']}.{ctx.actions[i]['tool']}", args.get(i, ctx.actions[i]["args"]))
                    for i in todo
                ]
            )
            for i, r in zip(todo, got, strict=True):
                results[i] = r
                if not r.outcome.is_success:
                    return RunOut(results, f"step {step} {r.tool}: {r.outcome.value} {r.detail}"[:200], failed=True)
    return RunOut(results)


def answer_of(ctx: TaskContext, results: Sequence[CallResult | None]) -> dict[str, Any] | None:
    """The answer recomputed from executed results (None when it reads a skipped call)."""
    rows: list[dict[str, Any] | None] = []
    for i, r in enumerate(results):
        if r is None:
            rows.append(None)
            continue
        row = call_row(r, ctx.actions[i]["step"], ctx.actions[i]["tool"])
        row["records_list"] = r.records
        rows.append(row)
    if any(rows[i] is None for i in ctx.answer_actions if i < len(rows)):
        return None
    try:
        return answers.compute(ctx.task["answer_spec"], rows, ctx.actions)
    except (IndexError, KeyError, TypeError, ValueError):
        return None


async def baseline(ctx: TaskContext, make_executor: MakeExecutor) -> RunOut:
    return await run_variant(ctx, make_executor, [None] * len(ctx.actions), 0, {}, relink=False)


# --------------------------------------------------------------------------- variants of one step


@dataclass
class StepFinding:
    step: int
    tool: str
    kind: str  # intermediate | unused
    decorative: bool = False
    how: str = ""  # skippable | perturb | drop | skip
    outcomes: dict[str, list[str]] = field(default_factory=dict)  # variant kind → same/changed/inconclusive
    detail: str = ""

    def summary(self) -> str:
        counts = {
            k: {o: v.count(o) for o in ("same", "changed", "inconclusive") if o in v} for k, v in self.outcomes.items()
        }
        return f"step {self.step} ({self.tool}, {self.kind}): {counts or 'no variant'}"


def alternatives(
    ctx: TaskContext,
    link: Link,
    base: Sequence[CallResult | None],
    probes: Sequence[Mapping[str, Any]],
) -> tuple[list[tuple], list[tuple]]:
    """(original bound tuples, alternative tuples) for a link, alternatives deterministic and distinct."""
    bound: list[tuple] = []
    for i in link.down:
        b = _bound(ctx, i, link)
        if b not in bound:
            bound.append(b)
    up_idx = [i for i in ctx.step_actions(link.up_step) if ctx.actions[i]["tool"] == link.up_tool]
    up_recs = _records(base, up_idx)
    transforms = infer_transforms(link, up_recs, bound)
    fields = list(link.fields)
    raw: list[tuple] = list(distinct_keys(up_recs, fields))
    same_tool = [p for p in probes if p.get("tool") == link.up_tool]
    other = [p for p in probes if p.get("tool") != link.up_tool]
    for p in [*same_tool, *other]:
        rec = p.get("first_record") or {}
        if is_success_outcome(p.get("outcome")) and isinstance(rec, Mapping):
            k = key_of(rec, fields)
            if k is not None:
                raw.append(k)
    if len(link.params) == 1:
        spec = next((ctx.specs[i] for i in link.down if ctx.specs[i] is not None), None)
        if spec is not None:
            schema = spec.params.get(link.params[0]) or {}
            raw += [(v,) for v in [*(schema.get("examples") or []), *(schema.get("enum") or [])]]
    seen = {tuple(str(x) for x in b) for b in bound}
    alts: list[tuple] = []
    for k in raw:
        t = tuple(_like(apply_transform(v, tr), o) for v, tr, o in zip(k, transforms, bound[0], strict=True))
        s = tuple(str(x) for x in t)
        if s not in seen and all(x not in (None, "") for x in t):
            seen.add(s)
            alts.append(t)
    return bound, alts


async def judge_step_links(
    ctx: TaskContext,
    step: int,
    make_executor: MakeExecutor,
    base: RunOut,
    base_answer: Mapping[str, Any],
    probes: Sequence[Mapping[str, Any]],
    n_perturb: int,
    sem: asyncio.Semaphore,
) -> StepFinding:
    links = ctx.links_from(step)
    tool = "+".join(sorted({ctx.actions[i]["tool"] for i in ctx.step_actions(step)}))
    finding = StepFinding(step=step, tool=tool, kind="intermediate")

    async def run(override: dict[int, dict[str, Any]], down_step: int) -> RunOut:
        async with sem:
            return await run_variant(ctx, make_executor, base.results, down_step, override)

    def verdict_of(out: RunOut) -> str:
        if out.problem is not None:
            return "inconclusive" if out.failed else "changed"
        ans = answer_of(ctx, out.results)
        return "changed" if ans is None or not same_answer(base_answer, ans) else "same"

    def digest(r: CallResult | None) -> str | None:
        return None if r is None else sha256_digest([r.records, r.total_count])

    def drop_verdict(out: RunOut, down: Sequence[int]) -> str:
        if out.problem is not None:
            return "inconclusive" if out.failed else "changed"
        same_rows = all(digest(out.results[i]) == digest(base.results[i]) for i in down)
        ans = answer_of(ctx, out.results)
        return "same" if same_rows and ans is not None and same_answer(base_answer, ans) else "changed"

    kinds: list[tuple[str, tuple[int, ...]]] = []
    jobs = []
    for lk in links:
        bound, alts = alternatives(ctx, lk, base.results, probes)
        m = len(bound)
        for k in range(min(n_perturb, len(alts) // m if m else 0)):
            mapping = {tuple(str(x) for x in b): alts[k * m + j] for j, b in enumerate(bound)}
            override = {}
            for i in lk.down:
                new = mapping[tuple(str(x) for x in _bound(ctx, i, lk))]
                override[i] = {**ctx.actions[i]["args"], **dict(zip(lk.params, new, strict=True))}
            kinds.append(("perturb", lk.down))
            jobs.append(run(override, lk.down_step))
        drop = {i: {k: v for k, v in ctx.actions[i]["args"].items() if k not in lk.params} for i in lk.down}
        kinds.append(("drop", lk.down))
        jobs.append(run(drop, lk.down_step))
    outs = await asyncio.gather(*jobs)
    for (kind, down), out in zip(kinds, outs, strict=True):
        v = drop_verdict(out, down) if kind == "drop" else verdict_of(out)
        finding.outcomes.setdefault(kind, []).append(v)
    perturb = finding.outcomes.get("perturb", [])
    ran = [v for v in perturb if v != "inconclusive"]
    if "same" in finding.outcomes.get("drop", []):
        finding.decorative, finding.how = True, "drop"
        finding.detail = (
            f"dropping the value(s) step {step} ({tool}) passes on leaves the downstream results and the answer "
            f"unchanged"
        )
    elif len(ran) >= 2 and all(v == "same" for v in ran):
        finding.decorative, finding.how = True, "perturb"
        finding.detail = (
            f"replacing the value(s) step {step} ({tool}) passes on by {len(ran)} other valid values re-executes to "
            f"the same answer {base_answer.get('value')!r}"
        )
    else:
        finding.detail = finding.summary()
    return finding


async def judge_unused_step(
    ctx: TaskContext,
    step: int,
    make_executor: MakeExecutor,
    base: RunOut,
    base_answer: Mapping[str, Any],
    sem: asyncio.Semaphore,
) -> StepFinding:
    tool = "+".join(sorted({ctx.actions[i]["tool"] for i in ctx.step_actions(step)}))
    finding = StepFinding(step=step, tool=tool, kind="unused")
    async with sem:
        out = await run_variant(ctx, make_executor, base.results, step, {}, frozenset(ctx.step_actions(step)))
    if out.problem is not None:
        v = "inconclusive" if out.failed else "changed"
    else:
        ans = answer_of(ctx, out.results)
        v = "same" if ans is not None and same_answer(base_answer, ans) else "changed"
    finding.outcomes["skip"] = [v]
    if v == "same":
        finding.decorative, finding.how = True, "skip"
        finding.detail = (
            f"step {step} ({tool}) feeds no later call and the answer does not read it: re-executed without it, the "
            f"answer is unchanged"
        )
    else:
        finding.detail = finding.summary()
    return finding


def skippable(ctx: TaskContext, step: int) -> str | None:
    """A step whose passed-on values are all values the query states (seeds, thresholds): skippable."""
    if any(i in ctx.answer_actions for i in ctx.step_actions(step)):
        return None
    passed = ctx.passed_values(step)
    allowed = {str(v).casefold() for v in ctx.allowed_values}
    if passed and all(str(v).casefold() in allowed for v in passed):
        shown = ", ".join(repr(v) for v in passed[:4])
        tool = "+".join(sorted({ctx.actions[i]["tool"] for i in ctx.step_actions(step)}))
        return f"step {step} ({tool}) only passes on {shown}, which the query already states: the step can be skipped"
    return None


@dataclass
class ExecutionJudgement:
    ran: bool
    decorative: bool = False
    how: str = ""  # skippable | perturb | drop | skip
    detail: str = ""
    findings: list[StepFinding] = field(default_factory=list)
    variants: int = 0


async def judge_decorative(
    ctx: TaskContext,
    make_executor: MakeExecutor,
    probes: Sequence[Mapping[str, Any]],
    n_perturb: int,
    sem: asyncio.Semaphore,
    execute: bool = True,
) -> ExecutionJudgement:
    """The rules/execution judge of decorative steps for one task."""
    steps = ctx.steps()
    last = steps[-1] if steps else 0
    candidates = [s for s in steps if s != last and not ctx.key_step(s)]
    for s in candidates:
        why = skippable(ctx, s)
        if why:
            return ExecutionJudgement(ran=False, decorative=True, how="skippable", detail=why)
    inter = [s for s in candidates if ctx.links_from(s)]
    unused = [
        s for s in candidates if not ctx.links_from(s) and not any(i in ctx.answer_actions for i in ctx.step_actions(s))
    ]
    if not execute or not (inter or unused):
        return ExecutionJudgement(ran=False, detail="no intermediate or unused step" if not (inter or unused) else "")
    async with sem:
        base = await baseline(ctx, make_executor)
    if base.problem is not None:
        return ExecutionJudgement(ran=False, detail=f"baseline re-execution failed ({base.problem}); not judged")
    base_answer = answer_of(ctx, base.results)
    if base_answer is None:
        return ExecutionJudgement(ran=False, detail="the answer could not be recomputed from the re-execution")
    jobs = [judge_step_links(ctx, s, make_executor, base, base_answer, probes, n_perturb, sem) for s in inter]
    jobs += [judge_unused_step(ctx, s, make_executor, base, base_answer, sem) for s in unused]
    findings = list(await asyncio.gather(*jobs))
    variants = sum(len(v) for f in findings for v in f.outcomes.values())
    hit = next((f for f in findings if f.decorative), None)
    if hit is not None:
        return ExecutionJudgement(True, True, hit.how, hit.detail, findings, variants)
    return ExecutionJudgement(
        True,
        False,
        "",
        "every intermediate step changes the answer when perturbed: " + "; ".join(f.summary() for f in findings),
        findings,
        variants,
    )
