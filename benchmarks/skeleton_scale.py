"""Skeleton build at 10,000 tools (issue 20 #1): this checkout against a baseline commit, in one run.

    .venv/bin/python benchmarks/skeleton_scale.py [--sizes 800,3200,10000] [--baseline REF]
        [--cache DIR] [--profile N] [--repeat N] [--json]

The inventory is the demo's REST tools replicated under new names (same endpoints, embeddings with
small noise: `graph_throughput.replicate`), with the demo's probe rows; it is ingested once from the
demo service (started on a free port) and kept in `--cache` (default: a folder under the system's
temporary folder), so later runs start at once.  Per size, the value types are inferred once (what the
`tool_lexicon` value holds in a run; timed apart) and handed to both builds.

`--baseline REF` (default: `main`) is exported with `git archive` into a temporary folder and the
same build is run there in a subprocess, on the same inputs: the table shows both builds' wall and
CPU seconds (`time.process_time`, which counts BLAS threads) side by side (`--repeat N`: N alternating
pairs of builds), and whether the admitted edge ids, every field of every edge and rejected pair, and
every candidate pair with its similarity are equal (digests written after the timer).  The edge proposals are the rules' (`edge_proposal`, a model call in a run),
asked once per distinct pair of base tools, timed apart and left out of "own".

The plotting library is imported before the timer starts (the skeleton's metadata draws a histogram;
in a run the process has imported it already).

`--profile N`: a cProfile of this checkout's build at N tools, top 30 by cumulative and own time.
"""

import argparse
import cProfile
import gc
import hashlib
import json
import os
import pickle
import pstats
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _cache_inputs(cache: Path) -> dict[str, Any]:
    """The demo domains' inventories, probe results and catalog (ingested once, then read back)."""
    path = cache / "demo_inputs.pickle"
    if path.exists():
        with path.open("rb") as fh:
            return pickle.load(fh)
    from factory import ingest
    from factory.config import load_config
    from factory.demo.service import DemoService
    from factory.embed import Embedder

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from graph_throughput import bench_config

    cfg = bench_config(load_config(ROOT / "factory.yaml"), cache / "data")
    with DemoService(cfg.demo, log_dir=cache / "logs"):
        inv = {d.name: ingest.build_inventory(d, cfg)[0] for d in cfg.domains}
        probes = {d: ingest.run_probes(inv[d], cfg, progress=lambda m: None)[0] for d in inv}
        catalog = ingest.build_catalog(inv, Embedder(cfg.models.embeddings).encode)[0]
    out = {"inventories": inv, "probes": probes, "catalog": catalog}
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        pickle.dump(out, fh)
    os.replace(tmp, path)
    return out


def _size_inputs(cache: Path, n: int) -> Path:
    """The replicated inventory of `n` tools with its value types, pickled (shared by both builds)."""
    path = cache / f"bench_{n}.pickle"
    if path.exists():
        return path
    from factory.config import load_config
    from factory.lexicon import infer_value_types

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from graph_throughput import replicate

    base = _cache_inputs(cache)
    binv, bprobes, bcat = replicate(base["inventories"], base["probes"], base["catalog"], n)
    cfg = load_config(ROOT / "factory.yaml")
    t = time.monotonic()
    vt = infer_value_types(binv, bprobes, cfg)
    types_s = time.monotonic() - t
    lexicons = {"bench": {"value_types": {"tools": vt.tools, "parents": vt.parents}}}
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        pickle.dump({"inv": binv, "probes": bprobes, "catalog": bcat, "lexicons": lexicons, "types_s": types_s}, fh)
    os.replace(tmp, path)
    return path


def build_once(
    inputs: Path, edges_out: Path | None = None, profile: Path | None = None, domain: str = "bench"
) -> dict[str, Any]:
    """One skeleton build of `domain` from the pickled inputs with the importable `factory` (this
    checkout or the baseline's): wall and CPU seconds, proposals' seconds, counts; to `edges_out` the
    edge ids ("bench") or the whole edges and rejected pairs (a demo domain)."""
    from factory.config import load_config
    from factory.graph.skeleton import build_skeleton

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from graph_throughput import TimedProposals

    from factory.report import bar_plot

    bar_plot({"warm-up": 1}, title="", xlabel="", ylabel="")  # the plotting library's import, once per process
    with inputs.open("rb") as fh:
        d = pickle.load(fh)
    # the catalog as a run reads it from Parquet: one float64 array per embedding (the replication keeps
    # Python lists; converting 10^4 × 384 Python floats is not the build's work).  Exact: the values are
    # float32 ones, so both builds see the same float32 matrix.
    d["catalog"] = d["catalog"].assign(embedding=[np.asarray(v, dtype=np.float64) for v in d["catalog"]["embedding"]])
    cfg = load_config(ROOT / "factory.yaml")
    one = (
        cfg
        if domain != "bench"
        else cfg.model_copy(update={"graph": cfg.graph.model_copy(update={"k_cross_domain": 0})})
    )
    gc.collect()
    prop = TimedProposals(memo=domain == "bench")
    prof = cProfile.Profile() if profile else None
    t, c = time.monotonic(), time.process_time()
    if prof:
        prof.enable()
    sk, _ = build_skeleton(domain, d["inv"], d["probes"], d["catalog"], one, prop, lexicons=d["lexicons"])
    if prof:
        prof.disable()
    wall, cpu = time.monotonic() - t, time.process_time() - c
    if prof and profile:
        prof.dump_stats(str(profile))
    if edges_out is not None and domain == "bench":
        # every field of every edge and of every rejected pair, and every candidate pair with its similarity
        # (retrieval asked again after the timer, as the build asks it), as digests
        from factory.graph.skeleton import candidate_pairs
        from factory.tools.registry import ToolRegistry

        specs = ToolRegistry.from_inventories(d["inv"], d["probes"])
        pairs, _ = candidate_pairs(domain, specs, d["catalog"], one.graph.k_same_domain, one.graph.k_cross_domain)
        edges_out.write_text(
            json.dumps(
                {
                    "ids": sorted(e["edge_id"] for e in sk["edges"]),
                    "edges": _digest(sk["edges"]),
                    "rejected": _digest(sk["rejected"]),
                    "pairs": _digest(pairs),
                    "n_pairs": len(pairs),
                }
            )
        )
    elif edges_out is not None:
        rejected = sorted((r["source"], r["target"]) for r in sk["rejected"])
        edges_out.write_text(json.dumps({"edges": sk["edges"], "rejected": rejected}, sort_keys=True, default=str))
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "own_wall_s": round(wall - prop.seconds, 2),
        "own_cpu_s": round(cpu - prop.seconds, 2),
        "proposal_s": round(prop.seconds, 2),
        "candidates": sk["stats"]["candidates"],
        "proposals": prop.asked,
        "admitted": len(sk["edges"]),
    }


def _digest(rows: list[Any]) -> str:
    """sha256 of the rows' canonical JSON, one row at a time (10^5 edges would be a 150 MB string)."""
    h = hashlib.sha256()
    for r in rows:
        h.update(json.dumps(r, sort_keys=True, default=str).encode())
        h.update(b"\n")
    return h.hexdigest()


def _baseline_tree(ref: str) -> Path:
    out = Path(tempfile.mkdtemp(prefix="skeleton-baseline-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    tar = out / "src.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as tf:
        tf.extractall(out, filter="data")
    tar.unlink()
    return out


def _in_subprocess(tree: Path, inputs: Path, edges_out: Path, domain: str = "bench") -> dict[str, Any]:
    """`build_once` with the `factory` package of `tree`, in a fresh process."""
    code = (
        "import json, sys; from pathlib import Path; "
        f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); "
        "from skeleton_scale import build_once; "
        f"print('RESULT', json.dumps(build_once(Path({str(inputs)!r}), Path({str(edges_out)!r}), domain={domain!r})))"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tree)
    if proc.returncode != 0:
        raise RuntimeError(f"the build in {tree} failed:\n{proc.stderr[-4000:]}")
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="800,3200,10000")
    ap.add_argument("--baseline", default="main", help="git ref run side by side ('' to skip)")
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "skeleton-scale-cache"))
    ap.add_argument("--profile", type=int, default=0, help="cProfile this checkout's build at this size")
    ap.add_argument("--demo-domains", default="music,aviation", help="demo domains compared edge by edge ('' to skip)")
    ap.add_argument("--repeat", type=int, default=1, help="builds per size (the two builds alternate)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    if args.profile:
        inputs = _size_inputs(cache, args.profile)
        prof_path = cache / f"profile_{args.profile}.prof"
        print(json.dumps(build_once(inputs, profile=prof_path)))
        st = pstats.Stats(str(prof_path))
        st.sort_stats("cumulative").print_stats(30)
        st.sort_stats("tottime").print_stats(30)
        return
    tree = _baseline_tree(args.baseline) if args.baseline else None
    if args.demo_domains and tree is not None:
        # the demo's own domains, value types inferred in the build as a run without tool_lexicon does:
        # every field of every admitted edge, and the rejected pairs, compared with the baseline's
        base = _cache_inputs(cache)
        demo = cache / "demo_build.pickle"
        with demo.open("wb") as fh:
            pickle.dump({"inv": base["inventories"], "probes": base["probes"], "catalog": base["catalog"],
                         "lexicons": None}, fh)  # fmt: skip
        for dom in args.demo_domains.split(","):
            a, b = cache / f"demo_base_{dom}.json", cache / f"demo_new_{dom}.json"
            rb = _in_subprocess(tree, demo, a, dom)
            rn = _in_subprocess(ROOT, demo, b, dom)
            ea, eb = json.loads(a.read_text()), json.loads(b.read_text())
            print(
                f"demo {dom}: candidates {rn['candidates']}, admitted {rb['admitted']} / {rn['admitted']}, "
                f"same edges (every field) {ea['edges'] == eb['edges']}, same rejected pairs "
                f"{ea['rejected'] == eb['rejected']}, edge ids {sorted(e['edge_id'] for e in eb['edges'])[:2]}…",
                flush=True,
            )
    rows = []
    for n in [int(x) for x in args.sizes.split(",") if x]:
        inputs = _size_inputs(cache, n)
        with inputs.open("rb") as fh:
            types_s = pickle.load(fh)["types_s"]
        for rep in range(args.repeat):  # the two builds alternate, each in a fresh process
            row: dict[str, Any] = {"tools": n, "rep": rep, "value_types_s": round(types_s, 2), "load_before": _load()}
            if tree is not None:
                base_edges = cache / f"edges_base_{n}.json"
                row["base"] = _in_subprocess(tree, inputs, base_edges)
            new_edges = cache / f"edges_new_{n}.json"
            row["new"] = _in_subprocess(ROOT, inputs, new_edges)
            if tree is not None:
                eb, en = json.loads(base_edges.read_text()), json.loads(new_edges.read_text())
                row["same_edge_ids"] = eb["ids"] == en["ids"]
                row["same_edges"] = eb["edges"] == en["edges"] and eb["rejected"] == en["rejected"]
                row["same_pairs"] = f"{eb['pairs'] == en['pairs']} ({en['n_pairs']})"
            row["load_after"] = _load()
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print(
        f"| tools | run | candidates | admitted | base ({args.baseline}) s wall / CPU | new s wall / CPU | × wall | × CPU "
        "| same edge ids / every field / candidate pairs | load (1/5/15 min) |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for r in rows:
        b, nw = r.get("base"), r["new"]
        base = f"{b['own_wall_s']} / {b['own_cpu_s']}" if b else "—"
        x_wall = round(b["own_wall_s"] / max(nw["own_wall_s"], 1e-9), 2) if b else "—"
        x_cpu = round(b["own_cpu_s"] / max(nw["own_cpu_s"], 1e-9), 2) if b else "—"
        same = f"{r['same_edge_ids']} / {r['same_edges']} / {r['same_pairs']}" if b else "—"
        print(
            f"| {r['tools']} | {r['rep'] + 1} | {nw['candidates']} | {nw['admitted']} | {base} "
            f"| {nw['own_wall_s']} / {nw['own_cpu_s']} | {x_wall} | {x_cpu} | {same} "
            f"| {r['load_before']} → {r['load_after']} |"
        )
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
