"""Pure parts of ingestion: probe argument generation, frames, signature text."""

import random

import numpy as np

from factory import ingest
from factory.tools import argvalues
from factory.tools.spec import GenericParams, SourceRef, ToolSpec


def _tool(name, props, required=(), generic=None, **kw):
    return ToolSpec(
        domain="d",
        platform="p",
        name=name,
        description=f"{name} tool",
        input_schema={"type": "object", "properties": props, "required": list(required)},
        generic_params=generic or GenericParams(),
        source=SourceRef(kind="openapi", locator="x"),
        **kw,
    )


def test_pool_feeds_required_params_by_field_name():
    pool = argvalues.ValuePool()
    pool.add_records(
        [{"carrier": "DL", "name": "Delta Air Lines Inc."}, {"carrier": "AA", "name": "American Airlines"}]
    )
    t = _tool(
        "list_flights",
        {
            "carrier": {"type": "string"},
            "api_key": {"type": "string"},
            "page": {"type": "integer"},
            "per_page": {"type": "integer", "maximum": 100},
        },
        required=["carrier"],
        generic=GenericParams(key="api_key", page="page", page_size="per_page"),
    )
    assert argvalues.is_ready(t, pool) and not argvalues.missing_values(t, pool)
    sets = argvalues.probe_argument_sets(t, pool, 3, random.Random(0))
    assert sets[0] == {"carrier": "DL", "page": 1, "per_page": 10}
    assert all("api_key" not in s for s in sets)  # the executor injects keys
    assert {s["carrier"] for s in sets} <= {"DL", "AA"}


def test_search_params_use_first_word_of_observed_names_and_enums_come_first():
    pool = argvalues.ValuePool()
    pool.add_records([{"artist_name": "Led Zeppelin"}])
    t = _tool("find_artist", {"q": {"type": "string"}}, required=["q"])
    assert argvalues.probe_argument_sets(t, pool, 1, random.Random(0)) == [{"q": "Led"}]
    by_name = _tool("find_artist", {"name": {"type": "string"}}, required=["name"])
    assert argvalues.probe_argument_sets(by_name, pool, 1, random.Random(0)) == [{"name": "Led Zeppelin"}]
    e = _tool("by_kind", {"kind": {"type": "string", "enum": ["a", "b"]}}, required=["kind"])
    assert argvalues.probe_argument_sets(e, argvalues.ValuePool(), 2, random.Random(0))[0] == {"kind": "a"}


def test_unfillable_required_param_is_detected():
    t = _tool("get_plane", {"tailnum": {"type": "string"}}, required=["tailnum"])
    assert argvalues.missing_values(t, argvalues.ValuePool()) == ["tailnum"]


def test_integer_params_reject_text_values():
    pool = argvalues.ValuePool()
    pool.add_records([{"album_id": "abc"}, {"album_id": 7}])
    assert pool.lookup("album_id", {"type": "integer"}) == [7]


def test_probe_frames_flag_secrets_and_coverage():
    rows = [
        {"tool": "a", "platform": "p", "outcome": "semantic_success", "call_digest": "x", "args": {"k": "SECRET123"}},
        {"tool": "b", "platform": "p", "outcome": "auth_error", "call_digest": "y", "args": {}},
    ]
    df = ingest.probes_frame(rows, ["SECRET123"])
    assert df["secret_free"].tolist() == [False, True]
    cov = ingest.probes_by_tool_frame(rows, ["a", "b", "c"])
    assert cov["has_success"].tolist() == [1.0, 0.0, 0.0]


def test_catalog_embeds_every_tool_once():
    inv = {
        "d": {
            "platform_fingerprints": {"p": "sha256:1"},
            "tools": [_tool("a", {}).model_dump(), _tool("b", {"x": {"type": "string"}}).model_dump()],
        }
    }
    df, meta = ingest.build_catalog(inv, lambda texts: np.ones((len(texts), 4)))
    assert df["tool_id"].tolist() == ["d/p/a", "d/p/b"] and meta["embedding_dim"] == 4
    assert "Inputs: x (string)" in df["signature"][1]


def test_model_proposals_are_typed_and_a_rules_fallback_adds_nothing():
    from factory.llm.schemas import SourceArguments
    from factory.llm.service import RoleResult

    t = _tool(
        "by_kind",
        {"kind": {"type": "string", "enum": ["a", "b"]}, "n": {"type": "integer"}, "city": {"type": "string"}},
        required=["kind", "n"],
    )

    def result(args, fallback=False):
        return RoleResult(
            role="source_arguments",
            output=SourceArguments(args=args),
            implementation="rules" if fallback else "model",
            backend="local",
            model="m",
            fallback=fallback,
        )

    got = ingest._model_candidates(t, result({"kind": "c", "n": "7", "city": "Oslo", "other": "x"}))
    assert {p: [(c.value, c.source) for c in cs] for p, cs in got.items()} == {
        "n": [(7, "model")],
        "city": [("Oslo", "model")],
    }  # 'c' is not in the enum, 'other' is no input
    assert ingest._model_candidates(t, result({"kind": "a", "n": 1}, fallback=True)) == {}


def test_start_inputs_of_refinement_use_discovered_values_when_nothing_else_is_known():
    from factory.graph.refine import start_inputs
    from factory.kg.graph import KnowledgeGraph

    t = _tool(
        "get_current_time",
        {
            "timezone": {"type": "string", "description": "IANA timezone name (e.g., 'Asia/Seoul')."},
            "unit": {"type": "string", "examples": ["c"]},
        },
        required=["timezone", "unit"],
    )
    (inp,) = start_inputs([t.tool_id], {t.tool_id: t}, KnowledgeGraph("d"), 0)
    assert inp.known_values["timezone"][0] == "Asia/Seoul"
    assert "unit" not in inp.known_values  # the schema's examples reach the role through the tool brief


def test_coverage_frame_says_why_a_tool_was_never_called():
    rows = [{"tool": "a", "platform": "p", "outcome": "schema_mismatch"}]
    no_success = [{"tool": "b", "reason": "no value for tailnum", "calls": 0}]
    cov = ingest.probes_by_tool_frame(rows, ["a", "b", "c"], None, no_success)
    assert cov["why"].tolist() == ["schema_mismatch ×1", "not probed: no value for tailnum", "not probed"]
