"""The conversations asset materialized for real on the synthesized demo world, then exported (slow: it plays
every conversation task against the live demo tools)."""

import json
from pathlib import Path

import pytest

from tests.export.helpers import ensure_chain


@pytest.mark.slow
def test_conversations_asset_audits_and_exports(synth_world):
    ensure_chain(synth_world)
    res = synth_world.materialize(["conversations"])
    assert res.success
    checks = {e.asset_check_key.name: e for e in res.get_asset_check_evaluations()}
    assert checks["conversations_contract"].passed, checks["conversations_contract"].metadata
    value = synth_world.load("conversations")
    tasks = value["tasks"]
    # every conversation is replayed by the oracle; an error-recovery copy (`recovers`: its original) is published
    # in place of its original (beside it, the two read as duplicates)
    originals = [t for t in tasks if not t.get("recovers")]
    assert originals and value["audit"]["episodes"] >= len(tasks)
    assert all(t["recovers"] not in {o["id"] for o in originals} for t in tasks if t.get("recovers"))
    # published tasks pass the oracle audit with no simulator fault
    assert all(t["oracle_audit"]["goal_success"] and t["oracle_audit"]["sim_faults"] == 0 for t in tasks)
    kinds = {t["case_pattern"] for t in tasks}
    assert {"no_call", "multi_turn"} <= kinds and kinds & {"sequential", "parallel"}
    state = [t for t in tasks if t["success_criteria"]["terminal_state"]]
    assert state and all(
        v.startswith("sha256:") for t in state for v in t["success_criteria"]["terminal_state"].values()
    )
    splits = {t["id"]: t["split"] for t in synth_world.load("dataset_splits")["tasks"]}
    assert all(t["split"] == splits[t["source_task_id"]] for t in tasks if t["source_task_id"] in splits)
    assert value["simulator"]["role"] == "user_simulator"

    res = synth_world.materialize(["dataset_exports"])
    assert res.success
    gate = {e.asset_check_key.name: e for e in res.get_asset_check_evaluations()}["dataset_exports_read_back"]
    assert gate.passed, gate.metadata
    manifest = synth_world.load("dataset_exports")
    root = Path(manifest["manifest"]).parent  # the published folder
    files = manifest["conversations_benchmark"]
    exported = sum(json.loads((root / f"conversations/benchmark/{s}.json").read_text("utf-8"))["count"] for s in files)
    assert exported == len(tasks)
