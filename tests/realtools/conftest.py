"""The pipeline end to end on third-party tool servers installed from the npm registry (issue 13).

`make realtools` installs the pinned servers into `.realtools/` (tests/realtools/npm). Each test
module builds a project folder in tmp whose factory.yaml has one domain over one real server, runs
every stage in process (`run_pipeline`, as `factory run` does) and reads the published values.
Without the install the tests skip, unless ``FACTORY_REQUIRE_REALTOOLS=1`` (CI), which fails them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
REQUIRE_ENV = "FACTORY_REQUIRE_REALTOOLS"
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
SERVERS = ("mcp-server-memory", "mcp-server-filesystem", "mcp-server-everything", "prism")


def realtools_bin() -> Path:
    """The folder of the installed servers' executables; skip (or fail under CI) when missing."""
    root = Path(os.environ.get("FACTORY_REALTOOLS") or REPO / ".realtools")
    bin_dir = root / "node_modules" / ".bin"
    missing = [s for s in SERVERS if not (bin_dir / s).exists()]
    if missing:
        msg = (
            f"third-party tool servers not installed in {bin_dir} (missing {', '.join(missing)}): run `make realtools`"
        )
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return bin_dir


@dataclass
class RealRun:
    """One pipeline run over one domain: its config, per-stage results and wall time."""

    cfg: Any
    domain: str
    results: dict[tuple[str, str], Any]
    wall_s: float
    mcp_stats: dict[str, dict[str, int]] = field(default_factory=dict)

    def load(self, asset: str, domain: str | None = None) -> Any:
        from factory.io import artifact_exists, read_artifact

        if not artifact_exists(self.cfg, asset, domain):
            return None
        return read_artifact(self.cfg, asset, domain)

    def load_any(self, asset: str, domain: str | None = None) -> Any:
        """The published value, else the one a failing gate of this run left staged (for reports)."""
        from factory.io import data_store, read_staged

        value = self.load(asset, domain)
        if value is not None:
            return value
        for res in self.results.values():
            value = read_staged(data_store(self.cfg), asset, domain, res.run_id, default=None)
            if value is not None:
                return value
        return None

    def stage_ok(self, job: str) -> bool:
        key = (job, self.domain if job.startswith("domain_") else "(global)")
        res = self.results.get(key)
        return bool(res is not None and res.success and all(e.passed for e in res.get_asset_check_evaluations()))

    def failed_checks(self) -> list[str]:
        out = []
        for (job, d), res in self.results.items():
            out += [f"{job}/{d}: {e.asset_check_key.name}" for e in res.get_asset_check_evaluations() if not e.passed]
            if not res.success:
                out.append(f"{job}/{d}: run failed")
        return out


def run_project(tmp: Path, domain: dict[str, Any], **overrides: Any) -> RealRun:
    """Write a project folder in `tmp` with one domain (no demo source) and run every stage in process."""
    import dagster as dg

    from factory.config import load_config
    from factory.definitions import build_definitions
    from factory.tools.transports.mcp_pool import close_mcp_sessions
    from sensors.jobs import run_pipeline
    from sensors.partitions import sync_domain_partitions
    from tests.conftest import write_config

    base = load_config().model_dump(mode="json")
    graph = {**base["graph"], "iterations": 3, "paths_per_iteration": 20, "eval_trials_per_edge": 0}
    synthesis = {**base["synthesis"], "per_pattern": 2, "attempts": 40}
    settings: dict[str, Any] = {"graph": graph, "synthesis": synthesis}
    for k, v in overrides.items():  # a section given in part keeps the rest of it
        settings[k] = {**settings[k], **v} if isinstance(v, dict) and isinstance(settings.get(k), dict) else v
    path = write_config(tmp, domains=[domain], **settings)
    cfg = load_config(path)
    defs = build_definitions(str(path))
    close_mcp_sessions()  # count this run's server starts alone
    t0 = time.monotonic()
    with dg.instance_for_test() as instance:
        sync_domain_partitions(instance, cfg.domain_names)
        results = run_pipeline(
            defs, instance, cfg.domain_names, run_config=QUIET, keep_going=True, progress=lambda m: print(m, flush=True)
        )
    wall = time.monotonic() - t0
    stats = close_mcp_sessions()
    return RealRun(cfg, domain["name"], results, wall, stats)


def summary(run: RealRun) -> dict[str, Any]:
    """What the issue asks per server: tools, probe success share, edges kept, tasks kept, wall time."""
    from tests.realtools.expect import kept_edges, metadata, read_only_share

    d = run.domain
    inv = run.load("tool_inventory", d) or {}
    trajectories = run.load("trajectories", d) or {}
    judged = run.load("judged_queries", d) or {}
    exports = run.load("dataset_exports") or {}
    share, ok = read_only_share(run, staged=True)
    probes_meta = metadata(run, "tool_probes")
    return {
        "tools": len(inv.get("tools") or []),
        "read_only_tools_ok": f"{sum(ok.values())}/{len(ok)}",
        "read_only_probe_success_share": round(share, 2),
        "tool_success_share": probes_meta.get("tool_success_share"),
        "no_success": {r["tool"]: r["reason"] for r in (run.load_any("tool_probes", d) or {}).get("no_success") or []},
        "edges_kept": sorted(kept_edges(run)),
        "trajectories": len(trajectories.get("trajectories") or []),
        "tasks_kept": len(judged.get("kept") or []),
        "exported_tasks": int(exports.get("tasks") or 0),
        "recordings_exported": {p: e["rows"] for p, e in (exports.get("recordings") or {}).items()},
        "wall_s": round(run.wall_s, 1),
        "mcp": run.mcp_stats,
        "failed": run.failed_checks(),
    }
