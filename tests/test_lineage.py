"""`factory lineage` on a really materialized example: runs, asset versions from the Dagster instance, verdicts,
prompts, models; --json; a subprocess run; the dataset summary; clear errors with exit code 2."""

import json
import os
import subprocess
import sys
from collections import Counter

import dagster as dg

from factory.cli import main
from factory.paths import package_root
from tests.conftest import write_config
from tests.export.helpers import ensure_chain, read_jsonl


def _example(world):
    value = world.load("dataset_exports")
    rows = [r for e in value["openai_chat"].values() for r in read_jsonl(e["path"])]
    splits = {t["id"]: t for t in world.load("dataset_splits")["tasks"]}
    # prefer an example whose record carries verdicts and edges
    rows.sort(key=lambda r: (-len(splits[r["id"]]["lineage"]["verdicts"]), -len(splits[r["id"]]["lineage"]["edges"])))
    return splits[rows[0]["id"]]


def _latest(world, asset, partition=None):
    flt = dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition] if partition else None)
    rec = world.instance.fetch_materializations(flt, limit=1).records[0]
    return rec, rec.asset_materialization.tags


def test_lineage_of_one_example(synth_world, capsys):
    chain = ensure_chain(synth_world)
    task = _example(synth_world)
    lin = task["lineage"]
    rc = main(["--config", str(synth_world.path), "lineage", task["id"][7:21]])  # a unique prefix without sha256:
    out = capsys.readouterr().out
    assert rc == 0, out
    assert task["id"] in out and f"split {task['split']}" in out
    assert chain["dataset_exports"].run_id in out and chain["dataset_splits"].run_id in out
    assert chain[f"judged_queries/{task['domain']}"].run_id in out
    assert lin["run_id"] in out and "job " in out and "SUCCESS" in out
    assert lin["verdicts"] and all(v["check"] in out for v in lin["verdicts"])
    assert all(name in out and h in out for name, h in lin["prompts"].items())
    assert all(m["model"] in out for m in lin["models"].values())
    assert all(a["call_digest"][:23] in out for a in task["golden_actions"])
    for asset in ("generated_queries", "judged_queries", "trajectories", "tool_inventory"):
        _, tags = _latest(synth_world, asset, task["domain"])
        assert tags["dagster/code_version"] in out, asset
    _, tags = _latest(synth_world, "dataset_exports")
    assert tags["dagster/code_version"] in out


def test_lineage_json_and_subprocess(synth_world, capsys):
    ensure_chain(synth_world)
    task = _example(synth_world)
    assert main(["--config", str(synth_world.path), "lineage", task["id"], "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["id"] == task["id"] and c["status"] == "exported" and c["split"] == task["split"]
    assets = {(a["asset"], a["partition"]): a for a in c["assets"]}
    rec, tags = _latest(synth_world, "generated_queries", task["domain"])
    gq = assets[("generated_queries", task["domain"])]
    assert gq["data_version"] == tags["dagster/data_version"] and gq["run_id"] == rec.run_id
    names = [a["asset"] for a in c["assets"]]
    assert names.index("tool_inventory") < names.index("generated_queries") < names.index("judged_queries")
    assert names.index("judged_queries") < names.index("dataset_splits") < names.index("dataset_exports")
    assert {r["run_id"] for r in c["runs"]} >= {a["run_id"] for a in c["assets"]}
    assert len(c["verdicts"]) == len(task["lineage"]["verdicts"]) and len(c["calls"]) == len(task["golden_actions"])
    env = {**os.environ, "DAGSTER_HOME": str(synth_world.instance.root_directory)}
    proc = subprocess.run(
        [sys.executable, "-m", "factory.cli", "--config", str(synth_world.path), "lineage", task["id"][:20]],
        cwd=package_root(), env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert task["id"] in proc.stdout and gq["run_id"] in proc.stdout and "filter verdicts" in proc.stdout


def test_lineage_summary(synth_world, capsys):
    ensure_chain(synth_world)
    splits = synth_world.load("dataset_splits")
    assert main(["--config", str(synth_world.path), "lineage", "--summary", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["tasks"] == len(splits["tasks"]) and s["splits"] == dict(Counter(t["split"] for t in splits["tasks"]))
    assert s["env_lock"]["lock"] == splits["env_lock"]["lock"]
    assert {a["asset"] for a in s["assets"]} >= {"dataset_exports", "dataset_splits", "judged_queries"}
    assert main(["--config", str(synth_world.path), "lineage", "--summary"]) == 0
    out = capsys.readouterr().out
    assert "tasks per split / domain" in out and splits["env_lock"]["lock"] in out


def test_lineage_errors(synth_world, tmp_path, capsys):
    ensure_chain(synth_world)
    cfg = str(synth_world.path)
    assert main(["--config", cfg, "lineage", "0123456789abcdef0123"]) == 2
    assert "unknown example" in capsys.readouterr().err
    ids = sorted(t["id"][7:] for t in synth_world.load("dataset_splits")["tasks"])
    first = Counter(i[0] for i in ids).most_common(1)[0][0]
    assert main(["--config", cfg, "lineage", first]) == 2
    err = capsys.readouterr().err
    assert "ambiguous prefix" in err and sum(i.startswith(first) for i in ids) >= 2
    assert all(f"sha256:{i}" in err for i in [i for i in ids if i.startswith(first)][:15])
    empty = write_config(tmp_path)
    assert main(["--config", str(empty), "lineage", "abc"]) == 2
    assert "no dataset materialized yet" in capsys.readouterr().err
