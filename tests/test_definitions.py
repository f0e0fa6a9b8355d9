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
