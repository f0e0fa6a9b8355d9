"""Shared helpers of the export and lineage tests."""

import hashlib
import json
import re
from pathlib import Path
from typing import Any

# the demo service's key format (factory/demo/framework.py: `<platform prefix>-<24 hex>`), and any
# similar one: a match anywhere in an export file is a leaked key
KEY_RE = re.compile(r"\b[a-z]{2,4}-[0-9a-f]{24}\b")


def fake_splits(world, domains: list[str] | None = None) -> dict[str, Any]:
    """A dataset_splits-shaped value from the fixture's generated_queries (split by id hash), for testing the
    export core on its own; the real chain is materialized in test_exports_asset.py."""
    rows = [t for d in domains or world.cfg.domain_names for t in world.load("generated_queries", d)["tasks"]]
    # in id-hash order, 6 of every 10 to train, 2 to dev, 2 to test: every split has tasks (a hash per task
    # alone left dev empty for some sets of ids)
    rows.sort(key=lambda t: hashlib.sha256(t["id"].encode()).hexdigest())
    tasks = [{**t, "split": "train" if i % 10 < 6 else "dev" if i % 10 < 8 else "test"} for i, t in enumerate(rows)]
    return {
        "tasks": tasks,
        "removed": [],
        "splits": {},
        "contamination": {"collisions": 0},
        "overlap": {},
        "env_lock": {"lock": "sha256:test"},
        "files": {},
    }


def inventories(world) -> dict[str, Any]:
    return {d: world.load("tool_inventory", d) for d in world.cfg.domain_names}


def make_executor(world):
    from factory.tools.registry import ToolRegistry, executor_factory

    cfg = world.cfg
    return executor_factory(cfg, cfg.domain_names, ToolRegistry.from_inventories(inventories(world)), scan=True)


def export_files(root: str | Path) -> list[Path]:
    return sorted(p for p in Path(root).rglob("*") if p.is_file())


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def ensure_chain(world) -> dict[str, Any]:
    """judged_queries (every domain) → dataset_splits → dataset_exports materialized for real, once per
    session (shared by tests/export and tests/test_lineage.py). Returns {asset: ExecuteInProcessResult}."""
    cached = getattr(world, "_export_chain", None)
    if cached is not None:
        return cached
    results: dict[str, Any] = {}
    for d in world.cfg.domain_names:
        res = world.materialize(["judged_queries"], d)
        assert res.success, f"judged_queries {d} failed"
        results[f"judged_queries/{d}"] = res
    res = world.materialize(["dataset_splits"])
    assert res.success, "dataset_splits failed"
    results["dataset_splits"] = res
    res = world.materialize(["dataset_exports"])
    assert res.success, "dataset_exports failed"
    results["dataset_exports"] = res
    world._export_chain = results
    return results
