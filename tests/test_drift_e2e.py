"""End to end: materialize every demo domain, switch one platform to v2, one sensor tick, run what it asked for.

Real demo service (subprocess), real materializations, the real sensor evaluated against the
same instance. The requested runs are executed in the order the sensor emitted them, with
their tags, as the daemon's queued coordinator would (one run per drift event at a time).
"""

import dagster as dg
import pytest
import yaml

from factory.config import load_config
from factory.definitions import build_definitions
from factory.demo.service import DemoService
from factory.io import Store, read_artifact
from factory.tools.spec import ToolSpec
from sensors.drift import RESYNTHESIS_JOB, make_endpoint_drift_sensor
from sensors.jobs import run_pipeline
from sensors.partitions import sync_domain_partitions
from tests.conftest import write_config

# the whole pipeline twice over (graph refinement included) takes ~2 min on 2 cores; the default suite
# covers a real v2 drift in tests/sensors/test_drift_real.py
pytestmark = pytest.mark.slow

DRIFTED_PLATFORM, DRIFTED_DOMAIN = "flight-ops", "aviation"


def _counts(instance, keys, domains):
    out = {}
    for k in keys:
        for d in domains:
            recs = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=k, asset_partitions=[d]), limit=1000)
            out[(k.to_user_string(), d)] = len(recs.records)
    return out


def _per_domain_keys(defs):
    keys = defs.resolve_job_def(RESYNTHESIS_JOB).asset_layer.executable_asset_keys
    return sorted(
        (k for k in keys if defs.resolve_assets_def(k).partitions_def is not None), key=lambda k: k.to_user_string()
    )


def _surfaces(inv):
    return {t["name"]: ToolSpec.model_validate(t).surface() for t in inv["tools"]}


def test_v2_drift_reruns_exactly_the_affected_domains(tmp_path):
    base = load_config().model_dump(mode="json")
    path = write_config(tmp_path, demo={**base["demo"], "faults": {}})
    cfg = load_config(path)
    data = tmp_path / "data"
    defs = build_definitions(str(path))
    sensor = make_endpoint_drift_sensor(str(path))
    keys = _per_domain_keys(defs)
    with dg.instance_for_test() as instance, DemoService(cfg.demo, log_dir=tmp_path / "logs") as svc:
        sync_domain_partitions(instance, cfg.domain_names)
        staged = run_pipeline(defs, instance, cfg.domain_names, progress=lambda m: None)
        assert all(r.success for r in staged.values())
        first = sensor(dg.build_sensor_context(instance=instance))
        assert first.run_requests == [], first.skip_reason
        before_inv = read_artifact(Store(data), "tool_inventory", DRIFTED_DOMAIN)
        counts_before = _counts(instance, keys, cfg.domain_names)

        # switch the platform to v2 (declared in the config too: runs re-apply the config to the service)
        raw = yaml.safe_load(path.read_text())
        raw["demo"]["schema_versions"] = {DRIFTED_PLATFORM: "v2"}
        path.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False))
        svc.set_schema_version(DRIFTED_PLATFORM, "v2")

        tick = sensor(dg.build_sensor_context(instance=instance, cursor=first.cursor))
        requested = [r.partition_key for r in tick.run_requests]
        # expected dependents, computed independently from the stored graphs: retained edges into any
        # flight-ops tool (every v2 tool of the platform changed its output or its inputs)
        v2_tools = {t["name"] for t in before_inv["tools"] if t["platform"] == DRIFTED_PLATFORM}
        dependents = set()
        for d in cfg.domain_names:
            stored = read_artifact(Store(data), "connectivity_graph", d, default=None)
            if d != DRIFTED_DOMAIN and stored is not None:
                edges = stored.get("edges", [])
                if any(
                    e.get("status") == "retained"
                    and e.get("target_domain") == DRIFTED_DOMAIN
                    and e.get("target_tool") in v2_tools
                    for e in edges
                ):
                    dependents.add(d)
        assert (
            requested[0] == DRIFTED_DOMAIN
            and set(requested[1:]) == dependents
            and len(requested) == 1 + len(dependents)
        )
        assert all(r.run_key.startswith("drift:") and r.job_name == RESYNTHESIS_JOB for r in tick.run_requests)

        job = defs.resolve_job_def(RESYNTHESIS_JOB)
        for rr in tick.run_requests:
            res = job.execute_in_process(
                partition_key=rr.partition_key, tags=rr.tags, instance=instance, raise_on_error=False
            )
            failures = [
                f"{e.step_key}: {e.event_specific_data.error.message if e.event_specific_data and e.event_specific_data.error else ''}"
                for e in res.all_events
                if e.event_type_value == "STEP_FAILURE"
            ]
            assert res.success, (rr.partition_key, failures)

        after_inv = read_artifact(Store(data), "tool_inventory", DRIFTED_DOMAIN)
        # the reviewed lexicon file names v1's `dep_delay` (renamed in v2): the re-synthesis ran, and said so
        stale = read_artifact(Store(data), "tool_lexicon", DRIFTED_DOMAIN)["nouns"]["stale_entries"]
        assert any("'list_flights' has no field 'dep_delay'" in m for m in stale), stale
        assert after_inv["fingerprint"] != before_inv["fingerprint"]
        assert (
            after_inv["platform_fingerprints"][DRIFTED_PLATFORM]
            != before_inv["platform_fingerprints"][DRIFTED_PLATFORM]
        )
        others = {p for p in before_inv["platform_fingerprints"] if p != DRIFTED_PLATFORM}
        assert all(after_inv["platform_fingerprints"][p] == before_inv["platform_fingerprints"][p] for p in others)
        changed = [n for n, s in _surfaces(after_inv).items() if _surfaces(before_inv).get(n) != s]
        assert changed and all(n in v2_tools for n in changed)
        probes = read_artifact(Store(data), "tool_probes", DRIFTED_DOMAIN)
        assert probes["fingerprint"] == after_inv["fingerprint"]
        if dg.AssetKey("connectivity_graph") in keys:  # the graph reflects the v2 surface
            graph = read_artifact(Store(data), "connectivity_graph", DRIFTED_DOMAIN)
            fields = {t["name"]: set(t.get("output_fields", {})) for t in after_inv["tools"]}
            for e in graph["edges"]:
                if e.get("status") == "retained" and e.get("source_domain") == DRIFTED_DOMAIN:
                    for b in e.get("bindings", []):
                        assert b["source_field"] in fields.get(e["source_tool"], set()), (e["edge_id"], b)

        counts_after = _counts(instance, keys, cfg.domain_names)
        rerun = set(requested)
        for (asset, d), n in counts_after.items():
            assert n == counts_before[(asset, d)] + (1 if d in rerun else 0), (asset, d)

        quiet = sensor(dg.build_sensor_context(instance=instance, cursor=tick.cursor))
        assert quiet.run_requests == [], (
            [r.run_key for r in quiet.run_requests],
            before_inv["fingerprint"],
            after_inv["fingerprint"],
            svc.healthy()["schema_versions"],
        )
