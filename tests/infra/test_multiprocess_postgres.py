"""A whole `factory run` of two domains with Dagster's multiprocess executor and PostgreSQL run/event storage.

The user's side of it: `$DAGSTER_HOME/dagster.yaml` naming the PostgreSQL storage (README, Running on your
infrastructure) and `orchestration: {executor: multiprocess, parallel_domains: 2}` in factory.yaml. The test
starts a private PostgreSQL (tests/test_postgres.py's fixture), runs the real CLI in a subprocess, and checks
in PostgreSQL that every stage's runs succeeded, that the two domains' runs of a stage overlapped in time, and
that each run's steps executed in processes of their own.
"""

import json
import os
import subprocess
import sys

import dagster as dg
import pytest
import yaml

from factory.config import load_config
from factory.io import read_artifact
from factory.resources import PID_TAG
from tests.conftest import free_port, write_config
from tests.test_postgres import postgres  # noqa: F401  (the fixture)

DOMAINS = ["music", "korea"]
PER_DOMAIN_JOBS = ["domain_ingestion", "domain_synthesis", "domain_corpus", "domain_retrieval"]
GLOBAL_JOBS = ["global_catalog", "global_dataset", "global_release"]


def _overlap(a: dg.RunRecord, b: dg.RunRecord) -> bool:
    return bool(a.start_time and b.start_time and a.end_time and b.end_time) and (
        a.start_time < b.end_time and b.start_time < a.end_time
    )


# 311 s on 2 cores at load 2-7 (21.5 min at load ~15; over 54 min before the run workers were kept and the fork
# server preloaded the step libraries): in CI's `make test-slow`, and in `make test-infra`
@pytest.mark.slow
@pytest.mark.infra
def test_factory_run_two_domains_multiprocess_on_postgres(tmp_path, postgres):  # noqa: F811
    base = load_config().model_dump(mode="json")
    domains = [d for d in base["domains"] if d["name"] in DOMAINS]
    graph = {**base["graph"], "iterations": 3, "paths_per_iteration": 20, "eval_trials_per_edge": 0}
    synthesis = {**base["synthesis"], "per_pattern": 2, "attempts": 70}
    orchestration = {"executor": "multiprocess", "parallel_domains": 2, "max_concurrent": 2}
    path = write_config(
        tmp_path,
        domains=domains,
        graph=graph,
        synthesis=synthesis,
        orchestration=orchestration,
        demo={**base["demo"], "faults": {}, "port": free_port()},  # never the project's demo port
    )
    home = tmp_path / "home"
    home.mkdir()
    instance_yaml = {
        "telemetry": {"enabled": False},
        "storage": {
            "postgres": {
                "postgres_db": {
                    "username": "postgres",
                    "hostname": "127.0.0.1",
                    "port": postgres,
                    "db_name": "postgres",
                    "scheme": "postgresql+psycopg2",
                }
            }
        },
    }
    (home / "dagster.yaml").write_text(yaml.safe_dump(instance_yaml), encoding="utf-8")
    env = {**os.environ, "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    env.pop("FACTORY_CONFIG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "factory.cli", "--config", str(path), "run", "--domains", ",".join(DOMAINS)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, (proc.stdout[-4000:], proc.stderr[-4000:])
    assert "executor multiprocess: 2 domain run(s) at a time" in proc.stdout

    cfg = load_config(path)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        records = instance.get_run_records()
        by_job: dict[str, dict[str, dg.RunRecord]] = {}
        for r in records:
            by_job.setdefault(r.dagster_run.job_name, {})[r.dagster_run.tags.get("dagster/partition", "")] = r
        assert all(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in records)
        for job in PER_DOMAIN_JOBS:
            assert sorted(by_job[job]) == sorted(DOMAINS), job
        for job in GLOBAL_JOBS:
            assert list(by_job[job]) == [""], job
        # the two domains ran side by side: each per-domain stage's two runs overlap in time
        assert _overlap(by_job["domain_synthesis"]["music"], by_job["domain_synthesis"]["korea"])
        # every step in a process of its own, none in the process that ran `factory run`
        for d in DOMAINS:
            run = by_job["domain_synthesis"][d].dagster_run
            starts = [
                e for e in instance.all_logs(run.run_id) if e.dagster_event and e.dagster_event.is_step_start
            ]  # fmt: skip
            pids = {e.dagster_event.pid for e in starts}
            assert len(starts) >= 5 and len(pids) == len(starts), (d, len(starts), pids)
            assert int(run.tags[PID_TAG]) not in pids
            for asset in ("judged_queries", "trajectories"):
                recs = instance.fetch_materializations(
                    dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[d]), limit=5
                )
                assert len(recs.records) == 1, (asset, d)

    import sqlalchemy as sa

    engine = sa.create_engine(f"postgresql+psycopg2://postgres@127.0.0.1:{postgres}/postgres")
    with engine.connect() as conn:
        n_runs = conn.execute(sa.text("select count(*) from runs where status = 'SUCCESS'")).scalar()
        assert n_runs == len(PER_DOMAIN_JOBS) * len(DOMAINS) + len(GLOBAL_JOBS)
    engine.dispose()

    splits = read_artifact(cfg, "dataset_splits")
    assert {t.get("domain") for t in splits.get("tasks") or []} >= set(DOMAINS), json.dumps(splits)[:500]
    assert (tmp_path / "data" / "exports" / "LATEST.json").exists()
