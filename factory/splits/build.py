"""dataset_splits: judged tasks of every domain → deduplicated, contamination-filtered, split dataset.

Order of work (all in memory; files are published all-or-nothing at the end):
1. collect the kept tasks of every domain (each validated as a Task; an id seen twice with the
   same query and actions is an exact duplicate and removed, with different content an error);
2. benchmark filter: a task colliding with any benchmark row (near-duplicate text, or structural
   duplicate) is dropped — it can never reach train — and recorded;
3. near-duplicate removal inside the dataset (smallest id of every duplicate pair stays): MinHash over the query
   text, then tasks whose answer sentences are the same (a paraphrase of one question; `same_answer_duplicates`);
4. deterministic split assignment (quotas per (domain, pattern), held-out platforms → test);
5. audits: contamination (collisions, NN-similarity distribution), Appendix H overlaps between
   splits (and against benchmarks with tool sequences), env lock;
6. publish <data_dir>/dataset_splits/{<split>.jsonl, contamination_audit.json, env_lock.json,
   manifest.json}. Published files carry no per-run values (`records.published_task` drops
   `lineage.run_id`): identical inputs give byte-identical files. The run id stays in the value.
   With `stage_dir` (the asset) the files are only staged there and the value carries a `release`;
   the checks verify the staged files (`release_folder`) and `publish_release` moves them into place
   once every blocking check passed (`factory.io.publish_release`), so a failing gate leaves the
   previous files as they were.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from factory.config import ProjectConfig
from factory.io import RELEASE, Store, data_store, dumps, register_release
from factory.records import Task, published_task
from factory.report import Markdown, md_table, plot
from factory.splits import assign, contamination, envlock, minhash, overlap, publish, structure

FOLDER = "dataset_splits"
RELEASE_KIND = "dataset_splits"  # the `release` kind of a value whose files are staged (publish_release)
AUDIT_FILE = "contamination_audit.json"
LOCK_FILE = "env_lock.json"
REASONS = ("near_duplicate", "structural_duplicate", "benchmark_collision")


class SplitsError(ValueError):
    """Input that cannot be split (invalid task, conflicting ids, unknown held-out platform)."""


def collect_tasks(judged: Mapping[str, Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The kept tasks of every domain (sorted by id) and the exact duplicates removed."""
    by_id: dict[str, dict[str, Any]] = {}
    removed = []
    for domain, value in sorted(judged.items()):
        kept = value.get("kept") if isinstance(value, Mapping) else None
        if not isinstance(kept, list):
            raise SplitsError(f"judged_queries[{domain}]: expected a 'kept' list of tasks")
        for i, t in enumerate(kept):
            where = f"judged_queries[{domain}].kept[{i}] (id {t.get('id') if isinstance(t, dict) else None})"
            try:
                Task.model_validate(t)
            except ValidationError as e:
                raise SplitsError(f"{where} is not a valid Task: {e}") from e
            if t["domain"] != domain:
                raise SplitsError(f"{where}: task domain {t['domain']!r} in the partition of {domain!r}")
            prev = by_id.get(t["id"])
            if prev is None:
                by_id[t["id"]] = t
                continue
            same = prev["query"] == t["query"] and dumps(prev["golden_actions"]) == dumps(t["golden_actions"])
            if not same:
                raise SplitsError(
                    f"{where}: id {t['id']} is used by two different tasks (queries {prev['query']!r} / {t['query']!r})"
                )
            # keep the canonical-first copy so the outcome does not depend on input order
            keep, drop = sorted([prev, t], key=dumps)
            by_id[t["id"]] = keep
            removed.append(
                {
                    "id": drop["id"],
                    "domain": domain,
                    "reason": "near_duplicate",
                    "match": keep["id"],
                    "similarity": 1.0,
                    "query": drop["query"],
                    "detail": "the same task id twice (exact duplicate)",
                }
            )
    return [by_id[k] for k in sorted(by_id)], removed


_MIN_ANSWER_TEXT = 24  # shorter sentences ('It is 5.') can coincide for different questions


def _answer_key(task: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """What two tasks share when they ask one question: the domain, the language and the answer sentence, which
    names the entities and the figures found. None for a refusal (every refusal shares its sentence) and for a
    sentence too short to name anything."""
    if (task.get("answer_spec") or {}).get("kind") == "unanswerable":
        return None
    text = " ".join(str((task.get("answer") or {}).get("text") or "").split()).casefold()
    if len(text) < _MIN_ANSWER_TEXT or not any(c.isalpha() for c in text):
        return None
    return str(task.get("domain")), str(task.get("language")), text


def same_answer_duplicates(tasks: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """(dropped, kept) pairs of tasks whose answer sentences are the same (`_answer_key`): a paraphrase MinHash
    does not catch ('서울특별시는 인천광역시보다 구·군이 몇 곳 더 많나요?' / '서울특별시와 인천광역시의 구·군 수는 몇
    곳 차이 나나요?', one per platform) would otherwise sit in train and in test. The smallest id stays."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for t in tasks:
        key = _answer_key(t)
        if key is not None:
            groups.setdefault(key, []).append(t)
    pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    for group in groups.values():
        keep, *rest = sorted(group, key=lambda t: t["id"])
        pairs.extend((d, keep) for d in rest)
    return pairs


def configured_platforms(cfg: ProjectConfig, inventories: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Platform names of the config's sources (those that name one) and of the inventories' tools
    (a source without `platform` takes its name from its spec, known only from the inventory)."""
    out = {s.platform for d in cfg.domains for s in d.sources if s.platform}
    for inv in inventories.values():
        out.update(str(t["platform"]) for t in inv.get("tools") or [] if t.get("platform"))
    return out


def _dataset_nn(final: Sequence[dict[str, Any]], sketches: Mapping[str, Any], budget: int) -> list[float]:
    """Each (sampled) task's exact Jaccard to its MinHash-nearest other task."""
    ids = [t["id"] for t in final]
    if len(ids) < 2:
        return []
    refs = np.vstack([sketches[i][1].hashvalues for i in ids])
    hashes = [sketches[i][0] for i in ids]
    rows = minhash.sample_rows(ids, max(1, budget // len(ids)), salt="dataset-nn")
    return minhash.nearest_exact(refs[rows], [hashes[r] for r in rows], refs, hashes, exclude=rows)


def build_dataset_splits(
    judged: Mapping[str, Mapping[str, Any]],
    inventories: Mapping[str, Mapping[str, Any]],
    cfg: ProjectConfig,
    *,
    store: Store | None = None,
    run_id: str | None = None,
    demo_dir: Path | None = None,
    prompts_dir: Path | None = None,
    stage_dir: str | None = None,
    simulator: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The dataset_splits value and its metadata; publishes the files, or with `stage_dir` stages them
    there for `publish_release` (see module doc). `simulator`: the user simulator's pin for the env lock."""
    sc = cfg.splits
    store = store or data_store(cfg)
    tasks, removed = collect_tasks(judged)
    n_in = len(tasks) + len(removed)
    key_tools = structure.key_tools_of_inventories(inventories)
    unknown = sorted(set(sc.held_out_platforms) - configured_platforms(cfg, inventories))
    if unknown:
        raise SplitsError(
            f"splits.held_out_platforms names unknown platform(s) {unknown}; "
            f"configured: {sorted(configured_platforms(cfg, inventories))}"
        )
    index = contamination.BenchmarkIndex.load(sc.benchmarks, sc, key_tools=key_tools, base_dir=cfg.project_dir)
    sketcher = index.index.sketcher
    sketches = {t["id"]: sketcher.sketch(t["query"]) for t in tasks}
    by_id = {t["id"]: t for t in tasks}

    # 2. benchmark filter (before dedup, so a duplicate of a colliding task is judged on its own)
    collisions = contamination.screen(tasks, index, sketches)
    for tid in sorted(collisions):
        best = collisions[tid][0]
        removed.append(
            {
                "id": tid,
                "domain": by_id[tid]["domain"],
                "reason": "benchmark_collision",
                "match": best.benchmark_id,
                "similarity": best.similarity,
                "benchmark": best.benchmark,
                "kind": best.kind,
                "collisions": len(collisions[tid]),
                "query": by_id[tid]["query"],
            }
        )
    clean = [t for t in tasks if t["id"] not in collisions]

    # 3. near-duplicates inside the dataset
    items = [minhash.DedupItem(t["id"], t["query"], structure.task_signature(t, key_tools) or None) for t in clean]
    kept_ids, dups, _ = minhash.deduplicate(items, sc, sketches)
    for d in dups:
        removed.append(
            {
                "id": d["key"],
                "domain": by_id[d["key"]]["domain"],
                "reason": d["reason"],
                "match": d["match"],
                "similarity": d["similarity"],
                "query": by_id[d["key"]]["query"],
            }
        )
    kept = set(kept_ids)
    for drop, keep in same_answer_duplicates([t for t in clean if t["id"] in kept]):
        kept.discard(drop["id"])
        removed.append(
            {
                "id": drop["id"],
                "domain": drop["domain"],
                "reason": "near_duplicate",
                "match": keep["id"],
                "similarity": round(minhash.text_jaccard(drop["query"], keep["query"], sc.ngram), 4),
                "query": drop["query"],
                "detail": "the same answer sentence as its match: the same question asked in other words "
                "(or through another platform that serves the same facts)",
            }
        )
    final_src = [t for t in clean if t["id"] in kept]

    # 4. splits
    assignment, assign_report = assign.assign_splits(
        final_src,
        sc.ratios,
        seed=cfg.seed,
        held_out_platforms=sc.held_out_platforms,
        min_eval=sc.min_eval_tasks,
        max_eval_share=sc.max_eval_share,
    )
    final = [{**t, "split": assignment[t["id"]]} for t in final_src]
    train = [t for t in final if t["split"] == "train"]
    train_collisions = sum(1 for t in train if index.collisions_for_task(t, sketch=sketches[t["id"]]))

    # 5. audits
    removed.sort(key=lambda r: (REASONS.index(r["reason"]), r["id"]))
    audit = contamination.audit_report(
        index=index,
        checked=tasks,
        sketches=sketches,
        train_ids=[t["id"] for t in train],
        collisions=collisions,
        dropped=removed,
        train_collisions=train_collisions,
    )
    ov = overlap.split_overlap(final, key_tools, splits=list(sc.ratios))
    if len(index):
        ov["benchmark_vs_train"] = overlap.compare(
            overlap.benchmark_rows(index), overlap.rows_from_tasks(train, key_tools)
        )
    lock = envlock.build_env_lock(
        cfg,
        inventories,
        benchmarks=index.files,
        demo_dir=demo_dir,
        prompts_dir=prompts_dir,
        method=index.index.method(),
        simulator=simulator,
    )
    dataset_nn = _dataset_nn(final, sketches, sc.nn_max_pairs)

    # 6. publish
    split_rows = {s: [t for t in final if t["split"] == s] for s in sc.ratios}
    files = {
        f"{s}.jsonl": "".join(dumps(published_task(t)) + "\n" for t in rows).encode("utf-8")
        for s, rows in split_rows.items()
    }
    files[AUDIT_FILE] = dumps(audit, indent=1).encode("utf-8")
    files[LOCK_FILE] = dumps(lock, indent=1).encode("utf-8")
    extra = {"env_lock": lock["lock"], "tasks": len(final)}
    if stage_dir:
        manifest = publish.stage(store, stage_dir, files, extra=extra)
    else:
        manifest = publish.publish(store, FOLDER, files, extra=extra)
    paths = {name.rsplit(".", 1)[0]: store.path(f"{FOLDER}/{name}") for name in files}
    paths["manifest"] = store.path(f"{FOLDER}/{publish.MANIFEST}")

    splits_count = {s: len(rows) for s, rows in split_rows.items()}
    removal_counts = {r: sum(1 for x in removed if x["reason"] == r) for r in REASONS}
    summary = {k: v for k, v in audit.items() if k not in ("collision_pairs", "dropped")}
    value = {
        "tasks": final,
        "removed": removed,
        "splits": splits_count,
        "by_domain_pattern": assign_report["by_domain_pattern"],
        "contamination": summary,
        "overlap": ov,
        "env_lock": lock,
        "files": paths,
        "dedup": {
            "checked": len(clean),
            "removed": {r: removal_counts[r] for r in ("near_duplicate", "structural_duplicate")},
            "nn_similarity": minhash.percentiles(dataset_nn),
            "histogram": minhash.histogram(dataset_nn),
        },
        "assignment": {k: v for k, v in assign_report.items() if k != "by_domain_pattern"},
        "key_tools": sorted(key_tools),
        "manifest": manifest["files"],
        "run_id": run_id,
    }
    if stage_dir:
        value[RELEASE] = {"kind": RELEASE_KIND, "staged": stage_dir, "folder": FOLDER}
    meta = splits_metadata(value, n_in, audit, dataset_nn, sc.ratios)
    return value, meta


# --------------------------------------------------------------------------- metadata


def _nn_plot(bench: Sequence[float], dataset: Sequence[float], thresholds: tuple[float, float]) -> Any:
    def draw(ax: Any) -> None:
        bins = np.linspace(0, 1, 41)
        if len(dataset):
            ax.hist(dataset, bins=bins, alpha=0.6, label=f"dataset task → nearest other task (n={len(dataset)})")
        if len(bench):
            ax.hist(bench, bins=bins, alpha=0.6, label=f"benchmark row → nearest dataset task (n={len(bench)})")
        for t, style in zip(thresholds, ("--", ":"), strict=True):
            ax.axvline(t, color="#aa3377", linestyle=style, linewidth=1)
        ax.set_xlabel("nearest-neighbour Jaccard (exact, neighbour found by MinHash)")
        ax.set_ylabel("rows")
        if len(dataset) or len(bench):
            ax.legend(fontsize=7)

    return plot(draw, title="Nearest-neighbour similarity (thresholds dashed)")


def splits_metadata(
    value: dict[str, Any], n_in: int, audit: dict[str, Any], dataset_nn: Sequence[float], ratios: Mapping[str, float]
) -> dict[str, Any]:
    final = value["tasks"]
    removed = value["removed"]
    c = value["contamination"]
    nn = c["nn_similarity"]
    meta: dict[str, Any] = {
        "tasks_in": n_in,
        "tasks_out": len(final),
        "empty": not final,
        **{f"split_{s}": n for s, n in value["splits"].items()},
        **{f"removed_{r}": sum(1 for x in removed if x["reason"] == r) for r in REASONS},
        "benchmark_rows_checked": c["benchmark_tasks_checked"],
        "benchmark_collisions": c["collisions"],
        "train_benchmark_collisions": c["train_collisions"],
        "max_similarity": c["max_similarity"],
        "nn_similarity_p50": nn["p50"],
        "nn_similarity_p90": nn["p90"],
        "nn_similarity_p99": nn["p99"],
        "dataset_nn_similarity": value["dedup"]["nn_similarity"],
        "held_out_tasks": value["assignment"]["held_out_tasks"],
        "env_lock": value["env_lock"]["lock"],
        "audit_method": f"char {audit['method']['ngram']}-gram MinHash (num_perm={audit['method']['num_perm']}), "
        f"LSH {audit['method']['lsh']['bands']}×{audit['method']['lsh']['rows']}, exact Jaccard; "
        f"thresholds {audit['method']['near_duplicate_threshold']} / {audit['method']['structural_threshold']}",
    }
    domains = sorted({t["domain"] for t in final})
    meta["tasks_by_domain"] = {d: sum(1 for t in final if t["domain"] == d) for d in domains}
    meta["by_domain"] = Markdown(
        md_table(
            [
                {"domain": d, **{s: sum(1 for t in final if t["domain"] == d and t["split"] == s) for s in ratios}}
                for d in domains
            ],
            ["domain", *ratios],
            limit=50,
        )
    )
    meta["by_domain_pattern"] = Markdown(
        md_table(
            [
                {"domain": d, "pattern": p, **cell}
                for d, ps in value["by_domain_pattern"].items()
                for p, cell in ps.items()
            ],
            ["domain", "pattern", *ratios],
            limit=60,
        )
    )
    ov_rows = []
    for name, o in value["overlap"].items():
        ov_rows.append(
            {
                "comparison": name,
                "eval": o["eval_tasks"],
                "verbatim leaked": f"{o['verbatim_query_leakage']['leaked']}/{o['verbatim_query_leakage']['of']}",
                "tool universe": f"{o['tool_universe_overlap']['shared']}/{o['tool_universe_overlap']['of']}",
                "unseen platforms": f"{o['held_out_platforms']['unseen']}/{o['held_out_platforms']['of']}",
                "fn-pair J / unseen": f"{o['function_pair']['jaccard']} / {o['function_pair']['unseen']}",
                "adjacency J / unseen": f"{o['adjacency']['jaccard']} / {o['adjacency']['unseen']}",
            }
        )
    meta["appendix_h"] = Markdown(md_table(ov_rows, limit=10))
    meta["preview"] = Markdown(
        md_table(
            [{"split": t["split"], "domain": t["domain"], "pattern": t["pattern"], "query": t["query"]} for t in final],
            limit=12,
        )
    )
    meta["removed_preview"] = Markdown(
        md_table(
            [
                {
                    "reason": r["reason"],
                    "domain": r["domain"],
                    "similarity": r["similarity"],
                    "match": str(r["match"])[:24],
                    "query": r.get("query", ""),
                }
                for r in removed
            ],
            limit=12,
        )
    )
    bench_nn = _hist_values(nn.get("histogram"))
    meta["nn_similarity_plot"] = _nn_plot(
        bench_nn,
        list(dataset_nn),
        (audit["method"]["near_duplicate_threshold"], audit["method"]["structural_threshold"]),
    )
    return meta


def _hist_values(h: Mapping[str, list] | None) -> list[float]:
    """Bin centres repeated by count (for plotting the stored histogram)."""
    if not h:
        return []
    e = h["edges"]
    return [(e[i] + e[i + 1]) / 2 for i, c in enumerate(h["counts"]) for _ in range(c)]


# --------------------------------------------------------------------------- staged release


def release_folder(value: Mapping[str, Any]) -> str:
    """Where the value's files are: its staging folder until they are published, then FOLDER."""
    release = value.get(RELEASE)
    return str(release["staged"]) if isinstance(release, Mapping) and release.get("staged") else FOLDER


def publish_release(store: Store, value: dict[str, Any]) -> dict[str, Any]:
    """Move the staged split files into FOLDER (all or nothing, manifest last); the value as published."""
    release = value[RELEASE]
    publish.publish_staged(store, str(release["staged"]), str(release.get("folder") or FOLDER))
    return {k: v for k, v in value.items() if k != RELEASE}


register_release(RELEASE_KIND, publish_release)


# --------------------------------------------------------------------------- verification (asset checks)


def _published_splits(
    store: Store, ratios: Mapping[str, float], folder: str = FOLDER
) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for s in ratios:
        rel = f"{folder}/{s}.jsonl"
        out[s] = store.read_jsonl(rel) if store.exists(rel) else []
    return out


def splits_frame(value: Mapping[str, Any], cfg: ProjectConfig, store: Store | None = None) -> pd.DataFrame:
    """One row per task of the value, with independently recomputed properties for the GX suite."""
    sc = cfg.splits
    store = store or data_store(cfg)
    folder = release_folder(value)
    published = _published_splits(store, sc.ratios, folder)
    in_file = {(t["id"], s) for s, rows in published.items() for t in rows}
    problems = publish.verify(store, folder)
    audit = store.read_json(f"{folder}/{AUDIT_FILE}") if store.exists(f"{folder}/{AUDIT_FILE}") else {}
    method = audit.get("method") or {}
    thresholds_ok = (
        method.get("near_duplicate_threshold") == sc.near_duplicate_threshold
        and method.get("structural_threshold") == sc.structural_threshold
        and method.get("ngram") == sc.ngram
        and method.get("num_perm") == sc.num_perm
    )
    tasks = list(value.get("tasks") or [])
    key_tools = set(value.get("key_tools") or [])
    _, dups, _ = minhash.deduplicate(
        [minhash.DedupItem(t["id"], t["query"], structure.task_signature(t, key_tools) or None) for t in tasks], sc
    )
    dup_ids = {d["key"] for d in dups}
    held = set(sc.held_out_platforms)
    # an exact duplicate (the same id twice) is removed as a copy of itself; its kept twin is fine
    removed_ids = {r["id"] for r in value.get("removed") or [] if r["id"] != r["match"]}
    rows = [
        {
            "id": t["id"],
            "split": t.get("split"),
            "split_known": t.get("split") in sc.ratios,
            "in_split_file": (t["id"], t.get("split")) in in_file,
            "held_out_ok": not (assign.task_platforms(t) & held) or t.get("split") == "test",
            "kept_near_duplicate": t["id"] in dup_ids,
            "also_removed": t["id"] in removed_ids,
            "thresholds_ok": thresholds_ok,
            "files_consistent": not problems,
        }
        for t in tasks
    ]
    cols = [
        "id",
        "split",
        "split_known",
        "in_split_file",
        "held_out_ok",
        "kept_near_duplicate",
        "also_removed",
        "thresholds_ok",
        "files_consistent",
    ]
    df = pd.DataFrame(rows, columns=cols)
    # files with rows the value does not have (a stale or foreign release) show up as extra rows
    extra = [(tid, s) for (tid, s) in in_file if tid not in {t["id"] for t in tasks}]
    if extra:
        df = pd.concat(
            [
                df,
                pd.DataFrame(
                    [
                        {
                            "id": tid,
                            "split": s,
                            "split_known": s in sc.ratios,
                            "in_split_file": False,
                            "held_out_ok": True,
                            "kept_near_duplicate": False,
                            "also_removed": tid in removed_ids,
                            "thresholds_ok": thresholds_ok,
                            "files_consistent": False,
                        }
                        for tid, s in extra
                    ],
                    columns=cols,
                ),
            ],
            ignore_index=True,
        )
    return df


def check_train_contamination(
    cfg: ProjectConfig, value: Mapping[str, Any], store: Store | None = None
) -> dict[str, Any]:
    """The rule, recomputed from the published files: no train task collides with a benchmark row
    under the configured thresholds, and the audit file records those thresholds."""
    sc = cfg.splits
    store = store or data_store(cfg)
    folder = release_folder(value)
    train = _published_splits(store, sc.ratios, folder).get("train", [])
    index = contamination.BenchmarkIndex.load(
        sc.benchmarks, sc, key_tools=set(value.get("key_tools") or []), base_dir=cfg.project_dir
    )
    hits = []
    for t in train:
        for c in index.collisions_for_task(t):
            hits.append({"task_id": t["id"], **c.to_dict()})
    audit = store.read_json(f"{folder}/{AUDIT_FILE}") if store.exists(f"{folder}/{AUDIT_FILE}") else {}
    method = audit.get("method") or {}
    recorded = (method.get("near_duplicate_threshold"), method.get("structural_threshold"))
    thresholds_ok = recorded == (sc.near_duplicate_threshold, sc.structural_threshold)
    return {
        "passed": not hits and thresholds_ok and bool(audit),
        "train_tasks_checked": len(train),
        "benchmark_rows": len(index),
        "collisions": hits,
        "thresholds_recorded": list(recorded),
        "thresholds_configured": [sc.near_duplicate_threshold, sc.structural_threshold],
        "audit_found": bool(audit),
        "reasons": dict(Counter(r["reason"] for r in value.get("removed") or [])),
    }
