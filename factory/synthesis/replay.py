"""Replay a task's golden actions against the live tools and recompute its answer (pure core).

Actions run step by step (calls of one step concurrently, state-changing ones one at a time in
their golden order) in one fresh executor session, so the
key-acquisition step hands out a new key and state-changing tools start from a clean state. The
answer is recomputed from every record of each call (an answer spec may select a record of a
listing, `answers`); the returned rows keep only what a golden action stores.
"""

import asyncio
from collections.abc import Mapping
from typing import Any

from factory.synthesis import answers
from factory.synthesis.execute import call_row
from factory.tools.executor import ToolExecutor
from factory.tools.outcomes import is_success_outcome


async def replay_task(task: Mapping[str, Any], make_executor) -> dict[str, Any]:
    """{'answer': recomputed answer (None when a call failed), 'rows': executed rows, 'ok': every call succeeded}."""
    actions = list(task["golden_actions"])
    rows: list[dict[str, Any] | None] = [None] * len(actions)
    records: list[list[dict[str, Any]]] = [[] for _ in actions]
    ex: ToolExecutor
    async with make_executor() as ex:
        for step in sorted({a["step"] for a in actions}):
            idx = [i for i, a in enumerate(actions) if a["step"] == step]
            calls = [(f"{actions[i]['platform']}.{actions[i]['tool']}", actions[i]["args"]) for i in idx]
            if any(ex.tool(name).state_changing for name, _ in calls):
                # state changes run one at a time in golden order (ids handed out follow that order)
                results = [await ex.call(name, args) for name, args in calls]
            else:
                results = await ex.call_many(calls)
            for i, r in zip(idx, results, strict=True):
                rows[i] = call_row(r, step, actions[i]["tool"])
                records[i] = list(r.records)
    done = [r for r in rows if r is not None]
    ok = all(is_success_outcome(r["outcome"]) for r in done)
    full = [{**r, "records_list": recs} for r, recs in zip(done, records, strict=True)]
    return {"answer": answers.compute(task["answer_spec"], full) if ok else None, "rows": done, "ok": ok}


def replay(task: Mapping[str, Any], make_executor) -> dict[str, Any]:
    return asyncio.run(replay_task(task, make_executor))
