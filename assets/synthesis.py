"""Synthesis assets (EDGE Phase B): trajectories and generated_queries (Task records), per domain."""

import dagster as dg

from assets._meta import gate, gate_result, to_metadata
from assets.partitions import domain_partitions
from factory import frames, quality
from factory.llm.resource import LLMResource, llm_metadata
from factory.llm.roles import role_prompts_version
from factory.resources import DemoServiceResource, ProjectResource, all_partitions_in
from factory.synthesis import multisource, queries
from factory.synthesis import trajectories as traj_core
from factory.versions import code_version

GROUP = "synthesis"


@dg.asset(
    name="trajectories",
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(traj_core, multisource, queries, resources=["expectations/trajectories.json"]),
    kinds={"python"},
    ins={
        "tool_inventory": all_partitions_in(),
        "tool_probes": all_partitions_in(),
        "connectivity_graph": dg.AssetIn(),
        "tool_lexicon": dg.AssetIn(),
    },
    description="Executed typed trajectories over G*: SEQ/FAN/DRV chains (junctions typed by cardinality, "
    "process nodes for DRV), SEM/CMP/COND templates and MIXED compositions; golden actions with steps, "
    "answer material from the executed results; rejections with reasons.",
)
def trajectories_asset(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    demo: DemoServiceResource,
    connectivity_graph: dict,
    tool_inventory: dict,
    tool_probes: dict,
    tool_lexicon: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    domain = context.partition_key
    with demo.serving(cfg, cfg.domain(domain)):
        askable = queries.askability(tool_inventory, tool_lexicon, cfg.domain(domain).language)
        rivals = frames.rival_counts(((tool_lexicon or {}).get("nouns") or {}).get("tools") or {})
        value, meta = traj_core.build_trajectories(
            domain, connectivity_graph, tool_inventory, tool_probes, cfg, progress=context.log.info, askable=askable,
            rivals=rivals,
        )  # fmt: skip
        # API+RAG chains (issue 17) where the domain has a search tool; beside the API-only trajectories
        value["multisource"], ms_meta = multisource.build_multisource(
            domain, tool_inventory, tool_probes, cfg, connectivity_graph, tool_lexicon
        )
    return dg.Output(value, metadata=to_metadata({**meta, **ms_meta}))


@gate(
    asset="trajectories",
    partitions_def=domain_partitions,
    description="GX suite expectations/trajectories.json: every golden action succeeded, junction types "
    "consistent with cardinality, FAN width ≤ φ.",
)
def trajectories_contract(project: ProjectResource, trajectories: dict) -> dg.AssetCheckResult:
    phi = project.load().synthesis.fan_out_budget
    return gate_result(quality.validate("trajectories", traj_core.trajectories_frame(trajectories, phi)))


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(queries, multisource, resources=["expectations/generated_queries.json"])
    + role_prompts_version("query_writer")
    + role_prompts_version("query_paraphrase"),
    kinds={"python"},
    ins={"tool_inventory": all_partitions_in(), "trajectories": dg.AssetIn(), "tool_lexicon": dg.AssetIn()},
    description="One grounded query (configured language) + answer per trajectory, as Task records shared by "
    "later stages: golden actions, junctions, available tools, system state, max_allowed_calls, reward basis, "
    "lineage. The rules writer's variants are ranked by the fluency_scorer role (best kept, one below "
    "synthesis.fluency.min_score dropped); a model-written or paraphrased query failing the grounding check "
    "falls back to the templated one (query_source template / model / fallback, counted). Answers are sentences.",
)
def generated_queries(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    llm: LLMResource,
    trajectories: dict,
    tool_inventory: dict,
    tool_lexicon: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    model = llm.get()
    with model.track() as acct:
        value, meta = queries.build_queries(
            context.partition_key, trajectories, tool_inventory, cfg, model, run_id=context.run_id, lexicon=tool_lexicon
        )
    ms_tasks = multisource.task_records(
        trajectories.get("multisource"), tool_inventory[context.partition_key], cfg, context.run_id,
        str(trajectories.get("fingerprint") or ""),
    )  # fmt: skip
    value["tasks"] = [*value["tasks"], *ms_tasks]
    meta["multisource_tasks"] = len(ms_tasks)
    return dg.Output(value, metadata={**to_metadata(meta), **llm_metadata(acct)})


@gate(
    asset=generated_queries,
    partitions_def=domain_partitions,
    additional_ins={"trajectories": dg.AssetIn()},
    description="GX suite expectations/generated_queries.json: non-empty queries in the configured language, "
    "no bridge value in any query, answer types from the closed set.",
)
def generated_queries_contract(generated_queries: dict, trajectories: dict) -> dg.AssetCheckResult:
    return gate_result(quality.validate("generated_queries", queries.queries_frame(generated_queries, trajectories)))


ASSETS = [trajectories_asset, generated_queries]
CHECKS = [trajectories_contract, generated_queries_contract]
