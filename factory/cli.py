"""`factory` command line: start a project, run the pipeline, sync partitions, serve the demo, check the config.

Every command but `init` works on one project: the config given as `--config`, else
$FACTORY_CONFIG, else `factory.yaml` in the working directory or the nearest parent folder.
Data, logs and the default DAGSTER_HOME (`.dagster_home`) live in the config file's folder.
"""

import argparse
import logging
import os
import sys
import time
from contextlib import nullcontext
from typing import Any

from factory.config import ConfigError, find_config, load_config
from factory.instance import ensure_dagster_home


def _metadata_value(v: Any) -> Any:
    return getattr(v, "value", v)


def _summarize_run(result: Any) -> dict[str, dict[str, Any]]:
    """asset name → selected metadata of its materialization in this run."""
    out: dict[str, dict[str, Any]] = {}
    for ev in result.get_asset_materialization_events():
        mat = ev.event_specific_data.materialization
        meta = {k: _metadata_value(v) for k, v in mat.metadata.items()}
        out[mat.asset_key.to_user_string()] = meta
    return out


def _check_failures(result: Any) -> list[dict[str, Any]]:
    """The failed checks of a run: name, partition, what failed (naming rows) and what to change."""
    fails = []
    for ev in result.get_asset_check_evaluations():
        if not ev.passed:
            meta = {k: _metadata_value(v) for k, v in (ev.metadata or {}).items()}
            fix = meta.get("fix") or []
            fails.append(
                {
                    "check": f"{ev.asset_check_key.asset_key.to_user_string()}:{ev.asset_check_key.name}",
                    "partition": getattr(ev, "partition", None),
                    "description": ev.description or "",
                    "fix": [str(f) for f in fix] if isinstance(fix, list) else [str(fix)],
                }
            )
    return fails


def print_failed_gates(failures: list[tuple[str, dict[str, Any]]]) -> None:
    """For each failed gate: which one, for which domain, what it found and which setting or file to change."""
    if not failures:
        return
    print(f"\n{len(failures)} gate(s) failed; their values were not published:")
    for domain, f in failures:
        print(f"- {f['check']} [{domain}]: {f['description']}")
        for line in f["fix"] or ["see the check's metadata in the Dagster UI (result, failed_rows)"]:
            print(f"    to change: {line}")


def cmd_run(args: argparse.Namespace) -> int:
    import dagster as dg

    from factory.definitions import build_definitions
    from factory.resources import DemoServiceResource, clean_on_start, uses_demo
    from factory.tools.transports.mcp_pool import close_mcp_sessions
    from sensors.jobs import in_process_runner, reconstructable_runner, run_pipeline
    from sensors.partitions import sync_domain_partitions

    path = find_config(args.config)
    cfg = load_config(path)
    domains = _selected_domains(args, cfg, path)
    home = ensure_dagster_home(cfg.dagster_home)
    defs = build_definitions(path)
    instance = dg.DagsterInstance.get()
    added, removed = sync_domain_partitions(instance, cfg.domain_names)
    print(f"project {cfg.project_dir}; DAGSTER_HOME={home}; partitions added {added}, removed {removed}")
    cleaned = clean_on_start(instance, cfg)
    if cleaned["orphan_runs"] or cleaned["removed"]:
        print(f"crash leftovers: {len(cleaned['orphan_runs'])} orphan runs marked failed, removed {cleaned['removed']}")
    run_config = {"loggers": {"console": {"config": {"log_level": "DEBUG" if args.verbose else "WARNING"}}}}
    t0 = time.monotonic()
    selected = [cfg.domain(d) for d in domains]
    if not any(uses_demo(d) for d in selected):
        print("no source uses demo://: the demo service is not started")
    orch = cfg.orchestration
    if orch.executor != "in_process":  # step processes load the code location from the same config file
        os.environ["FACTORY_CONFIG"] = str(path)
        print(f"executor {orch.executor}: {orch.parallel_domains} domain run(s) at a time")
    # run workers (multiprocess / k8s_job) start now and live for the whole pipeline, while the demo service starts
    workers = (
        nullcontext(in_process_runner)
        if orch.executor == "in_process"
        else reconstructable_runner(str(path), workers=orch.parallel_domains)
    )
    with workers as runner, DemoServiceResource(log_dir=str(cfg.logs_dir)).serving(cfg, stop=True, domains=selected):
        results = run_pipeline(
            defs,
            instance,
            domains,
            run_config=run_config,
            keep_going=args.keep_going,
            progress=lambda m: print(m, flush=True),
            runner=runner,
            parallel_domains=orch.parallel_domains,
        )
    print_mcp_servers(close_mcp_sessions())  # the clean stop: every MCP server this run started
    summaries: dict[str, dict[str, dict[str, Any]]] = {}
    for (_job, d), res in results.items():
        summaries.setdefault(d, {}).update(_summarize_run(res))
    gate_failures = [(d, f) for (_job, d), res in results.items() for f in _check_failures(res)]
    failed = [k for k, res in results.items() if not res.success] or gate_failures
    print_summary(cfg, summaries, time.monotonic() - t0)
    print_failed_gates(gate_failures)
    return 1 if failed else 0


def print_mcp_servers(stats: dict[str, dict[str, int]]) -> None:
    """One line per MCP server the run used: its starts (1 per run), restarts after a crash, idle stops."""
    for locator, st in stats.items():
        print(
            f"MCP server {locator}: {st['shared_starts']} start(s), {st['private_starts']} private, "
            f"{st['restarts']} restart(s) after a crash, {st['idle_stops']} idle stop(s); stopped"
        )


PATTERNS = ("SEQ", "FAN", "DRV", "SEM", "CMP", "COND", "MIXED")


def _fmt(v: Any, spec: str = "") -> str:
    if v is None or v == "":
        return "-"
    try:
        return format(v, spec)
    except (TypeError, ValueError):
        return str(v)


def print_summary(cfg: Any, summaries: dict[str, dict[str, dict[str, Any]]], elapsed: float) -> None:
    from factory.io import artifact_rel, data_store

    layout = artifact_rel("<asset>", "<domain>")
    print(f"\nOutputs under {data_store(cfg).base}/{layout}.(json|parquet); Dagster instance in $DAGSTER_HOME")
    domains = [d for d in summaries if d != "(global)"]
    print("\ningestion")
    print(f"{'domain':<10} {'tools':>5} {'platforms':>9} {'probes':>6} {'tools ok':>8} {'max total':>9}  fingerprint")
    tot_tools = 0
    for d in domains:
        inv = summaries[d].get("tool_inventory", {})
        pr = summaries[d].get("tool_probes", {})
        tot_tools += int(inv.get("tools", 0) or 0)
        print(
            f"{d:<10} {_fmt(inv.get('tools')):>5} {_fmt(inv.get('platforms')):>9} {_fmt(pr.get('probes')):>6} "
            f"{_fmt(pr.get('tool_success_share'), '.2f'):>8} {_fmt(pr.get('max_total_count')):>9}  "
            f"{str(inv.get('fingerprint', ''))[:19]}"
        )
    if any("connectivity_graph" in summaries[d] for d in domains):
        print("\nconnectivity graph (EDGE Phase A)")
        print(
            f"{'domain':<10} {'cand.':>5} {'admit':>5} {'kept':>5} {'pruned':>6} "
            f"{'ok skel/kept/pruned':>20} {'pass rate':>12} {'entities':>8}"
        )
        for d in domains:
            sk = summaries[d].get("skeleton_graph", {})
            cg = summaries[d].get("connectivity_graph", {})
            kg = summaries[d].get("knowledge_graph", {})
            rates = "/".join(_fmt(cg.get(f"success_rate/{g}/loop"), ".2f") for g in ("skeleton", "retained", "pruned"))
            passes = f"{_fmt(cg.get('first_pass_rate'), '.2f')}→{_fmt(cg.get('last_pass_rate'), '.2f')}"
            print(
                f"{d:<10} {_fmt(sk.get('candidates')):>5} {_fmt(sk.get('admitted')):>5} {_fmt(cg.get('retained')):>5} "
                f"{_fmt(cg.get('pruned')):>6} {rates:>20} {passes:>12} {_fmt(kg.get('entities')):>8}"
            )
    if any("trajectories" in summaries[d] for d in domains):
        print("\ntrajectories and queries (EDGE Phase B)")
        print(
            f"{'domain':<10} {'tasks':>5} {'SEQ':>4} {'FAN':>4} {'DRV':>4} {'SEM':>4} {'CMP':>4} {'COND':>4} "
            f"{'MIXED':>5} {'calls mean/max':>14} {'1:N':>5} {'card med/max':>12} {'queries':>7} {'fallbk':>6}"
        )
        for d in domains:
            tr = summaries[d].get("trajectories", {})
            gq = summaries[d].get("generated_queries", {})
            cats = tr.get("by_category") or {}
            per = " ".join(f"{_fmt(cats.get(c, 0)):>{w}}" for c, w in zip(PATTERNS, (4, 4, 4, 4, 4, 4, 5), strict=True))
            calls = f"{_fmt(tr.get('calls_mean'), '.1f')}/{_fmt(tr.get('calls_max'))}"
            card = f"{_fmt(tr.get('chained_cardinality_median'))}/{_fmt(tr.get('chained_cardinality_max'))}"
            print(
                f"{d:<10} {_fmt(tr.get('tasks')):>5} {per} {calls:>14} {_fmt(tr.get('one_to_many_share'), '.2f'):>5} "
                f"{card:>12} {_fmt(gq.get('tasks')):>7} {_fmt(gq.get('grounding_fallbacks')):>6}"
            )
    if any("judged_queries" in summaries[d] for d in domains):
        print("\njudged queries (EDGE App. F: rules → judges → re-solving)")
        print(
            f"{'domain':<10} {'cand.':>5} {'kept':>5} {'rules':>5} {'judges':>6} {'resolve':>7} {'replaced':>8}  top reasons"
        )
        for d in domains:
            jq = summaries[d].get("judged_queries", {})
            by_reason = jq.get("by_reason") or {}
            top = ", ".join(f"{r} {n}" for r, n in sorted(by_reason.items(), key=lambda x: -x[1]) if n)[:60]
            print(
                f"{d:<10} {_fmt(jq.get('candidates')):>5} {_fmt(jq.get('kept')):>5} {_fmt(jq.get('rejected_rules')):>5} "
                f"{_fmt(jq.get('rejected_judges')):>6} {_fmt(jq.get('rejected_resolve')):>7} "
                f"{_fmt(jq.get('answers_replaced')):>8}  {top or '-'}"
            )
    from factory.report import yield_lines, yield_rows

    syn = cfg.synthesis
    lines = yield_lines(yield_rows(summaries, quota=syn.per_pattern * len(syn.patterns)))
    if lines:
        print("\n" + "\n".join(lines))
        print(
            f"  more data: synthesis.per_pattern ({syn.per_pattern}) and synthesis.attempts ({syn.attempts}) in "
            "factory.yaml (README, Making more data)"
        )
    glob = summaries.get("(global)", {})
    sp = glob.get("dataset_splits", {})
    if sp:
        splits = " ".join(f"{k[6:]} {v}" for k, v in sp.items() if k.startswith("split_") and isinstance(v, int))
        removed = sum(v for k, v in sp.items() if k.startswith("removed_") and isinstance(v, int))
        print(
            f"\ndataset_splits: {_fmt(sp.get('tasks_out'))} of {_fmt(sp.get('tasks_in'))} tasks ({splits}); "
            f"{removed} removed (near/structural duplicates, benchmark collisions); "
            f"train↔benchmark collisions {_fmt(sp.get('train_benchmark_collisions'))}"
        )
    ex = glob.get("dataset_exports", {})
    if ex:
        rows = {k.split("/")[1] for k in ex if k.startswith("rows/")}
        print(
            f"dataset_exports: {', '.join(sorted(rows))}; dropped {_fmt(ex.get('dropped'))}, "
            f"flagged {_fmt(ex.get('flagged'))}; card {ex.get('card', '')}"
        )
    cat = summaries.get("(global)", {}).get("tool_catalog", {})
    if cat:
        print(f"\ntool_catalog: {cat.get('tools')} tools, {cat.get('embedding_dim')}-d embeddings")
    print(f"total: {tot_tools} tools in {len(domains)} domains; {elapsed:.1f}s")


def _selected_domains(args: argparse.Namespace, cfg: Any, path: Any) -> list[str]:
    domains = [d.strip() for d in args.domains.split(",") if d.strip()] if args.domains else cfg.domain_names
    unknown = [d for d in domains if d not in cfg.domain_names]
    if unknown or not domains:  # before any work: exit 2 with the configured names, no traceback
        raise ConfigError(
            f"--domains: unknown domain(s) {', '.join(repr(d) for d in unknown) or '(none given)'}"
            f" in {path}; configured: {', '.join(cfg.domain_names)}"
        )
    return domains


def cmd_plan(args: argparse.Namespace) -> int:
    """Dry run: per domain, which tools probing would call and with what kind of values, which it holds back and why."""
    from factory.plan import format_plan, plan_tools
    from factory.resources import DemoServiceResource
    from factory.tools.sources import SourceError, load_domain_tools

    path = find_config(args.config)
    cfg = load_config(path)
    selected = [cfg.domain(d) for d in _selected_domains(args, cfg, path)]
    failed = 0
    with DemoServiceResource(log_dir=str(cfg.logs_dir)).serving(cfg, stop=True, domains=selected):
        for domain in selected:
            try:
                tools = load_domain_tools(domain, cfg)
            except SourceError as e:
                print(f"domain {domain.name}: cannot read its tools: {e}")
                failed += 1
                continue
            print(format_plan(domain.name, plan_tools(tools, cfg), cfg.probes.per_tool))
    print("nothing was executed (factory plan lists tools and reads documents only)")
    return 1 if failed else 0


def cmd_sync(args: argparse.Namespace) -> int:
    import dagster as dg

    from sensors.partitions import sync_domain_partitions

    cfg = load_config(args.config)
    ensure_dagster_home(cfg.dagster_home)
    added, removed = sync_domain_partitions(dg.DagsterInstance.get(), cfg.domain_names)
    print(f"domain partitions: {cfg.domain_names} (added {added}, removed {removed})")
    return 0


def cmd_check_config(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    print(f"config ok: {cfg} — domains: {', '.join(cfg.domain_names)}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from factory.demo.service import DemoService

    cfg = load_config(args.config)
    svc = DemoService(cfg.demo, log_dir=str(cfg.logs_dir))
    if args.stop:
        pid = svc.shutdown()
        print(
            f"stopped the demo service at {cfg.demo.base_url} (pid {pid})"
            if pid
            else f"no demo service at {cfg.demo.base_url}"
        )
        return 0
    svc.ensure_running()
    print(f"demo service at {cfg.demo.base_url} (Ctrl-C to stop)")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        svc.stop()
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from factory.starter import StarterError, write_starter

    try:
        written = write_starter(args.dir, force=args.force)
    except StarterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"new project in {written[0].parent}:")
    for f in written:
        print(f"  {f.name}")
    print("next: cd there, then `factory run` (see README.md)")
    return 0


CONFIG_HELP = "project config (default: $FACTORY_CONFIG, else factory.yaml here or in the nearest parent folder)"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="factory", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--config", default=None, help=CONFIG_HELP)
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="cmd", required=True)
    i = sub.add_parser("init", help="write a starter project (factory.yaml, .env.example, README.md, workspace.yaml)")
    i.add_argument("dir", nargs="?", default=".", help="project folder (default: the working directory)")
    i.add_argument("--force", action="store_true", help="overwrite starter files that already exist")
    i.set_defaults(func=cmd_init)
    r = sub.add_parser("run", help="start the demo service and materialize every asset for every domain")
    r.add_argument("--domains", default=None, help="comma-separated subset of domains")
    r.add_argument("--keep-going", action="store_true", help="run global assets even if a domain failed")
    r.set_defaults(func=cmd_run)
    pl = sub.add_parser(
        "plan", help="dry run: per domain, the tools probing would call (and with what values) and those held back"
    )
    pl.add_argument("--domains", default=None, help="comma-separated subset of domains")
    pl.set_defaults(func=cmd_plan)
    s = sub.add_parser("sync-partitions", help="make the `domain` dynamic partitions equal the config")
    s.set_defaults(func=cmd_sync)
    c = sub.add_parser("check-config", help="validate the config and print its slug")
    c.set_defaults(func=cmd_check_config)
    d = sub.add_parser("demo", help="serve the bundled demo service in the foreground (--stop: stop a running one)")
    d.add_argument("--stop", action="store_true", help="stop the demo service answering at the configured port")
    d.set_defaults(func=cmd_demo)
    # commands owned by their packages (imported lazily inside their handlers)
    from factory.audit import cli as audit_cli
    from factory.eval import cli as eval_cli
    from factory.lineage import register as register_lineage

    eval_cli.register(sub)
    from factory.variants import cli as variants_cli  # `factory eval --variants`: the schema-variant grid

    variants_cli.extend_eval(sub.choices["eval"])
    from factory.conversations import cli as conversations_cli  # `factory eval --conversations` (issue 19)

    conversations_cli.extend_eval(sub.choices["eval"])
    variants_cli.register_proxy(sub)  # `factory proxy`: the schema proxy
    register_lineage(sub)
    audit_cli.register(sub)
    for name, sp in sub.choices.items():  # `factory run --config F` as well as `factory --config F run`
        if name != "init":
            sp.add_argument("--config", default=argparse.SUPPRESS, help=CONFIG_HELP)
    return p


def configure_logging(verbose: bool) -> None:
    """The console handler (INFO with -v, else WARNING), with API keys redacted in every record."""
    from factory.redaction import install_log_redaction

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    install_log_redaction()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    try:
        return args.func(args)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
