"""dataset_exports (global): the splits as OpenAI chat JSONL, HF-datasets Parquet + card, RL (GRPO) rows and
benchmark-task JSON, published all-or-nothing under <data_dir>/exports/<version>/. The core is factory/export/."""

from contextlib import nullcontext

import dagster as dg

from assets._meta import gate, gate_result, to_metadata
from factory import prompts, quality
from factory.export import build
from factory.export.conversations import current_conversations
from factory.export.variants import current_variants
from factory.io import read_artifact
from factory.report import Markdown, md_table
from factory.resources import DemoServiceResource, ProjectResource, all_partitions_in, uses_demo
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.retrieval import served_inventories
from factory.versions import code_version

GROUP = "release"  # sensors/jobs.py: global_release, after domain_retrieval (the served retrieval indices)
SYSTEM_PROMPTS = [n for n in prompts.list_templates() if n.startswith("export/")]


@dg.asset(
    name="dataset_exports",
    group_name=GROUP,
    code_version=code_version(build, resources=["expectations/dataset_exports.json"])
    + prompts.prompts_version(SYSTEM_PROMPTS),
    kinds={"python", "parquet", "json"},
    ins={
        "dataset_splits": dg.AssetIn(),
        "tool_inventory": all_partitions_in(),
        "trajectories": all_partitions_in(),
        # the card's Limitations: query-writing and judge rejections by reason
        "generated_queries": all_partitions_in(),
        "judged_queries": all_partitions_in(),
    },
    # issue 19: the conversation files come from the stored `conversations` value when there is one (a
    # dependency, not an input, so the export runs without it)
    deps=[
        "conversations",
        "schema_variants",  # issue 18: variant rows from the stored schema_variants values
        # issue 17: search tools defined and replayed against the published retrieval_index (`served_inventories`)
        dg.AssetDep("retrieval_index", partition_mapping=dg.AllPartitionMapping()),
    ],
    description="The split tasks in four formats per split: OpenAI chat fine-tuning JSONL (tool calls and their "
    "results), Hugging Face Parquet with a dataset card, RL (GRPO) prompts with ground truth, benchmark-task JSON. "
    "Tool results come from re-executing every task's golden actions against the live tools, each result digest "
    "checked against the stored one (mismatches dropped with the reason). Every file is read back and every row "
    "validated before the export is published, all or nothing, under <data_dir>/exports/<version>/, and only once the "
    "blocking read-back check passed (a failing check leaves the previous export current).",
)
def dataset_exports(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    demo: DemoServiceResource,
    dataset_splits: dict,
    tool_inventory: dict,
    trajectories: dict,
    generated_queries: dict,
    judged_queries: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    conversations = current_conversations(read_artifact(cfg, "conversations", default=None), dataset_splits)
    variants = current_variants(
        {d.name: read_artifact(cfg, "schema_variants", d.name, default=None) for d in cfg.domains}, dataset_splits
    )
    replay = cfg.exports.tool_results == "replay"
    # executors as at synthesis time (the scan profile), so replayed result digests are comparable
    # (search tools replayed against the published retrieval_index, as the exported definitions name it)
    served = ToolRegistry.from_inventories(served_inventories(tool_inventory, cfg))
    make = executor_factory(cfg, None, served, scan=True) if replay else None
    needs_demo = replay and any(uses_demo(d) for d in cfg.domains if d.name in tool_inventory)
    with demo.serving(cfg) if needs_demo else nullcontext():
        manifest, meta = build.build_exports(
            dataset_splits,
            tool_inventory,
            trajectories,
            cfg,
            make_executor=make,
            progress=context.log.info,
            stage_only=True,  # published (LATEST.json) once the read-back check passed
            judged=judged_queries,
            queries=generated_queries,
            conversations=conversations,  # issue 19: conversation files beside the task formats
            variants=variants,  # issue 18: every task under each published schema variant
        )
    context.log.info(
        f"dataset_exports {manifest['version']} (staged): {manifest['tasks']} tasks {manifest['splits']}, "
        f"{len(manifest['dropped'])} dropped, {len(manifest['flagged'])} flagged"
    )
    return dg.Output(manifest, metadata=to_metadata(meta))


@gate(
    asset=dataset_exports,
    description="GX suite expectations/dataset_exports.json on the published export, read back from its own "
    "manifest: sha256 of every file, every file parses, every row validates (every tool call answered by one tool "
    "message, tool names among the tools, RL ground truth complete, benchmark rows are Task records), row counts, "
    "no key-format string anywhere.",
)
def dataset_exports_read_back(project: ProjectResource, dataset_exports: dict) -> dg.AssetCheckResult:
    cfg = project.load()
    reports = build.read_back(dataset_exports, cfg.exports.secret_patterns)
    problems = build.problems_of(reports)
    extra = {
        "files_checked": len(reports),
        "rows_checked": sum(r["rows_read"] for r in reports),
        "problems": Markdown(md_table([{"problem": p} for p in problems], limit=20)),
    }
    return gate_result(quality.validate("dataset_exports", build.reports_frame(reports)), extra)


ASSETS: list = [dataset_exports]
CHECKS: list = [dataset_exports_read_back]
