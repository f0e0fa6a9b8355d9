"""`factory audit`: re-derive every published task's answer from the raw package data.

    factory audit                       # the project's published dataset (dataset_splits)
    factory audit --tasks FILE          # a task file: JSON list, JSONL, or a dataset_splits value
    factory audit --out report.json --strict

Prints one line per task (wrong and not-derivable first) with the stored and the re-derived
answer and why they differ, the type mismatches of bridged values, and the counts; writes the
full report (every call and bridge) as JSON to `--out` (default `<data_dir>/audit/report.json`).
Search calls are checked against the project's served retrieval index (the `retrieval_index` values
pinned LanceDB versions; with --tasks, only with --config or --index-from-project).
Exit code 1 when a task is wrong (with `--strict`, also when one is not derivable), 2 when there
is nothing to audit.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from factory.config import load_config
from factory.io import Store, StoreError, artifact_rel, data_store, read_artifact

REPORT_REL = "audit/report.json"


def _out(text: str, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


class AuditInputError(Exception):
    """No tasks to audit (nothing published yet, or an unreadable task file); exit code 2."""


def _tasks_of(value: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(value, dict) and isinstance(value.get("tasks"), list):
        value = value["tasks"]
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise AuditInputError(f"{where} holds no task list (a JSON list of tasks, or an object with 'tasks')")
    bad = [i for i, t in enumerate(value) if "golden_actions" not in t or "answer_spec" not in t]
    if bad:
        raise AuditInputError(f"{where}: entries {bad[:5]} are not tasks (no golden_actions / answer_spec)")
    return value


def read_task_file(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise AuditInputError(f"cannot read task file {path}: {e}") from e
    try:
        if path.suffix == ".jsonl":
            value: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            value = json.loads(text)
    except json.JSONDecodeError as e:
        raise AuditInputError(f"task file {path} is not valid JSON: {e}") from e
    return _tasks_of(value, str(path))


def published_tasks(store: Store) -> list[dict[str, Any]]:
    """The tasks of the project's published dataset (the dataset_splits value)."""
    try:
        value = read_artifact(store, "dataset_splits", default=None)
    except StoreError as e:
        raise AuditInputError(str(e)) from e
    if value is None:
        raise AuditInputError(
            f"no published dataset: {store.path(artifact_rel('dataset_splits'))}.json does not exist "
            "(run `factory run` first, or give --tasks FILE)"
        )
    return _tasks_of(value, store.path(artifact_rel("dataset_splits")))


INDEX_ASSET = "retrieval_index"


def served_index(store: Store, domains: list[str]) -> Any:
    """The served retrieval tables of `domains` at the versions their published `retrieval_index` values pin
    (a `factory.audit.passages.LanceIndex`); a domain without a published index has none."""
    from factory.audit.passages import LanceIndex

    pins: dict[str, tuple[str, int]] = {}
    for d in domains:
        try:
            value = read_artifact(store, INDEX_ASSET, d, default=None)
        except StoreError as e:
            raise AuditInputError(f"cannot read the {INDEX_ASSET} of {d!r}: {e}") from e
        if isinstance(value, dict) and value.get("table") and value.get("version") is not None:
            pins[str(value["table"])] = (str(value["uri"]), int(value["version"]))
    return LanceIndex(pins)


def run_audit(args: argparse.Namespace) -> int:
    from factory.audit.run import audit, format_report

    try:
        if args.tasks:
            tasks = read_task_file(Path(args.tasks))
            store = None
            if args.config or args.index_from_project:
                index_store: Store | None = data_store(load_config(args.config))
            else:
                index_store = None
        else:
            cfg = load_config(args.config)
            store = index_store = data_store(cfg)
            tasks = published_tasks(store)
        domains = sorted({str(t.get("domain")) for t in tasks if t.get("domain")})
        index = served_index(index_store, domains) if index_store is not None else None
    except AuditInputError as e:
        _out(f"error: {e}", err=True)
        return 2
    if not tasks:
        _out("error: the dataset has no tasks", err=True)
        return 2
    report = audit(tasks, index)
    _out(format_report(report))
    if args.out:
        out = Path(args.out).resolve()
        written = Store(str(out.parent)).write_json(out.name, report)
    elif store is not None:
        written = store.write_json(REPORT_REL, report)
    else:
        written = None
    if written:
        _out(f"report: {written}")
    c = report["counts"]
    return 1 if c["wrong"] or (args.strict and c["not_derivable"]) else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `audit` subcommand."""
    p = sub.add_parser(
        "audit",
        help="re-derive every published task's answer from the raw package data (correct / wrong / not derivable)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--tasks", default=None, help="audit this task file instead of the published dataset")
    p.add_argument("--out", default=None, help=f"JSON report path (default: <data_dir>/{REPORT_REL})")
    p.add_argument("--strict", action="store_true", help="also fail (exit 1) when a task is not derivable")
    p.add_argument(
        "--index-from-project",
        action="store_true",
        help="with --tasks: read the passages search calls cite from the project's served retrieval index",
    )
    p.set_defaults(func=run_audit)
