"""Stage 2 of the cascade: static judges plus the execution judge (EDGE App. F, stage 2).

Three checks, each answered by independent judges:

| check | rules/execution judge | model judge (when a backend is mapped to the role) |
| --- | --- | --- |
| answer_leakage | `rules.answer_leakage` (answer and bridge values vs the query) | judge_answer_leakage |
| non_gradable | `rules.non_gradable` | judge_non_gradable |
| decorative_step | skippable steps + execution perturbation (`execution.judge_decorative`) | judge_decorative_chain |

With only rules, the rules/execution judge decides. Where a model serves the role, removal needs
`filters.judges_to_remove` judges to agree; a defect found by fewer is recorded as a verdict with
action ``keep``. A model judge that returned no valid reply (or whose reply was replaced by the
rules fallback, which is not independent) abstains and is recorded as such.
"""

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from factory.config import ProjectConfig
from factory.filters.compare import as_number, norm_text
from factory.filters.context import TaskContext
from factory.filters.execution import MakeExecutor, judge_decorative
from factory.llm.client import ModelClient
from factory.llm.errors import LLMError
from factory.llm.roles import role
from factory.llm.schemas import (
    AnswerLeakageInput,
    AnswerMaterial,
    DecorativeChainInput,
    JudgeVerdict,
    NonGradableInput,
    TrajectoryStep,
)
from factory.records import Stage, Verdict

STAGE: Stage = "judges"
CHECK_ROLES: dict[str, str] = {
    "answer_leakage": "judge_answer_leakage",
    "non_gradable": "judge_non_gradable",
    "decorative_step": "judge_decorative_chain",
}


@dataclass
class Opinion:
    """One judge's answer to one check: defect True/False, or None when it abstained."""

    judge: str
    defect: bool | None
    reason: str


def combine(check: str, opinions: Sequence[Opinion], need: int, model_mapped: bool) -> tuple[bool, list[Verdict]]:
    """Remove or keep, and one verdict per judge (action reject / keep / none)."""
    votes = [o for o in opinions if o.defect is not None]
    found = [o for o in votes if o.defect]
    required = max(1, min(need, len(votes))) if model_mapped else 1
    remove = len(found) >= required
    out: list[Verdict] = []
    for o in opinions:
        if o.defect is None:
            out.append(
                Verdict(stage=STAGE, check=check, passed=True, judge=o.judge, detail=f"abstained: {o.reason}"[:500])
            )
        elif o.defect:
            detail = o.reason
            if not remove:
                detail += f" — kept: {len(found)} of {len(votes)} judges found the defect, {required} must agree"
            out.append(
                Verdict(
                    stage=STAGE,
                    check=check,
                    passed=False,
                    reason=check,
                    judge=o.judge,
                    detail=detail[:500],
                    action="reject" if remove else "keep",
                )
            )
        else:
            out.append(Verdict(stage=STAGE, check=check, passed=True, judge=o.judge, detail=o.reason[:500]))
    return remove, out


# --------------------------------------------------------------------------- judge inputs


def _scalars(value: Any) -> list[str | int | float | bool]:
    vals = value if isinstance(value, list | tuple) else [value]
    return [v for v in vals if isinstance(v, str | int | float | bool)]


def leakage_input(ctx: TaskContext) -> AnswerLeakageInput:
    """The query may state seeds and thresholds; a non-numeric answer is never allowed to appear (except the
    options of a CMP question, whose answer is necessarily one of the values compared)."""
    t = ctx.task
    values = _scalars(t["answer"]["value"])
    allowed = [v for v in ctx.allowed_values if isinstance(v, str | int | float | bool)]
    if (t.get("answer_spec") or {}).get("kind") != "cmp":
        texts = {norm_text(v) for v in values if isinstance(v, str) and as_number(v) is None}
        allowed = [v for v in allowed if norm_text(v) not in texts]
    allowed_norm = {norm_text(v) for v in allowed}
    bridges = [b for b in ctx.bridges if isinstance(b, str | int | float) and norm_text(b) not in allowed_norm]
    return AnswerLeakageInput(
        query=t["query"],
        answer=t["answer"]["text"],
        language=ctx.language,  # type: ignore[arg-type]
        answer_values=values,
        intermediate_values=bridges,
        seed_values=allowed,
    )


def gradable_input(ctx: TaskContext, max_items: int) -> NonGradableInput:
    t = ctx.task
    v = t["answer"]["value"]
    return NonGradableInput(
        query=t["query"],
        answer=t["answer"]["text"],
        language=ctx.language,  # type: ignore[arg-type]
        answer_type=t["answer"]["type"],
        answer_items=len(v) if isinstance(v, list) else None,
        realtime=bool(ctx.realtime_actions()),
        fixed_time=(t.get("system_state") or {}).get("current_date") or None,
        max_list_items=max_items,
    )


def _brief(args: Mapping[str, Any], generic: set[str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items() if k not in generic and v != "<KEY>")[:120]


def decorative_input(ctx: TaskContext) -> DecorativeChainInput:
    steps: list[TrajectoryStep] = []
    for s in ctx.steps():
        if ctx.key_step(s):
            continue
        idx = [i for i in ctx.step_actions(s) if i not in ctx.key_actions]
        first = ctx.actions[idx[0]]
        spec = ctx.specs[idx[0]]
        generic = spec.generic_params.names() if spec is not None else set()
        tools = sorted({ctx.actions[i]["tool"] for i in idx})
        steps.append(
            TrajectoryStep(
                step=s,
                tool="+".join(tools),
                summary=f"{' + '.join(tools)}({_brief(first['args'], generic)})"
                + (f" ×{len(idx)}" if len(idx) > 1 else ""),
                args={k: v for k, v in first["args"].items() if k not in generic},
                result_count=sum(int(ctx.actions[i].get("records") or 0) for i in idx),
                passed_values=_scalars(ctx.passed_values(s)),
                feeds_answer=any(i in ctx.answer_actions for i in idx),
            )
        )
    if not steps:
        steps = [TrajectoryStep(step=1, tool="none", summary="no call")]
    ans = ctx.task["answer"]
    kind: Literal["list", "number", "string"] = (
        "list" if isinstance(ans["value"], list) else "number" if ans["type"] == "number" else "string"
    )
    return DecorativeChainInput(
        query=ctx.task["query"],
        language=ctx.language,  # type: ignore[arg-type]
        steps=steps,
        answer=AnswerMaterial(
            type=kind,
            value=ans["value"],
            fields=list(ans.get("fields") or []),
            description=", ".join(ans.get("fields") or []) or "the answer",
        ),
    )


# --------------------------------------------------------------------------- running judges


@dataclass
class JudgeStats:
    judges: dict[str, list[str]] = field(default_factory=dict)  # check → judges that voted
    disagreements: dict[str, int] = field(default_factory=dict)
    model_errors: list[str] = field(default_factory=list)
    steps_tested: int = 0
    variants_run: int = 0
    decorative_by: dict[str, int] = field(default_factory=dict)


def model_mapped(llm: ModelClient | None, role_name: str) -> bool:
    return llm is not None and llm.uses_model(role_name)


async def _model_opinions(
    llm: ModelClient | None, role_name: str, inputs: Sequence[Any], stats: JudgeStats
) -> list[Opinion | None]:
    if llm is None or not model_mapped(llm, role_name) or not inputs:
        return [None] * len(inputs)
    try:
        results = await llm.amap(role_name, list(inputs))
    except LLMError as e:  # an unreachable backend: every model opinion abstains, recorded
        stats.model_errors.append(f"{role_name}: {e}"[:300])
        impl = llm.implementation(role_name)
        return [Opinion(f"model:{impl['backend']}/{impl['model']}", None, f"backend error: {e}"[:200])] * len(inputs)
    out: list[Opinion | None] = []
    for r in results:
        judge = f"model:{r.backend if not r.fallback else (r.failure.backend if r.failure else r.backend)}/" + (
            r.model if not r.fallback else (r.failure.model if r.failure else r.model)
        )
        if r.output is None or r.fallback:
            err = r.failure.error if r.failure else "no output"
            out.append(Opinion(judge, None, f"no valid reply ({err}); the rules fallback is not an independent judge"))
        else:
            v: JudgeVerdict = r.output
            out.append(Opinion(judge, bool(v.verdict), v.reason))
    return out


def _rules_opinion(role_name: str, inp: Any) -> Opinion:
    v: JudgeVerdict = role(role_name).rules(inp)
    return Opinion("rules", bool(v.verdict), v.reason)


def _decide(
    check: str, rules_op: Opinion, model_op: Opinion | None, cfg: ProjectConfig, stats: JudgeStats
) -> tuple[bool, list[Verdict]]:
    ops = [rules_op] + ([model_op] if model_op is not None else [])
    stats.judges.setdefault(check, [])
    for o in ops:
        if o.defect is not None and o.judge not in stats.judges[check]:
            stats.judges[check].append(o.judge)
    remove, verdicts = combine(check, ops, cfg.filters.judges_to_remove, model_op is not None)
    if any(v.action == "keep" for v in verdicts) or (
        len([o for o in ops if o.defect is not None]) == 2 and len({o.defect for o in ops}) == 2
    ):
        stats.disagreements[check] = stats.disagreements.get(check, 0) + 1
    return remove, verdicts


async def static_judges(
    ctxs: Sequence[TaskContext], cfg: ProjectConfig, llm: ModelClient | None, stats: JudgeStats
) -> list[tuple[str | None, str, list[Verdict]]]:
    """answer_leakage and non_gradable for every task: (reason or None, detail, verdicts)."""
    leak_in = [leakage_input(c) for c in ctxs]
    grade_in = [gradable_input(c, cfg.filters.max_list_items) for c in ctxs]
    leak_m, grade_m = await asyncio.gather(
        _model_opinions(llm, CHECK_ROLES["answer_leakage"], leak_in, stats),
        _model_opinions(llm, CHECK_ROLES["non_gradable"], grade_in, stats),
    )
    out = []
    for k in range(len(ctxs)):
        verdicts: list[Verdict] = []
        reason, detail = None, ""
        for check, inp, mop in (
            ("answer_leakage", leak_in[k], leak_m[k]),
            ("non_gradable", grade_in[k], grade_m[k]),
        ):
            remove, vs = _decide(check, _rules_opinion(CHECK_ROLES[check], inp), mop, cfg, stats)
            verdicts += vs
            if remove and reason is None:
                reason = check
                detail = next(v.detail for v in vs if v.action == "reject")
        out.append((reason, detail, verdicts))
    return out


async def decorative_judges(
    ctxs: Sequence[TaskContext],
    cfg: ProjectConfig,
    llm: ModelClient | None,
    make_executor: MakeExecutor,
    probes: Sequence[Mapping[str, Any]],
    sem: asyncio.Semaphore,
    stats: JudgeStats,
    progress: Callable[[str], None] = lambda m: None,
) -> list[tuple[str | None, str, list[Verdict]]]:
    """decorative_step for every task: the rules/execution judge, and a model judge where mapped."""
    dec_in = [decorative_input(c) for c in ctxs]
    execs, model_ops = await asyncio.gather(
        asyncio.gather(
            *(
                judge_decorative(
                    c, make_executor, probes, cfg.filters.perturbations, sem, cfg.filters.perturb_intermediate
                )
                for c in ctxs
            )
        ),
        _model_opinions(llm, CHECK_ROLES["decorative_step"], dec_in, stats),
    )
    out = []
    for inp, ex, mop in zip(dec_in, execs, model_ops, strict=True):
        stats.steps_tested += len(ex.findings)
        stats.variants_run += ex.variants
        if ex.decorative:
            stats.decorative_by[ex.how] = stats.decorative_by.get(ex.how, 0) + 1
        if ex.decorative or ex.ran:
            judge = "execution" if ex.ran else "rules"
            rules_op = Opinion(judge, ex.decorative, ex.detail or "no decorative step")
        else:  # nothing executed (no intermediate step, execution off or not possible): the static rules judge
            v: JudgeVerdict = role(CHECK_ROLES["decorative_step"]).rules(inp)
            rules_op = Opinion("rules", bool(v.verdict), v.reason + (f" ({ex.detail})" if ex.detail else ""))
        remove, vs = _decide("decorative_step", rules_op, mop, cfg, stats)
        detail = next((v.detail for v in vs if v.action == "reject"), "")
        out.append(("decorative_step" if remove else None, detail, vs))
    progress(f"judges: decorative steps tested {stats.steps_tested}, variants executed {stats.variants_run}")
    return out
