"""Evaluation metrics over episodes (pure): pass@k, pass^k, Student-t intervals, group tables.

- pass@1: the fraction of (task, run) pairs that succeed (kotraj card; EDGE Table 1 averages
  single attempts over the runs, the same number).
- pass@k: the unbiased estimator of Chen et al. (2021) per task with n runs and c successes,
  ``1 − C(n−c, k) / C(n, k)``, averaged over tasks (with n = k: solved by at least one run).
- pass^k: reliability, ``C(c, k) / C(n, k)`` per task averaged over tasks (τ-bench); with
  n = k it is the kotraj card's "correct on all k runs".
- pass_any: solved by at least one of the n runs.
- tool precision: successful calls / all calls (kotraj card), pooled over episodes.
- Student-t 95 % interval over seeds (EDGE Eq. 4): the metric is computed once per run (seed)
  over all tasks, then ``x̄ ± t_{0.975, n−1} · s / √n``.
Every table is broken down by case pattern and domain; a single aggregate is never reported alone.
"""

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from factory.eval.scoring import WATERFALL_STAGES
from factory.llm.agent import FAILURE_KINDS, STOP_REASONS


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: probability that at least one of k runs drawn from n succeeds."""
    if not 0 <= c <= n or k < 1 or k > n:
        raise ValueError(f"pass@k needs 0 ≤ c ≤ n and 1 ≤ k ≤ n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k for one task: probability that all of k runs drawn from n succeed."""
    if not 0 <= c <= n or k < 1 or k > n:
        raise ValueError(f"pass^k needs 0 ≤ c ≤ n and 1 ≤ k ≤ n (n={n}, c={c}, k={k})")
    return math.comb(c, k) / math.comb(n, k)


def t_interval(values: Sequence[float], confidence: float = 0.95) -> dict[str, Any]:
    """Mean ± Student-t half-width over runs (EDGE Eq. 4); no interval from fewer than two runs."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        return {"mean": None, "half_width": None, "low": None, "high": None, "n": 0, "df": None}
    mean = sum(xs) / n
    if n < 2:
        return {"mean": mean, "half_width": None, "low": None, "high": None, "n": n, "df": None}
    from scipy import stats

    s = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * s / math.sqrt(n)
    return {"mean": mean, "half_width": half, "low": mean - half, "high": mean + half, "n": n, "df": n - 1}


def _mean(xs: Iterable[float | None]) -> float | None:
    vals = [float(x) for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def _per_run(rows: Sequence[Mapping[str, Any]], value: Callable[[Mapping[str, Any]], float | None]) -> list[float]:
    by_run: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        v = value(r)
        if v is not None:
            by_run[int(r["run"])].append(float(v))
    return [sum(v) / len(v) for _, v in sorted(by_run.items()) if v]


def aggregate(rows: Sequence[Mapping[str, Any]], k: int) -> dict[str, Any]:
    """Every metric of a set of episode rows (see the module docstring)."""
    if not rows:
        return {"tasks": 0, "episodes": 0}
    by_task: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        by_task[r["task_id"]].append(bool(r["passed"]))
    at_k = [pass_at_k(len(v), sum(v), k) for v in by_task.values() if len(v) >= k]
    hat_k = [pass_hat_k(len(v), sum(v), k) for v in by_task.values() if len(v) >= k]
    calls = sum(r["tool_calls"] for r in rows)
    calls_ok = sum(r["tool_calls_ok"] for r in rows)
    turns = sum(r["turns"] for r in rows)
    violations = sum(r["format_violations"] for r in rows)
    failures = {kind: sum(r["failures"].get(kind, 0) for r in rows) for kind in FAILURE_KINDS}
    stops = {s: sum(1 for r in rows if r["stop_reason"] == s) for s in STOP_REASONS}
    solved = [r for r in rows if r["passed"]]
    resp = [r for r in rows if r.get("response_pass") is not None]
    env = [r for r in rows if r.get("env_pass") is not None]
    out: dict[str, Any] = {
        "tasks": len(by_task),
        "episodes": len(rows),
        "pass@1": _mean(r["passed"] for r in rows),
        f"pass@{k}": _mean(at_k),
        f"pass^{k}": _mean(hat_k),
        "pass_any": _mean(any(v) for v in by_task.values()),
        "response_acc": _mean(r["response_pass"] for r in resp),
        "env_acc": _mean(r["env_pass"] for r in env),
        "action_solved": _mean(r["action_score"] for r in solved),
        "action_all": _mean(r["action_score"] for r in rows),
        "correctness": _mean(r["action_correctness"] for r in rows),
        "efficiency": _mean(r["action_efficiency"] for r in rows),
        "tool_precision": calls_ok / calls if calls else None,
        "tool_calls": calls,
        "format_violations": violations,
        "format_violation_rate": violations / turns if turns else 0.0,
        "mean_turns": turns / len(rows),
        "mean_calls": calls / len(rows),
        "hard_failures": sum(1 for r in rows if r["hard_failure"]),
        "failures": failures,
        "stop_reasons": stops,
        "waterfall": {s: _mean(r["waterfall"][s] for r in rows) for s in WATERFALL_STAGES},
        "ci": {
            "pass@1": t_interval(_per_run(rows, lambda r: float(r["passed"]))),
            "action_all": t_interval(_per_run(rows, lambda r: r["action_score"])),
            "response_acc": t_interval(
                _per_run(rows, lambda r: None if r.get("response_pass") is None else float(r["response_pass"]))
            ),
        },
    }
    return out


GROUP_COLUMNS = ("category", "pattern", "domain")


def group_tables(rows: Sequence[Mapping[str, Any]], k: int) -> dict[str, list[dict[str, Any]]]:
    """{'by_category': [...], 'by_pattern': [...], 'by_domain': [...]}: `aggregate` per group value."""
    out: dict[str, list[dict[str, Any]]] = {}
    for col in GROUP_COLUMNS:
        groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for r in rows:
            groups[str(r[col])].append(r)
        out[f"by_{col}"] = [{col: g, **aggregate(groups[g], k)} for g in sorted(groups)]
    return out


def case_rows(rows: Sequence[Mapping[str, Any]], k: int) -> list[dict[str, Any]]:
    """One row per task: its runs, successes, pass@k, pass^k, mean ACTION, stop reasons."""
    by_task: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        by_task[r["task_id"]].append(r)
    out = []
    for tid in sorted(by_task, key=lambda t: (by_task[t][0]["domain"], by_task[t][0]["pattern"], t)):
        rs = sorted(by_task[tid], key=lambda r: r["run"])
        n, c = len(rs), sum(bool(r["passed"]) for r in rs)
        out.append(
            {
                "task_id": tid,
                "domain": rs[0]["domain"],
                "category": rs[0]["category"],
                "pattern": rs[0]["pattern"],
                "language": rs[0]["language"],
                "runs": n,
                "successes": c,
                "pass@1": c / n,
                f"pass@{k}": pass_at_k(n, c, k) if n >= k else None,
                f"pass^{k}": pass_hat_k(n, c, k) if n >= k else None,
                "action": _mean(r["action_score"] for r in rs),
                "mean_turns": sum(r["turns"] for r in rs) / n,
                "mean_calls": sum(r["tool_calls"] for r in rs) / n,
                "stop_reasons": ",".join(r["stop_reason"] for r in rs),
                "query": rs[0]["query"],
            }
        )
    return out
