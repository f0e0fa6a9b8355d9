"""G*: the connectivity_graph stage (pure core) and its metadata, including Figures 4, 6 and 7."""

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from factory.config import ProjectConfig
from factory.graph.edge import Edge, parse_edges
from factory.graph.posterior import EDGE_OUTCOME_CLASSES
from factory.graph.refine import Refiner, add_posterior_summary, figure4
from factory.graph.skeleton import edge_table, seed_knowledge_graph
from factory.io import data_store
from factory.llm.client import ModelClient
from factory.report import md_table, plot, rate
from factory.tools.executor import ToolExecutor
from factory.tools.registry import ToolRegistry, executor_factory

log = logging.getLogger(__name__)


def involved_domains(skeleton: Mapping[str, Any]) -> list[str]:
    return sorted({skeleton["domain"], *(e.target_domain for e in parse_edges(skeleton["edges"]))})


def build_connectivity(
    skeleton: Mapping[str, Any],
    inventories: Mapping[str, Mapping[str, Any]],
    probes: Mapping[str, Mapping[str, Any]],
    cfg: ProjectConfig,
    model: ModelClient | None = None,
    progress: Callable[[str], None] = log.info,
    after_iteration: Callable[[int], None] | None = None,
    make_executor: Callable[[], ToolExecutor] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the refinement loop over `skeleton` and return (G* value, metadata).

    `model` is the model client serving the `source_arguments` role (None: rules directly).
    """
    domain = skeleton["domain"]
    specs = ToolRegistry.from_inventories(inventories, probes)
    skeleton_edges = parse_edges(skeleton["edges"])
    missing = sorted({e.target_tool_id for e in skeleton_edges} - set(specs))
    # a target domain's inventory is not materialized: its edges cannot run
    skeleton = {**skeleton, "edges": [e for e in skeleton_edges if e.target_tool_id in specs]}
    # the loop reads only the value lookups (start arguments, type checks) and G* is built from the
    # observations it keeps: no entities or triples per observed call (issue 20, the CPU between calls)
    kg = seed_knowledge_graph(domain, specs, probes, cfg, lookups_only=True)
    store = data_store(cfg)
    source_args = None
    if model is not None:

        async def source_args(inputs):
            return await model.amap("source_arguments", inputs)

    refiner = Refiner(
        domain,
        skeleton,
        specs,
        kg,
        cfg,
        make_executor or executor_factory(cfg, involved_domains(skeleton), specs),
        source_args=source_args,
        store=store,
        progress=progress,
        after_iteration=after_iteration,
    )

    async def main():
        try:
            return await refiner.run()
        finally:
            if model is not None:
                await model.aclose_loop()

    state = asyncio.run(main())
    tau = cfg.graph.tau_prune
    edges: list[Edge] = state["edges"]
    for e in edges:
        add_posterior_summary(e, tau)
    value = {
        "domain": domain,
        "fingerprint": skeleton.get("fingerprint"),
        "seed": cfg.seed,
        "config": cfg.graph.model_dump(mode="json"),
        "schemas": skeleton.get("schemas", {}),
        "value_types": skeleton.get("value_types", {}),
        "edges": [e.to_json() for e in edges],
        "history": state["history"],
        "observations": state["observations"],
        "stats": {
            **state["stats"],
            "skeleton_edges": len(edges),
            "edges_without_target_inventory": len(missing),
            "retained": sum(1 for e in edges if e.status == "retained"),
            "pruned": sum(1 for e in edges if e.status == "pruned"),
            "tested": sum(1 for e in edges if e.trials > 0),
            "type_mismatched_edges": len(refiner.type_mismatched),
            "figure4": figure4(edges),
        },
    }
    refiner.clear()
    return value, connectivity_metadata(value)


# --------------------------------------------------------------------------- metadata


def _moving_average(xs: list[float], k: int = 3) -> list[float]:
    out = []
    for i in range(len(xs)):
        win = xs[max(0, i - k + 1) : i + 1]
        out.append(sum(win) / len(win))
    return out


def figure6_plot(history: list[Mapping[str, Any]]):
    its = [h["iteration"] for h in history]
    pr = [h["pass_rate"] for h in history]
    ss = [h["step_success_rate"] for h in history]

    def draw(ax):
        ax.plot(its, pr, color="#4477aa", alpha=0.35)
        ax.plot(its, ss, color="#ee6677", alpha=0.35)
        ax.plot(its, _moving_average(pr), color="#4477aa", lw=2.2, label="trajectory pass rate")
        ax.plot(its, _moving_average(ss), color="#ee6677", lw=2.2, label="step success rate")
        ax.set_xlabel("iteration")
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=8, loc="lower right")

    return plot(draw, title="Phase A convergence (Figure 6)")


def figure7_plot(edges: list[Edge], tau: float):
    tested = [e for e in edges if e.trials > 0]

    def draw(ax):
        for status, color in (("retained", "#228833"), ("pruned", "#cc3311")):
            pts = [(e.feasibility, e.posterior_mean) for e in tested if e.status == status]
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.scatter(xs, ys, s=14, alpha=0.7, color=color, label=f"{status} ({len(pts)})")
        ax.plot([0, 1], [0, 1], color="#999999", lw=0.8, ls=":")
        ax.axhline(tau, color="#333333", lw=1, ls="--", label=f"τ = {tau}")
        ax.set_xlabel("feasibility prior s_e")
        ax.set_ylabel("posterior mean θ̄_e")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=8, loc="upper left")

    return plot(draw, title="prior vs posterior (Figure 7)", size=(5.0, 4.2))


def figure4_plot(f4: Mapping[str, Any]):
    groups = ["skeleton", "retained", "pruned"]

    def draw(ax):
        x = np.arange(len(groups))
        for j, (key, label, color) in enumerate(
            (("loop", "in-loop trials", "#88ccee"), ("held_out", "held-out sweep", "#332288"))
        ):
            vals = [f4[g][key]["trial_success_rate"] or 0.0 for g in groups]
            ax.bar(x + (j - 0.5) * 0.38, vals, width=0.36, color=color, label=label)
            for xi, v in zip(x, vals, strict=True):
                ax.text(xi + (j - 0.5) * 0.38, v + 0.01, f"{v:.2f}", ha="center", fontsize=7)
        ax.set_xticks(x, groups)
        ax.set_ylim(0, 1.1)
        ax.set_ylabel("execution success rate")
        ax.legend(fontsize=8)

    return plot(draw, title="execution success by edge set (Figure 4)")


def connectivity_metadata(value: Mapping[str, Any]) -> dict[str, Any]:
    edges, history, st = parse_edges(value["edges"]), value["history"], value["stats"]
    tau = value["config"]["tau_prune"]
    f4 = st["figure4"]
    outcome_totals = {c: 0 for c in EDGE_OUTCOME_CLASSES}
    for e in edges:
        for c, n in e.outcome_counts.items():
            outcome_totals[c] = outcome_totals.get(c, 0) + n
    retained = sorted(
        (e for e in edges if e.status == "retained"), key=lambda e: (-(e.posterior_mean or 0.0), -e.trials)
    )
    pruned = sorted((e for e in edges if e.status == "pruned"), key=lambda e: e.posterior_mean or 0.0)
    first, last = (history[0], history[-1]) if history else ({}, {})
    meta: dict[str, Any] = {
        "skeleton_edges": st["skeleton_edges"],
        "retained": st["retained"],
        "pruned": st["pruned"],
        "tested_edges": st["tested"],
        "untested_edges": st["skeleton_edges"] - st["tested"],
        "retained_rate": rate(st["retained"], st["skeleton_edges"]),
        "iterations": len(history),
        "resumed_from_iteration": st.get("resumed_from_iteration", 0),
        "calls": st.get("calls", 0),
        "loop_seconds": st.get("loop_seconds", 0.0),
        "start_arg_fallbacks": st.get("start_arg_fallbacks", 0),
        "edges_without_target_inventory": st.get("edges_without_target_inventory", 0),
        "paths": sum(h["paths"] for h in history),
        "first_pass_rate": first.get("pass_rate", 0.0),
        "last_pass_rate": last.get("pass_rate", 0.0),
        "first_step_success_rate": first.get("step_success_rate", 0.0),
        "last_step_success_rate": last.get("step_success_rate", 0.0),
        "outcome_counts": outcome_totals,
        "observations": len(value.get("observations", [])),
        "type_mismatched_edges": st.get("type_mismatched_edges", 0),
    }
    for g in ("skeleton", "retained", "pruned"):
        for key in ("loop", "held_out"):
            r = f4[g][key]
            meta[f"success_rate/{g}/{key}"] = r["trial_success_rate"] if r["trial_success_rate"] is not None else -1.0
        meta[f"zero_success_share/{g}"] = (
            f4[g]["loop"]["zero_success_share"] if f4[g]["loop"]["zero_success_share"] is not None else -1.0
        )
    meta["figure4"] = figure4_plot(f4)
    meta["figure4_table"] = md_table(
        [
            {
                "set": g,
                "edges tested": f4[g]["loop"]["edges"],
                "loop success": f4[g]["loop"]["trial_success_rate"],
                "mean edge success": f4[g]["loop"]["mean_edge_success_rate"],
                "zero-success share": f4[g]["loop"]["zero_success_share"],
                "edges t>=10": f4[g]["loop_high_evidence"]["edges"],
                "held-out edges": f4[g]["held_out"]["edges"],
                "held-out success": f4[g]["held_out"]["trial_success_rate"],
            }
            for g in ("skeleton", "retained", "pruned")
        ]
    )
    if history:
        meta["figure6"] = figure6_plot(list(history))
        meta["history"] = md_table(list(history), limit=len(history))
    if any(e.trials for e in edges):
        meta["figure7"] = figure7_plot(edges, tau)
    meta["top_retained"] = edge_table(retained, limit=15, extra=("trials", "successes", "posterior_mean"))
    meta["pruned_edges"] = edge_table(
        pruned, limit=15, extra=("trials", "successes", "posterior_mean", "pruned_at_iteration")
    )
    return meta


def rates_frame(value: Mapping[str, Any]) -> pd.DataFrame:
    """One row: the retained rate and the Figure 4 rates (the reported-rate gate)."""
    f4 = value["stats"]["figure4"]
    st = value["stats"]
    return pd.DataFrame(
        [
            {
                "skeleton_edges": st["skeleton_edges"],
                "retained_rate": rate(st["retained"], st["skeleton_edges"]),
                "skeleton_success_rate": f4["skeleton"]["loop"]["trial_success_rate"],
                "retained_success_rate": f4["retained"]["loop"]["trial_success_rate"],
                "pruned_success_rate": f4["pruned"]["loop"]["trial_success_rate"],
            }
        ]
    )
