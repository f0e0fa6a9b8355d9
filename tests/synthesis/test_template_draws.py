"""Templates the graph cannot instantiate are not drawn (issue 13: a real server's attempts went to SEM
and COND, rejected every time for the same structural reason, so few reached the chains).

No tool is called: every template here is impossible, or decided from the seeds alone."""

import asyncio

from factory.config import load_config
from factory.graph.edge import Edge
from factory.synthesis import trajectories as T
from factory.tools.spec import SourceRef, ToolSpec

DOMAIN = "memory"


def _tool(name: str, props: dict, fields: dict) -> dict:
    return ToolSpec(
        domain=DOMAIN, platform="memory", name=name, description=f"{name} tool", method="MCP",
        input_schema={"type": "object", "properties": props, "required": list(props)},
        output_schema={"type": "object", "properties": fields},
        output_fields={f: {"name": f, "type": "string"} for f in fields},
        source=SourceRef(kind="mcp", locator="mcp-server-memory"),
    ).model_dump(mode="json")  # fmt: skip


def _world(seeds: list[dict], with_edge: bool = True, n: int = 2, target_rows: tuple = ()) -> T.World:
    tools = [_tool("search_nodes", {"query": {"type": "string"}}, {"name": {}}),
             _tool("open_nodes", {"names": {"type": "string"}}, {"entityType": {}})]  # fmt: skip
    inv = {DOMAIN: {"tools": tools}}
    src, tgt = f"{DOMAIN}/memory/search_nodes", f"{DOMAIN}/memory/open_nodes"
    edge = Edge(
        edge_id="e0", source_tool="search_nodes", source_domain=DOMAIN, source_platform="memory", source_tool_id=src,
        target_tool="open_nodes", target_domain=DOMAIN, target_platform="memory", target_tool_id=tgt,
        cross_domain=False, similarity=0.5, bindings=[], plan={"names": {"kind": "UPSTREAM", "field": "name"}},
        feasibility=1.0, reason="", alpha=5.0, beta=1.0, prior_alpha=1.0, prior_beta=1.0, trials=5, successes=5,
        proposal_provenance={},
    ).model_dump(mode="json")  # fmt: skip
    rows = [{"tool_id": src, "args": s, "outcome": "semantic_success", "record_count": n,
             "records": [{"name": f"{s['query']} {i}"} for i in range(n)]} for s in seeds]  # fmt: skip
    rows += [{"tool_id": tgt, "args": {"names": name}, "outcome": "semantic_success", "record_count": 1,
              "records": [{"entityType": "person"}]} for name in target_rows]  # fmt: skip
    graph = {"edges": [edge] if with_edge else [], "observations": []}
    return T.World(DOMAIN, graph, inv, {DOMAIN: {"rows": rows}}, load_config())


def _synthesize(world: T.World) -> tuple[list, list]:
    kept, rejected, _ = asyncio.run(T._synthesize(world, lambda _m: None))
    return kept, rejected


def test_a_graph_that_admits_no_template_spends_no_attempt() -> None:
    world = _world([{"query": "Ada"}], with_edge=False)
    kept, rejected = _synthesize(world)
    assert kept == [] and rejected == []  # before: every attempt rejected (no_seed / no_partner), 240 of them
    assert set(world.not_drawn) == {"chain", "SEM", "CMP", "COND"}
    assert world.not_drawn["SEM"] == "no two tools share an input"
    assert T.admits(world) == {"chain": False, "SEM": False, "CMP": False, "COND": False}


def test_cond_needs_a_second_seed_with_the_same_parameters() -> None:
    one = _world([{"query": "Ada"}])
    assert not T.admits(one)["COND"] and T.admits(one)["chain"]
    assert not T._split_seeds(one, one.edges[0])
    two = _world([{"query": "Ada"}, {"query": "Babbage"}])
    assert T.admits(two)["COND"]
    assert T._split_seeds(two, two.edges[0]) == [{"query": "Ada"}, {"query": "Babbage"}]


def test_cmp_needs_a_count_that_is_not_one_by_construction_or_an_edge_to_follow() -> None:
    seeds = [{"query": "Ada"}, {"query": "Babbage"}]
    alone = _world(seeds, with_edge=False, n=1)  # one record for every observed query, nothing to follow
    assert alone.degenerate_count(f"{DOMAIN}/memory/search_nodes", ["query"])[0] == "always_one"
    assert T._cmp_options(alone) == [] and not T.admits(alone)["CMP"]
    assert T._cmp_options(_world(seeds, with_edge=True, n=1)) == [(f"{DOMAIN}/memory/search_nodes", "query")]
    assert T._cmp_options(_world(seeds, with_edge=False, n=2)) == [(f"{DOMAIN}/memory/search_nodes", "query")]
    # the edge's target is itself 1 record per observed call: following it compares nothing either
    one_each = _world(seeds, with_edge=True, n=1, target_rows=("Ada 0", "Babbage 0"))
    assert T._countable_edges(one_each, f"{DOMAIN}/memory/search_nodes") == []
    assert T._cmp_options(one_each) == [] and not T.admits(one_each)["CMP"]
    # an edge to a target that counts several records is followed instead
    several = _world(seeds, with_edge=True, n=1, target_rows=())
    assert [e.target_tool for e in T._countable_edges(several, f"{DOMAIN}/memory/search_nodes")] == ["open_nodes"]
