"""The code location loads and exposes the graph the design card describes."""

import dagster as dg

from factory.definitions import build_definitions, defs


def test_code_location_loads_with_gated_assets():
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"tool_inventory", "tool_probes", "tool_catalog"} <= keys
    checks = {(c.asset_key.to_user_string(), c.name) for c in defs.resolve_asset_graph().asset_check_keys}
    assert ("tool_inventory", "tool_inventory_contract") in checks
    assert ("tool_probes", "tool_probes_taxonomy") in checks
    assert ("tool_catalog", "tool_catalog_embeddings") in checks
    for spec in defs.resolve_asset_graph().asset_check_keys:
        assert defs.resolve_asset_graph().get_check_spec(spec).blocking


def test_per_domain_assets_share_the_domain_partitions():
    graph = defs.resolve_asset_graph()
    for name in ("tool_inventory", "tool_probes"):
        pd = graph.get(dg.AssetKey(name)).partitions_def
        assert isinstance(pd, dg.DynamicPartitionsDefinition) and pd.name == "domain"
    assert graph.get(dg.AssetKey("tool_catalog")).partitions_def is None


def test_jobs_and_sensors_resolve():
    d = build_definitions()
    for job in ("domain_ingestion", "global_catalog", "domain_synthesis"):
        assert d.resolve_job_def(job) is not None
    assert d.resolve_sensor_def("domain_partitions_sensor") is not None


def test_loading_the_code_location_writes_nothing_to_the_instance(tmp_path):
    """Partitions are synced by the sensor and `factory run` / `factory sync-partitions`, not at import."""
    import os
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    code = "import factory.definitions as d; print(len(d.defs.resolve_asset_graph().get_all_asset_keys()))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0 and int(res.stdout.strip()) > 3, res.stderr[-2000:]
    assert sorted(p.name for p in home.iterdir()) == ["dagster.yaml"]  # no storage created, nothing written


def test_conversations_and_exports_run_after_the_decontaminated_retrieval_indices():
    """Issue 17: what agents are served (conversations, exports) is built after every domain's retrieval_index, so
    their search tools serve its decontaminated version (`served_inventories`), not the synthesis version."""
    from sensors.jobs import PIPELINE_STAGES

    graph = defs.resolve_asset_graph()
    for name in ("conversations", "dataset_exports"):
        assert dg.AssetKey("retrieval_index") in graph.get(dg.AssetKey(name)).parent_keys, name
    order = [job for job, _ in PIPELINE_STAGES]
    assert order.index("global_dataset") < order.index("domain_retrieval") < order.index("global_release")

    def assets_of(job: str) -> set[str]:
        return {k.to_user_string() for k in defs.resolve_job_def(job).asset_layer.executable_asset_keys}

    assert {"conversations", "dataset_exports"} <= assets_of("global_release")
    assert "dataset_splits" in assets_of("global_dataset")
    assert not {"conversations", "dataset_exports"} & assets_of("global_dataset")
