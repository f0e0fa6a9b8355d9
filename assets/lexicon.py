"""Lexicon assets: tool_lexicon per domain (semantic value types of parameters and fields)."""

import dagster as dg

from assets._meta import gate, gate_result, to_metadata
from assets.partitions import domain_partitions
from factory import lexicon, quality
from factory.resources import ProjectResource, all_partitions_in
from factory.versions import code_version

GROUP = "lexicon"


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(lexicon, resources=["expectations/tool_lexicon.json"]),
    kinds={"python"},
    ins={"tool_inventory": all_partitions_in(), "tool_probes": all_partitions_in()},
    description="Semantic value type of every bindable parameter and output field (entity.role, code systems "
    "per platform merged only on evidence, scalar kinds), from names, descriptions, schemas, probe values and "
    "the domain's reviewed overrides; the code systems and the evidence for them.",
)
def tool_lexicon(
    context: dg.AssetExecutionContext, project: ProjectResource, tool_inventory: dict, tool_probes: dict
) -> dg.Output[dict]:
    cfg = project.load()
    value, meta = lexicon.build_lexicon(context.partition_key, tool_inventory, tool_probes, cfg)
    for msg in (value.get("nouns") or {}).get("stale_entries") or []:
        context.log.warning(f"{msg}: entry ignored (renamed or removed upstream? review the file)")
    context.log.info(
        f"{context.partition_key}: {meta['slots']} slots typed, {meta['types']} types, "
        f"unknown share {meta['unknown_share']:.2f}"
    )
    return dg.Output(value, metadata=to_metadata(meta))


@gate(
    asset=tool_lexicon,
    partitions_def=domain_partitions,
    description="GX suite expectations/tool_lexicon.json: every bindable parameter and field has a valid value "
    "type with its rule; the unknown share is at most lexicon.max_unknown_share.",
)
def tool_lexicon_contract(project: ProjectResource, tool_lexicon: dict) -> dg.AssetCheckResult:
    return gate_result(quality.validate("tool_lexicon", lexicon.lexicon_frame(tool_lexicon), project.load()))


ASSETS = [tool_lexicon]
CHECKS = [tool_lexicon_contract]
