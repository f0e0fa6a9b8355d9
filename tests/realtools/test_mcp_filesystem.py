"""`@modelcontextprotocol/server-filesystem` (files of one folder over stdio) end to end, on a temp folder."""

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
DOMAIN = "files"
TOOLS = {"read_text_file", "read_multiple_files", "list_directory", "list_directory_with_sizes", "directory_tree",
         "search_files", "get_file_info", "list_allowed_directories", "write_file", "edit_file", "move_file"}  # fmt: skip
NOTES = {
    "README.md": "# Field notes\n\nObservations from the spring survey, one file per site.\n",
    "sites/harbour.txt": "Site: harbour\nBirds counted: 41\nWeather: overcast, light wind\n",
    "sites/meadow.txt": "Site: meadow\nBirds counted: 17\nWeather: sunny\n",
    "sites/ridge.txt": "Site: ridge\nBirds counted: 9\nWeather: fog until noon\n",
    "summary.csv": "site,birds\nharbour,41\nmeadow,17\nridge,9\n",
}


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> RealRun:
    bin_dir = realtools_bin()
    tmp = tmp_path_factory.mktemp("filesystem")
    root = tmp / "survey"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    domain = {
        "name": DOMAIN,
        "language": "en",
        "description": "Survey notes kept as files: sites, bird counts and weather.",
        "sources": [
            {"kind": "mcp", "platform": "files", "command": [str(bin_dir / "mcp-server-filesystem"), str(root)]}
        ],
    }
    run = run_project(tmp, domain)
    print("\nfilesystem:", json.dumps(summary(run), default=str))
    return run


def test_inventory(real_run: RealRun) -> None:
    assert_inventory(real_run, TOOLS)
    inv = {t["name"]: t for t in real_run.load("tool_inventory", DOMAIN)["tools"]}
    # the server's annotations: writes are destructive (never probed), reads are not
    assert inv["write_file"]["destructive"] and inv["move_file"]["destructive"]
    assert not inv["read_text_file"]["state_changing"] and not inv["list_directory"]["destructive"]


def test_one_server_start_per_run(real_run: RealRun) -> None:
    ((locator, stats),) = real_run.mcp_stats.items()
    assert "mcp-server-filesystem" in locator
    assert stats["shared_starts"] == 1 and stats["restarts"] == 0 and stats["idle_stops"] == 0, stats


def test_probes_pass_the_gate(real_run: RealRun) -> None:
    assert_probes_pass_gate(real_run)


def test_expected_edges(real_run: RealRun) -> None:
    assert_edges(real_run, {("list_directory", "read_text_file")})


def test_trajectories(real_run: RealRun) -> None:
    assert_trajectories(real_run)


def test_judged_and_exports(real_run: RealRun) -> None:
    assert_judged_nonempty(real_run)
    assert_exports_nonempty(real_run)


def test_probes_never_changed_the_folder(tmp_path_factory: pytest.TempPathFactory, real_run: RealRun) -> None:
    """Destructive tools (write_file, edit_file, move_file) were refused: every file is as it was."""
    root = real_run.cfg.project_dir / "survey"
    now = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file()}
    assert now == NOTES


def test_search_files_finds_the_listed_files_by_their_extension(real_run: RealRun) -> None:
    """search_files' `pattern` is a glob its description shows as '**/*.ext': it waits for a listing and
    takes the listed files' extensions (an observed value), so its probes find files, never only
    "No matches found" (an empty answer, not a record)."""
    rows = [r for r in real_run.load_any("tool_probes", DOMAIN)["rows"] if r["tool"] == "search_files"]
    found = [r for r in rows if r["outcome"] == "semantic_success" and r["record_count"] > 0]
    assert found, [(r["args"], r["outcome"], r["detail"]) for r in rows]
    exts = {p.rsplit(".", 1)[1] for p in NOTES}
    assert all(r["arg_sources"]["pattern"] == "observed" and r["args"]["pattern"].rsplit(".", 1)[1] in exts
               for r in found)  # fmt: skip
    assert all(r["round"] > 1 for r in rows)  # after a listing showed files
    assert not any((r["first_record"] or {}).get("content") == "No matches found" for r in rows)
