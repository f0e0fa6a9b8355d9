"""dataset_exports core: dataset_splits' tasks → the four formats, verified, published all-or-nothing.

    manifest, meta = build_exports(splits_value, inventories, trajectories, cfg, make_executor=...)

Steps: validate every task (`Task`), resolve its tools, obtain its tool results (replay with digest
verification, or the recorded samples; see `factory.export.results`), build the rows of every
configured format per split, write them with the card into a staging folder, read every file back
and validate every row (`verify_export`), scan every byte for keys, publish
(`factory.export.publish`) — at once, or (the asset, `stage_only`) after its blocking check passed
(`publish_release`). Rows whose results could not be verified are left out and listed in
`dropped` (or kept and listed in `flagged`, per `exports.on_digest_mismatch`).

The manifest (the asset value): `{"version", "root", "openai_chat": {split: {path, rows, sha256}},
"hf_parquet": {...}, "rl": {...}, "rl_parquet": {...}, "benchmark": {...}, "card": path,
"dropped": [{"id", "domain", "split", "reason", "detail"}], "flagged": [...], "tasks": n,
"replay": {...}, "recordings": {platform: {path, rows, sha256}} (a `responses: record` source's answers the
tasks' calls got, `factory.export.recordings`)}`; paths are full store paths.
"""

import io
import json
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from factory.config import ProjectConfig
from factory.export import conversations as conversation_exports
from factory.export import formats, strict
from factory.export import recordings as recording_exports
from factory.export import variants as variant_exports
from factory.export.card import render_card, split_order
from factory.export.publish import EXPORTS_DIR, ExportError, Staging, cleanup, sha256_bytes
from factory.export.results import TaskResults, recorded_all, replay_all
from factory.export.tools import TaskTools
from factory.io import RELEASE, Store, data_store, dumps, register_release
from factory.records import Task, published_task
from factory.report import Markdown, bar_plot
from factory.rewards.env import bindings
from factory.rewards.verl import verl_tool_config
from factory.tools.registry import ToolRegistry, ToolResolutionError
from factory.tools.retrieval import served_inventories

log = logging.getLogger(__name__)

ALWAYS_DROP = {"replay_call_failed", "trajectory_missing", "unknown_tool", "invalid_task"}
MANIFEST = "manifest.json"
CARD = "README.md"
VERL_TOOLS = "rl/verl_tools.yaml"


def _jsonl(rows: Sequence[Any]) -> bytes:
    return "".join(dumps(r) + "\n" for r in rows).encode("utf-8")


def _parquet(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(list(rows), schema=schema), buf)
    return buf.getvalue()


def _prepare(
    tasks_in: Sequence[Mapping[str, Any]], registry: ToolRegistry, key_param: str
) -> tuple[list[dict[str, Any]], list[TaskTools], list[dict[str, Any]]]:
    """Valid tasks with their tools; the others as dropped rows."""
    ok, tools, dropped = [], [], []
    for raw in tasks_in:
        base = {"id": raw.get("id"), "domain": raw.get("domain"), "split": raw.get("split")}
        try:
            task = published_task(Task.model_validate(raw).model_dump(by_alias=True, mode="json"))
        except ValueError as e:
            dropped.append({**base, "reason": "invalid_task", "detail": str(e).splitlines()[0][:300]})
            continue
        if not task.get("split"):
            dropped.append({**base, "reason": "invalid_task", "detail": "no split assigned"})
            continue
        try:
            tt = TaskTools(task, registry, key_param)
        except ToolResolutionError as e:
            dropped.append({**base, "reason": "unknown_tool", "detail": str(e)})
            continue
        ok.append(task)
        tools.append(tt)
    order = {s: i for i, s in enumerate(split_order([t["split"] for t in ok]))}
    idx = sorted(range(len(ok)), key=lambda i: (order[ok[i]["split"]], ok[i]["domain"], ok[i]["id"]))
    return [ok[i] for i in idx], [tools[i] for i in idx], dropped


def build_exports(
    splits_value: Mapping[str, Any],
    inventories: Mapping[str, Mapping[str, Any]],
    trajectories: Mapping[str, Mapping[str, Any]] | None,
    cfg: ProjectConfig,
    *,
    make_executor: Callable[[], Any] | None = None,
    store: Store | None = None,
    progress: Callable[[str], None] = log.info,
    stage_only: bool = False,
    judged: Mapping[str, Mapping[str, Any]] | None = None,
    queries: Mapping[str, Mapping[str, Any]] | None = None,
    conversations: Mapping[str, Any] | None = None,
    variants: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The export manifest (the asset value) and its metadata. Publishes the export; with `stage_only`
    leaves it verified in its staging folder, the manifest pointing there and carrying a `release` for
    `publish_release` (the asset: published once its blocking check passed)."""
    ex = cfg.exports
    store = store or data_store(cfg)
    t0 = time.monotonic()
    registry = ToolRegistry.from_inventories(served_inventories(inventories, cfg))  # search tools: the served index
    tasks, tools, dropped = _prepare(list(splits_value.get("tasks") or []), registry, ex.key_param)
    progress(f"exporting {len(tasks)} tasks ({len(dropped)} invalid); tool results: {ex.tool_results}")

    secrets: set[str] = set()
    if ex.tool_results == "replay":
        if make_executor is None:
            raise ExportError("tool_results=replay needs an executor factory (live tools)")
        results, secrets = replay_all(
            tasks,
            make_executor,
            attempts=ex.replay_attempts,
            order_attempts=ex.replay_order_attempts,
            concurrency=ex.replay_concurrency,
        )
    else:
        results = recorded_all(tasks, trajectories or {})
    replay_s = round(time.monotonic() - t0, 2)

    kept: list[tuple[dict[str, Any], TaskTools, TaskResults]] = []
    flagged: list[dict[str, Any]] = []
    for task, tt, tr in zip(tasks, tools, results, strict=True):
        base = {"id": task["id"], "domain": task["domain"], "split": task["split"]}
        hard = [p for p in tr.problems if p.reason in ALWAYS_DROP or ex.on_digest_mismatch == "drop"]
        if hard:
            dropped.append({**base, "reason": hard[0].reason, "detail": "; ".join(p.detail for p in tr.problems)})
            continue
        for p in tr.problems:
            tr.flags.append(p.reason)
            flagged.append({**base, "reason": p.reason, "detail": p.detail})
        kept.append((task, tt, tr))

    caps = {
        "max_result_records": ex.max_result_records,
        "max_result_chars": ex.max_result_chars,
        "max_string_chars": ex.max_string_chars,
    }
    splits = split_order([t["split"] for t, _, _ in kept] or list((splits_value.get("splits") or {}).keys()))
    split_of = {str(t["id"]): t["split"] for t, _, _ in kept}  # the exported tasks only (variant rows follow them)
    rows: dict[str, dict[str, list[Any]]] = {f: {s: [] for s in splits} for f in ("chat", "hf", "rl", "bench")}
    truncated_total = 0
    for i, (task, tt, tr) in enumerate(kept):
        messages, truncated = formats.conversation(task, tt, tr.calls, caps)
        truncated_total += truncated
        defs = tt.definitions()
        _, tmpl = formats.system_prompt(task, tt)
        meta = formats.metadata(task, tr.flags, truncated, tmpl)
        chat = formats.chat_row(task, messages, defs, meta)
        s = task["split"]
        rows["chat"][s].append(chat)
        rows["hf"][s].append(formats.hf_row(task, chat))
        rows["rl"][s].append(formats.rl_row(task, messages, defs, i, ex.dataset_name))
        rows["bench"][s].append(task)

    staging = Staging(store)
    try:
        files: dict[str, dict[str, dict[str, Any]]] = {}

        def put(fmt: str, split: str, rel: str, data: bytes, n: int) -> None:
            e = staging.write(rel, data)
            files.setdefault(fmt, {})[split] = {"path": rel, "rows": n, "sha256": e["sha256"]}

        for s in splits:
            if "openai_chat" in ex.formats:
                put("openai_chat", s, f"openai_chat/{s}.jsonl", _jsonl(rows["chat"][s]), len(rows["chat"][s]))
            if "hf_parquet" in ex.formats:
                put("hf_parquet", s, f"hf_parquet/{s}.parquet", _parquet(rows["hf"][s], formats.HF_SCHEMA),
                    len(rows["hf"][s]))  # fmt: skip
            if "openai_strict" in ex.formats:  # every row validated here: a bad row stops the export
                try:
                    srows, side = strict.strict_rows(rows["chat"][s], s)
                except strict.StrictRowError as e:
                    raise ExportError(f"openai_strict: {e}; nothing published") from None
                put("openai_strict", s, f"openai_strict/{s}.jsonl", _jsonl(srows), len(srows))
                put("openai_strict_meta", s, f"openai_strict/{s}{strict.SIDECAR_SUFFIX}", _jsonl(side), len(side))
            if "rl" in ex.formats:
                put("rl", s, f"rl/{s}.jsonl", _jsonl(rows["rl"][s]), len(rows["rl"][s]))
                pr = [formats.rl_parquet_row(r) for r in rows["rl"][s]]
                put("rl_parquet", s, f"rl/{s}.parquet", _parquet(pr, formats.RL_SCHEMA), len(pr))
            if "benchmark" in ex.formats:
                doc = formats.benchmark_doc(rows["bench"][s], s, ex.dataset_name, splits_value.get("env_lock") or {})
                put("benchmark", s, f"benchmark/{s}.json", dumps(doc, indent=1).encode("utf-8"), len(rows["bench"][s]))
            for fmt, rel, data, n in conversation_exports.files(conversations, s, ex.dataset_name):  # issue 19
                put(fmt, s, rel, data, n)
            for fmt, rel, data, n in variant_exports.files(variants, s, split_of):  # issue 18
                put(fmt, s, rel, data, n)
        if (cat := variant_exports.catalog_file(variants)) is not None:
            put("variants_catalog", "all", *cat)
        rec_files, rec_counts = recording_exports.files([(t, tt) for t, tt, _ in kept], store)  # issue 13
        for fmt, platform, rel, data, n in rec_files:  # the recorded answers the tasks' calls got
            put(fmt, platform, rel, data, n)
        if "rl" in ex.formats:  # verl's multi-turn tool config for the tools the exported tasks use
            used = {(sp.platform, sp.name): sp for _, tt, _ in kept for sp in tt.specs}
            staging.write(VERL_TOOLS, yaml.safe_dump(verl_tool_config(bindings(used.values())), allow_unicode=True,
                                                     sort_keys=False).encode("utf-8"))  # fmt: skip
        mismatches = sum(1 for d in [*dropped, *flagged] if d["reason"] == "result_digest_mismatch")
        replay_summary = {
            "tool results": ex.tool_results,
            "tasks in": len(tasks) + sum(1 for d in dropped if d["reason"] in ("invalid_task", "unknown_tool")),
            "tasks exported": len(kept),
            "calls re-executed and verified" if ex.tool_results == "replay" else "calls from recorded samples": sum(
                len(t["golden_actions"]) for t, _, _ in kept
            ),
            "result digest mismatches": mismatches,
            "rows dropped": len(dropped),
            "rows flagged": len(flagged),
            "tool messages truncated": truncated_total,
            **(
                {
                    "recorded answers shipped": rec_counts["shipped"],
                    "recorded calls without a recording": rec_counts["missing"],
                }
                if rec_counts["shipped"] or rec_counts["missing"]
                else {}
            ),
        }
        card = render_card(
            cfg=cfg,
            files=files,
            tasks=[t for t, _, _ in kept],
            dropped=dropped,
            splits_value=splits_value,
            replay_summary=replay_summary,
            provenance={
                str(src.get("platform")): src["provenance"]
                for inv in inventories.values()
                for src in (inv or {}).get("sources") or []
                if isinstance(src, Mapping) and src.get("provenance")
            },
            trajectories=trajectories,
            judged=judged,
            queries=queries,
        )
        staging.write(CARD, card.encode("utf-8"))
        version = staging.version()
        patterns = [re.compile(p) for p in ex.secret_patterns]
        extra = [CARD, VERL_TOOLS] if "rl" in ex.formats else [CARD]
        problems = problems_of(verify_export(staging.read, files, secrets, patterns, extra=extra))
        if problems:
            raise ExportError(
                f"{len(problems)} problem(s) reading the export back; nothing published: " + "; ".join(problems[:8])
            )
        rel_manifest = {
            "version": version,
            "dataset": ex.dataset_name,
            **files,
            "card": CARD,
            **({"verl_tools": VERL_TOOLS} if "rl" in ex.formats else {}),
            "dropped": dropped,
            "flagged": flagged,
            "tasks": len(kept),
            "replay": replay_summary,
        }
        staging.write(MANIFEST, dumps(rel_manifest, indent=1).encode("utf-8"))
        root = staging.dir if stage_only else staging.publish(version, _pointer(version))
    except BaseException:
        staging.abort()
        raise
    removed = [] if stage_only else cleanup(store, ex.keep_versions, version)
    full = {
        fmt: {s: {**e, "path": store.path(f"{root}/{e['path']}")} for s, e in v.items()} for fmt, v in files.items()
    }
    manifest = {
        "version": version,
        "root": store.path(root),
        **full,
        "card": store.path(f"{root}/{CARD}"),
        **({"verl_tools": store.path(f"{root}/{VERL_TOOLS}")} if "rl" in ex.formats else {}),
        "manifest": store.path(f"{root}/{MANIFEST}"),
        "dropped": dropped,
        "flagged": flagged,
        "tasks": len(kept),
        "splits": {s: len(rows["chat"][s]) for s in splits},
        "replay": replay_summary,
    }
    if stage_only:
        manifest[RELEASE] = {
            "kind": RELEASE_KIND,
            "staged": staging.dir,
            "version": version,
            "files": staging.files,
            "keep_versions": ex.keep_versions,
        }
    # the metadata names where the files will be once the gates publish them, not the staging folder
    shown = publish_paths(store, manifest, f"{EXPORTS_DIR}/{version}") if stage_only else manifest
    meta = export_metadata(shown, [t for t, _, _ in kept], rows["chat"], replay_s, removed)
    return manifest, meta


# --------------------------------------------------------------------------- publication of a staged export

RELEASE_KIND = "dataset_exports"


def _pointer(version: str) -> dict[str, str]:
    return {"version": version, "manifest": f"{version}/{MANIFEST}"}


def publish_release(store: Store, manifest: dict[str, Any]) -> dict[str, Any]:
    """Publish an export staged by `build_exports(..., stage_only=True)`: move it to exports/<version>/,
    verify the moved bytes, write the LATEST pointer, drop versions beyond `keep_versions`; returns the
    manifest as published (paths under the version folder, no `release`)."""
    release = manifest[RELEASE]
    version = str(release["version"])
    staging = Staging.reopen(store, str(release["staged"]), release["files"])
    old_root = store.path(staging.dir)
    root = staging.publish(version, _pointer(version))
    removed = cleanup(store, int(release["keep_versions"]), version)
    if removed:
        log.info("export cleanup removed %s", ", ".join(removed))
    return publish_paths(store, manifest, root, old_root)


def publish_paths(store: Store, manifest: Mapping[str, Any], root: str, old_root: str | None = None) -> dict[str, Any]:
    """`manifest` with its staged paths moved under the published folder `root` (no `release`)."""
    old_root = old_root or store.path(str(manifest[RELEASE]["staged"]))
    new_root = store.path(root)

    def moved(path: Any) -> Any:
        if isinstance(path, str) and (path == old_root or path.startswith(old_root + "/")):
            return new_root + path[len(old_root) :]
        return path

    out = {k: v for k, v in manifest.items() if k != RELEASE}
    for key in ("root", "card", "manifest", "verl_tools"):
        if key in out:
            out[key] = moved(out.get(key))
    for fmt in FILE_FORMATS:
        if isinstance(out.get(fmt), dict):
            out[fmt] = {s: {**e, "path": moved(e.get("path"))} for s, e in out[fmt].items()}
    return out


# --------------------------------------------------------------------------- read-back

TASK_FORMATS = ("openai_chat", "openai_strict", "openai_strict_meta", "hf_parquet", "rl", "rl_parquet", "benchmark")
# every file a manifest names: moved to the published folder and verified again by the read-back gate
FILE_FORMATS = (*TASK_FORMATS, *conversation_exports.FORMATS, *variant_exports.FORMATS, *recording_exports.FORMATS)

register_release(RELEASE_KIND, publish_release)


def read_back(manifest: Mapping[str, Any], patterns: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Verify a published export again from its own manifest.json (what the asset check runs)."""
    store = Store(manifest["root"])
    try:
        rel = json.loads(store.read_bytes(MANIFEST))
    except (OSError, ValueError) as e:
        return [{"format": "manifest", "split": "", "path": MANIFEST, "rows_written": 0, "rows_read": 0,
                 "sha256_ok": False, "parse_ok": False, "invalid_rows": 0, "key_free": True,
                 "problems": [f"{MANIFEST}: {e}"]}]  # fmt: skip
    files = {fmt: rel[fmt] for fmt in FILE_FORMATS if fmt in rel}
    return verify_export(store.read_bytes, files, patterns=[re.compile(p) for p in patterns], extra=[rel["card"]])


def reports_frame(reports: Sequence[Mapping[str, Any]]):
    import pandas as pd

    return pd.DataFrame(
        [
            {k: v for k, v in r.items() if k != "problems"}
            | {
                "rows_match": r["rows_read"] == r["rows_written"],
                "problem": "; ".join(map(str, r.get("problems") or [])),
            }
            for r in reports
        ]  # fmt: skip
    )


def verify_export(
    read: Callable[[str], bytes],
    files: Mapping[str, Mapping[str, Mapping[str, Any]]],
    secrets: set[str] | frozenset[str] = frozenset(),
    patterns: Sequence[re.Pattern[str]] = (),
    extra: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Read every file back, check its sha256, parse and validate every row, scan every byte for keys.

    One report per file: {format, split, path, rows_written, rows_read, sha256_ok, parse_ok,
    invalid_rows, key_free, problems}; `extra` files (the card) are only read and scanned.
    """
    reports: list[dict[str, Any]] = []
    items = [(fmt, split, e) for fmt, by_split in files.items() for split, e in by_split.items()]
    items += [("card", "", {"path": rel, "rows": 0}) for rel in extra]
    for fmt, split, e in items:
        rel = e["path"]
        rep: dict[str, Any] = {
            "format": fmt, "split": split, "path": rel, "rows_written": e["rows"], "rows_read": 0,
            "sha256_ok": True, "parse_ok": True, "invalid_rows": 0, "key_free": True, "problems": [],
        }  # fmt: skip
        reports.append(rep)
        try:
            data = read(rel)
        except Exception as err:  # noqa: BLE001 - reported; the export is not published
            rep.update(parse_ok=False, sha256_ok=False, problems=[f"{rel}: unreadable ({err})"])
            continue
        if e.get("sha256") and sha256_bytes(data) != e["sha256"]:
            rep["sha256_ok"] = False
            rep["problems"].append(f"{rel}: sha256 differs from the manifest")
        leaks = _scan(data, secrets, patterns)
        if leaks:
            rep["key_free"] = False
            rep["problems"] += [f"{rel}: {x}" for x in leaks]
        if fmt == "card":
            continue
        modules = (conversation_exports, variant_exports, recording_exports)
        if (mod := next((m for m in modules if fmt in m.FORMATS), None)) is not None:
            try:
                rep["rows_read"], errs = mod.read_back(fmt, data, split)
            except (ValueError, KeyError, TypeError, pa.ArrowException) as err:
                rep["parse_ok"], errs = False, [f"does not parse ({str(err)[:300]})"]
            rep["invalid_rows"] = len(errs)
            rep["problems"] += [f"{rel}: {x}" for x in errs[:5]]
            if rep["rows_read"] != e["rows"]:
                rep["problems"].append(f"{rel}: {rep['rows_read']} rows read back, {e['rows']} written")
            continue
        try:
            rows = _parse(fmt, data)
        except (ValueError, pa.ArrowException) as err:
            rep["parse_ok"] = False
            rep["problems"].append(f"{rel}: does not parse ({str(err)[:300]})")
            continue
        if fmt == "benchmark":
            errs = formats.validate_benchmark(rows, split)
            rep["rows_read"] = len(rows.get("tasks") or [])
            rep["invalid_rows"] = len(errs)
            rep["problems"] += [f"{rel}: {x}" for x in errs[:5]]
        else:
            rep["rows_read"] = len(rows)
            for i, r in enumerate(rows):
                try:
                    errs = _validate_row(fmt, r, split)
                except (ValueError, KeyError, TypeError) as err:
                    errs = [f"{type(err).__name__}: {err}"]
                if errs:
                    rep["invalid_rows"] += 1
                    rep["problems"] += [f"{rel} row {i + 1}: {x}" for x in errs[:3]]
        if rep["rows_read"] != e["rows"]:
            rep["problems"].append(f"{rel}: {rep['rows_read']} rows read back, {e['rows']} written")
    return reports


def problems_of(reports: Sequence[Mapping[str, Any]]) -> list[str]:
    return [p for r in reports for p in r["problems"]]


def _scan(data: bytes, secrets, patterns) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    out = []
    for s in secrets:
        if s and s != "<KEY>" and s in text:
            out.append("contains an API key handed out during the replay")
            break
    for p in patterns:
        if p.search(text):
            out.append(f"contains a string matching the key pattern {p.pattern!r}")
    return out


def _parse(fmt: str, data: bytes) -> Any:
    if fmt in ("openai_chat", "openai_strict", "openai_strict_meta", "rl"):
        return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    if fmt in ("hf_parquet", "rl_parquet"):
        table = pq.read_table(pa.BufferReader(data))
        want = formats.HF_SCHEMA if fmt == "hf_parquet" else formats.RL_SCHEMA
        if not table.schema.equals(want, check_metadata=False):
            raise ValueError(f"schema differs from the export schema: {table.schema}")
        return table.to_pylist()
    return json.loads(data)


def _validate_row(fmt: str, r: Mapping[str, Any], split: str) -> list[str]:
    if fmt == "openai_chat":
        errs = formats.validate_chat(r)
        if (r.get("metadata") or {}).get("split") != split:
            errs.append("metadata.split differs from the file's split")
        return errs
    if fmt == "openai_strict":
        return strict.validate_strict(r)
    if fmt == "openai_strict_meta":
        meta = r.get("metadata") or {}
        return [] if r.get("id") and meta.get("split") == split else ["sidecar row without id or with another split"]
    if fmt == "rl":
        return formats.validate_rl(r)
    if fmt == "rl_parquet":
        return formats.validate_rl(
            {**r, "tools": json.loads(r["tools"]), "ground_truth": json.loads(r["ground_truth"])}
        )
    if fmt == "hf_parquet":
        msgs = [
            {k: v for k, v in m.items() if v is not None and not (k == "tool_calls" and not v)} for m in r["messages"]
        ]
        errs = formats.validate_chat({"messages": msgs, "tools": json.loads(r["tools"])})
        for col in ("answer_value", "expected_state_hash", "system_state", "lineage"):
            json.loads(r[col])
        if r["split"] != split:
            errs.append("split column differs from the file's split")
        return errs
    return []


# --------------------------------------------------------------------------- metadata


def chat_preview(row: Mapping[str, Any], limit: int = 300) -> Markdown:
    lines = [f"**{row['id'][:19]}…** ({row['metadata']['domain']}, {row['metadata']['pattern']}, "
             f"split {row['metadata']['split']})", ""]  # fmt: skip
    for m in row["messages"]:
        if m.get("tool_calls"):
            for c in m["tool_calls"]:
                lines.append(f"- **assistant → `{c['function']['name']}`** `{c['function']['arguments'][:limit]}`")
        else:
            text = str(m.get("content") or "").replace("\n", " ")
            text = text if len(text) <= limit else text[:limit] + "…"
            who = m["role"] + (f" ({m['tool_call_id']})" if m["role"] == "tool" else "")
            lines.append(f"- **{who}**: {text}")
    return Markdown("\n".join(lines))


def export_metadata(
    manifest: Mapping[str, Any],
    tasks: Sequence[Mapping[str, Any]],
    chat_rows: Mapping[str, Sequence[Mapping[str, Any]]],
    replay_s: float,
    removed: Sequence[str],
) -> dict[str, Any]:
    meta: dict[str, Any] = {"version": manifest["version"], "tasks": manifest["tasks"], "root": manifest["root"]}
    for fmt in FILE_FORMATS:
        for s, e in (manifest.get(fmt) or {}).items():
            meta[f"rows/{fmt}/{s}"] = e["rows"]
    meta["paths"] = {fmt: {s: e["path"] for s, e in manifest[fmt].items()} for fmt in FILE_FORMATS if fmt in manifest}
    meta["card"] = manifest["card"]
    meta["dropped"] = len(manifest["dropped"])
    meta["dropped_by_reason"] = dict(Counter(d["reason"] for d in manifest["dropped"]))
    meta["flagged"] = len(manifest["flagged"])
    meta["replay_seconds"] = replay_s
    meta.update({f"replay/{k}": v for k, v in manifest["replay"].items() if isinstance(v, int)})
    meta["old_versions_removed"] = len(removed)
    by = Counter(f"{t['split']}/{t['domain']}" for t in tasks)
    if by:
        meta["tasks_by_split_domain"] = bar_plot(dict(sorted(by.items())), title="exported tasks per split/domain")
    rows = [x for r in chat_rows.values() for x in r]
    # the preview shows a conversation with tool calls where there is one (a refusal shows no tool use)
    called = (x for x in rows if any(m.get("tool_calls") for m in x.get("messages") or []))
    first = next(called, rows[0] if rows else None)
    if first is not None:
        meta["preview"] = chat_preview(first)
    if manifest["dropped"]:
        meta["dropped_preview"] = Markdown(
            "\n".join(
                f"- `{d['id'][:19] if d['id'] else '?'}…` {d['reason']}: {d['detail'][:200]}"
                for d in manifest["dropped"][:10]
            )  # fmt: skip
        )
    return meta
