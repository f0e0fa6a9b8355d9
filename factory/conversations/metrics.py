"""Conversation evaluation metrics (issue 19 item 6): results by case kind, pass^k, McNemar's exact test.

no_call rewards inaction (a model that never calls a tool passes every no_call task), so it is reported
on its own and the headline aggregate leaves it out; every table keeps the case breakdown.
"""

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from factory.conversations.tasks import CASE_KINDS
from factory.eval.metrics import pass_at_k, pass_hat_k


def _per_task(rows: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, int, int, int]]:
    """task id → (case, runs, successes, sim-fault episodes)."""
    acc: dict[str, list[Any]] = {}
    for r in rows:
        a = acc.setdefault(r["task_id"], [r["case_pattern"], 0, 0, 0])
        a[1] += 1
        a[2] += bool(r["goal_success"])
        a[3] += bool(r.get("sim_fault"))
    return {t: (a[0], a[1], a[2], a[3]) for t, a in acc.items()}


def _summary(tasks: Sequence[tuple[str, int, int, int]], k: int) -> dict[str, Any]:
    if not tasks:
        return {"tasks": 0, "episodes": 0, "pass@1": None, f"pass^{k}": None, f"pass@{k}": None, "sim_fault": None}
    episodes = sum(n for _, n, _, _ in tasks)
    usable = [(n, c) for _, n, c, _ in tasks if n >= k]
    return {
        "tasks": len(tasks),
        "episodes": episodes,
        "pass@1": round(sum(c for _, _, c, _ in tasks) / episodes, 4),
        f"pass^{k}": round(sum(pass_hat_k(n, c, k) for n, c in usable) / len(usable), 4) if usable else None,
        f"pass@{k}": round(sum(pass_at_k(n, c, k) for n, c in usable) / len(usable), 4) if usable else None,
        "sim_fault": round(sum(f for _, _, _, f in tasks) / episodes, 4),
    }


def case_breakdown(rows: Sequence[Mapping[str, Any]], k: int) -> dict[str, Any]:
    """Per case kind and overall without no_call: tasks, episodes, pass@1, pass^k, pass@k, sim_fault rate
    (the harness noise floor). `rows`: one per (task, run) with task_id, case_pattern, goal_success, sim_fault."""
    tasks = _per_task(rows)
    by_case: dict[str, list[tuple[str, int, int, int]]] = defaultdict(list)
    for t in tasks.values():
        by_case[t[0]].append(t)
    return {
        "by_case": {c: _summary(by_case.get(c, []), k) for c in CASE_KINDS},
        "without_no_call": _summary([t for t in tasks.values() if t[0] != "no_call"], k),
        "no_call": _summary(by_case.get("no_call", []), k),
    }


def all_runs_pass(rows: Sequence[Mapping[str, Any]]) -> dict[str, bool]:
    """task id → whether every run succeeded (the pass^k outcome McNemar's test pairs)."""
    return {t: c == n for t, (_, n, c, _) in _per_task(rows).items()}


def mcnemar_exact(a: Mapping[str, bool], b: Mapping[str, bool]) -> dict[str, Any]:
    """McNemar's exact (binomial) two-sided test on two models' per-task outcomes over their shared tasks:
    b01 = tasks only b passes, b10 = tasks only a passes, p = P(|X - n/2| ≥ |b10 - n/2|), X ~ Bin(n, 1/2)."""
    shared = sorted(set(a) & set(b))
    b10 = sum(1 for t in shared if a[t] and not b[t])
    b01 = sum(1 for t in shared if b[t] and not a[t])
    n = b01 + b10
    if n == 0:
        return {"tasks": len(shared), "b01": 0, "b10": 0, "p": 1.0}
    tail = sum(math.comb(n, i) for i in range(min(b01, b10) + 1)) / 2**n
    return {"tasks": len(shared), "b01": b01, "b10": b10, "p": min(1.0, 2 * tail)}
