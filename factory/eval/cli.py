"""`factory eval`: evaluate a model backend on a split of the dataset (or on a task file).

    factory eval --backend local --split test --runs 3 --k 3 --max-tasks 10
    factory eval --backend gpt --tasks data/generated_queries/music.json --runs 1

Tasks come from `--tasks FILE.json` (a list of Task dicts, or a dataset_splits / generated_queries /
judged_queries value), else from the materialized `dataset_splits`, else from every domain's
`generated_queries` (no split labels: the whole set is evaluated). The demo service is started
when a domain uses it and none answers (`--no-start-demo` to require a running one). Progress is
printed per episode; the per-pattern and per-domain tables at the end; report.json, report.md and
traces.jsonl land in `--out` (default `<data_dir>/evaluations/<evaluation id>`).
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `eval` subcommand."""
    p = sub.add_parser(
        "eval",
        help="evaluate a model backend on a split (pass@1, pass^k, ACTION, by case pattern and domain)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--backend", default=None, help="models.backends name under test (default: evaluation.backend)")
    p.add_argument("--split", default=None, help="split to evaluate, or 'all' (default: evaluation.split)")
    p.add_argument("--runs", type=int, default=None, help="runs (seeds) per task")
    p.add_argument("--k", type=int, default=None, help="k of pass@k / pass^k (≤ runs)")
    p.add_argument("--max-tasks", type=int, default=None, help="evaluate at most this many tasks")
    p.add_argument("--max-turns", type=int, default=None, help="model turns per episode at most")
    p.add_argument("--time-limit", type=float, default=None, help="seconds per episode at most")
    p.add_argument("--temperature", type=float, default=None, help="sampling temperature")
    p.add_argument("--domains", default=None, help="comma-separated domains to evaluate")
    p.add_argument(
        "--hop-types",
        default=None,
        help="comma-separated hop types to evaluate: API, RAG, or a chain's sources in order (API-RAG, RAG-API, "
        "API-RAG-API, ...); a task without one is API",
    )
    p.add_argument("--tasks", default=None, help="JSON file with the tasks (instead of dataset_splits)")
    p.add_argument("--out", default=None, help="folder for report.json, report.md, traces.jsonl")
    p.add_argument("--judge-fallback", action="store_true", default=None, help="ask a model judge on mismatches")
    p.add_argument("--no-cache", action="store_true", help="ask the model again instead of replaying cached replies")
    p.add_argument("--no-start-demo", action="store_true", help="fail instead of starting the demo service")
    p.add_argument("--quiet", action="store_true", help="no per-episode progress lines")
    p.set_defaults(func=cmd_eval)


def _task_source(cfg: Any, path: str | None) -> tuple[Any, str]:
    """The tasks' JSON value and where it came from."""
    from factory.eval.harness import EvalError
    from factory.io import StoreError, artifact_file, data_store, read_artifact

    if path:
        p = Path(path)
        if not p.is_file():
            raise EvalError(f"--tasks: no such file {path}")
        try:
            return json.loads(p.read_text(encoding="utf-8")), str(p)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise EvalError(f"--tasks: {path} is not valid JSON: {e}") from None
    store = data_store(cfg)
    splits = artifact_file(store, "dataset_splits")
    if splits is not None:
        return read_artifact(store, "dataset_splits"), store.path(splits)
    found = {}
    for d in cfg.domain_names:
        try:
            found[d] = read_artifact(store, "generated_queries", d)
        except StoreError:
            continue
    if not found:
        raise EvalError(
            f"no tasks found under {store.root}: neither dataset_splits nor generated_queries is materialized "
            "(run `factory run`, or pass --tasks FILE.json)"
        )
    return found, f"generated_queries ({', '.join(sorted(found))}; no split labels)"


def _uses_demo(cfg: Any, domains: set[str]) -> bool:
    return cfg.demo.enabled and any(
        (s.spec or "").startswith("demo://") or (s.base_url or "").startswith("demo://")
        for d in cfg.domains
        if d.name in domains
        for s in d.sources
    )


def cmd_eval(args: argparse.Namespace) -> int:
    from factory.config import load_config
    from factory.demo.service import DemoService, DemoServiceError
    from factory.eval import report as reporting
    from factory.eval.harness import (
        EvalError,
        EvalSettings,
        evaluate,
        evaluation_id,
        load_inventories,
        load_tasks,
        select_tasks,
    )
    from factory.io import data_store
    from factory.llm.errors import LLMError
    from factory.llm.service import LLM

    cfg = load_config(args.config)
    llm = None
    demo = None
    try:
        settings = EvalSettings.resolve(
            cfg,
            backend=args.backend,
            split=args.split,
            runs=args.runs,
            k=args.k,
            max_tasks=args.max_tasks,
            max_turns=args.max_turns,
            time_limit_s=args.time_limit,
            temperature=args.temperature,
            domains=[d.strip() for d in args.domains.split(",") if d.strip()] if args.domains else None,
            hop_types=[h.strip() for h in args.hop_types.split(",") if h.strip()] if args.hop_types else None,
            judge_fallback=args.judge_fallback,
            cache=False if args.no_cache else None,
        )
        value, source = _task_source(cfg, args.tasks)
        tasks, selection = select_tasks(load_tasks(value), settings)
        domains = {t.domain for t in tasks}
        inventories = load_inventories(cfg, sorted(domains | set(cfg.domain_names)))
        llm = LLM(cfg.resolved_models())
        from factory.eval.oracle import ORACLE, ORACLE_MODEL

        model = ORACLE_MODEL if settings.backend == ORACLE else llm.chat_backend(settings.backend).model
        eid = evaluation_id(settings, tasks, model)
        _out(
            f"evaluating {model} (backend {settings.backend}) on {len(tasks)} task(s) × {settings.runs} run(s) "
            f"from {source}; split {settings.split if selection['split_applied'] else '(all)'}"
        )
        if _uses_demo(cfg, domains) and not args.no_start_demo:
            demo = DemoService(cfg.demo, log_dir=cfg.logs_dir)
            demo.ensure_running()
        result = evaluate(
            tasks,
            inventories,
            cfg,
            llm,
            settings,
            progress=(lambda _m: None) if args.quiet else _out,
            selection={**selection, "source": source},
        )
    except (EvalError, DemoServiceError, LLMError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    finally:
        if demo is not None:
            demo.close()
        if llm is not None:
            llm.close()
    if args.out:
        base, folder = args.out, ""
    else:
        base, folder = data_store(cfg), f"evaluations/{eid}"
    files = reporting.write_files(result.report, result.traces, base, folder)
    _out("")
    _out(reporting.console(result.report))
    _out("")
    _out(f"report: {files['report_md']}\njson:   {files['report_json']}\ntraces: {files['traces']}")
    return 0
