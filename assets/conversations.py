"""conversations (global, group "release": after every domain's retrieval_index, whose decontaminated version
its search tools serve): multi-turn, single, sequential, parallel and no-call tasks with a user simulator, built
from the published tasks and audited with the golden agent (issue 19). The core is factory/conversations/."""

from typing import Any

import dagster as dg

from assets._meta import gate, gate_result, to_metadata
from factory import quality
from factory.conversations import build
from factory.llm.resource import LLMResource, llm_metadata
from factory.llm.roles import role_prompts_version
from factory.resources import DemoServiceResource, ProjectResource, all_partitions_in
from factory.versions import code_version

GROUP = "release"  # sensors/jobs.py: global_release, after domain_retrieval


@dg.asset(
    group_name=GROUP,
    code_version=code_version(
        build, resources=["expectations/conversations.json", "prompts/conversations", "prompts/user_simulator"]
    )
    + role_prompts_version("user_simulator"),
    kinds={"python"},
    ins={
        "dataset_splits": dg.AssetIn(),
        "trajectories": all_partitions_in(),
        "tool_inventory": all_partitions_in(),
        "tool_lexicon": all_partitions_in(),
        "tool_probes": all_partitions_in(),
    },
    # issue 17: the search tools serve the published retrieval_index (read by `served_inventories`, not an input:
    # a domain without documents has none)
    deps=[dg.AssetDep("retrieval_index", partition_mapping=dg.AllPartitionMapping())],
    description="kotraj conversation tasks from every published task (its split kept): single / sequential / "
    "parallel by the golden calls, multi_turn with the seed value as hidden_info, no_call requests; persona "
    "(register, urgency, region, digital literacy), success_criteria (required calls with args_subset, ordering, "
    "terminal state), tools_subset, seed. Each task is played by the golden agent against the user_simulator "
    "role and the live tools; a task it fails (simulator or task defect) is dropped, so published tasks have "
    "sim_fault 0 under the oracle.",
)
def conversations(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    demo: DemoServiceResource,
    llm: LLMResource,
    dataset_splits: dict,
    trajectories: dict,
    tool_inventory: dict,
    tool_lexicon: dict,
    tool_probes: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    if not cfg.conversations.enabled:
        value: dict[str, Any] = {
            "tasks": [],
            "dropped": [],
            "skipped": [],
            "transcripts": [],
            "audit": {},
            "simulator": {},
        }
        return dg.Output(value, metadata={"tasks": 0, "enabled": False})
    model = llm.get()
    with model.track() as acct, demo.serving(cfg):
        value, meta = build.build_conversations(
            dataset_splits, trajectories, tool_inventory, tool_lexicon, cfg, model, probes=tool_probes
        )
    context.log.info(
        f"conversations: {meta['tasks']} published; the oracle audit dropped {meta['dropped_by_oracle_audit']} "
        f"({meta['oracle_audit_caught_share']:.1%})"
    )
    return dg.Output(value, metadata={**to_metadata(meta), **llm_metadata(acct)})


@gate(
    asset=conversations,
    description="GX suite expectations/conversations.json: kotraj case kinds, the golden agent reaches every "
    "published task's goal with no simulator fault, no opening states a hidden fact, criteria match the case.",
)
def conversations_contract(conversations: dict) -> dg.AssetCheckResult:
    return gate_result(quality.validate("conversations", build.conversations_frame(conversations)))


ASSETS = [conversations]
CHECKS = [conversations_contract]
