"""Planted tests for the causes the s17 round-3 conversations read found (benchmarks/results/
blind_audit_s17c_conversations_2026-12-03.md), fixed in session 18."""

import pytest

from factory.conversations.persona import korean_register
from factory.conversations.wording import compared_reply, context_first


@pytest.mark.parametrize(
    ("text", "frame", "variant", "said"),
    [
        # r3 #1: "JFK has more routes, by 2: 70 versus 68." (the loser named from the frame's options)
        ("JFK has more routes, by 2: 70 versus 68.", {"options": ["JFK", "LGA"]}, 0,
         "JFK has 70 routes and LGA has 68, so JFK has 2 more."),
        ("UA has fewer routes, by 24: 53 to 77.", {"options": ["UA", "9E"]}, 1,
         "9E has 77 routes and UA has 53: 24 fewer for UA."),
        # one of a count is said in the singular
        ("Iron Maiden has 20 more albums than Aerosmith: 21 versus 1.", {}, 1,
         "Aerosmith has 1 album and Iron Maiden has 21: 20 more for Iron Maiden."),
        ("Iron Maiden has 20 more albums than Aerosmith: 21 versus 1.", {}, 2,
         "Iron Maiden has 20 more: 21 albums, compared with 1 for Aerosmith."),
        # a possessive side is not said twice, nor opens a sentence bare ("Passengers' have 14 tracks")
        ("Eric Clapton's albums have 34 more tracks than Passengers': 48 to 14.", {}, 0,
         "Eric Clapton's albums have 48 tracks and Passengers' have 14, a difference of 34."),
        ("Eric Clapton's albums have 34 more tracks than Passengers': 48 to 14.", {}, 1,
         "Eric Clapton's albums have 48 tracks and Passengers' have 14, a difference of 34."),
        ("There are 14 more airports with an IATA code within 100 km of EWR than within 100 km of OSN: 22 versus 8.",
         {}, 0, "There are 22 airports with an IATA code within 100 km of EWR and 8 within 100 km of OSN, so 14 more."),
    ],
)  # fmt: skip
def test_a_comparison_reply_says_both_counts_then_the_margin(text, frame, variant, said):
    assert compared_reply(text, "en", frame, variant) == said


def test_comparison_replies_come_in_five_forms():
    # s18 r2: "…: N more for X" closed 4 of 6 English comparisons
    text, frame = "Brazil has more customers, by 4: 5 to 1.", {"options": ["Brazil", "Norway"]}
    said = [compared_reply(text, "en", frame, v) for v in range(5)]
    assert len(set(said)) == 5 and all(s and "5" in s and "1" in s and "4" in s for s in said), said
    assert said[3] == "Brazil has 5 customers, 4 more than Norway (1)."
    assert said[4] == "Brazil: 5 customers. Norway: 1. So Brazil has 4 more."  # not 'The count is …' (s18 r3 #17)


def test_a_comparison_reply_left_alone_when_it_cannot_be_said_right():
    # '1 more customer than': the phrase is singular, the counts need the plural; where its noun cannot be told, None
    assert compared_reply("Brazil has 1 more customer than Germany: 5 to 4.", "en", {}, 0) == (
        "Brazil has 5 customers and Germany has 4, so Brazil has 1 more."
    )
    assert compared_reply("JFK has 1 more hourly weather record than LGA: 9 to 8.", "en", {}, 0) is None
    # the other side cannot be told from the options
    assert compared_reply("JFK has more routes, by 2: 70 versus 68.", "en", {"options": ["EWR", "LGA"]}, 0) is None
    assert compared_reply("There are 3 albums.", "en", {}, 0) is None


def test_a_korean_comparison_reply_lists_both_sides_then_the_margin():
    # r3 #7: "서울특별시가 울산광역시보다 20곳 더 많습니다(울산광역시 5곳, 서울특별시 25곳)."
    text = "서울특별시가 울산광역시보다 20곳 더 많습니다(울산광역시 5곳, 서울특별시 25곳)."
    assert compared_reply(text, "ko", {}, 0) == "서울특별시 25곳, 울산광역시 5곳으로 서울특별시가 20곳 더 많습니다."
    assert compared_reply(text, "ko", {}, 1) == "서울특별시가 20곳 더 많습니다. 서울특별시 25곳, 울산광역시 5곳이에요."
    which = "구·군은 서울특별시가 25곳으로 15곳 더 많습니다(인천광역시는 10곳). 구가 있는 시는 구별로 셌어요."
    assert compared_reply(which, "ko", {}, 0) == (
        "구·군은 서울특별시 25곳, 인천광역시 10곳으로 서울특별시가 15곳 더 많습니다. 구가 있는 시는 구별로 셌어요."
    )


@pytest.mark.parametrize(
    ("request_", "said"),
    [
        # r3 #17: "… by the artist who recorded 'For Those About To Rock (We Salute You)' …"
        ("How many invoices include tracks by the artist who recorded 'Inject The Venom'?",
         "A customer just asked me about 'Inject The Venom'. How many invoices include that artist's tracks?"),
        ("What is the file size of the longest track on the album containing 'Fast As a Shark'?",
         "I keep listening to 'Fast As a Shark'. What is the file size of the longest track on the album it's on?"),
        # r3 #8: the withheld track said as the user's own
        ("Could you tell me how many tracks the album containing the song I'm listening to has?",
         "I'm listening to a song. Could you tell me how many tracks its album has?"),
        # a title cited twice, or no such chain: unchanged
        ("Is 'X' longer than the album containing 'X'?", "Is 'X' longer than the album containing 'X'?"),
        ("How many tracks does the album 'Restless and Wild' have?", "How many tracks does the album 'Restless and Wild' have?"),
    ],
)  # fmt: skip
def test_a_request_sets_the_scene_before_it_asks(request_, said):
    assert context_first(request_, "en", 0) == said
    assert context_first(request_, "ko", 0) == request_


def test_korean_requests_say_places_and_census_years_as_people_do():
    # r3 #7, #13: '구군' (the dot dropped) read as office jargon; r3 #11: '2010년 인구주택총조사 기준으로'
    assert korean_register("인천광역시는 광주광역시보다 구·군이 몇 곳 더 많나요?", {"격식": "반말"})[0] == (
        "인천은 광주보다 구하고 군이 몇 개 더 많아?"
    )
    assert korean_register("부산광역시의 단독주택은 2010년 인구주택총조사 기준으로 몇 호인가요?", {"격식": "존댓말"})[
        0
    ] == ("부산의 단독주택은 2010년 기준으로 몇 채인가요?")


def test_a_store_question_is_set_in_the_store_and_a_which_question_varies():
    # s18 r1 #5: "'Inject The Venom' just came on. How many invoices include tracks by the artist behind it?"
    said = context_first("How many invoices include tracks by the artist who recorded 'Inject The Venom'?", "en", 0)
    assert said == "A customer just asked me about 'Inject The Venom'. How many invoices include that artist's tracks?"
    # s18 r1 #1, #16: every WHICH question read "Which <kind> has more <what>, A or B, and by how many?"
    from factory.conversations.wording import chat_difference

    frame = {"pattern": "WHICH", "description": "customers", "options": ["Brazil", "Norway"], "qualifier": "more"}
    asked = "Which country has more customers, Brazil or Norway, and by how many?"
    forms = {chat_difference(asked, frame, v) for v in range(6)}
    assert len(forms) == 6 and all("Brazil" in f and "Norway" in f and "customers" in f for f in forms), forms
    assert chat_difference(asked, {**frame, "qualifier": "fewer"}, 0) is None  # the forms ask for more


def test_houses_are_counted_in_chae():
    # s18 r1 #2: "몇 호야" is the census's counter
    assert korean_register("부산광역시의 단독주택은 2010년 인구주택총조사 기준으로 몇 호인가요?", {"격식": "반말"})[
        0
    ] == ("부산의 단독주택은 2010년 기준으로 몇 채야?")


def test_a_korean_count_is_asked_as_how_many_there_are():
    # s18 r1 #11, #15: '달성군의 읍면 수는 어떻게 되나요?' reads like a form
    assert korean_register("대구광역시 달성군의 읍·면 수는 어떻게 되나요?", {"격식": "존댓말"})[0] == (
        "대구 달성군에는 읍면이 몇 개 있어요?"
    )
    assert korean_register("대구광역시 달성군의 읍·면 수는 어떻게 되나요?", {"격식": "반말"})[0] == (
        "대구 달성군에는 읍면이 몇 개 있어?"
    )
