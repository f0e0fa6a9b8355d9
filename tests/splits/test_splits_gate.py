"""Item 5 of issue 21 for dataset_splits: its files are staged and published only when every blocking
check of the run passed; a failing check leaves the previous release byte-identical.

Planted judged_queries / tool_inventory values (no demo service); the benchmark gate is made to fail
by replacing its rule for one run (the gating is what is tested, not the rule)."""

from pathlib import Path

import dagster as dg
import pytest

from factory.config import load_config
from factory.definitions import build_definitions
from factory.io import data_store, write_artifact
from factory.splits import build
from tests.conftest import write_config
from tests.splits.test_build import INV, world

DOMAINS = {"air": "p-air", "geo": "p-geo"}


def _plant(store, seed: int) -> None:
    for d, tasks in world(12, seed).items():
        write_artifact(store, "judged_queries", d, {"domain": d, "kept": tasks, "rejected": [], "counts": {}})
        write_artifact(store, "tool_inventory", d, INV[d])


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _checks(result) -> dict[str, bool]:
    return {e.asset_check_key.name: e.passed for e in result.get_asset_check_evaluations()}


@pytest.fixture()
def project(tmp_path):
    spec = tmp_path / "unused.json"  # never loaded: tool_inventory is planted
    spec.write_text("{}", encoding="utf-8")
    domains = [
        {"name": d, "sources": [{"kind": "openapi", "platform": p, "spec": str(spec)}]} for d, p in DOMAINS.items()
    ]
    path = write_config(tmp_path, domains=domains)
    return load_config(path), build_definitions(str(path))


def _materialize(defs, instance):
    job = defs.resolve_implicit_global_asset_job_def()
    return job.execute_in_process(
        instance=instance, asset_selection=[dg.AssetKey("dataset_splits")], raise_on_error=False
    )


def test_failing_splits_gate_leaves_the_last_release(project, monkeypatch):
    cfg, defs = project
    store = data_store(cfg)
    folder = Path(store.path(build.FOLDER))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("domain", list(DOMAINS))
        _plant(store, seed=0)
        good = _materialize(defs, instance)
        assert good.success and _checks(good) == {
            "dataset_splits_contract": True,
            "dataset_splits_benchmark_clean": True,
        }
        published = _files(folder)
        assert {"train.jsonl", "manifest.json", "env_lock.json", "__all__.json"} <= set(published)
        assert not (folder / ".staged").exists()  # published, nothing left behind

        # other tasks, and a benchmark gate that fails: nothing of the new release becomes visible
        _plant(store, seed=1)
        real = build.check_train_contamination
        monkeypatch.setattr(build, "check_train_contamination", lambda c, v: {**real(c, v), "passed": False})
        bad = _materialize(defs, instance)
        assert _checks(bad)["dataset_splits_benchmark_clean"] is False
        assert _files(folder) == published
        staged = (folder / ".staged" / bad.run_id / "files" / "train.jsonl").read_bytes()
        assert staged != published["train.jsonl"]  # the release that did not pass waits in the run's staging

        # the gate passes again: the new release is published as a whole, the failed run's staging swept
        monkeypatch.setattr(build, "check_train_contamination", real)
        again = _materialize(defs, instance)
        assert all(_checks(again).values())
        assert _files(folder)["train.jsonl"] == staged  # the same inputs: the release that failed before
        assert build.publish.verify(store, build.FOLDER) == []
        assert not (folder / ".staged").exists()
