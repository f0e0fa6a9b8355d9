"""The dataset card (README.md at the root of an export): YAML header for the Hugging Face Hub
(configs with their split files), sources and licences, statistics, the audit summary from
dataset_splits, and how tool results were obtained."""

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from factory.config import ProjectConfig

SPLIT_ORDER = ("train", "dev", "validation", "test")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A complete markdown table (pipes escaped; no row limit, unlike the metadata previews)."""
    if not rows:
        return "_(none)_"

    def cell(v: Any) -> str:
        return ("" if v is None else str(v)).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def split_order(splits: Sequence[str]) -> list[str]:
    return sorted(set(splits), key=lambda s: (SPLIT_ORDER.index(s) if s in SPLIT_ORDER else len(SPLIT_ORDER), s))


def _data_text(prov: Mapping[str, Any], fallback: str) -> str:
    data = [d for d in prov.get("data") or [] if isinstance(d, Mapping)]
    if not data:
        return fallback
    return "; ".join(
        " ".join(x for x in (str(d.get("package") or ""), str(d.get("version") or "")) if x)
        + (f" ({d['data']})" if d.get("data") else "")
        for d in data
    ).strip()


def sources_rows(
    cfg: ProjectConfig, platforms: set[str], domains: set[str], provenance: Mapping[str, Mapping[str, Any]]
) -> list[list[str]]:
    """domain, platform, kind, data, licence, where the licence was read (`factory.tools.provenance`)."""
    rows = []
    for d in cfg.domains:
        for src in d.sources:
            if src.platform not in platforms and not (src.platform is None and d.name in domains):
                continue
            prov = provenance.get(src.platform or "") or {}
            fallback = src.spec or src.url or " ".join(src.command or []) or "?"
            lic = str(prov.get("license") or "unknown")
            if prov.get("license_url"):
                lic += f" ({prov['license_url']})"
            rows.append([d.name, src.platform or "?", src.kind, _data_text(prov, fallback), lic,
                         str(prov.get("from") or "not recorded (re-run tool_inventory)")])  # fmt: skip
    return rows


# licence ids the Hugging Face Hub knows (lowercase); anything else is `other`
HF_LICENSES = frozenset(
    "apache-2.0 mit cc0-1.0 cc-by-4.0 cc-by-sa-4.0 cc-by-nc-4.0 cc-by-nc-sa-4.0 cc-by-3.0 cc-by-sa-3.0 "
    "odc-by odbl pddl bsd-2-clause bsd-3-clause gpl-3.0 lgpl-3.0 agpl-3.0 mpl-2.0 unlicense openrail".split()
)


def header_license(provenance: Mapping[str, Mapping[str, Any]], platforms: set[str]) -> str | list[str]:
    """The card header's licence tag(s) from the sources of the exported tasks: their SPDX ids the Hub knows,
    `other` for terms without one, `unknown` where a source states none."""
    tags = set()
    for p in platforms:
        prov = provenance.get(p) or {}
        ident = str(prov.get("license_id") or "").lower()
        if ident in HF_LICENSES:
            tags.add(ident)
        elif not prov or str(prov.get("license") or "unknown") == "unknown":
            tags.add("unknown")
        else:
            tags.add("other")
    if not tags:
        return "unknown"
    return sorted(tags)[0] if len(tags) == 1 else sorted(tags)


def _size_category(n: int) -> str:
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < bound:
            return label
    return "n>1M"


def _flat(d: Mapping[str, Any], prefix: str = "", depth: int = 0, max_depth: int = 3) -> list[list[str]]:
    """Scalar leaves of a nested dict as [key, value] rows; lists and deep or wide dicts summarized."""
    rows = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            if depth + 1 >= max_depth or len(v) > 12:
                rows.append([key, f"{len(v)} entries"])
            else:
                rows.extend(_flat(v, key + ".", depth + 1, max_depth))
        elif isinstance(v, list):
            rows.append([key, f"{len(v)} item(s)"])
        else:
            rows.append([key, str(v)])
    return rows


def _get(d: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(d, Mapping) or part not in d:
            return None
        d = d[part]
    return d


CONTAMINATION_KEYS = (
    "collisions", "colliding_tasks", "benchmark_tasks_checked", "dataset_tasks_checked", "max_similarity",
    "max_similarity_train", "nn_similarity.p50", "nn_similarity.p90", "nn_similarity.p99", "method.ngram",
    "method.num_perm", "method.near_duplicate_threshold", "method.structural_threshold",
)  # fmt: skip
BENCHMARK_ONLY_KEYS = (
    "collisions", "colliding_tasks", "max_similarity", "max_similarity_train", "nn_similarity.p50",
    "nn_similarity.p90", "nn_similarity.p99",
)  # fmt: skip
NO_BENCHMARK = "no benchmark given (splits.benchmarks is empty): contamination with public benchmarks was not screened"
OVERLAP_COLUMNS = (
    ("eval tasks", "eval_tasks"),
    ("verbatim query leakage", "verbatim_query_leakage.rate"),
    ("tool-universe overlap", "tool_universe_overlap.rate"),
    ("edge (adjacency) Jaccard", "adjacency.jaccard"),
    ("function-pair Jaccard", "function_pair.jaccard"),
    ("tasks with only unseen functions", "tasks_only_unseen_functions.rate"),
)
LOCK_KEYS = ("lock", "config.digest", "demo_service.sha256", "prompts.sha256")


def _audit_tables(splits_value: Mapping[str, Any]) -> list[str]:
    """The audit summary of dataset_splits: contamination figures, overlap per comparison, env lock hashes."""
    out: list[str] = []
    c = splits_value.get("contamination")
    if isinstance(c, Mapping) and c:
        screened = bool(_get(c, "benchmark_tasks_checked"))
        keys = CONTAMINATION_KEYS if screened else [k for k in CONTAMINATION_KEYS if k not in BENCHMARK_ONLY_KEYS]
        rows = [[k, _get(c, k)] for k in keys if _get(c, k) is not None]
        if not screened:
            rows.insert(0, ["benchmark", NO_BENCHMARK])
        out += ["### Contamination (MinHash, both ways)", "", md_table(["", "value"], rows or _flat(c)[:20]), ""]
    ov = splits_value.get("overlap")
    if isinstance(ov, Mapping) and ov:
        rows = [
            [name, *(_get(o, path) for _, path in OVERLAP_COLUMNS)]
            for name, o in sorted(ov.items())
            if isinstance(o, Mapping)
        ]
        if any(v is not None for r in rows for v in r[1:]):
            out += [
                "### Overlap with train (EDGE App. H)",
                "",
                md_table(["", *(h for h, _ in OVERLAP_COLUMNS)], rows),
                "",
            ]
        else:
            out += ["### Overlap", "", md_table(["", "value"], _flat(ov)[:20]), ""]
    lock = splits_value.get("env_lock") or {}
    if isinstance(lock, Mapping) and lock:
        rows = [[k, _get(lock, k)] for k in LOCK_KEYS if _get(lock, k) is not None]
        for d, v in sorted((lock.get("tool_surfaces") or {}).items()):
            rows.append([f"tool surface {d}", v.get("surface") if isinstance(v, Mapping) else v])
        for path, h in sorted((lock.get("benchmarks") or {}).items()):
            rows.append([f"benchmark {path}", h])
        out += [
            "### Environment lock",
            "",
            "Hashes of the tool surfaces, demo implementation, prompts and configuration the tasks were made "
            "against (`env_lock.json` of dataset_splits); compare them before comparing scores.",
            "",
            md_table(["", "hash"], rows or _flat(lock)[:20]),
            "",
        ]
    return out


def _share(n: int, of: int) -> str:
    return f"{n} ({100 * n / of:.0f}%)" if of else str(n)


def _reason_rows(stage: str, reasons: Counter, total: int, top: int = 6) -> list[list[Any]]:
    return [[stage, r, _share(n, total)] for r, n in reasons.most_common(top) if n]


def limitations(
    *,
    cfg: ProjectConfig,
    tasks: Sequence[Mapping[str, Any]],
    dropped: Sequence[Mapping[str, Any]],
    splits_value: Mapping[str, Any],
    trajectories: Mapping[str, Mapping[str, Any]] | None,
    judged: Mapping[str, Mapping[str, Any]] | None,
    queries: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """The card's Limitations section, from this run: patterns under their quota, what was rejected at each
    stage (shares by reason), and what the checks did and did not cover."""
    syn = cfg.synthesis
    out = ["## Limitations", ""]
    trajs = {d: v for d, v in (trajectories or {}).items() if isinstance(v, Mapping) and "trajectories" in v}
    exported = Counter((t["domain"], t["category"]) for t in tasks)
    under = []
    for d, v in sorted(trajs.items()):
        kept = Counter(t.get("category") for t in v["trajectories"])
        for c in syn.patterns:
            if kept[c] < syn.per_pattern:
                under.append([d, c, syn.per_pattern, kept[c], exported[(d, c)]])
    if under:
        out += [
            f"Patterns under their quota ({syn.per_pattern} trajectories per pattern per domain, "
            "`synthesis.per_pattern`): the tools of a domain admit some patterns rarely or not at all, so the "
            "pattern mix is not uniform. Raise `synthesis.attempts` (or add tools) where the quota is missed.",
            "",
            md_table(["domain", "pattern", "quota", "trajectories kept", "tasks exported"], under),
            "",
        ]
    elif trajs:
        out += [f"Every pattern met its quota of {syn.per_pattern} trajectories per domain.", ""]
    else:
        out += ["Trajectory statistics were not available to this export: pattern quotas are not reported.", ""]

    rows: list[list[Any]] = []
    attempted = sum(len(v["trajectories"]) + len(v.get("rejected") or []) for v in trajs.values())
    traj_reasons = Counter(r.get("reason", "?") for v in trajs.values() for r in v.get("rejected") or [])
    rows += _reason_rows("trajectories (of attempts)", traj_reasons, attempted)
    qs = {d: v for d, v in (queries or {}).items() if isinstance(v, Mapping)}
    written = sum(len(v.get("tasks") or []) + len(v.get("rejected") or []) for v in qs.values())
    query_reasons = Counter(r.get("reason", "?") for v in qs.values() for r in v.get("rejected") or [])
    rows += _reason_rows("generated_queries (of trajectories)", query_reasons, written)
    js = {d: v for d, v in (judged or {}).items() if isinstance(v, Mapping)}
    judged_in = sum(len(v.get("kept") or []) + len(v.get("rejected") or []) for v in js.values())
    judge_reasons = Counter(r.get("reason", "?") for v in js.values() for r in v.get("rejected") or [])
    rows += _reason_rows("judged_queries (of candidates)", judge_reasons, judged_in)
    removed = Counter(r.get("reason", "?") for r in splits_value.get("removed") or [])
    rows += _reason_rows("dataset_splits (of tasks in)", removed, len(tasks) + sum(removed.values()))
    rows += _reason_rows("export (of tasks in)", Counter(d["reason"] for d in dropped), len(tasks) + len(dropped))
    if rows:
        out += [
            "Rejected candidates by stage and reason (share of what entered the stage; the most frequent reasons):",
            "",
            md_table(["stage", "reason", "rejected"], rows),
            "",
        ]
    degeneracy = [v.get("degeneracy") or {} for v in trajs.values()]
    unchecked = sum(int(x.get("unchecked") or 0) for x in degeneracy)
    contamination = splits_value.get("contamination") or {}
    bench = int(contamination.get("benchmark_tasks_checked") or 0) if isinstance(contamination, Mapping) else 0
    replay = cfg.exports.tool_results == "replay"
    out += [
        "What was checked:",
        "",
        "- every tool call was executed against the live tools, and every dependency between tools was confirmed "
        "by execution;",
        "- degeneracy (the answer varies over other seeds) and minimal golden paths, before any query was written"
        + (
            f"; {unchecked} trajector{'y was' if unchecked == 1 else 'ies were'} kept unchecked because the "
            "degeneracy call budget (`synthesis.degeneracy_call_budget`) was spent"
            if unchecked
            else ""
        )
        + ";",
        "- the filter cascade of `judged_queries` (rules, judges, re-solving) on every task;",
        "- near and structural duplicates within the dataset (MinHash, exact Jaccard);",
        (
            "- every exported tool result was re-executed and its digest compared with the one stored at synthesis;"
            if replay
            else "- tool results are the samples stored at synthesis (not re-executed; digests not re-checked);"
        ),
        (f"- contamination with {bench} benchmark row(s) from `splits.benchmarks`." if bench else f"- {NO_BENCHMARK}."),
        "",
        "Not checked:",
        "",
        "- the answers against an independent implementation of the tools (`factory audit` does this for the demo "
        "world; it is not part of the export);",
        "- the naturalness of the queries by people (templated or model-written queries pass automatic grounding and "
        "fluency checks only);",
        "- tools beyond what they returned: tasks reading more than "
        f"`synthesis.max_scan_records` ({syn.max_scan_records}) records from one call were rejected, so very "
        "large listings are underrepresented, and the results are a snapshot of the tools at the environment "
        "lock below.",
        "",
    ]
    return out


def render_card(
    *,
    cfg: ProjectConfig,
    files: Mapping[str, Mapping[str, Mapping[str, Any]]],
    tasks: Sequence[Mapping[str, Any]],
    dropped: Sequence[Mapping[str, Any]],
    splits_value: Mapping[str, Any],
    replay_summary: Mapping[str, Any],
    provenance: Mapping[str, Mapping[str, Any]] | None = None,
    trajectories: Mapping[str, Mapping[str, Any]] | None = None,
    judged: Mapping[str, Mapping[str, Any]] | None = None,
    queries: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    ex = cfg.exports
    provenance = provenance or {}
    platforms = {p for t in tasks for p in t["platforms"]} | {a["platform"] for t in tasks for a in t["golden_actions"]}
    splits = split_order([t["split"] for t in tasks] or list(files.get("hf_parquet", {})))
    header: dict[str, Any] = {
        "pretty_name": ex.dataset_name,
        "license": ex.license or header_license(provenance, platforms),
        "language": sorted({t["language"] for t in tasks}) or sorted({d.language for d in cfg.domains}),
        "task_categories": ["text-generation"],
        "tags": ["tool-calling", "function-calling", "agents", "synthetic", "execution-verified"],
        "size_categories": [_size_category(len(tasks))],
        "configs": [],
    }
    for fmt, name in (("hf_parquet", "default"), ("rl_parquet", "rl")):
        if fmt in files:
            header["configs"].append(
                {
                    "config_name": name,
                    "data_files": [{"split": s, "path": files[fmt][s]["path"]} for s in split_order(list(files[fmt]))],
                }
            )
    out = ["---", yaml.safe_dump(header, allow_unicode=True, sort_keys=False).strip(), "---", ""]
    out += [
        f"# {ex.dataset_name}",
        "",
        "Multi-step tool-calling tasks made by executing live tools: every call in every example was "
        "really executed, every dependency between tools was confirmed by execution, and every example "
        "passed the factory's quality gates and its filter cascade. Each row carries its golden actions "
        "(with call and result digests), the answer and how it is graded, and its lineage "
        "(`factory lineage <id>` prints the full chain).",
        "",
        "## Files",
        "",
        md_table(
            ["format", "split", "path", "rows", "sha256"],
            [
                [fmt, s, f"`{e['path']}`", e["rows"], f"`{e['sha256'][:16]}…`"]
                for fmt in files
                for s, e in ((s, files[fmt][s]) for s in split_order(list(files[fmt])))
            ],
        ),
        "",
        "- `openai_chat/<split>.jsonl`: OpenAI chat fine-tuning rows (`messages`, `tools`, "
        "`parallel_tool_calls`; plus `id` and `metadata`, to strip before uploading to a service that "
        "rejects unknown keys). Calls of one step share one assistant message.",
        "- `hf_parquet/<split>.parquet` (config `default`): one row per task; `messages` as structs, "
        "`tools`, `answer_value`, `alternative_paths`, `expected_state_hash`, `system_state` and `lineage` as "
        "JSON strings.",
        "- `rl/<split>.jsonl` and `rl/<split>.parquet` (config `rl`): GRPO prompts (`prompt` = system + "
        "user), `tools`, `ground_truth` (answer, answer type, golden actions (the minimal path, every call "
        "needed), the other sufficient paths, max_allowed_calls, expected_state_hash, reward_basis), and "
        "verl's `data_source` / `reward_model` / `extra_info`.",
        "- `benchmark/<split>.json`: the task records themselves, with the environment lock.",
        "- `openai_strict/<split>.jsonl`: the chat rows with only `messages` and `tools` (what fine-tuning "
        "uploads accept), arguments typed by each tool's schema, every row validated before publishing; ids "
        "and metadata in `openai_strict/<split>.meta.jsonl`, keyed by line number.",
        "- `rl/verl_tools.yaml`: verl's tool config for the tools the tasks use (`factory.rewards`: TRL reward "
        "functions, verl `compute_score` and a tool environment over the live services; README, Training on "
        "an export).",
        "- `conversations/…/<split>.*` (when the `conversations` asset ran): multi-turn, single, parallel and "
        "no-call tasks with a user simulator, as chat JSONL, Parquet, benchmark JSON (kotraj fields) and RL rows.",
        "- `variants/<split>.jsonl` and `variants/catalog.json` (when `schema_variants` ran): every task under "
        "each verified-equivalent tool schema, by `variant_id`, with the golden variant trace; the catalog "
        "holds each variant's tools once.",
        "- `recordings/<platform>.jsonl` (when a source has `responses: record`): the recorded answers the tasks' "
        "calls got, the environment the tasks were made in (no API key in them); "
        "`factory.export.recordings.install` writes them into a project's data folder so that the same calls "
        "get the same answers.",
        "",
        "```python",
        "import datasets",
        f'ds = datasets.load_dataset("parquet", data_files={{"{splits[0] if splits else "train"}": '
        f'"hf_parquet/{splits[0] if splits else "train"}.parquet"}})',
        "```",
        "",
        "## Statistics",
        "",
    ]
    by_sd = Counter((t["split"], t["domain"]) for t in tasks)
    domains = sorted({t["domain"] for t in tasks})
    out += [
        md_table(
            ["split", *domains, "total"],
            [[s, *(by_sd[(s, d)] for d in domains), sum(by_sd[(s, d)] for d in domains)] for s in splits],
        ),
        "",
    ]
    cats = sorted({t["category"] for t in tasks})
    by_sc = Counter((t["split"], t["category"]) for t in tasks)
    out += [md_table(["split", *cats], [[s, *(by_sc[(s, c)] for c in cats)] for s in splits]), ""]
    pats = Counter((t["domain"], t["pattern"]) for t in tasks)
    out += [
        md_table(["domain", "pattern", "tasks"], [[d, p, n] for (d, p), n in sorted(pats.items())]),
        "",
    ]
    calls = [len(t["golden_actions"]) for t in tasks]
    if calls:
        out += [f"Tool calls per task: mean {sum(calls) / len(calls):.1f}, max {max(calls)}.", ""]
    out += [
        "## Sources and licences",
        "",
        "Licences as the sources state them: an OpenAPI document's `info.license` (the bundled demo service "
        "publishes its data packages, versions and licences there), a source's `license` in the project config, "
        "else `unknown` (MCP servers publish none). The tasks' text and tool results derive from this data.",
        "",
        md_table(
            ["domain", "platform", "kind", "data", "licence", "stated by"],
            sources_rows(cfg, platforms, set(domains), provenance),
        ),
        "",
    ]
    out += [
        "## Tool results",
        "",
        (
            "Tool messages hold results obtained by re-executing each task's golden actions once against the "
            "live tools (a fresh session per task); every call's `sha256([records, total_count])` was checked "
            "against the digest stored at synthesis time."
            if ex.tool_results == "replay"
            else "Tool messages hold the first records stored with each trajectory (marked as truncated); "
            "digests were not re-checked."
        ),
        f"A tool message shows at most {ex.max_result_records} records and {ex.max_result_chars} characters; "
        f"strings longer than {ex.max_string_chars} characters are cut (`…[cut]`). Records a later call's "
        "argument or the answer is read from are always shown, whatever the caps (`kept` counts those beyond "
        'them). What was left out is stated in a `"truncated": {"shown", "omitted", "reason"}` marker. API keys '
        "appear only as `<KEY>`.",
        "",
        md_table(["", "value"], [[k, v] for k, v in replay_summary.items()]),
        "",
    ]
    if dropped:
        reasons = Counter(d["reason"] for d in dropped)
        out += ["Rows left out of this export:", "", md_table(["reason", "rows"], sorted(reasons.items())), ""]
    out += limitations(
        cfg=cfg,
        tasks=tasks,
        dropped=dropped,
        splits_value=splits_value,
        trajectories=trajectories,
        judged=judged,
        queries=queries,
    )
    out += ["## Audit (dataset_splits)", ""]
    removed = splits_value.get("removed") or []
    if removed:
        out += [
            md_table(["removed because", "tasks"], sorted(Counter(r.get("reason", "?") for r in removed).items())),
            "",
        ]
    else:
        out += ["No task was removed by the split audits.", ""]
    out += _audit_tables(splits_value)
    return "\n".join(out).rstrip() + "\n"
