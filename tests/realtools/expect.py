"""The issue's bar for one real server's run, as assertions with messages that say what was found.

`needs(*parts)` marks an assertion that the helpers' parts of issue 13 make pass (argdisc: argument
discovery, observed: observed output schemas and content-aware outcomes, gates: gates that tell the
truth / safe probing); xfail, not strict, so the lead can drop the marks after merging them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.realtools.conftest import RealRun

GATE = 0.6  # issue 13: >= 60% of the read-only tools with a successful probe


def needs(*parts: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(reason=f"needs {', '.join(parts)} (issue 13)", strict=False)


def metadata(run: RealRun, asset: str) -> dict[str, Any]:
    """The materialization metadata of `asset` in the run (also for a value its gate kept staged)."""
    for res in run.results.values():
        for ev in res.get_asset_materialization_events():
            mat = ev.event_specific_data.materialization
            if mat.asset_key.to_user_string() == asset:
                return {k: getattr(v, "value", v) for k, v in mat.metadata.items()}
    return {}


def assert_inventory(run: RealRun, expected: set[str]) -> None:
    inv = run.load("tool_inventory", run.domain)
    assert inv is not None, f"no tool_inventory; failed: {run.failed_checks()}"
    names = {t["name"] for t in inv["tools"]}
    assert expected <= names, f"tools missing from the inventory: {sorted(expected - names)}"
    assert all(t["input_schema"].get("type") == "object" for t in inv["tools"])


def read_only_share(run: RealRun, *, staged: bool = False) -> tuple[float, dict[str, bool]]:
    """Share of the read-only tools (not state-changing, not refused) with a successful probe
    (`staged`: also from a value its failing gate kept staged)."""
    inv = run.load("tool_inventory", run.domain) or {"tools": []}
    read_only = {t["name"] for t in inv["tools"] if not t.get("state_changing") and not t.get("destructive")}
    probes = (run.load_any if staged else run.load)("tool_probes", run.domain) or {"rows": []}
    ok = dict.fromkeys(sorted(read_only), False)
    for r in probes["rows"]:
        if r["tool"] in ok and str(r["outcome"]).endswith("success"):
            ok[r["tool"]] = True
    return (sum(ok.values()) / len(ok) if ok else 0.0), ok


def assert_probes_pass_gate(run: RealRun) -> None:
    assert run.stage_ok("domain_ingestion"), f"ingestion failed: {run.failed_checks()}"
    share, ok = read_only_share(run)
    assert share >= GATE, f"read-only tools with a success {share:.0%} < {GATE:.0%}: {ok}"


def kept_edges(run: RealRun) -> set[tuple[str, str]]:
    graph = run.load("connectivity_graph", run.domain) or {}
    return {(e["source_tool"], e["target_tool"]) for e in graph.get("edges") or [] if e.get("status") == "retained"}


def assert_edges(run: RealRun, expected: set[tuple[str, str]]) -> None:
    edges = kept_edges(run)
    assert edges, f"empty connectivity graph; failed: {run.failed_checks()}"
    assert expected <= edges, f"expected edges missing: {sorted(expected - edges)}; kept: {sorted(edges)}"


def assert_trajectories(run: RealRun) -> None:
    value = run.load("trajectories", run.domain) or {}
    assert value.get("trajectories"), f"no trajectories; failed: {run.failed_checks()}"


def assert_judged_nonempty(run: RealRun) -> None:
    judged = run.load("judged_queries", run.domain) or {}
    assert judged.get("kept"), f"no judged task kept: {judged.get('counts')}; failed: {run.failed_checks()}"


def assert_exports_nonempty(run: RealRun) -> None:
    exports = run.load("dataset_exports") or {}
    assert int(exports.get("tasks") or 0) > 0, f"empty export; failed: {run.failed_checks()}"
    assert run.stage_ok("global_dataset"), f"dataset stage failed: {run.failed_checks()}"
    assert run.stage_ok("global_release"), f"release stage (exports) failed: {run.failed_checks()}"
