"""`factory eval --conversations`: the model agent, the task pick, the report by case kind and McNemar."""

import asyncio
import json
from typing import Any

from factory.conversations.episode import RulesSimulator, run_conversation, score_episode
from factory.conversations.evaluate import ModelAgent, compare, pick, report_markdown
from factory.conversations.metrics import all_runs_pass, case_breakdown
from factory.conversations.tasks import conversation_tasks
from tests.conversations.helpers import FakeEnv, noun_of, source_task, trajectory


class _Backend:
    """Answers like a small model: a structured call, then a call written in the text, then the answer."""

    def __init__(self) -> None:
        self.seen: list[list[dict[str, Any]]] = []

    async def chat(self, role: str, messages: list[dict[str, Any]], **kw: Any) -> tuple[dict[str, Any], bool]:
        self.seen.append(messages)
        n = sum(1 for m in messages if m["role"] == "assistant")
        if n == 0:
            fn = {"name": "search", "arguments": json.dumps({"name": "Different World"})}
            return {"content": None, "tool_calls": [{"id": None, "type": "function", "function": fn}]}, False
        if n == 1:
            text = '<tool_call>{"name": "count_items", "arguments": {"parent_id": 90}}</tool_call>'
            return {"content": text}, False
        return {"content": "The artist has 21 albums."}, False


def test_a_model_agent_plays_a_conversation_with_native_and_text_calls() -> None:
    seq = next(t for t in conversation_tasks(source_task(), {}, trajectory=trajectory(), noun_of=noun_of)[0]
               if t["case_pattern"] == "sequential")  # fmt: skip
    backend = _Backend()
    ep = asyncio.run(run_conversation(seq, ModelAgent(backend), RulesSimulator(), FakeEnv(seq["tools_subset"])))
    assert [c["tool"] for c in ep["calls"]] == ["search", "count_items"]
    assert all(c["call_id"] for c in ep["calls"])  # ids filled in where the model gave none
    assert score_episode(seq, ep)["goal_success"]
    assert backend.seen[0][0]["role"] == "system" and backend.seen[0][1]["content"] == seq["initial_message"]


def test_pick_covers_every_kind_and_the_report_keeps_no_call_apart() -> None:
    tasks = [{"id": f"{k}{i}", "case_pattern": k, "split": "test", "domain": "d", "language": "en"}
             for k in ("single", "parallel", "no_call") for i in range(3)]  # fmt: skip
    chosen = pick(tasks, "test", 3, None)
    assert sorted(t["case_pattern"] for t in chosen) == ["no_call", "parallel", "single"]
    assert pick(tasks, "dev", None, None) == []
    rows = [{"task_id": t["id"], "case_pattern": t["case_pattern"], "goal_success": t["case_pattern"] == "no_call"
             or (t["id"] == "single0" and r == 0), "sim_fault": False} for t in tasks for r in range(2)]  # fmt: skip
    report = {"tasks": len(tasks), "runs": 2, "k": 2, **case_breakdown(rows, 2), "per_task": all_runs_pass(rows)}
    assert report["no_call"]["pass^2"] == 1.0 and report["without_no_call"]["pass^2"] == 0.0
    assert report["by_case"]["single"]["pass@1"] == round(1 / 6, 4)
    other = {"per_task": {t["id"]: True for t in tasks}}
    m = compare(report, other)
    assert (m["tasks"], m["b10"], m["b01"]) == (9, 0, 6) and m["p"] == 2 / 64
    report["mcnemar"] = {**m, "against": "oracle"}
    text = report_markdown(report, "tiny")
    assert "**no_call** (rewards inaction)" in text and "| single | 3 | 6 | 0.1667 | 0.0 |" in text
    assert "p = 0.03125" in text
