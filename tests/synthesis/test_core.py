"""Pure parts of Phase B: junction typing, process nodes, grounding, answers, task ids."""

import numpy as np
import pytest

from factory.records import task_id
from factory.synthesis import answers
from factory.synthesis.grounding import grounding_problems, vocabulary
from factory.synthesis.junctions import Rejection, apply_operator, choose_process_node, distinct_keys, junction_type


def test_junction_type_by_cardinality():
    assert [junction_type(n, 5) for n in (1, 2, 5, 6, 500)] == ["SEQ", "FAN", "FAN", "DRV", "DRV"]
    with pytest.raises(ValueError):
        junction_type(0, 5)


FLIGHTS = [
    {"tailnum": f"N{i:03d}", "dep_delay": d, "carrier": c, "date": f"2013-01-{1 + i % 20:02d}"}
    for i, (d, c) in enumerate(zip([5, 80, 12, 80, 3, 45, 9, 120, 7, 60, 33, 2], "DDUUDAADUADU", strict=True))
]


@pytest.mark.parametrize("seed", range(12))
def test_process_node_keeps_at_most_phi_values(seed):
    node = choose_process_node(FLIGHTS, ["tailnum"], 5, np.random.default_rng(seed))
    kept = apply_operator(FLIGHTS, node)
    assert 1 <= len(distinct_keys(kept, ["tailnum"])) <= 5  # phi = 5
    assert node["n_in"] == 12 and node["n_out"] == len(distinct_keys(kept, ["tailnum"]))
    assert node["operator"] in ("max", "min", "ge", "le", "eq", "date_after", "most_frequent")


def test_threshold_pivot_is_an_observed_value():
    for s in range(30):
        node = choose_process_node(FLIGHTS, ["tailnum"], 5, np.random.default_rng(s))
        if node["operator"] in ("ge", "le"):
            assert node["threshold"] in {r[node["field"]] for r in FLIGHTS}
            return
    pytest.fail("no threshold operator drawn in 30 seeds")


def test_no_valid_pivot_is_a_rejection():
    rows = [{"code": f"C{i}", "name": f"name {i}"} for i in range(20)]  # unique names, no numbers or dates
    with pytest.raises(Rejection) as e:
        choose_process_node(rows, ["name"], 5, np.random.default_rng(0))
    assert e.value.reason == "no_valid_pivot"


VOCAB = vocabulary(["search_airlines", "list_flights"], ["carrier", "sigunguCd", "dep_delay", "name"])


def _check(q, language="en", **kw):
    return grounding_problems(
        q, language=language, allowed_values=kw.get("allowed", ["Delta", 2013]),
        bridge_values=kw.get("bridges", ["DL", "N123DL"]), forbidden_identifiers=VOCAB, plain_field_names=["carrier"],
    )  # fmt: skip


def test_grounded_query_passes():
    assert _check("How many flights did the airline named Delta fly in 2013?") == []
    assert _check("델타 항공의 2013년 운항 편수는 몇 편인가요?", "ko", allowed=["2013"]) == []


@pytest.mark.parametrize(
    "query, code",
    [
        ("How many flights did DL fly in 2013?", "bridge_value:DL"),
        ("Which plane N123DL flew for Delta?", "bridge_value:N123DL"),
        ("Use search_airlines for Delta", "api_vocabulary:search_airlines"),
        ("What is the sigunguCd of Delta?", "api_vocabulary:sigunguCd"),
        ("Filter `carrier` by Delta", "api_vocabulary:carrier"),
        ("Call the API for Delta", "api_vocabulary:api"),
        ("How many Delta flights left on 2013-02-14?", "uncited_value:02"),
        ("How many Delta flights had 45 minutes of delay?", "uncited_value:45"),
        ("", "empty_query"),
    ],
)
def test_grounding_problems(query, code):
    assert code in _check(query)


def test_english_query_for_korean_domain_fails_language():
    assert any(p.startswith("language") for p in _check("How many districts in 2013?", "ko", allowed=["2013"]))


ROWS = [
    {"step": 1, "total_count": 12, "records": 10, "sample": [{"name": "Delta"}]},
    {"step": 1, "total_count": 3, "records": 3, "sample": [{"name": "Alaska"}]},
    {"step": 2, "total_count": 1, "records": 1, "sample": [{"seats": 149}]},
]
A, B, C = {"step": 1, "index": 0}, {"step": 1, "index": 1}, {"step": 2, "index": 0}


def test_answers_from_totals_values_branches():
    assert answers.compute({"kind": "count", "calls": [A, B]}, ROWS)["value"] == 15
    assert answers.compute({"kind": "value", "calls": [C], "field": "seats"}, ROWS) == {
        "type": "number", "value": 149, "fields": ["seats"]}  # fmt: skip
    cmp = {"kind": "cmp", "arms": [{"kind": "count", "calls": [A]}, {"kind": "count", "calls": [B]}],
           "labels": ["A", "B"], "order": "fewer"}  # fmt: skip
    assert answers.compute(cmp, ROWS)["value"] == "B"
    cond = {"kind": "cond", "cond_call": B, "threshold": 4, "then": {"kind": "count", "calls": [A]},
            "else": {"kind": "count", "calls": [B]}}  # fmt: skip
    out = answers.compute(cond, ROWS)
    assert out["branch"] == "else" and out["value"] == 3
    assert answers.answer_text(out, "en") == "No: the answer is 3."
    tie = {**cmp, "arms": [{"kind": "count", "calls": [C]}, {"kind": "count", "calls": [C]}]}
    assert answers.compute(tie, ROWS)["value"] is None
    # a listing record selected by its fields, and a count field read instead of the call's total
    listing = [{"step": 1, "total_count": 2, "records": 2,
                "records_list": [{"album_id": 229, "track_count": 26}, {"album_id": 261, "track_count": 17}]}]  # fmt: skip
    pick = {"step": 1, "index": 0, "record": {"album_id": 261}}
    assert answers.compute({"kind": "value", "calls": [pick], "field": "track_count"}, listing)["value"] == 17
    assert answers.compute({"kind": "count", "calls": [{**pick, "field": "track_count"}]}, listing) == {
        "type": "number", "value": 17, "fields": ["track_count"]}  # fmt: skip


def test_task_id_is_a_content_hash():
    acts = [{"step": 1, "tool": "t", "args": {"a": 1}}]
    assert task_id("d", acts, "q") == task_id("d", [dict(acts[0])], "q") != task_id("d", acts, "q2")
