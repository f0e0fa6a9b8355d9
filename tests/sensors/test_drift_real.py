"""The endpoint-drift sensor against real surfaces: the demo service's v2 switch, a dead port, a broken spec file."""

import shutil
from pathlib import Path

import dagster as dg
import pytest

from factory import drift
from factory.config import load_config
from factory.definitions import build_definitions
from factory.demo.service import DemoService
from sensors.drift import RESYNTHESIS_JOB, latest_inventory_fingerprint, make_endpoint_drift_sensor
from tests.conftest import free_port, write_config

FIXTURES = Path(__file__).resolve().parent.parent / "tools" / "fixtures"


def _inventory_only(defs, instance, domain):
    job = defs.resolve_job_def(RESYNTHESIS_JOB)
    return job.execute_in_process(
        partition_key=domain, instance=instance, asset_selection=[dg.AssetKey("tool_inventory")], raise_on_error=False
    )


def _set_versions(path: Path, versions: dict[str, str]) -> None:
    import yaml

    data = yaml.safe_load(path.read_text())
    data["demo"]["schema_versions"] = versions
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))


def test_v2_switch_is_one_request_for_that_domain_then_nothing(tmp_path):
    path = write_config(tmp_path)
    cfg = load_config(path)
    defs = build_definitions(str(path))
    sensor = make_endpoint_drift_sensor(str(path))
    with dg.instance_for_test() as instance, DemoService(cfg.demo, log_dir=tmp_path / "logs") as svc:
        instance.add_dynamic_partitions("domain", cfg.domain_names)
        for d in ["music", "korea"]:  # aviation (with its MCP server) is covered by the end-to-end test
            assert _inventory_only(defs, instance, d).success
        quiet = sensor(dg.build_sensor_context(instance=instance))
        assert [r.partition_key for r in quiet.run_requests] == ["aviation"]  # never materialized
        calls_before = svc.stats()["calls"]

        # runs apply the config's demo versions to a reused service: declare the switch there too
        _set_versions(path, {"chinook-catalog": "v2"})
        svc.set_schema_version("chinook-catalog", "v2")
        res = sensor(dg.build_sensor_context(instance=instance, cursor=quiet.cursor))
        reading = drift.read_surface(cfg.domain("music"), cfg)
        assert [(r.partition_key, r.run_key) for r in res.run_requests] == [
            ("music", f"drift:music:{reading.fingerprint}"),
        ]
        assert svc.stats()["calls"] == calls_before  # reading surfaces executes no tool
        obs = {o.partition: o for o in res.asset_events}
        assert obs["music"].metadata["drift"].value is True and obs["music"].metadata["changed_tools"].value

        assert _inventory_only(defs, instance, "music").success
        assert latest_inventory_fingerprint(instance, "music") == reading.fingerprint
        again = sensor(dg.build_sensor_context(instance=instance, cursor=res.cursor))
        assert [r.partition_key for r in again.run_requests] == []


def test_dead_endpoint_is_a_skip_not_a_run(tmp_path):
    path = write_config(tmp_path, port=free_port())  # nothing listens there
    cfg = load_config(path)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("domain", cfg.domain_names)
        res = make_endpoint_drift_sensor(str(path))(dg.build_sensor_context(instance=instance))
    assert res.run_requests == []
    msg = res.skip_reason.skip_message
    assert "music: endpoint down, retry next tick" in msg and "ConnectError" in msg


def test_malformed_spec_yields_one_run_that_fails_at_the_inventory_with_a_clear_error(tmp_path):
    spec = tmp_path / "airline.yaml"
    shutil.copy(FIXTURES / "airline_oas3.yaml", spec)
    domains = [
        {
            "name": "files",
            "sources": [
                {"kind": "openapi", "platform": "airline", "spec": str(spec), "base_url": "http://127.0.0.1:9"}
            ],
        }
    ]
    path = write_config(tmp_path, domains=domains)
    defs = build_definitions(str(path))
    sensor = make_endpoint_drift_sensor(str(path))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("domain", ["files"])
        assert _inventory_only(defs, instance, "files").success
        ok = sensor(dg.build_sensor_context(instance=instance))
        assert ok.run_requests == []
        spec.write_text("openapi: 3.0.0\npaths: [this is: not: valid\n")
        res = sensor(dg.build_sensor_context(instance=instance, cursor=ok.cursor))
        (req,) = res.run_requests
        assert req.run_key.startswith("drift:files:malformed:")
        assert sensor(dg.build_sensor_context(instance=instance, cursor=res.cursor)).run_requests == []
        run = _inventory_only(defs, instance, "files")
        assert not run.success
        err = "\n".join(e.event_specific_data.error.to_string() for e in run.get_step_failure_events())
        assert "SourceError" in err and str(spec) in err


@pytest.mark.parametrize("status", [503, 429])
def test_http_5xx_and_429_on_the_spec_are_down(tmp_path, status, monkeypatch):
    import httpx

    monkeypatch.setattr(httpx, "get", lambda *a, **k: httpx.Response(status, request=httpx.Request("GET", a[0])))
    path = write_config(tmp_path)
    cfg = load_config(path)
    reading = drift.read_surface(cfg.domain("korea"), cfg)
    assert reading.status == "down" and f"HTTP {status}" in reading.reason
