"""Planted cases of the blind read of the session-11 conversations (failure kinds 2-5; kind 1, the recovery
typos, is in test_blind_s10 and test_naturalness)."""

from types import SimpleNamespace

from factory.conversations.persona import fit_to_request
from factory.conversations.tasks import about_catalogue, capabilities, lexicon_catalogue_tools, mask_english
from factory.frames import _apply, load_lexicon_overrides
from factory.llm.simulator import opening
from factory.synthesis.answers import answer_text


def test_a_counted_noun_is_not_the_withheld_values_noun() -> None:
    # s11 #10: "I have a routes noted down … how many that routes has" / "Which routes is it?"
    assert mask_english("I wonder how many routes JetBlue Airways has.", "JetBlue Airways", first="that") is None
    assert mask_english("How many albums does the artists AC/DC have?", "AC/DC", first="that") is None  # plural
    masked = mask_english("How many tracks are on the playlist Music Videos?", "Music Videos", first="that")
    assert masked == ("How many tracks are on that playlist?", "playlist")


def test_openings_fit_the_persona() -> None:
    # s11 #1, #7: "my grandson set this up for me" from a 20s/30s user; #14, #20: urgency not shown
    for age in ("20s", "30s", "40s", "50s"):
        persona = {"register": "formal", "style": "relaxed", "digital_literacy": "low", "age_group": age}
        for v in range(8):
            assert "grandson" not in opening("en", persona, "How many tracks are there?", variant=v)
    old = {"register": "formal", "style": "relaxed", "digital_literacy": "low", "age_group": "60s+"}
    assert any("grandson" in opening("en", old, "How many?", variant=v) for v in range(8))
    for persona, lang in (
        ({"register": "formal", "style": "hurried"}, "en"),
        ({"register": "casual", "style": "hurried"}, "en"),
        ({"격식": "존댓말", "스타일": "급함"}, "ko"),
        ({"격식": "반말", "스타일": "급함"}, "ko"),
    ):
        said = [opening(lang, persona, "Q?", variant=v) for v in range(24)]
        # s12: the hurry is no stock prefix on every opening; a minority say so (test_blind_s13)
        assert 0 < sum(s != "Q?" for s in said) <= len(said) / 2, (persona, said)


def test_one_quoted_code_is_a_high_literacy_user() -> None:
    # s11 #19: a low-literacy user quoting the ICAO code 'KLGA'
    assert (
        fit_to_request({"digital_literacy": "low"}, "What was the peak gust at KLGA?", "en")["digital_literacy"]
        == "high"
    )
    assert fit_to_request({"digital_literacy": "low"}, "How many tracks has Accept?", "en")["digital_literacy"] == "low"


def test_a_decline_offers_no_passages() -> None:
    # s11 #5: "I can help you look up albums, tracks and passages, though."
    nouns = {"a": {"plural": "albums"}, "b": {"plural": "tracks"}, "c": {"plural": "passages"}}
    assert capabilities(["a", "b", "c"], lambda t, lang: nouns[t], "en") == "albums and tracks"


def test_a_korean_which_answer_names_the_other_side() -> None:
    # s11 #3, #16: "… 더 많습니다(다른 쪽은 17개)."
    frame = {"pattern": "WHICH", "description": "시군구", "options": ["세종특별자치시", "울산광역시"],
             "qualifier": "적은", "counter": "곳"}  # fmt: skip
    text = answer_text({"type": "string", "value": "세종특별자치시", "counts": [1, 5]}, "ko", frame)
    assert text.endswith("(울산광역시는 5곳).") and "다른 쪽" not in text, text


def test_a_question_about_the_tools_catalogue_makes_no_conversation() -> None:
    # s11 #15, #16: '통계 항목 수로 보면 경제 분야와 인구 분야는 몇 개 차이 나니?'
    lex = {"korea": {"nouns": {"tools": {"k/c/list_types": {"chat": False}, "k/c/list_sido": {}}}}}
    catalogue = lexicon_catalogue_tools(lex)
    assert catalogue == {"k/c/list_types"}
    specs = {
        ("c", "list_types"): SimpleNamespace(tool_id="k/c/list_types", key_acquisition=None),
        ("c", "list_sido"): SimpleNamespace(tool_id="k/c/list_sido", key_acquisition=None),
    }
    about = {"golden_actions": [{"tool": "list_types", "platform": "c", "args": {}, "step": 1}] * 2}
    mixed = {"golden_actions": [*about["golden_actions"], {"tool": "list_sido", "platform": "c", "args": {}}]}
    assert about_catalogue(about, specs, catalogue)  # type: ignore[arg-type]
    assert not about_catalogue(mixed, specs, catalogue)  # type: ignore[arg-type]
    assert not about_catalogue(about, specs, frozenset())  # type: ignore[arg-type]
    # the reviewed lexicon says so and the frames carry it into the tool lexicon
    ov = load_lexicon_overrides("lexicon/korea.yaml")
    assert ov["tools"]["list_census_stat_types"]["chat"] is False
    frame = {"tool": "list_census_stat_types", "entity": "statistic", "params": {}, "fields": {},
             "noun": {"en": {"sing": "statistic", "plural": "statistics"}, "ko": {"noun": "통계", "counter": "건"}}}  # fmt: skip
    assert _apply(frame, ov)["chat"] is False
