"""Ingestion assets: tool_inventory, tool_probes (per domain) and tool_catalog (global)."""

import dagster as dg

from assets._meta import gate, gate_result, to_metadata
from assets.partitions import domain_partitions
from factory import ingest, quality
from factory.llm.resource import EmbeddingsResource, LLMResource, llm_metadata
from factory.resources import DemoServiceResource, ProjectResource, all_partitions_in
from factory.versions import code_version

GROUP = "ingestion"


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(ingest),
    kinds={"python", "openapi"},
    deps=[dg.AssetDep("retrieval_synthesis_index")],  # a `retrieval` source pins its version (issue 17)
    description="ToolSpecs read from every source of the domain (OpenAPI/Swagger documents, MCP servers), "
    "with the tool-surface fingerprint.",
)
def tool_inventory(
    context: dg.AssetExecutionContext, project: ProjectResource, demo: DemoServiceResource
) -> dg.Output[dict]:
    cfg = project.load()
    domain = cfg.domain(context.partition_key)
    with demo.serving(cfg, domain):
        value, meta = ingest.build_inventory(domain, cfg)
    context.log.info(f"{domain.name}: {meta['tools']} tools on {meta['platforms']} platforms, {meta['fingerprint']}")
    return dg.Output(value, metadata=to_metadata(meta))


@gate(
    asset=tool_inventory,
    partitions_def=domain_partitions,
    description="GX suite expectations/tool_inventory.json: names, descriptions, valid schemas, no duplicates, fingerprint.",
)
def tool_inventory_contract(tool_inventory: dict) -> dg.AssetCheckResult:
    return gate_result(quality.validate("tool_inventory", ingest.inventory_frame(tool_inventory)))


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(ingest, resources=["prompts/source_arguments"]),
    kinds={"python"},
    description="A few real executions per tool, in rounds, with discovered arguments (factory.tools.argvalues: "
    "schema, descriptions, server paths, values other tools returned in earlier rounds, SQL/timezone "
    "conventions; the source_arguments role where a model serves it): outcome class, cardinality, sampled "
    "output values, and per tool without a success why.",
)
def tool_probes(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    demo: DemoServiceResource,
    llm: LLMResource,
    tool_inventory: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    domain = cfg.domain(context.partition_key)
    model = llm.get()
    with model.track() as acct, demo.serving(cfg, domain):
        value, meta = ingest.run_probes(tool_inventory, cfg, progress=context.log.info, model=model)
    return dg.Output(value, metadata={**to_metadata(meta), **llm_metadata(acct)})


@gate(
    asset=tool_probes,
    partitions_def=domain_partitions,
    description="GX suite expectations/tool_probes.json: outcomes in the EDGE taxonomy, digests, no secrets.",
)
def tool_probes_taxonomy(tool_probes: dict) -> dg.AssetCheckResult:
    return gate_result(quality.validate("tool_probes", ingest.probes_frame(tool_probes["rows"])))


@gate(
    asset=tool_probes,
    partitions_def=domain_partitions,
    additional_ins={"tool_inventory": dg.AssetIn()},
    description="GX suite expectations/tool_probes_by_tool.json: a share of tools >= probes.min_success_share "
    "has a successful probe.",
)
def tool_probes_coverage(project: ProjectResource, tool_probes: dict, tool_inventory: dict) -> dg.AssetCheckResult:
    names = [t["name"] for t in tool_inventory["tools"]]
    frame = ingest.probes_by_tool_frame(
        tool_probes["rows"], names, tool_probes.get("skipped"), tool_probes.get("no_success")
    )
    return gate_result(quality.validate("tool_probes_by_tool", frame, project.load()))


@dg.asset(
    group_name=GROUP,
    code_version=code_version(ingest, "factory.embed"),
    kinds={"python", "pandas"},
    ins={"tool_inventory": all_partitions_in()},
    description="Union of every domain's inventory with one signature embedding per tool (global).",
)
def tool_catalog(context: dg.AssetExecutionContext, embeddings: EmbeddingsResource, tool_inventory: dict) -> dg.Output:
    embedder = embeddings.get()
    df, meta = ingest.build_catalog(tool_inventory, embedder.encode)
    meta.update(embedder.metadata())
    context.log.info(f"catalog: {meta['tools']} tools from {meta['domains']} domains")
    return dg.Output(df, metadata=to_metadata(meta))


@gate(
    asset=tool_catalog,
    description="GX suite expectations/tool_catalog.json: one finite, non-zero embedding per tool.",
)
def tool_catalog_embeddings(tool_catalog) -> dg.AssetCheckResult:
    return gate_result(quality.validate("tool_catalog", tool_catalog.drop(columns=["embedding"])))


ASSETS = [tool_inventory, tool_probes, tool_catalog]
CHECKS = [tool_inventory_contract, tool_probes_taxonomy, tool_probes_coverage, tool_catalog_embeddings]
