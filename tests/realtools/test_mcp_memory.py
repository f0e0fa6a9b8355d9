"""`@modelcontextprotocol/server-memory` (a knowledge-graph store over stdio) end to end."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.realtools.conftest import FIXTURES, RealRun, realtools_bin, run_project, summary
from tests.realtools.expect import (
    assert_edges,
    assert_exports_nonempty,
    assert_inventory,
    assert_judged_nonempty,
    assert_probes_pass_gate,
    assert_trajectories,
)

pytestmark = pytest.mark.slow
DOMAIN = "memory"
TOOLS = {"create_entities", "create_relations", "add_observations", "delete_entities", "delete_observations",
         "delete_relations", "read_graph", "search_nodes", "open_nodes"}  # fmt: skip


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> RealRun:
    bin_dir = realtools_bin()
    tmp = tmp_path_factory.mktemp("memory")
    shutil.copy(FIXTURES / "memory" / "seed.jsonl", tmp / "memory.jsonl")
    domain = {
        "name": DOMAIN,
        "language": "en",
        "description": "A knowledge graph of people, machines and places from the history of computing.",
        "sources": [
            {
                "kind": "mcp",
                "platform": "memory",
                "command": [str(bin_dir / "mcp-server-memory")],
                "env": {"MEMORY_FILE_PATH": str(tmp / "memory.jsonl")},
            }
        ],
    }
    run = run_project(tmp, domain)
    print("\nmemory:", json.dumps(summary(run), default=str))
    return run


def test_inventory(real_run: RealRun) -> None:
    assert_inventory(real_run, TOOLS)


def test_one_server_start_per_run(real_run: RealRun) -> None:
    """Item 4: the shared server started once for the whole run (probes, graph, synthesis, judging,
    exports); state-changing calls ran in private servers of their episodes."""
    ((locator, stats),) = real_run.mcp_stats.items()
    assert "mcp-server-memory" in locator
    assert stats["shared_starts"] == 1 and stats["restarts"] == 0 and stats["idle_stops"] == 0, stats


def test_probes_pass_the_gate(real_run: RealRun) -> None:
    assert_probes_pass_gate(real_run)


def test_expected_edges(real_run: RealRun) -> None:
    assert_edges(real_run, {("read_graph", "open_nodes")})


def test_trajectories(real_run: RealRun) -> None:
    assert_trajectories(real_run)


def test_judged_and_exports(real_run: RealRun) -> None:
    assert_judged_nonempty(real_run)
    assert_exports_nonempty(real_run)


def test_seed_graph_is_what_the_shared_session_read(real_run: RealRun) -> None:
    """The probes' read_graph saw the seeded entities (the server really served the project's file)."""
    probes = real_run.load_any("tool_probes", DOMAIN)  # also when its gate failed (kept staged)
    assert probes is not None, real_run.failed_checks()
    reads = [r for r in probes["rows"] if r["tool"] == "read_graph" and str(r["outcome"]).endswith("success")]
    assert reads, "read_graph never succeeded"
    text = json.dumps([r.get("first_record") for r in reads], default=str)
    assert "Ada Lovelace" in text
