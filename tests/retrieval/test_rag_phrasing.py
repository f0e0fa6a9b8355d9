"""Multi-source questions asked the way a person asks (issue 17, ragphrase): the reviewed passage lexicons of the
demo corpora name documents and ask for the facts their passages state, in English and Korean; what they cannot say
is refused with a reason code."""

import re
from pathlib import Path

import pytest

from factory.retrieval.decontam import sentences
from factory.synthesis import phrasing
from factory.synthesis import rag_phrasing as rp

ROOT = Path(__file__).resolve().parents[2]
ALBUM = (
    "Album note: Restless and Wild by Accept.\n\nThe album has 3 tracks with a total running time of 14 min 18 s; the "
    "longest track is Princess of the Dawn (6 min 15 s). Its files take 14.6 MB (Protected AAC audio file).\n\n"
    "The store sold 5 track copies for 4.95 USD in 4 invoices, first on 2007-01-01 and last on 2010-11-01; buyers "
    "came from 4 countries (most units: Germany, 2)."
)
BULLETIN = (
    "Daily weather bulletin for JFK (John F Kennedy Intl), January 3, 2013 (2013-01-03).\n\nTemperatures ranged from "
    "24.1 °F at 05:00 to 33.1 °F at 14:00, a daily mean of 28.4 °F over 24 hourly observations.\n\nThe strongest "
    "sustained wind was 16.1 mph from 250° at 13:00, with a peak gust of 23.0 mph."
)
SIDO = (
    "[보도자료] 2015년 인구주택총조사 부산광역시 결과\n\n2015년 부산광역시의 총인구는 344만 8,737명으로 집계되었다. 남자는 "
    "170만 1,324명, 여자는 174만 7,413명이며 성비(여자 100명당 남자)는 97.4이다.\n\n시군구별로는 해운대구의 인구가 "
    "41만 7,174명으로 가장 많았고, 중구가 4만 5,821명으로 가장 적었다. 관할 시군구는 16곳이다.\n\n주택은 모두 "
    "1,161,018호로, 아파트가 728,040호(62.7%), 단독주택이 250,117호(21.5%)를 차지했다."
)
_TOOL_WORDS = re.compile(r"\b(using|search|tool|field|document|passage|fills the gap)\b|___|[_{}]", re.IGNORECASE)


def _lex(domain):
    return rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / f"{domain}.yaml")


def test_demo_lexicons_ask_passage_numbers_as_questions_about_the_entity_with_sentence_answers():
    music, aviation, korea = _lex("music"), _lex("aviation"), _lex("korea")
    album = rp.named_document(music, "Restless and Wild (Accept)", "en")
    assert album.text == "the album 'Restless and Wild' by Accept"
    facts = {f.value: f for f in rp.number_facts(music, album, sentences(ALBUM), "en")}
    # the track count is no fact of the lexicon: the catalogue API serves it (get_album.track_count)
    assert set(facts) == {14.6, 5, 4.95, 4} and 3 not in facts
    sold = facts[5]
    assert sold.question == "How many copies of tracks from the album 'Restless and Wild' by Accept has the store sold?"
    assert sold.answer_text.endswith("sold 5 copies of tracks from the album 'Restless and Wild' by Accept.")
    for f in facts.values():
        assert f.question.endswith("?") and not _TOOL_WORDS.search(f.question), f.question
        assert f.shown not in f.question and f.shown in f.answer_text
    [longest] = rp.name_facts(music, album, sentences(ALBUM), "en")
    assert (longest.value, longest.type) == ("Princess of the Dawn", "track.title")
    assert longest.phrase == "the longest track on the album 'Restless and Wild' by Accept"
    # a bulletin is about an airport on one day: the day is stated the way people write it
    day = rp.named_document(aviation, "JFK weather 2013-01-03", "en")
    wind = {f.value: f for f in rp.number_facts(aviation, day, sentences(BULLETIN), "en")}
    assert wind[16.1].question == "What was the strongest sustained wind at JFK on 3 January 2013, in mph?"
    assert wind[33.1].answer_text == "The highest temperature at JFK on 3 January 2013 was 33.1 °F."
    assert {24.1, 28.4, 23.0} <= set(wind)
    # Korean: the census year stated, the number asked with its counter, answers as sentences
    sido = rp.named_document(korea, "2015년 부산광역시 인구주택총조사 결과", "ko")
    ko = {f.value: f for f in rp.number_facts(korea, sido, sentences(SIDO), "ko")}
    assert ko[1161018].question == "부산광역시의 주택은 2015년 인구주택총조사 기준으로 모두 몇 호인가요?"
    assert ko[1161018].answer_text == "부산광역시의 주택은 2015년 인구주택총조사 기준으로 모두 1,161,018호입니다."
    assert ko[97.4].question.endswith("성비(여자 100명당 남자 수)는 얼마인가요?")
    assert all(not re.search(r"[A-Za-z]", f.question) for f in ko.values())
    names = {n.value: n.phrase for n in rp.name_facts(korea, sido, sentences(SIDO), "ko")}
    # the districts of a 시도 as a person names them (lexicon/korea.yaml `tables.districts`, blind read s10: '시군구'
    # reads like a spec): 부산광역시's 구·군; '(일반구 단위)' only where 일반구 are counted (경기도: 수원시 장안구), never
    # for 서울특별시, whose 구 are all there is
    assert names == {
        "해운대구": "부산광역시에서 2015년 인구주택총조사 기준 인구가 가장 많았던 구·군",
        "중구": "부산광역시에서 2015년 인구주택총조사 기준 인구가 가장 적었던 구·군",
    }

    def district_phrases(sido_name):
        doc = rp.named_document(korea, f"2015년 {sido_name} 인구주택총조사 결과", "ko")
        return {n.phrase for n in rp.name_facts(korea, doc, sentences(SIDO.replace("부산광역시", sido_name)), "ko")}

    # ... and said only where the two readings name different districts (blind read s11 r2ko #2/#4): the least
    # populous is 중구 here (not an 일반구), the same whether or not a city's 구 are counted one by one
    assert district_phrases("경기도") == {
        "경기도에서 2015년 인구주택총조사 기준 인구가 가장 많았던 시·군·구(일반구 단위)",
        "경기도에서 2015년 인구주택총조사 기준 인구가 가장 적었던 시·군·구",
    }
    assert district_phrases("서울특별시") == {
        "서울특별시에서 2015년 인구주택총조사 기준 인구가 가장 많았던 구",
        "서울특별시에서 2015년 인구주택총조사 기준 인구가 가장 적었던 구",
    }
    assert all(p.endswith(" 시·군") for p in district_phrases("전라남도"))
    # a 시도 the table has no word for (세종특별자치시 has no 시군구 to name) is not asked about its districts
    assert district_phrases("세종특별자치시") == set()
    for phrases in map(district_phrases, ["서울특별시", "부산광역시", "경기도", "전라남도", "제주특별자치도"]):
        assert not any("시군구" in p for p in phrases), phrases
    # these demo facts are computed from data the APIs serve (the store's invoice lines, the hourly temperature and
    # wind, the census series): marked derivable, so no policy forbidding the documents claims the question
    # unanswerable; the peak gust is a column flight-ops does not serve (issue 17 gap 4): only the bulletin gives it
    gust = wind.pop(23.0)
    assert gust.question == "What was the peak wind gust at JFK on 3 January 2013?"
    assert not gust.fact.derivable and not gust.fact.derived_by
    assert all(f.fact.derivable for f in [*facts.values(), *wind.values(), *ko.values(), longest])


def test_document_reached_from_an_api_record_is_named_through_the_api_reference():
    music, korea = _lex("music"), _lex("korea")
    track = phrasing.Ref("the track 'Fast As a Shark'", True, "track", "tracks")
    doc = rp.document_via(music, "Restless and Wild (Accept)", "en", "album.title", track, "album",
                          ["Fast As a Shark", "Restless and Wild", "Accept"], same_record=False)  # fmt: skip
    # one clause per hop: no chained genitives ('the album of the track …', blind read s9: Nat 3)
    assert doc.text == "the album containing 'Fast As a Shark'"
    assert rp.number_facts(music, doc, sentences(ALBUM), "en")[0].question == (
        "How many megabytes do the audio files of the album containing 'Fast As a Shark' take up?"
    )
    artist = rp.document_via(music, "Accept (artist)", "en", "artist.name", track, "artist",
                             ["Fast As a Shark", "Accept"], same_record=False)  # fmt: skip
    asked = {f.question for f in rp.number_facts(music, artist, sentences(ALBUM), "en")}
    assert "How many invoices include tracks by the artist who recorded 'Fast As a Shark'?" in asked
    # a record whose name says what it is is named by the name alone ('the airport Laguardia Airport' would repeat it)
    aviation = _lex("aviation")
    lga = phrasing.Ref("the airport Laguardia Airport", True, "airport", "airports")
    day = rp.document_via(aviation, "LGA weather 2013-05-08", "en", "airport.iata", lga, None, ["LGA"], True)
    assert day.text == "Laguardia Airport"
    kjfk = phrasing.Ref("the airport KJFK", True, "airport", "airports")
    assert rp.document_via(aviation, "JFK weather 2013-05-08", "en", "airport.iata", kjfk, None, [], True).text == (
        "the airport KJFK"
    )
    town = phrasing.Ref("기장읍", True, "읍면동", "읍면동")
    doc = rp.document_via(korea, "부산광역시 기장군 인구 동향", "ko", "sigungu.name", town, "시군구",
                          ["기장읍", "기장군", "부산광역시"], same_record=False)  # fmt: skip
    # the district named by its kind ('군', '구', '시': the name's last syllable), not the spec word '시군구'
    assert doc.text == "기장읍이 있는 군"
    gu = rp.document_via(korea, "서울특별시 종로구 인구 동향", "ko", "sigungu.name", phrasing.Ref("청운동", True, "법정동", "법정동"),
                         "시군구", ["청운동", "종로구", "서울특별시"], same_record=False, up_entity="emd")  # fmt: skip
    trend = (
        "[보도자료] 서울특별시 종로구 인구 동향 (2010~2020년)\n\n"
        "2020년 종로구의 인구는 13만 9,858명으로 서울특별시 인구의 1.5%를 차지하며, 도내 25개 시군구 가운데 25위이다.\n\n"
        "2010년(14만 7,917명)과 비교하면 5.4% 감소하였다."
    )
    asked = {f.value: (f.question, f.answer_text) for f in rp.number_facts(korea, gu, sentences(trend), "ko")}
    # the 시도 is a value of the 동's record: said by name, and its districts by the table's word ('서울특별시의 구')
    assert asked[1.5] == ("청운동이 있는 구의 2020년 인구는 서울특별시 전체 인구의 몇 퍼센트인가요?",
                          "청운동이 있는 종로구의 2020년 인구는 서울특별시 전체 인구의 1.5%입니다.")  # fmt: skip
    assert asked[25][0] == "청운동이 있는 구의 2020년 인구는 서울특별시의 구 가운데 몇 번째로 많은가요?"
    # a change between the two census years the bulletin compares (its `context`), not 'since 2010' to no end; asked
    # with its direction, as the number has no sign (blind read s11 rag #14: '몇 퍼센트 변했나요?' → unsigned 0.6)
    # the typed value is signed (blind read s11 r2ko #6: a gold 0.6 for a fall left the direction ungraded)
    assert asked[-5.4] == ("청운동이 있는 구의 인구는 2010년부터 2020년까지 늘었는지 줄었는지, 몇 퍼센트인지 알려 주세요.",
                           "청운동이 있는 종로구의 인구는 2010년부터 2020년까지 5.4% 감소했습니다.")  # fmt: skip
    # a 동 no longer leads to its 시도's bulletin (blind read s11 r2ko #2/#5/#6/#7: '청운동이 있는 시·도' is 서울, a riddle;
    # `known_from: [..., emd, ri]`): the 시도 bulletin is asked by its name
    with pytest.raises(rp.RagUnphraseable) as e:
        rp.document_via(korea, "2015년 부산광역시 인구주택총조사 결과", "ko", "sido.name", town, "시도",
                        ["기장읍", "기장군", "부산광역시"], same_record=False, up_entity="emd")  # fmt: skip
    assert e.value.code == "known_hop"
    sido = rp.named_document(korea, "2015년 부산광역시 인구주택총조사 결과", "ko")
    ko = {f.value: f.question for f in rp.number_facts(korea, sido, sentences(SIDO), "ko")}
    assert ko[97.4] == "부산광역시의 2015년 인구주택총조사 기준 성비(여자 100명당 남자 수)는 얼마인가요?"
    # a hop every reader makes without a tool is no question (blind read s10: '종로구가 있는 시도의 …' is 서울특별시):
    # the 시도 bulletin is not reached from a 시군구's record (passage lexicon `known_from: [sigungu]`) ...
    jongno = phrasing.Ref("종로구", True, "시군구", "시군구")
    with pytest.raises(rp.RagUnphraseable) as e:
        rp.document_via(korea, "2010년 서울특별시 인구주택총조사 결과", "ko", "sido.name", jongno, "시도",
                        ["종로구", "서울특별시", "11110"], same_record=False, up_entity="sigungu")  # fmt: skip
    assert e.value.code == "known_hop"
    # the bulletin names the most populous 구·군
    [top, _] = rp.name_facts(korea, sido, sentences(SIDO), "ko")
    assert top.phrase == "부산광역시에서 2015년 인구주택총조사 기준 인구가 가장 많았던 구·군"
    with pytest.raises(rp.RagUnphraseable) as e:  # the census's 행정구역 record of 광진구 likewise
        rp.document_via(korea, "2020년 서울특별시 인구주택총조사 결과", "ko", "sido.name", phrasing.Ref("광진구", True, "행정구역", "행정구역"),
                        "시도", ["광진구", "서울특별시"], same_record=False, up_entity="region")  # fmt: skip
    assert e.value.code == "known_hop"
    # ... while a 동's 시군구 bulletin (the district it lies in, which a person looks up) and the 시군구's own still are
    assert rp.document_via(korea, "서울특별시 종로구 인구 동향", "ko", "sigungu.name", jongno, None, ["종로구", "서울특별시"], True,
                           up_entity="sigungu").text == "종로구"  # fmt: skip
    # refused, with the code: a title part neither stated nor in the API record (which artist's album?), a bridge
    # of another value type than the document's subject, a title of no reviewed form
    with pytest.raises(rp.RagUnphraseable) as e:
        rp.document_via(music, "Restless and Wild (Accept)", "en", "album.title", track, "album", ["Restless and Wild"],
                        same_record=False)  # fmt: skip
    assert e.value.code == "document" and "artist='Accept'" in str(e.value)
    with pytest.raises(rp.RagUnphraseable) as e:
        rp.document_via(music, "Accept (artist)", "en", "composer.name", track, "composer", [], same_record=False)
    assert e.value.code == "document"
    with pytest.raises(rp.RagUnphraseable) as e:
        rp.named_document(music, "Jazz in the catalogue", "en")
    assert e.value.code == "document"


def test_api_answer_is_asked_by_its_field_label_and_answered_in_a_sentence():
    frame = {"tool": "search_tracks", "noun": {"en": {"sing": "track", "plural": "tracks"}},
             "fields": {"composer": {"kind": "reference", "entity": "composer", "label": {"en": "composer"}},
                        "bytes": {"kind": "measure", "label": {"en": "file size in bytes"}, "unit": "bytes"}}}  # fmt: skip
    subject = "the longest track on the album 'Restless and Wild' by Accept"
    q, short = rp.value_question(subject, frame, "composer", "en")
    assert q in (f"Who is the composer of {subject}?", f"Can you tell me the composer of {subject}?",
                 f"I'd like to know the composer of {subject}."), q  # fmt: skip
    assert rp.value_answer("Deaffy & R.A. Smith-Diesel", short, "en") == (
        f"The composer of {subject} is Deaffy & R.A. Smith-Diesel."
    )
    q, short = rp.value_question(subject, frame, "bytes", "en")
    assert q.endswith(f"the file size of {subject}?") or q.endswith(f"the file size of {subject}."), q
    assert rp.value_answer(6290521, short, "en").endswith("is 6290521 bytes (6.3 MB).")
    # one of several forms per question (s13: 'What is the file size of …' opened 11% of English questions)
    subjects = [f"the longest track on the album '{a}'" for a in ("Restless and Wild", "Let There Be Rock", "Big Ones",
                                                                   "Jagged Little Pill", "Facelift", "Audioslave")]  # fmt: skip
    openings = {rp.value_question(x, frame, "bytes", "en")[0].split(" the file size")[0] for x in subjects}
    assert len(openings) >= 2 and openings <= {"What is", "Can you tell me", "I'd like to know"}, openings
    frame["fields"]["unit_price"] = {"kind": "measure", "label": {"en": "price in USD"}, "unit": "usd"}
    q, short = rp.value_question(subject, frame, "unit_price", "en")
    assert q.split(" the price of ")[1].rstrip("?.") == subject, q
    assert rp.value_answer(0.99, short, "en").endswith("is 0.99 USD.")
    ko_frame = {"tool": "search_census_district", "noun": {"ko": {"noun": "행정구역", "counter": "곳"}},
                "fields": {"admNmEn": {"kind": "display", "label": {"ko": "행정구역 영문명"}}}}  # fmt: skip
    q, short = rp.value_question("부산광역시의 시군구 가운데 인구가 가장 많은 곳", ko_frame, "admNmEn", "ko")
    assert q == "부산광역시의 시군구 가운데 인구가 가장 많은 곳의 영문명은 무엇입니까?"
    assert rp.value_answer("Haeundae-gu", short, "ko").endswith("영문명은 Haeundae-gu입니다.")


def test_a_code_is_asked_the_way_a_person_asks_for_it_and_the_answer_names_the_district():
    """Blind read s10: '…의 행정안전부 시군구 코드는 무엇입니까?' (Nat 2-3): a field with a reviewed `ask` is asked
    with the record the document gave ('… 구는 어디인가요? 그곳의 … 코드도 알려 주세요.'), and the answer names it."""
    import yaml

    lex = yaml.safe_load((ROOT / "lexicon" / "korea.yaml").read_text(encoding="utf-8"))
    fields = lex["tools"]["search_admin_sigungu"]["fields"]
    frame = {"tool": "search_admin_sigungu", "noun": {"ko": {"noun": "시군구", "counter": "곳"}},
             "fields": {"sigunguCd": {"kind": "display", **fields["sigunguCd"]}}}  # fmt: skip
    subject = "서울특별시에서 2010년 인구주택총조사 기준 인구가 가장 많았던 구"
    q, short = rp.value_question(subject, frame, "sigunguCd", "ko")
    assert q == f"{subject}는 어디인가요? 그곳의 행정안전부 행정구역 코드도 알려 주세요."
    assert rp.value_answer("11710", short, "ko", "송파구") == (
        f"{subject}는 송파구이며, 행정안전부 행정구역 코드는 11710입니다."
    )
    # without the district's name the answer states the value of the subject (no '는 이며')
    assert "이며" not in rp.value_answer("11710", short, "ko") and "11710" in rp.value_answer("11710", short, "ko")
    assert fields["sidoCd"]["asked"] is False
    census = lex["tools"]["search_census_district"]["fields"]
    frame = {"tool": "search_census_district", "noun": {"ko": {"noun": "행정구역", "counter": "곳"}},
             "fields": {"admNmEn": {"kind": "display", **census["admNmEn"]}}}  # fmt: skip
    q, short = rp.value_question("경기도에서 2020년 인구주택총조사 기준 인구가 가장 많았던 시·군·구(일반구 단위)", frame,
                                 "admNmEn", "ko")  # fmt: skip
    assert q.endswith("시·군·구(일반구 단위)는 어디인가요? 영문으로는 어떻게 쓰는지도 알려 주세요."), q
    assert rp.value_answer("Hwaseong-si", short, "ko", "화성시").endswith("화성시이며, 영문 표기는 Hwaseong-si입니다.")


def test_malformed_passage_lexicon_is_an_error_naming_the_file_and_entry(tmp_path):
    bad = tmp_path / "music.yaml"
    bad.write_text("documents:\n  - {kind: album, title: '^(?P<name>.+)$', subject: album.title, name: {en: x}}\n")
    with pytest.raises(rp.PassageLexiconError, match=r"music\.yaml: documents\[0\]: .*no group `subject`"):
        rp.load_passage_lexicon(bad)
    bad.write_text(
        "documents:\n  - {kind: album, title: '^(?P<subject>.+)$', subject: album.title, name: {en: x}}\n"
        "facts:\n  - {in: album, match: 'sold (?P<n>\\d+)', ask: {en: 'How many?'}}\n"
    )
    with pytest.raises(rp.PassageLexiconError, match=r"facts\[0\]: a number fact .* needs ask and answer"):
        rp.load_passage_lexicon(bad)
    bad.write_text("documents: []\nfacts:\n  - {in: single, match: 'x (?P<n>\\d+)', ask: {en: a}, answer: {en: b}}\n")
    with pytest.raises(rp.PassageLexiconError, match=r"unknown document kinds \['single'\]"):
        rp.load_passage_lexicon(bad)
    with pytest.raises(rp.RagUnphraseable) as e:
        rp.fill("What was the wind {at}?", {"doc": "JFK"}, "bulletin")
    assert e.value.code == "template"
    assert rp.long_date("2013-01-03") == "3 January 2013" and rp.long_date("2013") == "2013"
