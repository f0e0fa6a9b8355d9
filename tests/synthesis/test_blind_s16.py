"""Wordings fixed after the blind reads of session 15 (`benchmarks/results/blind_audit_s15_*_2026-12-03.md`)."""

from factory.synthesis import answers


def test_a_listed_answer_says_each_value_once():
    # s15 en1 #8 (Nat 2): 'The state of each of the origin airports …: New York, New Jersey and New York.'
    said = answers._statement("the states of the origin airports", ["New York", "New Jersey", "New York"], "judge",
                              {}, "en")  # fmt: skip
    assert said == "the states of the origin airports: New York and New Jersey"
    ko = answers._statement("출발 공항의 주", ["뉴욕", "뉴저지", "뉴욕"], "judge", {}, "ko")
    assert ko == "출발 공항의 주는 뉴욕, 뉴저지입니다"
    assert answers._statement("the counts", [3, 3, 4], "judge", {}, "en") == "the counts: 3, 3 and 4"  # per record


def test_a_long_platform_code_no_lookup_names_is_not_cited():
    # s16 demo: '행정안전부 읍면동 코드 26710250과 행정안전부 읍면동 코드 26710320의 리 수는 몇 곳 차이 나나요?'
    import pytest

    from factory.synthesis import lookup
    from factory.synthesis.junctions import Rejection

    g = lookup.Grounding(args=[{}])
    lookup.Grounder._keep_code(g, "list_admin_sigungu", "sidoCd", "26")  # a 시도 code may be cited
    assert g.kept_codes == ["list_admin_sigungu.sidoCd=26"]
    with pytest.raises(Rejection) as e:
        lookup.Grounder._keep_code(g, "list_admin_ri", "emdCd", "26710250")
    assert e.value.reason == "unnamed_code" and "unnamed_code" in lookup.REJECTIONS


def test_a_counting_condition_is_said_once():
    # s16 demo: '시에 속한 구를 하나씩 따로 세면, 시·군·구 수로 보면 경기도와 인천광역시는 몇 곳 차이 나나요?'
    from factory.synthesis.phrasing import qualifiers_after

    q = qualifiers_after("시·군·구(일반구 단위) 수로 보면 경기도와 인천광역시는 몇 곳 차이 나나요?", "ko")
    assert q.endswith(", 경기도와 인천광역시의 시·군·구 수는 몇 곳 차이 나나요?") and "보면" not in q, q
    plain = "리 수로 보면 기장읍과 장안읍은 몇 곳 차이 나나요?"  # no qualifier: one condition already
    assert qualifiers_after(plain, "ko") == plain


def test_a_compared_place_keeps_its_article():
    # s16 conversations r2 #2: "Compared with Czech Republic, how many more customers does Canada have?"
    from tests.synthesis.test_phrasing import _action, _query, _tid, _traj, shared_specs

    specs = shared_specs()
    tid = _tid(specs, "search_customers")
    acts = [{**_action(specs, "search_customers", {"country": c}), "records": n}
            for c, n in (("Canada", 8), ("Czech Republic", 2))]  # fmt: skip
    t = _traj(
        specs, "CMP", None, [], [("search_customers", "country", "Canada"), ("search_customers", "country", "Czech Republic")],
        acts, {"ask": "count", "tool_id": tid, "compare": {"param": "country", "tool_id": tid}, "order": "more",
               "cmp": "difference"},
        {"type": "number", "value": 6, "fields": [], "counts": [8, 2]},
    )  # fmt: skip
    forms = {_query(t, specs, "en", v) for v in range(4)}
    assert all("the Czech Republic" in q and "the Canada" not in q for q in forms), forms
