"""Planted tests for the causes the s18 round-3 conversations read found (benchmarks/results/
blind_audit_s18c_conversations_2026-12-03.md), fixed in session 19."""

import pytest

from factory.conversations.persona import fit_to_request
from factory.conversations.tasks import _lead_as_own, said_as_own
from factory.synthesis.phrasing import compared_forms
from factory.synthesis.rag_phrasing import value_answer


@pytest.mark.parametrize(
    ("request_", "said"),
    [
        # r3 #2: "I'm planning a trip through my destination airport" stated nothing and no one travels so
        ("I'm flying into that airport soon. I'd like to know how many airports there are within 100 km of that "
         "airport, and what its latitude is.",
         "I'd like to know how many airports there are within 100 km of the airport I'm flying into, and what its "
         "latitude is."),
        ("I'm planning a trip through that airport. I'd like to know what its time zone is, and how many airports "
         "there are within 100 km of it.",
         "I'd like to know the time zone of the airport I'm passing through, and how many airports there are within "
         "100 km of it."),
        ("I have a layover at that airport next week. I'd like to know what its ICAO code is, and how many airports "
         "there are within 100 km of it.",
         "I'd like to know the ICAO code of the airport I have a layover at, and how many airports there are within "
         "100 km of it."),
        ("I'm flying into that airport soon. Two things: how many airports are there within 100 km of that airport, "
         "and what is its time zone?",
         "Two things: how many airports are there within 100 km of the airport I'm flying into, and what is its time "
         "zone?"),
    ],
)  # fmt: skip
def test_a_trip_lead_becomes_the_airports_own_phrase(request_, said):
    assert _lead_as_own(request_, "airport") == said
    persona = {"register": "formal", "style": "relaxed", "age_group": "40s"}
    assert said_as_own(request_, "airport", "en", persona) == said
    assert "destination airport" not in said_as_own(request_, "airport", "en", persona)


def test_a_request_without_a_trip_lead_keeps_the_own_phrases():
    assert _lead_as_own("How many tracks does that album have?", "album") is None
    assert _lead_as_own("I'm flying into that airport soon. What a day.", "airport") is None  # no later mention
    persona = {"register": "casual", "style": "relaxed", "age_group": "20s"}
    owned = said_as_own("How many tracks does that album have?", "album", "en", persona)
    assert owned is not None and "that album" not in owned and owned.startswith("How many tracks does the album")


def test_a_headline_comparison_is_typed_by_a_casual_user():
    # r3 #1: a formal, low-literacy 60+ persona typed "Brazil vs Norway: which one has more customers, …?"
    persona = {"register": "formal", "digital_literacy": "low", "age_group": "60s+"}
    fitted = fit_to_request(persona, "Brazil vs Norway: which one has more customers, and by how many?", "en")
    assert fitted["register"] == "casual" and fitted["digital_literacy"] == "high"
    plain = fit_to_request(persona, "Which country has more customers, Brazil or Norway?", "en")
    assert plain == persona


def test_an_answer_names_the_record_the_document_picked():
    # r3 #7, #20: "The file size of the longest track on the album … is …" never named the track
    short = {"kind": "value", "field": "file size", "unit": "bytes",
             "subject": "the longest track on the album 'Restless and Wild' by Accept"}  # fmt: skip
    said = value_answer(6290521, short, "en", "'Princess of the Dawn'")
    assert said == ("The file size of the longest track on the album 'Restless and Wild' by Accept, 'Princess of the "
                    "Dawn', is 6290521 bytes (6.3 MB).")  # fmt: skip
    assert "Princess" not in value_answer(6290521, short, "en")
    # a subject that already names it is not told twice
    named = {**short, "subject": "the track 'Princess of the Dawn'"}
    assert value_answer(6290521, named, "en", "'Princess of the Dawn'").count("Princess") == 1


def test_routes_an_airline_flies_are_compared_with_the_airline_in_front():
    # r3 #18: "How many more routes flown by AA does JFK have than LGA?" (a slot template)
    parts = compared_forms("routes flown by American Airlines", ["JFK", "LGA"], "route")
    assert parts["front"] == "For American Airlines" and parts["noun"] == "routes" and parts["subj"] == ["JFK", "LGA"]


def test_a_user_who_asks_for_legal_dongs_is_at_ease_with_administrative_terms():
    # r3 #11, #14, #15: '법정동' from a low-literacy 60대 user
    persona = {"격식": "존댓말", "디지털 활용": "낮음", "연령대": "60대 이상", "지역 맥락": "수도권"}
    assert fit_to_request(persona, "인천 남동구의 법정동은 몇 개인가요?", "ko")["디지털 활용"] == "높음"
    assert fit_to_request(persona, "기장군에는 읍면이 몇 개 있어요?", "ko")["디지털 활용"] == "낮음"


def test_a_reply_names_the_record_the_document_picked_first():
    # r3 #7: "It is about 11.2 MB" never said which track
    from factory.conversations.tasks import answer_reply

    text = ("The file size of the longest track on the album 'Restless and Wild' by Accept, 'Princess of the Dawn', "
            "is 6290521 bytes (6.3 MB).")  # fmt: skip
    task = {"language": "en", "answer": {"text": text, "frame": {"pattern": "PATH"}, "value": 6290521}}
    assert (
        answer_reply(task)
        == "The longest track is 'Princess of the Dawn', and its file size is 6290521 bytes (6.3 MB)."
    )


def test_a_comparison_for_one_airline_keeps_its_frame_once():
    # 'For Endeavor Air, JFK: 34 routes. EWR: 4. So For Endeavor Air, JFK has 30 more.' (own read s19)
    from factory.conversations.wording import compared_reply

    text = "For Endeavor Air, JFK has 30 more routes than EWR: 34 against 4."
    said = [compared_reply(text, "en", {"options": ["JFK", "EWR"]}, v) for v in range(5)]
    assert all(s and s.startswith("For Endeavor Air, ") and s.count("For ") == 1 and "34" in s and "30" in s
               for s in said), said  # fmt: skip
    assert said[0] == "For Endeavor Air, JFK has 34 routes and EWR has 4, so JFK has 30 more."


@pytest.mark.parametrize(
    ("request_", "said"),
    [
        # r1 #18: "How many copies of tracks by the artist behind it has the store sold?" (stilted)
        ("How many copies of tracks by the artist who recorded 'Fast As a Shark' has the store sold?",
         "A customer just asked me about 'Fast As a Shark'. How many copies of that artist's tracks have we sold?"),
        ("How much have tracks by the artist who recorded 'Inject The Venom' earned the store, in US dollars?",
         "A customer just asked me about 'Inject The Venom'. How much have that artist's tracks earned us, in US "
         "dollars?"),
        # r1 #17: "how many customers there are from the same country as …" (templated)
        ("Could you find out how many customers there are from the same country as František Wichterlová?",
         "Could you find out how many of our customers are from the same country as František Wichterlová?"),
        # r1 #2: "in the same state as ASX" (a templated hop): the trip first
        ("Hey! Could you check how many airports there are in the same state as ASX?",
         "Hey! I'm flying out of ASX soon. Could you check how many airports there are in its state?"),
    ],
)  # fmt: skip
def test_store_and_trip_questions_are_asked_in_their_speakers_voice(request_, said):
    from factory.conversations.wording import context_first

    assert context_first(request_, "en", 0) == said


def test_a_name_typed_with_its_accents_comes_from_a_user_at_ease_with_computers():
    persona = {"register": "casual", "digital_literacy": "low"}
    assert (
        fit_to_request(persona, "How many customers share František Wichterlová's country?", "en")["digital_literacy"]
        == "high"
    )
    assert fit_to_request(persona, "How many customers does Brazil have?", "en") == persona
