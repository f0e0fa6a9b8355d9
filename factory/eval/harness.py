"""The evaluation harness: a chosen model on a chosen split, n runs per task (pure core, no Dagster).

    settings = EvalSettings.resolve(cfg, backend="local", split="test", runs=3, k=3)
    tasks = select_tasks(load_tasks(dataset_splits_value), settings)
    result = evaluate(tasks, inventories, cfg, llm, settings, progress=print)
    result.report   # metrics by case pattern and domain, per-case rows, per-episode rows
    result.traces   # one full trace per episode (redacted)

`llm` is a `factory.llm.client.ModelClient` (the `LLM` service): each run drives
`llm.backend_variant(backend, temperature=..., seed=...)`, the judge `llm.chat_backend(name)`.

Each episode (task × run) runs in a fresh `ToolExecutor` session against the live tools: the
platforms' API keys are acquired first (system state, App. B.1), the model then works through
`factory.llm.agent.run_agent` (its seed is the run's seed, its temperature the configured
one), the state hashes of the task's stateful platforms are read at the end in the same
session, and `factory.eval.scoring` scores RESPONSE / ENVIRONMENT / ACTION. Before any episode
a preflight checks that the model backend answers and that every involved platform's key tool
answers, so a stopped demo service or model server is one clear error, not a report full of
failures.

Inputs: the `dataset_splits` value ({"tasks": [Task with "split"], ...}), or any plain list of
Task dicts (generated_queries' value["tasks"], judged_queries' value["kept"], or a per-domain
dict of those), so the harness works without splits.
"""

import asyncio
import hashlib
import json
import logging
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from factory import prompts
from factory.config import HOP_TYPE_PATTERN, ProjectConfig
from factory.eval import scoring
from factory.eval.oracle import ORACLE, OracleBackend
from factory.llm.agent import (
    ExecutorRunner,
    Limits,
    OfferedTool,
    offered_from_spec,
    run_agent,
    system_prompt,
    template_names,
)
from factory.llm.client import ModelClient
from factory.model_config import RULES
from factory.records import Task
from factory.retrieval import evaluate as stages
from factory.retrieval.policy import expected_answer as policy_refusal
from factory.tools.executor import ToolExecutor
from factory.tools.registry import ToolRegistry, ToolResolutionError, executor_factory
from factory.tools.retrieval import served_inventories
from factory.tools.spec import ToolSpec

log = logging.getLogger(__name__)

JUDGE_TEMPLATE = "agent_resolver/judge.en"
EVAL_ROLE = "evaluation"
JUDGE_ROLE = "evaluation_judge"


class EvalError(ValueError):
    """Evaluation cannot run as asked (unknown backend, empty split, unreachable service, bad input)."""


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class EvalSettings:
    """One evaluation's knobs: `cfg.evaluation` with per-run overrides, the backend resolved."""

    backend: str
    split: str | None
    domains: tuple[str, ...] | None
    runs: int
    k: int
    seed: int
    max_tasks: int | None
    max_turns: int
    max_calls: int
    time_limit_s: float
    temperature: float
    max_tokens: int | None
    loop_repeats: int
    max_format_failures: int
    max_observation_chars: int
    concurrency: int
    number_rel_tol: float
    judge_fallback: bool
    judge_backend: str | None
    cache: bool
    stages: bool = True
    stage1_paths: int = 4
    hop_types: tuple[str, ...] | None = None

    @classmethod
    def resolve(cls, cfg: ProjectConfig, **overrides: Any) -> "EvalSettings":
        """Config defaults, then every override that is not None. `split='all'` (or '') evaluates every task."""
        ev = cfg.evaluation.model_dump()
        unknown = sorted(set(overrides) - set(ev))
        if unknown:
            raise EvalError(f"unknown evaluation setting(s): {', '.join(unknown)}; known: {', '.join(sorted(ev))}")
        explicit_k = overrides.get("k") is not None
        for key, v in overrides.items():
            if v is not None:
                ev[key] = v
        if isinstance(ev["split"], str) and ev["split"].strip().lower() in ("", "all", "*"):
            ev["split"] = None
        backend = ev["backend"] or _agent_backend(cfg)
        declared = ", ".join(sorted(cfg.models.backends)) or "(none)"
        if backend is None or backend == RULES:
            # no model configured: the golden oracle checks the environment and the scorers (factory/eval/oracle.py)
            backend = ORACLE
        if backend != ORACLE and backend not in cfg.models.backends:
            raise EvalError(f"unknown backend {backend!r}; declared backends (models.backends): {declared}")
        judge = ev["judge_backend"]
        if judge is not None and judge not in cfg.models.backends:
            raise EvalError(f"unknown judge backend {judge!r}; declared backends: {declared}")
        runs, k = int(ev["runs"]), int(ev["k"])
        if runs < 1 or k < 1:
            raise EvalError(f"runs and k must be ≥ 1 (runs={runs}, k={k})")
        if k > runs:
            if explicit_k:
                raise EvalError(f"k ({k}) must be ≤ runs ({runs}): pass@k and pass^k draw k of the n runs")
            k = runs
        unknown_hops = [h for h in ev["hop_types"] or [] if not re.fullmatch(HOP_TYPE_PATTERN, str(h))]
        if unknown_hops:
            raise EvalError(
                f"unknown hop type(s) {', '.join(map(str, unknown_hops))}: a hop type is API, RAG or the sources a "
                "chain calls in order joined by '-' (API-RAG, RAG-API, API-RAG-API, ...)"
            )
        if ev["max_tasks"] is not None and int(ev["max_tasks"]) < 1:
            raise EvalError(f"max_tasks must be ≥ 1 (got {ev['max_tasks']})")
        return cls(
            backend=backend,
            split=ev["split"],
            domains=tuple(ev["domains"]) if ev["domains"] else None,
            runs=runs,
            k=k,
            seed=int(ev["seed"]) if ev["seed"] is not None else cfg.seed,
            max_tasks=ev["max_tasks"],
            max_turns=int(ev["max_turns"]),
            max_calls=int(ev["max_calls"]),
            time_limit_s=float(ev["time_limit_s"]),
            temperature=float(ev["temperature"]),
            max_tokens=ev["max_tokens"],
            loop_repeats=int(ev["loop_repeats"]),
            max_format_failures=int(ev["max_format_failures"]),
            max_observation_chars=int(ev["max_observation_chars"]),
            concurrency=int(ev["concurrency"]),
            number_rel_tol=float(ev["number_rel_tol"]),
            judge_fallback=bool(ev["judge_fallback"]),
            judge_backend=judge,
            cache=bool(ev["cache"]),
            stages=bool(ev["stages"]),
            stage1_paths=int(ev["stage1_paths"]),
            hop_types=tuple(ev["hop_types"]) if ev["hop_types"] else None,
        )

    def as_dict(self) -> dict[str, Any]:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}

    def seeds(self) -> list[int]:
        return [self.seed + r for r in range(self.runs)]


def _agent_backend(cfg: ProjectConfig) -> str | None:
    """The backend agent_resolver maps to (any language), if it is a model."""
    for lang in (None, *cfg.models.languages):
        b = cfg.models.backend_for("agent_resolver", lang)
        if b != RULES:
            return b
    return None


# --------------------------------------------------------------------------- tasks


def load_tasks(value: Any) -> list[Task]:
    """Task records from an asset value or a file's JSON (see the module docstring for the shapes)."""
    rows = _task_rows(value)
    out: list[Task] = []
    for i, row in enumerate(rows):
        try:
            out.append(Task.model_validate(row))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(root)"
            tid = row.get("id", "?") if isinstance(row, Mapping) else "?"
            raise EvalError(
                f"task #{i} ({tid}) is not a valid Task: {where}: {first['msg']} ({e.error_count()} error(s))"
            ) from None
    return out


def _task_rows(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, Mapping):
        for key in ("tasks", "kept"):
            if isinstance(value.get(key), list):
                return value[key]
        if value and all(isinstance(v, Mapping) for v in value.values()):
            return [row for k in sorted(value) for row in _task_rows(value[k])]
    raise EvalError(
        "expected Task records: a list of Task dicts, a value with 'tasks' (dataset_splits, generated_queries) "
        "or 'kept' (judged_queries), or a {domain: value} dict of those"
    )


def _round_robin(lists: Sequence[Sequence[Task]]) -> list[Task]:
    out: list[Task] = []
    for i in range(max((len(x) for x in lists), default=0)):
        out.extend(x[i] for x in lists if i < len(x))
    return out


def select_tasks(tasks: Sequence[Task], settings: EvalSettings) -> tuple[list[Task], dict[str, Any]]:
    """The tasks to evaluate and how they were chosen. Split filter only where tasks carry split labels; then the
    domains and hop types asked for (a task without a hop type is API); `max_tasks` takes tasks round-robin over domains, and within a domain over categories, so the breakdowns stay populated."""
    if not tasks:
        raise EvalError("no tasks to evaluate: the input holds no Task records")
    split_counts: dict[str, int] = defaultdict(int)
    for t in tasks:
        split_counts[t.split or "(none)"] += 1
    labelled = any(t.split for t in tasks)
    chosen = list(tasks)
    if settings.split is not None and labelled:
        chosen = [t for t in chosen if t.split == settings.split]
        if not chosen:
            present = ", ".join(f"{s} ({n})" for s, n in sorted(split_counts.items()))
            raise EvalError(f"split {settings.split!r} has no tasks; splits present: {present}")
    if settings.domains:
        present_domains = sorted({t.domain for t in chosen})
        chosen = [t for t in chosen if t.domain in settings.domains]
        if not chosen:
            raise EvalError(
                f"no tasks of domain(s) {', '.join(settings.domains)}; domains present: {', '.join(present_domains)}"
            )
    if settings.hop_types:
        present_hops = sorted({t.hop_type or "API" for t in chosen})
        chosen = [t for t in chosen if (t.hop_type or "API") in settings.hop_types]
        if not chosen:
            raise EvalError(
                f"no tasks of hop type(s) {', '.join(settings.hop_types)}; hop types present: {', '.join(present_hops)}"
            )
    unique: dict[str, Task] = {}
    for t in chosen:
        unique.setdefault(t.id, t)
    by_domain: dict[str, dict[str, list[Task]]] = defaultdict(lambda: defaultdict(list))
    for t in sorted(unique.values(), key=lambda t: t.id):
        by_domain[t.domain][t.category].append(t)
    ordered = _round_robin([_round_robin([cats[c] for c in sorted(cats)]) for _, cats in sorted(by_domain.items())])
    if settings.max_tasks is not None:
        ordered = ordered[: settings.max_tasks]
    info = {
        "input_tasks": len(tasks),
        "split_counts": dict(sorted(split_counts.items())),
        "split_applied": settings.split is not None and labelled,
        "selected": len(ordered),
    }
    return ordered, info


# --------------------------------------------------------------------------- tools of a task


@dataclass
class TaskTools:
    offered: list[OfferedTool]
    key_specs: list[ToolSpec]
    state_specs: dict[str, ToolSpec | None]
    domains: list[str]


def task_tools(registry: ToolRegistry, task: Task) -> TaskTools:
    """The task's offered tools (bare names resolved by `ToolRegistry.resolve`), key and state tools."""
    try:
        specs = [registry.resolve(n, platforms=task.platforms, domain=task.domain) for n in task.available_tools]
    except ToolResolutionError as e:
        raise EvalError(f"task {task.id[:19]}: {e}; materialize tool_inventory for the task's domain") from None
    offered_specs = [s for s in specs if s.key_acquisition is None]
    acquire = (task.system_state.get("api_key") or {}).get("acquire_with") or {}
    key_specs: dict[str, ToolSpec] = {}
    for s in offered_specs:
        if not s.generic_params.key or s.platform in key_specs:
            continue
        named = acquire.get(s.platform) if isinstance(acquire, Mapping) else None
        key = registry.lookup(s.platform, named) if named else None
        key = key or registry.key_tool(s.platform)
        if key is not None:
            key_specs[s.platform] = key
    state: dict[str, ToolSpec | None] = {}
    for platform in task.expected_state_hash:
        state[platform] = next(
            (
                s
                for s in sorted(registry.on_platform(platform), key=lambda s: s.name)
                if "state_hash" in s.output_fields
            ),
            None,
        )
    domains = sorted(
        {s.domain for s in offered_specs}
        | {s.domain for s in key_specs.values()}
        | {s.domain for s in state.values() if s}
    )
    return TaskTools(
        offered=[offered_from_spec(s) for s in offered_specs],
        key_specs=[key_specs[p] for p in sorted(key_specs)],
        state_specs=state,
        domains=domains,
    )


# --------------------------------------------------------------------------- model side


class JudgeReply(BaseModel):
    """The RESPONSE judge's structured reply."""

    correct: bool = Field(description="True when the model's answer states the reference result.")
    reason: str = Field(default="", description="One sentence.")


class ResponseJudge:
    """LLM-as-a-judge for RESPONSE (App. B.2): 'judge' answers, and mismatches under judge_fallback."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    async def __call__(self, query: str, gold: str, answer: str) -> tuple[bool | None, str]:
        from factory.llm.service import extract_json

        text = prompts.render(JUDGE_TEMPLATE, query=query, gold=gold, answer=answer)
        try:
            message, _ = await self.backend.chat(
                JUDGE_ROLE,
                [{"role": "user", "content": text}],
                schema=JudgeReply.model_json_schema(),
                schema_name="JudgeReply",
            )
            reply = JudgeReply.model_validate_json(extract_json(message.get("content") or ""))
        except ValidationError as e:
            return None, f"judge reply is not valid: {e.errors()[0]['msg']}"
        except Exception as e:  # noqa: BLE001 - a failed judge leaves the deterministic verdict
            return None, f"judge failed: {type(e).__name__}: {e}"[:300]
        return reply.correct, reply.reason[:300]


# --------------------------------------------------------------------------- one episode


@dataclass
class _Context:
    cfg: ProjectConfig
    settings: EvalSettings
    registry: ToolRegistry
    backends: list[Any]
    judge: ResponseJudge | None
    progress: Callable[[str], None]
    total: int
    done: int = 0
    tools: dict[str, TaskTools] = field(default_factory=dict)

    def tools_of(self, task: Task) -> TaskTools:
        if task.id not in self.tools:
            self.tools[task.id] = task_tools(self.registry, task)
        return self.tools[task.id]

    def make_executor(self, domains: list[str]) -> ToolExecutor:
        return executor_factory(self.cfg, domains, self.registry)()


class RecordingRunner(ExecutorRunner):
    """An `ExecutorRunner` that keeps every executed call's full response for the VAKRA stages
    (factory/retrieval/evaluate.py): the agent's calls are executed live once, and compared as they came back."""

    def __init__(self, executor: Any, max_chars: int) -> None:
        super().__init__(executor, max_chars)
        self.responses: list[dict[str, Any]] = []

    async def __call__(self, tool: OfferedTool, args: dict[str, Any]) -> Any:
        try:
            obs = await super().__call__(tool, args)
        except Exception:  # the agent records the failure; keep one response per executed call
            self.responses.append({"tool": tool.name, "status": "executed", "ok": False, "records": []})
            raise
        r = obs.result
        self.responses.append(
            {
                "tool": tool.name,
                "status": "executed",
                "ok": bool(r is not None and r.ok),
                "records": list(r.records) if r is not None and r.ok else [],
                "total_count": r.total_count if r is not None else None,
            }
        )
        return obs


async def _ground_truth_paths(ex: ToolExecutor, task: Mapping[str, Any], ctx: "_Context") -> list[list[dict[str, Any]]]:
    """Every sufficient path of the task re-executed now (read-only calls; a state-changing call is checked
    by ENVIRONMENT, not by its response), for VAKRA stage 1."""
    specs = ctx.registry.by_platform_name
    out: list[list[dict[str, Any]]] = []
    for _, actions in scoring.sufficient_paths(task, specs)[: ctx.settings.stage1_paths]:
        path = []
        for a in actions:
            spec = scoring.spec_of(specs, a)
            if spec is None or spec.state_changing:
                continue
            r = await ex.call(spec, dict(a["args"]))
            path.append({"tool": a["tool"], "ok": r.ok, "records": list(r.records), "total_count": r.total_count})
        out.append(path)
    return out


def _source_of(ctx: "_Context", tools: TaskTools) -> Callable[[str], str | None]:
    """Tool name (as offered) → "retrieval" | "api" (its ToolSpec's source kind) | None (unknown)."""
    kinds = {t.name: ("retrieval" if t.spec is not None and t.spec.source.kind == "retrieval" else "api")
             for t in tools.offered}  # fmt: skip
    return kinds.get


def _platform_of(tools: TaskTools) -> Callable[[str], str | None]:
    """Tool name (as offered, key tools included) → its platform (a platform-scoped policy's stage 3)."""
    platforms = {t.name: t.spec.platform for t in tools.offered if t.spec is not None}
    platforms.update({s.name: s.platform for s in tools.key_specs})
    return platforms.get


def _context_entries(system_state: Mapping[str, Any]) -> dict[str, Any]:
    """Static system-state entries shown in the system prompt (PredefinedSystemState, App. B.1)."""
    return {k: v for k, v in system_state.items() if k != "api_key" and isinstance(v, str | int | float | bool)}


async def run_episode(ctx: _Context, task: Task, run: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """One task × run → (row for the metrics, full redacted trace)."""
    s = ctx.settings
    tools = ctx.tools_of(task)
    task_d = task.model_dump(mode="json", by_alias=True)
    _, n_keys = scoring.scored_golden(task_d, ctx.registry.by_platform_name)
    budget = scoring.call_budget(task_d, n_keys, s.max_calls)
    backend = ctx.backends[run]
    native = bool(backend.cfg.tool_calls)
    limits = Limits(
        max_turns=s.max_turns,
        max_calls=budget,
        time_limit_s=s.time_limit_s,
        loop_repeats=s.loop_repeats,
        max_format_failures=s.max_format_failures,
        max_observation_chars=s.max_observation_chars,
    )
    system = system_prompt(
        task.language, budget, None if native else tools.offered, task.answer.type, _context_entries(task.system_state)
    )
    if task.policy and task.policy.get("text"):  # the tool-use policy (issue 17), as the exports state it
        system = f"{system}\n\n{task.policy['text']}"
    messages = [{"role": "system", "content": system}, {"role": "user", "content": task.query}]
    runner: RecordingRunner | None = None
    gt_paths: list[list[dict[str, Any]]] = []
    async with ctx.make_executor(tools.domains) as ex:
        system_calls = []
        for spec in tools.key_specs:  # ActionSystemState: keys are acquired before the first turn
            r = await ex.call(spec, {})
            system_calls.append({"tool": spec.name, "platform": spec.platform, "outcome": r.outcome.value})
        ep, _ = await run_agent(
            backend,
            messages,
            tools.offered,
            (runner := RecordingRunner(ex, s.max_observation_chars)),
            limits,
            native=native,
            role_name=EVAL_ROLE,
            language=task.language,
        )
        observed: dict[str, str | None] = {}
        for platform, state_spec in tools.state_specs.items():  # same session, same key: the model's state
            if state_spec is None:
                observed[platform] = None
                continue
            r = await ex.call(state_spec, {})
            observed[platform] = str(r.records[0].get("state_hash")) if r.ok and r.records else None
        if s.stages and policy_refusal(task_d) is None:  # VAKRA stage 1's ground truth: every path, now
            gt_paths = await _ground_truth_paths(ex, task_d, ctx)
        episode = ex.redact(ep.as_dict())
        secrets = ex.known_secrets()
    response = None
    refusal = policy_refusal(task_d)
    if refusal is not None:  # a policy forbids a source every path needs: the reply must say no tool can answer
        unans = stages.final_response(task_d, episode["final_answer"], [], None, True)
        response = {"passed": unans["passed"], "method": "policy_unanswerable", "decided": True, **unans}
    elif "RESPONSE" in task.reward_basis:
        response = scoring.score_response(
            task_d["answer"], episode["final_answer"], rel_tol=s.number_rel_tol, question=task.query
        )
        wants_judge = task.answer.type == "judge" or (s.judge_fallback and not response["decided"])
        if ctx.judge is not None and wants_judge and episode["final_answer"] is not None:
            verdict, reason = await ctx.judge(task.query, task.answer.text, episode["final_answer"])
            if verdict is not None:
                response = {**response, "passed": verdict, "method": "judge", "decided": True, "judge_reason": reason}
            else:
                response = {**response, "judge_reason": reason}
    environment = None
    if "ENVIRONMENT" in task.reward_basis or task.expected_state_hash:
        environment = scoring.score_environment(task.expected_state_hash, observed)
    # a policy that forbids a source every path needs leaves no permitted call: the right trajectory is empty
    scored_d = task_d if refusal is None else {**task_d, "golden_actions": [], "alternative_paths": []}
    scores = scoring.score_episode(
        scored_d,
        episode,
        ctx.registry.by_platform_name,
        response=response,
        environment=environment,
        hard_failure=ep.hard_failure,
        default_budget=s.max_calls,
    )
    action = scores["action"]
    vakra = None
    if s.stages:
        attempted = [{"tool": c["tool"], "status": c.get("status")} for c in episode["calls"]]
        executed = iter(runner.responses if runner is not None else [])
        predicted = [next(executed, {**c, "ok": False}) if c["status"] == "executed" else c for c in attempted]
        vakra = stages.score(
            task_d,
            gt_paths=gt_paths,
            predicted=predicted,
            answer=episode["final_answer"],
            response=response,
            source_of=_source_of(ctx, tools),
            platform_of=_platform_of(tools),
        )
    row = {
        "task_id": task.id,
        "domain": task.domain,
        "category": task.category,
        "pattern": task.pattern,
        "language": task.language,
        "query": task.query,
        "run": run,
        "seed": s.seeds()[run],
        "passed": scores["passed"],
        "outcome": scores["outcome"],
        "hard_failure": scores["hard_failure"],
        "stop_reason": episode["stop_reason"],
        "error": episode["error"],
        "final_answer": episode["final_answer"],
        "gold": task.answer.text if refusal is None else refusal,
        "response_pass": None if response is None else bool(response["passed"]),
        "response_method": None if response is None else response["method"],
        "env_pass": None if environment is None else bool(environment["passed"]),
        "action_score": action["score"],
        "action_correctness": action["correctness"],
        "action_efficiency": action["efficiency"],
        "action_cr": action["cr"],
        "action_mpc": action["mpc"],
        "n_dup": action["n_dup"],
        "n_opt": action["n_opt"],
        "budget": action["budget"],
        "tool_calls": scores["tool_calls"],
        "tool_calls_ok": scores["tool_calls_ok"],
        "turns": len(episode["turns"]),
        "format_violations": episode["format_violations"],
        "formats": sorted({f for t in episode["turns"] for f in t["formats"]}),
        "failures": episode["failures"],
        "waterfall": scores["waterfall"],
        "hop_type": stages.hop_type(task_d),
        "policy_category": stages.category_of(task_d),
        "vakra": vakra,
        "requests": episode["requests"],
        "cache_hits": episode["cache_hits"],
        "elapsed_s": episode["elapsed_s"],
    }
    trace = {
        "task_id": task.id,
        "run": run,
        "seed": row["seed"],
        "backend": backend.name,
        "model": backend.model,
        "system_prompt": system,
        "query": task.query,
        "system_calls": system_calls,
        "turns": episode["turns"],
        "calls": episode["calls"],
        "final_answer": episode["final_answer"],
        "stop_reason": episode["stop_reason"],
        "error": episode["error"],
        "state": observed,
        "scores": scores,
    }
    _check_no_secrets(trace, secrets)
    ctx.done += 1
    ctx.progress(
        f"[{ctx.done}/{ctx.total}] {task.domain} {task.pattern} {task.id[7:19]} run {run}: "
        f"{'PASS' if row['passed'] else 'fail'} ({row['stop_reason']}; {row['tool_calls']} calls, "
        f"{row['turns']} turns, ACTION {row['action_score']:.2f})"
    )
    return row, trace


def _check_no_secrets(obj: Any, secrets: Sequence[str]) -> None:
    text = json.dumps(obj, ensure_ascii=False, default=str)
    leaked = [s for s in secrets if len(s) >= 6 and s in text]
    if leaked:  # the executor redacts everything it returns; this guards the trace as a whole
        raise RuntimeError(f"an episode trace contains {len(leaked)} API key string(s); refusing to keep it")


# --------------------------------------------------------------------------- preflight


async def preflight(ctx: _Context, llm: ModelClient, tasks: Sequence[Task]) -> dict[str, Any]:
    """The model backend answers and every involved platform's key tool answers; else EvalError."""
    from factory.llm.errors import LLMError

    if ctx.settings.backend == ORACLE:
        base: Any = ctx.backends[0]
    else:
        base = llm.chat_backend(ctx.settings.backend)
    try:
        await asyncio.to_thread(base.start)
    except LLMError as e:
        raise EvalError(f"model backend {base.name!r} cannot start: {e}") from None
    if ctx.settings.backend != ORACLE:
        unreachable = await base.unreachable(timeout_s=10.0)  # an answer of any kind: the episodes will tell
        if unreachable is not None:
            raise EvalError(f"model backend {base.name!r} is not reachable at {base.url}: {unreachable}")
    keys: dict[str, ToolSpec] = {}
    domains: set[str] = set()
    for t in tasks:
        tt = ctx.tools_of(t)
        domains.update(tt.domains)
        for k in tt.key_specs:
            keys.setdefault(k.platform, k)
    checked: dict[str, str] = {}
    if keys:
        async with ctx.make_executor(sorted(domains)) as ex:
            results = await ex.call_many([(k, {}) for k in keys.values()])
        for k, r in zip(keys.values(), results, strict=True):
            checked[k.platform] = r.outcome.value
            if not r.ok:
                demo = (
                    f" (demo service at {ctx.cfg.demo.base_url}: start it with `factory demo`)"
                    if ctx.cfg.demo.enabled
                    else ""
                )
                raise EvalError(
                    f"tool platform {k.platform!r} does not answer: {k.name} → {r.outcome.value}: {r.detail}{demo}"
                )
    return {"model_url": base.url, "platforms": checked}


# --------------------------------------------------------------------------- the evaluation


@dataclass
class EvalResult:
    report: dict[str, Any]
    traces: list[dict[str, Any]]


def evaluation_id(settings: EvalSettings, tasks: Sequence[Task], model: str) -> str:
    """A content hash of what was evaluated (backend, model, settings, task ids)."""
    blob = json.dumps({"s": settings.as_dict(), "m": model, "t": sorted(t.id for t in tasks)}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


async def aevaluate(
    tasks: Sequence[Task],
    inventories: Mapping[str, Mapping[str, Any]],
    cfg: ProjectConfig,
    llm: ModelClient,
    settings: EvalSettings,
    *,
    progress: Callable[[str], None] | None = None,
    selection: Mapping[str, Any] | None = None,
) -> EvalResult:
    """Evaluate `settings.backend` on `tasks` (already selected) and build the report."""
    from factory.eval import report as reporting

    if not tasks:
        raise EvalError("no tasks to evaluate")
    oracle = settings.backend == ORACLE
    if not oracle and settings.backend not in llm.backend_names():
        raise EvalError(f"unknown backend {settings.backend!r}; declared backends: {', '.join(llm.backend_names())}")
    # the search tools serve the published (decontaminated) retrieval_index, not the synthesis version they pin
    registry = ToolRegistry.from_inventories(served_inventories(inventories, cfg))
    if oracle:
        backends: list[Any] = [OracleBackend(tasks, registry.by_platform_name)] * settings.runs
    else:
        backends = [
            llm.backend_variant(
                settings.backend, temperature=settings.temperature, seed=seed, max_tokens=settings.max_tokens,
                cache=settings.cache,
            )
            for seed in settings.seeds()
        ]  # fmt: skip
    judge_name = settings.judge_backend or (settings.backend if settings.judge_fallback and not oracle else None)
    judge_backend = llm.chat_backend(judge_name) if judge_name else None
    ctx = _Context(
        cfg=cfg,
        settings=settings,
        registry=registry,
        backends=backends,
        judge=ResponseJudge(judge_backend) if judge_backend is not None else None,
        progress=progress or log.info,
        total=len(tasks) * settings.runs,
    )
    try:
        checked = await preflight(ctx, llm, tasks)
        sem = asyncio.Semaphore(settings.concurrency)

        async def one(task: Task, run: int) -> tuple[dict[str, Any], dict[str, Any]]:
            async with sem:
                return await run_episode(ctx, task, run)

        results = await asyncio.gather(*(one(t, r) for t in tasks for r in range(settings.runs)))
    finally:
        for b in [*backends, *([judge_backend] if judge_backend is not None else [])]:
            await b.aclose_loop()
    rows = [r for r, _ in results]
    traces = [t for _, t in results]
    base = backends[0] if oracle else llm.chat_backend(settings.backend)
    model = {
        "backend": settings.backend,
        "kind": base.kind,
        "model": base.model,
        "tool_calls": bool(base.cfg.tool_calls),
        "url": checked["model_url"],
    }
    languages = sorted({t.language for t in tasks})
    templates = prompts.template_hashes([n for lang in languages for n in template_names(lang)] + [JUDGE_TEMPLATE])
    report = reporting.build_report(
        rows,
        settings=settings.as_dict(),
        model=model,
        selection=dict(selection or {}),
        prompts=templates,
        evaluation_id=evaluation_id(settings, tasks, base.model),
        platforms=checked["platforms"],
    )
    return EvalResult(report=report, traces=traces)


def evaluate(
    tasks: Sequence[Task],
    inventories: Mapping[str, Mapping[str, Any]],
    cfg: ProjectConfig,
    llm: ModelClient,
    settings: EvalSettings,
    *,
    progress: Callable[[str], None] | None = None,
    selection: Mapping[str, Any] | None = None,
) -> EvalResult:
    """Synchronous `aevaluate` (its own event loop)."""
    return asyncio.run(aevaluate(tasks, inventories, cfg, llm, settings, progress=progress, selection=selection))


def load_inventories(cfg: ProjectConfig, domains: Sequence[str] | None = None) -> dict[str, Any]:
    """tool_inventory values from the data folder (what the asset gets as its input), as agents are served them:
    search tools re-pinned to the published retrieval_index (`served_inventories`)."""
    from factory.io import StoreError, data_store, read_artifact

    store = data_store(cfg)
    out = {}
    for d in domains or cfg.domain_names:
        try:
            out[d] = read_artifact(store, "tool_inventory", d)
        except StoreError:
            continue
    if not out:
        raise EvalError(
            f"no tool_inventory in {store.root}: materialize the pipeline first (`factory run`) for "
            f"{', '.join(domains or cfg.domain_names)}"
        )
    return served_inventories(out, cfg)
