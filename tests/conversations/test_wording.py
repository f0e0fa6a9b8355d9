"""Chat wording of conversation user turns and gold replies (blind read s9), and near-duplicates per split."""

import re
from typing import Any

from factory.conversations.build import near_key, select
from factory.conversations.naturalness import askability
from factory.conversations.tasks import base_case, capabilities, chat_wording, conversation_tasks
from factory.conversations.wording import (
    chat_difference,
    clear_cutoffs,
    difference_reply,
    plain_terms,
    possessives,
    selected_entity,
    skeleton,
    spoken_korean_noun,
    styled_english,
    there_are_last,
)
from tests.conversations.helpers import source_task, trajectory


def test_a_date_cut_off_from_the_data_is_said_as_the_first_day_that_counts() -> None:
    junctions = [{"process": {"operator": "date_after", "threshold": "2008-06-12 00:00:00"}}]
    q = "How many invoice lines do the invoices of Luís Gonçalves dated after 2008-06-12 have in total?"
    assert clear_cutoffs(q, junctions, "en") == (
        "How many invoice lines do the invoices of Luís Gonçalves dated 2008-06-13 or later have in total?"
    )
    assert clear_cutoffs("2008-12-31 이후의 청구서는 몇 건인가요?", [{"process": {"operator": "date_after",
                         "threshold": "2008-12-31"}}], "ko") == "2009-01-01 이후의 청구서는 몇 건인가요?"  # fmt: skip
    assert clear_cutoffs(q, [{"process": {"operator": "ge", "threshold": 3}}], "en") == q  # inclusive: unchanged


def test_english_questions_read_as_typed() -> None:
    assert possessives("How many flights does the aircraft of EV with the most flights have?") == (
        "How many flights does EV's aircraft with the most flights have?"
    )
    assert possessives("the invoices of Luís Gonçalves") == "Luís Gonçalves' invoices"
    assert possessives("Take the albums of Music Videos.") == "Take Music Videos' albums."
    assert possessives("Do the invoices of that customer add up?") == "Do that customer's invoices add up?"
    for kept in ("the number of albums of AC/DC", "the state or province of SWU", "the fleet size of Endeavor Inc."):
        assert possessives(kept) == kept
    assert there_are_last("Could you find out how many airports in the same state as JFK there are?") == (
        "Could you find out how many airports there are in the same state as JFK?"
    )
    frame = {"pattern": "DIFF", "options": ["Accept", "AC/DC"], "description": "tracks of their albums"}
    asked = {chat_difference("How far apart are Accept and AC/DC in the number of tracks of their albums?", frame, v)
             for v in range(2)}  # fmt: skip
    assert all("Accept" in a and "AC/DC" in a and "albums have more tracks" in a and "by how many" in a for a in asked)
    assert chat_difference("How big is the gap between Accept and AC/DC in albums?", {**frame, "description":
                           "albums"}) == "Which has more albums, Accept or AC/DC? And by how many?"  # fmt: skip
    assert chat_difference("Who has more albums, Accept or AC/DC?", frame) is None  # not a stilted form
    assert chat_difference("How far apart are A and B in x?", {**frame, "description": "the x of y, z"}) is None
    assert plain_terms("How many airports are there with the same country and subdivision as EWR?") == (
        "How many airports are there in the same state or province as EWR?"
    )
    hurried = styled_english("Could you find out how many airports there are in Texas?", {"style": "hurried"})
    assert hurried == "How many airports are there in Texas?"
    assert styled_english("What is the time zone of AMK?", {"register": "casual"}) == "What's the time zone of AMK?"
    assert chat_wording("이름이 창성동인 읍면동의 시군구는 어디인가요?", "ko") == "창성동이 있는 시군구는 어디인가요?"
    assert chat_wording("이름이 신교동인 읍면동이 속한 시군구의 읍면동은 몇 곳인가요?", "ko", several=True) == (
        "신교동이 속한 시군구들의 읍면동은 몇 곳인가요?"
    )


def test_the_reply_names_the_entity_a_max_junction_selected() -> None:
    task = {
        "junctions": [{"to": "list_flights.tailnum", "process": {"operator": "max", "n_in": 316, "n_out": 1}}],
        "golden_actions": [{"tool": "list_flights", "args": {"tailnum": "N15980", "page": p}} for p in (1, 2)],
    }
    assert selected_entity(task) == ("list_flights", "tailnum", "N15980")
    assert selected_entity({**task, "junctions": [{**task["junctions"][0], "process": {"operator": "ge"}}]}) is None


def test_korean_multi_turn_masks_a_place_the_way_people_say_it() -> None:
    assert spoken_korean_noun("중구", "시군구") == "구" and spoken_korean_noun("철마면", "읍면동") == "면"
    assert spoken_korean_noun("세종특별자치시", "시도") == "시도"
    src = {**source_task("ko"), "query": "대전광역시 중구의 읍면동 수를 알려 주세요."}
    src["golden_actions"][1]["args"]["name"] = "중구"
    traj = {"seeds": [{**trajectory("ko")["seeds"][0], "value": "중구"}]}
    made, _ = conversation_tasks(src, {}, trajectory=traj, noun_of=lambda *_: "시군구", no_call_every=0)
    mt = next(t for t in made if t["case_pattern"] == "multi_turn")
    # the 구 is where the user lives ('대전광역시에서 제가 사는 구'), not one noted down (blind read s11 r2 #6)
    said = mt["initial_message"]
    lives = r"대전광역시에서 (?:제가|내가) 사는|대전(?:광역시)?에 사는데요?, 우리|대전 사는데요?, 우리|(?:저는|나) 대전 (?:살아요|살거든)\. 우리|대전에 살고 있는데요?, 우리"
    assert re.search(rf"(?:{lives}) 구의 읍면동", said), said
    assert "중구" not in mt["initial_message"]
    assert mt["hidden_info"] == {"구": "중구"}
    assert capabilities(["a", "b", "c"], lambda t, _l: {"noun": {"a": "리", "b": "시도", "c": "읍면동"}[t]}, "ko") == (
        "시군구나 동네 같은 행정구역"  # plain words, not the list of levels (blind s14)
    )
    assert capabilities(["c", "b"], lambda t, _l: {"noun": {"b": "시도", "c": "읍면동"}[t]}, "ko") == "시도나 읍면동"


def test_a_name_found_in_several_places_is_asked_and_answered_in_the_plural() -> None:
    src = {**source_task("ko"), "query": "이름이 신교동인 읍면동이 속한 시군구의 읍면동 수를 모두 합치면 얼마인가요?",
           "junctions": [{"from": "search.sigunguCd", "width": 2}],
           "answer": {"type": "number", "value": 123, "text": "이름이 신교동인 읍면동이 속한 시군구의 읍면동은 123곳입니다."}}  # fmt: skip
    traj = {"seeds": [{**trajectory("ko")["seeds"][0], "value": "신교동"}]}
    made, skipped = conversation_tasks(src, {}, trajectory=traj, noun_of=lambda *_: "읍면동", no_call_every=0)
    assert [t["case_pattern"] for t in made] == ["sequential"]  # no 'that 동' for a name standing for two
    assert "신교동이 속한 시군구들의" in made[0]["initial_message"]
    assert made[0]["answer"]["text"] == "신교동이 속한 시군구들의 읍면동은 123곳입니다."
    assert any("several things" in s["reason"] for s in skipped)


def test_pages_of_one_listing_are_one_request() -> None:
    page = {"name": "list_fleet", "step": 2, "args_subset": {"carrier": "EV"}}
    assert base_case([page, {**page}, {**page, "step": 3, "name": "list_flights"}]) == "sequential"
    assert base_case([page, {**page, "args_subset": {"carrier": "UA"}}]) == "parallel"
    assert base_case([page, {**page}]) == "single"


def _conv(i: str, split: str, description: str, seed: str, value: Any) -> dict[str, Any]:
    row = {"domain": "aviation", "language": "en", "query": "q",
           "answer": {"value": value, "frame": {"pattern": "PATH", "description": description}}}  # fmt: skip
    return {"id": f"sha256:{i}", "source_task_id": i, "split": split, "language": "en", "case_pattern": "sequential",
            "question_key": i, "near_key": near_key(row, {"seeds": [{"value": seed}]})}  # fmt: skip


def test_near_duplicates_in_one_split_are_dropped() -> None:
    assert skeleton("airports in the same state as airport JFK", ["JFK"]) == skeleton(
        "airports in the same state as airport KJFK", ["KJFK"]
    )
    convs = [
        _conv("a", "dev", "the number of airports in the same state as airport JFK", "JFK", 318),
        _conv("b", "dev", "the number of airports in the same state as airport KJFK", "KJFK", 318),  # same answer
        _conv("c", "dev", "the number of airports in the same state as airport SWU", "SWU", 9),  # another question
        _conv("d", "test", "the number of airports in the same state as airport KJFK", "KJFK", 318),  # other split
        _conv("e", "dev", "the fleet size of airline JFK", "JFK", 7),  # another skeleton
    ]
    kept, dropped = select(convs, 0.0, 13)
    # d (another split) is no near-duplicate of a, but the third question of one template (PER_TEMPLATE, s18 r2)
    assert sorted(c["source_task_id"] for c in kept) == ["a", "c", "e"]
    why = {d["source_task_id"]: d["reason"] for d in dropped}
    assert sorted(why) == ["b", "d"] and why["b"].startswith("near-duplicate of"), why
    assert "question template is asked by 2 kept conversations" in why["d"], why


def test_a_difference_reply_says_which_has_more_first() -> None:
    said = "The difference is 12: 24 for Battlestar Galactica (Classic) against 12 for Stone Temple Pilots."
    assert difference_reply(said) == "Battlestar Galactica (Classic) has more, by 12: 24 against 12."
    assert (
        difference_reply("The difference is 1: 2 for AC/DC against 3 for Accept.")
        == "Accept has more, by 1: 3 against 2."
    )
    level = "The difference is 0: 2 for AC/DC against 2 for Accept."
    assert difference_reply(level) == level and difference_reply("5곳 차이입니다.") == "5곳 차이입니다."


def test_a_parameter_read_out_is_not_askable() -> None:
    def task(query: str, options: list[str]) -> dict[str, Any]:
        return {"language": "en", "query": query, "answer": {"frame": {"pattern": "WHICH", "options": options}}}

    level, why = askability(task("How many nearby RKSO with search radius in kilometres 100 are there?", []))
    assert level is None and "kilometres 1" in why
    level, why = askability(task("Between 120.7 and 100, which one has more airports?", ["120.7", "radius 100"]))
    assert level is None and "argument values" in why
    level, why = askability(task("I'm curious: how many airline JetBlue Airways are there?", []))
    assert level is None and "named thing" in why
    assert askability(task("Can you count how many albums Accept has?", []))[0] is not None
    title = "the album 'Battlestar Galactica (Classic), Season 1'"
    assert askability(task("Which has more tracks, A or B?", ["Accept", title]))[0] is not None
