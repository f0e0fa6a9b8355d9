"""Planted tests for the causes the s16 round-2 conversations read found (benchmarks/results/
blind_audit_s16b_conversations_2026-12-03.md), fixed in session 17."""

from factory.conversations.persona import korean_register, spoken_sido
from factory.conversations.wording import styled_english


def test_a_banmal_user_names_a_sido_as_people_say_it():
    # r2 #8: "혹시 이거 알아? 서울특별시는 광주광역시보다 구가 몇 곳 더 많아?" (a speaker says '서울이 광주보다')
    text, persona = korean_register("서울특별시는 광주광역시보다 구가 몇 곳 더 많나요?", {"격식": "반말"})
    assert persona["격식"] == "반말"
    assert text == "서울은 광주보다 구가 몇 개 더 많아?", text
    # the particle fits the short name; an invariant particle is kept; a 시도 in a longer word is left alone
    assert spoken_sido("충청남도가 충청북도보다") == "충남이 충북보다"
    assert spoken_sido("부산광역시와 울산광역시를") == "부산과 울산을"
    assert spoken_sido("서울특별시 종로구의") == "서울 종로구의"
    assert spoken_sido("광주광역시청") == "광주광역시청"
    # 광주광역시 beside 경기도 stays in full (경기도 광주시 is another 광주)
    assert spoken_sido("경기도 광주시와 광주광역시") == "경기도 광주시와 광주광역시"


def test_a_korean_request_is_typed_as_people_talk():
    # s17 r1 #4, #12, #13, #15: full official names, the middle dot ('구·군', '읍·면') and '몇 곳' read written, not typed
    text, _ = korean_register("울산광역시와 서울특별시의 구·군 수는 몇 곳 차이 나나요?", {"격식": "존댓말"})
    assert text == "울산과 서울의 구하고 군 수는 몇 개 차이 나나요?", text
    text, _ = korean_register("인천광역시 강화군의 읍·면은 몇 곳인가요?", {"격식": "반말"})
    assert text == "인천 강화군의 읍면은 몇 개야?", text
    assert (
        korean_register("시도가 전부 몇 곳인지 알려 주세요.", {"격식": "존댓말"})[0]
        == "시도가 전부 몇 개인지 알려 주세요."
    )


def test_a_sido_said_short_is_what_the_recovery_slips_in():
    # the name-for-code slip keeps working when the user says '대구', not '대구광역시'
    from factory.conversations.recovery import _said_as

    assert _said_as("대구광역시", "대구 달성군의 읍면 수는 어떻게 돼?") == "대구"
    assert _said_as("대구광역시", "대구광역시 달성군") == "대구광역시"
    assert _said_as("대구광역시", "달성군의 읍면 수") == ""


def test_a_large_measure_is_grouped_and_still_read_as_the_answer():
    # s17 r1 #2: '6290521 bytes' with no digit grouping
    from factory.conversations.wording import grouped_measures
    from factory.llm.simulator import mentions_value

    said = grouped_measures("The file size is 6290521 bytes (6.3 MB); district 11140 in 2013.", "en")
    assert said == "The file size is 6,290,521 bytes (6.3 MB); district 11140 in 2013."
    assert mentions_value(said, 6290521) and not mentions_value("12,3456", 123456)


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


def _episode(calls):
    import json

    out = {"calls": [], "messages": []}
    for i, (tool, args, records) in enumerate(calls):
        out["calls"].append({"tool": tool, "args": args, "ok": True, "index": i, "call_id": f"c{i}"})
        out["messages"].append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"records": records})})
    return out


def test_a_possessive_is_not_made_of_the_start_of_a_longer_name():
    # s17 demo: "Could you list the ICAO codes of JetBlue's origin airports Airways' routes?"
    from factory.conversations.wording import possessives

    text = "Could you list the ICAO codes of the origin airports of JetBlue Airways' routes?"
    assert possessives(text) == text
    assert possessives("What is the time zone of AMK?") == "What is AMK's time zone?"


def test_the_found_record_is_read_from_the_field_the_next_call_took():
    # s17 demo: track 3 is on album 3, so the track's own id matched first and the album went unnamed:
    # "The number of tracks of the album containing 'Fast As a Shark' is 3."
    from factory.conversations.build import _named_subject
    from factory.conversations.found import found_names

    conv = {"golden_calls": [
        {"name": "search_tracks", "step": 1, "args": {"name": "Fast As a Shark"}, "args_subset": {"name": "Fast As a Shark"}},
        {"name": "get_album", "step": 2, "args": {"album_id": 3}, "args_subset": {"album_id": 3}}]}  # fmt: skip
    track = {"track_id": 3, "name": "Fast As a Shark", "album_id": 3, "album_title": "Restless and Wild"}
    ep = _episode([("search_tracks", {"name": "Fast As a Shark"}, [track]), ("get_album", {"album_id": 3}, [])])
    said = "How many tracks does the album containing 'Fast As a Shark' have? Fast As a Shark."
    assert found_names(conv, ep, said) == (("get_album", "album_id"), ["Restless and Wild"])
    text = "The number of tracks of the album containing 'Fast As a Shark' is 3."
    assert _named_subject(text, "album", "Restless and Wild") == (
        "Restless and Wild, the album containing 'Fast As a Shark', has 3 tracks."
    )
    assert _named_subject(text.replace("is 3", "is 1"), "album", "Restless and Wild").endswith("has 1 track.")


def test_a_document_searched_about_a_found_record_names_it():
    # s17 demo: "Customers from 4 countries have bought tracks by the artist who recorded 'Balls to the Wall'." after
    # a search of the catalogue notes for 'Accept (artist)' never said who the artist is
    from factory.conversations.build import _inline_found
    from factory.conversations.found import searched_subject

    conv = {
        "golden_calls": [
            {"name": "search_tracks", "step": 1, "args": {"name": "Balls to the Wall"},
             "args_subset": {"name": "Balls to the Wall"}},
            {"name": "search_notes", "step": 2, "args": {"query": "Accept (artist)", "k": 5},
             "args_subset": {"query": "Accept (artist)"}},
        ],
        "golden_actions": [{"tool": "search_tracks", "source_type": "api"},
                           {"tool": "search_notes", "source_type": "retrieval"}],
    }  # fmt: skip
    track = {"track_id": 2, "name": "Balls to the Wall", "album_title": "Balls to the Wall", "artist_name": "Accept"}
    ep = _episode([("search_tracks", {"name": "Balls to the Wall"}, [track]),
                   ("search_notes", {"query": "Accept (artist)", "k": 5}, [])])  # fmt: skip
    said = "How many countries do customers who bought tracks by the artist who recorded 'Balls to the Wall' come from?"
    assert searched_subject(conv, ep, said) == ("artist", "Accept")
    assert searched_subject(conv, ep, said + " Accept") is None  # named already
    text = "Customers from 4 countries have bought tracks by the artist who recorded 'Balls to the Wall'."
    assert _inline_found(text, "artist", "Accept") == (
        "Customers from 4 countries have bought tracks by Accept, the artist who recorded 'Balls to the Wall'."
    )
    inside = "The store has sold 5 copies of tracks by the artist who recorded 'Fast As a Shark' this year."
    assert "by Accept (the artist who recorded 'Fast As a Shark') this year" in _inline_found(
        inside, "artist", "Accept"
    )


def test_a_time_zone_is_said_by_its_common_name():
    # s16 conversations r2 #16: "answer gives 'America/Chicago' rather than 'Central Time'"
    from factory.conversations.wording import spoken_time_zones

    said = spoken_time_zones("The time zone of ASX is America/Chicago, and there are 4 airports.", "en")
    assert said == "The time zone of ASX is Central Time (America/Chicago), and there are 4 airports."
    # China's 'CST' is not Central Time; a zone without a common name and a Korean reply stay as they are
    assert spoken_time_zones("Asia/Shanghai and America/Bogota", "en") == "Asia/Shanghai and America/Bogota"
    assert spoken_time_zones("America/Chicago입니다.", "ko") == "America/Chicago입니다."


def test_no_one_asks_which_sido_holds_a_gu_they_name():
    # s17 r1 #14: "성동구가 속한 시도의 구 수는 어떻게 돼?" (a person asks '서울에 구 몇 개야?')
    from factory.conversations.naturalness import askability

    level, why = askability({"language": "ko", "query": "성동구가 속한 시도의 구는 몇 곳인가요?", "answer": {}})
    assert level is None and "시도" in why
    level, _ = askability({"language": "ko", "query": "청운동이 속한 시도의 구는 몇 곳인가요?", "answer": {}})
    assert level is not None  # a 동's 시도 is a lookup people do


def test_a_code_system_qualifier_is_left_to_the_reply():
    # s17 r2 #9, #17, #20: "airports with an IATA code within 100 km" read as database wording in a user's message
    from factory.conversations.tasks import left_to_reply

    reply = (
        "There are 24 airports with an IATA code within 100 km of LGA, and the time zone of LGA is America/New_York."
    )
    asked = "Two things: how many airports with an IATA code are there within 100 km of LGA, and what is its time zone?"
    assert left_to_reply(asked, reply, "en") == (
        "Two things: how many airports are there within 100 km of LGA, and what is its time zone?"
    )
    # kept where the reply would not say it
    assert left_to_reply(asked, "It is 24.", "en") == asked
