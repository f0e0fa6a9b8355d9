"""Drift sensors and schedule, unit-tested with build_sensor_context and hand-written artifacts."""

import json

import dagster as dg
import pytest

from factory import drift
from factory.config import load_config
from factory.io import Store, write_artifact
from factory.tools.spec import SourceRef, ToolSpec
from sensors.drift import (
    RESYNTHESIS_JOB,
    evaluate_response_drift,
    make_endpoint_drift_sensor,
    make_response_drift_sensor,
)
from sensors.schedules import make_resynthesis_schedule
from tests.conftest import write_config

DOMAINS = ["aviation", "music", "korea"]


def _tool(domain: str, name: str, out: str = "code") -> ToolSpec:
    return ToolSpec(
        domain=domain,
        platform=f"{domain}-api",
        name=name,
        description=name,
        output_fields={out: {"name": out, "type": "string"}},
        source=SourceRef(kind="openapi", locator=f"demo://{domain}-api"),
    )


SURFACES = {
    "aviation": [_tool("aviation", "find_airline"), _tool("aviation", "list_flights")],
    "music": [_tool("music", "find_artist"), _tool("music", "list_albums")],
    "korea": [_tool("korea", "find_district")],
}


def _reading(domain: str, tools: list[ToolSpec]) -> drift.SurfaceReading:
    from factory.tools.fingerprint import surface_fingerprint

    return drift.SurfaceReading(
        domain, "ok", fingerprint=surface_fingerprint(tools), tools={t.name: drift.tool_digest(t) for t in tools}
    )


class FakeWorld:
    """A reader whose surfaces the test changes between ticks."""

    def __init__(self):
        self.tools = {d: list(ts) for d, ts in SURFACES.items()}
        self.down: dict[str, str] = {}
        self.malformed: dict[str, str] = {}

    def __call__(self, domain, cfg):
        d = domain.name
        if d in self.down:
            return drift.SurfaceReading(d, "down", reason=self.down[d])
        if d in self.malformed:
            msg = self.malformed[d]
            return drift.SurfaceReading(d, "malformed", fingerprint=drift.malformed_fingerprint(msg), reason=msg)
        return _reading(d, self.tools[d])


@pytest.fixture
def world(tmp_path):
    """Config with a private data dir; every domain materialized (inventory file + materialization event)."""
    cfg_path = write_config(tmp_path)
    cfg = load_config(cfg_path)
    store = Store(cfg.data_dir)
    fake = FakeWorld()
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("domain", DOMAINS)
        for d, tools in SURFACES.items():
            _materialize(instance, store, d, tools)
        yield cfg_path, cfg, store, instance, fake


def _materialize(instance, store, domain, tools):
    r = _reading(domain, tools)
    write_artifact(
        store,
        "tool_inventory",
        domain,
        {"domain": domain, "fingerprint": r.fingerprint, "tools": [t.model_dump(mode="json") for t in tools]},
    )
    instance.report_runless_asset_event(
        dg.AssetMaterialization(asset_key="tool_inventory", partition=domain, metadata={"fingerprint": r.fingerprint})
    )
    return r.fingerprint


def _edge(src_domain, src_tool, tgt_domain, tgt_tool, status="retained"):
    return {
        "edge_id": f"{src_tool}->{tgt_tool}",
        "source_tool": src_tool,
        "source_domain": src_domain,
        "source_platform": f"{src_domain}-api",
        "target_tool": tgt_tool,
        "target_domain": tgt_domain,
        "target_platform": f"{tgt_domain}-api",
        "status": status,
        "bindings": [{"target_param": "code", "source_field": "code"}],
        # the rest of a stored edge (factory.graph.edge.Edge), not read by drift
        "source_tool_id": f"{src_domain}/{src_domain}-api/{src_tool}",
        "target_tool_id": f"{tgt_domain}/{tgt_domain}-api/{tgt_tool}",
        "cross_domain": src_domain != tgt_domain,
        "similarity": 0.5,
        "plan": {"code": {"kind": "UPSTREAM", "field": "code"}},
        "feasibility": 0.8,
        "reason": "",
        "alpha": 1.0,
        "beta": 1.0,
        "prior_alpha": 1.0,
        "prior_beta": 1.0,
        "proposal_provenance": {},
    }


def _skip(res) -> str:
    reason = res.skip_reason if isinstance(res, dg.SensorResult) else res
    return reason.skip_message if reason is not None else ""


def _tick(instance, cfg_path, fake, cursor=None):
    sensor = make_endpoint_drift_sensor(str(cfg_path), reader=fake)
    return sensor(dg.build_sensor_context(instance=instance, cursor=cursor))


def test_no_drift_requests_nothing_and_records_the_first_sighting(world):
    cfg_path, cfg, store, instance, fake = world
    res = _tick(instance, cfg_path, fake)
    assert res.run_requests == [] and "no drift in 3 of 3 domains" in _skip(res)
    assert {o.partition for o in res.asset_events} == set(DOMAINS)  # first sighting is history
    cursor = json.loads(res.cursor)
    assert set(cursor["seen"]) == set(DOMAINS) and cursor["requested"] == {}
    again = _tick(instance, cfg_path, fake, res.cursor)
    assert again.run_requests == [] and not again.asset_events


def test_drift_requests_the_domain_and_domains_with_retained_edges_into_changed_tools(world):
    cfg_path, cfg, store, instance, fake = world
    # music has a retained edge into aviation.list_flights; korea only a pruned one and one into an unchanged tool
    store.write_json(
        "connectivity_graph/music.json",
        {"domain": "music", "edges": [_edge("music", "find_artist", "aviation", "list_flights")]},
    )
    store.write_json(
        "connectivity_graph/korea.json",
        {"domain": "korea", "edges": [
            _edge("korea", "find_district", "aviation", "list_flights", status="pruned"),
            _edge("korea", "find_district", "aviation", "find_airline"),
        ]},
    )  # fmt: skip
    first = _tick(instance, cfg_path, fake)
    fake.tools["aviation"] = [_tool("aviation", "find_airline"), _tool("aviation", "list_flights", out="carrier_code")]
    new_fp = _reading("aviation", fake.tools["aviation"]).fingerprint
    res = _tick(instance, cfg_path, fake, first.cursor)
    assert [(r.partition_key, r.run_key) for r in res.run_requests] == [
        ("aviation", f"drift:aviation:{new_fp}"),
        ("music", f"drift:music:via:aviation:{new_fp}"),
    ]
    assert all(r.job_name == RESYNTHESIS_JOB for r in res.run_requests)
    assert res.run_requests[0].tags["factory/drift_event"] == res.run_requests[1].tags["factory/drift_event"]
    (obs,) = res.asset_events
    assert obs.partition == "aviation" and obs.metadata["drift"].value is True
    assert obs.metadata["changed_tools"].value == ["list_flights"] and obs.metadata["dependents"].value == ["music"]
    assert json.loads(res.cursor)["requested"] == {"aviation": [new_fp]}

    # the run is in flight: same surface, same request already made -> nothing
    pending = _tick(instance, cfg_path, fake, res.cursor)
    assert pending.run_requests == [] and "already requested" in _skip(pending)
    # the run finished: the inventory now carries the new fingerprint -> nothing
    _materialize(instance, store, "aviation", fake.tools["aviation"])
    done = _tick(instance, cfg_path, fake, pending.cursor)
    assert done.run_requests == [] and _skip(done).startswith("no drift in 3 of 3")


def test_no_graph_means_only_the_drifted_domain(world):
    cfg_path, cfg, store, instance, fake = world
    fake.tools["korea"] = [_tool("korea", "find_district"), _tool("korea", "census_stats")]
    res = _tick(instance, cfg_path, fake)
    assert [r.partition_key for r in res.run_requests] == ["korea"]


def test_endpoint_down_is_skipped_with_a_reason_and_retried(world):
    cfg_path, cfg, store, instance, fake = world
    fake.down["music"] = "spec http://x/openapi.json: ConnectError: refused"
    res = _tick(instance, cfg_path, fake)
    assert res.run_requests == [] and "music: endpoint down, retry next tick" in _skip(res)
    cursor = json.loads(res.cursor)
    assert cursor["down"] == {"music": fake.down["music"]}
    (obs,) = [o for o in res.asset_events if o.partition == "music"]
    assert obs.metadata["status"].value == "down"
    # back up and drifted: requested on the next tick, down state cleared
    del fake.down["music"]
    fake.tools["music"] = [_tool("music", "find_artist", out="artist_id")]
    nxt = _tick(instance, cfg_path, fake, res.cursor)
    assert [r.partition_key for r in nxt.run_requests] == ["music"]
    assert json.loads(nxt.cursor)["down"] == {}


def test_flapping_endpoint_requests_once_per_fingerprint(world):
    cfg_path, cfg, store, instance, fake = world
    v1 = list(fake.tools["korea"])
    v2 = [_tool("korea", "find_district", out="district_code")]
    cursor, keys = None, []
    for surface in [v2, v1, v2, v1, v2, v2]:
        fake.tools["korea"] = surface
        res = _tick(instance, cfg_path, fake, cursor)
        keys += [r.run_key for r in res.run_requests]
        cursor = res.cursor
    assert keys == [f"drift:korea:{_reading('korea', v2).fingerprint}"]


def test_malformed_spec_requests_one_run_that_will_fail_at_the_gate(world):
    cfg_path, cfg, store, instance, fake = world
    fake.malformed["music"] = "openapi source chinook-catalog: spec is not JSON or YAML"
    res = _tick(instance, cfg_path, fake)
    (req,) = res.run_requests
    assert req.partition_key == "music" and req.run_key.startswith("drift:music:malformed:sha256:")
    assert _tick(instance, cfg_path, fake, res.cursor).run_requests == []


def test_config_domains_become_partitions_and_new_domains_are_requested(world, tmp_path):
    cfg_path, cfg, store, instance, fake = world
    data = load_config(cfg_path).model_dump(mode="json", exclude_none=True)
    music = next(d for d in data["domains"] if d["name"] == "music")
    data["domains"] = [music, {**music, "name": "music2"}]
    new_cfg = tmp_path / "f2.yaml"
    new_cfg.write_text(json.dumps(data))
    fake.tools["music2"] = SURFACES["music"]
    res = _tick(instance, new_cfg, fake)
    adds = [r for r in res.dynamic_partitions_requests if isinstance(r, dg.AddDynamicPartitionsRequest)]
    dels = [r for r in res.dynamic_partitions_requests if isinstance(r, dg.DeleteDynamicPartitionsRequest)]
    assert adds[0].partition_keys == ["music2"] and sorted(dels[0].partition_keys) == ["aviation", "korea"]
    assert [r.partition_key for r in res.run_requests] == ["music2"]
    assert "music2" not in {o.partition for o in res.asset_events}


def test_bad_config_is_a_skip(tmp_path):
    cfg_path = write_config(tmp_path)
    sensor = make_endpoint_drift_sensor(str(cfg_path), reader=FakeWorld())
    cfg_path.write_text("domains: []\n")
    with dg.instance_for_test() as instance:
        res = sensor(dg.build_sensor_context(instance=instance))
    assert isinstance(res, dg.SkipReason) and "config invalid" in _skip(res)


def test_dependent_domains_core():
    graphs = {
        "music": {"edges": [_edge("music", "a", "aviation", "t1"), _edge("music", "b", "korea", "k1")]},
        "korea": {"edges": [_edge("korea", "k1", "korea", "k2"), _edge("korea", "k1", "aviation", "t2", "pruned")]},
    }
    assert drift.dependent_domains(graphs, {"aviation": {"t1"}}) == {"music": ["aviation"]}
    assert drift.dependent_domains(graphs, {"aviation": {"t2"}}) == {}
    assert drift.dependent_domains(graphs, {"korea": None, "aviation": {"t1"}}) == {"music": ["aviation", "korea"]}
    assert drift.changed_tools({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "4"}) == {"b", "c"}
    assert drift.changed_tools(None, {"a": "1"}) is None


# --------------------------------------------------------------------------- response drift


def _probes_and_inventory():
    tools = SURFACES["music"]
    inventory = {"domain": "music", "fingerprint": "sha256:x", "tools": [t.model_dump(mode="json") for t in tools]}
    rows = [
        {"tool": "find_artist", "args": {"name": f"a{i}"}, "outcome": "semantic_success", "outcome_group": "success",
         "record_count": 1, "first_record": {"code": i}, "call_digest": f"sha256:{i}"}
        for i in range(6)
    ]  # fmt: skip
    return {"domain": "music", "fingerprint": "sha256:x", "rows": rows}, inventory


def test_response_drift_marks_stale_and_requests_once(tmp_path):
    cfg_path = write_config(tmp_path)
    cfg = load_config(cfg_path)
    store = Store(cfg.data_dir)
    probes, inventory = _probes_and_inventory()
    store.write_json("tool_probes/music.json", probes)
    store.write_json("tool_inventory/music.json", inventory)
    sample = drift.sample_cached_calls(probes, inventory, 4, seed=13)
    assert len(sample) == 4 and sample == drift.sample_cached_calls(probes, inventory, 4, seed=13)

    def changed(n):
        def check(domain, cfg, probes, inventory):
            rows = [{"tool": "find_artist", "call_digest": f"sha256:{i}"} for i in range(n)]
            return drift.ResponseDrift(domain.name, 4, 4, rows, n / 4, cfg.drift.response_change_share)

        return check

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("domain", ["music"])
        quiet = evaluate_response_drift(instance, cfg, None, check=changed(1))  # 25% is not above 25%
        assert quiet.run_requests == [] and "music: 1/4 re-executed calls changed" in _skip(quiet)
        res = evaluate_response_drift(instance, cfg, quiet.cursor, check=changed(3))
        (req,) = res.run_requests
        assert (
            req.partition_key == "music"
            and req.run_key.startswith("response-drift:music:")
            and req.tags["factory/stale"] == "true"
        )
        (obs,) = res.asset_events
        assert obs.asset_key == dg.AssetKey("tool_probes") and obs.metadata["stale"].value is True
        assert evaluate_response_drift(instance, cfg, res.cursor, check=changed(3)).run_requests == []
        # the sensor wrapper with no artifacts for the other domains skips them
        sensor = make_response_drift_sensor(str(cfg_path))
        assert sensor.minimum_interval_seconds == cfg.drift.response_interval_s


def test_schedule_requests_every_domain_with_a_tick_run_key(tmp_path):
    from datetime import UTC, datetime

    cfg_path = write_config(tmp_path)
    sched = make_resynthesis_schedule(str(cfg_path))
    assert sched.cron_schedule == load_config(cfg_path).drift.schedule_cron
    # the schedule context enters the instance; used as a context manager it also leaves it
    # (otherwise Dagster's current defs-state storage keeps pointing at a disposed instance)
    with (
        dg.instance_for_test() as instance,
        dg.build_schedule_context(
            instance=instance, scheduled_execution_time=datetime(2026, 1, 4, 3, 0, tzinfo=UTC)
        ) as ctx,
    ):
        assert "no configured domain" in sched(ctx).skip_message
        instance.add_dynamic_partitions("domain", ["music", "korea"])
        reqs = sched(ctx)
    assert [(r.partition_key, r.run_key) for r in reqs] == [
        ("music", "schedule:music:20260104T0300Z"),
        ("korea", "schedule:korea:20260104T0300Z"),
    ]
