"""Item 11 of issue 21: crash leftovers are cleaned up when a run starts.

A run whose process was killed (-9) stays STARTED forever in the instance, and leaves its staged
values and export staging folder behind; `clean_on_start` (called by `factory run`) marks it failed
and removes what it left.
"""

import subprocess
import sys

import dagster as dg

from factory.config import load_config
from factory.io import Store, stage_artifact
from factory.resources import HOST_TAG, PID_TAG, clean_on_start
from tests.conftest import write_config


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_orphan_run_is_marked_failed_and_its_leftovers_removed(tmp_path):
    import socket

    cfg = load_config(write_config(tmp_path))
    store = Store(tmp_path / "data")
    with dg.instance_for_test() as instance:
        tags = {PID_TAG: str(_dead_pid()), HOST_TAG: socket.gethostname()}
        killed = instance.add_run(
            dg.DagsterRun(job_name="domain_ingestion", run_id="dead0001", status=dg.DagsterRunStatus.STARTED, tags=tags)
        )
        alive = instance.add_run(
            dg.DagsterRun(
                job_name="domain_ingestion",
                run_id="live0001",
                status=dg.DagsterRunStatus.STARTED,
                tags={PID_TAG: str(subprocess.os.getpid()), HOST_TAG: socket.gethostname()},
            )
        )
        stage_artifact(store, "tool_probes", "korea", killed.run_id, {"rows": []})
        stage_artifact(store, "tool_probes", "japan", alive.run_id, {"rows": []})
        store.write_json("exports/.staging-abc/manifest.json", {})

        out = clean_on_start(instance, cfg)

        assert out["orphan_runs"] == [killed.run_id]
        assert instance.get_run_by_id(killed.run_id).status == dg.DagsterRunStatus.FAILURE
        assert instance.get_run_by_id(alive.run_id).status == dg.DagsterRunStatus.STARTED
        assert not store.exists(f"tool_probes/.staged/{killed.run_id}")
        assert store.exists(f"tool_probes/.staged/{alive.run_id}")  # a live run's staging is kept
        assert store.exists("exports/.staging-abc")  # a run is live: it may be exporting

        instance.report_run_failed(alive)
        clean_on_start(instance, cfg)
        assert not store.exists("tool_probes/.staged")
        assert not store.exists("exports/.staging-abc")


def test_graph_checkpoint_key_ignores_run_varying_probe_values(tmp_path):
    """The seeded KG holds probe values (ids from stateful calls) that change each run: the checkpoint
    of an interrupted run must still be found by the re-run."""
    from factory.graph.refine import Refiner
    from factory.kg.graph import KnowledgeGraph

    cfg = load_config(write_config(tmp_path))
    skeleton = {"domain": "music", "fingerprint": "fp", "edges": []}

    def key(playlist_id: int) -> str:
        kg = KnowledgeGraph("music", cfg.kg)
        kg.add_call(
            domain="music",
            platform="p",
            tool="create_playlist",
            args={},
            records=[{"playlist_id": playlist_id}],
            call_digest=str(playlist_id),
            ok=True,
            origin="probe",
            generic=[],
        )
        return Refiner("music", skeleton, {}, kg, cfg, make_executor=lambda: None).key

    assert key(673) == key(674)
