"""Asset jobs, and the order in which the main job runs them.

The graph alternates between per-domain and global work: every domain is
ingested, then the global catalog (cross-domain embeddings) is built, then
each domain's synthesis stages run, then the global dataset stages.
"""

from collections.abc import Collection

import dagster as dg

from assets.partitions import domain_partitions

GLOBAL_CATALOG_ASSETS = ["tool_catalog"]
INGESTION_GROUP = "ingestion"
# per-domain groups that run after the catalog
SYNTHESIS_GROUPS = ["lexicon", "graph", "synthesis", "judging", "variants"]

domain_ingestion_job = dg.define_asset_job(
    name="domain_ingestion",
    selection=dg.AssetSelection.groups(INGESTION_GROUP) - dg.AssetSelection.assets(*GLOBAL_CATALOG_ASSETS),
    partitions_def=domain_partitions,
    description="Per-domain ingestion: tool_inventory and tool_probes.",
)

global_catalog_job = dg.define_asset_job(
    name="global_catalog",
    selection=dg.AssetSelection.assets(*GLOBAL_CATALOG_ASSETS),
    description="Global assets built from every domain's inventory (tool_catalog).",
)

domain_synthesis_job = dg.define_asset_job(
    name="domain_synthesis",
    selection=dg.AssetSelection.groups(*SYNTHESIS_GROUPS),
    partitions_def=domain_partitions,
    description="Per-domain synthesis stages that need the global catalog or every domain's inventory "
    "(lexicon, graph, ...).",
)

DATASET_GROUP = "dataset"  # global: dataset_splits, dataset_exports
EVALUATION_GROUP = "evaluation"  # global, on demand: evaluation_report

global_dataset_job = dg.define_asset_job(
    name="global_dataset",
    selection=dg.AssetSelection.groups(DATASET_GROUP),
    description="Global dataset assets built from every domain's judged tasks (dataset_splits, dataset_exports).",
)

evaluation_job = dg.define_asset_job(
    name="evaluation",
    selection=dg.AssetSelection.groups(EVALUATION_GROUP),
    description="On demand: evaluate a model on a split (evaluation_report); not part of the main job.",
)

CORPUS_GROUP = "retrieval_corpus"  # per-domain: retrieval_corpus, retrieval_synthesis_index (before ingestion)
RETRIEVAL_GROUP = "retrieval"  # per-domain: retrieval_index (decontaminated against the published splits)

domain_corpus_job = dg.define_asset_job(
    name="domain_corpus",
    selection=dg.AssetSelection.groups(CORPUS_GROUP),
    partitions_def=domain_partitions,
    description="Per-domain document corpora (retrieval_corpus) and the pre-synthesis index version synthesis "
    "searches (retrieval_synthesis_index); first, since the search tool is a source of the domain's inventory.",
)

domain_retrieval_job = dg.define_asset_job(
    name="domain_retrieval",
    selection=dg.AssetSelection.groups(RETRIEVAL_GROUP),
    partitions_def=domain_partitions,
    description="Per-domain retrieval indices, decontaminated against the dataset splits (retrieval_index).",
)

JOBS = [
    domain_ingestion_job,
    global_catalog_job,
    domain_synthesis_job,
    global_dataset_job,
    domain_corpus_job,
    domain_retrieval_job,
    evaluation_job,
]

# (job name, per-domain?) in the order the main job (`factory run`) executes them
PIPELINE_STAGES: list[tuple[str, bool]] = [
    ("domain_corpus", True),  # first: the synthesis index is a tool source of domain_ingestion (issue 17)
    ("domain_ingestion", True),
    ("global_catalog", False),
    ("domain_synthesis", True),
    ("global_dataset", False),
    ("domain_retrieval", True),
]


def _process_tags() -> dict[str, str]:
    import os
    import socket

    from factory.resources import HOST_TAG, PID_TAG

    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def run_pipeline(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    domains: list[str],
    *,
    run_config: dict | None = None,
    keep_going: bool = False,
    progress=print,
    only: Collection[str] | None = None,
) -> dict[tuple[str, str], dg.ExecuteInProcessResult]:
    """Run PIPELINE_STAGES in order, in process; a domain whose stage fails is not run further.

    Returns {(job name, domain or "(global)"): result}. Global stages are skipped after a
    failure unless `keep_going`. `only`: run just these assets of each job (a stage left with
    none is skipped), e.g. everything up to the graph.
    """
    import time

    results: dict[tuple[str, str], dg.ExecuteInProcessResult] = {}
    failed: set[str] = set()
    for job_name, per_domain in PIPELINE_STAGES:
        job = defs.resolve_job_def(job_name)
        assets = sorted(k.to_user_string() for k in job.asset_layer.executable_asset_keys)
        if only is not None:
            assets = [a for a in assets if a in only]
        if not assets:
            continue
        for d in domains if per_domain else ["(global)"]:
            if d in failed or (not per_domain and failed and not keep_going):
                progress(f"[{d}] {job_name}: skipped (an earlier stage failed)")
                continue
            t = time.monotonic()
            progress(f"[{d}] {job_name}: {', '.join(assets)} ...")
            res = job.execute_in_process(
                partition_key=d if per_domain else None,
                instance=instance,
                raise_on_error=False,
                run_config=run_config,
                asset_selection=[dg.AssetKey(a) for a in assets] if only is not None else None,
                tags=_process_tags(),  # lets a later start tell an orphan (killed) run from a live one
            )
            results[(job_name, d)] = res
            fails = [
                f"{e.asset_check_key.asset_key.to_user_string()}:{e.asset_check_key.name}"
                + (f" ({e.description})" if e.description else "")  # the gate's headline names the rows
                for e in res.get_asset_check_evaluations()
                if not e.passed
            ]
            ok = res.success and not fails
            note = f"; failed checks: {', '.join(fails)}" if fails else ""
            progress(
                f"[{d}] {job_name}: {'ok' if ok else 'FAILED'} in {time.monotonic() - t:.1f}s (run {res.run_id[:8]}){note}"
            )
            if not ok:
                failed.add(d)
    return results
