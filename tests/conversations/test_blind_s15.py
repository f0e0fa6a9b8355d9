"""Conversation wordings fixed after the blind read of session 14 (round 3,
`benchmarks/results/blind_audit_s14c_conversations_2026-12-03.md`)."""

from factory.llm.simulator import echo, spoken_place


def test_a_korean_user_says_a_province_back_as_people_say_it():
    # s14c conversations: '서울특별시구나. 고마워.' (a casual user reading out the official name)
    assert echo("해당 지역은 서울특별시입니다.", ["서울특별시"], "ko") == "서울"
    assert [spoken_place(x) for x in ("부산광역시", "세종특별자치시", "제주특별자치도", "강원특별자치도", "경기도", "종로구")] == [
        "부산", "세종", "제주", "강원도", "경기도", "종로구"]  # fmt: skip
    assert echo("It is in Seoul.", ["Seoul"], "en") == "Seoul"


def test_a_preposition_before_the_withheld_value_is_no_noun():
    # s15 conversations #8: "I'm flying the into I have in mind soon." / "Which into is it?" (the SEM lead's 'into')
    from factory.conversations.tasks import mask_english

    q = "I'm flying into KWJ soon. What is its longitude, and how many airports are there within 100 km of KWJ?"
    assert mask_english(q, "KWJ", first="that") is None
    assert mask_english("How many routes does airport KWJ have?", "KWJ", first="that") == (
        "How many routes does that airport have?",
        "airport",
    )
