"""Graph assets (EDGE Phase A): skeleton_graph, connectivity_graph (G*) and knowledge_graph, per domain."""

from contextlib import nullcontext

import dagster as dg

from assets._meta import gate, gate_result, to_metadata
from assets.partitions import domain_partitions
from factory import quality
from factory.graph import connectivity, skeleton
from factory.kg.build import build_knowledge_graph
from factory.kg.graph import triples_frame
from factory.llm.resource import LLMResource, llm_metadata
from factory.resources import DemoServiceResource, ProjectResource, all_partitions_in, uses_demo
from factory.versions import code_version

GROUP = "graph"


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(skeleton, resources=["prompts/edge_proposal"]),
    kinds={"python"},
    ins={
        "tool_inventory": all_partitions_in(),
        "tool_probes": all_partitions_in(),
        "tool_lexicon": all_partitions_in(),
        "tool_catalog": dg.AssetIn(),
    },
    description="Candidate edges u→v by dense retrieval (top-K same-domain, top-K_x cross-domain), one "
    "edge_proposal per candidate (feasibility, bindings, default candidates), source plans, Beta priors; "
    "bindings admitted only when the value types agree (tool_lexicon), edges with s >= s_min are admitted.",
)
def skeleton_graph(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    llm: LLMResource,
    tool_inventory: dict,
    tool_probes: dict,
    tool_lexicon: dict,
    tool_catalog,
) -> dg.Output[dict]:
    cfg = project.load()
    model = llm.get()
    with model.track() as acct:
        value, meta = skeleton.build_skeleton(
            context.partition_key,
            tool_inventory,
            tool_probes,
            tool_catalog,
            cfg,
            lambda inputs: model.map("edge_proposal", inputs),
            lexicons=tool_lexicon,
        )
    context.log.info(
        f"{context.partition_key}: {meta['admitted']} of {meta['candidates']} candidate edges admitted, "
        f"{meta['type_mismatch'] + meta['type_unverified']} bindings rejected by value type"
    )
    return dg.Output(value, metadata={**to_metadata(meta), **llm_metadata(acct)})


@gate(
    asset=skeleton_graph,
    partitions_def=domain_partitions,
    description="GX suite expectations/skeleton_graph.json: s >= s_min, bound params exist in both schemas, "
    "positive priors.",
)
def skeleton_graph_contract(skeleton_graph: dict) -> dg.AssetCheckResult:
    frame = skeleton.edges_frame(skeleton_graph)
    return gate_result(quality.validate("skeleton_graph", frame))


def _serving(demo: DemoServiceResource, cfg, domains: list[str]):
    if any(d in cfg.domain_names and uses_demo(cfg.domain(d)) for d in domains):
        return demo.serving(cfg)
    return nullcontext()


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(connectivity, resources=["prompts/source_arguments"]),
    kinds={"python"},
    ins={"tool_inventory": all_partitions_in(), "tool_probes": all_partitions_in()},
    description="G*: the skeleton refined by executing Thompson-sampled paths for real; Table 7 posterior "
    "updates, Eq. 5 pruning, per-edge cache of (input, first record), iteration history. Checkpointed "
    "per iteration; an interrupted run resumes.",
)
def connectivity_graph(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    demo: DemoServiceResource,
    llm: LLMResource,
    skeleton_graph: dict,
    tool_inventory: dict,
    tool_probes: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    model = llm.get()
    with model.track() as acct, _serving(demo, cfg, connectivity.involved_domains(skeleton_graph)):
        value, meta = connectivity.build_connectivity(
            skeleton_graph, tool_inventory, tool_probes, cfg, model=model, progress=context.log.info
        )
    context.log.info(f"{context.partition_key}: {meta['retained']} retained, {meta['pruned']} pruned")
    return dg.Output(value, metadata={**to_metadata(meta), **llm_metadata(acct)})


@gate(
    asset=connectivity_graph,
    partitions_def=domain_partitions,
    description="GX suite expectations/connectivity_graph.json: no edge pruned before n_min trials, bound "
    "params exist in both schemas, positive posteriors.",
)
def connectivity_graph_contract(connectivity_graph: dict) -> dg.AssetCheckResult:
    frame = skeleton.edges_frame(connectivity_graph)
    return gate_result(quality.validate("connectivity_graph", frame))


@gate(
    asset=connectivity_graph,
    partitions_def=domain_partitions,
    description="GX suite expectations/connectivity_graph_rates.json: the retained rate is reported "
    "(skeleton/retained/pruned success rates in the metadata).",
)
def connectivity_graph_rates(connectivity_graph: dict) -> dg.AssetCheckResult:
    frame = connectivity.rates_frame(connectivity_graph)
    row = {k: (v if v is not None else -1.0) for k, v in frame.iloc[0].to_dict().items()}
    return gate_result(quality.validate("connectivity_graph_rates", frame), extra=row)


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(build_knowledge_graph, triples_frame),
    kinds={"python"},
    ins={"tool_inventory": all_partitions_in(), "tool_probes": dg.AssetIn(), "connectivity_graph": dg.AssetIn()},
    description="Typed entities (codes, names, dates, numbers) and relations observed in probes and path "
    "executions, each triple with provenance (tool, field, call digest).",
)
def knowledge_graph(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    tool_inventory: dict,
    tool_probes: dict,
    connectivity_graph: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    value, meta = build_knowledge_graph(context.partition_key, tool_inventory, tool_probes, connectivity_graph, cfg)
    return dg.Output(value, metadata=to_metadata(meta))


@gate(
    asset=knowledge_graph,
    partitions_def=domain_partitions,
    description="GX suite expectations/knowledge_graph.json: no orphan relations, provenance on every triple.",
)
def knowledge_graph_contract(knowledge_graph: dict) -> dg.AssetCheckResult:
    return gate_result(quality.validate("knowledge_graph", triples_frame(knowledge_graph)))


ASSETS = [skeleton_graph, connectivity_graph, knowledge_graph]
CHECKS = [skeleton_graph_contract, connectivity_graph_contract, connectivity_graph_rates, knowledge_graph_contract]
