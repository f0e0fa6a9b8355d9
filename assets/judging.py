"""Judging assets: judged_queries per domain, the EDGE Appendix F three-stage filter cascade."""

import dagster as dg

from assets._meta import gate, gate_result, to_metadata
from assets.partitions import domain_partitions
from factory import quality
from factory.filters import cascade
from factory.filters.reasons import reasons_table
from factory.llm.resource import LLMResource, llm_metadata
from factory.llm.roles import role_prompts_version
from factory.resources import DemoServiceResource, ProjectResource, all_partitions_in
from factory.tools.registry import ToolRegistry, executor_factory
from factory.versions import code_version

GROUP = "judging"


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(cascade, resources=["expectations/judged_queries.json"])
    + role_prompts_version("judge_answer_leakage")
    + role_prompts_version("judge_non_gradable")
    + role_prompts_version("judge_decorative_chain")
    + role_prompts_version("agent_resolver"),
    kinds={"python"},
    ins={
        "generated_queries": dg.AssetIn(),
        "trajectories": dg.AssetIn(),
        "tool_inventory": all_partitions_in(),
        "tool_probes": all_partitions_in(),
    },
    description="Every candidate task through the three-stage cascade of EDGE Appendix F: rules (schema, "
    "reproducibility, error labels, query form, near-duplicates), judges (answer leakage, non-gradable, "
    "decorative steps by execution perturbation; two judges must agree where a model judges) and re-solving "
    "(golden replay now, agent re-solution replacing stale answers). Kept and rejected rows both stay, every "
    "verdict in lineage.verdicts.\n\n" + reasons_table(),
)
def judged_queries(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    demo: DemoServiceResource,
    llm: LLMResource,
    generated_queries: dict,
    trajectories: dict,
    tool_inventory: dict,
    tool_probes: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    domain = context.partition_key
    model = llm.get()
    make_executor = executor_factory(cfg, None, ToolRegistry.from_inventories(tool_inventory), scan=True)
    with demo.serving(cfg, cfg.domain(domain)), model.track() as acct:
        value, meta = cascade.judge_tasks(
            domain,
            generated_queries,
            trajectories,
            tool_inventory,
            cfg,
            model,
            make_executor,
            progress=context.log.info,
            probes=tool_probes,
        )
    return dg.Output(value, metadata={**to_metadata(meta), **llm_metadata(acct)})


@gate(
    asset=judged_queries,
    partitions_def=domain_partitions,
    additional_ins={"generated_queries": dg.AssetIn()},
    description="GX suite expectations/judged_queries.json: reason codes from the closed set (and of the stage "
    "that rejected), kept ⊂ candidates and disjoint from rejected, every kept row has ≥1 verdict per stage that "
    "ran and validates as a Task.",
)
def judged_queries_contract(judged_queries: dict, generated_queries: dict) -> dg.AssetCheckResult:
    frame = cascade.judged_frame(judged_queries, generated_queries)
    return gate_result(
        quality.validate("judged_queries", frame),
        extra={"kept": len(judged_queries["kept"]), "rejected": len(judged_queries["rejected"])},
    )


ASSETS = [judged_queries]
CHECKS = [judged_queries_contract]
