"""Conversation wordings fixed after the blind read of session 15
(`benchmarks/results/blind_audit_s15_conversations_2026-12-03.md`)."""

from collections import Counter
from typing import Any

from factory.conversations.build import no_call_share
from factory.conversations.tasks import _briefly
from factory.llm.simulator import opening

_HURRIED_BANMAL = {"격식": "반말", "스타일": "급함", "디지털 활용": "높음"}
_HURRIED_EN = {"register": "casual", "style": "hurried", "digital_literacy": "high"}


def test_an_idle_question_is_not_rushed():
    # s15 #6: "급한데, 인천광역시 동구의 법정동이 몇 곳인지 궁금해." (urgency pasted onto a calm '궁금해')
    curious = "인천광역시 동구의 법정동이 몇 곳인지 궁금해."
    said = {opening("ko", _HURRIED_BANMAL, curious, variant=v) for v in range(24)}
    assert all(x.endswith("궁금해.") for x in said)
    assert not any(w in x for x in said for w in ("급", "바빠", "빨리", "나가야")), said
    asked = {opening("ko", _HURRIED_BANMAL, "인천광역시 동구의 법정동은 몇 곳이야?", variant=v) for v in range(24)}
    assert any("급" in x or "바빠" in x for x in asked)  # a plain question may still be rushed
    en = {opening("en", _HURRIED_EN, "I'm curious how many albums Accept has.", variant=v) for v in range(24)}
    assert not any("rush" in x.lower() or "gotta run" in x.lower() for x in en), en


def test_a_user_who_asks_for_the_figure_alone_gets_it_alone():
    # s15 #9: "… 숫자만 알려 주시면 돼요." answered "5곳 차이입니다(광주광역시 5곳, 인천광역시 10곳)."
    solved = {"answer": {"text": "5곳 차이입니다(광주광역시 5곳, 인천광역시 10곳).", "values": [5]}}
    brief = _briefly(solved, "광주광역시와 인천광역시는 구·군이 몇 곳 차이 나나요? 숫자만 알려 주시면 돼요.")
    assert brief["answer"]["text"] == "5곳 차이입니다." and brief["answer"]["values"] == [5]
    assert _briefly(solved, "광주광역시와 인천광역시는 구·군이 몇 곳 차이 나나요?") is solved
    en = {"answer": {"text": "It's about 6.3 MB (6290521 bytes).", "values": [6290521]}}
    assert _briefly(en, "How big is the file? Just the number pls.")["answer"]["text"] == "It's about 6.3 MB."
    named = {"answer": {"text": "Battlestar Galactica (Classic) has 1 album (AC/DC 2).", "values": [1]}}
    said = _briefly(named, "Which has fewer albums? Just the number pls.")["answer"]["text"]
    assert said == "Battlestar Galactica (Classic) has 1 album.", said


def _nc(i: int, domain: str, task: str, case: str = "no_call") -> dict[str, Any]:
    return {"id": f"{domain}-{case}-{i}", "source_task_id": f"{domain}{i}", "domain": domain, "language": "en",
            "case_pattern": case, "task": task}  # fmt: skip


def test_no_call_requests_differ_across_the_domains_of_a_language():
    # s15 #3, #19: "Please turn the heating up a couple of degrees." in music and in aviation
    heat, alarm, song = "Please turn the heating up.", "Set an alarm for 7.", "Sing me a song."
    convs = [
        *(_nc(i, "aviation", t) for i, t in enumerate([heat, heat])),
        *(_nc(i, "music", t) for i, t in enumerate([heat, alarm, heat])),
        *(_nc(i, "korea", t) for i, t in enumerate([heat, song])),
        *(_nc(i, d, "", "single") for d in ("aviation", "music", "korea") for i in range(3)),
    ]
    kept, _ = no_call_share(convs, 3, 0)
    said = Counter(c["task"] for c in kept if c["case_pattern"] == "no_call")
    assert sorted(said) == sorted([heat, alarm, song]) and set(said.values()) == {1}


def test_a_reply_never_says_the_answer_is():
    # s15 #16: "The answer is 5 copies." read robotic
    from factory.conversations.tasks import answer_reply

    words = " ".join(f"word{i}" for i in range(40))
    task = {"language": "en", "answer": {"text": f"There are 5 copies of {words}.", "value": 5}}
    said = {answer_reply(task, variant) for variant in range(8)}
    assert all("5" in x and "answer is" not in x.lower() for x in said), said


def test_the_users_own_thing_does_not_repeat_what_the_request_says():
    # s16 scaled run: "I'm flying into my home airport soon" is fine; "flying into the airport I'm flying out of" is not
    from factory.conversations.tasks import said_as_own

    persona = {"register": "formal", "style": "relaxed", "digital_literacy": "high"}
    req = "I'm flying into that airport soon. What is its latitude?"
    said = {said_as_own(req, "airport", "en", persona, v) for v in range(8)}
    assert all(x and x.startswith("I'm flying into ") and x.count("flying") == 1 for x in said), said


def test_the_reply_says_days_as_the_request_does():
    # s16 scaled run: asked 'on or after April 7, 2007', answered '… dated on or after 2007-04-07.'
    from factory.conversations.tasks import conversation_tasks
    from tests.conversations.helpers import noun_of, source_task, trajectory

    task = source_task("en")
    task = {**task, "query": "How many invoices are there dated on or after 2007-04-07?",
            "answer": {**task["answer"], "text": "There are 28 invoices dated on or after 2007-04-07."}}  # fmt: skip
    made, _ = conversation_tasks(task, {}, trajectory=trajectory("en"), noun_of=noun_of, no_call_every=0)
    assert made and all("April 7, 2007" in c["answer"]["text"] for c in made), [c["answer"]["text"] for c in made]
    assert all("2007-04-07" not in c["initial_message"] + c["answer"]["text"] for c in made)


def test_a_person_found_along_the_way_is_named_in_full():
    # s16 scaled run: '… dated on or after April 7, 2007. The customer is Bjørn.'
    from factory.conversations.found import _name_for

    rec = {"customer_id": 4, "first_name": "Bjørn", "last_name": "Hansen", "country": "Norway"}
    assert _name_for(rec, "customer_id") == "Bjørn Hansen"
    assert _name_for({"sigunguCd": "11110", "sigunguNm": "종로구"}, "sigunguCd") == "종로구"


def test_a_counting_rule_the_question_opens_with_is_left_to_the_reply():
    # s16 conversations #11: "안녕! 구가 있는 시는 구별로 세면, 시군구 수로 보면 경기도와 인천광역시는 몇 곳 차이 나?"
    from factory.conversations.tasks import conversation_tasks
    from tests.conversations.helpers import noun_of, source_task, trajectory

    q = "시에 속한 구를 하나씩 따로 세면, 경기도와 인천광역시의 시·군·구 수는 몇 곳 차이 나나요?"
    task = {**source_task("ko"), "query": q}
    made, skipped = conversation_tasks(task, {}, trajectory=trajectory("ko"), noun_of=noun_of, no_call_every=0)
    # s19: left to the reply, the rule was still read as a wrong count ('경기도의 시군구 수' is 31 시·군 to a person:
    # blind reads s18 r3 #9, s19 r1 #9, s19 r2 #14), so no conversation asks it
    assert not made
    assert skipped and all("일반구" in s["reason"] for s in skipped), skipped
    other = {**source_task("ko"), "query": "법정동 기준으로 보면, 종로구의 읍면동은 몇 곳인가요?"}
    made, _ = conversation_tasks(other, {}, trajectory=trajectory("ko"), noun_of=noun_of, no_call_every=0)
    assert made  # another counting basis is still asked (and said in the reply)


def test_a_korean_difference_says_which_has_more():
    # s16 conversations #15: asked '…보다 구가 몇 곳 더 많아?', answered '20곳 차이입니다(…)'
    from factory.synthesis.answers import answer_text

    frame = {"pattern": "DIFF", "options": ["광주광역시", "서울특별시"], "counter": "곳", "description": "구 수"}
    said = answer_text({"type": "number", "value": 20, "counts": [5, 25]}, "ko", frame)
    assert said == "서울특별시가 광주광역시보다 20곳 더 많습니다(광주광역시 5곳, 서울특별시 25곳).", said


def test_a_trip_the_request_states_takes_no_second_clause_of_the_user():
    # s16 conversations #3: "I'm planning a trip through the airport I'm flying out of."
    from factory.conversations.tasks import said_as_own

    persona = {"register": "formal", "style": "relaxed", "digital_literacy": "high"}
    req = "I'm planning a trip through that airport. What is its time zone?"
    said = {said_as_own(req, "airport", "en", persona, v) for v in range(8)}
    assert all(x and x.count("I'm") == 1 for x in said), said


def test_compared_counts_are_said_in_several_ways():
    from factory.conversations.tasks import _versus

    said = {_versus("AC/DC has 6 more tracks: 18 against 12.", v) for v in range(6)}
    assert said == {f"AC/DC has 6 more tracks: 18 {w} 12." for w in ("against", "to", "versus")}


def test_a_count_reply_says_what_there_are():
    # s16 r2 #20: "It is 6 countries." / #18: "I looked it up: 5 copies."
    from factory.conversations.tasks import answer_reply

    words = " ".join(f"word{i}" for i in range(30))
    task = {"language": "en", "answer": {"text": f"Customers from 6 countries have bought {words}.", "value": 6}}
    said = {answer_reply(task, variant) for variant in range(8)}
    assert all("6 countries" in x and not x.startswith(("It is", "It's")) for x in said), said
    short = {
        "language": "en",
        "answer": {
            "text": "Customers from 6 countries have bought tracks by the artist who "
            "recorded 'For Those About To Rock (We Salute You)'.",
            "value": 6,
        },
    }
    assert answer_reply(short, 0) == short["answer"]["text"]  # 17 words: said as it is
