"""MinHash audit throughput vs exhaustive pairwise Jaccard, in one run.

    .venv/bin/python benchmarks/minhash_audit.py [--n 100000] [--bench 10000] [--sample-pairs 200000]

Builds a synthetic dataset of `--n` tasks (10–16-word queries over a 3,000-word vocabulary, tool
sequences over 40 tools; 1% planted near-duplicates inside the dataset) and a benchmark of `--bench`
rows (1% near copies of dataset tasks, the rest unrelated), then times the audit exactly as
dataset_splits runs it (factory.splits): sketches, benchmark LSH index, screening every task
(LSH candidates + exact Jaccard), near-duplicate removal inside the dataset, nearest-neighbour
distribution under the configured pair budget. Exhaustive pairwise Jaccard (Python set
intersection over the same shingle sets) is timed on a sample of pairs and extrapolated to all
dataset×benchmark pairs and all dataset pairs. Wall and process-CPU times are both reported (CPU
time is the fairer number on a shared machine). Prints one JSON report.
"""

import argparse
import json
import random
import time

import numpy as np

from factory.config import SplitsConfig
from factory.splits import contamination, minhash, structure


def _words(rng: random.Random, n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n)]


def _perturb(q: str, rng: random.Random) -> str:
    w = q.split()
    i = rng.randrange(len(w))
    w[i] = w[i].upper()  # case only: identical after normalization
    return " ".join(w) + " ?"


def make_data(n: int, bench: int, seed: int) -> tuple[list[dict], list[contamination.BenchmarkRow], list[int]]:
    rng = random.Random(seed)
    vocab = _words(rng, 3000)
    tools = [f"tool_{i:02d}" for i in range(40)]
    tasks = []
    for i in range(n):
        if i and i % 100 == 0:  # 1% near-duplicates of an earlier task
            src = tasks[rng.randrange(len(tasks))]
            q, acts = _perturb(src["query"], rng), src["golden_actions"]
        else:
            q = " ".join(rng.choice(vocab) for _ in range(rng.randint(10, 16))) + f" {rng.randint(1, 9999)}?"
            acts = [{"step": s + 1, "tool": rng.choice(tools)} for s in range(rng.randint(1, 4))]
        tasks.append({"id": f"t{i:07d}", "query": q, "golden_actions": acts})
    rows, planted = [], []
    for j in range(bench):
        if j % 100 == 0 and tasks:
            k = rng.randrange(len(tasks))
            planted.append(k)
            q = _perturb(tasks[k]["query"], rng)
        else:
            q = " ".join(rng.choice(vocab) for _ in range(rng.randint(10, 16))) + "?"
        rows.append(contamination.BenchmarkRow("bench.jsonl", j + 1, f"b{j:06d}", q, None, "en"))
    return tasks, rows, planted


def run(n: int, bench: int, sample_pairs: int, seed: int) -> dict:
    cfg = SplitsConfig()
    tasks, rows, planted = make_data(n, bench, seed)
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    index = contamination.BenchmarkIndex(rows, cfg)
    t_index = time.perf_counter() - t0

    t0 = time.perf_counter()
    sketcher = index.index.sketcher
    sketches = {t["id"]: sketcher.sketch(t["query"]) for t in tasks}
    t_sketch = time.perf_counter() - t0

    t0 = time.perf_counter()
    hits = contamination.screen(tasks, index, sketches)
    t_screen = time.perf_counter() - t0

    t0 = time.perf_counter()
    items = [minhash.DedupItem(t["id"], t["query"], structure.task_signature(t) or None) for t in tasks]
    kept, removed, _ = minhash.deduplicate(items, cfg, sketches)
    t_dedup = time.perf_counter() - t0

    t0 = time.perf_counter()
    audit = contamination.audit_report(
        index=index,
        checked=tasks,
        sketches=sketches,
        train_ids=kept,
        collisions=hits,
        dropped=[],
        train_collisions=0,
    )
    t_nn = time.perf_counter() - t0
    total = t_index + t_sketch + t_screen + t_dedup + t_nn
    cpu_total = time.process_time() - cpu0

    # exhaustive baseline on a sample: exact Jaccard of Python shingle sets, every pair
    rng = random.Random(seed + 1)
    na = max(1, min(len(tasks), int(sample_pairs**0.5)))
    nb = max(1, min(len(rows), sample_pairs // na))
    sa = [set(minhash.shingles(t["query"], cfg.ngram)) for t in rng.sample(tasks, na)]
    sb = [set(minhash.shingles(r.query, cfg.ngram)) for r in rng.sample(rows, nb)]
    t0 = time.perf_counter()
    c0 = time.process_time()
    best = 0.0
    for a in sa:
        for b in sb:
            inter = len(a & b)
            j = inter / (len(a) + len(b) - inter) if (a or b) else 1.0
            best = max(best, j)
    t_pairs = time.perf_counter() - t0
    per_pair = t_pairs / (na * nb)
    per_pair_cpu = (time.process_time() - c0) / (na * nb)
    cross_pairs = len(tasks) * len(rows)
    inner_pairs = len(tasks) * (len(tasks) - 1) // 2
    exhaustive_cross = per_pair * cross_pairs
    exhaustive_inner = per_pair * inner_pairs
    screen_total = t_index + t_sketch + t_screen
    found_planted = sum(1 for k in planted if tasks[k]["id"] in hits)
    return {
        "dataset_tasks": len(tasks),
        "benchmark_rows": len(rows),
        "lsh": audit["method"]["lsh"],
        "seconds": {
            "benchmark_index": round(t_index, 2),
            "dataset_sketches": round(t_sketch, 2),
            "screen_vs_benchmark": round(t_screen, 2),
            "dedup_inside_dataset": round(t_dedup, 2),
            "nn_distribution": round(t_nn, 2),
            "total": round(total, 2),
            "total_cpu": round(cpu_total, 2),
        },
        "throughput_tasks_per_s": {
            "full_audit": round(len(tasks) / total, 1),
            "full_audit_cpu": round(len(tasks) / cpu_total, 1),
            "benchmark_screen_only": round(len(tasks) / screen_total, 1),
        },
        "results": {
            "colliding_tasks": len(hits),
            "planted_benchmark_copies_found": f"{found_planted}/{len(planted)}",
            "dedup_removed": len(removed),
            "dedup_planted": (len(tasks) - 1) // 100,
            "nn_rows_measured": audit["nn_similarity"]["rows_measured"],
            "nn_p50_p90_p99": [audit["nn_similarity"][k] for k in ("p50", "p90", "p99")],
        },
        "exhaustive_baseline": {
            "sample_pairs": na * nb,
            "seconds_per_pair_us": round(per_pair * 1e6, 3),
            "cpu_seconds_per_pair_us": round(per_pair_cpu * 1e6, 3),
            "extrapolated_dataset_x_benchmark_s": round(exhaustive_cross, 1),
            "extrapolated_dataset_pairs_s": round(exhaustive_inner, 1),
            "sample_max_jaccard": round(best, 4),
        },
        "speedup": {
            "benchmark_screen_vs_exhaustive": round(exhaustive_cross / screen_total, 1),
            "dedup_vs_exhaustive": round(exhaustive_inner / (t_sketch + t_dedup), 1),  # sketches shared
            "full_audit_vs_exhaustive_both": round((exhaustive_cross + exhaustive_inner) / total, 1),
            "full_audit_vs_exhaustive_both_cpu": round(per_pair_cpu * (cross_pairs + inner_pairs) / cpu_total, 1),
        },
        "peak_signature_matrix_mb": round(len(tasks) * cfg.num_perm * np.dtype(np.uint32).itemsize / 2**20, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000, help="dataset tasks")
    ap.add_argument("--bench", type=int, default=10_000, help="benchmark rows")
    ap.add_argument("--sample-pairs", type=int, default=200_000, help="pairs timed for the exhaustive baseline")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(json.dumps(run(a.n, a.bench, a.sample_pairs, a.seed), indent=1))


if __name__ == "__main__":
    main()
