"""Deterministic split assignment with quotas per (domain, pattern).

1. Tasks touching a held-out platform (in `platforms` or any golden action) go to "test" only.
2. The other tasks are grouped by (domain, pattern). Each group of n tasks gets, per split s,
   floor(n·ratio_s) or that plus one: the leftover seats of a group go to the splits with the
   largest accumulated remainder (largest-remainder rounding whose fractions carry from group to
   group, so small groups do not all round toward train and the totals stay within one task of
   the exact shares). Groups are visited in a stable hash order of (seed, domain, pattern).
3. Inside a group, tasks are ordered by sha256(seed|task id) and take consecutive seats in the
   configured split order.

Floor (`min_eval`): per domain, every split other than train gets at least `min_eval` tasks where the
domain has enough of them: the floor raises a split's share of that domain to `min_eval / n`, but the
evaluation splits together never take more than `max_eval_share` of the domain (a small domain gets
`floor(n · max_eval_share / k)` per evaluation split, k of them, when that is more than its ratio gives).
The domain's train share is what is left, and remainders carry within the domain (so each domain's
totals are within one task of its shares). Without a floor every domain uses `ratios` as configured.

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


def floor_ratios(n: int, ratios: Mapping[str, float], min_eval: int, max_eval_share: float = 0.5) -> dict[str, float]:
    """The shares one domain of `n` tasks uses: each evaluation split (not train) at least
    min(min_eval, floor(n · max_eval_share / k)) / n, the evaluation splits together at most
    max(their configured share, max_eval_share); train gets the rest (see module doc)."""
    evals = [s for s in ratios if s != "train"]
    if n <= 0 or min_eval <= 0 or not evals:
        return dict(ratios)
    seats = min(min_eval, math.floor(n * max_eval_share / len(evals)))
    out = {s: max(ratios[s], seats / n) if s in evals else 0.0 for s in ratios}
    out["train"] = max(0.0, 1.0 - sum(out[s] for s in evals))
    return out


def group_quotas(
    sizes: Sequence[tuple[tuple[str, str], int]],
    ratios: Mapping[str, float],
    seed: int,
    domain_ratios: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[tuple[str, str], dict[str, int]]:
    """Seats per split for each (domain, pattern) group (see module doc); `domain_ratios` overrides the
    shares of a domain (its floor), the split names and their order stay those of `ratios`."""
    splits = list(ratios)
    carries: dict[str, dict[str, float]] = {}
    order = sorted(sizes, key=lambda gs: (hashlib.sha256(f"{seed}|{gs[0][0]}|{gs[0][1]}".encode()).hexdigest(), gs[0]))
    out = {}
    for group, n in order:
        shares = (domain_ratios or {}).get(group[0], ratios)
        # with per-domain shares the remainders carry within a domain (its floor is met); else across all groups
        carry = carries.setdefault(group[0] if domain_ratios else "", dict.fromkeys(splits, 0.0))
        exact = {s: n * shares[s] for s in splits}
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
    min_eval: int = 0,
    max_eval_share: float = 0.5,
) -> tuple[dict[str, str], dict[str, Any]]:
    """{task id: split} and a report {by_domain_pattern, quotas, held_out, domain_ratios}; `min_eval`: the
    floor of every evaluation split per domain (module doc)."""
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
    per_domain: dict[str, int] = {}
    for (d, _), ids in groups.items():
        per_domain[d] = per_domain.get(d, 0) + len(ids)
    shares = {d: floor_ratios(n, ratios, min_eval, max_eval_share) for d, n in sorted(per_domain.items())}
    quotas = group_quotas([(g, len(ids)) for g, ids in groups.items()], ratios, seed, shares if min_eval else None)
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
        "min_eval": min_eval,
        "max_eval_share": max_eval_share,
        "domain_ratios": {d: {s: round(r, 4) for s, r in sh.items()} for d, sh in shares.items()},
    }
    return out, report
