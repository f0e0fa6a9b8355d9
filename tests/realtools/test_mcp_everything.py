"""`@modelcontextprotocol/server-everything` (the MCP reference test server over stdio) end to end."""

from __future__ import annotations

import json

import pytest

from tests.realtools.conftest import RealRun, realtools_bin, run_project, summary
from tests.realtools.expect import (
    assert_edges,
    assert_exports_nonempty,
    assert_inventory,
    assert_judged_nonempty,
    assert_probes_pass_gate,
    assert_trajectories,
)

pytestmark = pytest.mark.slow
DOMAIN = "everything"
TOOLS = {"echo", "get-sum", "get-env", "get-tiny-image", "get-structured-content", "get-resource-links",
         "get-resource-reference", "trigger-long-running-operation"}  # fmt: skip


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> RealRun:
    bin_dir = realtools_bin()
    tmp = tmp_path_factory.mktemp("everything")
    domain = {
        "name": DOMAIN,
        "language": "en",
        "description": "The MCP reference test server: echo, arithmetic, weather samples, resources and images.",
        "sources": [{"kind": "mcp", "platform": "everything", "command": [str(bin_dir / "mcp-server-everything")]}],
    }
    run = run_project(tmp, domain)
    print("\neverything:", json.dumps(summary(run), default=str))
    return run


def test_inventory(real_run: RealRun) -> None:
    assert_inventory(real_run, TOOLS)


def test_one_server_start_per_run(real_run: RealRun) -> None:
    stats = [s for loc, s in real_run.mcp_stats.items() if "mcp-server-everything" in loc]
    assert (
        len(stats) == 1 and stats[0]["shared_starts"] == 1 and stats[0]["restarts"] == 0 and stats[0]["idle_stops"] == 0
    ), real_run.mcp_stats


def test_probes_pass_the_gate(real_run: RealRun) -> None:
    assert_probes_pass_gate(real_run)


def test_resource_links_feed_the_resource_reader(real_run: RealRun) -> None:
    """get-resource-links answers with `resource_link` blocks (records {uri, name, mimeType, ...}); the ids
    their URIs end with (demo://resource/dynamic/text/2 → 2) fill get-resource-reference's resourceId
    (transform uri_id), and executing the edge confirmed it."""
    assert_edges(real_run, {("get-resource-links", "get-resource-reference")})
    graph = real_run.load("connectivity_graph", DOMAIN)
    (edge,) = [e for e in graph["edges"] if e["source_tool"] == "get-resource-links"
               and e["target_tool"] == "get-resource-reference" and e["status"] == "retained"]  # fmt: skip
    assert {(b["target_param"], b["source_field"], b["transform"]) for b in edge["bindings"]} == {
        ("resourceId", "uri", "uri_id")
    }
    assert edge["successes"] >= 1, edge
    rows = [r for r in real_run.load("tool_probes", DOMAIN)["rows"] if r["tool"] == "get-resource-links"]
    records = [r["first_record"] for r in rows if r.get("first_record")]
    assert records and all(rec["uri"].startswith("demo://resource/") and rec.get("mimeType") for rec in records)


def test_trajectories(real_run: RealRun) -> None:
    assert_trajectories(real_run)


def test_judged_and_exports(real_run: RealRun) -> None:
    assert_judged_nonempty(real_run)
    assert_exports_nonempty(real_run)
