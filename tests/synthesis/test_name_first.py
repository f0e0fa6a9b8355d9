"""Name-first grounding (issue 15, item 2) on the demo's concrete cases, against the real demo service.

A seed that is an internal key (artist id 1, album id 1, customer id 1, playlist id 5) is stated by its
display name and resolved by a lookup call found through G*; a key no lookup can state (invoice id 98,
flight record id 5) is never a seed.  Value types are inferred from the demo's inventories as tool_lexicon
infers them.
"""

import asyncio

import numpy as np
import pytest

from factory import ingest
from factory.config import load_config
from factory.demo.service import DemoService
from factory.lexicon import infer_value_types
from factory.semtypes import ValueTypes
from factory.synthesis import lookup
from factory.synthesis import trajectories as T
from factory.synthesis.junctions import Rejection
from tests.conftest import free_port, write_config
from tests.synthesis.edges import demo_edges


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo service (no faults), the music and aviation inventories and their inferred value types."""
    tmp = tmp_path_factory.mktemp("name_first")
    base = load_config().demo.model_dump(mode="json")
    cfg = load_config(write_config(tmp, demo={**base, "port": free_port(), "faults": {}}))
    with DemoService(cfg.demo, log_dir=tmp / "logs"):
        inv = {d.name: ingest.build_inventory(d, cfg)[0] for d in cfg.domains if d.name in ("aviation", "music")}
        yield cfg, inv, infer_value_types(inv, {}, cfg)


def _up(field: str) -> dict:
    return {"kind": "UPSTREAM", "field": field, "transform": None}


MUSIC_EDGES = [
    ("search_artists", "list_artist_albums", {"artist_id": _up("artist_id")}),
    ("list_artist_albums", "list_album_tracks", {"album_id": _up("album_id")}),
    ("search_customers", "get_customer", {"customer_id": _up("customer_id")}),
    ("list_playlists", "list_playlist_tracks", {"playlist_id": _up("playlist_id")}),
    ("get_customer", "list_customer_invoices", {"customer_id": _up("customer_id")}),
]


def _world(demo, domain: str, edges: list[tuple[str, str, dict]], seeds: list[tuple[str, dict]], **syn) -> T.World:
    cfg, inv, vt = demo
    if syn:
        cfg = cfg.model_copy(update={"synthesis": cfg.synthesis.model_copy(update=syn)})
    ids = {t["name"]: f"{domain}/{t['platform']}/{t['name']}" for t in inv[domain]["tools"]}
    graph = {
        "edges": demo_edges(domain, inv[domain], edges),
        "observations": [],
        "value_types": vt.section(ids.values()),
    }  # fmt: skip
    rows = [{"tool_id": ids[name], "args": args, "outcome": "semantic_success", "record_count": 3, "total_count": 3}
            for name, args in seeds]  # fmt: skip
    return T.World(domain, graph, inv, {domain: {"rows": rows}}, cfg)


def _tid(w: T.World, name: str) -> str:
    return next(t for t, s in w.specs.items() if s.name == name and s.domain == w.domain)


async def _ground(w: T.World, targets: list[tuple[str, dict]]) -> lookup.Grounding:
    async with w.session() as ex:
        return await w.grounder.ground(ex, [(_tid(w, name), args) for name, args in targets])


# --------------------------------------------------------------------------- which values are keys


def test_key_kinds_follow_value_types(demo):
    w = _world(demo, "music", [], [])
    kind = lambda name, p: lookup.key_kind(w.types, _tid(w, name), p)  # noqa: E731
    assert kind("list_artist_albums", "artist_id") == lookup.INTERNAL
    assert kind("get_customer", "customer_id") == lookup.INTERNAL
    assert kind("search_artists", "name") is None  # a display name
    av = _world(demo, "aviation", [], [])
    assert lookup.key_kind(av.types, _tid(av, "get_flight"), "flight_id") == lookup.INTERNAL
    assert lookup.key_kind(av.types, _tid(av, "get_airport_by_iata"), "iata") is None  # a public standard
    korea = ValueTypes({"k/p/list_sigungu": {"params": {"sidoCd": "sido.code@kostat-census"}}})
    assert lookup.key_kind(korea, "k/p/list_sigungu", "sidoCd") == lookup.CODE  # borderline: resolved if possible


def test_lookups_are_found_through_g_star_edges_with_a_display_field(demo):
    w = _world(demo, "music", MUSIC_EDGES, [])
    artist = w.grounder.plans(_tid(w, "list_artist_albums"), "artist_id")
    assert [(p.edge.source_tool, p.name_param, p.display, p.nested) for p in artist] == [
        ("search_artists", "name", ("name",), ())
    ]
    album = w.grounder.plans(_tid(w, "list_album_tracks"), "album_id")  # no search by title: via its artist
    assert [(p.edge.source_tool, p.name_param, p.display, p.nested) for p in album] == [
        ("list_artist_albums", None, ("title",), ("artist_id",))
    ]
    assert w.grounder.plans(_tid(w, "list_album_tracks"), "album_id", depth=1) == []  # the artist needs a 2nd level
    customer = w.grounder.plans(_tid(w, "get_customer"), "customer_id")
    assert [(p.edge.source_tool, p.name_param, p.display) for p in customer] == [
        ("search_customers", "name", ("first_name", "last_name"))
    ]
    # get_customer → list_customer_invoices binds the key from records with the name, but get_customer takes that
    # very key: it is no lookup (the key would have to be known already)
    assert w.grounder.plans(_tid(w, "list_customer_invoices"), "customer_id") == []


def test_seeds_whose_internal_key_has_no_lookup_are_not_used(demo):
    seeds = [("list_invoice_lines", {"invoice_id": 98}), ("list_artist_albums", {"artist_id": 1})]
    w = _world(demo, "music", MUSIC_EDGES, seeds)
    assert w.seeds[_tid(w, "list_invoice_lines")] == []
    assert w.seeds[_tid(w, "list_artist_albums")] == [{"artist_id": 1}]
    assert len(w.internal_drops) == 1 and "invoice_id=98" in w.internal_drops[0]
    av = _world(demo, "aviation", [], [("get_flight", {"flight_id": 5}), ("get_airport_by_iata", {"iata": "JFK"})])
    assert av.seeds[_tid(av, "get_flight")] == [] and "flight_id=5" in av.internal_drops[0]
    assert av.seeds[_tid(av, "get_airport_by_iata")] == [{"iata": "JFK"}]  # public codes are cited
    off = _world(demo, "music", MUSIC_EDGES, seeds, name_first=False)
    assert off.seeds[_tid(off, "list_invoice_lines")] == [{"invoice_id": 98}] and not off.internal_drops


# --------------------------------------------------------------------------- executed lookups


def test_a_cmp_of_artist_ids_states_artist_names_and_resolves_them(demo):
    """'Which has fewer albums, AC/DC or Led Zeppelin?' — never 'artist id 1 or artist id 22'."""
    w = _world(demo, "music", MUSIC_EDGES, [("list_artist_albums", {"artist_id": 1})])
    tid = _tid(w, "list_artist_albums")
    t = asyncio.run(T.cmp_trajectory(w, tid, {"artist_id": 1}, "artist_id", 22, None, np.random.default_rng(0)))
    real = [(a["step"], a["tool"], {k: v for k, v in a["args"].items() if k in ("name", "artist_id")})
            for a in t["golden_actions"] if a["step"] > 1]  # fmt: skip
    assert real == [
        (2, "search_artists", {"name": "AC/DC"}),
        (2, "search_artists", {"name": "Led Zeppelin"}),
        (3, "list_artist_albums", {"artist_id": 1}),
        (3, "list_artist_albums", {"artist_id": 22}),
    ]
    assert [(s["param"], s["value"], s["via"]["param"]) for s in t["seeds"]] == [
        ("artist_id", "AC/DC", "name"), ("artist_id", "Led Zeppelin", "name")]  # fmt: skip
    assert t["answer_spec"]["labels"] == ["AC/DC", "Led Zeppelin"] and t["answer"]["value"] in ("AC/DC", "Led Zeppelin")
    assert sorted(t["bridge_values"]) == [1, 22]  # the keys pass between calls, never stated
    assert t["pattern"] == "CMP"  # the lookups are no part of the pattern
    assert t["describe"]["compare"] == {"tool_id": tid, "param": "artist_id",
                                        "lookup": {"tool_id": _tid(w, "search_artists"), "param": "name"}}  # fmt: skip
    assert t["describe"]["question_junctions"] == []  # the question compares the two artists, not their lookups
    assert [j["from"] for j in t["junctions"]] == ["search_artists.artist_id"] * 2
    assert not t["pruning"]["removed"]  # the lookups are necessary: the ids are stated nowhere
    assert [x["name"] for x in t["lookups"]] == ["AC/DC", "Led Zeppelin"]


def test_a_chain_from_a_customer_id_starts_from_the_customer_name(demo):
    """The customer's invoices and their lines, asked from the customer's name: the lookup search_customers runs
    first and its key feeds list_customer_invoices.  get_customer → list_customer_invoices would pass the
    customer's own key back (a detour: circular_hop)."""
    edges = [*MUSIC_EDGES, ("search_customers", "list_customer_invoices", {"customer_id": _up("customer_id")}),
             ("list_customer_invoices", "list_invoice_lines", {"invoice_id": _up("invoice_id")})]  # fmt: skip
    w = _world(demo, "music", edges, [("list_customer_invoices", {"customer_id": 1})])
    edge = next(e for e in w.edges if e.source_tool == "list_customer_invoices")
    t = asyncio.run(T.chain_trajectory(w, [edge], {"customer_id": 1}, np.random.default_rng(0)))
    assert t["describe"]["chain"] == [_tid(w, n) for n in ("list_customer_invoices", "list_invoice_lines")]
    via = {"tool_id": _tid(w, "search_customers"), "param": "name"}
    assert t["seeds"] == [{"tool_id": _tid(w, "list_customer_invoices"), "param": "customer_id",
                           "value": "Luís Gonçalves", "via": via}]  # fmt: skip
    assert [j["from"] for j in t["describe"]["question_junctions"]][:1] == ["list_customer_invoices.invoice_id"]
    first = next(a for a in t["golden_actions"] if a["step"] == 2)
    assert first["tool"] == "search_customers" and first["args"]["name"] == "Luís Gonçalves"
    (lk,) = t["lookups"]  # the key the name resolved to is a bridge value, never stated in the question
    assert (lk["name"], lk["key"], lk["to"]) == ("Luís Gonçalves", 1, "list_customer_invoices.customer_id")
    assert lk["key"] in t["bridge_values"]
    assert all(a["args"].get("customer_id") in (None, 1) for a in t["golden_actions"])
    detour = next(e for e in w.edges if e.source_tool == "get_customer")
    with pytest.raises(Rejection) as e:
        asyncio.run(T.chain_trajectory(w, [detour], {"customer_id": 1}, np.random.default_rng(0)))
    assert e.value.reason == "circular_hop"


def test_an_album_id_is_stated_by_its_title_looked_up_among_its_artists_albums(demo):
    w = _world(demo, "music", MUSIC_EDGES, [])
    g = asyncio.run(_ground(w, [("list_album_tracks", {"album_id": 4})]))
    assert [[f.tool_id.rsplit("/", 1)[1] for f in st] for st in g.stages()] == [
        ["search_artists"],
        ["list_artist_albums"],
    ]
    assert g.args == [{"album_id": 4}] and g.label(0, "album_id") == "Let There Be Rock"
    outer, inner = sorted(g.steps, key=lambda s: -s.depth)
    assert outer.fetched.args["name"] == "AC/DC" and outer.junction["to"] == "list_artist_albums.artist_id"
    # AC/DC has two albums: the lookup keeps the one whose title equals the name
    assert inner.junction["process"] == {"field": "title", "operator": "eq", "threshold": "Let There Be Rock",
                                         "n_in": 2, "n_out": 1}  # fmt: skip
    assert [(s["param"], s["value"]) for s in g.seeds] == [("artist_id", "AC/DC"), ("album_id", "Let There Be Rock")]
    assert g.seeds[1]["via"]["picked"] and g.thresholds == ["Let There Be Rock"]
    assert sorted(g.bridges) == [1, 4]


def test_a_customer_is_named_by_first_and_last_name_and_one_lookup_feeds_both_sem_tools(demo):
    w = _world(demo, "music", MUSIC_EDGES, [])
    g = asyncio.run(_ground(w, [("get_customer", {"customer_id": 1}), ("list_customer_invoices", {"customer_id": 1})]))
    assert len(g.steps) == 1 and g.steps[0].fetched.args["name"] == "Luís Gonçalves"
    assert g.label(0, "customer_id") == g.label(1, "customer_id") == "Luís Gonçalves"
    assert [j["to"] for j in g.junctions] == ["get_customer.customer_id", "list_customer_invoices.customer_id"]


def test_a_sem_part_answered_by_the_lookup_record_keeps_two_tools(demo):
    """'Where does Luís Gonçalves live and how many invoices has he?': the city is in the search's record, so
    get_customer is pruned; the parts are still answered by two tools (the search and the invoice listing)."""
    w = _world(demo, "music", MUSIC_EDGES, [])
    a, b = _tid(w, "get_customer"), _tid(w, "list_customer_invoices")
    shape = {"parts": [{"kind": "value", "field": "city"}, {"kind": "count"}]}
    t = asyncio.run(T.sem_trajectory(w, a, "customer_id", b, "customer_id", {"customer_id": 1}, None, shape=shape))
    assert [a["tool"] for a in t["golden_actions"] if a["step"] > 1] == ["search_customers", "list_customer_invoices"]
    assert t["answer"]["value"] == ["São José dos Campos", 7]
    assert t["describe"]["shared"] == {"param": "customer_id", "value": "Luís Gonçalves",
                                       "lookup": {"tool_id": _tid(w, "search_customers"), "param": "name"}}  # fmt: skip
    assert {x["reason"] for x in t["pruning"]["removed"]} >= {"answer_present"}


def test_a_part_of_the_stated_name_is_no_answer(demo):
    """'What is the last name of Leonie Köhler?' states its answer."""
    w = _world(demo, "music", MUSIC_EDGES, [])
    a, b = _tid(w, "get_customer"), _tid(w, "list_customer_invoices")
    shape = {"parts": [{"kind": "value", "field": "last_name"}, {"kind": "count"}]}
    with pytest.raises(Rejection) as e:
        asyncio.run(T.sem_trajectory(w, a, "customer_id", b, "customer_id", {"customer_id": 2}, None, shape=shape))
    assert e.value.reason == "answer_in_query" and "Köhler" in e.value.detail


def test_a_substring_search_picks_the_equal_name_with_an_eq_node(demo):
    """search_artists('Santana') also finds 'Santana Feat. Eric Clapton' and seven more."""
    w = _world(demo, "music", MUSIC_EDGES, [])
    g = asyncio.run(_ground(w, [("list_artist_albums", {"artist_id": 59})]))
    (step,) = g.steps
    assert step.fetched.total == 9 and g.args == [{"artist_id": 59}]
    assert step.junction["process"]["operator"] == "eq" and step.junction["process"]["n_in"] == 9
    assert step.junction["type"] == "SEQ" and step.junction["n"] == 1


def test_a_name_whose_search_also_finds_another_artist_with_albums_is_ambiguous(demo):
    """Blind read s11 (en #15, conversations #17): search_artists('Battlestar Galactica') also finds 'Battlestar
    Galactica (Classic)' (1 album), so 'how many albums has Battlestar Galactica' is 2 or 3 depending on the
    reading: rejected. Aerosmith's other match ('Aerosmith & Sierra Leone's Refugee Allstars') has no album, and
    Santana's collaborations none either: they change nothing and the exact record is picked."""
    w = _world(demo, "music", MUSIC_EDGES, [])
    with pytest.raises(Rejection) as e:
        asyncio.run(_ground(w, [("list_artist_albums", {"artist_id": 147})]))
    assert e.value.reason == "ambiguous_name" and "'Battlestar Galactica (Classic)'" in e.value.detail
    g = asyncio.run(_ground(w, [("list_artist_albums", {"artist_id": 3})]))
    assert g.label(0, "artist_id") == "Aerosmith" and g.steps[0].junction["process"]["n_in"] == 2


def test_a_name_that_picks_several_records_is_ambiguous_and_a_unique_one_resolves(demo):
    w = _world(demo, "music", MUSIC_EDGES, [("list_playlist_tracks", {"playlist_id": i}) for i in (1, 12)])
    tid = _tid(w, "list_playlist_tracks")
    assert w.drawable(tid) == [{"playlist_id": 1}, {"playlist_id": 12}]
    with pytest.raises(Rejection) as e:  # playlists 1 and 8 are both called 'Music'
        asyncio.run(_ground(w, [("list_playlist_tracks", {"playlist_id": 1})]))
    assert e.value.reason == "ambiguous_name" and "'Music'" in e.value.detail
    assert w.drawable(tid) == [{"playlist_id": 12}]  # never drawn again
    g = asyncio.run(_ground(w, [("list_playlist_tracks", {"playlist_id": 12})]))
    assert g.label(0, "playlist_id") == "Classical" and g.thresholds == ["Classical"]
    assert g.seeds[0]["value"] == "Classical" and g.seeds[0]["via"]["picked"]  # sent to no call: picked by name


def test_one_listing_call_names_both_compared_playlists(demo):
    """A CMP of two playlists: list_playlists is called once and picks each name with its own eq node."""
    w = _world(demo, "music", MUSIC_EDGES, [])
    targets = [("list_playlist_tracks", {"playlist_id": 12}), ("list_playlist_tracks", {"playlist_id": 16})]
    g = asyncio.run(_ground(w, targets))
    assert [[f.tool_id.rsplit("/", 1)[1] for f in st] for st in g.stages()] == [["list_playlists"]]
    assert [j["process"]["threshold"] for j in g.junctions] == ["Classical", "Grunge"]
    assert g.args == [{"playlist_id": 12}, {"playlist_id": 16}]


def test_an_internal_key_without_a_lookup_is_an_internal_seed_rejection(demo):
    w = _world(demo, "music", MUSIC_EDGES, [])
    with pytest.raises(Rejection) as e:
        asyncio.run(_ground(w, [("list_invoice_lines", {"invoice_id": 98})]))
    assert e.value.reason == "internal_seed" and "invoice_id=98" in e.value.detail


# --------------------------------------------------------------------------- metadata


def test_grounding_counts_in_metadata():
    looked = {"name": "AC/DC", "target": 0, "depth": 0, "from": "a.x", "to": "b.y"}
    nested = {"name": "AC/DC", "target": None, "depth": 1, "from": "c.x", "to": "a.z"}
    traj = {"category": "SEQ", "template": "chain", "pattern": "SEQ", "tools": [], "calls": 2, "steps": 2,
            "golden_actions": [], "junctions": [], "answer": {"value": 1}, "describe": {}, "state_changing": False}  # fmt: skip
    value = {
        "trajectories": [{**traj, "lookups": [looked, nested]}, {**traj, "lookups": []}],
        "rejected": [{"reason": "internal_seed", "detail": ""}, {"reason": "ambiguous_name", "detail": ""}] * 2,
        "admits": {},
        "degeneracy": {},
        "grounding": {"name_first": True, "seeds_dropped_internal": 7},
    }
    g = T.trajectory_metadata(value)["name_first"]
    assert g["seeds_resolved_by_lookup"] == 1 and g["nested_lookups"] == 1 and g["trajectories_with_lookup"] == 1
    assert g["lookup_share"] == 0.5 and g["seeds_dropped_internal"] == 7
    assert g["rejected"] == {"internal_seed": 2, "ambiguous_name": 2, "unnamed_code": 0}
    assert T.trajectory_metadata(value)["rejections_by_reason"]["ambiguous_name"] == 2
