"""Lineage audits: where did an example come from?

    factory lineage <example id or unique prefix> [--json]
    factory lineage --summary [--json]

An example is looked up in the dataset (`dataset_splits`; an id may be given with or without
`sha256:`, or as a unique prefix); examples that were filtered out (judged_queries rejections,
split-audit removals, export drops) are found too and say why they are not in the dataset.

The chain of one example joins three sources:
- the task record itself (`Task.lineage`): run id, tool-surface fingerprints, edges with their
  posteriors at synthesis time, call digests, prompt template hashes, models, filter verdicts;
- the current asset values under `data_dir` (dataset_splits: split and audit removals;
  dataset_exports: dropped/flagged rows; connectivity_graph: each edge's status and trials now;
  tool_inventory: today's fingerprints);
- the Dagster instance at $DAGSTER_HOME: starting at the latest materialization of
  dataset_exports (or dataset_splits), every upstream materialization is followed through the
  `dagster/input_event_pointer/<asset>` tags that Dagster records on each materialization; an
  input that spans all domain partitions points at one partition's event, so for the example's
  domain the latest materialization of that partition *before* the downstream one is taken.
  Each step reports asset, partition, run, code_version and data_version; each run its job,
  status, start and end.

Errors (exit code 2): no dataset materialized, unknown id, ambiguous prefix (candidates listed).
"""

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

from factory.config import ProjectConfig, load_config
from factory.graph.edge import parse_edges
from factory.io import Store, StoreError, artifact_rel, data_store, read_artifact

# upstream-first order used to print the chain (assets not listed follow, by time)
CHAIN_ORDER = (
    "tool_inventory",
    "tool_probes",
    "tool_catalog",
    "skeleton_graph",
    "connectivity_graph",
    "knowledge_graph",
    "trajectories",
    "generated_queries",
    "judged_queries",
    "dataset_splits",
    "dataset_exports",
)
TOP_ASSETS = ("dataset_exports", "dataset_splits")
POINTER_TAG = "dagster/input_event_pointer/"


class LineageError(Exception):
    """A lineage question that cannot be answered; the message says why (exit code 2)."""


# --------------------------------------------------------------------------- the dataset on disk


def _value(store: Store, asset: str, partition: str | None = None) -> Any | None:
    return read_artifact(store, asset, partition, default=None)


class Dataset:
    """The materialized dataset values the audit reads (lazily, per domain)."""

    def __init__(self, cfg: ProjectConfig, store: Store | None = None):
        self.cfg = cfg
        self.store = store or data_store(cfg)
        splits = _value(self.store, "dataset_splits")
        if splits is None:
            raise LineageError(
                f"no dataset materialized yet: {self.store.path(artifact_rel('dataset_splits'))}.json does not exist "
                "(materialize dataset_splits, e.g. `factory run`, or the global_dataset job)"
            )
        self.splits: dict[str, Any] = splits
        self.exports = _value(self.store, "dataset_exports")
        self._cache: dict[tuple[str, str], Any] = {}

    def domain_value(self, asset: str, domain: str) -> Any | None:
        key = (asset, domain)
        if key not in self._cache:
            try:
                self._cache[key] = _value(self.store, asset, domain)
            except StoreError:
                self._cache[key] = None
        return self._cache[key]

    def candidates(self) -> dict[str, dict[str, Any]]:
        """id → {task, where, ...} for every example the audit knows (dataset first)."""
        out: dict[str, dict[str, Any]] = {}
        for t in self.splits.get("tasks") or []:
            out.setdefault(t["id"], {"task": t, "where": "dataset"})
        for d in sorted({t["domain"] for t in self.splits.get("tasks") or []} | set(self.cfg.domain_names)):
            judged = self.domain_value("judged_queries", d) or {}
            for t in judged.get("kept") or []:
                out.setdefault(t["id"], {"task": t, "where": "judged_kept"})
            for r in judged.get("rejected") or []:
                t = r.get("task") or {}
                if t.get("id"):
                    out.setdefault(t["id"], {"task": t, "where": "judged_rejected", "rejection": r})
        return out


def _norm(s: str) -> str:
    s = s.strip().lower()
    return s[7:] if s.startswith("sha256:") else s


def find_example(ds: Dataset, query: str) -> dict[str, Any]:
    q = _norm(query)
    if not q:
        raise LineageError("empty example id")
    cands = ds.candidates()
    exact = [i for i in cands if _norm(i) == q]
    hits = exact or [i for i in cands if _norm(i).startswith(q)]
    if not hits:
        raise LineageError(
            f"unknown example {query!r}: no task in dataset_splits or judged_queries has an id starting with it "
            f"({len(cands)} known ids)"
        )
    if len(hits) > 1:
        lines = [f"ambiguous prefix {query!r} matches {len(hits)} examples; give more characters:"]
        for i in sorted(hits)[:15]:
            t = cands[i]["task"]
            lines.append(f"  {i}  {t.get('domain')}  {cands[i]['where']}  {str(t.get('query', ''))[:60]}")
        if len(hits) > 15:
            lines.append(f"  … {len(hits) - 15} more")
        raise LineageError("\n".join(lines))
    return {"id": hits[0], **cands[hits[0]]}


# --------------------------------------------------------------------------- the Dagster instance


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else None


def _mat_row(rec: Any) -> dict[str, Any]:
    m = rec.asset_materialization
    tags = dict(m.tags or {})
    return {
        "asset": m.asset_key.to_user_string(),
        "partition": m.partition,
        "run_id": rec.run_id,
        "storage_id": rec.storage_id,
        "time": _iso(rec.timestamp),
        "code_version": tags.get("dagster/code_version"),
        "data_version": tags.get("dagster/data_version"),
        # an upstream that has never been materialized is tagged "NULL" (a non-input dependency such as
        # dataset_exports → conversations): no pointer, the chain reads it as not materialized
        "_pointers": {
            k[len(POINTER_TAG) :]: int(v) for k, v in tags.items() if k.startswith(POINTER_TAG) and str(v).isdigit()
        },
    }


def _fetch(instance: Any, asset: str, *, partition: str | None = None, storage_id: int | None = None,
           before: int | None = None) -> dict[str, Any] | None:  # fmt: skip
    import dagster as dg

    flt = dg.AssetRecordsFilter(
        asset_key=dg.AssetKey(asset.split("/")),
        asset_partitions=[partition] if partition else None,
        storage_ids=[storage_id] if storage_id is not None else None,
        before_storage_id=before,
    )
    recs = instance.fetch_materializations(flt, limit=1).records
    return _mat_row(recs[0]) if recs else None


def asset_chain(instance: Any, domain: str | None) -> list[dict[str, Any]]:
    """Materializations behind the latest dataset_exports (or dataset_splits), for one domain's partitions."""
    top = None
    for asset in TOP_ASSETS:
        top = _fetch(instance, asset)
        if top:
            break
    if top is None:
        return []
    seen: dict[tuple[str, str | None], dict[str, Any]] = {(top["asset"], top["partition"]): top}
    todo = [top]
    while todo:
        down = todo.pop()
        for up_key, sid in sorted(down["_pointers"].items()):
            ev = _fetch(instance, up_key, storage_id=sid)
            if ev is not None and ev["partition"] not in (None, domain):
                # an input spanning every domain: take this domain's latest event before the downstream one
                ev = _fetch(instance, up_key, partition=domain, before=down["storage_id"]) if domain else None
            if ev is None:
                continue
            k = (ev["asset"], ev["partition"])
            if k not in seen:
                seen[k] = ev
                todo.append(ev)
    rows = list(seen.values())
    rank = {a: i for i, a in enumerate(CHAIN_ORDER)}
    rows.sort(key=lambda r: (rank.get(r["asset"], len(rank)), r["storage_id"]))
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]


def run_info(instance: Any, run_id: str) -> dict[str, Any]:
    rec = instance.get_run_record_by_id(run_id)
    if rec is None:
        return {"run_id": run_id, "found": False}
    run = rec.dagster_run
    return {
        "run_id": run_id,
        "found": True,
        "job": run.job_name,
        "status": run.status.value,
        "start": _iso(rec.start_time),
        "end": _iso(rec.end_time),
        "partition": run.tags.get("dagster/partition"),
    }


def latest_versions(instance: Any, domains: Sequence[str]) -> list[dict[str, Any]]:
    """The latest materialization of every asset (per domain partition where partitioned)."""
    out = []
    for key in sorted(instance.get_asset_keys(), key=lambda k: k.to_user_string()):
        name = key.to_user_string()
        fetched = [_fetch(instance, name, partition=d) for d in domains]
        rows = [r for r in fetched if r and r["partition"]]
        if not rows:
            r = _fetch(instance, name)
            rows = [r] if r else []
        out += [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    rank = {a: i for i, a in enumerate(CHAIN_ORDER)}
    out.sort(key=lambda r: (rank.get(r["asset"], len(rank)), r["asset"], r["partition"] or ""))
    return out


# --------------------------------------------------------------------------- one example


def example_chain(ds: Dataset, found: Mapping[str, Any], instance: Any | None) -> dict[str, Any]:
    task = found["task"]
    lin = task.get("lineage") or {}
    d = task["domain"]
    tid = found["id"]
    split_task = next((t for t in ds.splits.get("tasks") or [] if t["id"] == tid), None)
    removed = [r for r in ds.splits.get("removed") or [] if tid in (r.get("id"), r.get("match"))]
    exports = ds.exports or {}
    graph = ds.domain_value("connectivity_graph", d) or {}
    by_edge = {e.edge_id: e for e in parse_edges(graph.get("edges") or [])}
    inv = ds.domain_value("tool_inventory", d) or {}
    edges = []
    for e in lin.get("edges") or []:
        now = by_edge.get(e.get("edge_id"))
        edges.append(
            {
                **e,
                "status_now": now.status if now else None,
                "trials_now": now.trials if now else None,
                "successes_now": now.successes if now else None,
                "posterior_mean_now": now.posterior_mean if now else None,
            }
        )
    surfaces_now = {d: inv.get("fingerprint"), **(inv.get("platform_fingerprints") or {})} if inv else {}
    status = found["where"]
    if status == "dataset":
        dropped = [x for x in exports.get("dropped") or [] if x.get("id") == tid]
        status = "dropped_from_export" if dropped else ("exported" if exports else "in_dataset_splits")
    out: dict[str, Any] = {
        "id": tid,
        "status": status,
        "domain": d,
        "language": task.get("language"),
        "pattern": task.get("pattern"),
        "query": task.get("query"),
        "answer": task.get("answer"),
        "split": (split_task or {}).get("split") or task.get("split"),
        "trajectory_id": lin.get("trajectory_id"),
        "synthesis_run_id": lin.get("run_id"),
        "surface": lin.get("surface") or {},
        "surface_now": surfaces_now,
        "edges": edges,
        "calls": [
            {
                k: a.get(k)
                for k in ("step", "platform", "tool", "args", "records", "total_count", "call_digest", "result_digest")
            }  # fmt: skip
            for a in task.get("golden_actions") or []
        ],
        "prompts": lin.get("prompts") or {},
        "models": lin.get("models") or {},
        "verdicts": lin.get("verdicts") or [],
        "rejection": found.get("rejection"),
        "audit_removals": removed,
        "export": {
            "version": exports.get("version"),
            "dropped": [x for x in exports.get("dropped") or [] if x.get("id") == tid],
            "flagged": [x for x in exports.get("flagged") or [] if x.get("id") == tid],
        },
        "assets": [],
        "runs": [],
        "instance": None,
        "notes": [],
    }
    from factory.retrieval.index import task_lineage  # issue 17: passages, index version, removal verdicts

    out["retrieval"] = task_lineage(
        task,
        ds.domain_value("retrieval_index", d),
        ds.domain_value("retrieval_corpus", d),
        ds.domain_value("retrieval_synthesis_index", d),
    )
    if instance is not None:
        out["instance"] = str(getattr(instance, "root_directory", "") or "")
        chain = asset_chain(instance, d)
        out["assets"] = chain
        run_ids = [r["run_id"] for r in chain]
        if lin.get("run_id"):
            run_ids.append(lin["run_id"])
        out["runs"] = [run_info(instance, r) for r in dict.fromkeys(run_ids)]
        latest = _fetch(instance, "dataset_splits")
        used = next((a for a in chain if a["asset"] == "dataset_splits"), None)
        if latest and used and latest["storage_id"] != used["storage_id"]:
            out["notes"].append(
                f"dataset_exports was built from an older dataset_splits (run {used['run_id']}); the split shown "
                f"comes from the latest one (run {latest['run_id']}): re-materialize dataset_exports"
            )
    return out


def _short(v: Any, n: int = 23) -> str:
    s = "" if v is None else str(v)
    return s if len(s) <= n else s[:n] + "…"


def render_chain(c: Mapping[str, Any]) -> str:
    L: list[str] = []
    L.append(f"example {c['id']}")
    L.append(f"  status   {c['status']}   split {c['split'] or '-'}   domain {c['domain']} ({c['language']})   "
             f"pattern {c['pattern']}")  # fmt: skip
    L.append(f"  query    {c['query']}")
    ans = c.get("answer") or {}
    L.append(f"  answer   {ans.get('text')!s}  [{ans.get('type')}]")
    for n in c.get("notes") or []:
        L.append(f"  NOTE     {n}")
    if c.get("rejection"):
        r = c["rejection"]
        L.append(f"  REJECTED at {r.get('stage')}: {r.get('reason')} {r.get('detail') or ''}".rstrip())
    L.append("")
    L.append("runs")
    if not c["runs"]:
        L.append(f"  synthesis run {c['synthesis_run_id']} (no Dagster instance consulted)")
    for r in c["runs"]:
        if not r.get("found"):
            L.append(f"  {r['run_id']}  (not in the instance at $DAGSTER_HOME)")
        else:
            L.append(f"  {r['run_id']}  job {r['job']}  {r['status']}  {r['start']} → {r['end']}"
                     + (f"  partition {r['partition']}" if r.get("partition") else ""))  # fmt: skip
    L.append("")
    L.append("asset versions (upstream first)")
    if not c["assets"]:
        L.append("  (no materializations of dataset_exports / dataset_splits in the Dagster instance)")
    for a in c["assets"]:
        L.append(f"  {a['asset']:<20} {a['partition'] or '(global)':<10} code {a['code_version'] or '-':<18} "
                 f"data {_short(a['data_version'], 16):<17} run {a['run_id'][:8]}  {a['time']}")  # fmt: skip
    L.append("")
    L.append("tool surfaces (at synthesis → now)")
    for k, v in sorted(c["surface"].items()):
        now = c["surface_now"].get(k)
        mark = "" if now is None or now == v else f"   now {_short(now)} (CHANGED)"
        L.append(f"  {k:<20} {_short(v)}{mark}")
    for k, v in sorted(c["surface_now"].items()):
        if k not in c["surface"]:
            L.append(f"  {k:<20} now {_short(v)}")
    L.append("")
    L.append(f"edges ({len(c['edges'])})")
    for e in c["edges"]:
        L.append(f"  {_short(e.get('edge_id'), 18)} {e.get('source')} → {e.get('target')}  α {e.get('alpha')} β "
                 f"{e.get('beta')} mean {e.get('posterior_mean')} trials {e.get('trials')}  | now "
                 f"{e.get('status_now') or '?'} trials {e.get('trials_now')}")  # fmt: skip
    L.append("")
    L.append(f"executed calls ({len(c['calls'])})")
    for a in c["calls"]:
        args = json.dumps(a.get("args") or {}, ensure_ascii=False, sort_keys=True)
        L.append(f"  step {a['step']}  {a['platform']}.{a['tool']} {_short(args, 80)}  records {a.get('records')}"
                 f"/{a.get('total_count')}")  # fmt: skip
        L.append(f"          call {_short(a.get('call_digest'))}  result {_short(a.get('result_digest'))}")
    L.append("")
    L.append("prompts")
    for k, v in sorted(c["prompts"].items()):
        L.append(f"  {k:<32} {v}")
    L.append("models")
    for role, m in sorted(c["models"].items()):
        if isinstance(m, Mapping):
            L.append(f"  {role:<20} {m.get('backend')} / {m.get('model')} ({m.get('implementation')})")
        else:
            L.append(f"  {role:<20} {m}")
    L.append("")
    L.append(f"filter verdicts ({len(c['verdicts'])})")
    for v in c["verdicts"]:
        ok = "pass" if v.get("passed") else "FAIL"
        L.append(f"  [{v.get('stage')}] {v.get('check')}: {ok}" + (f" {v.get('reason')}" if v.get("reason") else "")
                 + f"  judge {v.get('judge')}  action {v.get('action')}"
                 + (f"  — {_short(v.get('detail'), 100)}" if v.get("detail") else ""))  # fmt: skip
    L.append("")
    if c.get("retrieval"):
        from factory.retrieval.index import render_task_lineage

        L.extend(render_task_lineage(c["retrieval"]))
        L.append("")
    L.append("split audit")
    L.append(f"  split {c['split'] or '-'}")
    for r in c["audit_removals"]:
        role = "removed" if r.get("id") == c["id"] else "caused removal of " + str(r.get("id"))[:23]
        L.append(f"  {role}: {r.get('reason')} (match {_short(r.get('match'))}, similarity {r.get('similarity')})")
    ex = c["export"]
    L.append(f"export {ex.get('version') or '(not materialized)'}")
    for x in ex.get("dropped") or []:
        L.append(f"  DROPPED {x.get('reason')}: {x.get('detail')}")
    for x in ex.get("flagged") or []:
        L.append(f"  flagged {x.get('reason')}: {x.get('detail')}")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------- the whole dataset


def dataset_summary(ds: Dataset, instance: Any | None) -> dict[str, Any]:
    tasks = list(ds.splits.get("tasks") or [])
    per = Counter((t.get("split"), t["domain"]) for t in tasks)
    pats = Counter((t.get("split"), t["pattern"]) for t in tasks)
    models: Counter[str] = Counter()
    prompts: dict[str, set[str]] = {}
    verdicts: Counter[str] = Counter()
    runs: Counter[str] = Counter()
    for t in tasks:
        lin = t.get("lineage") or {}
        if lin.get("run_id"):
            runs[lin["run_id"]] += 1
        for role, m in (lin.get("models") or {}).items():
            label = f"{role}: {m.get('backend')}/{m.get('model')}" if isinstance(m, Mapping) else f"{role}: {m}"
            models[label] += 1
        for name, h in (lin.get("prompts") or {}).items():
            prompts.setdefault(name, set()).add(h)
        for v in lin.get("verdicts") or []:
            if str(v.get("judge", "")).startswith("model:"):
                models[f"{v.get('check')} judge: {v['judge'][6:]}"] += 1
            verdicts[
                f"{v.get('stage')}/{v.get('check')}: " + ("pass" if v.get("passed") else str(v.get("reason")))
            ] += 1
    rejected: Counter[str] = Counter()
    for d in sorted({t["domain"] for t in tasks} | set(ds.cfg.domain_names)):
        for r in (ds.domain_value("judged_queries", d) or {}).get("rejected") or []:
            rejected[f"{d}: {r.get('stage')}/{r.get('reason')}"] += 1
    lock = ds.splits.get("env_lock") or {}
    out: dict[str, Any] = {
        "tasks": len(tasks),
        "splits": dict(Counter(t.get("split") for t in tasks)),
        "by_split_domain": [{"split": s, "domain": d, "tasks": n} for (s, d), n in sorted(per.items())],
        "by_split_pattern": [{"split": s, "pattern": p, "tasks": n} for (s, p), n in sorted(pats.items())],
        "synthesis_runs": dict(runs),
        "models": dict(models),
        "prompts": {k: sorted(v) for k, v in sorted(prompts.items())},
        "verdicts": dict(sorted(verdicts.items())),
        "rejected": dict(sorted(rejected.items())),
        "removed": dict(Counter(r.get("reason") for r in ds.splits.get("removed") or [])),
        "export": {k: (ds.exports or {}).get(k) for k in ("version", "root", "tasks", "splits")}
        | {"dropped": len((ds.exports or {}).get("dropped") or [])},
        "env_lock": {
            "lock": lock.get("lock"),
            "demo_service": (lock.get("demo_service") or {}).get("sha256"),
            "prompts": (lock.get("prompts") or {}).get("sha256"),
            "config": (lock.get("config") or {}).get("digest"),
            "tool_surfaces": {d: v.get("surface") for d, v in (lock.get("tool_surfaces") or {}).items()},
        },
        "assets": [],
        "runs": [],
    }
    if instance is not None:
        domains = sorted({t["domain"] for t in tasks}) or list(ds.cfg.domain_names)
        out["assets"] = latest_versions(instance, domains)
        ids = list(dict.fromkeys([*(a["run_id"] for a in out["assets"]), *runs]))
        out["runs"] = [run_info(instance, r) for r in ids]
    return out


def render_summary(s: Mapping[str, Any]) -> str:
    L = [f"dataset: {s['tasks']} tasks  splits {s['splits']}"]
    ex = s["export"]
    L.append(f"export {ex.get('version') or '(not materialized)'}  {ex.get('root') or ''}  dropped {ex['dropped']}")
    L.append("")
    L.append("tasks per split / domain")
    for r in s["by_split_domain"]:
        L.append(f"  {r['split']:<8} {r['domain']:<12} {r['tasks']}")
    L.append("tasks per split / pattern")
    for r in s["by_split_pattern"]:
        L.append(f"  {r['split']:<8} {r['pattern']:<20} {r['tasks']}")
    L.append("")
    L.append(f"runs ({len(s['runs']) or len(s['synthesis_runs'])})")
    for r in s["runs"]:
        if r.get("found"):
            L.append(f"  {r['run_id']}  job {r['job']}  {r['status']}  {r['start']} → {r['end']}"
                     + (f"  partition {r['partition']}" if r.get("partition") else ""))  # fmt: skip
        else:
            L.append(f"  {r['run_id']}  (not in the instance)")
    if not s["runs"]:
        for r, n in s["synthesis_runs"].items():
            L.append(f"  {r}  {n} tasks")
    L.append("")
    L.append("models")
    for k, n in sorted(s["models"].items()):
        L.append(f"  {k:<48} {n} tasks")
    L.append("prompt hashes")
    for k, hs in s["prompts"].items():
        L.append(f"  {k:<32} {', '.join(_short(h, 23) for h in hs)}")
    L.append("")
    L.append("filter verdicts on dataset tasks")
    for k, n in s["verdicts"].items():
        L.append(f"  {k:<56} {n}")
    L.append("rejected by judged_queries")
    for k, n in s["rejected"].items():
        L.append(f"  {k:<56} {n}")
    if not s["rejected"]:
        L.append("  (none)")
    L.append(f"removed by the split audits: {s['removed'] or 'none'}")
    L.append("")
    L.append("asset versions (latest)")
    for a in s["assets"]:
        L.append(f"  {a['asset']:<20} {a['partition'] or '(global)':<10} code {a['code_version'] or '-':<18} "
                 f"data {_short(a['data_version'], 16):<17} run {a['run_id'][:8]}  {a['time']}")  # fmt: skip
    if not s["assets"]:
        L.append("  (no Dagster instance consulted)")
    L.append("")
    lock = s["env_lock"]
    L.append(f"env lock {lock.get('lock')}")
    for k in ("demo_service", "prompts", "config"):
        L.append(f"  {k:<14} {lock.get(k)}")
    for d, h in sorted((lock.get("tool_surfaces") or {}).items()):
        L.append(f"  surface {d:<6} {h}")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------- command line


def _instance(cfg: ProjectConfig):
    import dagster as dg

    from factory.instance import ensure_dagster_home

    ensure_dagster_home(cfg.dagster_home)
    return dg.DagsterInstance.get()


def run_lineage(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        if not args.summary and not args.example:
            raise LineageError("give an example id (or a unique prefix), or --summary")
        cfg = load_config(args.config)
        ds = Dataset(cfg)
        instance = None if args.no_instance else _instance(cfg)
        try:
            if args.summary:
                s = dataset_summary(ds, instance)
                out.write(json.dumps(s, ensure_ascii=False, indent=1, default=str) + "\n" if args.json
                          else render_summary(s))  # fmt: skip
            else:
                c = example_chain(ds, find_example(ds, args.example), instance)
                out.write(json.dumps(c, ensure_ascii=False, indent=1, default=str) + "\n" if args.json
                          else render_chain(c))  # fmt: skip
        finally:
            if instance is not None:
                instance.dispose()
    except LineageError as e:
        err.write(f"error: {e}\n")
        return 2
    except StoreError as e:
        err.write(f"error: {e}\n")
        return 2
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `lineage` subcommand."""
    p = sub.add_parser(
        "lineage",
        help="print where an example came from (runs, asset versions, edges, calls, prompts, models, verdicts)",
        description="`factory lineage <id>` prints one example's full chain; `factory lineage --summary` "
        "summarizes the whole dataset. Reads the data dir of the project config and the Dagster instance "
        "at $DAGSTER_HOME (default: the project's .dagster_home).",
    )
    p.add_argument("example", nargs="?", help="example id (sha256:… or the hex digits) or a unique prefix")
    p.add_argument("--summary", action="store_true", help="summarize the whole dataset instead of one example")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--no-instance", action="store_true", help="do not read the Dagster instance (task records and data only)"
    )
    p.set_defaults(func=run_lineage)
