"""Wordings fixed after the blind reads of session 15 (`benchmarks/results/blind_audit_s15_*_2026-12-03.md`)."""

from factory.synthesis import answers


def test_a_listed_answer_says_each_value_once():
    # s15 en1 #8 (Nat 2): 'The state of each of the origin airports …: New York, New Jersey and New York.'
    said = answers._statement("the states of the origin airports", ["New York", "New Jersey", "New York"], "judge",
                              {}, "en")  # fmt: skip
    assert said == "the states of the origin airports: New York and New Jersey"
    ko = answers._statement("출발 공항의 주", ["뉴욕", "뉴저지", "뉴욕"], "judge", {}, "ko")
    assert ko == "출발 공항의 주는 뉴욕, 뉴저지입니다"
    assert answers._statement("the counts", [3, 4], "judge", {}, "en") == "the counts: 3 and 4"
