"""In-process materializations of the real assets against the real demo service."""

import json
import re

import dagster as dg
import pytest

from factory.config import load_config
from factory.definitions import build_definitions
from factory.demo.service import DemoService
from factory.io import Store, read_artifact
from factory.tools.outcomes import OUTCOME_CLASSES
from sensors.jobs import run_pipeline
from sensors.partitions import sync_domain_partitions
from tests.conftest import write_config

KEY_RE = re.compile(r"\b[a-z]{2,4}-[0-9a-f]{24}\b")  # the demo service's key format


def _run_domain(defs, instance, domain):
    return defs.resolve_job_def("domain_ingestion").execute_in_process(
        partition_key=domain, instance=instance, raise_on_error=False
    )


def _checks(result):
    return {
        (e.asset_check_key.asset_key.to_user_string(), e.asset_check_key.name): e.passed
        for e in result.get_asset_check_evaluations()
    }


def _materialized(result):
    return {
        e.event_specific_data.materialization.asset_key.to_user_string()
        for e in result.get_asset_materialization_events()
    }


def _error_text(result):
    return "\n".join(e.event_specific_data.error.to_string() for e in result.get_step_failure_events())


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """Every asset for every demo domain, with one endpoint made unavailable."""
    tmp = tmp_path_factory.mktemp("pipeline")
    base = load_config().model_dump(mode="json")
    faults = dict(base["demo"]["faults"])
    faults["airline-registry"] = {"unavailable": ["get_plane"]}
    # a small graph stage: this test is about every stage running and its gates, not convergence
    graph = {**base["graph"], "iterations": 3, "paths_per_iteration": 15, "eval_trials_per_edge": 1}
    path = write_config(tmp, demo={**base["demo"], "faults": faults}, graph=graph)
    cfg = load_config(path)
    defs = build_definitions(str(path))
    with dg.instance_for_test() as instance, DemoService(cfg.demo, log_dir=tmp / "logs"):
        sync_domain_partitions(instance, cfg.domain_names)
        staged = run_pipeline(defs, instance, cfg.domain_names, progress=lambda m: None)
        results = {d: res for (job, d), res in staged.items() if job == "domain_ingestion"}
        results["global"] = staged[("global_catalog", "(global)")]
        results["staged"] = staged
        yield cfg, results, tmp


def test_every_asset_materializes_for_every_demo_domain(full_run):
    cfg, results, tmp = full_run
    for (job, name), res in results["staged"].items():
        assert res.success, f"{job}/{name}: {_error_text(res)}"
        assert all(_checks(res).values()), (job, name, _checks(res))
    for d in cfg.domain_names:  # every stage ran for every domain
        assert ("domain_synthesis", d) in results["staged"]
    for d in cfg.domain_names:
        assert _materialized(results[d]) == {"tool_inventory", "tool_probes"}
        assert len(_checks(results[d])) == 3
    assert _materialized(results["global"]) == {"tool_catalog"}
    inventories = {d: read_artifact(cfg, "tool_inventory", d) for d in cfg.domain_names}
    tools = [t for inv in inventories.values() for t in inv["tools"]]
    platforms = {t["platform"] for t in tools}
    assert len(inventories) >= 3 and len(platforms) >= 4 and len(tools) >= 40
    assert {"geo-mcp", "kostat-census", "chinook-store", "flight-ops"} <= platforms
    for inv in inventories.values():
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", inv["fingerprint"])


def test_probes_are_real_classified_and_secret_free(full_run):
    cfg, results, tmp = full_run
    rows = {d: read_artifact(cfg, "tool_probes", d)["rows"] for d in cfg.domain_names}
    for d, rs in rows.items():
        assert {r["outcome"] for r in rs} <= set(OUTCOME_CLASSES)
        assert any(r["outcome"] == "semantic_success" for r in rs), d
    # the endpoint the config made unavailable is classified, not a crash
    plane = [r for r in rows["aviation"] if r["tool"] == "get_plane"]
    assert plane and {r["outcome"] for r in plane} == {"endpoint_unavailable"}
    # paged lists report totals above 10,000; Korean envelopes parse
    assert max(r["total_count"] or 0 for r in rows["aviation"]) > 10_000
    assert max(r["total_count"] or 0 for r in rows["korea"]) > 10_000
    # no key value anywhere in the outputs, only the placeholder
    blob = "".join(p.read_text() for p in (tmp / "data").rglob("*.json"))
    assert "<KEY>" in blob and not KEY_RE.search(blob)


def test_catalog_has_one_embedding_per_tool(full_run):
    import pandas as pd

    cfg, results, tmp = full_run
    df = read_artifact(cfg, "tool_catalog")
    assert isinstance(df, pd.DataFrame)
    assert df["tool_id"].is_unique and set(df["domain"]) == set(cfg.domain_names)
    assert set(df["embedding_dim"]) == {384}
    meta = results["global"].asset_materializations_for_node("tool_catalog")[0].metadata
    assert meta["tools"].value == len(df) and "embeddings/model" in meta


def test_published_tasks_survive_the_raw_data_audit(full_run):
    """`factory audit` over this run's dataset: every golden call has a reference that agrees with
    what the service answered (totals and record counts), and every answer re-derives from the raw
    package data, unless a bridge type mismatch (issue 14, #1) is what makes it wrong."""
    from factory.audit.cli import served_index
    from factory.audit.run import audit
    from factory.io import data_store

    cfg, results, tmp = full_run
    tasks = read_artifact(cfg, "dataset_splits")["tasks"]
    report = audit(tasks, served_index(data_store(cfg), cfg.domain_names))  # search calls: the served passages
    assert report["tasks"] == len(tasks) > 0

    calls = [(r["id"], c) for r in report["rows"] for c in r["calls"]]
    ok = ("same", "search_ok")
    assert all(c["status"] in ok for _, c in calls), [x for x in calls if x[1]["status"] not in ok][:3]
    assert report["counts"]["not_derivable"] == 0
    wrong = [r for r in report["rows"] if r["status"] == "wrong"]
    assert all(r["type_mismatch"] for r in wrong), [(r["id"], r["reason"]) for r in wrong]


BAD_DOMAIN = "broken"


def _bad_source_run(tmp, source):
    path = write_config(tmp, domains=[{"name": BAD_DOMAIN, "sources": [source]}])
    defs = build_definitions(str(path))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("domain", [BAD_DOMAIN])
        res = _run_domain(defs, instance, BAD_DOMAIN)
    return res


def test_malformed_spec_fails_naming_source_and_leaves_nothing(tmp_path):
    bad = tmp_path / "bad-spec.json"
    bad.write_text('{"openapi": "3.0.0", "paths": ')
    res = _bad_source_run(tmp_path, {"kind": "openapi", "platform": "x", "spec": str(bad)})
    assert not res.success
    err = _error_text(res)
    assert str(bad) in err and ("JSON" in err or "YAML" in err)
    assert not (tmp_path / "data" / "tool_inventory").exists()


def test_unreachable_spec_url_fails_naming_the_url(tmp_path):
    from tests.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/openapi.json"
    res = _bad_source_run(tmp_path, {"kind": "openapi", "platform": "x", "spec": url})
    assert not res.success and url in _error_text(res)


def test_failing_gate_stops_downstream(tmp_path):
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "x", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {
            "/a": {
                "get": {
                    "operationId": "get_a",
                    "description": "Get a by id",
                    "parameters": [{"name": "id", "in": "query", "required": True, "schema": {"type": "strnig"}}],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/b": {"get": {"operationId": "get_b", "summary": "Get b", "responses": {"200": {"description": "ok"}}}},
        },
    }
    f = tmp_path / "spec.json"
    f.write_text(json.dumps(spec))
    res = _bad_source_run(tmp_path, {"kind": "openapi", "platform": "x", "spec": str(f)})
    checks = _checks(res)
    assert checks[("tool_inventory", "tool_inventory_contract")] is False  # 'strnig' is no JSON Schema type
    assert _materialized(res) == {"tool_inventory"}  # tool_probes never ran
    assert not (tmp_path / "data" / "tool_probes").exists()


def test_an_always_failing_endpoint_never_becomes_a_successful_edge(full_run):
    """get_plane answers 503 throughout: edges into it are tried, counted, never succeed."""
    cfg, results, tmp = full_run
    graph = read_artifact(Store(tmp / "data"), "connectivity_graph", "aviation")
    into = [e for e in graph["edges"] if e["target_tool"] == "get_plane"]
    assert into, "the skeleton proposes edges into get_plane (tail number → plane)"
    assert all(e["successes"] == 0 for e in into)
    tried = [e for e in into if e["trials"] > 0]
    assert tried and all(e["outcome_counts"].get("endpoint_unavailable", 0) > 0 for e in tried)
    meta = (
        results["staged"][("domain_synthesis", "aviation")]
        .asset_materializations_for_node("connectivity_graph")[0]
        .metadata
    )
    assert meta["outcome_counts"].value["endpoint_unavailable"] > 0
