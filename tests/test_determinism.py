"""Two identical clean runs give the same export version and byte-identical published files (issue 21, item 12).

One small demo domain (music: its store has stateful playlist tools), a few graph iterations, a small
synthesis; both runs start from an empty data folder and a fresh Dagster instance, against one demo
service that stays up between them (as for a user running twice), so demo state left by the first
run must not leak into the second. Published: the split release (the files its manifest lists, and
the manifest) and the export folder with its pointer; the stateful intermediates (knowledge graph,
trajectories) are compared byte for byte as well. Asset values that record their run (the lineage
run id, timings) are not published files.
"""

import hashlib
import json
import shutil

import dagster as dg
import pytest

from factory.config import load_config
from factory.definitions import build_definitions
from factory.demo.service import DemoService
from factory.io import read_artifact
from sensors.jobs import run_pipeline
from sensors.partitions import sync_domain_partitions
from tests.conftest import free_port, write_config

pytestmark = pytest.mark.slow


def _files(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


def _clean_run(tmp, port, domains):
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    base = load_config().model_dump(mode="json")
    graph = {**base["graph"], "iterations": 3, "paths_per_iteration": 20, "eval_trials_per_edge": 0}
    synthesis = {**base["synthesis"], "per_pattern": 2, "attempts": 70}
    path = write_config(tmp, port=port, domains=domains, graph=graph, synthesis=synthesis)
    cfg = load_config(path)
    defs = build_definitions(str(path))
    with dg.instance_for_test() as instance:
        sync_domain_partitions(instance, cfg.domain_names)
        staged = run_pipeline(defs, instance, cfg.domain_names, progress=lambda m: None)
    for (job, d), res in staged.items():
        assert res.success, f"{job}/{d} failed"
    exports = read_artifact(cfg, "dataset_exports")
    data = tmp / "data"
    splits = _files(data / "dataset_splits")
    release = json.loads((data / "dataset_splits" / "manifest.json").read_text(encoding="utf-8"))["files"]
    out = {
        "version": exports["version"],
        "pointer": (data / "exports" / "LATEST.json").read_bytes(),
        "exports": _files(data / "exports" / exports["version"]),
        "splits": {k: splits[k] for k in [*release, "manifest.json"]},
        "intermediates": {a: _files(data / a) for a in ("knowledge_graph", "trajectories")},
        "kg_entities": len(read_artifact(cfg, "knowledge_graph", "music").get("entities") or []),
        "tasks": sum(len(v.get("tasks") or []) for v in [read_artifact(cfg, "dataset_splits")]),
    }
    return out


def test_two_clean_runs_are_byte_identical(tmp_path):
    domains = [d for d in load_config().model_dump(mode="json")["domains"] if d["name"] == "music"]
    port = free_port()
    (tmp_path / "svc").mkdir()
    probe_cfg = load_config(write_config(tmp_path / "svc", port=port, domains=domains))
    with DemoService(probe_cfg.demo, log_dir=tmp_path / "logs"):
        a = _clean_run(tmp_path / "run", port, domains)
        b = _clean_run(tmp_path / "run", port, domains)
    assert a["tasks"] > 0 and a["splits"] and a["exports"] and a["kg_entities"] > 0
    assert a["kg_entities"] == b["kg_entities"]
    assert a["intermediates"] == b["intermediates"]
    assert a["splits"] == b["splits"]
    assert a["exports"] == b["exports"]
    assert (a["version"], a["pointer"]) == (b["version"], b["pointer"])
