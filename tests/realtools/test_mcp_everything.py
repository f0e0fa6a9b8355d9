"""`@modelcontextprotocol/server-everything` (the MCP reference test server over stdio) end to end."""

from __future__ import annotations

import json

import pytest

from tests.realtools.conftest import RealRun, realtools_bin, run_project, summary
from tests.realtools.expect import (
    assert_exports_nonempty,
    assert_inventory,
    assert_judged_nonempty,
    assert_probes_pass_gate,
    assert_trajectories,
    kept_edges,
    needs,
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
    assert len(stats) == 1 and stats[0]["shared_starts"] == 1 and stats[0]["restarts"] == 0, real_run.mcp_stats


def test_probes_pass_the_gate(real_run: RealRun) -> None:
    assert_probes_pass_gate(real_run)


@needs("edges: no edge of server-everything is retained (connectivity graph empty)")
def test_connectivity_graph_is_not_empty(real_run: RealRun) -> None:
    # the server's tools are independent test fixtures (echo, get-sum, weather samples, resource links as
    # resource_link blocks rather than text): no particular edge is expected, only that some are kept
    edges = kept_edges(real_run)
    assert edges, f"empty connectivity graph; failed: {real_run.failed_checks()}"


@needs("edges: no retained edge, so no trajectory")
def test_trajectories(real_run: RealRun) -> None:
    assert_trajectories(real_run)


@needs("edges: no retained edge, so no task")
def test_judged_and_exports(real_run: RealRun) -> None:
    assert_judged_nonempty(real_run)
    assert_exports_nonempty(real_run)
