"""Planted cases of the blind read of the session-12 conversations (issue 19, session 13): canned hurry openers,
stock closes, a particle guessed after a Latin name, 'the playlist I made' of a built-in playlist, a recovery slip
made after the id was known, and the found name said after the answer."""

import asyncio
import json
from collections import Counter
from typing import Any

from factory import prompts
from factory.conversations.build import _korean_named, _named_subject
from factory.conversations.episode import OracleAgent
from factory.conversations.recovery import recovery_variants
from factory.conversations.wording import styled_english
from factory.llm.schemas import SimulatorInput
from factory.llm.simulator import echo, opening, user_simulator

HURRIED = (
    ("en", {"register": "formal", "style": "hurried"}, "How many albums does Accept have?"),
    ("en", {"register": "casual", "style": "hurried"}, "How many albums does Accept have?"),
    ("ko", {"격식": "존댓말", "스타일": "급함"}, "달성군의 읍면은 몇 곳인가요?"),
    ("ko", {"격식": "반말", "스타일": "급함"}, "달성군의 읍면은 몇 곳이야?"),
)


def test_a_hurried_opening_is_mostly_the_bare_request_and_never_a_stock_apology() -> None:
    # s12: "Sorry to rush you." / "Need this fast." / "시간이 없어서요," bolted on 10 of 20 openings
    for lang, persona, request in HURRIED:
        said = [opening(lang, persona, request, variant=v) for v in range(240)]
        marks = Counter(s.replace(request, "|") for s in said if s != request)
        assert sum(marks.values()) <= len(said) / 2, (persona, marks)  # a minority say so
        assert len(marks) >= 4, marks  # in varied words
        assert max(marks.values()) <= len(said) / 8, marks  # none shared by many conversations
        assert not any("sorry" in m.lower() or "죄송" in m for m in marks), marks
        assert all(request in s for s in said)  # the request itself is kept whole
    for gone in ("Sorry to rush you. ", "Need this fast. ", "시간이 없어서요, ", "시간이 없어서 그런데, "):
        assert not any(opening(lang, p, r, variant=v).startswith(gone) for lang, p, r in HURRIED for v in range(48)), (
            gone
        )
    # a number tail only after a question that asks for a number
    tails = {opening("en", {"register": "formal", "style": "hurried"}, "Please create a playlist called X.", variant=v)
             for v in range(48)}  # fmt: skip
    assert not any("figure" in t or "number" in t for t in tails), tails


def _close(lang: str, persona: dict[str, str], said: str, values: list[Any], task: str) -> str:
    inp = SimulatorInput(language=lang, persona=persona, task=task, answer_values=values,
                         transcript=[{"role": "user", "content": "q"}, {"role": "assistant", "content": said}])  # fmt: skip
    out = user_simulator(inp)
    assert out.stop
    return out.message.replace("###STOP###", "").strip()


def test_closes_vary_by_persona_and_some_say_what_was_learned() -> None:
    # s12: "Wonderful, thank you." closed 4 of 20; "네, 알겠어요." / "아, 그렇군요. 감사해요." twice each
    for lang, persona, said, values, back in (
        ("en", {"register": "formal", "style": "relaxed"}, "All told, there are 18 playlists.", [18], "18 playlists"),
        ("en", {"register": "casual", "style": "hurried"}, "All told, there are 18 playlists.", [18], "18 playlists"),
        ("ko", {"격식": "존댓말", "스타일": "느긋함"}, "종로구의 법정 읍면동은 87곳입니다.", [87], "87곳"),
        (
            "ko",
            {"격식": "반말", "스타일": "느긋함", "연령대": "20대"},
            "종로구의 법정 읍면동은 87곳입니다.",
            [87],
            "87곳",
        ),
    ):
        closes = Counter(_close(lang, persona, said, values, f"task-{i}") for i in range(120))
        assert len(closes) >= 5, closes
        assert max(closes.values()) <= 120 / 4, closes
        echoed = sum(n for c, n in closes.items() if back in c)
        assert 0 < echoed < 120 / 2, closes  # some say the answer back, most just thank
    hurried = {_close("en", {"register": "casual", "style": "hurried"}, "There are 18 playlists.", [18], f"t{i}")
               for i in range(40)}  # fmt: skip
    relaxed = {_close("en", {"register": "formal", "style": "relaxed"}, "There are 18 playlists.", [18], f"t{i}")
               for i in range(40)}  # fmt: skip
    assert not hurried & relaxed  # a hurried casual user does not close like a relaxed formal one
    # what is said back: a number with its unit or counter, a name; nothing when it would say nothing
    assert echo("All told, there are 18 playlists.", [18], "en") == "18 playlists"
    assert echo("ISW has 1 more airport than OSN: 9 against 8.", [1], "en") == ""
    assert echo("1인치는 2.54센티미터예요.", [2.54], "ko") == "2.54센티미터"
    assert echo("The album is Revelations.", ["Revelations"], "en") == "Revelations"
    assert echo("확인해 보니 연천군(Yeoncheon-gun)입니다.", ["Yeoncheon-gun"], "ko") == ""  # no particle to guess
    assert echo("There are 3 and 4.", [3, 4], "en") == ""


def test_no_particle_is_guessed_after_a_latin_name() -> None:
    # s12 #16: "확인해 보니 Yeoncheon-gun예요."
    for v in range(4):
        said = prompts.render("conversations/reply.ko", values=["Yeoncheon-gun"], unit="", counter="", pattern="",
                              description="", variant=v).strip()  # fmt: skip
        assert said.endswith("Yeoncheon-gun입니다."), said
        kept = prompts.render("conversations/reply.ko", values=["연천군"], unit="", counter="", pattern="",
                              description="", variant=1).strip()  # fmt: skip
        assert kept == "연천군이에요."  # a Hangul name keeps its particle by its final consonant
    for i in range(20):
        inp = SimulatorInput(language="ko", persona={"격식": "존댓말"}, task=f"t{i}", hidden_info={"군": "Gapyeong-gun"},
                             transcript=[{"role": "user", "content": "q"},
                                         {"role": "assistant", "content": "어느 군인지 알려 주시겠어요?"}])  # fmt: skip
        said = user_simulator(inp).message
        assert "gun예요" not in said and "gun이에요" not in said and "gun이요" not in said, said


def test_the_found_korean_name_is_said_in_the_answer_not_after_it() -> None:
    # s12 #5: "… 87곳입니다. 해당 시군구는 종로구입니다."; #16: "Yeoncheon-gun예요. 해당 행정구역은 연천군입니다."
    said = _korean_named("궁정동이 속한 시군구의 법정 읍면동은 87곳입니다.", "시군구", "종로구", [87], {})
    assert said == "궁정동이 속한 종로구의 법정 읍면동은 87곳입니다."
    record = {"admCd": "31550", "admNm": "연천군", "admNmEn": "Yeoncheon-gun"}
    episode = {
        "calls": [{"tool": "search_census_district", "args": {"keyword": "연천군"}, "ok": True, "call_id": "c1"}],
        "messages": [{"role": "tool", "tool_call_id": "c1", "content": json.dumps({"records": [record]})}],
    }
    said = _korean_named("확인해 보니 Yeoncheon-gun입니다.", "행정구역", "연천군", ["Yeoncheon-gun"], episode)
    assert said == "확인해 보니 연천군(Yeoncheon-gun)입니다."
    # another spelling only when the record says so; a noun said twice is left alone
    assert _korean_named("확인해 보니 Seoul입니다.", "행정구역", "연천군", ["Seoul"], episode) is None
    assert _korean_named("시군구의 시군구 수는 3곳입니다.", "시군구", "종로구", [3], {}) is None


def test_no_ownership_is_claimed_of_a_record_the_conversation_did_not_create() -> None:
    # s12 #7: "the playlist I made" of the store's built-in playlist "Music Videos"
    for noun in ("playlist", "route", "artist", "album", "track", "airport"):
        for v in range(12):
            own = prompts.render("user_simulator/rules.en", kind="own", noun=noun, persona={}, facts=[], text="",
                                 variant=v, declined=False, echo="")  # fmt: skip
            assert "I made" not in own and "I created" not in own, own
            if noun in ("playlist", "route"):
                assert not own.startswith("my "), own


def test_a_recovery_slip_is_made_before_the_lookup_not_after_it() -> None:
    # s12 #10: search_artists gave artist_id 2, then list_artist_albums(artist_id='Accept')
    conv: dict[str, Any] = {
        "id": "sha256:r",
        "case_pattern": "sequential",
        "language": "en",
        "initial_message": "How many albums does Accept have?",
        "golden_calls": [
            {"name": "search_artists", "platform": "cat", "step": 1, "args_subset": {"name": "Accept"},
             "args": {"name": "Accept"}},
            {"name": "list_artist_albums", "platform": "cat", "step": 2, "args_subset": {"artist_id": 2},
             "args": {"artist_id": 2}},
        ],
    }  # fmt: skip
    found = {v["recovery"]["kind"]: v for v in recovery_variants(conv, {}, {})}
    slip = found["wrong_type"]
    assert slip["recovery"]["failed_call"]["args"] == {"artist_id": "Accept"}
    assert slip["recovery"].get("first") is True
    # the oracle makes the slip first, then the lookup, then the call with the id the lookup returned
    task = {
        **slip,
        "seed": 1,
        "persona": {"register": "formal", "style": "relaxed"},
        "hidden_info": {},
        "success_criteria": {"answer_values": [2]},
        "answer": {"text": "Accept has 2 albums.", "value": 2},
        "tools_subset": [],
    }
    agent = OracleAgent()
    messages: list[dict[str, Any]] = [{"role": "user", "content": conv["initial_message"]}]
    order = []
    for _ in range(3):
        turn = asyncio.run(agent.respond(task, messages))
        calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in turn["tool_calls"]]
        order.append(calls)
        messages.append({"role": "assistant", **turn})
    assert order == [
        [("list_artist_albums", {"artist_id": "Accept"})],
        [("search_artists", {"name": "Accept"})],
        [("list_artist_albums", {"artist_id": 2})],
    ], order


def test_own_read_s13_stilted_forms() -> None:
    # a quoted title is no answer said back: "Oh nice, Fast As a Shark. Cheers!"
    said = "The artist who recorded 'Fast As a Shark' has more albums, by 1: 2 against 1."
    assert echo(said, ["Fast As a Shark"], "en") == ""
    # nor the exact figure in brackets: "Oh nice, 343719 milliseconds. Cheers!"
    assert echo("It is 5 minutes 44 seconds (343719 milliseconds).", [343719], "en") == ""
    # "Hello there. I'd like to ask something. Please book a table …": a request is not announced as a question
    novice = {"register": "formal", "style": "relaxed", "digital_literacy": "low", "age_group": "50s"}
    for v in range(24):
        assert "ask" not in opening("en", novice, "Please book a table for two.", variant=v)
    # "… 법정동 수를 알려 주세요. 부탁드려요.": a request already asked politely is not asked for again
    hurried = {"격식": "존댓말", "스타일": "급함"}
    for v in range(24):
        assert not opening("ko", hurried, "동구의 법정동 수를 알려 주세요.", variant=v).endswith("부탁드려요.")
    assert any(
        opening("ko", hurried, "동구의 법정동은 몇 곳인가요?", variant=v).endswith("부탁드려요.") for v in range(24)
    )
    # "The album containing 'Lavadeira' has 14 tracks. The album is Axé Bahia 2001."
    assert (
        _named_subject("The album containing 'Lavadeira' has 14 tracks.", "album", "Axé Bahia 2001")
        == "Axé Bahia 2001, the album containing 'Lavadeira', has 14 tracks."
    )
    # "It is 343719 milliseconds." for the length of a track
    reply = prompts.render("conversations/reply.en", values=[343719], unit="milliseconds", counter="", pattern="",
                           description="", variant=3).strip()  # fmt: skip
    assert reply == "It is 5 minutes 44 seconds (343719 milliseconds)."


def test_korean_closes_and_reveals_fit_the_speaker() -> None:
    # own read s13: "땡큐." from a 50대 user; "중구지." as the answer to "어느 구인지 여쭤봐도 될까요?"
    for age in ("40대", "50대", "60대 이상"):
        for style in ("급함", "느긋함"):
            persona = {"격식": "반말", "스타일": style, "연령대": age}
            for i in range(30):
                said = _close("ko", persona, "동구의 법정동은 34곳입니다.", [34], f"t{i}")
                assert not any(w in said for w in ("땡큐", "ㅇㅋ", "오케이")), (age, said)
    young = {_close("ko", {"격식": "반말", "스타일": "급함", "연령대": "20대"}, "34곳입니다.", [34], f"t{i}")
             for i in range(30)}  # fmt: skip
    assert any("땡큐" in s or "ㅇㅋ" in s or "오케이" in s for s in young)
    for i in range(30):
        inp = SimulatorInput(language="ko", persona={"격식": "반말"}, task=f"t{i}", hidden_info={"구": "중구"},
                             transcript=[{"role": "user", "content": "q"},
                                         {"role": "assistant", "content": "어느 구인지 여쭤봐도 될까요?"}])  # fmt: skip
        assert user_simulator(inp).message != "중구지."


def test_a_hurried_user_asks_straight() -> None:
    # own read s13: "Please tell me how many tracks the album containing 'Lavadeira' has." from a hurried user
    hurried = {"style": "hurried", "register": "casual"}
    said = styled_english("Please tell me how many tracks the album containing 'Lavadeira' has.", hurried)
    assert said == "How many tracks does the album containing 'Lavadeira' have?"
    said = styled_english("I wonder how many albums Brazil's customers have.", hurried)
    assert said == "How many albums do Brazil's customers have?"
    relaxed = "I wonder how many albums the artist who recorded 'Right Next Door to Hell' has."
    assert styled_english(relaxed, {"style": "relaxed"}) == relaxed  # an unhurried user keeps the preamble


def test_a_dollar_amount_is_written_as_a_person_writes_it() -> None:
    # own read s13: "It is 15.84 USD."
    for v in range(4):
        reply = prompts.render("conversations/reply.en", values=[15.84], unit="USD", counter="", pattern="",
                               description="", variant=v).strip()  # fmt: skip
        assert "$15.84" in reply and "USD" not in reply, reply
