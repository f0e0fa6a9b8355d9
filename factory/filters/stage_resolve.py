"""Stage 3 of the cascade: independent re-solving (EDGE App. F, stage 3).

1. The golden trajectory is replayed now (`factory.synthesis.replay`, a fresh session); a failing
   golden call is retried once (transient faults), then the task is rejected `replay_failed`.
2. The recomputed answer is compared with the stored one (`compare.same_answer`).
3. Where `filters.agent_resolve` is on and `agent_resolver` is served by a model, the agent also
   solves the task with the tools (`LLM.aresolve`). When the stored answer is stale and the agent's
   answer states the replayed one (a re-solution judged correct), the stored answer is replaced
   (answer_source 'agent'); otherwise a stale label is rejected `stale_label` — or, with
   `filters.replace_stale_with_replay` and no agent, replaced by the replay (answer_source 'replay').
"""

import asyncio
import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factory.config import ProjectConfig
from factory.filters.compare import answer_brief, same_answer, text_matches
from factory.filters.context import TaskContext
from factory.filters.execution import MakeExecutor
from factory.llm.client import ModelClient
from factory.llm.errors import LLMError
from factory.llm.schemas import AgentTaskInput, GoldenAction
from factory.records import Stage, Verdict
from factory.synthesis import answers
from factory.synthesis.replay import replay_task
from factory.tools.outcomes import is_success_outcome
from factory.tools.spec import ToolSpec

STAGE: Stage = "resolve"
AGENT_ROLE = "agent_resolver"
RESULT_RECORDS = 20  # records an agent sees per call


def agent_status(cfg: ProjectConfig, llm: ModelClient | None, language: str) -> tuple[bool, str]:
    """(whether the agent re-solves, a sentence saying why or why not) — reported in metadata."""
    if not cfg.filters.agent_resolve:
        return False, "off: filters.agent_resolve is false"
    if llm is None:
        return False, "not configured: no LLM interface was given"
    if not llm.uses_model(AGENT_ROLE, language):
        return False, (
            f"not configured: agent_resolver ({language}) is served by rules, which only replays the golden "
            "actions; map it to a model backend (models.roles.agent_resolver) for independent re-solving"
        )
    impl = llm.implementation(AGENT_ROLE, language)
    return True, f"on: agent_resolver ({language}) → {impl['backend']}/{impl['model']}"


def tool_definitions(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """OpenAI function definitions; API-key parameters are hidden (the executor injects keys)."""
    out = []
    for s in specs:
        if s.key_acquisition is not None:
            continue
        schema = copy.deepcopy(s.input_schema) or {"type": "object", "properties": {}}
        key = s.generic_params.key
        if key:
            schema.get("properties", {}).pop(key, None)
            if key in schema.get("required", []):
                schema["required"] = [r for r in schema["required"] if r != key]
        out.append(
            {"type": "function", "function": {"name": s.name, "description": s.description, "parameters": schema}}
        )
    return out


@dataclass
class ResolveStats:
    replayed: int = 0
    replay_retries: int = 0
    stale: int = 0
    replaced: int = 0
    agent_runs: int = 0
    agent_correct: int = 0
    agent_errors: list[str] = field(default_factory=list)


def _agent_executor(ex: Any, allowed: set[str]):
    async def call(name: str, args: dict[str, Any]) -> Any:
        if name not in allowed:
            raise KeyError(f"tool {name!r} is not available in this task")
        r = await ex.call(name, args)
        if not r.outcome.is_success:
            raise RuntimeError(f"{r.outcome.value}: {r.detail}")
        total = r.total_count if r.total_count is not None else r.record_count
        body = {"total_count": total, "records": r.records[:RESULT_RECORDS]}
        if not r.records and r.body is not None:
            body = {"body": r.body}
        return ex.redact(body)

    return call


async def _agent_solve(
    ctx: TaskContext, llm: ModelClient, make_executor: MakeExecutor, specs: Mapping[str, ToolSpec]
) -> tuple[str | None, str]:
    """(final answer text or None on error, a short description of the run)."""
    t = ctx.task
    tools = [s for s in specs.values() if s.name in set(t["available_tools"]) and s.domain == t["domain"]]
    inp = AgentTaskInput(
        messages=[{"role": "user", "content": t["query"]}],
        tools=tool_definitions(tools),
        language=ctx.language,  # type: ignore[arg-type]
        max_calls=int(t["max_allowed_calls"]),
        golden_actions=[GoldenAction(step=a["step"], tool=a["tool"], args=a["args"]) for a in t["golden_actions"]],
        golden_answer=t["answer"]["text"],
    )
    async with make_executor() as ex:
        try:
            res = await llm.aresolve(inp, _agent_executor(ex, {s.name for s in tools}))
        except LLMError as e:
            return None, f"agent error: {e}"[:300]
        out = res.output
        if out is None:
            return None, "agent produced no result"
        calls = len(out.trace)
        text = ex.redact(out.final_answer or "")
    return text, f"{res.backend}/{res.model}: {calls} call(s), stop={out.stop_reason}, answer {text[:120]!r}"


async def _replay(task: Mapping[str, Any], make_executor: MakeExecutor, stats: ResolveStats) -> dict[str, Any]:
    last: dict[str, Any] = {}
    for attempt in range(2):
        try:
            out = await replay_task(task, make_executor)
        except Exception as e:  # noqa: BLE001 - a replay that cannot run is a failed replay, recorded
            out = {"ok": False, "rows": [], "answer": None, "error": f"{type(e).__name__}: {e}"[:200]}
        stats.replayed += 1
        if out["ok"]:
            return out
        last = out
        if attempt == 0:
            stats.replay_retries += 1
    return last


def _failure(out: Mapping[str, Any]) -> str:
    if out.get("error"):
        return out["error"]
    bad = next((r for r in out.get("rows") or [] if not is_success_outcome(r.get("outcome"))), None)
    if bad is None:
        return "a golden call failed"
    return f"step {bad['step']} {bad['tool']}: {bad['outcome']} (twice)"


def _replace(task: dict[str, Any], fresh: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], source: str) -> None:
    lang = task.get("language", "en")
    frame = task["answer"].get("frame")
    task["answer"] = {
        "type": fresh["type"],
        "value": fresh["value"],
        "text": answers.answer_text(fresh, lang, frame),
        "fields": list(fresh.get("fields") or []),
        "branch": fresh.get("branch"),
        "frame": frame,
    }
    task["answer_source"] = source
    for a, r in zip(task["golden_actions"], rows, strict=False):
        a["records"] = r.get("records", a.get("records"))
        a["total_count"] = r.get("total_count")
        a["result_digest"] = r.get("result_digest", a.get("result_digest"))


async def replay_one(
    ctx: TaskContext, cfg: ProjectConfig, make_executor: MakeExecutor, sem: asyncio.Semaphore, stats: ResolveStats
) -> dict[str, Any] | None:
    """The replay of a task's golden trajectory now (None when filters.replay is off)."""
    if not cfg.filters.replay:
        return None
    async with sem:
        return await _replay(ctx.task, make_executor, stats)


def is_stale(ctx: TaskContext, out: Mapping[str, Any] | None) -> bool:
    return bool(
        out and out["ok"] and out.get("answer") is not None and not same_answer(ctx.task["answer"], out["answer"])
    )


async def agent_one(
    ctx: TaskContext, llm: ModelClient, make_executor: MakeExecutor, specs: Mapping[str, ToolSpec], sem: asyncio.Semaphore,
    stats: ResolveStats,
) -> tuple[str | None, str]:  # fmt: skip
    async with sem:
        text, desc = await _agent_solve(ctx, llm, make_executor, specs)
    stats.agent_runs += 1
    if text is None:
        stats.agent_errors.append(desc)
    return text, desc


def decide(
    ctx: TaskContext,
    cfg: ProjectConfig,
    llm: ModelClient | None,
    out: Mapping[str, Any] | None,
    agent: tuple[str | None, str] | None,
    stats: ResolveStats,
) -> tuple[str | None, str, list[Verdict]]:
    """(reason or None, detail, verdicts) of stage 3 for one task; may replace ctx.task's answer in place.
    `agent` is the agent's (answer text, description) when it ran on this task."""
    t = ctx.task
    verdicts: list[Verdict] = []
    if out is not None and not out["ok"]:
        why = _failure(out)
        verdicts.append(
            Verdict(
                stage=STAGE,
                check="replay",
                passed=False,
                reason="replay_failed",
                judge="execution",
                detail=why,
                action="reject",
            )  # fmt: skip
        )
        return "replay_failed", why, verdicts
    fresh = out.get("answer") if out else None
    stale = is_stale(ctx, out)
    use_agent = agent is not None
    agent_text, agent_desc = agent if agent is not None else (None, "")
    gold_now = fresh if fresh is not None else t["answer"]
    agent_ok = agent_text is not None and text_matches(gold_now, agent_text)
    stats.agent_correct += agent_ok
    judge_agent = ""
    if use_agent and llm is not None:  # the agent ran, so there is a client
        impl = llm.implementation(AGENT_ROLE, ctx.language)
        judge_agent = f"model:{impl['backend']}/{impl['model']}"
    if out is not None and not stale:
        verdicts.append(
            Verdict(
                stage=STAGE,
                check="replay",
                passed=True,
                judge="execution",
                detail=f"replayed now: {answer_brief(fresh or {})} equals the stored answer",
            )  # fmt: skip
        )
    if use_agent and not stale:
        verdicts.append(
            Verdict(
                stage=STAGE,
                check="agent_resolve",
                passed=True,
                judge=judge_agent,
                detail=("agrees with the label; " if agent_ok else "does not state the label (task kept); ")
                + agent_desc,
            )  # fmt: skip
        )
    if not stale:
        return None, "", verdicts
    stats.stale += 1
    old = {k: t["answer"].get(k) for k in ("type", "value", "text", "branch")}
    base = f"stored {answer_brief(t['answer'])}, replayed now {answer_brief(fresh)}"  # type: ignore[arg-type]
    if use_agent and agent_ok:
        _replace(t, fresh, out["rows"], "agent")  # type: ignore[arg-type, index]
        stats.replaced += 1
        verdicts.append(
            Verdict(
                stage=STAGE,
                check="replay",
                passed=False,
                reason="stale_label",
                judge="execution",
                detail=f"{base}; replaced (confirmed by the agent)",
                action="replace_answer",
            )  # fmt: skip
        )
        verdicts.append(
            Verdict(
                stage=STAGE,
                check="agent_resolve",
                passed=True,
                judge=judge_agent,
                action="replace_answer",
                detail=f"{agent_desc}; matches the replayed answer; old answer: {json.dumps(old, ensure_ascii=False)}"[
                    :900
                ],
            )  # fmt: skip
        )
        return None, "", verdicts
    if not use_agent and cfg.filters.replace_stale_with_replay:
        _replace(t, fresh, out["rows"], "replay")  # type: ignore[arg-type, index]
        stats.replaced += 1
        verdicts.append(
            Verdict(
                stage=STAGE,
                check="replay",
                passed=False,
                reason="stale_label",
                judge="execution",
                detail=f"{base}; replaced by the replay (filters.replace_stale_with_replay); old answer: "
                f"{json.dumps(old, ensure_ascii=False)}"[:900],
                action="replace_answer",
            )  # fmt: skip
        )
        return None, "", verdicts
    if use_agent:
        verdicts.append(
            Verdict(
                stage=STAGE,
                check="agent_resolve",
                passed=True,
                judge=judge_agent,
                detail=f"did not confirm the replayed answer: {agent_desc}"[:500],
            )  # fmt: skip
        )
    detail = base + (
        "; the agent did not confirm it" if use_agent else "; no agent re-solving to confirm a replacement"
    )
    verdicts.append(
        Verdict(
            stage=STAGE,
            check="replay",
            passed=False,
            reason="stale_label",
            judge="execution",
            detail=detail[:500],
            action="reject",
        )  # fmt: skip
    )
    return "stale_label", detail, verdicts
