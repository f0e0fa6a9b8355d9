"""Metric math and scoring rules against hand-computed values (no services)."""

import math

import pytest

from factory.eval.metrics import aggregate, case_rows, group_tables, pass_at_k, pass_hat_k, t_interval
from factory.eval.scoring import (
    correctness,
    duplicate_calls,
    efficiency,
    parse_number,
    score_episode,
    score_response,
    values_equal,
)

T_975_DF2 = 4.302652729911275  # Student t quantile, 0.975, df = 2 (tables: 4.303)


# --------------------------------------------------------------------------- pass@k, pass^k, intervals


def test_pass_at_k_unbiased_estimator() -> None:
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 − C(3,2)/C(5,2)
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)  # k = 1: c / n
    assert pass_at_k(3, 0, 2) == 0.0 and pass_at_k(3, 2, 2) == 1.0  # n − c < k: always solved
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - math.comb(7, 5) / math.comb(10, 5))
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_pass_hat_k_reliability() -> None:
    assert pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)  # C(2,2)/C(5,2)
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(3, 2, 3) == 0.0  # n = k: correct on all k runs
    assert pass_hat_k(4, 3, 2) == pytest.approx(3 / 6)


def test_student_t_interval_eq4() -> None:
    ci = t_interval([0.2, 0.4, 0.6])
    # x̄ = 0.4, s = 0.2, half = t(0.975, 2) · 0.2 / √3
    assert ci["mean"] == pytest.approx(0.4) and ci["df"] == 2
    assert ci["half_width"] == pytest.approx(T_975_DF2 * 0.2 / math.sqrt(3), rel=1e-9)
    assert ci["half_width"] == pytest.approx(0.49683, abs=1e-5)
    assert ci["low"] == pytest.approx(0.4 - ci["half_width"]) and ci["high"] == pytest.approx(0.4 + ci["half_width"])
    one = t_interval([0.5])
    assert one["mean"] == 0.5 and one["half_width"] is None
    assert t_interval([])["mean"] is None


def _row(task: str, run: int, passed: bool, **kw) -> dict:
    row = {
        "task_id": task,
        "domain": kw.pop("domain", "music"),
        "category": kw.pop("category", "SEQ"),
        "pattern": kw.pop("pattern", "SEQ"),
        "language": "en",
        "query": task,
        "run": run,
        "passed": passed,
        "hard_failure": False,
        "stop_reason": "answer",
        "response_pass": passed,
        "env_pass": None,
        "action_score": 1.0 if passed else 0.25,
        "action_correctness": 1.0 if passed else 0.5,
        "action_efficiency": 1.0 if passed else 0.0,
        "tool_calls": 2,
        "tool_calls_ok": 2 if passed else 1,
        "turns": 3,
        "format_violations": 0 if passed else 1,
        "failures": {"tool_error": 0 if passed else 1},
        "waterfall": {"tool_names": True, "arg_names": True, "arg_values": passed, "outcome": passed},
    }
    row.update(kw)
    return row


def test_aggregate_against_hand_computed_values() -> None:
    # task A passes runs 0 and 1, task B never passes; k = 2
    rows = [_row("A", 0, True), _row("A", 1, True), _row("A", 2, False)]
    rows += [_row("B", r, False, domain="korea", category="FAN", pattern="FAN") for r in range(3)]
    m = aggregate(rows, 2)
    assert m["tasks"] == 2 and m["episodes"] == 6
    assert m["pass@1"] == pytest.approx(2 / 6)
    assert m["pass@2"] == pytest.approx((1.0 + 0.0) / 2)  # A: 1 − C(1,2)/C(3,2) = 1
    assert m["pass^2"] == pytest.approx((1 / 3 + 0.0) / 2)  # A: C(2,2)/C(3,2)
    assert m["pass_any"] == 0.5
    assert m["tool_precision"] == pytest.approx((2 + 2 + 1 + 1 + 1 + 1) / 12)
    assert m["action_solved"] == 1.0 and m["action_all"] == pytest.approx((2 * 1.0 + 4 * 0.25) / 6)
    assert m["format_violation_rate"] == pytest.approx(4 / 18) and m["mean_turns"] == 3
    assert m["failures"]["tool_error"] == 4 and m["stop_reasons"]["answer"] == 6
    # per-run pass@1: 0.5, 0.5, 0.0 → mean 1/3, s = √(1/12), half = t(0.975, 2) · s / √3
    ci = m["ci"]["pass@1"]
    assert ci["mean"] == pytest.approx(1 / 3)
    assert ci["half_width"] == pytest.approx(T_975_DF2 * math.sqrt(1 / 12) / math.sqrt(3), rel=1e-9)
    assert m["waterfall"] == {"tool_names": 1.0, "arg_names": 1.0, "arg_values": pytest.approx(2 / 6),
                              "outcome": pytest.approx(2 / 6)}  # fmt: skip
    tables = group_tables(rows, 2)
    assert [g["domain"] for g in tables["by_domain"]] == ["korea", "music"]
    assert [g["category"] for g in tables["by_category"]] == ["FAN", "SEQ"]
    assert tables["by_category"][1]["pass@1"] == pytest.approx(2 / 3)
    cases = case_rows(rows, 2)
    assert [(c["task_id"], c["successes"], c["pass@2"], c["pass^2"]) for c in cases] == [
        ("B", 0, 0.0, 0.0),
        ("A", 2, 1.0, pytest.approx(1 / 3)),
    ]


# --------------------------------------------------------------------------- Eq. 3


def test_efficiency_eq3() -> None:
    e = efficiency(n_total=3, n_dup=1, n_opt=2, max_allowed=5)
    assert e["cr"] == pytest.approx(2 / 3) and e["mpc"] == pytest.approx(2 / 3)
    assert e["efficiency"] == pytest.approx(2 / 3)
    assert efficiency(4, 0, 2, 5)["efficiency"] == pytest.approx((1 + 0.5) / 2)
    assert efficiency(5, 0, 5, 5)["efficiency"] == 1.0  # at the budget: allowed
    assert efficiency(6, 0, 5, 5)["efficiency"] == 0.0  # above max_allowed_calls: zero
    assert efficiency(1, 0, 2, 5)["mpc"] == 1.0  # shorter than the optimum: capped
    assert efficiency(0, 0, 2, 5)["efficiency"] == 0.0 and efficiency(0, 0, 0, 5)["efficiency"] == 1.0


def test_duplicates_count_only_repeats_of_successful_calls() -> None:
    ok = {"tool": "f", "args": {"a": 1}, "status": "executed", "ok": True}
    failed = {"tool": "g", "args": {}, "status": "executed", "ok": False}
    assert duplicate_calls([ok, dict(ok), dict(ok)]) == 2
    assert duplicate_calls([failed, dict(failed, ok=True)]) == 0  # a retry after a failure is not redundant
    assert duplicate_calls([ok, {**ok, "args": {"a": 2}}]) == 0


def test_correctness_any_order_with_value_and_validity_checks() -> None:
    golden = [
        {"tool": "find", "platform": "p", "args": {"name": "Delta", "api_key": "<KEY>"}},
        {"tool": "flights", "platform": "p", "args": {"carrier": "DL", "date": "2013-01-05"}},
    ]
    calls = [
        {"tool": "flights", "args": {"carrier": "dl", "date": "2013-01-05", "page": 2}, "status": "executed",
         "valid": True, "ok": True},
        {"tool": "find", "args": {"name": "Delta"}, "status": "executed", "valid": True, "ok": False},
    ]  # fmt: skip
    corr, matched = correctness(golden, calls, {})
    assert corr == 1.0 and matched == [True, True]  # order, case, extra paging and outcome do not matter
    invalid = [dict(c, valid=False) for c in calls]
    assert correctness(golden, invalid, {})[0] == 0.0  # schema-invalid calls never match
    wrong = [dict(calls[0], args={"carrier": "AA", "date": "2013-01-05"}), calls[1]]
    assert correctness(golden, wrong, {}) == (0.5, [True, False])
    assert values_equal(3, 3.0) and values_equal(" DL", "dl") and not values_equal(True, 1)
    assert values_equal(1, "1") and not values_equal(1, "one")  # golden args recorded from query strings


# --------------------------------------------------------------------------- RESPONSE


@pytest.mark.parametrize(
    ("text", "gold", "passed", "method"),
    [
        ("So the answer is \\boxed{1,234}.", 1234, True, "boxed"),
        ("\\boxed{42.0}", 42, True, "boxed"),
        ("\\boxed{\\frac{1}{4}}", 0.25, True, "boxed"),
        ("\\boxed{2^3 + 1}", 9, True, "boxed"),
        ("\\boxed{215.79}", 215.7894, True, "boxed"),
        ("\\boxed{10001}", 10000, False, "boxed"),
        ("ANSWER: 621", 621, True, "answer_line"),
        ("621", 621, True, "bare"),
        ("I think it is 621.", 621, True, "sentence"),
        ("I think it is 622, not 621.", 621, False, "sentence"),
        ("There is no number here", 621, False, "sentence"),
        ("\\boxed{__import__('os').system('true')}", 1, False, "boxed"),
    ],
)
def test_number_answers(text: str, gold, passed: bool, method: str) -> None:
    r = score_response({"type": "number", "value": gold, "text": str(gold)}, text)
    assert (r["passed"], r["method"]) == (passed, method)
    assert r["decided"] == passed  # a mismatch is left to a judge where one is configured


def test_a_fall_stated_by_its_size_and_a_word_is_the_signed_gold() -> None:
    """A change's typed value is signed ('5.4% 감소' → -5.4) while its answer sentence says the size and the
    direction: the published sentence itself must pass (the s18 oracle failed it), a rise of that size must not."""
    gold = {
        "type": "number",
        "value": -5.4,
        "text": "청운동이 있는 종로구의 인구는 2010년부터 2020년까지 5.4% 감소했습니다.",
    }
    q = "청운동이 있는 구의 인구는 2010년부터 2020년까지 늘었는지 줄었는지, 몇 퍼센트인지 알려 주세요."
    assert score_response(gold, gold["text"], question=q)["passed"]
    assert score_response(gold, "The population fell by 5.4% from 2010 to 2020.", question=q)["passed"]
    assert score_response(gold, "\\boxed{-5.4}", question=q)["passed"]
    assert not score_response(gold, gold["text"].replace("감소", "증가"), question=q)["passed"]
    assert not score_response(gold, "종로구의 인구는 5.4%입니다.", question=q)["passed"]  # no direction: not the answer
    assert not score_response(gold, "The population changed by 5.4%.", question=q)["passed"]


def test_number_parser_admits_only_arithmetic() -> None:
    assert parse_number("1,234.5") == 1234.5 and parse_number("12%") == 12.0
    assert parse_number("3 \\times 4") == 12.0
    assert parse_number("exec('x')") is None and parse_number("") is None


@pytest.mark.parametrize(
    ("text", "value", "gold_text", "passed"),
    [
        ("ANSWER: boris the spider!", "Boris The Spider", "Boris The Spider", True),
        ("ANSWER: UA", "UA", "UA (4 vs 5)", True),
        ("ANSWER: UA (4 vs 5)", "UA", "UA (4 vs 5)", True),
        ("ANSWER: 전라 북도", "전라북도", "전라북도", True),
        ("ANSWER: AA", "UA", "UA (4 vs 5)", False),
        ("UA", "UA", "UA (4 vs 5)", True),
    ],
)
def test_string_answers(text: str, value: str, gold_text: str, passed: bool) -> None:
    assert score_response({"type": "string", "value": value, "text": gold_text}, text)["passed"] is passed


def test_judge_answers_without_a_judge_use_containment() -> None:
    ans = {"type": "judge", "value": [7, "QC"], "text": "7, QC"}
    r = score_response(ans, "ANSWER: 7 invoices; the state is QC")
    assert r["passed"] and r["method"] == "containment" and not r["decided"]
    assert not score_response(ans, "ANSWER: 8 invoices; the state is QC")["passed"]
    assert not score_response(ans, "ANSWER: 7 invoices; the state is QCX")["passed"]  # not inside a longer word
    assert score_response(ans, None)["method"] == "no_answer"


# the answer convention (ANSWER_CONVENTION): the exported prompt asks for a sentence, answer first; the SFT
# final turn is the golden answer sentence; both must score like an explicit ANSWER: line


@pytest.mark.parametrize(
    ("question", "answer", "reply", "passed"),
    [
        ("How many tracks are on the album?", {"type": "number", "value": 6}, "The answer is 6.", True),
        ("앨범에 곡이 몇 개 있나요?", {"type": "number", "value": 6}, "6곡입니다.", True),
        ("앨범에 곡이 몇 개 있나요?", {"type": "number", "value": 6}, "7곡입니다.", False),
        ("How many tracks are on the album?", {"type": "number", "value": 1234}, "There are 1,234 tracks.", True),
        ("How many tracks are on the album?", {"type": "number", "value": 6}, "The answer is 7 (not 6).", False),
        # numbers the question gives are context, not the answer
        ("How many airports lie within 100 km of ASX?", {"type": "number", "value": 4},
         "Within 100 km of ASX there are 4 airports.", True),
        ("How many airports lie within 100 km of ASX?", {"type": "number", "value": 4},
         "Within 100 km of ASX there are 5 airports, 4 of them small.", False),
        # ...unless the gold is one of them: a choice between given values, stated first
        ("Which has more tracks: album id 271 or album id 254?", {"type": "number", "value": 271},
         "Album id 271 has more tracks: 14 against 1.", True),
        ("Which has more tracks: album id 271 or album id 254?", {"type": "number", "value": 271},
         "Album id 254 has fewer tracks than album id 271.", False),
        # COND golden answers: the condition clause carries no answer number
        ("If Norway has more than 2 customers, how many invoices do they have; else how many customers?",
         {"type": "number", "value": 1, "branch": "else"},
         "The condition does not hold, so the number of customers from Norway is 1.", True),
        ("If there are at least 5 customers from Norway, how many invoices do they have? If not, how many customers?",
         {"type": "number", "value": 42, "branch": "then"},
         "Yes, there are at least 5 customers from Norway, so the number of invoices of those customers is 42.", True),
        ("Which has more flights, N11206 or N11207?", {"type": "string", "value": "N11206"},
         "Aircraft N11206 has more flights: 111 against 49.", True),
        ("Which has more flights, N11206 or N11207?", {"type": "string", "value": "N11206"},
         "N11207 has fewer flights than N11206.", False),
        ("Which has more flights, N11206 or N11207?", {"type": "string", "value": "N1120"},
         "Aircraft N11206 has more flights.", False),
        ("Which has more tracks, Voodoo Lounge or My Generation - The Very Best Of The Who?",
         {"type": "string", "value": "Voodoo Lounge"}, "The answer is Voodoo Lounge.", True),
        ("Which has more tracks, Voodoo Lounge or My Generation - The Very Best Of The Who?",
         {"type": "string", "value": "Voodoo Lounge"}, "My Generation has more tracks than Voodoo Lounge.", False),
        ("어느 공항이 더 붐비나요, LGA 또는 EWR?", {"type": "string", "value": "LGA"}, "LGA 공항이 더 붐빕니다.", True),
    ],
)  # fmt: skip
def test_answer_sentences(question: str, answer: dict, reply: str, passed: bool) -> None:
    r = score_response({"text": "", **answer}, reply, question=question)
    assert r["passed"] is passed, r
    assert r["method"] == "sentence" and r["decided"] is passed


def test_hard_failure_fails_a_correct_answer() -> None:
    task = {
        "reward_basis": ["RESPONSE", "ACTION"],
        "golden_actions": [],
        "system_state": {},
        "max_allowed_calls": 3,
    }
    ep = {"calls": []}
    ok = score_episode(task, ep, {}, response={"passed": True}, environment=None, hard_failure=False)
    cut = score_episode(task, ep, {}, response={"passed": True}, environment=None, hard_failure=True)
    assert ok["passed"] and ok["action"]["score"] == 1.0
    assert not cut["passed"] and cut["outcome"] and cut["waterfall"]["first_failure"] == "outcome"


# --------------------------------------------------------------------------- minimal and alternative paths


def _lost_task() -> dict:
    """The demo's "Lost" task pruned to the listing (track_count in each album record), its original path kept."""
    key = {"tool": "get_chinook_catalog_key", "platform": "cat", "args": {}}
    search = {"tool": "search_artists", "platform": "cat", "args": {"name": "Lost", "api_key": "<KEY>"}}
    albums = {"tool": "list_artist_albums", "platform": "cat", "args": {"artist_id": 149, "api_key": "<KEY>"}}
    tracks = [
        {"step": 4, "tool": "list_album_tracks", "platform": "cat", "args": {"album_id": a, "api_key": "<KEY>"}}
        for a in (229, 230, 231, 261)
    ]
    golden = [{"step": 1, **key}, {"step": 2, **search}, {"step": 3, **albums}]
    return {
        "reward_basis": ["RESPONSE", "ACTION"],
        "golden_actions": golden,
        "alternative_paths": [{"note": "original", "actions": [*golden, *tracks], "answer_spec": {}}],
        "system_state": {"api_key": {"acquire_with": {"cat": "get_chinook_catalog_key"}}},
        "max_allowed_calls": 7,
    }


def _ran(action: dict) -> dict:
    args = {k: v for k, v in action["args"].items() if k != "api_key"}
    return {"tool": action["tool"], "args": args, "status": "executed", "valid": True, "ok": True}


def test_the_short_path_scores_full_and_the_long_one_is_correct_but_less_efficient() -> None:
    task = _lost_task()
    short = [_ran(a) for a in task["golden_actions"][1:]]
    s = score_episode(task, {"calls": short}, {}, response={"passed": True}, environment=None, hard_failure=False)
    assert s["action"]["correctness"] == 1.0 and s["action"]["efficiency"] == 1.0 and s["action"]["score"] == 1.0
    assert s["action"]["path"] == "golden" and s["action"]["n_opt"] == 2 and s["action"]["budget"] == 6
    long = [_ran(a) for a in task["alternative_paths"][0]["actions"][1:]]
    s = score_episode(task, {"calls": long}, {}, response={"passed": True}, environment=None, hard_failure=False)
    assert s["action"]["correctness"] == 1.0  # a sufficient path, fully covered
    assert s["action"]["efficiency"] == pytest.approx((1 + 2 / 6) / 2)  # relative to the 2-call minimal path
    assert s["waterfall"]["first_failure"] is None


def test_an_alternative_path_taken_without_the_golden_calls_is_correct() -> None:
    """A path that shares no call with the golden one: correctness from the alternative it covers."""
    task = _lost_task()
    other = [{"step": 2, "tool": "get_artist_by_name", "platform": "cat", "args": {"name": "Lost"}},
             {"step": 3, "tool": "list_album_tracks", "platform": "cat", "args": {"album_id": 229}}]  # fmt: skip
    task["alternative_paths"].append({"note": "another sufficient path", "actions": other, "answer_spec": {}})
    calls = [_ran(a) for a in other]
    s = score_episode(task, {"calls": calls}, {}, response={"passed": True}, environment=None, hard_failure=False)
    assert s["action"]["correctness"] == 1.0 and s["action"]["path"] == "alternative 1: another sufficient path"
    without = dict(task, alternative_paths=[])
    s = score_episode(without, {"calls": calls}, {}, response={"passed": True}, environment=None, hard_failure=False)
    assert s["action"]["correctness"] == 0.0 and s["waterfall"]["first_failure"] == "tool_names"


def test_a_choice_of_two_is_answered_with_its_margin():
    # s15 en2 #16: 'Between UA and 9E, which one has fewer routes, and by how many?' held 'UA' alone
    from factory.eval.scoring import score_response

    answer = {"type": "string", "value": "UA", "text": "UA has fewer routes, by 24: 53 against 77.",
              "frame": {"pattern": "WHICH", "margin": 24}}  # fmt: skip
    q = "Between UA and 9E, which one has fewer routes, and by how many?"
    assert score_response(answer, "UA has fewer, by 24 routes.", question=q)["passed"]
    alone = score_response(answer, "UA has fewer routes.", question=q)
    assert not alone["passed"] and alone["method"] == "no_margin"
    assert not score_response(answer, "UA, by 20.", question=q)["passed"]
    assert not score_response(answer, "9E has fewer, by 24.", question=q)["passed"]
    no_margin = {**answer, "frame": {"pattern": "WHICH"}}  # a task made before the margin was kept
    assert score_response(no_margin, "UA has fewer routes.", question=q)["passed"]
