"""Planted cases of the blind read of the session-11 round-2 conversations (issue 19, session 12): templated user
wording, contrived multi_turn setups, implausible recovery slips and two-sentence answer tails, Korean no_call
oversampling and one shared decline line."""

import asyncio
import re
from collections import Counter
from types import SimpleNamespace
from typing import Any

from factory import prompts
from factory.conversations.build import _named_subject, no_call_share, offered_capabilities
from factory.conversations.episode import OracleAgent, RulesSimulator, run_conversation
from factory.conversations.persona import register_consistent
from factory.conversations.recovery import recovery_variants
from factory.conversations.tasks import (
    _qualified,
    _unit_after,
    answer_reply,
    conversation_tasks,
    no_call_task,
    said_as_own,
)
from factory.conversations.wording import chat_difference
from factory.llm.simulator import is_question, opening
from tests.conversations.helpers import FakeEnv, noun_of, source_task, trajectory


def test_a_templated_difference_question_is_asked_in_many_forms() -> None:
    # r2 #17, #19: "Iron Maiden or Aerosmith: which has more albums, and by how many?" in every parallel one
    query = "Iron Maiden or Aerosmith: which has more albums, and by how many?"
    frame = {"pattern": "DIFF", "options": ["Aerosmith", "Iron Maiden"], "description": "albums"}
    forms = {chat_difference(query, frame, v) for v in range(12)}
    assert None not in forms and query not in forms and len(forms) >= 6
    assert all("Iron Maiden" in f and "Aerosmith" in f and "albums" in f for f in forms if f)
    assert all(f.index("Iron Maiden") < f.index("Aerosmith") for f in forms if f)  # the question's order
    # a question that is no such template stays as it is
    assert chat_difference("How many albums does AC/DC have?", frame, 0) is None


def test_openers_are_varied_and_no_one_form_dominates() -> None:
    # r2 #10, #19: "I'm in a hurry, sorry." opened 2 of 20 conversations
    for lang, persona in (
        ("en", {"register": "formal", "style": "hurried"}),
        ("en", {"register": "casual", "style": "relaxed"}),
        ("ko", {"격식": "존댓말", "스타일": "급함"}),
        ("ko", {"격식": "반말", "스타일": "느긋함"}),
    ):
        said = [opening(lang, persona, "Q?", variant=v).replace("Q?", "|") for v in range(240)]
        leads = Counter(s for s in said if s != "|")  # what the opening adds, before or after the request
        assert len(leads) >= (4 if persona.get("style") == "hurried" or persona.get("스타일") == "급함" else 6), leads
        assert max(leads.values()) <= 240 / 6, (persona, leads)  # no lead in more than one in six openings
    assert "I'm in a hurry, sorry." not in {
        opening("en", {"style": "hurried"}, "Q?", variant=v) for v in range(40)
    }  # the one reused verbatim


def test_a_multi_turn_opening_is_about_the_users_own_situation() -> None:
    # r2 #6, #11: "I'll check the name in my notes" / "메모해 둔 구가 있는데 이름이 바로 생각이 안 나네요"
    for lang in ("en", "ko"):
        for k in range(6):
            task = {**source_task(lang), "id": f"sha256:own-{lang}-{k}"}
            made, _ = conversation_tasks(task, {}, trajectory=trajectory(lang), noun_of=noun_of, no_call_every=0,
                                         cfg_seed=k)  # fmt: skip
            mt = next(c for c in made if c["case_pattern"] == "multi_turn")
            first = mt["initial_message"]
            assert not re.search(r"note|written down|a friend told|메모|적어 둔|서류|찾아보고", first), first
            ep = asyncio.run(run_conversation(mt, OracleAgent(), RulesSimulator(), FakeEnv(mt["tools_subset"])))
            users = [m["content"] for m in ep["messages"] if m["role"] == "user"]
            asks = [m["content"] for m in ep["messages"] if m["role"] == "assistant" and m.get("content")]
            assert list(mt["hidden_info"].values())[0] in users[1]
            assert not re.search(r"found|notes|checked|메모|찾아보니|확인해 보니", users[1]), users[1]
            if lang == "ko":
                assert register_consistent(users, mt["persona"])
                assert not asks[0].startswith("좋아요"), asks[0]
    # the phrases themselves: '우리 구' / '제가 사는 곳'; 'the song I'm listening to'; particles refitted
    assert (
        said_as_own("그 구의 법정동은 몇 개예요?", "구", "ko", {"격식": "존댓말"}, 0) == "우리 구의 법정동은 몇 개예요?"
    )
    assert (
        said_as_own("그 읍면동은 어디에 있어요?", "읍면동", "ko", {"격식": "존댓말"}, 0) == "우리 동네는 어디에 있어요?"
    )
    assert said_as_own("How long is that track?", "track", "en", {}, 0) == "How long is the song I'm listening to?"
    assert (
        said_as_own("How many albums does that track's artist have?", "track", "en", {}, 0)
        == "How many albums does the artist of the song I'm listening to have?"
    )


def test_the_korean_assistant_asks_which_one_politely() -> None:
    # r2 #6: "좋아요. 어느 구예요?" to a 존댓말 user
    for v in range(12):
        ask = " ".join(prompts.render("conversations/oracle.ko", kind="ask", facts=["구"], variant=v).split())
        assert "구" in ask and not ask.startswith("좋아요")
        assert re.search(r"(주시겠어요|주세요|인가요|될까요)\??\.?$", ask), ask


def test_a_recovery_slip_only_puts_a_value_where_the_same_thing_goes() -> None:
    # r2 #8: the track title 'Fast As a Shark' sent as the integer artist_id
    conv: dict[str, Any] = {
        "id": "sha256:c",
        "case_pattern": "sequential",
        "initial_message": "How many albums does the artist of 'Fast As a Shark' have?",
        "golden_calls": [
            {"name": "search_tracks", "platform": "cat", "step": 1, "args_subset": {"name": "Fast As a Shark"},
             "args": {"name": "Fast As a Shark"}},
            {"name": "list_artist_albums", "platform": "cat", "step": 2, "args_subset": {"artist_id": 2},
             "args": {"artist_id": 2}},
        ],
    }  # fmt: skip
    entities = {("search_tracks", "name"): "track", ("list_artist_albums", "artist_id"): "artist",
                ("search_artists", "name"): "artist"}  # fmt: skip

    def entity_of(_platform: str, tool: str, param: str) -> str | None:
        return entities.get((tool, param))

    kinds = {v["recovery"]["kind"] for v in recovery_variants(conv, {}, {}, entity_of)}
    assert "wrong_type" not in kinds and "unconverted" not in kinds
    assert "wrong_type" in {v["recovery"]["kind"] for v in recovery_variants(conv, {}, {})}  # the planted slip
    artist = {**conv, "initial_message": "How many albums does Accept have?"}
    artist["golden_calls"] = [{**conv["golden_calls"][0], "name": "search_artists", "args_subset": {"name": "Accept"},
                               "args": {"name": "Accept"}}, conv["golden_calls"][1]]  # fmt: skip
    found = {v["recovery"]["kind"]: v for v in recovery_variants(artist, {}, {}, entity_of)}
    assert found["wrong_type"]["recovery"]["failed_call"]["args"] == {"artist_id": "Accept"}


def test_the_found_name_is_said_in_the_answer_sentence() -> None:
    # r2 #8: "… has 2 albums. The artist is Accept."
    said = _named_subject("The artist of the track 'Fast As a Shark' has 2 albums.", "artist", "Accept")
    assert said == "Accept, the artist of the track 'Fast As a Shark', has 2 albums."
    assert _named_subject("There are 2 albums.", "artist", "Accept") is None
    said = _named_subject("The albums on Music Videos have 14 tracks.", "album", "Revelations")
    assert said == "The album on Music Videos, Revelations, has 14 tracks."  # not '… 14 tracks. The album is …'
    said = _named_subject("The artist who recorded 'Right Next Door to Hell' has 3 albums.", "artist", "Guns N' Roses")
    assert said == "Guns N' Roses, the artist who recorded 'Right Next Door to Hell', has 3 albums."


def test_a_short_reply_keeps_a_currency_code() -> None:
    # own read: "It's 15.84." for "How much have tracks … earned the store, in US dollars?"
    text = "Tracks by the artist who recorded the track 'Inject The Venom' have earned the store 15.84 USD."
    assert _unit_after(text, 15.84) == "USD"
    assert _unit_after("It lasts 343719 milliseconds.", 343719) == "milliseconds"
    # blind s14: "It is 6 countries have." (the verb after the counted noun taken for a unit)
    text = "Customers from 6 countries have bought tracks by the artist who recorded 'For Those About To Rock'."
    assert _unit_after(text, 6) == "countries"


def test_a_request_that_is_no_question_is_not_announced_as_one() -> None:
    # own read: "하나 물어볼게. 거실 불 좀 꺼 줘." / "Quick question. Please create a new playlist …"
    for lang, persona, request in (
        ("ko", {"격식": "반말", "스타일": "느긋함"}, "거실 불 좀 꺼 줘."),
        ("ko", {"격식": "존댓말", "스타일": "느긋함"}, "거실 불 좀 꺼 주세요."),
        ("en", {"register": "formal", "style": "hurried"}, "Please create a new playlist called 'Road trip'."),
    ):
        said = {opening(lang, persona, request, variant=v) for v in range(40)}
        assert not any(re.search(r"물어|여쭤|궁금|질문|question|q\.", s) for s in said), said
        assert len(said) >= 3


def test_a_count_over_a_chain_says_what_it_counts() -> None:
    # own read: 'There are 4 tracks for the track 'Balls to the Wall'.' counted the albums' tracks of its artist
    task = {**source_task("en"), "query": "How many tracks do the albums of the artist who recorded 'Balls to the "
            "Wall' have in total?", "pattern": "SEQ"}  # fmt: skip
    task["answer"] = {"type": "number", "value": 4, "text": "There are 4 tracks.",
                      "frame": {"pattern": "PATH", "description": "the total number of tracks of the albums of the "
                                "artist who recorded 'Balls to the Wall'", "short": {"owner_one": False}}}  # fmt: skip
    reply = answer_reply(task, 0, "the track 'Balls to the Wall'")
    assert reply == "The albums of the artist who recorded 'Balls to the Wall' have 4 tracks in total."


def test_a_korean_counting_basis_is_said_by_the_assistant_not_the_user() -> None:
    # r2 #7: "… 몇 곳 차이 나나요? 일반구 단위로 봐 주세요." tacked on
    q = "경기도와 인천광역시의 시·군·구 수는 몇 곳 차이 나나요? 일반구 단위로 봐 주세요."
    assert _qualified(q, "ko") == "경기도와 인천광역시의 시·군·구 수는 몇 곳 차이 나나요?"
    task = {**source_task("ko"), "query": "철마면의 시군구의 읍면동 수를 알려 주세요. 일반구 단위로 봐 주세요."}
    made, _ = conversation_tasks(task, {}, trajectory=trajectory("ko"), noun_of=noun_of, no_call_every=0)
    base = next(c for c in made if c["case_pattern"] == "sequential")
    assert "단위로 봐" not in base["initial_message"] and base["answer"]["text"].endswith(
        "구가 있는 시는 구별로 셌어요."
    )


def _nc(i: int, lang: str, case: str = "no_call", task: str = "") -> dict[str, Any]:
    return {"id": f"{lang}-{case}-{i}", "source_task_id": f"s{i}", "domain": "d", "language": lang,
            "case_pattern": case, "task": task or f"request {i % 3}"}  # fmt: skip


def test_no_call_keeps_its_configured_share_in_each_language() -> None:
    # r2: 5 of 10 Korean conversations were no_call
    convs = [*(_nc(i, "ko") for i in range(10)), *(_nc(i, "ko", "single") for i in range(6)),
             *(_nc(i, "en") for i in range(3)), *(_nc(i, "en", "parallel") for i in range(12))]  # fmt: skip
    kept, dropped = no_call_share(convs, 3, 0)
    n = Counter((c["language"], c["case_pattern"]) for c in kept)
    assert n[("ko", "no_call")] == 2 and n[("ko", "single")] == 6
    assert n[("en", "no_call")] == 3 and n[("en", "parallel")] == 12
    assert len(dropped) == 8 and all("no_call share" in d["reason"] for d in dropped)
    assert len({c["task"] for c in kept if c["language"] == "ko" and c["case_pattern"] == "no_call"}) == 2
    assert no_call_share(convs, 0, 0) == (convs, [])


def test_declines_apologise_vary_and_name_every_offered_tool() -> None:
    # r2 #13, #15, #16: one decline line thrice, no apology in one, the bulletin search left out
    spec = {
        "list_admin_sido": SimpleNamespace(tool_id="k/a/list_admin_sido", state_changing=False, key_acquisition=None,
                                           source=SimpleNamespace(kind="openapi"), platform="krgc-admin"),
        "search_census_bulletins": SimpleNamespace(tool_id="k/b/search", state_changing=False, key_acquisition=None,
                                                   source=SimpleNamespace(kind="retrieval"),
                                                   platform="korea-census-bulletins"),
    }  # fmt: skip
    registry = SimpleNamespace(resolve=lambda name, **_: spec[name])
    row = {"domain": "korea", "language": "ko", "available_tools": list(spec), "platforms": []}
    can = offered_capabilities(row, registry, lambda tid, _l: {"noun": "시도"} if "sido" in tid else None, {})
    en_can = offered_capabilities({**row, "language": "en"}, registry,
                                  lambda tid, _l: {"plural": "provinces"} if "sido" in tid else None, {})  # fmt: skip
    catalogue = offered_capabilities(row, registry, lambda tid, _l: {"noun": "시도"} if "sido" in tid else None, {},
                                     frozenset({"k/a/list_admin_sido"}))  # fmt: skip
    assert "시도" not in catalogue  # the service's own catalogue ('통계 항목') is no capability
    lines = []
    for k in range(120):
        task = {**source_task("ko"), "id": f"sha256:nc-{k}"}
        t = no_call_task(task, "", __import__("random").Random(k), 0, can=can)
        if t["no_call_kind"] != "out_of_scope":
            continue
        reply = t["answer"]["text"]
        lines.append(reply)
        assert re.match(r"(죄송|아쉽지만|정말 죄송)", reply), reply
        assert "시도" in reply and "자료" in reply, reply
        assert not is_question(reply, "ko"), reply  # a decline read as a question left the user asking (turn cap)
        en = no_call_task({**task, "language": "en"}, "", __import__("random").Random(k), 0, can=en_can)
        if en["no_call_kind"] == "out_of_scope":
            assert re.match(r"(Sorry|I'm afraid|Unfortunately)", en["answer"]["text"])
            assert "provinces" in en["answer"]["text"] and "census bulletins" in en["answer"]["text"]
    tails = Counter(re.sub(r"^[^.]*\. ", "", line) for line in lines)  # the capability line after the apology
    assert len(lines) >= 30 and len(tails) == 6 and max(tails.values()) <= len(lines) / 4, tails
