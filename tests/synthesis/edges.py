"""Hand-made retained edges between demo tools, for synthesis tests that build a World directly."""

from typing import Any

from factory.graph.edge import Edge


def demo_edges(domain: str, inventory: dict[str, Any], edges: list[tuple[str, str, dict]]) -> list[dict[str, Any]]:
    """Retained edges (alpha 5, beta 1) between the named tools of `domain`'s inventory, each with its plan."""
    ids = {t["name"]: f"{domain}/{t['platform']}/{t['name']}" for t in inventory["tools"]}
    return [
        Edge(
            edge_id=f"e{i}", source_tool=s, source_domain=domain, source_platform=ids[s].split("/")[1],
            source_tool_id=ids[s], target_tool=d, target_domain=domain, target_platform=ids[d].split("/")[1],
            target_tool_id=ids[d], cross_domain=False, similarity=0.5, bindings=[], plan=plan, feasibility=1.0,
            reason="", alpha=5.0, beta=1.0, prior_alpha=1.0, prior_beta=1.0, trials=5, successes=5, proposal_provenance={},
        ).model_dump(mode="json")
        for i, (s, d, plan) in enumerate(edges)
    ]  # fmt: skip
