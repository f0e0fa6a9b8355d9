"""Deterministic split assignment with quotas per (domain, pattern).

1. Tasks touching a held-out platform (in `platforms` or any golden action) go to "test" only.
2. The other tasks are grouped by (domain, pattern). Each group of n tasks gets, per split s,
   floor(n·ratio_s) or that plus one: the leftover seats of a group go to the splits with the
   largest accumulated remainder (largest-remainder rounding whose fractions carry from group to
   group, so small groups do not all round toward train and the totals stay within one task of
   the exact shares). Groups are visited in a stable hash order of (seed, domain, pattern).
3. Inside a group, tasks are ordered by sha256(seed|task id) and take consecutive seats in the
   configured split order.

The result depends only on the set of tasks, the ratios, the held-out platforms and the seed.
"""

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from factory.splits.minhash import stable_order


def task_platforms(task: Mapping[str, Any]) -> set[str]:
    out = set(task.get("platforms") or [])
    out.update(a.get("platform") for a in task.get("golden_actions") or [] if a.get("platform"))
    return out


def group_quotas(
    sizes: Sequence[tuple[tuple[str, str], int]], ratios: Mapping[str, float], seed: int
) -> dict[tuple[str, str], dict[str, int]]:
    """Seats per split for each (domain, pattern) group (see module doc)."""
    splits = list(ratios)
    carry = dict.fromkeys(splits, 0.0)
    order = sorted(sizes, key=lambda gs: (hashlib.sha256(f"{seed}|{gs[0][0]}|{gs[0][1]}".encode()).hexdigest(), gs[0]))
    out = {}
    for group, n in order:
        exact = {s: n * ratios[s] for s in splits}
        base = {s: math.floor(exact[s] + 1e-9) for s in splits}
        for s in splits:
            carry[s] += exact[s] - base[s]
        extra = n - sum(base.values())
        # ties: configured order (earlier split first)
        for s in sorted(splits, key=lambda s: (-carry[s], splits.index(s)))[:extra]:
            base[s] += 1
            carry[s] -= 1.0
        out[group] = base
    return out


def assign_splits(
    tasks: Iterable[Mapping[str, Any]],
    ratios: Mapping[str, float],
    *,
    seed: int,
    held_out_platforms: Iterable[str] = (),
) -> tuple[dict[str, str], dict[str, Any]]:
    """{task id: split} and a report {by_domain_pattern, quotas, held_out}."""
    held = set(held_out_platforms)
    groups: dict[tuple[str, str], list[str]] = {}
    out: dict[str, str] = {}
    held_out_ids: list[str] = []
    meta: dict[str, tuple[str, str]] = {}
    for t in tasks:
        meta[t["id"]] = (t["domain"], t["pattern"])
        if held and task_platforms(t) & held:
            out[t["id"]] = "test"
            held_out_ids.append(t["id"])
            continue
        groups.setdefault((t["domain"], t["pattern"]), []).append(t["id"])
    quotas = group_quotas([(g, len(ids)) for g, ids in groups.items()], ratios, seed)
    for g, ids in groups.items():
        ordered = stable_order(ids, str(seed))
        pos = 0
        for s in ratios:
            for tid in ordered[pos : pos + quotas[g][s]]:
                out[tid] = s
            pos += quotas[g][s]
    by_dp: dict[str, dict[str, dict[str, int]]] = {}
    for tid, s in out.items():
        d, p = meta[tid]
        cell = by_dp.setdefault(d, {}).setdefault(p, dict.fromkeys(ratios, 0))
        cell[s] = cell.get(s, 0) + 1
    report = {
        "by_domain_pattern": {d: dict(sorted(ps.items())) for d, ps in sorted(by_dp.items())},
        "quotas": {f"{d}/{p}": q for (d, p), q in sorted(quotas.items())},
        "held_out_platforms": sorted(held),
        "held_out_tasks": len(held_out_ids),
    }
    return out, report
