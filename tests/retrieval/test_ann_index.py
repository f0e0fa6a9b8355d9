"""Issue 17: a retrieval index table of at least `retrieval.ann_min_rows` rows gets a LanceDB ANN vector index
(IVF_HNSW_SQ, cosine) that the search goes through; a smaller one is a flat scan, as before."""

import random
import zlib

import numpy as np
import pytest
import yaml

from factory.config import RetrievalConfig, parse_config
from factory.retrieval import index

DIM = 64
VOCAB = [f"w{i:04d}" for i in range(2000)]


class HashEmbedder:
    """Bag of words hashed into DIM signed buckets, L2-normalized (no model load)."""

    model_id = "hash-64"

    def encode(self, texts):
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                h = zlib.crc32(w.encode())
                out[i, h % DIM] += 1.0 if (h >> 7) & 1 else -1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    encode_queries = encode

    def metadata(self, prefix):
        return {f"{prefix}/model": self.model_id}


def _rows(n: int, seed: int = 3) -> list[dict]:
    rng = random.Random(seed)
    return [
        {
            "id": f"t:{i:05d}",
            "doc_id": f"t:doc{i}",
            "domain": "t",
            "title": "",
            "source": "synthetic",
            "position": 0,
            "text": " ".join(rng.choice(VOCAB) for _ in range(12)),
            "licence": "CC0",
            "language": "en",
            "meta": "{}",
        }  # fmt: skip
        for i in range(n)
    ]


def _write(tmp_path, n: int, ann_min_rows: int | None):
    rows, emb = _rows(n), HashEmbedder()
    vectors = emb.encode([index.search_text(r) for r in rows])
    uri = str(tmp_path / "lancedb")
    version = index.write_index(uri, "t__docs", rows, vectors, "en", ann_min_rows=ann_min_rows)
    return rows, vectors, index.RetrievalIndex(uri, "t__docs", version, emb)


def test_at_the_threshold_the_table_gets_an_ann_index_the_search_goes_through(tmp_path):
    rows, vectors, ix = _write(tmp_path, 300, ann_min_rows=300)
    vec_ix = [i for i in ix.table.list_indices() if list(i.columns) == ["vector"]]
    assert len(vec_ix) == 1 and ix.table.index_stats(vec_ix[0].name).index_type == "IVF_HNSW_SQ"
    assert ix.ann == {"name": vec_ix[0].name, "type": "IVF_HNSW_SQ", "metric": "cosine"}
    assert ix.refine_factor == RetrievalConfig().ann_refine_factor and ix.nprobes == RetrievalConfig().ann_nprobes
    plan = ix.vector_query(vectors[0], 20).explain_plan()
    assert "ANN" in plan and "metric=Cosine" in plan  # the index is used, not a flat scan
    for i in (0, 17, 123, 299):
        assert ix.vector_search(vectors[i], 20)[0]["id"] == rows[i]["id"]
        assert ix.search(rows[i]["text"], 5)[0]["id"] == rows[i]["id"]  # hybrid: its own text finds it first
    # the ANN top 20 agrees with the exact (numpy) top 20
    exact = [{rows[j]["id"] for j in np.argsort(-(vectors @ vectors[i]))[:20]} for i in range(0, 300, 10)]
    got = [{r["id"] for r in ix.vector_search(vectors[i], 20)} for i in range(0, 300, 10)]
    assert np.mean([len(g & e) / 20 for g, e in zip(got, exact, strict=True)]) >= 0.9


@pytest.mark.parametrize("ann_min_rows", [301, None])
def test_below_the_threshold_no_vector_index_is_built(tmp_path, ann_min_rows):
    rows, vectors, ix = _write(tmp_path, 300, ann_min_rows=ann_min_rows)
    assert [list(i.columns) for i in ix.table.list_indices()] == [[index.SEARCH_COLUMN]]  # BM25 only
    assert ix.ann is None
    assert "ANN" not in ix.vector_query(vectors[5], 20).explain_plan()
    assert ix.search(rows[5]["text"], 5)[0]["id"] == rows[5]["id"]


def test_a_rebuild_below_the_threshold_is_flat_and_the_pinned_version_keeps_its_index(tmp_path):
    rows, vectors, big = _write(tmp_path, 300, ann_min_rows=300)
    uri = str(tmp_path / "lancedb")
    small = index.write_index(uri, "t__docs", rows[:100], vectors[:100], "en", ann_min_rows=300)
    assert index.RetrievalIndex(uri, "t__docs", small, HashEmbedder()).ann is None
    again = index.RetrievalIndex(uri, "t__docs", big.version, HashEmbedder())
    assert again.ann is not None and again.search(rows[200]["text"], 5)[0]["id"] == rows[200]["id"]


def _project(tmp_path, ann_min_rows: int | None):
    raw = {
        "data_dir": str(tmp_path / "data"),
        "domains": [
            {
                "name": "music",
                "sources": [{"kind": "openapi", "spec": "demo://x"}],
                "retrieval": {"collection": "notes", "sources": [{"path": "x", "licence": "CC0", "language": "en"}]},
            }
        ],
    }
    if ann_min_rows is not None:
        raw["retrieval"] = {"ann_min_rows": ann_min_rows}
    return parse_config(yaml.safe_dump(raw), project_dir=tmp_path)


@pytest.mark.parametrize(("ann_min_rows", "built"), [(300, True), (None, False)])
def test_build_index_records_the_ann_index_in_its_value_and_metadata(tmp_path, ann_min_rows, built):
    cfg = _project(tmp_path, ann_min_rows)
    chunks = [{**r, "domain": "music", "id": r["id"].replace("t:", "music:")} for r in _rows(300)]
    corpus = {"domain": "music", "collection": "notes", "chunks": chunks}
    value, meta = index.build_index("music", corpus, {"music": corpus}, [], cfg, embedder=HashEmbedder())
    assert value["served"] == 300 and value["ann_index"]["built"] is built and meta["ann_index"] is built
    assert meta["ann_index_type"] == ("IVF_HNSW_SQ" if built else "none (flat scan)")
    served = index.RetrievalIndex.for_config(value["uri"], value["table"], value["version"], HashEmbedder(), cfg)
    assert (served.ann is not None) is built
    assert served.search(chunks[42]["text"], 3)[0]["id"] == chunks[42]["id"]
