"""The audit's answer-spec evaluator on small hand-made specs and results."""

from __future__ import annotations

import pytest

from factory.audit.spec import UNKNOWN, CallResult, SpecUnreadable, Underivable, evaluate, read_positions, same

ACTIONS = [
    {"step": 1, "tool": "key"},
    {"step": 2, "tool": "a"},
    {"step": 2, "tool": "b"},
    {"step": 3, "tool": "c"},
]
RESULTS = [
    CallResult(records=[{"api_key": UNKNOWN}]),
    CallResult(records=[{"name": "x", "n": 4}, {"name": "y", "n": 9}], total=30),
    CallResult(records=[{"name": "z", "n": 2}], total=12),
    CallResult(records=[{"title": "Only", "track_count": 7}]),  # a single object: no total
]


def ev(spec: dict) -> dict:
    return evaluate(spec, ACTIONS, RESULTS)


def test_count_sums_totals_and_counts_single_objects_as_one() -> None:
    assert ev({"kind": "count", "calls": [1, 2]})["value"] == 42
    assert ev({"kind": "count", "calls": [3]})["value"] == 1
    # step references: the second call of step 2 is position 2
    assert ev({"kind": "count", "calls": [{"step": 2, "index": 1}]})["value"] == 12
    # a count field of a selected record instead of the total
    assert (
        ev({"kind": "count", "calls": [{"step": 2, "index": 0, "record": {"name": "y"}, "field": "n"}]})["value"] == 9
    )


def test_value_reads_the_first_or_selected_record() -> None:
    assert ev({"kind": "value", "calls": [1], "field": "name"})["value"] == "x"
    assert ev({"kind": "value", "calls": [{"step": 2, "record": {"n": 9}}], "field": "name"})["value"] == "y"
    assert ev({"kind": "value", "calls": [1, 2], "field": "n"})["value"] == [4, 2]


def test_cmp_labels_order_and_ties() -> None:
    arms = [{"kind": "count", "calls": [1]}, {"kind": "count", "calls": [2]}]
    assert ev({"kind": "cmp", "arms": arms, "labels": ["A", "B"], "order": "more"})["value"] == "A"
    assert ev({"kind": "cmp", "arms": arms, "labels": ["A", "B"], "order": "fewer"})["value"] == "B"
    tie = [{"kind": "count", "calls": [1]}, {"kind": "count", "calls": [1]}]
    assert ev({"kind": "cmp", "arms": tie, "labels": ["A", "B"]})["value"] is None
    diff = ev({"kind": "cmp", "arms": arms, "labels": ["A", "B"], "order": "fewer", "ask": "difference"})
    assert diff == {"value": 18, "counts": [30, 12]}  # |30 - 12|, whatever the order
    assert ev({"kind": "cmp", "arms": tie, "labels": ["A", "B"], "ask": "difference"})["value"] is None


def test_cond_selects_the_branch_by_threshold() -> None:
    spec = {
        "kind": "cond",
        "cond_call": 2,
        "threshold": 12,
        "then": {"kind": "value", "calls": [3], "field": "title"},
        "else": {"kind": "count", "calls": [1]},
    }
    assert ev(spec) == {"value": "Only", "branch": "then", "condition": 12}
    assert ev({**spec, "threshold": 13}) == {"value": 30, "branch": "else", "condition": 12}


def test_sem_lists_its_parts() -> None:
    spec = {
        "kind": "sem",
        "parts": [{"kind": "count", "calls": [2]}, {"kind": "value", "calls": [3], "field": "title"}],
    }
    assert ev(spec)["value"] == [12, "Only"]
    assert read_positions(spec, ACTIONS) == {2, 3}


def test_unknown_values_and_missing_results_are_underivable() -> None:
    with pytest.raises(Underivable):
        ev({"kind": "value", "calls": [0], "field": "api_key"})
    with pytest.raises(Underivable):
        evaluate({"kind": "count", "calls": [1]}, ACTIONS, [None, None, None, None])
    with pytest.raises(Underivable):
        evaluate({"kind": "count", "calls": [1]}, ACTIONS, [None, CallResult(error="not found"), None, None])
    with pytest.raises(Underivable):
        ev({"kind": "value", "calls": [{"step": 2, "record": {"name": "nobody"}}], "field": "n"})


def test_unreadable_specs() -> None:
    for spec in (
        {"kind": "count", "calls": [9]},
        {"kind": "count", "calls": [{"step": 7}]},
        {"kind": "median", "calls": [1]},
        {"kind": "value", "calls": [1]},
    ):
        with pytest.raises(SpecUnreadable):
            ev(spec)


def test_same_compares_numbers_text_and_lists() -> None:
    assert same(620, "620") and same(3, 3.0) and same(" 전라남도", "전라남도")
    assert not same(621, 620) and not same("1", "one") and not same(None, 0)
    assert same([25, "서울"], [25.0, "서울"]) and not same([25], [25, 25])
    assert same(True, True) and not same(True, 1)
