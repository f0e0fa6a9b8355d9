"""The judged_queries stage: the three-stage filter cascade of EDGE Appendix F (pure core, no Dagster).

    value, meta = judge_tasks(domain, tasks, trajectories, inventories, cfg, llm, make_executor, progress)

Stages run in order of increasing cost, and a task rejected at one stage goes no further:

1. ``rules`` (`stage_rules`): malformed_schema, non_reproducible, error_ground_truth,
   malformed_query, then near_duplicate among the tasks that passed;
2. ``judges`` (`stage_judges`): answer_leakage and non_gradable (rules judge, plus a model judge
   where one is mapped), then decorative_step (skippable steps and execution perturbation, plus a
   model judge where mapped); removal by agreement (`filters.judges_to_remove`);
3. ``resolve`` (`stage_resolve`): replay of the golden trajectory now (replay_failed / stale_label),
   agent re-solving where configured (a confirmed re-solution replaces a stale answer).

Every check that ran on a task is a `Verdict` in task.lineage.verdicts. The value::

    {"domain", "language",
     "kept": [Task],
     "rejected": [{"task": Task, "stage": rules|judges|resolve, "reason": code, "detail": str}],
     "counts": {"candidates", "kept", "by_stage", "by_reason", "answers_replaced"}}

Reason codes come from the closed set in `factory.filters.reasons`. Stage 2 and 3 execution is
asyncio-concurrent (`filters.concurrency` tasks at once; calls bounded per platform by the executor).
"""

import asyncio
import copy
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from factory.config import ProjectConfig
from factory.filters import reasons
from factory.filters.context import TaskContext, build_context
from factory.filters.execution import MakeExecutor, Sessions
from factory.filters.stage_judges import CHECK_ROLES, JudgeStats, decorative_judges, model_mapped, static_judges
from factory.filters.stage_resolve import (
    AGENT_ROLE,
    ResolveStats,
    agent_one,
    agent_status,
    decide,
    is_stale,
    replay_one,
)
from factory.filters.stage_rules import ORDER, NearDuplicates, run_rules
from factory.llm.client import ModelClient
from factory.records import Task, Verdict
from factory.report import bar_plot, md_table, rate
from factory.retrieval import decontam
from factory.tools.executor import KEY_PLACEHOLDER
from factory.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


class FilterInputError(ValueError):
    """The cascade's input is not what it needs (named precisely)."""


def _tasks_of(tasks: Any) -> list[dict[str, Any]]:
    if isinstance(tasks, Mapping):
        if not isinstance(tasks.get("tasks"), list):
            raise FilterInputError("judge_tasks: expected a list of tasks or a generated_queries value with 'tasks'")
        tasks = tasks["tasks"]
    if not isinstance(tasks, Sequence) or isinstance(tasks, str | bytes):
        raise FilterInputError(f"judge_tasks: tasks must be a list, got {type(tasks).__name__}")
    out = []
    for i, t in enumerate(tasks):
        if not isinstance(t, Mapping):
            raise FilterInputError(f"judge_tasks: task {i} is a {type(t).__name__}, not an object")
        out.append(copy.deepcopy(dict(t)))
    return out


def _lineage_verdicts(task: dict[str, Any]) -> list[dict[str, Any]]:
    lin = task.get("lineage")
    if not isinstance(lin, dict):  # a broken record still gets its verdicts; nothing of it is dropped
        lin = task["lineage"] = {} if lin is None else {"unreadable": lin}
    if not isinstance(lin.get("verdicts"), list):
        lin["verdicts"] = []
    return lin["verdicts"]


def _record(task: dict[str, Any], verdicts: Sequence[Verdict]) -> None:
    lst = _lineage_verdicts(task)
    lst.extend(v.model_dump(mode="json") for v in verdicts)


def _probe_rows(probes: Mapping[str, Any] | None, domain: str) -> list[dict[str, Any]]:
    if not probes:
        return []
    rows: list[dict[str, Any]] = []
    for d in [domain, *sorted(k for k in probes if k != domain)]:
        rows += list((probes.get(d) or {}).get("rows") or [])
    return rows


def _redact(obj: Any, secrets: set[str]) -> tuple[Any, int]:
    """Replace every known secret by <KEY>; returns (object, replacements)."""
    secrets = {s for s in secrets if s and s != KEY_PLACEHOLDER}
    if not secrets:
        return obj, 0
    text = json.dumps(obj, ensure_ascii=False)
    n = 0
    for s in sorted(secrets, key=len, reverse=True):
        c = text.count(s)
        if c:
            n += c
            text = text.replace(s, KEY_PLACEHOLDER)
    return (json.loads(text) if n else obj), n


def _benchmark_index(cfg: ProjectConfig, inventories: Mapping[str, Any]):
    """The reverse contamination filter: configured benchmark files (None when none are configured)."""
    if not cfg.splits.benchmarks:
        return None
    from factory.splits.contamination import BenchmarkIndex
    from factory.splits.structure import key_tools_of_inventories

    return BenchmarkIndex.load(
        cfg.splits.benchmarks,
        cfg.splits,
        key_tools=key_tools_of_inventories(inventories),
        base_dir=cfg.project_dir,
    )


def _benchmark_verdict(index: Any, task: Mapping[str, Any]) -> Verdict:
    hits = index.collisions_for_task(task)
    if not hits:
        return Verdict(stage="rules", check="benchmark_collision", passed=True, detail="no benchmark row collides")
    h = hits[0]
    return Verdict(
        stage="rules",
        check="benchmark_collision",
        passed=False,
        reason="benchmark_collision",
        detail=f"{h.kind} of {h.benchmark}:{h.line} (id {h.benchmark_id}), Jaccard {h.similarity:.3f}",
    )


def _rag_verdict(task: Mapping[str, Any], evidence: Sequence[Any], cfg: ProjectConfig) -> Verdict:
    """Decontamination rule (b) on a RAG-only task: dropped when an executed API response answers it."""
    hit = decontam.rag_answerable(task, evidence, cfg.retrieval.min_value_chars)
    if hit is None:
        return Verdict(stage="rules", check=decontam.RAG_REASON, passed=True,
                       detail=f"no API record of {len(evidence)} states the answer with a value the question names")  # fmt: skip
    return Verdict(
        stage="rules", check=decontam.RAG_REASON, passed=False, reason=decontam.RAG_REASON, detail=hit["detail"]
    )


def judge_tasks(
    domain: str,
    tasks: Any,
    trajectories_value: Mapping[str, Any] | None,
    inventories: Mapping[str, Any],
    cfg: ProjectConfig,
    llm: ModelClient | None,
    make_executor: MakeExecutor,
    progress: Callable[[str], None] = log.info,
    *,
    probes: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the cascade on one domain's candidate tasks; see the module docstring for the value."""
    t_start = time.monotonic()
    language = cfg.domain(domain).language if domain in cfg.domain_names else "en"
    candidates = _tasks_of(tasks)
    specs = ToolRegistry.from_inventories(inventories, probes)
    trajs = {t.get("trajectory_id"): t for t in (trajectories_value or {}).get("trajectories") or []}
    sessions = Sessions(make_executor)
    rejected: list[dict[str, Any]] = []
    elapsed: dict[str, float] = {}

    def reject(task: dict[str, Any], stage: str, reason: str, detail: str) -> None:
        reasons.stage_of(reason)  # only codes of the closed set leave the cascade
        rejected.append({"task": task, "stage": stage, "reason": reason, "detail": detail})

    # ---------------------------------------------------------------- stage 1: rules
    t0 = time.monotonic()
    evidence: list[decontam.ApiRecord] | None = None

    def api_evidence() -> list[decontam.ApiRecord]:  # built once, when the first RAG-only task needs it
        nonlocal evidence
        if evidence is None:
            evidence = decontam.api_records(
                [r for r in _probe_rows(probes, domain) if r.get("platform") != "retrieval"],
                (trajectories_value or {}).get("trajectories") or [],
            )
        return evidence

    dup = NearDuplicates(cfg.filters.near_duplicate_threshold)
    bench = _benchmark_index(cfg, inventories)
    stage2: list[TaskContext] = []
    for task in candidates:
        try:
            ctx = build_context(task, trajs.get((task.get("lineage") or {}).get("trajectory_id")), specs)
            verdicts = run_rules(ctx)
        except (KeyError, TypeError, AttributeError, ValueError) as e:  # a record too broken to read
            ctx = None
            verdicts = [
                Verdict(
                    stage="rules",
                    check="malformed_schema",
                    passed=False,
                    reason="malformed_schema",
                    detail=f"the task record cannot be read: {type(e).__name__}: {e}"[:300],
                )  # fmt: skip
            ]
        failed = next((v for c in ORDER for v in verdicts if v.check == c and not v.passed), None)
        if failed is None and ctx is not None and decontam.is_rag_only(task):  # decontamination rule (b)
            rb = _rag_verdict(task, api_evidence(), cfg)
            verdicts.append(rb)
            failed = None if rb.passed else rb
        if failed is None and ctx is not None:
            if bench is not None:  # before near_duplicate, which remembers the tasks it passes
                bc = _benchmark_verdict(bench, task)
                verdicts.append(bc)
                failed = None if bc.passed else bc
            if failed is None:
                nd = dup.check(task)
                verdicts.append(nd)
                failed = None if nd.passed else nd
        if failed is not None:
            failed.action = "reject"
        _record(task, verdicts)
        if failed is not None:
            reject(task, "rules", failed.reason or failed.check, failed.detail)
        else:
            stage2.append(ctx)  # type: ignore[arg-type]
    elapsed["rules"] = round(time.monotonic() - t0, 3)
    progress(f"{domain}: rules kept {len(stage2)} of {len(candidates)}")

    jstats, rstats = JudgeStats(), ResolveStats()
    use_agent, agent_line = agent_status(cfg, llm, language)
    progress(f"{domain}: agent re-solving {agent_line}")
    stages_run = ["rules"]
    kept: list[TaskContext] = []

    async def later_stages() -> None:
        nonlocal kept
        sem = asyncio.Semaphore(cfg.filters.concurrency)
        # ------------------------------------------------------------ stage 2: judges
        t1 = time.monotonic()
        survivors: list[TaskContext] = []
        if stage2:
            stages_run.append("judges")
            static = await static_judges(stage2, cfg, llm, jstats)
            rest: list[TaskContext] = []
            for ctx, (reason, detail, vs) in zip(stage2, static, strict=True):
                _record(ctx.task, vs)
                if reason:
                    reject(ctx.task, "judges", reason, detail)
                else:
                    rest.append(ctx)
            deco = await decorative_judges(rest, cfg, llm, sessions, _probe_rows(probes, domain), sem, jstats, progress)
            for ctx, (reason, detail, vs) in zip(rest, deco, strict=True):
                _record(ctx.task, vs)
                if reason:
                    reject(ctx.task, "judges", reason, detail)
                else:
                    survivors.append(ctx)
        elapsed["judges"] = round(time.monotonic() - t1, 3)
        progress(f"{domain}: judges kept {len(survivors)} of {len(stage2)}")
        # ------------------------------------------------------------ stage 3: resolve
        t2 = time.monotonic()
        if survivors and (cfg.filters.replay or use_agent):
            stages_run.append("resolve")
            outs = await asyncio.gather(*(replay_one(c, cfg, sessions, sem, rstats) for c in survivors))
            agents: list[tuple[str | None, str] | None] = [None] * len(survivors)
            if use_agent and llm is not None:  # agent_status says no agent without a client
                order = sorted(range(len(survivors)), key=lambda k: (not is_stale(survivors[k], outs[k]), k))
                order = [k for k in order if outs[k] is None or outs[k]["ok"]]  # type: ignore[index]
                if cfg.filters.agent_max_tasks is not None:
                    order = order[: cfg.filters.agent_max_tasks]
                got = await asyncio.gather(*(agent_one(survivors[k], llm, sessions, specs, sem, rstats) for k in order))
                for k, g in zip(order, got, strict=True):
                    agents[k] = g
            for ctx, out, ag in zip(survivors, outs, agents, strict=True):
                reason, detail, vs = decide(ctx, cfg, llm, out, ag, rstats)
                _record(ctx.task, vs)
                if reason:
                    reject(ctx.task, "resolve", reason, detail)
                else:
                    kept.append(ctx)
        else:
            kept = survivors
        elapsed["resolve"] = round(time.monotonic() - t2, 3)
        progress(f"{domain}: resolve kept {len(kept)} of {len(survivors)}")

    async def main() -> None:
        try:
            await later_stages()
        finally:
            if llm is not None:
                await llm.aclose_loop()

    asyncio.run(main())

    kept_tasks = [c.task for c in kept]
    by_reason = {c: 0 for c in reasons.REASON_CODES}
    for r in rejected:
        by_reason[r["reason"]] += 1
    by_stage = {s: sum(1 for r in rejected if r["stage"] == s) for s in reasons.STAGES}
    value: dict[str, Any] = {
        "domain": domain,
        "language": language,
        "kept": kept_tasks,
        "rejected": rejected,
        "counts": {
            "candidates": len(candidates),
            "kept": len(kept_tasks),
            "by_stage": by_stage,
            "by_reason": by_reason,
            "answers_replaced": rstats.replaced,
        },
    }
    value, redactions = _redact(value, sessions.secrets())
    elapsed["total"] = round(time.monotonic() - t_start, 3)
    extra = {
        "stages_run": stages_run,
        "agent_resolve": agent_line,
        "benchmark_filter": (
            f"on ({len(bench.rows)} rows from {len(cfg.splits.benchmarks)} file(s))"
            if bench is not None
            else "off (splits.benchmarks is empty)"
        ),
        "elapsed_s": elapsed,
        "judges": jstats,
        "resolve": rstats,
        "redactions": redactions,
        "model_judges": {c: model_mapped(llm, r) for c, r in CHECK_ROLES.items()},
        "agent_role": AGENT_ROLE,
    }
    return value, judged_metadata(value, extra, cfg)


# --------------------------------------------------------------------------- metadata


def _short(text: Any, n: int = 80) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def judged_metadata(value: Mapping[str, Any], extra: Mapping[str, Any], cfg: ProjectConfig) -> dict[str, Any]:
    counts = value["counts"]
    n, k = counts["candidates"], counts["kept"]
    rej = value["rejected"]
    js: JudgeStats = extra["judges"]
    rs: ResolveStats = extra["resolve"]
    table = md_table(
        [
            {
                "stage": reasons.REASONS[c][0],
                "reason": c,
                "rejected": counts["by_reason"][c],
                "share": rate(counts["by_reason"][c], n),
                "meaning": _short(reasons.REASONS[c][1], 70),
            }
            for c in reasons.REASON_CODES
        ],  # fmt: skip
        limit=len(reasons.REASON_CODES),
    )
    meta: dict[str, Any] = {
        "candidates": n,
        "kept": k,
        "rejected": len(rej),
        "kept_rate": rate(k, n),
        "rejection_rate": rate(len(rej), n),
        **{f"rejected_{s}": counts["by_stage"][s] for s in reasons.STAGES},
        "by_stage": counts["by_stage"],
        "by_reason": counts["by_reason"],
        "reasons_table": table,
        "answers_replaced": counts["answers_replaced"],
        "stages_run": list(extra["stages_run"]),
        "agent_resolve": extra["agent_resolve"],
        "benchmark_filter": extra["benchmark_filter"],
        "model_judges": dict(extra["model_judges"]),
        "judges_used": js.judges,
        "judge_disagreements": js.disagreements,
        "model_judge_errors": len(js.model_errors),
        "decorative_steps_tested": js.steps_tested,
        "decorative_variants_executed": js.variants_run,
        "decorative_by": js.decorative_by,
        "replays": rs.replayed,
        "replay_retries": rs.replay_retries,
        "stale_labels_found": rs.stale,
        "agent_runs": rs.agent_runs,
        "agent_correct": rs.agent_correct,
        "agent_errors": len(rs.agent_errors),
        "near_duplicate_threshold": cfg.filters.near_duplicate_threshold,
        "judges_to_remove": cfg.filters.judges_to_remove,
        "elapsed_s": dict(extra["elapsed_s"]),
        "secrets_redacted": extra["redactions"],
        "preview_kept": md_table(
            [
                {
                    "category": t.get("category"),
                    "query": t.get("query"),
                    "answer": (t.get("answer") or {}).get("text"),
                    "source": t.get("answer_source"),
                    "verdicts": len((t.get("lineage") or {}).get("verdicts") or []),
                }
                for t in value["kept"]
            ],  # fmt: skip
            limit=12,
        ),
        "preview_rejected": md_table(
            [
                {"stage": r["stage"], "reason": r["reason"], "detail": r["detail"], "query": r["task"].get("query")}
                for r in rej
            ],
            limit=15,
        ),
    }
    if js.model_errors:
        meta["model_judge_error_examples"] = js.model_errors[:3]
    if rs.agent_errors:
        meta["agent_error_examples"] = rs.agent_errors[:3]
    if n:
        meta["reasons_plot"] = bar_plot(
            {"kept": k, **{c: v for c, v in counts["by_reason"].items()}},
            title=f"judged_queries[{value['domain']}]: kept and rejected by reason",
        )
    return meta


# --------------------------------------------------------------------------- the gate's frame


def judged_frame(value: Mapping[str, Any], candidates: Any = None):
    """One row per judged task, the shape expectations/judged_queries.json validates.

    `candidates` (the generated_queries value or its task list) is the universe kept rows must come from;
    without it the value's own rows are the universe (kept ∩ rejected = ∅ is still checked)."""
    import pandas as pd

    if candidates is not None:
        cand_ids = {t.get("id") for t in _tasks_of(candidates)}
    else:
        cand_ids = {t.get("id") for t in value["kept"]} | {r["task"].get("id") for r in value["rejected"]}
    rows_in: list[tuple[str, Any, str | None, str | None]] = [("kept", t, None, None) for t in value["kept"]]
    rows_in += [("rejected", r["task"], r.get("stage"), r.get("reason")) for r in value["rejected"]]
    stages_seen = {v.get("stage") for _, t, _, _ in rows_in for v in ((t.get("lineage") or {}).get("verdicts") or [])}
    rows = []
    for status, t, stage, reason in rows_in:
        verdicts = (t.get("lineage") or {}).get("verdicts") or []
        have = {v.get("stage") for v in verdicts}
        if status == "kept":
            coverage = stages_seen <= have
            valid = True
            try:
                Task.model_validate(t)
            except Exception:  # noqa: BLE001 - reported as a failed expectation
                valid = False
        else:
            coverage = stage in have and any(
                v.get("stage") == stage and not v.get("passed") and v.get("reason") == reason for v in verdicts
            )
            valid = True
        stage_ok = status == "kept" or (reason in reasons.REASONS and reasons.REASONS[reason][0] == stage)
        verdict_reasons_ok = all(v.get("reason") is None or v.get("reason") in reasons.REASONS for v in verdicts)
        rows.append(
            {
                "id": t.get("id"),
                "status": status,
                "stage": stage,
                "reason": reason,
                "in_candidates": t.get("id") in cand_ids,
                "reason_matches_stage": bool(stage_ok),
                "verdict_reasons_known": bool(verdict_reasons_ok),
                "verdicts_cover_stages": bool(coverage),
                "task_valid": bool(valid),
            }
        )
    cols = [
        "id", "status", "stage", "reason", "in_candidates", "reason_matches_stage", "verdict_reasons_known",
        "verdicts_cover_stages", "task_valid",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)
