"""Blind read s11 (Korean tasks #5, #10, #15, #18 at Nat 3): a parenthetical code-book qualifier after a noun
('시·군·구(일반구 단위)') reads like a database note; said as a request after the question it read tacked on (s11
r2ko #2/#7): the question names the noun and says how to count once, as the condition it opens with."""

from factory.synthesis.phrasing import KO_CONDITIONS, KO_CONDITIONS_SAID, qualifiers_after


def test_a_parenthetical_qualifier_is_said_as_the_condition_the_question_opens_with():
    # the demo's CMP (s11 ko #18): before → after
    q = "경기도와 인천광역시의 시·군·구(일반구 단위) 수는 몇 곳 차이 나나요?"
    assert qualifiers_after(q, "ko") in said("단위", "일반구", "경기도와 인천광역시의 시·군·구 수는 몇 곳 차이 나나요?")
    # a two-sentence question (s11 ko #10): said once, inside the first sentence, so '그곳의' still follows it
    q = (
        "경기도에서 2020년 인구주택총조사 기준 인구가 가장 많았던 시·군·구(일반구 단위)는 어디인가요? "
        "그곳의 행정안전부 행정구역 코드도 알려 주세요."
    )
    after = qualifiers_after(q, "ko")
    assert "(" not in after and "시·군·구는 어디인가요? 그곳의" in after, after
    assert any(after.startswith(f.format(x="일반구") + " 경기도에서 2020년") for f in _forms("단위", "일반구")), after
    assert after.endswith("코드도 알려 주세요.") and "봐 주세요" not in after, after


def test_the_particle_is_chosen_again_for_the_noun_and_each_qualifier_is_said_once():
    # '단위)는' was chosen for '단위'; after '읍면동' (final consonant) the particle is '을'
    assert qualifiers_after("읍면동(법정동 기준)를 알려 주세요.", "ko") in said(
        "기준", "법정동", "읍면동을 알려 주세요."
    )
    twice = qualifiers_after("시·군·구(일반구 단위)와 구(일반구 단위)의 수는 몇 곳인가요?", "ko")
    assert twice in said("단위", "일반구", "시·군·구와 구의 수는 몇 곳인가요?"), twice


def test_other_parentheses_and_languages_stay_as_they_are():
    ratio = "부산광역시의 성비(여자 100명당 남자 수)는 얼마인가요?"
    assert qualifiers_after(ratio, "ko") == ratio
    en = "How many districts (general-district level) does Gyeonggi-do have?"
    assert qualifiers_after(en, "en") == en


def said(kind: str, x: str, body: str) -> set[str]:
    """Every way the question may open with the condition, then its body."""
    return {f.format(x=x) + " " + body for f in _forms(kind, x)}


def _forms(kind: str, x: str) -> tuple[str, ...]:
    return KO_CONDITIONS_SAID.get((x, kind)) or KO_CONDITIONS[kind]


def test_the_condition_is_said_in_several_ways_across_questions():
    # s13 demo: one fixed '일반구 단위로 보면' opened 17% of the Korean questions
    places = ["경기도", "인천광역시", "서울특별시", "부산광역시", "대구광역시", "경상남도", "충청북도", "전라북도"]
    qs = [f"{a}와 {b}의 시·군·구(일반구 단위) 수는 몇 곳 차이 나나요?" for a in places for b in places if a != b]
    openings = {qualifiers_after(q, "ko").split(",")[0] for q in qs}
    # '일반구' is said as what it means (s15 ko: '일반구 단위로 셀 때' read technical)
    assert openings == {f.rstrip(",") for f in KO_CONDITIONS_SAID[("일반구", "단위")]}, openings
    assert not any("일반구" in qualifiers_after(q, "ko") for q in qs)
    # no two forms open with the same three words (s16 demo: '구가 있는 시는' opened 11.5% of the Korean questions)
    firsts = [" ".join(f.split()[:3]) for f in KO_CONDITIONS_SAID[("일반구", "단위")]]
    assert len(set(firsts)) == len(firsts), firsts
    # the same question always gets the same form
    assert qualifiers_after(qs[0], "ko") == qualifiers_after(qs[0], "ko")
