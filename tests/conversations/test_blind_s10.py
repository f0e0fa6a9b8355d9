"""The causes the s10 blind read of the conversations found, each planted and checked (issue 19): stock thanks
after a refusal, code-book qualifiers in Korean requests, personas that do not fit the question, a withheld name
without a reason, an implausible injected error, and replies that never name what the chain found."""

import asyncio
import json
import random
import re
from typing import Any

from factory.conversations.build import name_found
from factory.conversations.episode import OracleAgent, RulesSimulator, run_conversation
from factory.conversations.found import found_names, found_sentence
from factory.conversations.persona import fit_to_request, korean_register, register_consistent, to_banmal
from factory.conversations.recovery import recovery_variants
from factory.conversations.tasks import answer_reply, conversation_tasks, no_call_task
from factory.conversations.wording import plain_noun, possessives, spoken_dates, spoken_korean_qualifiers, which_then
from factory.llm.schemas import SimulatorInput
from factory.llm.simulator import STOP, declined, opening, user_simulator
from tests.conversations.helpers import FakeEnv, noun_of, source_task, trajectory


def _last_user(language: str, reply: str, persona: dict[str, str]) -> str:
    inp = SimulatorInput(
        language=language, persona=persona, task="t", answer_values=[],
        transcript=[{"role": "user", "content": "q"}, {"role": "assistant", "content": reply}],
    )  # fmt: skip
    out = user_simulator(inp)
    assert out.stop
    return out.message.replace(STOP, "").strip()


def test_a_refusal_is_taken_in_not_thanked_for() -> None:
    # blind read s10 #3: "Thank you, that is all I needed." after "I can't set alarms."
    assert declined("I can't set alarms. I can look up airlines, though.", "en")
    assert declined("택시 호출은 할 수 없어요. 제가 도와드릴 수 있는 건 시도 조회예요.", "ko")
    assert not declined("Three and a half hours is 210 minutes.", "en")
    thanks = {"Thank you, that is all I needed.", "Perfect, cheers.", "Thanks, that answers it.", "Great, thanks!"}
    for i in range(12):
        for register in ("casual", "formal"):
            persona = {"register": register, "style": "relaxed", "age_group": f"{i}"}
            said = _last_user("en", f"I can't send emails, sorry ({i}).", persona)
            assert said not in thanks
        said = _last_user("ko", f"택시 호출은 할 수 없어요 ({i}).", {"격식": "반말", "연령대": "20대"})
        assert "고마워" not in said and "땡큐" not in said and register_consistent([said], {"격식": "반말"})
    # an answer is still thanked for
    thanked = _last_user("en", "Three and a half hours is 210 minutes.", {"register": "formal"})
    assert "thank" in thanked.lower() and not declined(thanked, "en"), thanked


def test_a_no_call_conversation_ends_without_thanks_for_a_refusal() -> None:
    for k in range(12):
        task = {**source_task(), "id": f"sha256:src-{k}"}
        conv = no_call_task(task, "", random.Random(k), cfg_seed=k, can="tracks")
        if conv["no_call_kind"] != "out_of_scope":
            continue
        ep = asyncio.run(run_conversation(conv, OracleAgent(), RulesSimulator(), FakeEnv(conv["tools_subset"])))
        last = [m["content"] for m in ep["messages"] if m["role"] == "user"][-1]
        assert "that is all I needed" not in last and "answers it" not in last


def test_korean_code_book_qualifiers_are_said_after_the_question() -> None:
    # blind read s10 #9, #13, #15, #16: '시군구(일반구 단위)', '법정 읍면동' read as a specification
    assert spoken_korean_qualifiers("경기도의 시군구(일반구 포함)는 몇 곳인가요?") == (
        "경기도의 시군구는 몇 곳인가요? 일반구도 포함해서요."
    )
    assert spoken_korean_qualifiers("서울특별시 종로구의 법정 읍면동은 몇 곳인가요?") == (
        "서울특별시 종로구의 읍면동은 몇 곳인가요? 법정동 기준으로요."
    )
    said = spoken_korean_qualifiers("인구가 가장 많은 시군구(일반구 단위)의 코드는 무엇입니까?")
    assert "(" not in said and said.endswith("일반구 단위로 세서요.")
    assert to_banmal(said) == "인구가 가장 많은 시군구의 코드는 뭐야? 일반구 단위로 세서."
    assert (
        to_banmal("종로구의 읍면동은 몇 곳인가요? 법정동 기준으로요.")
        == "종로구의 읍면동은 몇 곳이야? 법정동 기준으로."
    )
    plain, persona = korean_register("경기도의 시군구는 몇 곳인가요? 일반구도 포함해서요.", {"격식": "반말"})
    assert persona["격식"] == "반말" and plain.endswith("포함해서.")


def test_korean_conversations_carry_no_parenthetical_or_legal_prefix() -> None:
    task = source_task("ko")
    task["query"] = "철마면이 속한 시군구(일반구 포함)의 법정 읍면동 수를 알려 주세요."
    made, _ = conversation_tasks(task, {}, trajectory=trajectory("ko"), noun_of=noun_of, no_call_every=0)
    for conv in made:
        assert "(" not in conv["initial_message"] and "법정 읍면동" not in conv["initial_message"]
        assert "법정동 기준" in conv["initial_message"]


def test_personas_fit_the_question() -> None:
    # blind read s10 #4: a low-literacy user asking by IATA code; a 부산 user asked about 대전's 구
    p = fit_to_request(
        {"지역 맥락": "부산·경남 생활권", "디지털 활용": "낮음"}, "대전광역시 중구의 읍면동 수를 알려 주세요.", "ko"
    )
    assert p["지역 맥락"] == "대전·충청 생활권" and p["디지털 활용"] == "낮음"
    p = fit_to_request({"지역 맥락": "부산·경남 생활권"}, "서울특별시와 부산광역시의 시군구 수 차이는?", "ko")
    assert p["지역 맥락"] == "부산·경남 생활권"  # two regions: either may ask
    p = fit_to_request({"디지털 활용": "낮음"}, "종로구의 통계청 행정구역 코드는 무엇인가요?", "ko")
    assert p["디지털 활용"] == "높음"
    p = fit_to_request(
        {"digital_literacy": "low"}, "How many airports with an IATA code are within 100 km of OSN?", "en"
    )
    assert p["digital_literacy"] == "high"
    assert fit_to_request({"digital_literacy": "low"}, "How many tracks does 'Snowballed' have?", "en") == {
        "digital_literacy": "low"
    }


def test_a_withheld_name_has_a_reason_and_a_hurried_user_never_withholds() -> None:
    # blind read s10 #11: a rushed user who holds back the 구 name for no reason
    for lang in ("en", "ko"):
        for k in range(8):
            task = {**source_task(lang), "id": f"sha256:src-{lang}-{k}"}
            made, _ = conversation_tasks(task, {}, trajectory=trajectory(lang), noun_of=noun_of, no_call_every=0,
                                         cfg_seed=k)  # fmt: skip
            mt = next(c for c in made if c["case_pattern"] == "multi_turn")
            assert mt["persona"]["style" if lang == "en" else "스타일"] in ("relaxed", "느긋함")
            opening_said = mt["initial_message"]
            # the reason is the user's own situation ('the song I'm listening to', '우리 면'), not a note to look up
            # (blind read s11 r2 #6, #11)
            if lang == "en":
                assert re.search(r"\b(?:my|I'm|I|mine|ours|that's playing|a track playing)\b", opening_said), (
                    opening_said
                )
                assert not any(r in opening_said for r in ("noted down", "written down", "my notes")), opening_said
            else:
                assert any(r in opening_said for r in ("우리", "사는")), opening_said
                assert not any(r in opening_said for r in ("메모", "적어 둔", "서류")), opening_said
            ep = asyncio.run(run_conversation(mt, OracleAgent(), RulesSimulator(), FakeEnv(mt["tools_subset"])))
            users = [m["content"] for m in ep["messages"] if m["role"] == "user"]
            assert len(users) >= 2 and mt["hidden_info"] and list(mt["hidden_info"].values())[0] in users[1]
            looked = ("found", "checked", "notes", "look") if lang == "en" else ("찾아", "메모", "확인해")
            assert not any(w in users[1].lower() for w in looked), users[1]  # they just say it
            if lang == "ko":
                assert register_consistent(users, mt["persona"])


def test_no_recovery_copy_mistypes_a_value_the_user_just_gave() -> None:
    # blind read s11 #1, #8, #17: 'CJJ' → 'CJJJ', 27 → 277, 'KLGA' → 'KLGAA' (no good assistant makes them)
    made, _ = conversation_tasks(source_task(), {}, trajectory=trajectory(), noun_of=noun_of, no_call_every=0)
    seq = next(t for t in made if t["case_pattern"] == "sequential")
    for k in (9, "27", "CJJ"):
        conv = {**seq, "golden_calls": [*seq["golden_calls"][:1], {**seq["golden_calls"][1], "args": {"code": k},
                                                                     "args_subset": {"code": k}}]}  # fmt: skip
        assert all(v["recovery"]["kind"] != "wrong_value" for v in recovery_variants(conv, {}, {}))
        # an int id with no name the user said: no wrong_type ('9th') either, so no copy at all
        nameless = {**conv, "initial_message": "How many?"}
        assert recovery_variants(nameless, {}, {}) == []


def _episode(calls: list[tuple[str, dict[str, Any], list[dict[str, Any]]]]) -> dict[str, Any]:
    out: dict[str, Any] = {"calls": [], "messages": []}
    for i, (tool, args, records) in enumerate(calls):
        out["calls"].append({"tool": tool, "args": args, "ok": True, "index": i, "call_id": f"c{i}"})
        out["messages"].append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"records": records})})
    return out


def test_the_reply_names_what_the_chain_found() -> None:
    # blind read s10 #13, #15: "창성동이 속한 시군구들의 읍면동은 150곳입니다." never names 종로구 and 군산시
    conv = {
        "golden_calls": [
            {"name": "find_emd", "step": 1, "args": {"emdNm": "창성동"}, "args_subset": {"emdNm": "창성동"}},
            {"name": "list_emd", "step": 2, "args": {"sigunguCd": "11110"}, "args_subset": {"sigunguCd": "11110"}},
            {"name": "list_emd", "step": 2, "args": {"sigunguCd": "45130"}, "args_subset": {"sigunguCd": "45130"}},
        ]
    }
    found = [
        {"emdCd": "1111011800", "emdNm": "창성동", "sigunguCd": "11110", "sigunguNm": "종로구"},
        {"emdCd": "4513010900", "emdNm": "창성동", "sigunguCd": "45130", "sigunguNm": "군산시"},
    ]
    ep = _episode([("find_emd", {"emdNm": "창성동"}, found), ("list_emd", {"sigunguCd": "11110"}, []),
                   ("list_emd", {"sigunguCd": "45130"}, [])])  # fmt: skip
    said = "창성동이 속한 시군구들의 읍면동은 모두 몇 곳이야? 창성동이 속한 시군구들의 읍면동은 150곳입니다."
    target, names = found_names(conv, ep, said)
    assert target == ("list_emd", "sigunguCd") and names == ["종로구", "군산시"]
    assert found_sentence("ko", "시군구", names) == "해당 시군구는 종로구, 군산시입니다."
    assert found_names(conv, ep, said + " 종로구와 군산시") == (None, [])  # already said: nothing added
    # a name field of another entity (a track's Name for its AlbumId) is not the album's name
    conv2 = {"golden_calls": [
        {"name": "playlist_tracks", "step": 1, "args": {"PlaylistId": 9}, "args_subset": {"PlaylistId": 9}},
        {"name": "album_tracks", "step": 2, "args": {"AlbumId": 271}, "args_subset": {"AlbumId": 271}}]}  # fmt: skip
    ep2 = _episode([("playlist_tracks", {"PlaylistId": 9}, [{"TrackId": 3402, "Name": "Band Members", "AlbumId": 271}]),
                    ("album_tracks", {"AlbumId": 271}, [])])  # fmt: skip
    assert found_names(conv2, ep2, "How many tracks? 14 tracks.") == (None, [])
    # the record's own id (its first field) names it
    ep3 = _episode([("playlist_tracks", {"PlaylistId": 9}, [{"AlbumId": 271, "Title": "Revelations"}]),
                    ("album_tracks", {"AlbumId": 271}, [])])  # fmt: skip
    assert found_names(conv2, ep3, "How many tracks? 14 tracks.") == (("album_tracks", "AlbumId"), ["Revelations"])
    assert found_sentence("en", "album", ["Revelations"]) == "The album is Revelations."


def test_openings_keep_the_register() -> None:
    for v in range(6):
        for banmal in (True, False):
            persona = {"격식": "반말" if banmal else "존댓말", "스타일": "느긋함"}
            said = opening("ko", persona, "대전광역시에 있는 그 구의 읍면동 수를 알려 줘." if banmal else
                           "대전광역시에 있는 그 구의 읍면동 수를 알려 주세요.", variant=v, noun="구")  # fmt: skip
            assert register_consistent([said], persona), said


def test_requests_write_days_as_people_do() -> None:
    # blind read s10 #10: "line items … on invoices dated on or after 2008-06-13" read as a database query
    assert spoken_dates("invoices dated 2008-06-13 or later", "en") == "invoices dated June 13, 2008 or later"
    assert (
        spoken_dates("2009-01-01 이후의 청구서는 몇 건인가요?", "ko") == "2009년 1월 1일 이후의 청구서는 몇 건인가요?"
    )
    assert spoken_dates("code 2008-13-45", "en") == "code 2008-13-45"
    task = source_task()
    task["query"] = "How many invoice lines do the invoices of Different World dated after 2008-06-12 have in total?"
    task["junctions"] = [{"process": {"operator": "date_after", "threshold": "2008-06-12 00:00:00"}}]
    made, _ = conversation_tasks(task, {}, trajectory=trajectory(), noun_of=noun_of, no_call_every=0)
    assert made and all("June 13, 2008 or later" in c["initial_message"] for c in made)


def test_a_legal_place_named_by_its_name_is_said_plainly() -> None:
    # blind read s10 #13: "이름이 창성동인 법정 읍면동이 속한 시군구들의 법정 읍면동은 모두 몇 곳이야?"
    task = source_task("ko")
    task["query"] = "이름이 철마면인 법정 읍면동이 속한 시군구의 법정 읍면동은 모두 몇 곳인가요?"
    made, _ = conversation_tasks(task, {}, trajectory=trajectory("ko"), noun_of=noun_of, no_call_every=0)
    base = next(c for c in made if c["case_pattern"] != "multi_turn")
    assert "이름이" not in base["initial_message"] and "철마면이 속한 시군구의 읍면동은" in base["initial_message"]
    assert korean_register("영문명은 무엇입니까?", {"격식": "존댓말"})[0] == "영문명은 무엇인가요?"


def test_a_name_the_chain_sent_on_is_named_in_the_reply() -> None:
    # '확인해 보니 11240이에요.' for the most populous district's code never said it is 송파구
    conv = {"golden_calls": [
        {"name": "find", "step": 1, "args": {"keyword": "광진구"}, "args_subset": {"keyword": "광진구"}},
        {"name": "bulletins", "step": 2, "args": {"query": "2010년 서울"}, "args_subset": {"query": "2010년 서울"}},
        {"name": "find", "step": 3, "args": {"keyword": "송파구"}, "args_subset": {"keyword": "송파구"}}]}  # fmt: skip
    ep = _episode([("find", {"keyword": "광진구"}, [{"admCd": "11050", "admNm": "광진구"}]),
                   ("bulletins", {"query": "2010년 서울"}, [{"id": "b", "text": "송파구의 인구가 가장 많았고"}]),
                   ("find", {"keyword": "송파구"}, [{"admCd": "11240", "admNm": "송파구"}])])  # fmt: skip
    conv["golden_actions"] = [{"tool": "bulletins", "source_type": "retrieval"}]
    said = "광진구가 있는 시도에서 2010년 인구가 가장 많은 시군구의 코드는 뭐야? 확인해 보니 11240이에요."
    assert found_names(conv, ep, said) == (("find", "keyword"), ["송파구"])


def test_a_name_with_a_parenthesis_is_not_made_a_possessive() -> None:
    # blind read s11 #7: "Battlestar Galactica (Classic)'s albums" reads like a database query
    assert possessives("the albums of Battlestar Galactica (Classic)") == "the albums of Battlestar Galactica (Classic)"


def test_a_result_count_is_not_made_wrong_as_an_id() -> None:
    # s11 run: 'k: 5 → 55' (the number of passages asked for) injected as a mistyped identifier
    made, _ = conversation_tasks(source_task(), {}, trajectory=trajectory(), noun_of=noun_of, no_call_every=0)
    seq = next(t for t in made if t["case_pattern"] == "sequential")
    call = {**seq["golden_calls"][1], "args": {"k": 5}, "args_subset": {"k": 5}}
    conv = {**seq, "golden_calls": [seq["golden_calls"][0], call]}
    kinds = {v["recovery"]["kind"]: v["recovery"]["detail"] for v in recovery_variants(conv, {}, {})}
    assert not any(d.startswith("k:") for d in kinds.values())


def test_a_short_reply_keeps_the_unit_of_its_value() -> None:
    # s11 run: "It is 343719." for "… is 343719 milliseconds." (the question had left the unit out)
    task = source_task()
    task["answer"] = {"type": "number", "value": 343719, "text": "The length of the longest track on the album "
                      "'For Those About To Rock We Salute You' by AC/DC is 343719 milliseconds."}  # fmt: skip
    for variant in range(4):
        assert answer_reply(task, variant).endswith("(343719 milliseconds).")  # s13: said in minutes too
    assert plain_noun("subdivision") == "state or province"


def test_no_call_requests_come_in_ten_forms_per_kind_and_a_refusal_is_recognised() -> None:
    # s11 read: 'What is 15:30 in 12-hour time?' twice in a 20-conversation sample (six forms per kind)
    for lang in ("en", "ko"):
        seen: dict[str, set[str]] = {"out_of_scope": set(), "direct": set()}
        for k in range(200):
            conv = no_call_task({**source_task(lang), "id": f"sha256:n-{k}"}, "", random.Random(k), cfg_seed=k, can="x")
            seen[conv["no_call_kind"]].add(conv["task"])
            if conv["no_call_kind"] == "out_of_scope":
                assert declined(conv["answer"]["text"], lang), conv["answer"]["text"]
            else:
                assert not declined(conv["answer"]["text"], lang)
        # Korean: each of 10 forms in 반말 and in 존댓말; English: 16 (s14c: 'set an alarm for 7' asked twice)
        per = 16 if lang == "en" else 20
        assert all(len(v) == per for v in seen.values()), {k: len(v) for k, v in seen.items()}


def test_found_names_and_code_questions_read_right() -> None:
    # s11 read: "The state or provinces are Incheon and Gangwon-do."; a low-literacy user comparing ICN and WJU
    said = found_sentence("en", "state or province", ["Incheon", "Gangwon-do"])
    assert said == "The states or provinces are Incheon and Gangwon-do."
    p = fit_to_request({"digital_literacy": "low"}, "Between ICN and WJU, which one has more airports?", "en")
    assert p["digital_literacy"] == "high"


def test_a_partly_named_pair_names_nothing() -> None:
    # s11 run: "The track 'Wet My Bed' has more, by 11: 12 against 1. The album is Core." (which album?)
    conv = {"golden_calls": [
        {"name": "search", "step": 1, "args": {"name": "Wet My Bed"}, "args_subset": {"name": "Wet My Bed"}},
        {"name": "search", "step": 1, "args": {"name": "Balls"}, "args_subset": {"name": "Balls"}},
        {"name": "album", "step": 2, "args": {"album_id": 206}, "args_subset": {"album_id": 206}},
        {"name": "album", "step": 2, "args": {"album_id": 2}, "args_subset": {"album_id": 2}}]}  # fmt: skip
    ep = _episode([("search", {"name": "Wet My Bed"}, [{"track_id": 1, "album_id": 206, "album_title": "Core"}]),
                   ("search", {"name": "Balls"}, [{"track_id": 2, "album_id": 2, "album_title": "Balls"}])])  # fmt: skip
    assert found_names(conv, ep, "Which album has more tracks, Wet My Bed's or Balls'?") == (None, [])
    assert found_names(conv, ep, "How many?")[1] == ["Core", "Balls"]


def test_a_superlative_pick_is_asked_which_first_and_kept_only_when_named() -> None:
    # s11 read: "… 인구가 가장 많은 시군구의 행정안전부 시군구 코드는 무엇인가요?" (a relative clause read as a query)
    said = which_then(
        "서울특별시에서 2015년 인구주택총조사 기준 인구가 가장 많은 시군구의 행정안전부 시군구 코드는 무엇인가요?"
    )
    assert said == ("서울특별시에서 2015년 인구주택총조사 기준 인구가 가장 많은 시군구가 어디인가요? "
                    "그 시군구의 행정안전부 시군구 코드도 알려 주세요.")  # fmt: skip
    assert to_banmal(said or "").endswith("시군구가 어디야? 그 시군구의 행정안전부 시군구 코드도 알려 줘.")
    assert which_then("종로구의 읍면동은 몇 곳인가요?") is None
    task = source_task("ko")
    task["query"] = "철마면이 속한 시도에서 인구가 가장 많은 시군구의 코드는 무엇인가요?"
    made, _ = conversation_tasks(task, {}, trajectory=trajectory("ko"), noun_of=noun_of, no_call_every=0)
    base = next(c for c in made if c["case_pattern"] != "multi_turn")
    assert "어디" in base["initial_message"] and "코드는" in base["asks_which"]
    # the reply names nothing: the one-question opening comes back
    conv = {**base, "answer": {"text": "11240입니다.", "values": ["11240"]}}
    ep = {"messages": [{"role": "user", "content": base["initial_message"]},
                       {"role": "assistant", "content": "11240입니다."}], "calls": []}  # fmt: skip
    out = name_found(conv, ep, {}, noun_of)
    assert out["messages"][0]["content"] == conv["initial_message"] and "코드는" in conv["initial_message"]
    assert "asks_which" not in conv


def test_found_names_of_compared_arms_are_left_out_and_the_noun_is_the_one_said() -> None:
    # s11 run: "SLK has more airports in the same state, by 317: 318 against 1. The states or provinces are Daegu and
    # New York." (which is which?) and "… in the same state as EWR. The state or province is New Jersey."
    calls = [
        {"name": "coords", "platform": "p", "step": 1, "args": {"iata": "EWR"}, "args_subset": {"iata": "EWR"}},
        {"name": "by_region", "platform": "p", "step": 2, "args": {"subdivision": "New Jersey"},
         "args_subset": {"subdivision": "New Jersey"}},
    ]  # fmt: skip
    ep = _episode([("coords", {"iata": "EWR"}, [{"iata": "EWR", "subdivision": "New Jersey"}]),
                   ("by_region", {"subdivision": "New Jersey"}, [])])  # fmt: skip
    text = "There are 87 airports in the same state as EWR."
    conv = {"case_pattern": "sequential", "language": "en", "source_pattern": "SEQ", "golden_calls": calls,
            "answer": {"text": text, "values": [87]}}  # fmt: skip
    ep["messages"] = [{"role": "user", "content": "How many airports are in EWR's state?"}, *ep["messages"],
                      {"role": "assistant", "content": text}]  # fmt: skip
    spec = type("S", (), {"tool_id": "d/p/by_region"})()

    def noun(tool_id: str, param: str, language: str) -> str | None:
        return "subdivision"

    name_found(conv, ep, {("p", "by_region"): spec}, noun)
    # blind read s11 #4: 'The state is New York.' appended read back to front: the name is said in its place
    assert conv["answer"]["text"] == "There are 87 airports in the same state as EWR (New Jersey)."
    pair = {**conv, "source_pattern": "CMP+SEQ", "answer": {"text": text, "values": [87]}}
    ep2 = {**ep, "messages": [*ep["messages"][:-1], {"role": "assistant", "content": text}]}
    two = [("coords", {"iata": "EWR"}, [{"iata": "EWR", "subdivision": "New Jersey"},
                                         {"iata": "X", "subdivision": "New York"}])]  # fmt: skip
    calls2 = [*calls, {"name": "by_region", "platform": "p", "step": 2, "args": {"subdivision": "New York"},
                       "args_subset": {"subdivision": "New York"}}]  # fmt: skip
    ep2 = {**_episode(two), "messages": [*_episode(two)["messages"], {"role": "assistant", "content": text}]}
    pair = {**pair, "golden_calls": calls2}
    name_found(pair, ep2, {("p", "by_region"): spec}, noun)
    assert pair["answer"]["text"] == text


def test_a_name_already_said_for_another_step_does_not_hide_a_new_one() -> None:
    # the playlist's own name (said by the user) must not stop 'The album is Revelations.'
    conv = {"golden_calls": [
        {"name": "playlists", "step": 1, "args": {}, "args_subset": {}},
        {"name": "playlist_tracks", "step": 2, "args": {"playlist_id": 9}, "args_subset": {"playlist_id": 9}},
        {"name": "album_tracks", "step": 3, "args": {"album_id": 271}, "args_subset": {"album_id": 271}}]}  # fmt: skip
    ep = _episode([("playlists", {}, [{"playlist_id": 9, "name": "Music Videos"}]),
                   ("playlist_tracks", {"playlist_id": 9}, [{"track_id": 1, "album_id": 271, "album_title": "Revelations"}]),
                   ("album_tracks", {"album_id": 271}, [])])  # fmt: skip
    said = "How many tracks do the albums on Music Videos have? The albums on Music Videos have 14 tracks."
    assert found_names(conv, ep, said) == (("album_tracks", "album_id"), ["Revelations"])
