"""Benchmark contamination: load benchmark files, find collisions both ways, write the audit.

Benchmark files are JSONL, one object per line:
- query text under the first present key of `splits.benchmark_query_keys` (default "query", then
  "question"); required, a non-empty string;
- optional "id" (string or integer; unique within a file; rows without one are named
  "<file>:<line>");
- optional tool sequence under the first present key of `splits.benchmark_tools_keys` (default
  "tools", then "tool_sequence"): a list of tool names, {"name": ...} objects, or lists of those
  for parallel calls. With a sequence, the structural rule (Jaccard ≥ 0.60 and the same
  tool-sequence signature) applies too; without one only the near-duplicate rule (≥ 0.85) does.
Blank lines are skipped. Any other problem is a `BenchmarkError` naming file and line.

Two directions:
- dataset → benchmark (`dataset_splits`): every dataset task colliding with a benchmark row is
  dropped before split assignment, so no train task collides; the audit records each one.
- benchmark → new data (reverse filter during synthesis/judging):
  `BenchmarkIndex.load(paths, cfg.splits, base_dir=cfg.project_dir).collisions(query, tools)` or `.collisions_for_task(task)`
  tell a stage that a candidate would drift into a benchmark.
"""

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from factory.config import SplitsConfig
from factory.paths import is_uri, resolve_path
from factory.splits import minhash, structure


class BenchmarkError(ValueError):
    """A benchmark file that cannot be used; the message names the file (and line)."""


@dataclass(frozen=True)
class BenchmarkRow:
    benchmark: str
    line: int
    id: str
    query: str
    structure: str | None
    language: str
    groups: tuple[tuple[str, ...], ...] | None = None


@dataclass(frozen=True)
class Collision:
    benchmark: str
    benchmark_id: str
    line: int
    similarity: float
    kind: str  # near_duplicate | structural_duplicate
    same_structure: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_bytes(path: str, base_dir: str | os.PathLike | None = None) -> bytes:
    """A local path (relative: to `base_dir`, the project folder; default the working directory)
    or a URI (pyarrow filesystems)."""
    try:
        if is_uri(path):
            import pyarrow.fs as pafs

            fs, p = pafs.FileSystem.from_uri(path)
            with fs.open_input_stream(p) as f:
                return f.read()
        return resolve_path(path, base_dir).read_bytes()
    except FileNotFoundError as e:
        raise BenchmarkError(f"{path}: benchmark file not found") from e
    except OSError as e:
        raise BenchmarkError(f"{path}: cannot read benchmark file: {e}") from e


def parse_benchmark(
    data: bytes, name: str, cfg: SplitsConfig, key_tools: set[str] | frozenset[str] = frozenset()
) -> list[BenchmarkRow]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BenchmarkError(f"{name}: not UTF-8 text ({e})") from e
    rows: list[BenchmarkRow] = []
    first_line: dict[str, int] = {}
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise BenchmarkError(f"{name}:{i}: not valid JSON ({e.msg} at column {e.colno})") from e
        if not isinstance(obj, dict):
            raise BenchmarkError(f"{name}:{i}: expected a JSON object, got {type(obj).__name__}")
        qkey = next((k for k in cfg.benchmark_query_keys if k in obj), None)
        if qkey is None:
            raise BenchmarkError(
                f"{name}:{i}: no query text: none of the keys {', '.join(repr(k) for k in cfg.benchmark_query_keys)}"
                f" is present (keys: {', '.join(sorted(obj)) or 'none'})"
            )
        query = obj[qkey]
        if not isinstance(query, str) or not query.strip():
            raise BenchmarkError(f"{name}:{i}: {qkey!r} must be a non-empty string, got {query!r}")
        rid = obj.get("id")
        if rid is None:
            rid = f"{name}:{i}"
        elif isinstance(rid, bool) or not isinstance(rid, str | int) or (isinstance(rid, str) and not rid.strip()):
            raise BenchmarkError(f"{name}:{i}: 'id' must be a non-empty string or an integer, got {rid!r}")
        rid = str(rid)
        if rid in first_line:
            raise BenchmarkError(f"{name}:{i}: duplicate id {rid!r} (first at line {first_line[rid]})")
        first_line[rid] = i
        sig, groups = None, None
        tkey = next((k for k in cfg.benchmark_tools_keys if obj.get(k) is not None), None)
        if tkey is not None:
            try:
                g = structure.groups_from_tools(obj[tkey], key_tools)
            except structure.ToolSequenceError as e:
                raise BenchmarkError(f"{name}:{i}: {tkey!r}: {e}") from e
            groups = tuple(tuple(x) for x in g)
            sig = structure.signature(g) or None
        rows.append(
            BenchmarkRow(
                benchmark=name,
                line=i,
                id=rid,
                query=query,
                structure=sig,
                language=minhash.script_language(query),
                groups=groups,
            )
        )
    if not rows:
        raise BenchmarkError(f"{name}: benchmark file is empty (no JSON rows)")
    return rows


def load_benchmark_file(
    path: str,
    cfg: SplitsConfig,
    key_tools: set[str] | frozenset[str] = frozenset(),
    base_dir: str | os.PathLike | None = None,
) -> tuple[list[BenchmarkRow], dict[str, Any]]:
    data = read_bytes(path, base_dir)
    rows = parse_benchmark(data, path, cfg, key_tools)
    info = {
        "path": path,
        "sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
        "rows": len(rows),
        "with_tools": sum(1 for r in rows if r.structure),
        "languages": dict(Counter(r.language for r in rows)),
    }
    return rows, info


class BenchmarkIndex:
    """Benchmark rows in a MinHash LSH index; answers "does this query collide with a benchmark?"."""

    def __init__(
        self,
        rows: Sequence[BenchmarkRow],
        cfg: SplitsConfig,
        *,
        key_tools: set[str] | frozenset[str] = frozenset(),
        files: Sequence[dict[str, Any]] = (),
    ):
        self.cfg = cfg
        self.key_tools = frozenset(key_tools)
        self.rows = list(rows)
        self.files = list(files)
        self.index = minhash.SimilarityIndex(cfg)
        self._by_key: dict[str, BenchmarkRow] = {}
        for r in self.rows:
            key = self.key(r)
            self._by_key[key] = r
            self.index.add(key, r.query, r.structure)
        self.matrix = (
            np.vstack([self.index.signature(self.key(r)) for r in self.rows])
            if self.rows
            else np.zeros((0, cfg.num_perm), dtype=np.uint32)
        )

    @classmethod
    def load(
        cls,
        paths: Iterable[str],
        cfg: SplitsConfig,
        *,
        key_tools: set[str] | frozenset[str] = frozenset(),
        base_dir: str | os.PathLike | None = None,
    ) -> "BenchmarkIndex":
        """Every configured benchmark file (no paths: an empty index that never collides); relative
        paths are taken relative to `base_dir` (the project folder, `ProjectConfig.project_dir`)."""
        rows: list[BenchmarkRow] = []
        files = []
        seen: set[str] = set()
        for p in paths:
            if p in seen:
                raise BenchmarkError(f"{p}: benchmark file listed twice in splits.benchmarks")
            seen.add(p)
            r, info = load_benchmark_file(p, cfg, key_tools, base_dir)
            rows.extend(r)
            files.append(info)
        return cls(rows, cfg, key_tools=key_tools, files=files)

    def __len__(self) -> int:
        return len(self.rows)

    @staticmethod
    def key(row: BenchmarkRow) -> str:
        """Index key of a row: its file and id (unique: ids are unique per file, files listed once)."""
        return f"{row.benchmark}\0{row.id}"

    def _collisions(self, query: str, sig: str | None, sketch=None) -> list[Collision]:
        out = []
        for m in self.index.matches(query, sig, sketch=sketch):
            r = self._by_key[m.key]
            out.append(Collision(r.benchmark, r.id, r.line, m.similarity, m.kind or "", m.same_structure))
        return out

    def collisions(self, query: str, tools: Any = None) -> list[Collision]:
        """Benchmark rows this query (with an optional tool sequence, same forms as a benchmark row's)
        collides with, best first; empty when it is clean."""
        sig = None
        if tools:
            sig = structure.signature(structure.groups_from_tools(tools, self.key_tools)) or None
        return self._collisions(query, sig)

    def collisions_for_task(self, task: Mapping[str, Any], sketch=None) -> list[Collision]:
        """The same for a Task dict: its query and its golden actions' tool sequence."""
        sig = structure.task_signature(task, self.key_tools) or None
        return self._collisions(task["query"], sig, sketch=sketch)

    def row(self, benchmark: str, rid: str) -> BenchmarkRow:
        for r in self.rows:
            if r.benchmark == benchmark and r.id == rid:
                return r
        raise KeyError((benchmark, rid))


def screen(
    tasks: Sequence[Mapping[str, Any]], index: BenchmarkIndex, sketches: Mapping[str, Any] | None = None
) -> dict[str, list[Collision]]:
    """{task id: collisions} for every task that collides with at least one benchmark row."""
    out: dict[str, list[Collision]] = {}
    if not len(index):
        return out
    for t in tasks:
        c = index.collisions_for_task(t, sketch=(sketches or {}).get(t["id"]))
        if c:
            out[t["id"]] = c
    return out


def _nn(index: BenchmarkIndex, rows: list[int], ids: Sequence[str], sketches: Mapping[str, Any]) -> np.ndarray:
    if not rows or not ids:
        return np.zeros(0)
    refs = np.vstack([sketches[i][1].hashvalues for i in ids])
    ref_hashes = [sketches[i][0] for i in ids]
    q_hashes = [index.index.hashes(index.key(index.rows[n])) for n in rows]
    return np.asarray(minhash.nearest_exact(index.matrix[rows], q_hashes, refs, ref_hashes))


def audit_report(
    *,
    index: BenchmarkIndex,
    checked: Sequence[Mapping[str, Any]],
    sketches: Mapping[str, Any],
    train_ids: Sequence[str],
    collisions: Mapping[str, list[Collision]],
    dropped: Sequence[dict[str, Any]],
    train_collisions: int,
) -> dict[str, Any]:
    """The contamination_audit.json record.

    Nearest-neighbour similarity: for each benchmark row, its nearest checked dataset task (and
    nearest final train task) found by MinHash, reported as the exact Jaccard of that pair.
    `sketches` are {task id: (shingle hashes, MinHash)}. When rows × tasks exceeds `nn_max_pairs`,
    a deterministic sample of benchmark rows is measured (each against all tasks).
    """
    cfg = index.cfg
    checked_ids = [t["id"] for t in checked]
    keys = [index.key(r) for r in index.rows]
    limit = max(1, cfg.nn_max_pairs // max(1, len(checked_ids)))
    rows = minhash.sample_rows(keys, limit) if len(index) else []
    nn_all = _nn(index, rows, checked_ids, sketches)
    nn_train = _nn(index, rows, list(train_ids), sketches)

    pairs = [(tid, c) for tid, cs in sorted(collisions.items()) for c in cs]
    by_lang: dict[str, dict[str, Any]] = {}
    for lang in sorted({r.language for r in index.rows}):
        members = [k for k, n in enumerate(rows) if index.rows[n].language == lang]
        hit_rows = {(c.benchmark, c.benchmark_id) for _, c in pairs}
        by_lang[lang] = {
            "benchmark_rows": sum(1 for r in index.rows if r.language == lang),
            "colliding_rows": sum(1 for r in index.rows if r.language == lang and (r.benchmark, r.id) in hit_rows),
            "nn_similarity": minhash.percentiles(nn_all[members].tolist() if len(nn_all) else []),
        }
    per_file: dict[str, int] = Counter(c.benchmark for _, c in pairs)
    files = [{**f, "collisions": per_file.get(f["path"], 0)} for f in index.files]
    exact_max = max((c.similarity for _, c in pairs), default=None)
    nn_max = float(nn_all.max()) if len(nn_all) else None
    return {
        "status": "no_benchmarks" if not len(index) else ("empty_dataset" if not checked_ids else "ok"),
        "method": index.index.method(),
        "benchmarks": files,
        "benchmark_tasks_checked": len(index),
        "dataset_tasks_checked": len(checked_ids),
        "train_tasks": len(train_ids),
        "collisions": len(pairs),
        "colliding_tasks": len(collisions),
        "colliding_benchmark_rows": len({(c.benchmark, c.benchmark_id) for _, c in pairs}),
        "collisions_by_kind": dict(Counter(c.kind for _, c in pairs)),
        "train_collisions": train_collisions,
        "max_similarity": round(max(x for x in (exact_max, nn_max) if x is not None), 4)
        if exact_max is not None or nn_max is not None
        else None,
        "max_collision_similarity": exact_max,
        "max_similarity_train": round(float(nn_train.max()), 4) if len(nn_train) else None,
        "nn_similarity": {
            **minhash.percentiles(nn_all.tolist()),
            "rows_measured": len(rows) if checked_ids else 0,
            "sampled": bool(checked_ids) and len(rows) < len(index),
            "estimator": "neighbour found by MinHash, similarity = exact Jaccard of that pair",
            "histogram": minhash.histogram(nn_all.tolist()),
        },
        "nn_similarity_train": {**minhash.percentiles(nn_train.tolist()), "rows_measured": len(nn_train)},
        "by_language": by_lang,
        "definitions": {
            "collision": "a (dataset task, benchmark row) pair with exact shingle Jaccard ≥ near_duplicate_threshold, "
            "or ≥ structural_threshold when both have the same tool-sequence signature",
            "max_collision_similarity": "largest exact Jaccard among collision pairs",
            "nn_similarity": "per measured benchmark row, the exact Jaccard to its nearest checked dataset task "
            "(before filtering; the neighbour is found by MinHash); nn_similarity_train: the same against the "
            "final train split",
            "max_similarity": "max of max_collision_similarity and the nn_similarity maximum",
            "dropped": "every task removed from the dataset (benchmark collisions and near-duplicates) with its reason",
        },
        "collision_pairs": [{"task_id": tid, **c.to_dict()} for tid, c in pairs],
        "dropped": list(dropped),
    }
