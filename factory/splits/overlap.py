"""EDGE Appendix H audits between an evaluation side (dev, test, a benchmark) and train.

- Verbatim query leakage: evaluation tasks whose normalized query (NFKC, casefold, whitespace
  collapsed) equals a train query.
- Tool-universe overlap: distinct evaluation gold functions that are also gold functions anywhere
  in train (the shared API pool, intended by design; not leakage).
- Held-out platforms: evaluation platforms no train task touches; tasks using only unseen
  functions; mean per-task share of functions seen in train.
- Dependency-edge overlap at two resolutions: function-pair (junction u.field → v.param) and
  adjacency (consecutive calls). Eval/Train count occurrences without deduplication; Jaccard is
  over the sets of unique edges; Unseen is the share of evaluation occurrences whose edge never
  occurs in train.
Key-acquisition tools are excluded everywhere (functions and edges): key acquisition precedes
every call and is a property of the environment, not of a task.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factory.report import rate
from factory.splits import minhash, structure


@dataclass
class AuditRow:
    id: str
    query: str  # normalized
    functions: set[str]
    platforms: set[str]
    function_pairs: list[structure.Edge] = field(default_factory=list)
    adjacency: list[structure.Edge] = field(default_factory=list)


def rows_from_tasks(
    tasks: Iterable[Mapping[str, Any]], key_tools: set[str] | frozenset[str] = frozenset()
) -> list[AuditRow]:
    out = []
    for t in tasks:
        keys = set(key_tools) | structure.key_tools_of_task(t)
        groups = structure.call_groups(t.get("golden_actions") or [], keys)
        platforms = {
            a["platform"] for a in t.get("golden_actions") or [] if a.get("platform") and a["tool"] not in keys
        }
        out.append(
            AuditRow(
                id=t["id"],
                query=minhash.normalize(t["query"]),
                functions={n for g in groups for n in g},
                platforms=platforms or set(t.get("platforms") or []),
                function_pairs=structure.dependency_edges(t, keys),
                adjacency=structure.adjacency_edges(groups),
            )
        )
    return out


def _edges(eval_occ: Sequence[structure.Edge], train_occ: Sequence[structure.Edge]) -> dict[str, Any]:
    e, t = set(eval_occ), set(train_occ)
    union = e | t
    unseen = sum(1 for x in eval_occ if x not in t)
    return {
        "eval": len(eval_occ),
        "train": len(train_occ),
        "eval_unique": len(e),
        "train_unique": len(t),
        "shared_unique": len(e & t),
        "jaccard": round(len(e & t) / len(union), 4) if union else None,
        "unseen": rate(unseen, len(eval_occ)) if eval_occ else None,
        "unseen_occurrences": unseen,
    }


def compare(eval_rows: Sequence[AuditRow], train_rows: Sequence[AuditRow], *, examples: int = 10) -> dict[str, Any]:
    """Appendix H numbers for one evaluation side against train."""
    train_queries = {r.query for r in train_rows}
    train_functions = set().union(*(r.functions for r in train_rows)) if train_rows else set()
    train_platforms = set().union(*(r.platforms for r in train_rows)) if train_rows else set()
    eval_functions = set().union(*(r.functions for r in eval_rows)) if eval_rows else set()
    eval_platforms = set().union(*(r.platforms for r in eval_rows)) if eval_rows else set()
    leaked = [r.id for r in eval_rows if r.query in train_queries]
    with_functions = [r for r in eval_rows if r.functions]
    only_unseen = [r.id for r in with_functions if not (r.functions & train_functions)]
    coverage = [len(r.functions & train_functions) / len(r.functions) for r in with_functions]
    unseen_platforms = sorted(eval_platforms - train_platforms)
    return {
        "eval_tasks": len(eval_rows),
        "train_tasks": len(train_rows),
        "verbatim_query_leakage": {
            "leaked": len(leaked),
            "of": len(eval_rows),
            "rate": rate(len(leaked), len(eval_rows)),
            "examples": sorted(leaked)[:examples],
        },
        "tool_universe_overlap": {
            "shared": len(eval_functions & train_functions),
            "of": len(eval_functions),
            "rate": rate(len(eval_functions & train_functions), len(eval_functions)),
        },
        "held_out_platforms": {
            "unseen": len(unseen_platforms),
            "of": len(eval_platforms),
            "platforms": unseen_platforms,
        },
        "tasks_only_unseen_functions": {
            "n": len(only_unseen),
            "of": len(with_functions),
            "rate": rate(len(only_unseen), len(with_functions)),
        },
        "mean_function_coverage": round(sum(coverage) / len(coverage), 4) if coverage else None,
        "function_pair": _edges(
            [e for r in eval_rows for e in r.function_pairs], [e for r in train_rows for e in r.function_pairs]
        ),
        "adjacency": _edges([e for r in eval_rows for e in r.adjacency], [e for r in train_rows for e in r.adjacency]),
    }


def split_overlap(
    tasks: Sequence[Mapping[str, Any]],
    key_tools: set[str] | frozenset[str] = frozenset(),
    *,
    splits: Sequence[str] | None = None,
    train: str = "train",
) -> dict[str, Any]:
    """{"<split>_vs_train": compare(...)} for every non-train split (the given ones, else those present
    in `tasks`, each task carrying its "split")."""
    rows = rows_from_tasks(tasks, key_tools)
    by_split: dict[str, list[AuditRow]] = {s: [] for s in splits or []}
    for t, r in zip(tasks, rows, strict=True):
        by_split.setdefault(t["split"], []).append(r)
    train_rows = by_split.get(train, [])
    return {f"{s}_vs_{train}": compare(rs, train_rows) for s, rs in sorted(by_split.items()) if s != train}


def benchmark_rows(index: Any) -> list[AuditRow]:
    """Audit rows of a BenchmarkIndex's rows (queries; functions and adjacency when a row has tools)."""
    out = []
    for r in index.rows:
        groups = [list(g) for g in r.groups or ()]
        out.append(
            AuditRow(
                id=f"{r.benchmark}:{r.id}",
                query=minhash.normalize(r.query),
                functions={n for g in groups for n in g},
                platforms=set(),
                adjacency=structure.adjacency_edges(groups),
            )
        )
    return out
