"""Minimal golden paths by necessity (factory.synthesis.minimal), on the demo's concrete cases.

The tools mirror the demo platforms' (chinook-catalog, flight-ops, krgc-admin, kostat-census, geo-mcp)
parameters and generic parameters; the records are the ones the blind audit read (Chinook artist 149
"Lost" with albums 229-231 and 261, JFK departures, 효자동2가 in 전주시완산구).
"""

from typing import Any

import pytest

from factory.synthesis import answers
from factory.synthesis.minimal import count_field_for, disagreement, minimal_path, pattern_of, unsent, with_records
from factory.tools.registry import ToolRegistry
from factory.tools.spec import ToolSpec

PAGE = {"page": {"type": "integer"}, "per_page": {"type": "integer"}}
KR = {"pageNo": {"type": "integer"}, "numOfRows": {"type": "integer"}, "_type": {"type": "string"}}


def _tool(domain: str, platform: str, name: str, params: dict[str, Any], **extra: Any) -> ToolSpec:
    kr = platform in ("krgc-admin", "kostat-census")
    key = None if extra.get("key_acquisition") or platform == "geo-mcp" else "serviceKey" if kr else "api_key"
    props = {**params, **({key: {"type": "string"}} if key else {})}
    paged = any(p in params for p in ("page", "pageNo"))
    generic = {"key": key}
    if paged:
        generic |= {"page": "pageNo", "page_size": "numOfRows", "format": ["_type"]} if kr else {
            "page": "page", "page_size": "per_page"}  # fmt: skip
    return ToolSpec.model_validate(
        {
            "domain": domain,
            "platform": platform,
            "name": name,
            "description": name,
            "input_schema": {"type": "object", "properties": props, "required": list(params)},
            "generic_params": generic,
            "source": {"kind": "openapi", "locator": f"demo://{platform}"},
            **extra,
        }
    )


KEY = {"key_acquisition": {"output_field": "key"}}
SPECS = ToolRegistry(
    [
        _tool("music", "chinook-catalog", "get_chinook_catalog_key", {}, **KEY),
        _tool("music", "chinook-store", "get_chinook_store_key", {}, **KEY),
        _tool("music", "chinook-catalog", "search_artists", {"name": {"type": "string"}, **PAGE}),
        _tool("music", "chinook-catalog", "list_artist_albums", {"artist_id": {"type": "integer"}, **PAGE}),
        _tool("music", "chinook-catalog", "get_album", {"album_id": {"type": "integer"}}),
        _tool("music", "chinook-catalog", "list_album_tracks", {"album_id": {"type": "integer"}, **PAGE}),
        _tool("music", "chinook-store", "list_customer_invoices", {"customer_id": {"type": "integer"}, **PAGE}),
        _tool("aviation", "flight-ops", "get_flight_ops_key", {}, **KEY),
        _tool("aviation", "flight-ops", "list_flights", {"date": {"type": "string"}, "origin": {"type": "string"}, **PAGE}),
        _tool("aviation", "flight-ops", "get_plane", {"tailnum": {"type": "string"}}),
        _tool("aviation", "geo-mcp", "airport_timezone", {"iata": {"type": "string"}}),
        _tool("aviation", "geo-mcp", "airport_coordinates", {"iata": {"type": "string"}}),
        _tool("korea", "krgc-admin", "get_krgc_admin_key", {}, **KEY),
        _tool("korea", "kostat-census", "get_kostat_census_key", {}, **KEY),
        _tool("korea", "krgc-admin", "search_admin_emd", {"emdNm": {"type": "string"}, **KR}),
        _tool("korea", "krgc-admin", "search_admin_sigungu", {"sidoNm": {"type": "string"}, "sigunguNm": {"type": "string"}, **KR}),
        _tool("korea", "krgc-admin", "list_admin_sigungu", {"sidoCd": {"type": "string"}, **KR}),
        _tool("korea", "kostat-census", "search_census_district", {"keyword": {"type": "string"}, **KR}),
    ]
)  # fmt: skip
TID = {s.name: tid for tid, s in SPECS.items()}


class Path:
    """A trajectory under construction: golden-action rows, every record of each call, its logical call."""

    def __init__(self) -> None:
        self.actions: list[dict[str, Any]] = []
        self.records: list[list[dict[str, Any]]] = []
        self.logical: list[int] = []

    def call(self, step: int, tool: str, args: dict[str, Any], recs: list[dict[str, Any]], total: int | None = None,
             *, logical: int | None = None) -> int:  # fmt: skip
        spec = SPECS[TID[tool]]
        g = spec.generic_params
        full = {**args, **({g.key: "<KEY>"} if g.key else {})}
        if g.page and g.page not in full:
            full[g.page] = 1
        self.actions.append(
            {"step": step, "tool": tool, "tool_id": TID[tool], "platform": spec.platform, "args": full,
             "records": len(recs), "total_count": total if total is not None else (len(recs) if g.page else None),
             "call_digest": f"c{len(self.actions)}", "result_digest": f"r{len(self.actions)}",
             "outcome": "semantic_success", "sample": recs[:2]}
        )  # fmt: skip
        self.records.append(recs)
        self.logical.append(len(self.actions) if logical is None else logical)
        return len(self.actions) - 1

    def minimal(self, spec: dict[str, Any], junctions: list[dict[str, Any]], phi: int = 5, given=()):
        mp = minimal_path(
            self.actions, self.records, spec, junctions, SPECS, phi=phi, logical=self.logical, given=given
        )
        full = answers.compute(mp.original[1], with_records(mp.original[0], self.records, range(len(self.actions))))
        assert disagreement(mp, self.records, full) == "", "a recorded path does not reproduce the answer"
        return mp, full


def j(frm: str, to: str, typ: str = "SEQ", n: int = 1, process: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"from": frm, "to": to, "edge_id": f"e:{frm}>{to}", "type": typ, "n": n, "width": n if not process else 1,
            "process": process}  # fmt: skip


LOST = [  # list_artist_albums(artist_id=149): the four "Lost" seasons, each record carries its track count
    {"album_id": 229, "title": "Lost, Season 3", "artist_id": 149, "track_count": 26},
    {"album_id": 230, "title": "Lost, Season 1", "artist_id": 149, "track_count": 25},
    {"album_id": 231, "title": "Lost, Season 2", "artist_id": 149, "track_count": 24},
    {"album_id": 261, "title": "Lost, Season 4", "artist_id": 149, "track_count": 17},
]


def _tracks(album: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"track_id": album["album_id"] * 100 + k, "album_id": album["album_id"], "milliseconds": 1000 + k}
            for k in range(album["track_count"])]  # fmt: skip


def _lost_chain(with_lookup: bool) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    """search_artists(Lost) → list_artist_albums → [get_album ×4 →] list_album_tracks ×4; the total track count."""
    p = Path()
    p.call(1, "get_chinook_catalog_key", {}, [{"key": "<KEY>"}])
    p.call(2, "search_artists", {"name": "Lost"}, [{"artist_id": 149, "name": "Lost"}])
    p.call(3, "list_artist_albums", {"artist_id": 149}, LOST)
    step = 4
    junctions = [j("search_artists.artist_id", "list_artist_albums.artist_id")]
    if with_lookup:
        for a in LOST:
            p.call(4, "get_album", {"album_id": a["album_id"]}, [a])
        junctions.append(j("list_artist_albums.album_id", "get_album.album_id", "FAN", 4))
        junctions.append(j("get_album.album_id", "list_album_tracks.album_id", "FAN", 4))
        step = 5
    else:
        junctions.append(j("list_artist_albums.album_id", "list_album_tracks.album_id", "FAN", 4))
    firsts = [p.call(step, "list_album_tracks", {"album_id": a["album_id"]}, _tracks(a)) for a in LOST]
    return p, {"kind": "count", "calls": firsts}, junctions


def test_a_listing_that_carries_track_count_is_the_minimal_path():
    p, spec, junctions = _lost_chain(with_lookup=False)
    mp, full = p.minimal(spec, junctions)
    assert full["value"] == 92
    assert [a["tool"] for a in mp.actions] == ["get_chinook_catalog_key", "search_artists", "list_artist_albums"]
    assert [a["step"] for a in mp.actions] == [1, 2, 3]
    assert mp.answer_spec == {"kind": "count", "calls": [
        {"step": 3, "index": 0, "record": {"album_id": a["album_id"]}, "field": "track_count"} for a in LOST]}  # fmt: skip
    assert [r["reason"] for r in mp.removed] == ["answer_present"] * 4
    assert mp.junctions == [junctions[0]]  # the FAN into the removed calls is gone
    got = answers.compute(mp.answer_spec, with_records(mp.actions, p.records, mp.keep))
    assert got["value"] == 92 and got["fields"] == ["track_count"]
    # the longer path stays recorded as sufficient, with its own references
    (orig,) = mp.alternatives
    assert orig["note"] == "original" and len(orig["actions"]) == 7
    assert orig["answer_spec"]["calls"][0] == {"step": 4, "index": 0}


def test_a_lookup_whose_fields_the_listing_has_is_bypassed_and_the_answer_reads_the_listing():
    """11 calls (the audit's FAN+FAN case) → 3; the path through the original answer calls is an alternative."""
    p, spec, junctions = _lost_chain(with_lookup=True)
    mp, full = p.minimal(spec, junctions)
    assert full["value"] == 92 and len(p.actions) == 11
    assert [a["tool"] for a in mp.actions] == ["get_chinook_catalog_key", "search_artists", "list_artist_albums"]
    reasons = sorted(r["reason"] for r in mp.removed)
    assert reasons == ["answer_present"] * 4 + ["unused"] * 4
    notes = {a["note"]: a for a in mp.alternatives}
    assert set(notes) == {"original", "answer read from its original calls"}
    plain = notes["answer read from its original calls"]
    assert [a["tool"] for a in plain["actions"]] == ["get_chinook_catalog_key", "search_artists",
                                                      "list_artist_albums"] + ["list_album_tracks"] * 4  # fmt: skip
    assert {a["step"] for a in plain["actions"] if a["tool"] == "list_album_tracks"} == {4}
    assert mp.report()["calls_before"] == 11 and mp.report()["calls_after"] == 3


def test_get_album_after_the_album_is_known_is_bridged_elsewhere():
    """search_artists → list_artist_albums → get_album → list_album_tracks, the duration of the one track."""
    p = Path()
    album = {"album_id": 342, "title": "Locatelli: Concertos", "artist_id": 271, "track_count": 1}
    p.call(1, "get_chinook_catalog_key", {}, [{"key": "<KEY>"}])
    p.call(2, "search_artists", {"name": "Music"}, [{"artist_id": 271, "name": "Pro Musica Prague"}])
    p.call(3, "list_artist_albums", {"artist_id": 271}, [album])
    p.call(4, "get_album", {"album_id": 342}, [album])
    last = p.call(
        5, "list_album_tracks", {"album_id": 342}, [{"track_id": 3451, "album_id": 342, "milliseconds": 493573}]
    )
    junctions = [j("search_artists.artist_id", "list_artist_albums.artist_id"),
                 j("list_artist_albums.album_id", "get_album.album_id"),
                 j("get_album.album_id", "list_album_tracks.album_id")]  # fmt: skip
    mp, full = p.minimal({"kind": "value", "calls": [last], "field": "milliseconds"}, junctions)
    assert full["value"] == 493573
    assert [a["tool"] for a in mp.actions] == [
        "get_chinook_catalog_key", "search_artists", "list_artist_albums", "list_album_tracks"]  # fmt: skip
    assert mp.removed == [{"step": 4, "tool": "get_album", "reason": "bridged_elsewhere"}]
    assert mp.junctions[1] == {"from": "list_artist_albums.album_id", "to": "list_album_tracks.album_id",
                               "edge_id": "", "type": "SEQ", "n": 1, "width": 1, "process": None}  # fmt: skip
    assert mp.answer_spec == {"kind": "value", "calls": [{"step": 4, "index": 0}], "field": "milliseconds"}
    assert pattern_of("chain", mp.junctions, "SEQ+SEQ+SEQ") == "SEQ+SEQ"


def test_a_lookup_feeding_a_selection_is_needed():
    """A DRV process node reads the lookups' records: they cannot be bypassed."""
    p = Path()
    p.call(1, "get_chinook_catalog_key", {}, [{"key": "<KEY>"}])
    p.call(2, "list_artist_albums", {"artist_id": 149}, LOST)
    for a in LOST:
        p.call(3, "get_album", {"album_id": a["album_id"]}, [a])
    last = p.call(4, "list_album_tracks", {"album_id": 229}, _tracks(LOST[0])[:1], total=26)
    node = {"field": "track_count", "operator": "max", "threshold": 26, "n_in": 4, "n_out": 1}
    junctions = [j("list_artist_albums.album_id", "get_album.album_id", "FAN", 4),
                 j("get_album.album_id", "list_album_tracks.album_id", "DRV", 4, node)]  # fmt: skip
    mp, _ = p.minimal({"kind": "value", "calls": [last], "field": "milliseconds"}, junctions)
    assert mp.removed == [] and mp.alternatives == []


def test_an_unused_key_call_is_dropped():
    """COND whose then-branch (a store tool) did not run: the store key was fetched for nothing."""
    p = Path()
    p.call(1, "get_chinook_catalog_key", {}, [{"key": "<KEY>"}])
    p.call(1, "get_chinook_store_key", {}, [{"key": "<KEY>"}])
    seed = p.call(2, "list_artist_albums", {"artist_id": 149}, LOST)
    spec = {"kind": "cond", "cond_call": seed, "threshold": 6, "then": {"kind": "count", "calls": []},
            "else": {"kind": "count", "calls": [seed]}}  # fmt: skip
    mp, full = p.minimal(spec, [])
    assert full == {"type": "number", "value": 4, "fields": ["total_count"], "branch": "else", "condition_value": 4}
    assert [a["tool"] for a in mp.actions] == ["get_chinook_catalog_key", "list_artist_albums"]
    assert mp.removed == [{"step": 1, "tool": "get_chinook_store_key", "reason": "unused_key"}]
    assert mp.answer_spec["cond_call"] == {"step": 2, "index": 0}


def test_a_key_of_a_platform_still_called_stays():
    p = Path()
    p.call(1, "get_chinook_catalog_key", {}, [{"key": "<KEY>"}])
    seed = p.call(2, "list_artist_albums", {"artist_id": 149}, LOST)
    mp, _ = p.minimal({"kind": "count", "calls": [seed]}, [])
    assert mp.removed == [] and len(mp.actions) == 2


def _flights(date: str, n: int, tail=lambda k: f"N{k}") -> list[dict[str, Any]]:
    return [{"date": date, "origin": "JFK", "carrier": "B6", "tailnum": tail(k), "dep_delay": k % 7} for k in range(n)]


def test_extra_pages_of_a_count_are_dropped():
    """CMP of JFK departures on two dates (302 vs 297): page 1 carries total_count, pages 2..n add nothing."""
    p = Path()
    p.call(1, "get_flight_ops_key", {}, [{"key": "<KEY>"}])
    arms = []
    for lid, (date, total) in enumerate((("2013-01-05", 302), ("2013-01-01", 297))):
        recs = _flights(date, total)
        pages = [recs[k : k + 100] for k in range(0, total, 100)]
        arms.append(p.call(2, "list_flights", {"date": date, "origin": "JFK"}, pages[0], total, logical=100 + lid))
        for n, page in enumerate(pages[1:], start=2):
            p.call(2, "list_flights", {"date": date, "origin": "JFK", "page": n}, page, total, logical=100 + lid)
    spec = {"kind": "cmp", "arms": [{"kind": "count", "calls": [arms[0]]}, {"kind": "count", "calls": [arms[1]]}],
            "labels": ["2013-01-05", "2013-01-01"], "order": "more"}  # fmt: skip
    mp, full = p.minimal(spec, [])
    assert full["value"] == "2013-01-05" and full["counts"] == [302, 297] and len(p.actions) == 8
    assert [(a["tool"], a["args"].get("date"), a["args"].get("page")) for a in mp.actions] == [
        ("get_flight_ops_key", None, None), ("list_flights", "2013-01-05", 1), ("list_flights", "2013-01-01", 1)]  # fmt: skip
    assert [r["reason"] for r in mp.removed] == ["extra_page"] * 5
    assert mp.answer_spec["arms"][1] == {"kind": "count", "calls": [{"step": 2, "index": 1}]}


@pytest.mark.parametrize("second_page_new", [True, False])
def test_a_page_whose_records_feed_a_junction_is_kept(second_page_new):
    """list_flights has 150 departures in two pages; the FAN over their tail numbers reads both pages, whether
    page 2 holds the only other tail number or repeats page 1's (a set of values is read over every page)."""
    p = Path()
    p.call(1, "get_flight_ops_key", {}, [{"key": "<KEY>"}])
    tails = (lambda k: "N100" if k < 100 else "N200") if second_page_new else (lambda k: "N100" if k % 2 else "N200")
    recs = _flights("2013-01-05", 150, tails)
    p.call(2, "list_flights", {"date": "2013-01-05", "origin": "JFK"}, recs[:100], 150, logical=7)
    p.call(2, "list_flights", {"date": "2013-01-05", "origin": "JFK", "page": 2}, recs[100:], 150, logical=7)
    planes = [
        p.call(3, "get_plane", {"tailnum": t}, [{"tailnum": t, "seats": s}]) for t, s in (("N100", 200), ("N200", 55))
    ]
    mp, full = p.minimal(
        {"kind": "value", "calls": planes, "field": "seats"}, [j("list_flights.tailnum", "get_plane.tailnum", "FAN", 2)]
    )
    assert full["value"] == [200, 55]
    assert mp.removed == [] and len(mp.actions) == 5


def test_a_sido_name_the_first_lookup_returns_is_read_there():
    """효자동2가 → 전주시완산구 → sido 45's list → census district search by name, answer the sido name: the first
    lookup already has it; the census key goes with the census call."""
    p = Path()
    p.call(1, "get_kostat_census_key", {}, [{"key": "<KEY>"}])
    p.call(1, "get_krgc_admin_key", {}, [{"key": "<KEY>"}])
    emd = {"emdCd": "4511112400", "emdNm": "효자동2가", "sidoNm": "전라북도", "sigunguNm": "전주시완산구"}
    p.call(2, "search_admin_emd", {"emdNm": "효자동2가"}, [emd])
    p.call(3, "search_admin_sigungu", {"sidoNm": "전라북도", "sigunguNm": "전주시완산구"},
           [{"sidoCd": "45", "sidoNm": "전라북도", "sigunguCd": "45111", "sigunguNm": "전주시완산구"}])  # fmt: skip
    p.call(4, "list_admin_sigungu", {"sidoCd": "45"},
           [{"sidoCd": "45", "sidoNm": "전라북도", "sigunguCd": f"45{k:03d}", "sigunguNm": f"구{k}"} for k in range(15)])  # fmt: skip
    last = p.call(5, "search_census_district", {"keyword": "전라북도"}, [{"districtCd": "35", "sidoNm": "전라북도"}])
    junctions = [j("search_admin_emd.sidoNm+sigunguNm", "search_admin_sigungu.sidoNm+sigunguNm"),
                 j("search_admin_sigungu.sidoCd", "list_admin_sigungu.sidoCd"),
                 j("list_admin_sigungu.sidoNm", "search_census_district.keyword")]  # fmt: skip
    mp, full = p.minimal({"kind": "value", "calls": [last], "field": "sidoNm"}, junctions)
    assert full["value"] == "전라북도"
    assert [a["tool"] for a in mp.actions] == ["get_krgc_admin_key", "search_admin_emd"]
    assert sorted((r["tool"], r["reason"]) for r in mp.removed) == [
        ("get_kostat_census_key", "unused_key"), ("list_admin_sigungu", "unused"),
        ("search_admin_sigungu", "unused"), ("search_census_district", "answer_present")]  # fmt: skip
    assert mp.answer_spec == {"kind": "value", "field": "sidoNm",
                              "calls": [{"step": 2, "index": 0, "record": {"sidoNm": "전라북도"}}]}  # fmt: skip
    assert mp.junctions == [] and mp.moved[0]["to"]["tool_id"] == TID["search_admin_emd"]


def test_sem_parts_one_record_answers_are_read_there():
    """airport_timezone(JWO).tz and airport_coordinates(JWO).subdivision: the coordinates record has tz too."""
    p = Path()
    tz = p.call(1, "airport_timezone", {"iata": "JWO"}, [{"iata": "JWO", "country": "KR", "tz": "Asia/Seoul"}])
    co = p.call(1, "airport_coordinates", {"iata": "JWO"},
                [{"iata": "JWO", "icao": "RKTI", "subdivision": "North Chungcheong", "tz": "Asia/Seoul"}])  # fmt: skip
    spec = {"kind": "sem", "parts": [{"kind": "value", "calls": [tz], "field": "tz"},
                                     {"kind": "value", "calls": [co], "field": "subdivision"}]}  # fmt: skip
    mp, full = p.minimal(spec, [])
    assert full["value"] == ["Asia/Seoul", "North Chungcheong"]
    assert [a["tool"] for a in mp.actions] == ["airport_coordinates"]
    assert mp.removed == [{"step": 1, "tool": "airport_timezone", "reason": "answer_present"}]


def test_a_value_of_another_entity_is_not_taken():
    """The coordinates of another airport carry the same time zone: not the same entity, nothing moves."""
    p = Path()
    tz = p.call(1, "airport_timezone", {"iata": "JWO"}, [{"iata": "JWO", "tz": "Asia/Seoul"}])
    co = p.call(1, "airport_coordinates", {"iata": "JWO"}, [{"iata": "RKTI", "subdivision": "X", "tz": "Asia/Seoul"}])
    spec = {"kind": "sem", "parts": [{"kind": "value", "calls": [tz], "field": "tz"},
                                     {"kind": "value", "calls": [co], "field": "subdivision"}]}  # fmt: skip
    mp, _ = p.minimal(spec, [])
    assert mp.removed == []


def test_a_count_field_must_equal_the_total_and_name_what_is_listed():
    p, spec, junctions = _lost_chain(with_lookup=False)  # season 3 reports one track more than its record says
    p.actions[3]["total_count"] = 27
    p.records[3] = [*p.records[3], {"track_id": 1, "album_id": 229, "milliseconds": 1}]
    mp, full = p.minimal(spec, junctions)
    assert full["value"] == 93 and mp.removed == []
    assert count_field_for("track_count", "list_album_tracks") and count_field_for("trackCount", "list_album_tracks")
    assert count_field_for("airport_count", "list_airports_by_country")
    assert not count_field_for("track_count", "list_customer_invoices") and not count_field_for(
        "total", "list_album_tracks"
    )


def test_answer_refs_are_steps_and_positions_within_a_step():
    rows = [
        {"step": 1, "total_count": None, "records": 1, "sample": [{}]},
        {"step": 2, "total_count": 12, "records": 10, "sample": [{"name": "Delta"}]},
        {"step": 2, "total_count": 3, "records": 3, "sample": [{"name": "Alaska"}]},
    ]
    assert (
        answers.compute({"kind": "count", "calls": [{"step": 2, "index": 0}, {"step": 2, "index": 1}]}, rows)["value"]
        == 15
    )
    with pytest.raises(answers.SpecError, match="old format"):
        answers.compute({"kind": "count", "calls": [1]}, rows)
    with pytest.raises(answers.SpecError, match="names no golden action"):
        answers.compute({"kind": "count", "calls": [{"step": 3, "index": 0}]}, rows)
    sel = {"kind": "value", "field": "name", "calls": [{"step": 2, "index": 0, "record": {"name": "Nope"}}]}
    with pytest.raises(answers.SpecError, match="no record"):
        answers.compute(sel, rows)


def test_a_listing_the_answer_reads_a_record_of_keeps_every_page():
    """The DRV case of the demo run: 334 Kansas airports in 4 pages, the 2 lowest selected and looked up for a
    field the listing records already carry; the answer moves to the listing, which keeps all 4 pages (the
    selection reads every record)."""
    p = Path()
    p.call(1, "get_chinook_catalog_key", {}, [{"key": "<KEY>"}])
    albums = [{"album_id": 1000 + k, "artist_id": 149, "title": f"T{k}", "track_count": 10 if k in (5, 320) else 20 + k % 30}
              for k in range(334)]  # fmt: skip
    pages = [albums[k : k + 100] for k in range(0, 334, 100)]
    for n, page in enumerate(pages, start=1):
        p.call(2, "list_artist_albums", {"artist_id": 149, **({"page": n} if n > 1 else {})}, page, 334, logical=9)
    low = [a for a in albums if a["track_count"] == 10]  # on pages 1 and 4: pages 2 and 3 hold none of them
    looks = [p.call(3, "get_album", {"album_id": a["album_id"]}, [a]) for a in low]
    node = {"field": "track_count", "operator": "min", "threshold": 10, "n_in": 334, "n_out": 2}
    junction = j("list_artist_albums.album_id", "get_album.album_id", "DRV", 334, node)
    mp, full = p.minimal({"kind": "value", "calls": looks, "field": "title"}, [junction])
    assert full["value"] == ["T5", "T320"]
    assert [a["tool"] for a in mp.actions] == ["get_chinook_catalog_key"] + ["list_artist_albums"] * 4
    assert [r["reason"] for r in mp.removed] == ["answer_present"] * 2 and mp.junctions == []
    assert mp.answer_spec["calls"] == [{"step": 2, "index": 0, "record": {"album_id": 1005}},
                                       {"step": 2, "index": 3, "record": {"album_id": 1320}}]  # fmt: skip
    assert answers.compute(mp.answer_spec, with_records(mp.actions, p.records, mp.keep))["value"] == full["value"]


def test_a_lookup_that_passes_on_only_what_the_query_states_is_not_needed():
    """search_artists('Lost') hands 'Lost' to the track search: the query states it (the audit's SEQ case)."""
    p = Path()
    p.call(1, "get_chinook_catalog_key", {}, [{"key": "<KEY>"}])
    p.call(2, "search_artists", {"name": "Lost"}, [{"artist_id": 149, "name": "Lost"}])
    last = p.call(3, "list_artist_albums", {"artist_id": 149}, LOST)
    junctions = [j("search_artists.artist_id", "list_artist_albums.artist_id")]
    spec = {"kind": "count", "calls": [last]}
    mp, _ = p.minimal(spec, junctions, given=[("name", "Lost")])
    assert mp.removed == []  # 149 is not in the query
    mp, _ = p.minimal(spec, junctions, given=[("artist_id", 149)])
    assert mp.removed == [{"step": 2, "tool": "search_artists", "reason": "stated_in_query"}] and mp.junctions == []
    mp, _ = p.minimal(spec, junctions, given=[("genre_id", 149)])  # a number states only a like-named parameter
    assert mp.removed == []


def test_a_selection_by_the_value_the_query_states_leaves_the_question_seeds_unsent():
    """The demo's DRV on a junction field with equality (invoice lines whose track name is X → search X): the
    listing only passes on X, which the query states; the minimal path then sends none of the listing's seeds,
    which `_finish` rejects (seed_unused: the answer does not depend on them)."""
    p = Path()
    p.call(1, "get_flight_ops_key", {}, [{"key": "<KEY>"}])
    p.call(
        2, "list_flights", {"date": "2013-01-05", "origin": "JFK"}, _flights("2013-01-05", 40, lambda k: f"N{k % 8}")
    )
    last = p.call(3, "get_plane", {"tailnum": "N3"}, [{"tailnum": "N3", "seats": 55}])
    node = {"field": "tailnum", "operator": "eq", "threshold": "N3", "n_in": 8, "n_out": 1}
    junctions = [j("list_flights.tailnum", "get_plane.tailnum", "DRV", 8, node)]
    given = [("date", "2013-01-05"), ("origin", "JFK"), ("", "N3")]
    mp, _ = p.minimal({"kind": "value", "calls": [last], "field": "seats"}, junctions, given=given)
    assert mp.removed == [{"step": 2, "tool": "list_flights", "reason": "stated_in_query"}]
    assert unsent(mp, ["2013-01-05", "JFK", "N3"]) == ["2013-01-05", "JFK"]
    p, spec, junctions = _lost_chain(with_lookup=False)
    mp, _ = p.minimal(spec, junctions)  # the album ids select the records the answer reads: they are used
    assert unsent(mp, [229, 261, "Lost", 7]) == [7]


QUN_NEAR = [("WJU", "Wonju Airport", 53.9), ("SSN", "Seoul Air Base", 72.1), ("YNY", "Yangyang International Airport", 85.7),
            ("GMP", "Gimpo International Airport", 89.2), ("SWU", "Suwon Airport", 95.2), ("JWO", "Jungwon Air Base", 96.1)]  # fmt: skip


@pytest.mark.parametrize("field,needed", [("name", False), ("subdivision", True)])
def test_coordinates_of_nearby_airports_are_needed_only_for_what_the_listing_lacks(field, needed):
    """Audit round 3 #6: airports_near(QUN) lists each airport's name; airport_coordinates for the five within
    95.2 km adds nothing to 'their names' (the path is one call, and the chain template then collapses), but
    it is the only source of their subdivisions."""
    near = _tool("aviation", "geo-mcp", "airports_near", {"iata": {"type": "string"}, "radius_km": {"type": "number"},
                 "limit": {"type": "integer"}}, records_path="airports")  # fmt: skip
    specs = ToolRegistry([*(SPECS[t] for t in TID.values()), near])
    ids = {s.name: t for t, s in specs.items()}
    recs = [{"iata": i, "name": n, "city": "", "country": "KR", "distance_km": d} for i, n, d in QUN_NEAR]
    actions: list[dict[str, Any]] = []
    records: list[list[dict[str, Any]]] = []

    def call(step: int, tool: str, args: dict[str, Any], rs: list[dict[str, Any]]) -> int:
        actions.append({"step": step, "tool": tool, "tool_id": ids[tool], "platform": "geo-mcp", "args": args,
                        "records": len(rs), "total_count": None, "outcome": "semantic_success"})  # fmt: skip
        records.append(rs)
        return len(actions) - 1

    call(1, "airports_near", {"iata": "QUN"}, recs)
    firsts = [
        call(2, "airport_coordinates", {"iata": r["iata"]},
             [{"iata": r["iata"], "name": r["name"], "subdivision": f"region of {r['iata']}", "tz": "Asia/Seoul"}])
        for r in recs[:5]
    ]  # fmt: skip
    node = {"field": "distance_km", "operator": "le", "threshold": 95.2, "n_in": 6, "n_out": 5}
    junctions = [j("airports_near.iata", "airport_coordinates.iata", "DRV", 6, node)]
    spec = {"kind": "value", "calls": firsts, "field": field}
    mp = minimal_path(actions, records, spec, junctions, specs, phi=5, given=[("iata", "QUN")])
    full = answers.compute(mp.original[1], with_records(mp.original[0], records, range(len(actions))))
    got = answers.compute(mp.answer_spec, with_records(mp.actions, records, mp.keep))
    assert got["value"] == full["value"] and len(full["value"]) == 5
    if needed:
        assert [a["tool"] for a in mp.actions] == ["airports_near"] + ["airport_coordinates"] * 5 and not mp.removed
    else:
        assert [a["tool"] for a in mp.actions] == ["airports_near"]
        assert [r["reason"] for r in mp.removed] == ["answer_present"] * 5
        assert mp.junctions == [] and pattern_of("chain", mp.junctions, "DRV") == ""  # no junction: it collapses


def test_cmp_arms_go_one_at_a_time_and_a_track_lookup_the_search_covers_is_bridged_elsewhere():
    """Audit #38 (music/CMP): 'A Real Dead One' (found in Iron Maiden's albums, which carry track_count 12) against
    the album of the track 'For Those About To Rock' (search_tracks already returns its album_id 1, so get_track
    adds nothing). Before: both list_album_tracks calls stayed (one unit) and get_track stayed (its junction
    counted the other arm's call as fed by it)."""
    extra = [
        _tool("music", "chinook-catalog", "search_tracks", {"name": {"type": "string"}, **PAGE}),
        _tool("music", "chinook-catalog", "get_track", {"track_id": {"type": "integer"}}),
    ]
    specs = ToolRegistry([*(SPECS[t] for t in TID.values()), *extra])
    ids = {s.name: t for t, s in specs.items()}
    actions: list[dict[str, Any]] = []
    records: list[list[dict[str, Any]]] = []

    def call(step: int, tool: str, args: dict[str, Any], rs: list[dict[str, Any]]) -> int:
        spec = specs[ids[tool]]
        full = {**args, **({"api_key": "<KEY>"} if spec.generic_params.key else {})}
        actions.append({"step": step, "tool": tool, "tool_id": ids[tool], "platform": spec.platform, "args": full,
                        "records": len(rs), "total_count": len(rs), "outcome": "semantic_success"})  # fmt: skip
        records.append(rs)
        return len(actions) - 1

    track = {"track_id": 1, "name": "For Those About To Rock (We Salute You)", "album_id": 1,
             "album_title": "For Those About To Rock We Salute You", "artist_id": 1}  # fmt: skip
    albums = [{"album_id": 94, "title": "A Matter of Life and Death", "artist_id": 90, "track_count": 11},
              {"album_id": 95, "title": "A Real Dead One", "artist_id": 90, "track_count": 12}]  # fmt: skip
    call(1, "get_chinook_catalog_key", {}, [{"key": "<KEY>"}])
    call(2, "search_artists", {"name": "Iron Maiden"}, [{"artist_id": 90, "name": "Iron Maiden"}])
    call(2, "search_tracks", {"name": track["name"]}, [track])
    call(3, "list_artist_albums", {"artist_id": 90}, albums)
    call(3, "get_track", {"track_id": 1}, [track])
    a = call(4, "list_album_tracks", {"album_id": 95}, [{"track_id": 9500 + k, "album_id": 95} for k in range(12)])
    b = call(4, "list_album_tracks", {"album_id": 1}, [{"track_id": 100 + k, "album_id": 1} for k in range(10)])
    junctions = [
        j("search_artists.artist_id", "list_artist_albums.artist_id"),
        j("search_tracks.track_id", "get_track.track_id"),
        j("list_artist_albums.album_id", "list_album_tracks.album_id", process={
            "field": "title", "operator": "eq", "threshold": "A Real Dead One", "n_in": 2, "n_out": 1}),
        j("get_track.album_id", "list_album_tracks.album_id"),
    ]  # fmt: skip
    spec = {"kind": "cmp", "arms": [{"kind": "count", "calls": [a]}, {"kind": "count", "calls": [b]}],
            "labels": ["A Real Dead One", "For Those About To Rock We Salute You"], "order": "more", "ask": "winner"}  # fmt: skip
    given = [("name", "Iron Maiden"), ("name", track["name"]), ("title", "A Real Dead One")]
    mp = minimal_path(actions, records, spec, junctions, specs, phi=5, given=given)
    full = answers.compute(mp.original[1], with_records(mp.original[0], records, range(len(actions))))
    got = answers.compute(mp.answer_spec, with_records(mp.actions, records, mp.keep))
    assert full["value"] == got["value"] == "A Real Dead One"
    assert [x["tool"] for x in mp.actions] == [
        "get_chinook_catalog_key", "search_artists", "search_tracks", "list_artist_albums", "list_album_tracks"]  # fmt: skip
    assert sorted((r["tool"], r["reason"]) for r in mp.removed) == [
        ("get_track", "bridged_elsewhere"), ("list_album_tracks", "answer_present")]  # fmt: skip
    kept_call = next(x for x in mp.actions if x["tool"] == "list_album_tracks")
    assert kept_call["args"]["album_id"] == 1  # the other arm's count is read from track_count 12
    assert {"from": "search_tracks.album_id", "to": "list_album_tracks.album_id"}.items() <= next(
        x for x in mp.junctions if x["to"] == "list_album_tracks.album_id"
    ).items()
