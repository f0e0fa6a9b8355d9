"""The retrieval index of a domain: the served chunks with their embeddings in a LanceDB table, a BM25
full-text index on their text, and hybrid search (vector + BM25, reciprocal-rank fusion).

LanceDB (embedded, Arrow-native, versioned tables; the same API on a local folder or an object store
URI) keeps one table per domain and collection, ``<domain>__<collection>``, in
``<data_dir>/retrieval_index/lancedb``. Every build writes a new table version; the
`retrieval_index` value pins the version it wrote, and searches open that version (`checkout`), so a
build whose gates fail never changes what the published value serves, and a task can name the exact
index version its passages came from. Only chunks that survive decontamination are written: a
removed id is absent from the table, not filtered at query time.
"""

import hashlib
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from factory.config import ProjectConfig, RetrievalConfig
from factory.io import data_store, object_store_options
from factory.report import bar_plot, md_table
from factory.retrieval import decontam
from factory.retrieval.embedding import RetrievalEmbedder, embedder_for

INDEX_FOLDER = "retrieval_index/lancedb"
KEPT_COLUMNS = ("id", "doc_id", "domain", "title", "source", "position", "text", "licence", "language", "meta")
SEARCH_COLUMN = "search_text"  # title + text: what BM25 indexes and the vector embeds
_DEFAULTS = RetrievalConfig()  # search settings of an index opened without the project config (the search tools)


_MONTH_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december"]  # fmt: skip
_MONTH = {m[:3]: i + 1 for i, m in enumerate(_MONTH_NAMES)}
_MON = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATES = [
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), ("y", "m", "d")),
    (re.compile(rf"\b{_MON}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), ("mon", "d", "y")),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MON},?\s+(\d{{4}})\b", re.I), ("d", "mon", "y")),
    (re.compile(r"(\d{4})\s*년\s*(\d{1,2})\s*월\s*(\d{1,2})\s*일"), ("y", "m", "d")),
]


def date_tokens(text: str) -> list[str]:
    """One token per calendar date the text writes (ISO, 'January 5, 2013', '5 Jan 2013', '2013년 1월 5일'):
    `date20130105`. Dates written differently in a query and a passage then share a rare token, which
    neither the word tokenizer (it splits '2013-01-05' into three common numbers) nor a sentence
    embedding tells apart from the neighbouring days."""
    out: list[str] = []
    for pattern, order in _DATES:
        for m in pattern.finditer(text):
            parts = dict(zip(order, m.groups(), strict=True))
            month = _MONTH[parts["mon"][:3].lower()] if "mon" in parts else int(parts["m"])
            day, year = int(parts["d"]), int(parts["y"])
            if 1 <= month <= 12 and 1 <= day <= 31:
                token = f"date{year:04d}{month:02d}{day:02d}"
                if token not in out:
                    out.append(token)
    return out


def search_text(chunk: Mapping[str, Any]) -> str:
    """The text a chunk is found by: its document title, then the passage, then its date tokens. A
    bulletin's date and airport are in its title; a later chunk of a document holds neither in its own text."""
    title = str(chunk.get("title") or "").strip()
    text = str(chunk.get("text") or "")
    body = f"{title}\n{text}" if title and not text.startswith(title) else text
    dates = date_tokens(body)
    return f"{body}\n{' '.join(dates)}" if dates else body


class RetrievalIndexError(RuntimeError):
    """A retrieval index that cannot be opened or searched; the message names the table and version."""


def index_uri(cfg: ProjectConfig) -> str:
    """The LanceDB location of the project's retrieval indices (a folder, or a URI under an object store)."""
    store = data_store(cfg)
    local = store.local_path(INDEX_FOLDER)
    return str(local) if local is not None else f"{cfg.data_location.rstrip('/')}/{INDEX_FOLDER}"


def table_name(domain: str, collection: str) -> str:
    return f"{domain}__{collection}"


def _fts(table: Any, language: str) -> None:
    """BM25 over the title and text: words for English (stemmed), character 2-3-grams for Korean (particles stay
    attached to words there: 군포시의 must still match 군포시)."""
    opts: dict[str, Any] = (
        {
            "base_tokenizer": "ngram",
            "ngram_min_length": 2,
            "ngram_max_length": 3,
            "stem": False,
            "remove_stop_words": False,
            "ascii_folding": False,
        }  # fmt: skip
        if language == "ko"
        else {"base_tokenizer": "simple", "stem": True, "remove_stop_words": True}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_fts_index is marked deprecated in favour of a config object
        table.create_fts_index(SEARCH_COLUMN, replace=True, **opts)


def fingerprint(table: str, version: int, model: str, ids: Sequence[str]) -> str:
    """The index version as a tool-surface input: table, LanceDB version, model and served ids."""
    h = hashlib.sha256(json.dumps([table, version, model, sorted(ids)]).encode())
    return f"sha256:{h.hexdigest()}"


ANN_ROWS_PER_HNSW_PARTITION = 16_384


def ann_partitions(rows: int, index_type: str) -> int:
    """IVF partitions of the ANN index for a table of `rows` vectors: about sqrt(rows) for the IVF-only types
    (IVF_PQ/IVF_SQ/IVF_FLAT); IVF_HNSW_* search each partition by its own HNSW graph, which finds neighbours in a
    large partition well, so they keep partitions of ~16k rows (one up to 32k rows)."""
    if index_type.startswith("IVF_HNSW"):
        return max(1, rows // ANN_ROWS_PER_HNSW_PARTITION)
    return max(1, round(rows**0.5))


def build_ann_index(table: Any, rows: int, index_type: str) -> None:
    """Build the ANN vector index (cosine distance; the search passes the same metric) on `vector`."""
    from lancedb.index import HnswPq, HnswSq, IvfFlat, IvfPq, IvfSq

    kinds: dict[str, Any] = {"IVF_HNSW_SQ": HnswSq, "IVF_HNSW_PQ": HnswPq, "IVF_PQ": IvfPq, "IVF_SQ": IvfSq,
                             "IVF_FLAT": IvfFlat}  # fmt: skip
    if index_type not in kinds:
        raise ValueError(f"unknown ANN index type {index_type!r} (one of {', '.join(kinds)})")
    config = kinds[index_type](distance_type="cosine", num_partitions=ann_partitions(rows, index_type))
    table.create_index("vector", config=config, replace=True)


def write_index(
    uri: str,
    name: str,
    rows: Sequence[Mapping[str, Any]],
    vectors: np.ndarray,
    language: str,
    *,
    ann_min_rows: int | None = None,
    ann_index_type: str = "IVF_HNSW_SQ",
) -> int:
    """Write the served chunks as a new version of table `name`; returns the version (after the FTS index and,
    when the table has at least `ann_min_rows` rows, the ANN vector index: `vector_index` reads which)."""
    import lancedb
    import pyarrow as pa

    dim = int(vectors.shape[1]) if vectors.ndim == 2 else 0
    if dim <= 0:
        raise ValueError(f"index {name!r}: vectors of shape {vectors.shape} have no dimension (LanceDB needs one)")
    cols: dict[str, Any] = {c: [r[c] for r in rows] for c in KEPT_COLUMNS}
    cols[SEARCH_COLUMN] = [search_text(r) for r in rows]
    schema = pa.schema(
        [(c, pa.int32() if c == "position" else pa.string()) for c in KEPT_COLUMNS]
        + [(SEARCH_COLUMN, pa.string()), ("vector", pa.list_(pa.float32(), dim))]
    )
    flat = pa.array(vectors.astype(np.float32).reshape(-1), type=pa.float32())
    cols["vector"] = pa.FixedSizeListArray.from_arrays(flat, dim)
    data = pa.Table.from_pydict(cols, schema=schema)
    db = lancedb.connect(uri, storage_options=object_store_options(uri) or None)
    table = db.create_table(name, data=data, mode="overwrite")
    if len(rows):
        _fts(table, language)
    if ann_min_rows is not None and len(rows) >= ann_min_rows:
        build_ann_index(table, len(rows), ann_index_type)
    return int(table.version)


def _ann_summary(uri: str, name: str, version: int, rows: int, index_type: str) -> dict[str, Any]:
    """What the index value records of its vector index, read back from the written version: built or not, its
    LanceDB type, partitions and metric (a flat scan below `ann_min_rows`)."""
    import lancedb

    table = lancedb.connect(uri, storage_options=object_store_options(uri) or None).open_table(name)
    table.checkout(version)
    ix = vector_index(table)
    if ix is None:
        return {"built": False, "type": None, "rows": rows}
    return {"built": True, "type": ix["type"], "name": ix["name"], "metric": ix["metric"], "rows": rows,
            "partitions": ann_partitions(rows, index_type)}  # fmt: skip


def vector_index(table: Any) -> dict[str, Any] | None:
    """The ANN index on the `vector` column of the table's checked-out version ({name, type, metric}: type as
    LanceDB names it, e.g. IVF_HNSW_SQ), or None (the vector search is a flat scan)."""
    for ix in table.list_indices():
        if list(getattr(ix, "columns", None) or []) == ["vector"]:
            stats = table.index_stats(ix.name)
            return {
                "name": str(ix.name),
                "type": str(getattr(stats, "index_type", None) or ix.index_type),
                "metric": str(getattr(stats, "distance_type", None) or "l2"),
            }
    return None


class RetrievalIndex:
    """One published index version, searchable: `search(query, k)` → passages, best first."""

    def __init__(
        self,
        uri: str,
        name: str,
        version: int,
        embedder: RetrievalEmbedder,
        *,
        rrf_k: int = _DEFAULTS.rrf_k,
        nprobes: int = _DEFAULTS.ann_nprobes,
        refine_factor: int | None = _DEFAULTS.ann_refine_factor,
    ) -> None:
        import lancedb

        try:
            self.table = lancedb.connect(uri, storage_options=object_store_options(uri) or None).open_table(name)
            self.table.checkout(version)
            self.ann = vector_index(self.table)  # None: the vector half is a flat (exact) scan
        except Exception as e:  # the library raises several types for a missing table/version
            raise RetrievalIndexError(f"cannot open retrieval index {name} version {version} at {uri}: {e}") from e
        self.name, self.version, self.embedder, self.rrf_k = name, version, embedder, rrf_k
        self.nprobes, self.refine_factor = nprobes, refine_factor

    @classmethod
    def for_config(
        cls, uri: str, name: str, version: int, embedder: RetrievalEmbedder, cfg: ProjectConfig
    ) -> "RetrievalIndex":
        r = cfg.retrieval
        return cls(
            uri, name, version, embedder, rrf_k=r.rrf_k, nprobes=r.ann_nprobes, refine_factor=r.ann_refine_factor
        )

    @classmethod
    def from_value(cls, value: Mapping[str, Any], cfg: ProjectConfig) -> "RetrievalIndex":
        if not value.get("table"):
            raise RetrievalIndexError(f"retrieval_index of {value.get('domain')!r} has no table (no corpus configured)")
        return cls.for_config(
            str(value["uri"]),
            str(value["table"]),
            int(value["version"]),
            embedder_for(str(value["language"]), cfg),
            cfg,
        )

    def count(self) -> int:
        return int(self.table.count_rows())

    def search(self, query: str, k: int = 5) -> list[dict[str, Any]]:
        """Hybrid search: the top `k` of the vector and BM25 rankings fused by reciprocal rank; passages that
        state every date the query names (`date_tokens`) rank before the others."""
        if not query.strip():
            return []
        depth = max(4 * k, 20)
        dates = date_tokens(query)
        vec = self.embedder.encode_queries([query])[0]
        by_vec = self.vector_search(vec, depth)
        try:
            lexical = " ".join([query, *dates])
            by_text = self.table.search(lexical, query_type="fts").limit(depth).to_list()
        except Exception:  # noqa: BLE001 - a query the FTS parser rejects (quotes, operators): vector only
            by_text = []
        score: dict[str, float] = {}
        rows: dict[str, dict[str, Any]] = {}
        for ranking in (by_vec, by_text):
            for rank, r in enumerate(ranking):
                score[r["id"]] = score.get(r["id"], 0.0) + 1.0 / (self.rrf_k + rank + 1)
                rows.setdefault(r["id"], r)
        # a date the query names is a constraint, not a soft term: passages that state every such date come first
        # (the sentence embedding cannot tell January 5 from January 13; the fused rank would bury BM25's match)
        wanted = set(dates)
        states = {i: wanted <= set(str(rows[i].get(SEARCH_COLUMN) or "").split()) for i in score} if wanted else {}
        best = sorted(score, key=lambda i: (not states.get(i, False), -score[i], i))[:k]
        return [
            {
                "id": i,
                "title": rows[i]["title"],
                "source": rows[i]["source"],
                "position": int(rows[i]["position"]),
                "text": rows[i]["text"],
                "score": round(score[i], 6),
            }
            for i in best
        ]

    def vector_query(self, vec: np.ndarray, depth: int) -> Any:
        """The LanceDB query of the `depth` nearest rows to `vec`: through the ANN index (its metric, `nprobes`
        partitions, re-ranked by the exact vectors when `refine_factor` is set) when the version has one, else a
        flat scan."""
        q: Any = self.table.search(vec, vector_column_name="vector")  # a vector query (LanceVectorQueryBuilder)
        if self.ann:
            q = q.distance_type(self.ann["metric"]).nprobes(self.nprobes)
            if self.refine_factor:
                q = q.refine_factor(self.refine_factor)
        return q.limit(depth)

    def vector_search(self, vec: np.ndarray, depth: int) -> list[dict[str, Any]]:
        return list(self.vector_query(vec, depth).to_list())

    def ids(self) -> list[str]:
        return [str(x) for x in self.table.to_arrow().column("id").to_pylist()]


# --------------------------------------------------------------------------- the asset's core


def published_tasks(splits_value: Mapping[str, Any] | None, cfg: ProjectConfig) -> list[dict[str, Any]]:
    """Every task of the dataset_splits value's files (train/dev/test), with its `split`."""
    if not splits_value:
        return []
    from factory.splits.build import release_folder

    store = data_store(cfg)
    folder = release_folder(splits_value)
    out: list[dict[str, Any]] = []
    for split in sorted(splits_value.get("splits") or {}):
        rel = f"{folder}/{split}.jsonl"
        if store.exists(rel):
            out.extend({**t, "split": t.get("split", split)} for t in store.read_jsonl(rel))
    return out


def benchmark_questions(cfg: ProjectConfig) -> list[tuple[str, str]]:
    """(row id, question) of every configured benchmark file (`splits.benchmarks`), read by the splits'
    contamination loader (its errors name the bad file and line); none when no file is configured."""
    if not cfg.splits.benchmarks:
        return []
    from factory.splits.contamination import BenchmarkIndex

    rows = BenchmarkIndex.load(cfg.splits.benchmarks, cfg.splits, base_dir=cfg.project_dir).rows
    return [(f"{r.benchmark}:{r.id}", r.query) for r in rows]


def build_index(
    domain: str,
    corpus: Mapping[str, Any],
    corpora: Mapping[str, Mapping[str, Any]],
    tasks: Sequence[Mapping[str, Any]],
    cfg: ProjectConfig,
    embedder: RetrievalEmbedder | None = None,
    stage: str = "served",
    rag_drops: Sequence[Mapping[str, Any]] = (),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`retrieval_index` of one domain: decontaminate the corpus, embed the kept chunks, write them to
    LanceDB with a BM25 index; the value pins the table version and records every removal verdict.

    `stage="synthesis"` builds the pre-synthesis version (`retrieval_synthesis_index`: called with no
    tasks and no other corpora, so nothing is removed); the served version (after the splits) keeps the
    gold passages of published API+RAG tasks and replays their retrieval calls against itself
    (`api_rag_replay`). `rag_drops`: the domain's judged_queries rejections by rule (b) (RAG-only tasks the
    APIs answer), counted in the decontamination waterfall beside the chunk removals."""
    chunks = list(corpus.get("chunks") or [])
    collection = corpus.get("collection")
    if not collection:
        empty: dict[str, Any] = {
            "domain": domain,
            "table": None,
            "version": None,
            "chunks": 0,
            "served": 0,
            "removed": [],
        }
        return empty, {"configured": False, "chunks": 0, "served": 0}
    others = {d: list(c.get("chunks") or []) for d, c in corpora.items() if d != domain}
    verdicts, stats = decontam.decontaminate(
        domain, chunks, tasks, others, cfg.retrieval, benchmark_questions(cfg) if tasks else ()
    )
    # gold passages of published API+RAG tasks stay served (their tasks replay against this version); a rule
    # that would have removed one is recorded beside the verdicts, not silently dropped
    gold = gold_passages(tasks, domain)
    protected = [{**v, "tasks": sorted(gold[v["id"]])} for v in verdicts if v["id"] in gold]
    verdicts = [v for v in verdicts if v["id"] not in gold]
    # the counts of what is removed (a protected passage is served: corpus − removed = served)
    stats["removed"] = {r: sum(1 for v in verdicts if v["reason"] == r) for r in decontam.REASONS}
    stats["protected"] = {r: n for r in decontam.REASONS if (n := sum(1 for v in protected if v["reason"] == r))}
    drops = [
        {"id": (r.get("task") or {}).get("id"), "reason": r.get("reason"), "detail": r.get("detail")}
        for r in rag_drops
        if r.get("reason") == decontam.RAG_REASON
    ]
    stats["rag_only_dropped"] = len(drops)
    removed = {v["id"] for v in verdicts}
    kept = [c for c in chunks if c["id"] not in removed]
    languages = sorted({c["language"] for c in chunks}) or ["en"]
    if len(languages) > 1:
        raise ValueError(f"domain {domain!r}: corpus mixes languages {languages}; one index has one embedding model")
    language = languages[0]
    emb = embedder or embedder_for(language, cfg)
    # every chunk removed (a small corpus whose documents all state a published answer): an empty table of the
    # model's dimension, so the version exists and serves nothing (LanceDB rejects a vector column of dimension 0)
    vectors = emb.encode([search_text(c) for c in kept]) if kept else emb.encode(["-"])[:0]
    uri = index_uri(cfg)
    name = table_name(domain, str(collection))
    r = cfg.retrieval
    version = write_index(
        uri, name, kept, vectors, language, ann_min_rows=r.ann_min_rows, ann_index_type=r.ann_index_type
    )
    ann = _ann_summary(uri, name, version, len(kept), r.ann_index_type)
    value: dict[str, Any] = {
        "domain": domain,
        "collection": collection,
        "language": language,
        "uri": uri,
        "table": name,
        "version": version,
        "model": emb.model_id,
        "dim": int(vectors.shape[1]) if len(kept) else 0,
        "chunks": len(chunks),
        "served": len(kept),
        "removed": verdicts,
        "protected": protected,
        "rag_tasks_dropped": drops,
        "decontamination": stats,
        "fingerprint": fingerprint(name, version, emb.model_id, [c["id"] for c in kept]),
        "ann_index": ann,
    }
    if stage == "synthesis":
        value["stage"] = "synthesis"
    else:
        served_index = RetrievalIndex.for_config(uri, name, version, emb, cfg)
        value["api_rag_replay"] = replay_retrieval_calls(served_index, tasks, domain)
    counts = stats["removed"]
    from factory.retrieval.policy import CATEGORIES, category_of, hop_type

    own = [t for t in tasks if t.get("domain") == domain]
    size = _folder_bytes(uri, name)
    meta: dict[str, Any] = {
        "configured": True,
        "table": name,
        "version": version,
        "model": emb.model_id,
        "chunks": len(chunks),
        "served": len(kept),
        "removed_total": len(verdicts),
        **{f"removed/{r}": n for r, n in counts.items()},
        "api_only_tasks": stats["api_only_tasks"],
        "held_out_questions": stats["held_out_questions"],
        "benchmark_questions": stats.get("benchmark_questions", 0),
        "rag_only_tasks": stats["rag_only_tasks"],
        "api_rag_tasks": stats["api_rag_tasks"],
        "protected_gold_passages": len(protected),
        **(
            {f"api_rag_replay/{k}": v for k, v in value["api_rag_replay"].items() if isinstance(v, int)}
            if "api_rag_replay" in value
            else {}
        ),
        "rag_only_dropped": len(drops),  # rule (b), from judged_queries
        "index_bytes": size,
        "ann_index": ann["built"],  # an ANN vector index on `vector` (else a flat scan: fewer than ann_min_rows)
        "ann_index_type": ann["type"] or "none (flat scan)",
        "corpus_documents": len({c.get("doc_id") for c in chunks}),
        "hop_types": {h: sum(1 for t in own if hop_type(t) == h) for h in sorted({hop_type(t) for t in own})},
        "policy_by_category": {c: sum(1 for t in own if category_of(t) == c) for c in CATEGORIES},
        "removals": md_table(verdicts + drops, ["id", "reason", "detail"], limit=20),
        "decontamination_plot": bar_plot(
            {"corpus": len(chunks), **{r: -n for r, n in counts.items()}, "served": len(kept)},
            title=f"{domain}: decontamination waterfall (chunks)",
        ),
        "decontamination_waterfall": md_table(
            [{"step": "corpus chunks", "n": len(chunks)}]
            + [{"step": f"removed: {r}", "n": -n} for r, n in counts.items()]
            + [
                {"step": "served chunks", "n": len(kept)},
                {"step": "of them gold passages of API+RAG tasks a rule matched (kept)", "n": len(protected)},
                {"step": "API+RAG tasks (published, this domain)", "n": stats["api_rag_tasks"]},
                {"step": "RAG-only tasks (published, this domain)", "n": stats["rag_only_tasks"]},
                {"step": f"RAG-only tasks dropped: {decontam.RAG_REASON} (b)", "n": -len(drops)},
            ],
            ["step", "n"],
            limit=20,
        ),  # fmt: skip
        **emb.metadata("embeddings"),
    }
    return value, meta


def gold_passages(tasks: Sequence[Mapping[str, Any]], domain: str) -> dict[str, set[str]]:
    """{passage id: ids of the domain's published tasks whose golden retrieval calls used it}. A task a policy makes
    unanswerable counts with its unrestricted path (`records.unrestricted`: the audit re-derives that answer and its
    conversation searches the passage; a refused multi-source task's passage removed by rule (a) failed the audit)."""
    from factory.records import unrestricted

    out: dict[str, set[str]] = {}
    for t in tasks:
        if t.get("domain") != domain:
            continue
        for a in unrestricted(t).get("golden_actions") or []:
            if a.get("source_type") == "retrieval":
                for pid in a.get("passage_ids") or []:
                    out.setdefault(str(pid), set()).add(str(t.get("id")))
    return out


def replay_retrieval_calls(served: "RetrievalIndex", tasks: Sequence[Mapping[str, Any]], domain: str) -> dict[str, Any]:
    """Re-run every golden retrieval call of the domain's published API+RAG tasks against the served
    version: a call replays when the passages its task used are still among those it returns."""
    from factory.records import unrestricted

    checked = ok = 0
    failed: list[dict[str, Any]] = []
    for t in tasks:
        if t.get("domain") != domain:
            continue
        for a in unrestricted(t).get("golden_actions") or []:  # a refused task's path too (its conversation searches)
            if a.get("source_type") != "retrieval" or not a.get("passage_ids"):
                continue
            args = a.get("args") or {}
            checked += 1
            got = {p["id"] for p in served.search(str(args.get("query") or ""), int(args.get("k") or 5))}
            missing = sorted(set(a["passage_ids"]) - got)
            if missing:
                failed.append({"task_id": t.get("id"), "step": a.get("step"), "query": args.get("query"),
                               "missing": missing})  # fmt: skip
            else:
                ok += 1
    return {"checked": checked, "replayed": ok, "failed_calls": len(failed), "failed": failed}


def _folder_bytes(uri: str, name: str) -> int | None:
    """Bytes of the table's folder (every version) when the index is on a local disk; None on object storage."""
    from pathlib import Path

    folder = Path(uri) / f"{name}.lance"
    if "://" in uri or not folder.is_dir():
        return None
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def index_frame(value: Mapping[str, Any], cfg: ProjectConfig, corpus: Mapping[str, Any]) -> pd.DataFrame:
    """One row per corpus chunk for the GX gate, recomputed from the table the value pins: whether it is
    removed, whether it is served, whether its vector is there with the value's dimension and a non-zero norm."""
    chunks = list(corpus.get("chunks") or [])
    removed = {v["id"]: v["reason"] for v in value.get("removed") or []}
    served: dict[str, float] = {}
    dims: dict[str, int] = {}
    if value.get("table"):
        import lancedb

        uri = str(value["uri"])
        table = lancedb.connect(uri, storage_options=object_store_options(uri) or None).open_table(str(value["table"]))
        table.checkout(int(value["version"]))
        arrow = table.to_arrow()
        for i, v in zip(arrow.column("id").to_pylist(), arrow.column("vector").to_pylist(), strict=True):
            arr = np.asarray(v or [], dtype=np.float32)
            served[str(i)] = float(np.linalg.norm(arr)) if arr.size else 0.0
            dims[str(i)] = int(arr.size)
    ids = {c["id"] for c in chunks}
    rows = [
        {
            "id": c["id"],
            "removed": c["id"] in removed,
            "reason": removed.get(c["id"], ""),
            "served": c["id"] in served,
            "embedded": c["id"] in removed or (dims.get(c["id"]) == value.get("dim") and served.get(c["id"], 0) > 0),
        }
        for c in chunks
    ]
    # ids served that the corpus does not hold (a stale table) are rows too: they must fail
    rows += [
        {"id": i, "removed": i in removed, "reason": removed.get(i, "not_in_corpus"), "served": True, "embedded": True}
        for i in sorted(set(served) - ids)
    ]
    frame = pd.DataFrame(rows, columns=["id", "removed", "reason", "served", "embedded"])
    frame["removed_not_served"] = ~(frame["removed"] & frame["served"])
    frame["known_reason"] = frame["reason"].isin(["", *decontam.REASONS])
    frame["kept_is_served"] = frame["removed"] | frame["served"]
    return frame


# --------------------------------------------------------------------------- lineage (issue 17 item 7)


def task_lineage(
    task: Mapping[str, Any],
    index_value: Mapping[str, Any] | None,
    corpus_value: Mapping[str, Any] | None,
    synthesis_value: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What `factory lineage` shows for a task's retrieval side: its hop type and policy, the index version
    (table, LanceDB version, fingerprint; the task's own surface fingerprint of the retrieval platform when it
    recorded one) beside the version synthesis searched (`retrieval_synthesis_index`, every chunk), every passage id its golden retrieval calls used with whether the index serves it now (or
    the removal verdict that took it out) and the removal verdicts of the other chunks of its document (what the
    index took from around the passage: an agent reading the document finds those parts gone), and the chunk
    removals this task caused (rule (a)/(c) verdicts whose evidence is the task) and its rule (b) verdict."""
    iv = index_value or {}
    removed = {v["id"]: v for v in iv.get("removed") or []}
    chunks = (corpus_value or {}).get("chunks") or []
    corpus_ids = {c["id"] for c in chunks} if corpus_value else None
    doc_of = {c["id"]: c.get("doc_id") for c in chunks}
    by_doc: dict[Any, list[str]] = {}
    for c in chunks:
        by_doc.setdefault(c.get("doc_id"), []).append(c["id"])
    tid = str(task.get("id"))
    passages = []
    for a in task.get("golden_actions") or []:
        if a.get("source_type") != "retrieval":
            continue
        for pid in a.get("passage_ids") or []:
            verdict = removed.get(pid)
            served = None if corpus_ids is None else (pid in corpus_ids and verdict is None)
            doc = doc_of.get(pid)
            near = [removed[c] for c in by_doc.get(doc, []) if c != pid and c in removed] if doc else []
            passages.append({"step": a.get("step"), "tool": a.get("tool"), "id": pid, "served_now": served,
                             "removal": verdict, "document": doc, "document_removals": near})  # fmt: skip
    surface = (task.get("lineage") or {}).get("surface") or {}
    platforms = {a.get("platform") for a in task.get("golden_actions") or [] if a.get("source_type") == "retrieval"}
    keys = ("table", "version", "fingerprint", "model", "chunks", "served")
    return {
        "hop_type": task.get("hop_type") or "API",
        "policy": task.get("policy"),
        "index": {k: iv.get(k) for k in keys} if iv else None,
        "synthesis_index": {k: synthesis_value.get(k) for k in keys} if synthesis_value else None,
        "surface_at_synthesis": {
            k: v for k, v in surface.items() if k in platforms or "retrieval" in k or "search_" in k
        },
        "passages": passages,
        "removals_caused": [v for v in iv.get("removed") or [] if v.get("evidence") == tid],
        "rule_b": [
            v for v in (task.get("lineage") or {}).get("verdicts") or [] if v.get("check") == decontam.RAG_REASON
        ],
    }


def render_task_lineage(r: Mapping[str, Any]) -> list[str]:
    """Text lines of `task_lineage` for `factory lineage`."""
    pol = r.get("policy") or {}
    lines = [f"retrieval   hop type {r['hop_type']}   policy {pol.get('category') or 'none'}"
             + (f" (forbids {', '.join([*(pol.get('forbidden_sources') or []), *(pol.get('forbidden_platforms') or [])])})"
                if pol.get("forbidden_sources") or pol.get("forbidden_platforms") else "")]  # fmt: skip
    if pol.get("text"):
        lines.append(f"  policy text  {pol['text']}")
    ix = r.get("index")
    if ix:
        lines.append(f"  index  {ix.get('table')} v{ix.get('version')}  {str(ix.get('fingerprint'))[:23]}  "
                     f"{ix.get('served')}/{ix.get('chunks')} chunks served  model {ix.get('model')}")  # fmt: skip
    sx = r.get("synthesis_index")
    if sx and r.get("passages"):
        lines.append(f"  searched at synthesis  {sx.get('table')} v{sx.get('version')}  {str(sx.get('fingerprint'))[:23]}  "
                     f"{sx.get('served')} chunks (before decontamination)")  # fmt: skip
    for k, v in sorted((r.get("surface_at_synthesis") or {}).items()):
        lines.append(f"  surface at synthesis  {k} {str(v)[:23]}")
    for p in r.get("passages") or []:
        now = {True: "served", False: "NOT SERVED", None: "?"}[p["served_now"]]
        why = f"  removed: {p['removal']['reason']} — {p['removal']['detail']}" if p.get("removal") else ""
        lines.append(f"  passage step {p['step']} {p['tool']} {p['id']}  {now}{why}")
        for v in p.get("document_removals") or []:
            lines.append(f"    same document: removed chunk {v['id']}: {v['reason']} — {v.get('detail', '')}")
    for v in r.get("removals_caused") or []:
        lines.append(f"  removed chunk {v['id']} because of this task: {v['reason']} — {v.get('detail', '')}")
    for v in r.get("rule_b") or []:
        lines.append(
            f"  rule (b) {'pass' if v.get('passed') else 'FAIL ' + str(v.get('reason'))}: {v.get('detail', '')}"
        )
    return lines
