"""Schema-variant assets: schema_variants per domain (Action-Space Shaping, #18)."""

import dagster as dg

from assets._meta import gate, gate_result, to_metadata
from assets.partitions import domain_partitions
from factory import quality
from factory.llm.resource import EmbeddingsResource
from factory.resources import DemoServiceResource, ProjectResource, all_partitions_in
from factory.tools.registry import ToolRegistry, executor_factory
from factory.variants import build
from factory.versions import code_version

GROUP = "variants"


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(build, "factory.embed", resources=["expectations/schema_variants.json"]),
    kinds={"python"},
    ins={"judged_queries": dg.AssetIn(), "tool_inventory": all_partitions_in()},
    description="Verified-equivalent tool schemas of the domain (merge, split, nest, rename, strip, reorder, "
    "transaction, reference resolution, schema discovery, composed): every kept task's golden path is encoded "
    "into each variant, decoded by the execution adapter and executed against the live tools; a variant is "
    "published only when every task gives native's actions, results and final state. Published variants carry "
    "their tools and each task's golden variant trace.",
)
def schema_variants(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    demo: DemoServiceResource,
    embeddings: EmbeddingsResource,
    judged_queries: dict,
    tool_inventory: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    domain = context.partition_key
    if not cfg.variants.enabled:
        value, meta = build.disabled(domain)
        return dg.Output(value, metadata=to_metadata(meta))
    make_executor = executor_factory(cfg, [domain], ToolRegistry.from_inventories(tool_inventory))
    embed = embeddings.get().encode if cfg.variants.semantic_grouping else None
    with demo.serving(cfg, cfg.domain(domain)):
        value, meta = build.schema_variants(
            domain, judged_queries, tool_inventory, cfg, make_executor, embed, progress=context.log.info
        )
    return dg.Output(value, metadata=to_metadata(meta))


@gate(
    asset=schema_variants,
    partitions_def=domain_partitions,
    description="GX suite expectations/schema_variants.json: every published variant reproduces every task's "
    "native actions, results and final state hashes; at least variants.min_published are published.",
)
def schema_variants_validated(project: ProjectResource, schema_variants: dict) -> dg.AssetCheckResult:
    return gate_result(quality.validate("schema_variants", build.checks_frame(schema_variants), project.load()))


ASSETS = [schema_variants]
CHECKS = [schema_variants_validated]
