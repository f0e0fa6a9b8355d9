"""Schema-bias evaluation (§5-6): a model × variant grid on the same tasks.

Each episode shows the model a variant's tools (and, optionally, the variant's one-sentence
instruction), decodes every call through the execution adapter and executes the native actions
against the live tools. Success: the multiset of executed native actions equals the gold multiset a*
and the final answer is right (the RESPONSE check of factory.eval.scoring). A failed episode gets the
first failure mode of Table 2 whose rule fires:

1. ``livelock`` — the same call answered the same way `loop_repeats` times, or the turn or call limit reached;
2. ``transaction_handle`` — a protocol step rejected (unknown or closed transaction, unknown handle,
   a method invoked before its service was listed);
3. ``rejected_and_stuck`` — a call was rejected and nothing executed after the last rejection;
4. ``wrong_class`` — an executed operation that a* does not contain;
5. ``under_execution`` — the executed actions are a strict sub-multiset of a*;
6. ``over_execution`` — a* is a strict sub-multiset of the executed actions;
7. ``wrong_arguments`` — anything else with wrong actions (same operations, other argument values);
and ``answer`` when the actions are right but the answer is not, ``model_error`` when the backend failed (an
HTTP error, a prompt longer than the model's context): neither is a schema failure.

`mode='schema_form'` re-runs decoding off-schema calls that are valid native calls (App. E.1); the
per-cell difference is the schema-form gap. Cells report a Wilson 95% interval.
"""

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factory import prompts
from factory.eval.oracle import final_answer
from factory.eval.scoring import score_response
from factory.llm.agent import offered_from_definition, system_prompt, template_names
from factory.llm.callformats import parse_reply
from factory.llm.errors import BackendUnavailableError, LLMError
from factory.variants.actions import NativeAction, as_trace
from factory.variants.adapter import AdapterSession, ExecuteFn, Mode, World
from factory.variants.core import Call, Catalog, Reject, Reply, Variant, substitute

FAILURE_MODES = (
    "livelock",
    "transaction_handle",
    "rejected_and_stuck",
    "wrong_class",
    "under_execution",
    "over_execution",
    "wrong_arguments",
)
EVAL_ROLE = "evaluation"
SYSTEM = (
    "You answer the user's question by calling the provided tools; use only those tools. When you have the "
    "result, reply without a tool call and state it: a number as `The result is \\boxed{{N}}`, otherwise as "
    "`ANSWER: <text>`.{instruction}"
)


@dataclass
class GridSettings:
    max_turns: int = 24
    max_calls: int = 40
    loop_repeats: int = 3
    max_observation_chars: int = 3000
    instruction: bool = False  # append the variant's one-sentence instruction to the system prompt
    first_call_required: bool = False  # tool_choice=required on the first turn


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = successes / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return round(max(0.0, mid - half), 4), round(min(1.0, mid + half), 4)


def failure_mode(ep: Mapping[str, Any], gold: Sequence[str], gold_ops: set[str]) -> str | None:
    """The first Table-2 mode whose rule fires (None for a success)."""
    if ep["success"]:
        return None
    if ep["stop"] == "model_error":  # the backend failed (not a schema failure)
        return "model_error"
    if ep["stop"] in ("livelock", "max_turns", "max_calls"):
        return "livelock"
    steps = ep["steps"]
    if any(s["kind"] == "rejected" and s["reject_kind"] == "protocol" for s in steps):
        return "transaction_handle"
    last_reject = max((i for i, s in enumerate(steps) if s["kind"] == "rejected"), default=None)
    if last_reject is not None and not any(s["kind"] == "executed" for s in steps[last_reject + 1 :]):
        return "rejected_and_stuck"
    executed = Counter(ep["executed"])
    if any(json.loads(k)[0] not in gold_ops for k in executed):
        return "wrong_class"
    want = Counter(gold)
    if executed != want and not (executed - want) and (want - executed):
        return "under_execution"
    if executed != want and not (want - executed) and (executed - want):
        return "over_execution"
    if executed == want:
        return "answer"
    return "wrong_arguments"


def observation(payload: Mapping[str, Any], limit: int) -> str:
    """A tool result as the model reads it: the result fields as JSON, cut to `limit` characters."""
    keep = {k: payload[k] for k in ("ok", "outcome", "total_count", "record_count", "records", "error") if k in payload}
    text = json.dumps(keep if keep else dict(payload), ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 14] + "…(truncated)"


async def run_episode(
    backend: Any,
    task: Mapping[str, Any],
    variant: Variant,
    native: Catalog,
    gold: Sequence[NativeAction],
    world: World,
    settings: GridSettings,
    mode: Mode = "normal",
) -> dict[str, Any]:
    """One task under one variant → the episode row (success, failure mode, steps)."""
    instruction = f" {variant.instruction}" if settings.instruction and variant.instruction else ""
    tools = variant.schema.definitions()
    # protocols need more calls than native: the limits grow with the encoded golden trace
    needed = len(variant.encoder(as_trace(gold)))
    max_calls, max_turns = max(settings.max_calls, 2 * needed), max(settings.max_turns, needed + 2)
    # a backend without structured tool calls (the embedded model) reads the variant's tools in its system
    # prompt and writes its calls in the text, as in the evaluation harness (factory.llm.agent)
    structured = bool(getattr(getattr(backend, "cfg", None), "tool_calls", True))
    if structured:
        system = SYSTEM.format(instruction=instruction)
    else:
        offered = [offered_from_definition(d) for d in tools]
        answer_type = (task.get("answer") or {}).get("type")
        system = system_prompt("en", max_calls, offered, answer_type) + instruction
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": task["query"]}]

    async def body(execute: ExecuteFn) -> dict[str, Any]:
        session = AdapterSession(variant, native, mode)
        steps: list[dict[str, Any]] = []
        executed: list[str] = []
        seen: Counter[str] = Counter()
        stop, final, error = "max_turns", None, None
        for turn in range(max_turns):
            kw: dict[str, Any] = {"tools": tools} if structured else {}
            if structured and settings.first_call_required and turn == 0:
                kw["tool_choice"] = "required"
            try:
                reply, _ = await backend.chat(EVAL_ROLE, messages, **kw)
            except BackendUnavailableError:  # no server: the whole grid stops (the CLI says so)
                raise
            except LLMError as e:  # e.g. the prompt is longer than the model's context: this episode fails
                stop, error = "model_error", str(e)[:600]
                break
            calls = reply.get("tool_calls") or []
            text_results: list[dict[str, str]] | None = None
            if not calls:
                parsed = parse_reply(reply)  # calls written in the content (any family's format)
                if not parsed.calls:
                    stop, final = "answered", parsed.text or reply.get("content")
                    break
                calls = [
                    {"id": f"call_{turn}_{j}", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for j, c in enumerate(parsed.calls)
                ]
                text_results = []
                messages.append({"role": "assistant", "content": reply.get("content")})
            else:
                messages.append({"role": "assistant", "content": reply.get("content"), "tool_calls": calls})
            for j, tc in enumerate(calls):
                fn = tc.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                    args = args if isinstance(args, dict) else {"_": args}
                except json.JSONDecodeError:
                    args = None
                call = Call(str(fn.get("name") or ""), args or {})
                if args is None:
                    out: Any = Reject("arguments are not a JSON object", "schema")
                    off = False
                else:
                    out, off = session.decode(call)
                row: dict[str, Any] = {"name": call.name, "arguments": call.arguments, "kind": "executed"}
                if isinstance(out, Reject):
                    row.update(kind="rejected", reason=out.reason, reject_kind=out.kind)
                    content = json.dumps({"error": out.reason}, ensure_ascii=False)
                elif isinstance(out, Reply):
                    row["kind"] = "reply"
                    content = json.dumps(out.payload, ensure_ascii=False, default=str)
                else:
                    result = await execute(out.call)
                    executed.append(out.call.key())
                    row.update(native=out.call.as_dict(), off_schema=off, ok=result.get("ok"))
                    content = observation(result, settings.max_observation_chars)
                steps.append(row)
                seen[call.key() + "\n" + content] += 1  # the same call answered the same way: no progress
                if text_results is not None:
                    text_results.append({"name": call.name, "content": content})
                else:
                    messages.append(
                        {"role": "tool", "tool_call_id": tc.get("id") or f"call_{turn}_{j}", "content": content}
                    )
            if text_results:  # calls written in the text: the results come back as one user message
                feedback = prompts.render(template_names("en")[1], kind="results", results=text_results, problems=[])
                messages.append({"role": "user", "content": feedback})
            if any(n >= settings.loop_repeats for n in seen.values()):
                stop = "livelock"
                break
            if len(steps) >= max_calls:
                stop = "max_calls"
                break
        return {"steps": steps, "executed": executed, "stop": stop, "final": final, "error": error}

    ep, state = await world.episode(body)
    gold_keys = [a.key() for a in gold]
    actions_ok = Counter(ep["executed"]) == Counter(gold_keys)
    # the question is the scorer's context: a number it states (a threshold, a year) is not the answer
    response = score_response(task["answer"], ep["final"], question=task.get("query"))
    ep.update(
        task=task["id"],
        variant=variant.id,
        mode=mode,
        actions_ok=actions_ok,
        answer_ok=bool(response.get("passed")),
        success=actions_ok and bool(response.get("passed")),
        calls=len(ep["steps"]),
        off_schema=sum(1 for s in ep["steps"] if s.get("off_schema")),
        state=state,
    )
    ep["failure_mode"] = failure_mode(ep, gold_keys, {a.operation for a in gold})
    return ep


class VariantOracle:
    """The golden oracle under a variant: replays the task's encoded golden trace one call per turn, filling
    references from the replies it got, then states the gold answer."""

    def __init__(self, traces: Mapping[str, tuple[Mapping[str, Any], list[Call]]]) -> None:
        self._by_query = traces  # query → (task, encoded trace)
        self._n = 0

    async def chat(self, role_name: str, messages: list[dict[str, Any]], **_: Any) -> tuple[dict[str, Any], bool]:
        user = str(next((m.get("content") for m in messages if m.get("role") == "user"), "") or "")
        task, trace = self._by_query[user]
        tool_msgs = [m for m in messages if m.get("role") == "tool"]
        pos = len(tool_msgs)
        if pos >= len(trace):
            return {"content": final_answer(task)}, False
        replies: dict[str, Any] = {}
        for call, msg in zip(trace, tool_msgs, strict=False):
            if call.label:
                try:
                    replies[call.label] = json.loads(msg["content"])
                except (json.JSONDecodeError, TypeError):
                    pass
        # every next call whose references are already answered goes out in this turn
        batch = []
        for nxt in trace[pos:]:
            try:
                args = substitute(nxt.arguments, replies)
            except KeyError:
                break
            self._n += 1
            fn = {"name": nxt.name, "arguments": json.dumps(args, ensure_ascii=False)}
            batch.append({"id": f"oracle_{self._n}", "type": "function", "function": fn})
        return {"content": None, "tool_calls": batch}, False


def oracle_for(variant: Variant, tasks: Sequence[tuple[Mapping[str, Any], Sequence[NativeAction]]]) -> VariantOracle:
    return VariantOracle({t["query"]: (t, variant.encoder(as_trace(gold))) for t, gold in tasks})


def summarize(episodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (variant, mode): success rate with its Wilson interval and failure-mode counts."""
    cells: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for e in episodes:
        cells.setdefault((e["variant"], e["mode"]), []).append(e)
    rows = []
    for (vid, mode), eps in sorted(cells.items()):
        ok = sum(1 for e in eps if e["success"])
        lo, hi = wilson(ok, len(eps))
        modes = Counter(e["failure_mode"] for e in eps if e["failure_mode"])
        rows.append(
            {
                "variant": vid,
                "mode": mode,
                "episodes": len(eps),
                "success": round(ok / len(eps), 4),
                "ci_low": lo,
                "ci_high": hi,
                "mean_calls": round(sum(e["calls"] for e in eps) / len(eps), 2),
                **{m: modes.get(m, 0) for m in (*FAILURE_MODES, "answer", "model_error")},
            }
        )
    by = {(r["variant"], r["mode"]): r for r in rows}
    for r in rows:
        other = by.get((r["variant"], "schema_form"))
        if r["mode"] == "normal" and other is not None:
            r["schema_form_gap"] = round(other["success"] - r["success"], 4)
    return rows


def evaluate_grid(
    tasks: Sequence[Mapping[str, Any]],
    inventories: Mapping[str, Any],
    cfg: Any,
    backend: Any | None,
    variant_ids: Sequence[str] | None,
    *,
    modes: Sequence[Mode] = ("normal",),
    settings: GridSettings | None = None,
    embed: Any = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Run the grid: every task under every chosen variant (None: all that apply) and mode. `backend`
    None is the golden oracle (success must be 1.0 everywhere). Returns {'cells', 'episodes', 'skipped'}."""
    import asyncio

    from factory.tools.registry import ToolRegistry, executor_factory
    from factory.variants.actions import native_actions, native_catalog
    from factory.variants.build import inventory_specs
    from factory.variants.registry import build_variants

    settings = settings or GridSettings(loop_repeats=cfg.evaluation.loop_repeats)
    specs_all = inventory_specs(inventories)
    registry = ToolRegistry.from_inventories(inventories)
    episodes: list[dict[str, Any]] = []
    skipped: dict[str, dict[str, str]] = {}
    by_domain: dict[str, list[Mapping[str, Any]]] = {}
    for t in tasks:
        by_domain.setdefault(t["domain"], []).append(t)
    for domain, dtasks in sorted(by_domain.items()):
        specs = [s for s in specs_all if s.domain == domain]
        by = {(s.platform, s.name): s for s in specs}
        native = native_catalog(domain, specs)
        gold = [(t, native_actions(t, by)) for t in dtasks]
        variants, skipped[domain] = build_variants(native, embed, list(variant_ids) if variant_ids else None)
        world_args = (executor_factory(cfg, [domain], registry), specs, cfg.variants.reuse_read_results)
        episodes += asyncio.run(
            _domain_grid(domain, world_args, variants, gold, native, backend, modes, settings, progress)
        )
    return {"cells": summarize(episodes), "episodes": episodes, "skipped": skipped}


async def _domain_grid(
    domain: str,
    world_args: tuple[Any, Sequence[Any], bool],
    variants: Sequence[Variant],
    gold: Sequence[tuple[Mapping[str, Any], Sequence[NativeAction]]],
    native: Catalog,
    backend: Any | None,
    modes: Sequence[Mode],
    settings: GridSettings,
    progress: Any,
) -> list[dict[str, Any]]:
    """One domain's episodes, in one executor (each episode an executor episode)."""
    from factory.variants.adapter import ExecutorWorld, state_specs

    make, specs, reuse = world_args
    out: list[dict[str, Any]] = []
    async with make() as ex:
        world = ExecutorWorld(ex, {s.name: s for s in specs}, state_specs(specs), reuse=reuse)
        for v in variants:
            model = backend if backend is not None else oracle_for(v, gold)
            for mode in modes:
                for t, g in gold:
                    out.append(await run_episode(model, t, v, native, g, world, settings, mode))
            if progress:
                done = [e for e in out if e["variant"] == v.id]
                progress(f"{domain} {v.id}: {sum(e['success'] for e in done)}/{len(done)} episodes succeeded")
    return out
