"""Deterministic split assignment: quotas per (domain, pattern), held-out platforms."""

import math
import random

import pytest

from factory.splits import assign

RATIOS = {"train": 0.8, "dev": 0.1, "test": 0.1}


def tasks(spec: dict[tuple[str, str], int], platform: str = "p") -> list[dict]:
    out = []
    for (d, p), n in spec.items():
        for i in range(n):
            out.append(
                {"id": f"{d}-{p}-{i:03d}", "domain": d, "pattern": p, "platforms": [platform], "golden_actions": []}
            )
    return out


def test_same_input_same_splits_in_any_order():
    ts = tasks({("a", "SEQ"): 23, ("a", "CMP"): 7, ("b", "SEQ"): 11, ("b", "FAN"): 2})
    a1, r1 = assign.assign_splits(ts, RATIOS, seed=13)
    shuffled = ts[:]
    random.Random(2).shuffle(shuffled)
    a2, r2 = assign.assign_splits(shuffled, RATIOS, seed=13)
    assert a1 == a2 and r1 == r2
    a3, _ = assign.assign_splits(ts, RATIOS, seed=14)
    assert a3 != a1  # the seed moves tasks between splits
    assert set(a1) == {t["id"] for t in ts}


def test_quotas_per_group_largest_remainder():
    spec = {("a", "SEQ"): 23, ("a", "CMP"): 7, ("b", "SEQ"): 11, ("b", "FAN"): 2, ("c", "SEM"): 40}
    out, report = assign.assign_splits(tasks(spec), RATIOS, seed=13)
    for (d, p), n in spec.items():
        cell = report["by_domain_pattern"][d][p]
        assert sum(cell.values()) == n
        for s, r in RATIOS.items():
            assert math.floor(n * r) <= cell[s] <= math.floor(n * r) + 1, (d, p, cell)
    assert report["by_domain_pattern"]["c"]["SEM"] == {"train": 32, "dev": 4, "test": 4}
    totals = {s: sum(1 for v in out.values() if v == s) for s in RATIOS}
    n = sum(spec.values())
    for s, r in RATIOS.items():  # carried remainders keep the totals within one of the exact share
        assert abs(totals[s] - n * r) < 1.0 + 1e-9, totals


def test_many_small_groups_still_fill_dev_and_test():
    spec = {("d", f"P{i}"): 2 for i in range(20)}
    out, _ = assign.assign_splits(tasks(spec), RATIOS, seed=1)
    totals = {s: sum(1 for v in out.values() if v == s) for s in RATIOS}
    assert totals == {"train": 32, "dev": 4, "test": 4}


def test_held_out_platforms_only_in_test():
    ts = tasks({("a", "SEQ"): 30})
    held = [
        {"id": f"h{i}", "domain": "a", "pattern": "SEQ", "platforms": ["p"], "golden_actions": [{"platform": "secret"}]}
        for i in range(6)
    ]
    out, report = assign.assign_splits(ts + held, RATIOS, seed=13, held_out_platforms=["secret"])
    assert all(out[f"h{i}"] == "test" for i in range(6))
    assert report["held_out_tasks"] == 6
    # the other 30 tasks still follow their quotas
    rest = [out[t["id"]] for t in ts]
    assert rest.count("train") == 24 and rest.count("dev") == 3 and rest.count("test") == 3


def test_empty_input():
    out, report = assign.assign_splits([], RATIOS, seed=1)
    assert out == {} and report["by_domain_pattern"] == {}


@pytest.mark.parametrize("ratios", [{"train": 0.7, "test": 0.3}, {"train": 0.6, "dev": 0.2, "test": 0.2}])
def test_other_ratios(ratios):
    out, _ = assign.assign_splits(tasks({("a", "SEQ"): 50}), ratios, seed=3)
    for s, r in ratios.items():
        assert sum(1 for v in out.values() if v == s) == round(50 * r)


# ---- floor per domain (issue 16 item 6)


def _totals(out: dict[str, str], ids: set[str]) -> dict[str, int]:
    return {s: sum(1 for t, v in out.items() if t in ids and v == s) for s in RATIOS}


def test_floor_gives_each_eval_split_twenty_when_the_domain_has_enough():
    spec = {("big", "SEQ"): 60, ("big", "CMP"): 50, ("big", "COND"): 40}  # 150 tasks: 10% would be 15
    out, report = assign.assign_splits(tasks(spec), RATIOS, seed=13, min_eval=20)
    totals = _totals(out, set(out))
    assert totals == {"train": 110, "dev": 20, "test": 20}
    assert report["domain_ratios"]["big"]["dev"] == pytest.approx(20 / 150, abs=1e-4)
    # without the floor the ratios alone apply
    plain, _ = assign.assign_splits(tasks(spec), RATIOS, seed=13)
    assert _totals(plain, set(plain)) == {"train": 120, "dev": 15, "test": 15}


def test_floor_is_bounded_by_the_eval_share_on_a_small_domain_and_ignores_large_ratios():
    ts = tasks({("small", "SEQ"): 14, ("small", "CMP"): 10}) + tasks({("huge", "SEQ"): 400})
    out, report = assign.assign_splits(ts, RATIOS, seed=5, min_eval=20, max_eval_share=0.5)
    small = {t["id"] for t in ts if t["domain"] == "small"}
    huge = {t["id"] for t in ts if t["domain"] == "huge"}
    # 24 tasks: at most half for evaluation, 6 per split (ratios alone would give 2-3)
    assert _totals(out, small) == {"train": 12, "dev": 6, "test": 6}
    # 400 tasks: 10% = 40 is above the floor, so the ratios hold
    assert _totals(out, huge) == {"train": 320, "dev": 40, "test": 40}
    assert report["domain_ratios"]["huge"] == {"train": 0.8, "dev": 0.1, "test": 0.1}


def test_floor_ratios_edge_cases():
    assert assign.floor_ratios(0, RATIOS, 20) == RATIOS
    assert assign.floor_ratios(10, {"train": 1.0}, 20) == {"train": 1.0}
    r = assign.floor_ratios(3, RATIOS, 20, 0.5)  # floor(3 × 0.5 / 2) = 0 seats: the ratios stay
    assert r == pytest.approx(RATIOS)
    r = assign.floor_ratios(100, {"train": 0.7, "test": 0.3}, 20)
    assert r == pytest.approx({"train": 0.7, "test": 0.3})  # 30 test tasks already above the floor


def test_floor_totals_hold_per_domain_with_many_small_groups():
    spec = {(d, f"P{i}"): 2 for d in ("a", "b", "c") for i in range(7)}  # 14 tasks per domain in pairs
    ts = tasks(spec)
    out, _ = assign.assign_splits(ts, RATIOS, seed=13, min_eval=20)
    for d in ("a", "b", "c"):
        ids = {t["id"] for t in ts if t["domain"] == d}
        assert _totals(out, ids) == {"train": 8, "dev": 3, "test": 3}, d  # floor(14 × 0.5 / 2) = 3 each
