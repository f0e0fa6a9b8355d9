"""Phase A throughput: concurrent vs sequential path execution, and the cost of one iteration
as the tool inventory grows (demo tools replicated under new names; every call is real).

    .venv/bin/python benchmarks/graph_throughput.py [--paths 40] [--sizes 50,200,800] [--latency-ms 0,50]

Starts its own demo service on a free port, ingests the demo domains into a temporary data
folder, and prints one JSON report.
"""

import argparse
import json
import socket
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from factory import ingest
from factory.config import load_config
from factory.demo.service import DemoService
from factory.embed import Embedder
from factory.graph.refine import Refiner
from factory.graph.skeleton import build_skeleton, seed_knowledge_graph
from factory.llm import rules
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.spec import ToolSpec


class _Rules:
    def __init__(self, out):
        self.output, self.fallback, self.failure = out, False, None

    def provenance(self):
        return {"implementation": "rules"}


def propose(inputs):
    return [_Rules(rules.edge_proposal(i)) for i in inputs]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _refine_seconds(domain, skeleton, inventories, probes, cfg, concurrent):
    specs = ToolRegistry.from_inventories(inventories)
    kg = seed_knowledge_graph(domain, specs, probes, cfg)
    import asyncio

    refiner = Refiner(
        domain,
        skeleton,
        specs,
        kg,
        cfg,
        executor_factory(cfg, sorted(inventories), specs),
        concurrent=concurrent,
        progress=lambda m: None,
    )
    t = time.monotonic()
    state = asyncio.run(refiner.run())
    secs = time.monotonic() - t
    paths = sum(h["paths"] + h["dead_ends"] + h["start_failures"] for h in state["history"])
    return secs, paths, state


def replicate(inventories, probes, catalog, n_tools):
    """A synthetic domain 'bench' of `n_tools` copies of the demo's REST tools (same endpoints)."""
    base = [
        ToolSpec.model_validate(t)
        for inv in inventories.values()
        for t in inv["tools"]
        if t["source"]["kind"] == "openapi"
    ]
    emb = {r.tool_id: np.asarray(r.embedding, dtype=np.float32) for r in catalog.itertuples()}
    rows_by_tool = {(r["platform"], r["tool"]): r for p in probes.values() for r in p["rows"]}
    rng = np.random.default_rng(0)
    tools, cat, rows = [], [], []
    for i in range(n_tools):
        t = base[i % len(base)]
        k = i // len(base)
        name = t.name if k == 0 else f"{t.name}__r{k}"
        spec = t.model_copy(update={"domain": "bench", "name": name})
        tools.append(spec.model_dump(mode="json"))
        v = emb[f"{t.domain}/{t.platform}/{t.name}"] + rng.normal(scale=0.01, size=384).astype(np.float32)
        cat.append({"tool_id": f"bench/{t.platform}/{name}", "embedding": v.tolist()})
        r = rows_by_tool.get((t.platform, t.name))
        if r:
            rows.append({**r, "tool": name})
    inv = {"bench": {"domain": "bench", "fingerprint": "bench", "tools": tools}}
    return inv, {"bench": {"rows": rows}}, pd.DataFrame(cat)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paths", type=int, default=40)
    ap.add_argument("--sizes", default="50,200,800")
    ap.add_argument("--latency-ms", default="0,50", help="Per-request latency added by the demo (comma list).")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="graph-bench-"))
    cfg = load_config()
    cfg = cfg.model_copy(
        update={
            "data_dir": str(tmp / "data"),
            "demo": cfg.demo.model_copy(update={"port": _port(), "faults": {}}),
            "graph": cfg.graph.model_copy(
                update={
                    "iterations": 2,
                    "paths_per_iteration": args.paths,
                    "eval_trials_per_edge": 0,
                    "checkpoint": False,
                    "execute_state_changing": False,
                }
            ),
        }
    )
    report: dict = {}
    with DemoService(cfg.demo, log_dir=tmp / "logs"):
        inv = {d.name: ingest.build_inventory(d, cfg)[0] for d in cfg.domains}
        probes = {d: ingest.run_probes(inv[d], cfg, progress=lambda m: None)[0] for d in inv}
        catalog = ingest.build_catalog(inv, Embedder(cfg.models.embeddings).encode)[0]
        sk, _ = build_skeleton("aviation", inv, probes, catalog, cfg, propose)
        svc = DemoService(cfg.demo)
        report["concurrency"] = []
        for latency_ms in [int(x) for x in args.latency_ms.split(",")]:
            # the demo answers in about a millisecond; public APIs take tens to hundreds
            for platform in ("airline-registry", "flight-ops", "airport-directory"):
                svc.set_faults(platform, {"slow": 1.0, "slow_seconds": latency_ms / 1000} if latency_ms else {})
            seq_s, seq_paths, _ = _refine_seconds("aviation", sk, inv, probes, cfg, concurrent=False)
            con_s, con_paths, _ = _refine_seconds("aviation", sk, inv, probes, cfg, concurrent=True)
            report["concurrency"].append(
                {
                    "domain": "aviation",
                    "added_latency_ms": latency_ms,
                    "paths": con_paths,
                    "sequential_paths_per_s": round(seq_paths / seq_s, 2),
                    "concurrent_paths_per_s": round(con_paths / con_s, 2),
                    "speedup": round((con_paths / con_s) / (seq_paths / seq_s), 2),
                    "concurrency_per_platform": cfg.executor.concurrency_per_platform,
                }
            )
        for platform in ("airline-registry", "flight-ops", "airport-directory"):
            svc.set_faults(platform, {})
        one = cfg.model_copy(update={"graph": cfg.graph.model_copy(update={"iterations": 1, "k_cross_domain": 0})})
        scaling = []
        for n in [int(x) for x in args.sizes.split(",")]:
            binv, bprobes, bcat = replicate(inv, probes, catalog, n)
            t = time.monotonic()
            bsk, _ = build_skeleton("bench", binv, bprobes, bcat, one, propose)
            sk_s = time.monotonic() - t
            it_s, paths, state = _refine_seconds("bench", bsk, binv, bprobes, one, concurrent=True)
            scaling.append(
                {
                    "tools": n,
                    "candidate_edges": len(bsk["edges"]) + len(bsk["rejected"]),
                    "admitted_edges": len(bsk["edges"]),
                    "skeleton_s": round(sk_s, 2),
                    "iteration_s": round(it_s, 2),
                    "calls": state["stats"]["calls"],
                    "paths": paths,
                }
            )
        report["scaling"] = scaling
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
