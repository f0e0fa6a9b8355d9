"""Planted tests for the causes the s16 round-2 conversations read found (benchmarks/results/
blind_audit_s16b_conversations_2026-12-03.md), fixed in session 17."""

from factory.conversations.persona import korean_register, spoken_sido
from factory.conversations.wording import styled_english


def test_a_banmal_user_names_a_sido_as_people_say_it():
    # r2 #8: "혹시 이거 알아? 서울특별시는 광주광역시보다 구가 몇 곳 더 많아?" (a speaker says '서울이 광주보다')
    text, persona = korean_register("서울특별시는 광주광역시보다 구가 몇 곳 더 많나요?", {"격식": "반말"})
    assert persona["격식"] == "반말"
    assert text == "서울은 광주보다 구가 몇 곳 더 많아?", text
    # the particle fits the short name; an invariant particle is kept; a 시도 in a longer word is left alone
    assert spoken_sido("충청남도가 충청북도보다") == "충남이 충북보다"
    assert spoken_sido("부산광역시와 울산광역시를") == "부산과 울산을"
    assert spoken_sido("서울특별시 종로구의") == "서울 종로구의"
    assert spoken_sido("광주광역시청") == "광주광역시청"
    # 광주광역시 beside 경기도 stays in full (경기도 광주시 is another 광주)
    assert spoken_sido("경기도 광주시와 광주광역시") == "경기도 광주시와 광주광역시"


def test_a_polite_user_keeps_the_official_names():
    text, _ = korean_register("서울특별시는 광주광역시보다 구가 몇 곳 더 많나요?", {"격식": "존댓말"})
    assert text.startswith("서울특별시는 광주광역시보다")


def test_a_casual_user_does_not_say_please_tell_me():
    # r2 #4: "Please tell me how many airports there are in the same state as ASX." for a casual 30s persona
    casual = styled_english(
        "Please tell me how many airports there are in the same state as ASX.",
        {"register": "casual", "style": "relaxed"},
    )
    assert not casual.startswith("Please tell me") and casual.endswith(
        "how many airports there are in the same state as ASX?"
    )
    formal = styled_english(
        "Please tell me how many airports there are in the same state as ASX.",
        {"register": "formal", "style": "relaxed"},
    )
    assert formal.startswith("Please tell me")
