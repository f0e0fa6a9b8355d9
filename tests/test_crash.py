"""Crash safety: kill -9 a real `dagster asset materialize` midway, re-run, compare with an uninterrupted run.

Outputs are compared by row counts and content hashes, leaving out only what is legitimately
run-specific (per-call wall time). Faults are switched off so both runs see the same service.
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg

from factory.config import load_config
from factory.definitions import build_definitions
from factory.demo.service import DemoService
from factory.io import Store, artifact_exists, read_artifact
from sensors.drift import RESYNTHESIS_JOB
from tests.conftest import write_config

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DOMAIN = "korea"
ASSETS = ["tool_inventory", "tool_probes"]
RUN_SPECIFIC = {"elapsed_ms", "attempts"}  # wall time; a retry under load (attempts 2 instead of 1) is timing


def _env(home: Path, cfg: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return {**os.environ, "DAGSTER_HOME": str(home), "FACTORY_CONFIG": str(cfg), "HF_HUB_OFFLINE": "1"}


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in RUN_SPECIFIC}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _row_diff(a: Path, b: Path) -> list[str]:
    """The first rows (and fields) in which the two runs' tool_probes differ: the failure message."""
    ra, rb = (_strip(read_artifact(Store(d), "tool_probes", DOMAIN)).get("rows") or [] for d in (a, b))
    out = []
    for i, (x, y) in enumerate(zip(ra, rb, strict=False)):
        fields = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
        if fields:
            out.append(
                f"row {i} ({x.get('tool')}): " + "; ".join(f"{k}: {x.get(k)!r:.80} vs {y.get(k)!r:.80}" for k in fields)
            )
    return out[:5] or [f"{len(ra)} vs {len(rb)} rows; other keys differ"]


def _digest(data: Path) -> dict[str, tuple[int, str]]:
    """asset -> (rows, sha256 of the canonical content without run-specific fields)."""
    out = {}
    for asset in ASSETS:
        value = read_artifact(Store(data), asset, DOMAIN)
        rows = value.get("rows", value.get("tools"))
        text = json.dumps(_strip(value), sort_keys=True, ensure_ascii=False)
        out[asset] = (len(rows), hashlib.sha256(text.encode()).hexdigest())
    return out


def _visible_outputs(data: Path) -> list[Path]:
    return [p for p in data.rglob("*") if p.is_file() and not p.name.startswith(".tmp-")]


def test_kill9_midway_then_rerun_matches_an_uninterrupted_run(tmp_path):
    base = load_config().model_dump(mode="json")
    demo = {**base["demo"], "faults": {}}
    for sub in ("crashed", "clean"):
        (tmp_path / sub).mkdir()
    crashed_cfg = write_config(tmp_path / "crashed", demo=demo)
    port = load_config(crashed_cfg).demo.port
    clean_cfg = write_config(tmp_path / "clean", demo=demo, port=port)
    crashed_data, clean_data = tmp_path / "crashed" / "data", tmp_path / "clean" / "data"
    cmd = [
        BIN / "dagster",
        "asset",
        "materialize",
        "--select",
        ",".join(ASSETS),
        "--partition",
        DOMAIN,
        "-m",
        "factory.definitions",
    ]
    env = _env(tmp_path / "crashed" / "home", crashed_cfg)
    # a fresh DAGSTER_HOME has no `domain` partitions (loading the code location writes nothing)
    subprocess.run([BIN / "factory", "sync-partitions"], cwd=ROOT, env=env, capture_output=True, check=True)
    cfg = load_config(clean_cfg)
    with DemoService(cfg.demo, log_dir=tmp_path / "logs"):
        # 1. kill -9 once the first asset is on disk (the second one is executing its calls)
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + 240
        while (
            not artifact_exists(Store(crashed_data), "tool_inventory", DOMAIN)
            and proc.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        assert proc.poll() is None, f"finished before it could be killed: {proc.stderr.read().decode()[-2000:]}"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        for p in _visible_outputs(crashed_data):  # nothing half-written is visible
            if p.suffix == ".json":
                json.loads(p.read_text())
        assert not artifact_exists(Store(crashed_data), "tool_probes", DOMAIN)

        # 2. re-run the same command
        res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]

        # 3. an uninterrupted run of the same assets
        defs = build_definitions(str(clean_cfg))
        with dg.instance_for_test() as instance:
            instance.add_dynamic_partitions("domain", [DOMAIN])
            job = defs.resolve_job_def(RESYNTHESIS_JOB)
            keys = [dg.AssetKey(a) for a in ASSETS]
            assert job.execute_in_process(partition_key=DOMAIN, instance=instance, asset_selection=keys).success

    crashed, clean = _digest(crashed_data), _digest(clean_data)
    assert crashed == clean, _row_diff(crashed_data, clean_data)
    assert crashed["tool_probes"][0] > 0 and crashed["tool_inventory"][0] > 0
    # one file per asset partition: no duplicates under other names
    assert sorted(p.relative_to(crashed_data).as_posix() for p in _visible_outputs(crashed_data)) == sorted(
        p.relative_to(clean_data).as_posix() for p in _visible_outputs(clean_data)
    )
