"""Retrieval index scale (issue 17 #2, #7): index build and query throughput and decontamination cost at
10k and 100k chunks, each beside a brute-force scan, in one run.

    .venv/bin/python benchmarks/retrieval_throughput.py [--sizes 10000,100000] [--queries 200] [--tasks 200]
        [--model-sample 0] [--json out.json] [--no-ann] [--no-decontam]

The chunks are SYNTHETIC: paragraph-length English texts drawn from a fixed vocabulary with entity
names, dates and numbers (seeded, so every run writes the same corpus), and a tenth of them repeated
in a second domain (the cross-domain duplicates decontamination must find). The vectors come from a
cheap deterministic hashing embedder (bag of words hashed into 384 dimensions, L2-normalized), so the
numbers measure the index (LanceDB table write + BM25 build, hybrid search) and the decontamination
rules, not the embedding model; `--model-sample N` also times the configured English model on N chunks
(docs/s of the embedding alone; the build of a real index adds it at that rate).

- Index build: `factory.retrieval.index.write_index` (LanceDB table + FTS index) → docs/s.
- Query: `RetrievalIndex.search` (vector + BM25, reciprocal-rank fusion: what `search_<collection>`
  serves) → queries/s; brute force: one numpy matrix product over every vector plus a Python scan of
  every text for the query words (the same two rankings without an index), and the overlap of the
  hybrid top 5 with the brute-force top 5.
- ANN vector index (unless `--no-ann`): `build_ann_index` (what `write_index` builds at `retrieval.ann_min_rows`
  rows: `retrieval.ann_index_type`, cosine) written as the next version of the same table, so the flat and the
  ANN version answer the same queries side by side: build time (flat, ANN index, both), queries/s of the vector
  search alone (flat scan vs ANN, `retrieval.ann_nprobes` / `ann_refine_factor`) and of the hybrid search on
  each version, numpy's exact scan (one matrix product per query over vectors already in memory), and recall@5 /
  recall@20 of each vector search against numpy's exact top k (20: the depth the hybrid search fetches at k=5),
  plus the share of the hybrid top 5 that the ANN version shares with the flat one.
- Decontamination (unless `--no-decontam`): `factory.retrieval.decontam.decontaminate` with `--tasks` synthetic API-only tasks
  (their answers planted in 1% of the chunks) → chunks/s; brute force: every task's every value searched
  in every chunk's text (substring) and every cross-domain pair compared by Jaccard, timed on a sample
  and scaled to all pairs (marked "est.").
"""

import argparse
import json
import random
import re
import shutil
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import lancedb
import numpy as np

from factory.config import RetrievalConfig
from factory.retrieval import decontam
from factory.retrieval.index import RetrievalIndex, ann_partitions, build_ann_index, write_index
from factory.splits.minhash import jaccard, shingle_hashes

DIM = 384
WORDS = (
    "airport flight weather bulletin runway visibility wind gust pressure humidity temperature dew point "
    "album artist track genre label release studio tour record chart review catalogue composer producer "
    "district census population household survey region province city report office statistics growth "
    "morning evening north south east west light heavy moderate clear cloudy rain snow fog mist storm"
).split()
NAMES = [
    f"{a}{b}" for a in ("Kor", "Mar", "Vel", "Tan", "Ost", "Bri", "Sul", "Ham") for b in ("ana", "ido", "eth", "ura")
]
_TOKEN = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Bag of words hashed into DIM buckets (signed), L2-normalized: deterministic and cheap (a stand-in)."""

    model_id = "hash-bow-384"

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in _TOKEN.findall(t.lower()):
                h = zlib.crc32(w.encode())
                out[i, h % DIM] += 1.0 if (h >> 7) & 1 else -1.0
        n = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(n == 0, 1, n)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self.encode(texts)


def synthetic_chunks(n: int, domain: str, rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        name = rng.choice(NAMES)
        sents = []
        for _ in range(rng.randint(4, 7)):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 14)))
            sents.append(
                f"On 20{rng.randint(10, 23)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {name} {words} "
                f"{rng.randint(100, 99999)}."
            )
        rows.append(
            {
                "id": f"{domain}:{i:08d}",
                "doc_id": f"{domain}:doc{i // 4}",
                "domain": domain,
                "title": f"{name} bulletin {i}",
                "source": "synthetic",
                "position": i % 4,
                "text": " ".join(sents),
                "licence": "CC0",
                "language": "en",
                "meta": "{}",
            }
        )
    return rows


def synthetic_tasks(chunks: list[dict[str, Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    """API-only tasks whose (anchor, answer) pairs are planted in 1% of the chunks (the rest are clean)."""
    tasks = []
    planted = rng.sample(range(len(chunks)), max(1, len(chunks) // 100))
    for k in range(n):
        anchor, answer = f"Station{k:04d}X", f"{rng.randint(10_000, 99_999)}.5 units"
        tasks.append(
            {
                "id": f"sha256:task{k:06d}",
                "domain": "bench",
                "split": "test" if k % 5 == 0 else "train",
                "query": f"What did {anchor} report for the runway on the first morning?",
                "answer": {"value": answer},
                "golden_actions": [{"step": 1, "tool": "get_report", "args": {"station": anchor}}],
            }
        )
    for j, i in enumerate(planted):
        t = tasks[j % n]
        anchor = t["golden_actions"][0]["args"]["station"]
        chunks[i]["text"] += f" {anchor} reported {t['answer']['value']} that day."
    return tasks


def brute_search(vectors: np.ndarray, texts: list[str], emb: HashEmbedder, query: str, k: int) -> list[int]:
    """Vector ranking by a full matrix product and a word-overlap ranking by scanning every text, fused."""
    q = emb.encode_queries([query])[0]
    by_vec = np.argsort(-(vectors @ q))[: max(4 * k, 20)]
    words = set(_TOKEN.findall(query.lower()))
    overlap = np.array([sum(1 for w in words if w in t) for t in texts])
    by_text = np.argsort(-overlap, kind="stable")[: max(4 * k, 20)]
    score: dict[int, float] = {}
    for ranking in (by_vec, by_text):
        for rank, i in enumerate(ranking.tolist()):
            score[i] = score.get(i, 0.0) + 1.0 / (61 + rank)
    return sorted(score, key=lambda i: (-score[i], i))[:k]


def brute_decontam(
    chunks: list[dict[str, Any]], tasks: list[dict[str, Any]], others: list[dict[str, Any]], sample: int
) -> tuple[float, float, int]:
    """(seconds for every chunk × task value scan, est. seconds for all cross-domain pairs, pairs timed)."""
    vals = [(t["golden_actions"][0]["args"]["station"].lower(), str(t["answer"]["value"]).lower()) for t in tasks]
    t0 = time.perf_counter()
    hits = 0
    for c in chunks:
        text = c["text"].lower()
        for anchor, answer in vals:
            if anchor in text and answer in text:
                hits += 1
    scan = time.perf_counter() - t0
    a = [shingle_hashes(c["text"], 5) for c in chunks[:sample]]
    b = [shingle_hashes(c["text"], 5) for c in others[:sample]]
    t1 = time.perf_counter()
    for x in a:
        for y in b:
            jaccard(x, y)
    per_pair = (time.perf_counter() - t1) / max(1, len(a) * len(b))
    return scan, per_pair * len(chunks) * len(others), len(a) * len(b)


def compare_ann(
    flat: RetrievalIndex,
    ann: RetrievalIndex,
    vectors: np.ndarray,
    emb: HashEmbedder,
    queries: list[str],
    hybrid_flat: list[list[dict[str, Any]]],
    settings: RetrievalConfig,
) -> dict[str, Any]:
    """Vector-only and hybrid queries/s of the flat and the ANN version, numpy's exact scan, and recall@k of the
    ANN vector search against the exact top k (k = 5 and the hybrid's vector depth, 20)."""
    qvecs = emb.encode_queries(queries)
    depth = 20  # RetrievalIndex.search fetches max(4k, 20) per ranking: 20 at k=5
    out: dict[str, Any] = {"ann_nprobes": ann.nprobes, "ann_refine_factor": ann.refine_factor}
    ann.search(queries[0], 5)  # warm
    res: dict[str, list[list[str]]] = {}
    for label, ix in (("flat", flat), ("ann", ann)):
        ix.vector_search(qvecs[0], depth)
        t0 = time.perf_counter()
        res[label] = [[r["id"] for r in ix.vector_search(q, depth)] for q in qvecs]
        out[f"{label}_vector_q_per_s"] = round(len(queries) / (time.perf_counter() - t0), 1)
    t0 = time.perf_counter()
    hybrid_ann = [ann.search(q, 5) for q in queries]
    out["ann_hybrid_q_per_s"] = round(len(queries) / (time.perf_counter() - t0), 1)
    ids = np.array(flat.ids())  # row order of the table = order of `vectors`
    t0 = time.perf_counter()
    exact = [ids[np.argsort(-(vectors @ q))[:depth]].tolist() for q in qvecs]
    out["numpy_vector_q_per_s"] = round(len(queries) / (time.perf_counter() - t0), 1)
    for k in (5, depth):
        for label in ("flat", "ann"):
            hits = [len(set(g[:k]) & set(e[:k])) / k for g, e in zip(res[label], exact, strict=True)]
            out[f"{label}_recall_at_{k}"] = round(float(np.mean(hits)), 3)
    same = [len({r["id"] for r in a} & {r["id"] for r in f}) / 5 for a, f in zip(hybrid_ann, hybrid_flat, strict=True)]
    out["ann_hybrid_top5_vs_flat"] = round(float(np.mean(same)), 3)
    return out


def run_size(
    n: int, n_queries: int, n_tasks: int, folder: Path, model_sample: int, ann: bool = True, decontaminate: bool = True
) -> dict[str, Any]:
    rng = random.Random(17 + n)
    chunks = synthetic_chunks(n, "bench", rng)
    tasks = synthetic_tasks(chunks, n_tasks, rng)
    others = synthetic_chunks(n // 10, "other", random.Random(99 + n))
    for j in range(0, len(others), 2):  # half of the other domain's chunks duplicate one of ours
        others[j]["text"] = chunks[(j * 7) % n]["text"]
    emb = HashEmbedder()
    out: dict[str, Any] = {"chunks": n}

    t0 = time.perf_counter()
    vectors = emb.encode([c["text"] for c in chunks])
    out["hash_embed_docs_per_s"] = round(n / (time.perf_counter() - t0))

    uri = str(folder / f"lancedb_{n}")
    t0 = time.perf_counter()
    version = write_index(uri, "bench__docs", chunks, vectors, "en")  # no ANN index: the flat version
    build = time.perf_counter() - t0
    out["index_build_s"] = round(build, 2)
    out["index_build_docs_per_s"] = round(n / build)
    size = sum(p.stat().st_size for p in Path(uri).rglob("*") if p.is_file())
    out["index_bytes"] = size

    settings = RetrievalConfig()
    index = RetrievalIndex(uri, "bench__docs", version, emb)  # type: ignore[arg-type]
    qrng = random.Random(5)
    queries = [f"{qrng.choice(NAMES)} {' '.join(qrng.choice(WORDS) for _ in range(4))}" for _ in range(n_queries)]
    index.search(queries[0], 5)  # warm
    t0 = time.perf_counter()
    got = [index.search(q, 5) for q in queries]
    q_s = time.perf_counter() - t0
    out["query_per_s"] = round(n_queries / q_s, 1)
    if ann:
        # the same table with the ANN vector index written as its next version (what write_index does at
        # retrieval.ann_min_rows rows): the flat and the ANN version side by side, on the same rows and queries
        t0 = time.perf_counter()
        table = lancedb.connect(uri).open_table("bench__docs")
        build_ann_index(table, n, settings.ann_index_type)
        out["ann_index_s"] = round(time.perf_counter() - t0, 2)
        out["ann_build_s"] = round(build + out["ann_index_s"], 2)
        out["ann_type"] = settings.ann_index_type
        out["ann_partitions"] = ann_partitions(n, settings.ann_index_type)
        out["ann_index_bytes"] = sum(p.stat().st_size for p in Path(uri).rglob("*") if p.is_file()) - size
        ann_ix = RetrievalIndex(uri, "bench__docs", int(table.version), emb)  # type: ignore[arg-type]
        assert ann_ix.ann is not None and index.ann is None
        out.update(compare_ann(index, ann_ix, vectors, emb, queries, got, settings))
    texts = [c["text"].lower() for c in chunks]
    bq = min(n_queries, 50 if n <= 20_000 else 10)  # the brute-force scan is slow: fewer queries at 100k
    t0 = time.perf_counter()
    brute = [brute_search(vectors, texts, emb, q, 5) for q in queries[:bq]]
    out["brute_query_per_s"] = round(bq / (time.perf_counter() - t0), 2)
    ids = [c["id"] for c in chunks]
    overlap = [len({r["id"] for r in g} & {ids[i] for i in b}) / 5 for g, b in zip(got[:bq], brute, strict=True)]
    out["top5_overlap_with_brute"] = round(float(np.mean(overlap)), 3)

    if not decontaminate:
        print(json.dumps(out), flush=True)
        shutil.rmtree(uri, ignore_errors=True)
        return out
    t0 = time.perf_counter()
    verdicts, stats = decontam.decontaminate("bench", chunks, tasks, {"other": others}, settings)
    d_s = time.perf_counter() - t0
    out["decontam_s"] = round(d_s, 2)
    out["decontam_chunks_per_s"] = round(n / d_s)
    out["removed"] = stats["removed"]
    scan, pairs_est, timed = brute_decontam(chunks, tasks, others, sample=min(300, len(others)))
    out["brute_value_scan_s"] = round(scan, 2)
    out["brute_cross_pairs_est_s"] = round(pairs_est, 1)
    out["brute_pairs_timed"] = timed

    print(json.dumps(out), flush=True)
    if model_sample:
        from factory.config import load_config
        from factory.retrieval.embedding import embedder_for

        real = embedder_for("en", load_config(Path(__file__).resolve().parents[1] / "factory.yaml"), cache=False)
        sample = [c["text"] for c in chunks[:model_sample]]
        real.encode(sample[:8])
        t0 = time.perf_counter()
        real.encode(sample)
        out["model_embed_docs_per_s"] = round(model_sample / (time.perf_counter() - t0), 1)
    shutil.rmtree(uri, ignore_errors=True)
    return out


ANN_COLS = [
    ("chunks", "chunks"),
    ("index_build_s", "build s (flat)"),
    ("ann_build_s", "build s (with ANN)"),
    ("ann_index_s", "ANN index s"),
    ("ann_type", "ANN"),
    ("ann_partitions", "partitions"),
    ("flat_vector_q_per_s", "flat vector q/s"),
    ("ann_vector_q_per_s", "ANN vector q/s"),
    ("query_per_s", "hybrid flat q/s"),
    ("ann_hybrid_q_per_s", "hybrid ANN q/s"),
    ("numpy_vector_q_per_s", "brute-force vector q/s (numpy)"),
    ("brute_query_per_s", "brute-force hybrid q/s"),
    ("ann_recall_at_5", "ANN recall@5"),
    ("ann_recall_at_20", "ANN recall@20"),
    ("flat_recall_at_20", "flat recall@20"),
    ("ann_hybrid_top5_vs_flat", "hybrid top-5 ANN = flat"),
]


def table(results: list[dict[str, Any]], cols: list[tuple[str, str]] | None = None) -> str:
    cols = cols or [
        ("chunks", "chunks"),
        ("index_build_docs_per_s", "build docs/s"),
        ("index_build_s", "build s"),
        ("index_bytes", "index bytes"),
        ("query_per_s", "hybrid q/s"),
        ("brute_query_per_s", "brute-force q/s"),
        ("top5_overlap_with_brute", "top-5 overlap"),
        ("decontam_chunks_per_s", "decontam chunks/s"),
        ("decontam_s", "decontam s"),
        ("brute_value_scan_s", "brute value scan s"),
        ("brute_cross_pairs_est_s", "brute cross-domain pairs s (est.)"),
        ("model_embed_docs_per_s", "model embed docs/s"),
    ]
    cols = [(k, h) for k, h in cols if any(k in r for r in results)]
    lines = ["| " + " | ".join(h for _, h in cols) + " |", "|" + "---|" * len(cols)]
    for r in results:
        lines.append("| " + " | ".join(str(r.get(k, "")) for k, _ in cols) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--model-sample", type=int, default=0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-ann", action="store_true", help="skip the ANN vector index comparison")
    ap.add_argument(
        "--no-decontam", action="store_true", help="skip the decontamination timing (index and queries only)"
    )
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="retrieval-bench-"))
    results = []
    try:
        for n in [int(s) for s in a.sizes.split(",")]:
            r = run_size(n, a.queries, a.tasks, folder, a.model_sample, not a.no_ann, not a.no_decontam)
            print(json.dumps(r), flush=True)
            results.append(r)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print()
    print("Synthetic chunks, hashing embedder (see the module docstring).")
    print(table(results))
    if not a.no_ann:
        print()
        print("Flat scan vs ANN vector index (same table, two versions; recall against numpy's exact top k).")
        print(table(results, ANN_COLS))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
