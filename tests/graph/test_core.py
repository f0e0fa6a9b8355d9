"""Unit tests of the graph core: posteriors, plans, knowledge graph, skeleton bad input."""

import numpy as np
import pandas as pd
import pytest

from factory.config import GraphConfig, KGConfig, load_config
from factory.graph import plan as plans
from factory.graph.edge import Edge
from factory.graph.posterior import EMPTY_RESULT, apply_outcome, prior, prob_above, should_prune
from factory.graph.skeleton import build_skeleton, edges_frame
from factory.kg.graph import KnowledgeGraph, entity_type, triples_frame
from factory.llm import rules
from factory.llm.schemas import Binding, EdgeProposal
from factory.tools.registry import ToolRegistry
from factory.tools.spec import GenericParams, KeyAcquisition, OutputField, SourceRef, ToolSpec

G = GraphConfig()


def _edge(s: float) -> Edge:
    a, b = prior(s, G.kappa)
    return Edge(
        edge_id="e", source_tool="u", source_domain="d", source_platform="p", source_tool_id="d/p/u",
        target_tool="v", target_domain="d", target_platform="p", target_tool_id="d/p/v", cross_domain=False,
        similarity=0.5, bindings=[], plan={}, feasibility=s, reason="", alpha=a, beta=b, prior_alpha=a, prior_beta=b,
        proposal_provenance={},
    )  # fmt: skip


def test_prior_and_table7_updates():
    assert prior(1.0, 2.0) == (3.0, 1.0) and prior(0.0, 2.0) == (1.0, 3.0)
    e = _edge(0.5)
    apply_outcome(e, "semantic_success", G)
    apply_outcome(e, "generic_only_success", G)
    apply_outcome(e, "schema_mismatch", G)
    apply_outcome(e, "rate_limit", G)
    apply_outcome(e, EMPTY_RESULT, G)
    assert e.alpha == pytest.approx(2.0 + 1.3) and e.beta == pytest.approx(2.0 + 1.5 + 0.1 + 1.0)
    assert e.trials == 5 and e.successes == 2 and e.outcome_counts["rate_limit"] == 1


def test_prune_rule_needs_n_min_and_low_posterior():
    e = _edge(0.1)  # a low prior alone never prunes: zero trials
    assert prob_above(e.alpha, e.beta, 0.5) < G.epsilon_prune and not should_prune(e, G)
    apply_outcome(e, "schema_mismatch", G)
    assert not should_prune(e, G)  # 1 trial < n_min
    apply_outcome(e, "schema_mismatch", G)
    assert should_prune(e, G)


def test_environmental_noise_does_not_prune_a_good_edge():
    """A correct edge (s=0.8) hit by rate limits and server errors 1 time in 3 stays."""
    e = _edge(0.8)
    rng = np.random.default_rng(0)
    for _ in range(60):
        apply_outcome(
            e,
            str(rng.choice(["rate_limit", "server_error", "timeout"])) if rng.random() < 1 / 3 else "semantic_success",
            G,
        )
        assert not should_prune(e, G)
    bad = _edge(0.9)  # structural failures prune even a high prior within a few trials
    while not should_prune(bad, G) and bad.trials < 10:
        apply_outcome(bad, EMPTY_RESULT, G)
    assert should_prune(bad, G) and bad.trials <= 4


def _spec(name, params=None, required=(), outputs=(), key=None, key_tool=False, platform="p", domain="d"):
    props = {p: {"type": t} for p, t in (params or {}).items()}
    if key:
        props[key] = {"type": "string"}
    return ToolSpec(
        domain=domain,
        platform=platform,
        name=name,
        description=f"{name.replace('_', ' ')}",
        input_schema={"type": "object", "properties": props, "required": list(required) + ([key] if key else [])},
        output_fields={o: OutputField(name=o) for o in outputs},
        generic_params=GenericParams(key=key, page="page" if "page" in props else None),
        key_acquisition=KeyAcquisition(output_field="api_key") if key_tool else None,
        source=SourceRef(kind="openapi", locator="x"),
    )


SRC = _spec("search_airlines", {"name": "string"}, ["name"], ["carrier", "name"], key="api_key")
TGT = _spec(
    "list_flights", {"carrier": "string", "date": "string", "page": "integer"}, ["date"], ["flight_id"], key="api_key"
)


def test_bindings_validated_and_plan_compiled():
    kept, dropped = plans.validate_bindings(
        SRC,
        TGT,
        [
            {"target_param": "carrier", "source_field": "carrier"},
            {"target_param": "carrier", "source_field": "name"},  # bound twice
            {"target_param": "api_key", "source_field": "carrier"},  # key never bound
            {"target_param": "airline", "source_field": "carrier"},  # no such input
            {"target_param": "date", "source_field": "departure"},  # no such output
        ],
    )
    assert kept == [{"target_param": "carrier", "source_field": "carrier", "transform": None}] and len(dropped) == 4
    plan = plans.compile_plan(TGT, kept, {"date": ["2013-01-05"]})
    assert plan == {
        "carrier": {"kind": "UPSTREAM", "field": "carrier", "transform": None},
        "date": {"kind": "CLARIFY", "candidates": ["2013-01-05"], "required": True},
        "page": {"kind": "DEFAULT", "value": 1},
    }
    assert plans.fill_args(plan, {"carrier": "DL"}) == {"carrier": "DL", "date": "2013-01-05", "page": 1}
    assert plans.fill_args(plan, {"name": "Delta"}) is None
    assert plans.apply_transform("2013-01-05", "date:YYYYMMDD") == "20130105"
    assert plans.apply_transform("12.0", "to_number") == 12 and plans.apply_transform("x", "nope") == "x"
    assert plans.edge_id("a", "b", kept) == plans.edge_id("a", "b", list(reversed(kept)))


def test_knowledge_graph_values_types_and_provenance():
    kg = KnowledgeGraph("d", KGConfig())
    kg.add_call(
        domain="d",
        platform="p",
        tool="search_airlines",
        args={"name": "Delta", "api_key": "<KEY>"},
        records=[{"carrier": "DL", "name": "Delta Air Lines Inc."}],
        call_digest="sha256:1",
        ok=True,
        origin="probe",
        generic={"api_key"},
    )
    kg.add_call(
        domain="d", platform="p", tool="x", args={"q": 1}, records=[], call_digest="sha256:2", ok=True, origin="path"
    )
    assert kg.values_for("d/p/search_airlines", "name") == ["Delta", "Delta Air Lines Inc."]
    assert kg.values_for("d/p/list_flights", "carrier") == ["DL"]  # same-named field of the domain
    assert kg.values_for("e/p/list_flights", "carrier") == []  # another domain's carrier is another thing
    assert entity_type("carrier", "DL") == "code" and entity_type("date", "2013-01-05") == "date"
    assert entity_type("sigunguNm", "종로구") == "name" and entity_type("seats", 149) == "number"
    value = kg.to_value("fp")
    preds = {t["predicate"] for t in value["triples"]}
    assert preds == {"value_of", "accepted_by", "same_record"}
    frame = triples_frame(value)
    assert frame["subject_exists"].all() and frame["object_exists"].all() and frame["call_digest"].notna().all()
    again = KnowledgeGraph.from_value(value)
    assert again.values_for("d/p/list_flights", "carrier") == ["DL"] and again.digest() == kg.digest()


class _Res:
    def __init__(self, out, fallback=False):
        self.output, self.fallback, self.failure = out, fallback, None

    def provenance(self):
        return {"implementation": "test"}


def _inventory(tools):
    return {"d": {"domain": "d", "fingerprint": "sha256:x", "tools": [t.model_dump(mode="json") for t in tools]}}


def _catalog(tools):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "tool_id": [f"{t.domain}/{t.platform}/{t.name}" for t in tools],
            "embedding": [rng.normal(size=8).tolist() for _ in tools],
        }
    )


def test_skeleton_handles_bad_input_and_invalid_replies():
    cfg = load_config()
    no_out = _spec("ping", {"x": "string"}, ["x"], [], key="api_key")  # no outputs: never a source
    no_in = _spec("list_all", {}, [], ["carrier"], key="api_key")  # binds nothing: never a target
    key_tool = _spec("get_key", {}, [], ["api_key"], key_tool=True)
    tools = [SRC, TGT, no_out, no_in, key_tool]

    def propose(inputs):
        out = []
        for inp in inputs:
            if inp.source.name == "list_all" and inp.target.name == "search_airlines":
                out.append(_Res(None))  # the model failed, no fallback
            elif inp.target.name == "list_flights":  # a reply naming fields that do not exist
                out.append(
                    _Res(
                        EdgeProposal(
                            feasibility_score=0.9,
                            reason="r",
                            bindings=[
                                Binding(target_param="carrier", source_field="carrier"),
                                Binding(target_param="carrier_code", source_field="carrier"),
                                Binding(target_param="date", source_field="flight_date"),
                            ],
                        )
                    )
                )
            else:
                out.append(_Res(rules.edge_proposal(inp)))
        return out

    value, meta = build_skeleton("d", _inventory(tools), {}, _catalog(tools), cfg, propose)
    st = value["stats"]
    assert "ping" in st["tools_without_outputs"] and "list_all" in st["tools_without_inputs"]
    assert st["invalid_bindings"] == 4 and st["proposal_failures"] == 1  # 2 per list_flights proposal
    names = {(e["source_tool"], e["target_tool"]) for e in value["edges"]}
    assert ("search_airlines", "list_flights") in names and ("list_all", "list_flights") in names
    assert not any("get_key" in (s, t) for s, t in names) and not any(t in ("list_all", "ping") for _, t in names)
    for e in value["edges"]:
        assert e["feasibility"] >= cfg.graph.s_min and e["bindings"]
        assert e["alpha"] == pytest.approx(1 + 2 * e["feasibility"])
    frame = edges_frame(value, ToolRegistry.from_inventories(_inventory(tools)))
    assert frame["bindings_in_schemas"].all() and meta["invalid_bindings"] == 4


def test_blocked_retrieval_picks_the_same_pairs_as_the_per_source_loop():
    """Top-K by block matrix products = the per-source loop: same pairs, same order, same similarity,
    ties broken by target id (the embeddings are exact in binary, so every tie is a real tie)."""
    from factory.graph.skeleton import candidate_pairs

    rng = np.random.default_rng(3)
    tools = [
        _spec(f"t{i:03d}", {"code": "string"}, ["code"], ["code"], domain="d" if i % 3 else "x", platform=f"p{i % 4}")
        for i in range(90)
    ]
    vecs = []
    for _ in tools:  # four entries of ±0.5 in eight dimensions: unit norm, dot products exact
        v = np.zeros(8)
        v[rng.choice(8, size=4, replace=False)] = rng.choice([-0.5, 0.5], size=4)
        vecs.append(v.tolist())
    catalog = pd.DataFrame({"tool_id": [f"{t.domain}/{t.platform}/{t.name}" for t in tools], "embedding": vecs})
    specs = {f"{t.domain}/{t.platform}/{t.name}": t for t in tools}
    old, _ = candidate_pairs("d", specs, catalog, 5, 3, legacy=True)
    sims = [p[2] for p in old]
    assert len(sims) > len(set(sims)) * 3  # many ties to break
    for block in (1, 7, 512):
        new, _ = candidate_pairs("d", specs, catalog, 5, 3, block=block)
        assert new == old
    sources = {p[0] for p in old}
    assert len(old) == len(sources) * (5 + 3) and all(s != t for s, t, _, _ in old)
    # fewer targets than k: every one of them, best first
    few, _ = candidate_pairs("d", specs, catalog, 500, 1, block=16)
    assert few == candidate_pairs("d", specs, catalog, 500, 1, legacy=True)[0]
    assert sum(1 for p in few if not p[3]) == len(sources) * (len(sources) - 1)


def test_type_signature_prefilter_keeps_every_pair_a_binding_could_pass():
    """Issue 20: `type_feasible` rejects a pair only when no (field, parameter) of it can pass the type
    check: typed and accepted, a side unknown with the same name, or URIs ending in an id."""
    from factory.graph.skeleton import type_feasible
    from factory.semtypes import ValueTypes

    src = _spec("list_airlines", {}, [], ["carrier", "label"])
    links = _spec("list_links", {}, [], ["uri"])
    same = _spec("get_airline", {"carrier": "string"}, ["carrier"], ["name"])
    other = _spec("get_airport", {"faa": "string"}, ["faa"], ["name"])
    untyped_same_name = _spec("fleet", {"carrier": "string"}, ["carrier"], ["tailnum"])
    untyped_other_name = _spec("weather", {"station": "string"}, ["station"], ["temp"])
    by_uri = _spec("resource", {"resourceId": "string"}, ["resourceId"], ["name"])
    tools = [src, links, same, other, untyped_same_name, untyped_other_name, by_uri]
    tid = {t.name: f"d/p/{t.name}" for t in tools}
    types = ValueTypes(
        {
            tid["list_airlines"]: {"fields": {"carrier": "airline.code@p", "label": "airline.name"}},
            tid["get_airline"]: {"params": {"carrier": "airline.code@p"}},
            tid["get_airport"]: {"params": {"faa": "airport.code@p"}},
            tid["fleet"]: {"params": {"carrier": "unknown"}},
            tid["weather"]: {"params": {"station": "unknown"}},
            tid["resource"]: {"params": {"resourceId": "city.name"}},  # not an id: no URI tail fills it
        },
        {},
    )
    kg = KnowledgeGraph("d")
    for tool, rec in (("list_airlines", {"carrier": "DL", "label": "Delta"}), ("list_links", {"uri": "x://r/12"})):
        kg.add_call(
            domain="d", platform="p", tool=tool, args={}, call_digest=tool, ok=True, origin="probe", records=[rec]
        )  # fmt: skip
    specs = {tid[t.name]: t for t in tools}
    pairs = [(tid["list_airlines"], tid[n], 0.5, False) for n in ("get_airline", "get_airport", "fleet", "weather")]
    assert type_feasible(pairs, specs, types, kg).tolist() == [True, False, True, False]
    uri_pair = [(tid["list_links"], tid["resource"], 0.5, False)]
    assert type_feasible(uri_pair, specs, types, kg).tolist() == [False]
    types.tools[tid["resource"]] = {"params": {"resourceId": "unknown"}}  # untyped: the URI's id may fill it
    assert type_feasible(uri_pair, specs, types, kg).tolist() == [True]
    assert type_feasible(uri_pair, specs, types, KnowledgeGraph("d")).tolist() == [False]  # no URI observed


def test_skeleton_fast_admission_gives_the_legacy_edges_and_edge_ids():
    """The memoized admission writes the stored form `Edge(...).to_json()` gives, and the legacy path's
    edges; `edge_id` without `dumps` hashes the same canonical JSON (quotes, non-ASCII)."""
    import hashlib

    from factory.io import dumps

    cfg = load_config()
    tools = [
        SRC,
        TGT,
        _spec("get_airline", {"carrier": "string"}, ["carrier"], ["carrier", "name"], key="api_key"),
        _spec("search_flights", {"carrier": "string", "name": "string"}, [], ["carrier"], key="api_key"),
    ]

    def propose(inputs):
        return [_Res(rules.edge_proposal(i)) for i in inputs]

    new, _ = build_skeleton("d", _inventory(tools), {}, _catalog(tools), cfg, propose)
    old, _ = build_skeleton("d", _inventory(tools), {}, _catalog(tools), cfg, propose, legacy=True)
    assert new["edges"] and new["edges"] == old["edges"]
    assert all(Edge.model_validate(e).to_json() == e for e in new["edges"])
    asked = new["stats"]["candidates"] - new["stats"]["no_type_compatible_slots"]
    assert (
        sorted((r["source"], r["target"]) for r in new["rejected"])
        == sorted((r["source"], r["target"]) for r in old["rejected"])
        and asked <= old["stats"]["candidates"]
    )
    for src, tgt, bs in [
        ("d/p/a", "d/p/b", [{"target_param": "x", "source_field": "y"}]),
        ('한국/"p"/\\q', "t\u2028", [{"target_param": "é", "source_field": "y", "transform": "upper"}]),
        ("s", "t", []),
    ]:
        canon = sorted((b["target_param"], b["source_field"], b.get("transform") or "") for b in bs)
        want = "sha256:" + hashlib.sha256(dumps([src, tgt, canon]).encode()).hexdigest()
        assert plans.edge_id(src, tgt, bs) == want


def test_grouped_top_k_is_exact_with_ties_and_missing_scores(monkeypatch):
    """Issue 20: `_top_k` keeps only the k column groups of highest maximum; on rows full of ties and
    -inf it must still give the brute-force answer (best first, ties by column index)."""
    from factory.graph import skeleton

    monkeypatch.setattr(skeleton, "_GROUP", 4)  # groups of 4: the grouped path from 8·k·4 columns on
    rng = np.random.default_rng(5)
    grouped = 0
    for trial in range(40):
        n, k = int(rng.integers(100, 400)), int(rng.integers(1, 4))
        scores = rng.integers(0, 12 if trial % 2 else 1000, size=(9, n)).astype(np.float32)
        scores[rng.random(scores.shape) < 0.2] = -np.inf
        scores[0, 3:] = -np.inf  # fewer finite scores than k in some trials
        grouped += n >= 8 * k * 4
        got = skeleton._top_k(scores, k)
        for r in range(scores.shape[0]):
            idx = np.flatnonzero(np.isfinite(scores[r]))
            want = idx[np.lexsort((idx, -scores[r, idx]))][:k]
            assert got[r].tolist() == want.tolist(), (trial, r)
    assert grouped > 20


def test_lookups_only_knowledge_graph_keeps_the_same_lookups():
    """The skeleton's KG (`lookups_only`) holds the full KG's value lookups, and no entities."""
    from factory.graph.skeleton import seed_knowledge_graph

    cfg = load_config()
    spec = _spec("list_flights", {"carrier": "string", "page": "integer"}, [], ["carrier", "tailnum", "dest"])
    specs = {"d/p/list_flights": spec}
    rows = [
        {
            "platform": "p", "tool": "list_flights", "outcome": "semantic_success", "record_count": 3,
            "args": {"carrier": "DL", "page": 2},
            "first_record": {"carrier": "DL", "tailnum": "N1", "dest": "ATL", "nested": {"x": 1}},
            "sample_values": {"carrier": ["DL", "UA", "  "], "tailnum": ["N1", "N2", "N3"], "dest": ["ATL", "ATL"]},
            "call_digest": "c1",
        },
        {"platform": "p", "tool": "list_flights", "outcome": "not_found", "record_count": 0, "args": {"carrier": "ZZ"}},
    ]  # fmt: skip
    probes = {"d": {"rows": rows}}
    full = seed_knowledge_graph("d", specs, probes, cfg)
    lean = seed_knowledge_graph("d", specs, probes, cfg, lookups_only=True)
    assert full.entities and not lean.entities and not lean.triples
    for f in ("carrier", "tailnum", "dest", "nested"):
        assert lean.field_values("d/p/list_flights", f) == full.field_values("d/p/list_flights", f)
    for p in ("carrier", "page"):
        assert lean.accepted("d/p/list_flights", p) == full.accepted("d/p/list_flights", p)
        assert lean.values_for("d/p/list_flights", p) == full.values_for("d/p/list_flights", p)
    assert lean.field_values("d/p/list_flights", "tailnum") == ["N1", "N2", "N3"]
    assert lean.to_value()["lookups"] == full.to_value()["lookups"]


def test_no_cyclic_gc_restores_the_collector_state():
    import gc

    from factory.graph.skeleton import no_cyclic_gc

    was = gc.isenabled()
    try:
        gc.enable()
        with no_cyclic_gc():
            assert not gc.isenabled()
        assert gc.isenabled()
        gc.disable()
        with no_cyclic_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
        with pytest.raises(KeyError):
            with no_cyclic_gc():
                raise KeyError("x")
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_admission_keeps_each_proposals_own_candidate_values_and_types():
    """Issue 20: the admission memoizes the known values it adds after a proposal's CLARIFY candidates per equal
    proposal; proposals whose candidates are equal but typed differently (1, True, 1.0) must keep their own
    values, as the legacy path writes them (compared as JSON: 1 == True in Python)."""
    import json

    cfg = load_config()
    sources = [_spec(f"search_airlines_{i}", {"name": "string"}, ["name"], ["carrier", "name"]) for i in range(4)]
    tools = [*sources, TGT]
    given = {s.name: v for s, v in zip(sources, ([1], [True], [1.0], []), strict=True)}

    def propose(inputs):
        return [
            _Res(
                EdgeProposal(
                    feasibility_score=0.9,
                    reason="test",
                    bindings=[Binding(target_param="carrier", source_field="carrier")],
                    default_candidates={"date": given[i.source.name]} if i.target.name == TGT.name else {},
                )
            )
            for i in inputs
        ]

    new, _ = build_skeleton("d", _inventory(tools), {}, _catalog(tools), cfg, propose)
    old, _ = build_skeleton("d", _inventory(tools), {}, _catalog(tools), cfg, propose, legacy=True)
    assert json.dumps(new["edges"], sort_keys=True) == json.dumps(old["edges"], sort_keys=True)
    to_tgt = {e["source_tool"]: e["plan"]["date"]["candidates"] for e in new["edges"] if e["target_tool"] == TGT.name}
    assert len(to_tgt) == 4, sorted(to_tgt)
    assert [type(to_tgt[s.name][0]) for s in sources[:3]] == [int, bool, float] and to_tgt[sources[3].name] == []


def test_edge_proposal_input_pair_is_model_construct():
    """`EdgeProposalInput.pair` sets what `model_construct` sets: equal models, dumps and fields set."""
    from factory.llm.schemas import EdgeProposalInput, ToolBrief

    a, b = ToolBrief.from_spec(SRC), ToolBrief.from_spec(TGT)
    fast, slow = EdgeProposalInput.pair(a, b), EdgeProposalInput.model_construct(source=a, target=b)
    assert fast == slow and fast.model_dump() == slow.model_dump() and fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_fields_set == slow.model_fields_set == {"source", "target"}
    assert fast.source is a and fast.target is b and fast.__pydantic_extra__ is None
    assert fast != EdgeProposalInput.pair(b, a)
