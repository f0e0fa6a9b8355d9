"""Graph scale (issue 20 #1-2): the skeleton and Phase A as the tool inventory grows, and concurrent vs
sequential path execution under added latency, each printed side by side with the earlier code.

    .venv/bin/python benchmarks/graph_throughput.py [--sizes 800,3200,10000] [--latency-ms 0,50,200]
        [--concurrency 4,16] [--paths 40] [--legacy-full-max 800] [--legacy-sample 150]

Starts its own demo service on a free port, ingests the demo domains into a temporary data folder,
and prints Markdown tables (and, with --json, one JSON report).  The large inventories are the
demo's REST tools replicated under new names (same endpoints, embeddings with small noise); every
Phase A call is real.

- Skeleton: candidate retrieval (blocked top-K, `candidate_pairs`) against the earlier per-source
  loop (`legacy=True`) — whole for sizes up to --legacy-full-max, above that timed on a sample of
  --legacy-sample sources and scaled to all of them (marked "est.").  The build's own work is shown
  apart from the edge proposals (the `edge_proposal` role: a model call in a run; here the rules,
  asked once per distinct pair of replicated tools).
- Phase A: seconds of one iteration (M paths) with the adjacency kept across iterations against the
  earlier whole-graph copy and prune scan (`Refiner(legacy=True)`), same seed, same paths.
- Concurrency: paths/s one path at a time against all paths in flight at each per-platform
  concurrency, at every added latency (0 / 50 / 200 ms by default) in one run: "live" (the demo
  adds the latency and serves every request itself, on the same cores) and "replay" (recorded
  answers after the latency: the factory's own concurrency); at the top level also the earlier
  code (`Refiner(legacy=True)` and a knowledge graph with entities and triples per observed call) in
  the same run.
  `--sizes ''` runs only this part.
"""

import argparse
import asyncio
import gc
import json
import pickle
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from factory import ingest
from factory.config import load_config
from factory.demo.service import DemoService
from factory.embed import Embedder
from factory.graph.refine import Refiner
from factory.graph.skeleton import build_skeleton, candidate_pairs, seed_knowledge_graph
from factory.lexicon import infer_value_types
from factory.llm import rules
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.spec import ToolSpec


class _Rules:
    def __init__(self, out: Any) -> None:
        self.output, self.fallback, self.failure = out, False, None

    def provenance(self) -> dict[str, str]:
        return {"implementation": "rules"}


def propose(inputs: list[Any]) -> list[_Rules]:
    return [_Rules(rules.edge_proposal(i)) for i in inputs]


class TimedProposals:
    """The rules' edge proposals, asked once per pair of base tools (replicas share schemas and probe
    values, so their proposals are equal), with the seconds spent in them."""

    def __init__(self, memo: bool = True) -> None:
        self.seconds = 0.0
        self.asked = 0
        self.memo = memo  # False: asked for every input (the demo's own tools)
        self._memo: dict[tuple[str, str], _Rules] = {}

    def __call__(self, inputs: list[Any]) -> list[_Rules]:
        t = time.monotonic()
        out = []
        for i in inputs:
            if not self.memo:
                out.append(_Rules(rules.edge_proposal(i)))
                continue
            key = (i.source.name.split("__r")[0], i.target.name.split("__r")[0])
            if key not in self._memo:
                self._memo[key] = _Rules(rules.edge_proposal(i))
            out.append(self._memo[key])
        self.asked += len(inputs)
        self.seconds += time.monotonic() - t
        return out


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _refine(domain, skeleton, inventories, probes, cfg, concurrent=True, legacy=False):
    specs = ToolRegistry.from_inventories(inventories)
    kg = seed_knowledge_graph(domain, specs, probes, cfg, lookups_only=not legacy)  # as build_connectivity
    refiner = Refiner(
        domain,
        skeleton,
        specs,
        kg,
        cfg,
        executor_factory(cfg, sorted(inventories), specs),
        concurrent=concurrent,
        progress=lambda m: None,
        legacy=legacy,
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


def _compare(old, new):
    """(same set of (source, target) pairs, positions where the order differs, similarities that differ
    in the 4th decimal): float32 sums in another order can swap near-duplicate targets whose cosine
    agrees to 4 decimals, or move a rounding by one unit."""
    po, pn = [p[:2] for p in old], [p[:2] for p in new]
    same = sorted(po) == sorted(pn)
    swaps = sum(a != b for a, b in zip(po, pn, strict=True)) if same else None
    sim = {p[:2]: p[2] for p in old}
    diff = sum(sim[p[:2]] != p[2] for p in new) if same else None
    return same, swaps, diff


def _retrieval(n, binv, bprobes, bcat, k, full_max, sample):
    specs = ToolRegistry.from_inventories(binv, bprobes)
    t = time.monotonic()
    new, _ = candidate_pairs("bench", specs, bcat, k, 0)
    new_s = time.monotonic() - t
    sources = sorted({p[0] for p in new})
    if n <= full_max:
        t = time.monotonic()
        old, _ = candidate_pairs("bench", specs, bcat, k, 0, legacy=True)
        old_s, est = time.monotonic() - t, False
        same, swaps, sim_diff = _compare(old, new)
    else:
        picked = set(np.random.default_rng(1).choice(sources, size=min(sample, len(sources)), replace=False).tolist())
        t = time.monotonic()
        old, _ = candidate_pairs("bench", specs, bcat, k, 0, legacy=True, only_sources=picked)
        old_s, est = (time.monotonic() - t) * len(sources) / len(picked), True
        sub = [p for p in new if p[0] in picked]
        same, swaps, sim_diff = _compare(old, sub)
    return {
        "pairs": len(new),
        "retrieval_old_s": round(old_s, 2),
        "retrieval_old_estimated": est,
        "retrieval_new_s": round(new_s, 3),
        "retrieval_speedup": round(old_s / new_s, 1),
        "same_pairs": same,
        "order_swaps": swaps,
        "similarity_4th_decimal_differs": sim_diff,
    }


def _lexicon(binv, bprobes, cfg):
    """The replicated domain's value types (what its tool_lexicon value would hold), with their seconds."""
    t = time.monotonic()
    vt = infer_value_types(binv, bprobes, cfg)
    return {"bench": {"value_types": {"tools": vt.tools, "parents": vt.parents}}}, time.monotonic() - t


def _timed_skeleton(binv, bprobes, bcat, cfg, lexicons, legacy):
    """(skeleton, wall s, CPU s of this process, proposals asked, their seconds)."""
    gc.collect()
    prop = TimedProposals()
    t, c = time.monotonic(), time.process_time()
    sk, _ = build_skeleton("bench", binv, bprobes, bcat, cfg, prop, lexicons=lexicons, legacy=legacy)
    return sk, time.monotonic() - t, time.process_time() - c, prop.asked, prop.seconds


def _same_edges(old, new):
    """(same edges apart from the similarity, edges whose similarity differs in the 4th decimal)."""
    a = {e["edge_id"]: {**e, "similarity": None} for e in old["edges"]}
    b = {e["edge_id"]: {**e, "similarity": None} for e in new["edges"]}
    sim = {e["edge_id"]: e["similarity"] for e in old["edges"]}
    return a == b, sum(sim.get(e["edge_id"]) != e["similarity"] for e in new["edges"])


def scaling_row(n, inv, probes, catalog, one, args):
    binv, bprobes, bcat = replicate(inv, probes, catalog, n)
    row: dict[str, Any] = {"tools": n}
    row.update(_retrieval(n, binv, bprobes, bcat, one.graph.k_same_domain, args.legacy_full_max, args.legacy_sample))
    lexicons, types_s = _lexicon(binv, bprobes, one)
    row["types_s"] = round(types_s, 2)
    bsk, total, cpu, asked, prop_s = _timed_skeleton(binv, bprobes, bcat, one, lexicons, legacy=False)
    row.update(
        {
            "admitted_edges": len(bsk["edges"]),
            "skeleton_s": round(total, 2),
            "skeleton_own_s": round(total - prop_s, 2),
            "skeleton_own_cpu_s": round(cpu - prop_s, 2),
            "proposals": asked,
            "proposal_s": round(prop_s, 2),
            "type_infeasible": bsk["stats"]["no_type_compatible_slots"],
        }
    )
    if n <= args.legacy_full_max:
        old, total, cpu, asked, prop_s = _timed_skeleton(binv, bprobes, bcat, one, lexicons, legacy=True)
        row["skeleton_old_s"] = round(total, 2)
        row["skeleton_old_own_s"] = round(total - prop_s, 2)
        row["skeleton_old_own_cpu_s"] = round(cpu - prop_s, 2)
        row["proposals_old"] = asked
        row["same_edges"], row["similarity_4th_decimal_differs_edges"] = _same_edges(old, bsk)
        del old
    for legacy in (False, True):
        gc.collect()
        run_s, paths, state = _refine("bench", bsk, binv, bprobes, one, legacy=legacy)
        it = state["history"][0]
        key = "old" if legacy else "new"
        row[f"iteration_{key}_s"] = it["seconds"]
        row[f"run_{key}_s"] = round(run_s, 2)
        row[f"paths_{key}"] = paths
        row[f"calls_{key}"] = it["calls"]
    del bsk
    gc.collect()
    return row


class Replay:
    """A latency-only tool service for the concurrency figures: every transport's `send` answers from
    the exchanges recorded in a first (untimed) pass over the same paths, after sleeping the added
    latency, so what is timed is waiting plus the factory's own work per call, not the demo service's
    CPU (pandas over 336,776 flights per request, on the same cores).  A call not recorded is sent."""

    def __init__(self) -> None:
        self.latency_s = 0.0
        self.recording = True
        self.hits = self.misses = 0
        self._seen: dict[tuple[str, str], Any] = {}
        self._orig: dict[type, Any] = {}

    @staticmethod
    def _key(tool: ToolSpec, prepared: Any) -> tuple[str, str]:
        if isinstance(prepared, tuple) and len(prepared) == 2 and isinstance(prepared[1], dict):
            url, kw = prepared  # HTTP: (url, request kwargs); the key (per executor) is left out
            key = tool.generic_params.key
            kw = {
                k: ({a: b for a, b in v.items() if a != key} if isinstance(v, dict) else v)
                for k, v in kw.items()
                if k != "headers"
            }
            return tool.name, json.dumps([url, kw], sort_keys=True, default=str)
        return tool.name, repr(prepared)

    def __enter__(self) -> "Replay":
        from factory.tools.transports import TRANSPORTS

        for cls in set(TRANSPORTS.values()):
            self._orig[cls] = orig = cls.send

            async def send(self_, tool, prepared, _orig=orig, replay=self):
                key = replay._key(tool, prepared)
                if not replay.recording and key in replay._seen:
                    replay.hits += 1
                    await asyncio.sleep(replay.latency_s)
                    return pickle.loads(replay._seen[key])  # a fresh copy (a tenth of deepcopy's CPU)
                replay.misses += 1
                ex = await _orig(self_, tool, prepared)
                replay._seen[key] = pickle.dumps(ex)
                await asyncio.sleep(replay.latency_s)
                return ex

            cls.send = send  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: Any) -> None:
        for cls, orig in self._orig.items():
            cls.send = orig  # type: ignore[method-assign]


def _paths_per_s(state):
    """Paths per second of the loop's iterations (the run's setup, the same in both modes, left out)."""
    h = state["history"]
    paths = sum(x["paths"] + x["dead_ends"] + x["start_failures"] for x in h)
    return paths / max(sum(x["seconds"] for x in h), 1e-9), paths, sum(x["calls"] for x in h)


def concurrency_rows(sk, inv, probes, cfg, svc, latencies, levels):
    out = []
    platforms = ("airline-registry", "flight-ops", "airport-directory")
    _refine("aviation", sk, inv, probes, cfg)  # warm-up: MCP servers started, demo tables loaded (untimed)

    def measure(row, tag):
        cpu = time.process_time()
        _, _, seq = _refine("aviation", sk, inv, probes, cfg, concurrent=False)
        seq_rate, paths, calls = _paths_per_s(seq)
        row.update({f"{tag}sequential_paths_per_s": round(seq_rate, 2), "paths": paths, "calls": calls})
        # this process's CPU per call (the whole run: setup, paths, calls), to set against the loop's wall time
        row[f"{tag}sequential_cpu_ms_per_call"] = round(1000 * (time.process_time() - cpu) / max(calls, 1), 1)
        for c in levels:
            ccfg = cfg.model_copy(update={"executor": cfg.executor.model_copy(update={"concurrency_per_platform": c})})
            cpu = time.process_time()
            _, _, con = _refine("aviation", sk, inv, probes, ccfg, concurrent=True)
            row[f"{tag}c{c}_cpu_ms_per_call"] = round(1000 * (time.process_time() - cpu) / max(calls, 1), 1)
            rate_c = _paths_per_s(con)[0]
            row[f"{tag}c{c}_paths_per_s"] = round(rate_c, 2)
            row[f"{tag}c{c}_speedup"] = round(rate_c / seq_rate, 2)
            h = con["history"]
            row[f"{tag}c{c}_loop_s"] = round(sum(x["seconds"] for x in h), 2)
        if tag == "replay_":  # the earlier code, sequential and at the top level (legacy Refiner, full KG)
            c = max(levels)
            ccfg = cfg.model_copy(update={"executor": cfg.executor.model_copy(update={"concurrency_per_platform": c})})
            _, _, old_seq = _refine("aviation", sk, inv, probes, ccfg, concurrent=False, legacy=True)
            _, _, old = _refine("aviation", sk, inv, probes, ccfg, concurrent=True, legacy=True)
            row["replay_sequential_old_paths_per_s"] = round(_paths_per_s(old_seq)[0], 2)
            row[f"replay_c{c}_old_paths_per_s"] = round(_paths_per_s(old)[0], 2)
            row[f"replay_c{c}_old_speedup"] = round(_paths_per_s(old)[0] / _paths_per_s(old_seq)[0], 2)

    for latency_ms in latencies:
        row: dict[str, Any] = {"added_latency_ms": latency_ms}
        # live: the demo service adds the latency and does its own work per request on the same cores
        for platform in platforms:
            svc.set_faults(platform, {"slow": 1.0, "slow_seconds": latency_ms / 1000} if latency_ms else {})
        measure(row, "")
        for platform in platforms:
            svc.set_faults(platform, {})
        # replay: the latency alone (recorded answers), the factory's own concurrency
        with Replay() as rp:
            _refine("aviation", sk, inv, probes, cfg)  # record (untimed)
            _refine("aviation", sk, inv, probes, cfg, concurrent=False)
            rp.recording, rp.latency_s = False, latency_ms / 1000
            measure(row, "replay_")
            row["replay_unrecorded_calls"] = rp.misses
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def markdown(report: dict[str, Any], levels: list[int]) -> str:
    lines = ["### Skeleton and Phase A vs tools (old = the per-source retrieval loop / whole-graph iteration)", ""]
    lines += [
        "| tools | candidate pairs | retrieval old s | retrieval new s | × | same pairs (order swaps) "
        "| value types s | skeleton old s (own, own CPU) | skeleton new s (own, own CPU) | × own CPU "
        "| proposals old / new (s) | same edges | Phase A iteration old s | new s | paths |",
        "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for r in report["scaling"]:
        old = f"{r['retrieval_old_s']}{' est.' if r['retrieval_old_estimated'] else ''}"
        sk_old = (
            f"{r['skeleton_old_s']} ({r['skeleton_old_own_s']}, {r['skeleton_old_own_cpu_s']})"
            if "skeleton_old_s" in r
            else "—"
        )
        ratio = (
            round(r["skeleton_old_own_cpu_s"] / max(r["skeleton_own_cpu_s"], 1e-9), 1) if "skeleton_old_s" in r else "—"
        )
        lines.append(
            f"| {r['tools']} | {r['pairs']} | {old} | {r['retrieval_new_s']} | {r['retrieval_speedup']} "
            f"| {r['same_pairs']} ({r.get('order_swaps')}) | {r['types_s']} | {sk_old} "
            f"| {r['skeleton_s']} ({r['skeleton_own_s']}, {r['skeleton_own_cpu_s']}) | {ratio} "
            f"| {r.get('proposals_old', '—')} / {r['proposals']} ({r['proposal_s']}) | {r.get('same_edges', '—')} "
            f"| {r['iteration_old_s']} | {r['iteration_new_s']} | {r['paths_new']} |"
        )
    lines += ["", "### Concurrent vs sequential paths (aviation, paths/s of the loop's iterations)", ""]
    lines += ["live: the demo service adds the latency (and does its own work per request on the same cores); "]
    lines += ["replay: recorded answers after the added latency (the factory's own concurrency).", ""]
    head = " | ".join(f"{m} concurrency {c} (×)" for m in ("live", "replay") for c in levels)
    top = max(levels)
    lines += [
        f"| added latency ms | calls | live sequential | replay sequential | {head} "
        f"| replay earlier code: sequential, c{top} (×) | CPU ms/call replay seq / c{top} |",
        "| ---: | ---: | ---: | ---: |" + " ---: |" * (2 * len(levels) + 2),
    ]
    for r in report["concurrency"]:
        cells = " | ".join(
            f"{r[f'{t}c{c}_paths_per_s']} (×{r[f'{t}c{c}_speedup']})" for t in ("", "replay_") for c in levels
        )
        lines.append(
            f"| {r['added_latency_ms']} | {r['calls']} | {r['sequential_paths_per_s']} "
            f"| {r['replay_sequential_paths_per_s']} | {cells} | {r.get('replay_sequential_old_paths_per_s', '—')}, "
            f"{r.get(f'replay_c{top}_old_paths_per_s', '—')} (×{r.get(f'replay_c{top}_old_speedup', '—')}) "
            f"| {r['replay_sequential_cpu_ms_per_call']} / {r[f'replay_c{top}_cpu_ms_per_call']} |"
        )
    return "\n".join(lines)


def bench_config(cfg, data_dir: Path):
    """The demo project's config for a benchmark: its own data folder and demo port, no faults, and the API tools
    only (a search tool needs the domain's retrieval index, which the benchmarks do not build; the demo's three
    search tools change nothing at thousands of replicated tools)."""
    return cfg.model_copy(
        update={
            "domains": [
                d.model_copy(update={"sources": [s for s in d.sources if s.kind != "retrieval"]}) for d in cfg.domains
            ],
            "data_dir": str(data_dir),
            "demo": cfg.demo.model_copy(update={"port": _port(), "faults": {}}),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paths", type=int, default=40)
    ap.add_argument("--sizes", default="800,3200,10000")
    ap.add_argument("--latency-ms", default="0,50,200", help="Per-request latency added by the demo (comma list).")
    ap.add_argument("--concurrency", default="4,16", help="Per-platform concurrency levels (comma list).")
    ap.add_argument("--legacy-full-max", type=int, default=800, help="Run the old code whole up to this size.")
    ap.add_argument("--legacy-sample", type=int, default=150, help="Sources the old retrieval is timed on above it.")
    ap.add_argument("--skip-concurrency", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    levels = [int(x) for x in args.concurrency.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="graph-bench-"))
    cfg = bench_config(load_config(), tmp / "data")
    cfg = cfg.model_copy(
        update={
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
        report["concurrency"] = []
        if not args.skip_concurrency:
            sk, _ = build_skeleton("aviation", inv, probes, catalog, cfg, propose)
            latencies = [int(x) for x in args.latency_ms.split(",")]
            report["concurrency"] = concurrency_rows(sk, inv, probes, cfg, DemoService(cfg.demo), latencies, levels)
        one = cfg.model_copy(update={"graph": cfg.graph.model_copy(update={"iterations": 1, "k_cross_domain": 0})})
        report["scaling"] = []
        for n in [int(x) for x in args.sizes.split(",") if x]:
            report["scaling"].append(scaling_row(n, inv, probes, catalog, one, args))
            print(json.dumps(report["scaling"][-1]), flush=True)
    print(markdown(report, levels))
    if args.json:
        print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
