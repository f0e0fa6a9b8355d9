"""Item 5 of issue 21: a value is published only when its blocking checks pass.

A good materialization of tool_probes, then the service goes down: the probes fail, the coverage
gate fails, and the published file is byte-identical to the good one (nothing staged is left
visible to downstream readers).
"""

import dagster as dg

from factory.definitions import build_definitions
from factory.io import Store, artifact_file, read_artifact
from tests.conftest import free_port, write_config
from tests.hostile.http_staging import ShelfService

DOMAIN = "shelf"


def _run(defs, instance, assets):
    return defs.resolve_implicit_global_asset_job_def().execute_in_process(
        partition_key=DOMAIN,
        instance=instance,
        asset_selection=[dg.AssetKey(a) for a in assets],
        raise_on_error=False,
    )


def _checks(result):
    return {e.asset_check_key.name: e.passed for e in result.get_asset_check_evaluations()}


def test_failing_gate_keeps_the_last_good_value_published(tmp_path):
    svc = ShelfService(free_port())
    spec = svc.write_spec(tmp_path / "shelf.json")
    source = {"kind": "openapi", "platform": "shelf", "spec": str(spec)}
    fast = {"timeout_s": 2.0, "max_retries": 0, "backoff_base_s": 0.0}  # refused connections fail at once
    path = write_config(tmp_path, domains=[{"name": DOMAIN, "sources": [source]}], executor=fast)
    defs = build_definitions(str(path))
    store = Store(tmp_path / "data")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("domain", [DOMAIN])
        with svc:
            good = _run(defs, instance, ["tool_inventory", "tool_probes"])
        assert good.success, _checks(good)
        assert all(_checks(good).values())
        probes_file = store.path(artifact_file(store, "tool_probes", DOMAIN))
        good_bytes = open(probes_file, "rb").read()
        assert any(r["outcome"].endswith("success") for r in read_artifact(store, "tool_probes", DOMAIN)["rows"])
        assert not (tmp_path / "data" / "tool_probes" / ".staged").exists()  # promoted, nothing left behind

        # the service is down now: every probe fails, and so does the coverage gate
        bad = _run(defs, instance, ["tool_probes"])
        assert _checks(bad)["tool_probes_coverage"] is False
        assert open(probes_file, "rb").read() == good_bytes
        # the next run cleans up the failed run's staged value before staging its own
        again = _run(defs, instance, ["tool_probes"])
        assert _checks(again)["tool_probes_coverage"] is False
        staged = list((tmp_path / "data" / "tool_probes" / ".staged").iterdir())
        assert [p.name for p in staged] == [again.run_id]
        assert open(probes_file, "rb").read() == good_bytes


def test_files_beside_a_value_are_published_once_by_the_last_gate(tmp_path):
    """passed_gate's release step: the staged files are published once, the value restaged without its
    release (a second passing check, or a re-run of the step, publishes nothing twice)."""
    from factory.io import RELEASE, read_staged, register_release, stage_artifact
    from factory.resources import _publish_staged_release

    store = Store(tmp_path)
    calls = []

    def publish(st, value):
        calls.append(value[RELEASE]["staged"])
        st.move(value[RELEASE]["staged"] + "/f.txt", "asset/f.txt")
        return {k: v for k, v in value.items() if k != RELEASE}

    register_release("test-once", publish)
    store.write_bytes("asset/.staged/run1/files/f.txt", b"release 2")
    stage_artifact(
        store, "asset", None, "run1", {"n": 2, RELEASE: {"kind": "test-once", "staged": "asset/.staged/run1/files"}}
    )
    assert _publish_staged_release(store, "asset", None, "run1") is True
    assert _publish_staged_release(store, "asset", None, "run1") is True
    assert calls == ["asset/.staged/run1/files"] and store.read_bytes("asset/f.txt") == b"release 2"
    assert read_staged(store, "asset", None, "run1") == {"n": 2}  # what promote_staged will publish
