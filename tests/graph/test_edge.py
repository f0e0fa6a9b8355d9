"""The typed graph edge: its stored form is the dict the graph stages always stored."""

import json

import pytest
from pydantic import ValidationError

from factory.graph.edge import OPTIONAL_KEYS, Edge, parse_edges
from factory.io import dumps


def _stored() -> dict:
    """A skeleton edge as `build_skeleton` stores it (before the loop ran)."""
    return {
        "edge_id": "sha256:ab",
        "source_tool": "search_artists",
        "source_domain": "music",
        "source_platform": "chinook-store",
        "source_tool_id": "music/chinook-store/search_artists",
        "target_tool": "list_albums",
        "target_domain": "music",
        "target_platform": "chinook-store",
        "target_tool_id": "music/chinook-store/list_albums",
        "cross_domain": False,
        "similarity": 0.8123,
        "bindings": [{"target_param": "artist_id", "source_field": "artist_id", "transform": None}],
        "plan": {"artist_id": {"kind": "UPSTREAM", "field": "artist_id", "transform": None}},
        "feasibility": 0.9,
        "reason": "the artist id names the albums' artist",
        "alpha": 4.6,
        "beta": 1.4,
        "prior_alpha": 4.6,
        "prior_beta": 1.4,
        "trials": 0,
        "successes": 0,
        "outcome_counts": {},
        "status": "retained",
        "pruned_at_iteration": None,
        "cache": [],
        "proposal_provenance": {"implementation": "rules"},
    }


def test_stored_form_round_trips_exactly_and_optional_keys_stay_absent_until_set():
    raw = _stored()
    e = Edge.model_validate(raw)
    assert e.to_json() == raw and e.model_dump(mode="json") == raw
    assert "pruned_at_iteration" in e.to_json()  # a null that was always stored stays
    assert not set(OPTIONAL_KEYS) & set(e.to_json())
    e.posterior_mean, e.prob_above_tau = 0.7667, 0.9
    e.eval_trials, e.eval_successes = 1, 0
    out = e.to_json()
    assert {k: out[k] for k in OPTIONAL_KEYS} == {
        "posterior_mean": 0.7667,
        "prob_above_tau": 0.9,
        "eval_trials": 1,
        "eval_successes": 0,
    }
    assert Edge.model_validate(out).to_json() == out
    # the checkpoint path (factory.io.dumps of Edge objects) writes the same JSON as the dicts
    assert json.loads(dumps({"edges": [e]})) == {"edges": [out]}


def test_unknown_or_missing_keys_are_errors():
    with pytest.raises(ValidationError, match="not_a_key"):
        Edge.model_validate({**_stored(), "not_a_key": 1})
    raw = _stored()
    del raw["target_tool_id"]
    with pytest.raises(ValidationError, match="target_tool_id"):
        Edge.model_validate(raw)
    with pytest.raises(ValidationError, match="status"):
        Edge.model_validate({**_stored(), "status": "maybe"})


def test_parse_edges_parses_dicts_and_keeps_edges():
    e = Edge.model_validate(_stored())
    parsed = parse_edges([_stored(), e])
    assert parsed[1] is e and parsed[0] == e and isinstance(parsed[0], Edge)
    assert parsed[0].target_tool_id == "music/chinook-store/list_albums"
    assert parsed[0].bindings[0]["source_field"] == "artist_id"


def test_every_field_is_described():
    assert all(f.description for f in Edge.model_fields.values())
