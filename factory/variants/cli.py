"""`factory eval --variants ...`: the model × schema-variant grid (factory/variants/grid.py) from the CLI.

    factory eval --variants all                     # golden oracle (no model configured): 1.0 everywhere
    factory eval --variants merge_full_flat,transaction_all --backend local --max-tasks 5
    factory eval --variants all --variant-modes normal,schema_form --variant-instruction

Writes variants_report.json (cells with Wilson intervals, failure modes, schema-form gap, every
episode) and variants_report.md under <data_dir>/evaluations/variants-<id>/ (or --out).
"""

import argparse
import hashlib
import json
from typing import Any

from factory.report import md_table


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--variants",
        default=None,
        help="run the schema-variant grid instead: 'all' or comma-separated variant ids (factory/variants/registry.py)",
    )
    p.add_argument(
        "--variant-modes",
        default="normal",
        help="comma-separated adapter modes: normal (off-schema calls rejected), schema_form (decoded when they "
        "are native calls); both give the schema-form gap",
    )
    p.add_argument("--variant-instruction", action="store_true", help="append each variant's one-sentence instruction")
    p.add_argument("--first-call-required", action="store_true", help="tool_choice=required on the first turn")


def extend_eval(p: argparse.ArgumentParser) -> None:
    """Add the grid's options to the `eval` subcommand; `--variants` runs the grid instead of the harness."""
    add_arguments(p)
    harness = p.get_default("func")

    def cmd(args: argparse.Namespace) -> int:
        if getattr(args, "variants", None):
            from factory.eval.cli import _out

            return run(args, _out)
        return int(harness(args))

    p.set_defaults(func=cmd)


def run(args: argparse.Namespace, out: Any) -> int:
    import sys

    from factory.config import load_config
    from factory.demo.service import DemoService, DemoServiceError
    from factory.eval.cli import _task_source, _uses_demo
    from factory.eval.harness import EvalError, EvalSettings, load_inventories, load_tasks, select_tasks
    from factory.eval.oracle import ORACLE
    from factory.io import Store, data_store
    from factory.llm.errors import LLMError
    from factory.llm.service import LLM
    from factory.variants.core import VariantError
    from factory.variants.grid import GridSettings, evaluate_grid
    from factory.variants.registry import VARIANT_IDS

    cfg = load_config(args.config)
    ids = None if args.variants.strip().lower() == "all" else [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(ids or []) - {"native", *VARIANT_IDS})
    if unknown:
        sys.stderr.write(f"error: unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANT_IDS)}\n")
        return 2
    modes = [m.strip() for m in args.variant_modes.split(",") if m.strip()]
    if not modes or set(modes) - {"normal", "schema_form"}:
        sys.stderr.write("error: --variant-modes takes normal and/or schema_form\n")
        return 2
    llm, demo = None, None
    try:
        settings = EvalSettings.resolve(
            cfg,
            backend=args.backend,
            split=args.split,
            max_tasks=args.max_tasks,
            max_turns=args.max_turns,
            temperature=args.temperature,
            domains=[d.strip() for d in args.domains.split(",") if d.strip()] if args.domains else None,
        )
        value, source = _task_source(cfg, args.tasks)
        tasks, _ = select_tasks(load_tasks(value), settings)
        rows = [t.model_dump(mode="json", by_alias=True) for t in tasks]
        domains = {t.domain for t in tasks}
        inventories = load_inventories(cfg, sorted(domains | set(cfg.domain_names)))
        backend = None
        if settings.backend != ORACLE:
            llm = LLM(cfg.resolved_models())
            backend = llm.backend_variant(settings.backend, temperature=settings.temperature, seed=settings.seed)
        model = "golden-oracle" if backend is None else backend.model
        out(f"schema-variant grid: {model} on {len(rows)} task(s) from {source}; modes {', '.join(modes)}")
        if _uses_demo(cfg, domains) and not args.no_start_demo:
            demo = DemoService(cfg.demo, log_dir=cfg.logs_dir)
            demo.ensure_running()
        grid = GridSettings(
            max_turns=settings.max_turns,
            max_calls=settings.max_calls,
            loop_repeats=settings.loop_repeats,
            max_observation_chars=settings.max_observation_chars,
            instruction=args.variant_instruction,
            first_call_required=args.first_call_required,
        )
        embed = None
        if cfg.variants.semantic_grouping:
            from factory.embed import Embedder

            embed = Embedder(cfg.resolved_models().embeddings).encode
        result = evaluate_grid(
            rows,
            inventories,
            cfg,
            backend,
            ids,
            modes=modes,
            settings=grid,
            embed=embed,
            progress=None if args.quiet else out,
        )
    except (EvalError, DemoServiceError, LLMError, VariantError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    finally:
        if demo is not None:
            demo.close()
        if llm is not None:
            llm.close()
    report = {"model": model, "modes": modes, "tasks": len(rows), **result}
    eid = hashlib.sha256(json.dumps([model, ids, modes, sorted(r["id"] for r in rows)]).encode()).hexdigest()[:12]
    store = Store(args.out) if args.out else data_store(cfg)
    folder = "" if args.out else f"evaluations/variants-{eid}"
    cols = ["variant", "mode", "episodes", "success", "ci_low", "ci_high", "schema_form_gap", "mean_calls"]
    table = md_table(result["cells"], columns=cols, limit=1000)
    prefix = f"{folder}/" if folder else ""
    store.write_json(f"{prefix}variants_report.json", report)
    store.write_bytes(f"{prefix}variants_report.md", f"# Schema-variant grid: {model}\n\n{table}\n".encode())
    out("")
    out(str(table))
    out(f"\nreport: {store.path(prefix + 'variants_report.md')}")
    return 0


# --------------------------------------------------------------------------- factory proxy

PROXY_PORT = 8790


def register_proxy(sub: Any) -> None:
    """`factory proxy`: serve the schema proxy (factory/variants/proxy.py) for one domain."""
    from factory.variants.adapter import MODES

    p = sub.add_parser(
        "proxy",
        help="serve an OpenAI-compatible schema proxy: the model behind it sees a schema variant, its calls run "
        "as native actions against the domain's tools",
    )
    p.add_argument("--variant", required=True, help="the variant id (native, or one of factory/variants/registry.py)")
    p.add_argument(
        "--upstream", required=True, help="the upstream model endpoint's OpenAI base URL, e.g. http://127.0.0.1:8080/v1"
    )
    p.add_argument("--domain", default=None, help="the domain whose tools it serves (default: the project's only one)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=PROXY_PORT, help=f"default {PROXY_PORT}")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="normal",
        help="normal: off-schema calls are rejected; schema_form: executed when they are valid native calls",
    )
    p.add_argument("--instruction", action="store_true", help="append the variant's one-sentence instruction")
    p.add_argument(
        "--upstream-key-env",
        default=None,
        help="environment variable holding the upstream's API key (default: the client's Authorization header "
        "is forwarded)",
    )
    p.add_argument("--no-start-demo", action="store_true", help="do not start the demo service")
    p.set_defaults(func=cmd_proxy)


def cmd_proxy(args: argparse.Namespace) -> int:
    import os
    import sys

    from factory.config import load_config
    from factory.demo.service import DemoService, DemoServiceError
    from factory.eval.cli import _out, _uses_demo
    from factory.eval.harness import EvalError, load_inventories
    from factory.io import data_store, read_artifact
    from factory.tools.registry import ToolRegistry, executor_factory
    from factory.variants.actions import native_catalog
    from factory.variants.build import inventory_specs
    from factory.variants.core import VariantError
    from factory.variants.proxy import ProxyError, ProxySettings, SchemaProxy, VariantBook, create_app, executor_world
    from factory.variants.registry import VARIANT_IDS, recipe

    def fail(message: str) -> int:
        sys.stderr.write(f"error: {message}\n")
        return 2

    if args.variant not in ("native", *VARIANT_IDS):
        return fail(f"unknown variant {args.variant!r}; known: native, {', '.join(VARIANT_IDS)}")
    key = None
    if args.upstream_key_env:
        key = os.environ.get(args.upstream_key_env)
        if not key:
            return fail(f"--upstream-key-env: environment variable {args.upstream_key_env} is not set")
    try:
        settings = ProxySettings(
            upstream=args.upstream, variant=args.variant, mode=args.mode, instruction=args.instruction, upstream_key=key
        )
    except ValueError as e:
        return fail(str(e))
    cfg = load_config(args.config)
    names = cfg.domain_names
    domain = args.domain or (names[0] if len(names) == 1 else None)
    if domain is None:
        return fail(f"--domain: the project has {len(names)} domains ({', '.join(names)}); name the one to serve")
    if domain not in names:
        return fail(f"--domain: no domain {domain!r} in the project (domains: {', '.join(names)})")
    try:
        inventories = load_inventories(cfg, [domain])
        specs = [s for s in inventory_specs(inventories) if s.domain == domain]
        native = native_catalog(domain, specs)
        embed = None
        if args.variant != "native" and recipe(args.variant).needs_embedder and cfg.variants.semantic_grouping:
            from factory.embed import Embedder

            embed = Embedder(cfg.resolved_models().embeddings).encode
        book = VariantBook(native, embed)
        variant = book.get(args.variant)  # fails here, not on the first request
    except (ValueError, EvalError, VariantError) as e:
        return fail(str(e))
    except ProxyError as e:
        return fail(e.message)
    published = read_artifact(data_store(cfg), "schema_variants", domain, default=None)
    row = next((v for v in (published or {}).get("variants", []) if v.get("id") == args.variant), None)
    if row is not None and not row.get("published"):
        _out(f"warning: the validator did not publish {args.variant} for {domain}: {row.get('failure')}")
    demo = None
    try:
        if _uses_demo(cfg, {domain}) and not args.no_start_demo:
            demo = DemoService(cfg.demo, log_dir=cfg.logs_dir)
            demo.ensure_running()
        import uvicorn

        make = executor_factory(cfg, [domain], ToolRegistry.from_inventories(inventories))
        app = create_app(SchemaProxy(settings, book), executor_world(make, specs))
        _out(
            f"schema proxy for {domain}: variant {variant.id} ({len(variant.schema.tools)} tools, mode {args.mode}) "
            f"at http://{args.host}:{args.port}/v1 → {args.upstream}; at most {settings.max_model_calls} model calls "
            "per turn; another variant per request: header X-Factory-Variant"
        )
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except DemoServiceError as e:
        return fail(str(e))
    finally:
        if demo is not None:
            demo.close()
    return 0
