"""Asset jobs: the per-domain pipeline and the global stages."""

import dagster as dg

from assets.partitions import domain_partitions

# Every per-domain asset; the global ones (catalog and later splits/exports) run after all domains.
domain_pipeline_job = dg.define_asset_job(
    name="domain_pipeline",
    selection=dg.AssetSelection.groups("ingestion") - dg.AssetSelection.assets("tool_catalog"),
    partitions_def=domain_partitions,
    description="Every per-domain asset for one domain partition.",
)

global_job = dg.define_asset_job(
    name="global_assets",
    selection=dg.AssetSelection.assets("tool_catalog"),
    description="Global assets built from every domain (tool_catalog).",
)

JOBS = [domain_pipeline_job, global_job]
