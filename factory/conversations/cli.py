"""`factory eval --conversations`: a model as the agent of the published conversation tasks (issue 19 item 6).

    factory eval --conversations --backend local --split test --runs 3 --k 3 --max-tasks 10
    factory eval --conversations --backend oracle --split test --out /tmp/oracle
    factory eval --conversations --backend local --split test --against /tmp/oracle/conversations_report.json

Tasks come from the materialized `conversations` value (every case kind, picked round-robin over the kinds
with --max-tasks). The report (by case kind, no_call on its own, pass^k; McNemar's exact test against another
report with --against) lands in --out (default `<data_dir>/evaluations/conversations-<id>`).
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--conversations", action="store_true", help="evaluate on the conversation tasks (multi-turn, "
                   "single, parallel, no_call …) with the user simulator instead of the single-turn tasks")  # fmt: skip
    p.add_argument("--against", default=None, help="with --conversations: another conversations_report.json; "
                   "McNemar's exact test between the two models' per-task results")  # fmt: skip


def extend_eval(p: argparse.ArgumentParser) -> None:
    """Add `--conversations` to the `eval` subcommand; with it, this module runs instead of the harness."""
    add_arguments(p)
    harness = p.get_default("func")

    def cmd(args: argparse.Namespace) -> int:
        if getattr(args, "conversations", False):
            return run(args)
        return int(harness(args))

    p.set_defaults(func=cmd)


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    from factory.config import load_config
    from factory.conversations.episode import Caps, ModelSimulator, OracleAgent
    from factory.conversations.evaluate import ModelAgent, compare, evaluate_conversations, pick, report_markdown
    from factory.demo.service import DemoService, DemoServiceError
    from factory.eval.harness import load_inventories
    from factory.eval.oracle import ORACLE, ORACLE_MODEL
    from factory.io import Store, StoreError, data_store, read_artifact
    from factory.llm.errors import LLMError
    from factory.llm.service import LLM
    from factory.tools.registry import ToolRegistry

    cfg = load_config(getattr(args, "config", None))
    ev = cfg.evaluation
    runs = args.runs or ev.runs
    k = args.k or min(ev.k, runs)
    backend_name = str(args.backend or ev.backend or "")
    if not backend_name:
        sys.stderr.write("error: no backend (--backend, or evaluation.backend in the config)\n")
        return 2
    try:
        value = read_artifact(data_store(cfg), "conversations")
    except StoreError as e:
        sys.stderr.write(f"error: no conversations value ({e}); run `factory run` first\n")
        return 2
    domains = [d.strip() for d in args.domains.split(",") if d.strip()] if args.domains else None
    tasks = pick(value.get("tasks") or [], args.split or ev.split, args.max_tasks, domains)
    if not tasks:
        sys.stderr.write("error: no conversation task matches the split/domains\n")
        return 2
    other = None
    if args.against:
        try:
            other = json.loads(Path(args.against).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            sys.stderr.write(f"error: --against {args.against}: {e}\n")
            return 2
    llm = LLM(cfg.resolved_models())
    demo = None
    c = cfg.conversations
    caps = Caps(max_user_turns=c.max_user_turns, max_calls=c.max_calls, max_agent_steps=c.max_agent_steps)
    try:
        if backend_name == ORACLE:
            model = ORACLE_MODEL

            def agent_for_run(r: int) -> Any:
                return OracleAgent()
        else:
            temperature = args.temperature if args.temperature is not None else ev.temperature
            backends = [llm.backend_variant(backend_name, temperature=temperature, seed=(ev.seed or cfg.seed) + r,
                                            cache=not args.no_cache) for r in range(runs)]  # fmt: skip
            model = backends[0].model

            def agent_for_run(r: int) -> Any:
                return ModelAgent(backends[r])

        _out(f"conversations: {model} on {len(tasks)} task(s) × {runs} run(s), k={k}")
        if not args.no_start_demo:
            demo = DemoService(cfg.demo, log_dir=cfg.logs_dir)
            demo.ensure_running()
        registry = ToolRegistry.from_inventories(load_inventories(cfg, sorted({t["domain"] for t in tasks})))
        report = evaluate_conversations(tasks, registry, cfg, agent_for_run, ModelSimulator(llm), runs=runs, k=k,
                                        caps=caps, progress=None if args.quiet else _out)  # fmt: skip
    except (DemoServiceError, LLMError, ValueError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    finally:
        if demo is not None:
            demo.close()
        llm.close()
    report = {"model": model, **report}
    if other is not None:
        report["mcnemar"] = {**compare(report, other), "against": other.get("model", args.against)}
    eid = hashlib.sha256(json.dumps([model, runs, sorted(t["id"] for t in tasks)]).encode()).hexdigest()[:12]
    store = Store(args.out) if args.out else data_store(cfg)
    prefix = "" if args.out else f"evaluations/conversations-{eid}/"
    text = report_markdown(report, model)
    store.write_json(f"{prefix}conversations_report.json", report)
    store.write_bytes(f"{prefix}conversations_report.md", text.encode("utf-8"))
    _out(text)
    _out(f"report: {store.path(prefix + 'conversations_report.json')}")
    return 0
