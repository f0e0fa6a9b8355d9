"""Evaluating a model as the agent of the conversation tasks (issue 19 item 6).

Each published conversation task is played `runs` times by the model (`ModelAgent`: the chat backend under
test, the task's tools, the conversations' system prompt) against the user simulator and the live tools, and
scored like the oracle audit (`goal_success`, `sim_faults`). The report always breaks the results down by case
kind, with no_call on its own (it rewards inaction) and the headline without it; pass^k over the k runs; and,
given another report, McNemar's exact test on the two models' per-task outcomes (all runs passed or not).
"""

import asyncio
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from factory import prompts
from factory.config import ProjectConfig
from factory.conversations.build import play
from factory.conversations.episode import Agent, Caps, Simulator
from factory.conversations.metrics import all_runs_pass, case_breakdown, mcnemar_exact
from factory.conversations.tasks import CASE_KINDS
from factory.llm.callformats import parse_reply
from factory.tools.registry import ToolRegistry

SYSTEM_TEMPLATE = "conversations/system.{lang}"


class ModelAgent:
    """A chat backend as the conversation agent: it sees the conversation so far and the task's tools, and
    answers with text or tool calls (structured, or written in the text and parsed)."""

    name = "model"

    def __init__(self, backend: Any, role_name: str = "evaluation") -> None:
        self.backend = backend
        self.role_name = role_name
        self._ids = itertools.count(1)

    async def respond(self, task: Mapping[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        system = " ".join(prompts.render(SYSTEM_TEMPLATE.format(lang=task["language"])).split())
        tools = list(task.get("tools") or [])
        message, _ = await self.backend.chat(
            self.role_name,
            [{"role": "system", "content": system}, *messages],
            tools=tools or None,
            tool_choice="auto" if tools else None,
        )
        reply = parse_reply(message)
        if reply.calls:
            calls = [
                {"id": pc.id or f"call_{next(self._ids)}", "type": "function",
                 "function": {"name": pc.name, "arguments": json.dumps(pc.arguments, ensure_ascii=False)}}
                for pc in reply.calls
            ]  # fmt: skip
            return {"content": reply.text or None, "tool_calls": calls}
        return {"content": reply.text or str(message.get("content") or "")}


def pick(tasks: Sequence[Mapping[str, Any]], split: str | None, max_tasks: int | None, domains: Sequence[str] | None
         ) -> list[Mapping[str, Any]]:  # fmt: skip
    """The tasks of a split ('all': every split) and domains, at most `max_tasks`, taken round-robin over the
    case kinds so that every kind is represented."""
    chosen = [t for t in tasks if (split in (None, "all") or t.get("split") == split)
              and (not domains or t["domain"] in domains)]  # fmt: skip
    by_kind = {k: [t for t in chosen if t["case_pattern"] == k] for k in CASE_KINDS}
    out: list[Mapping[str, Any]] = []
    for group in itertools.zip_longest(*by_kind.values()):
        out.extend(t for t in group if t is not None)
    return out[:max_tasks] if max_tasks else out


def evaluate_conversations(
    tasks: Sequence[Mapping[str, Any]],
    registry: ToolRegistry,
    cfg: ProjectConfig,
    agent_for_run: Callable[[int], Agent],
    simulator: Simulator,
    *,
    runs: int = 1,
    k: int = 1,
    caps: Caps = Caps(),
    concurrency: int = 2,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every task played `runs` times (run r by `agent_for_run(r)`) → the report: rows, by case, pass^k, the
    per-task outcome McNemar's test pairs."""
    if k > runs:
        raise ValueError(f"k={k} exceeds runs={runs}")

    async def go() -> list[dict[str, Any]]:
        gate = asyncio.Semaphore(concurrency)
        agents = [agent_for_run(r) for r in range(runs)]

        async def one(task: Mapping[str, Any], run: int) -> dict[str, Any]:
            async with gate:
                try:
                    score, episode = await play(task, registry, cfg, simulator, caps, agents[run])
                except Exception as e:  # noqa: BLE001 - a model or transport error fails the episode, not the run
                    score = {"task_id": task["id"], "case_pattern": task["case_pattern"], "language": task["language"],
                             "domain": task["domain"], "goal_success": False, "reason": f"error: {type(e).__name__}: "
                             f"{e}"[:300], "sim_fault": False, "sim_faults": [], "stop_reason": "error",
                             "tool_calls": 0, "turns": 0}  # fmt: skip
                    episode = {"transcript": []}
            row = {**score, "run": run, "transcript": episode.get("transcript", [])}
            if progress:
                mark = "ok " if row["goal_success"] else "-- "
                progress(f"{mark}{row['case_pattern']:<10} {row['language']} run {run}: {row['reason'][:90]}")
            return row

        return list(await asyncio.gather(*(one(t, r) for r in range(runs) for t in tasks)))

    rows = asyncio.run(go())
    return {
        "tasks": len(tasks),
        "runs": runs,
        "k": k,
        **case_breakdown(rows, k),
        "per_task": all_runs_pass(rows),
        "rows": rows,
    }


def compare(report: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """McNemar's exact test between two reports' per-task outcomes (over the tasks both played)."""
    return mcnemar_exact(report["per_task"], other["per_task"])


def report_markdown(report: Mapping[str, Any], model: str) -> str:
    """The report as Markdown: by case kind, the headline without no_call, no_call on its own."""
    k = report["k"]
    cols = ["case", "tasks", "episodes", "pass@1", f"pass^{k}", f"pass@{k}", "sim_fault"]

    def line(name: str, s: Mapping[str, Any]) -> str:
        return "| " + " | ".join([name, *("–" if s.get(c) is None else str(s.get(c)) for c in cols[1:])]) + " |"

    out = [f"# Conversations: {model}", "", f"{report['tasks']} task(s) × {report['runs']} run(s)", "",
           "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]  # fmt: skip
    out += [line(c, s) for c, s in report["by_case"].items() if s.get("tasks")]
    out += [line("**all but no_call**", report["without_no_call"]), line("**no_call** (rewards inaction)",
            report["no_call"])]  # fmt: skip
    if report.get("mcnemar"):
        m = report["mcnemar"]
        out += ["", f"McNemar's exact test against {m.get('against', 'the other report')}: {m['tasks']} shared "
                f"task(s), only this model passes {m['b10']}, only the other passes {m['b01']}, p = {m['p']:.4g}"]  # fmt: skip
    return "\n".join(out) + "\n"
