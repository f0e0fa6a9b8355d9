"""The trajectories stage (EDGE Phase B, §3.3): typed, executed trajectories over G* (pure core).

Templates, each executed for real in its own executor session (fresh API keys, fresh state):

- ``chain``: a sequential chain T₁ → … → T_m over retained edges with ≥ `min_edge_successes`
  successes; each junction typed SEQ / FAN / DRV by the observed cardinality (`junctions`).
  Pattern 'SEQ+FAN' etc.; its Table 12 category is the single type when all junctions agree,
  else MIXED.
- ``SEM``: two different tools given the same argument value, outputs combined.
- ``CMP``: one tool (optionally followed by one junction) run with two values of one argument,
  their counts compared (with a junction: MIXED).
- ``COND``: a seed call's count compared with a threshold picks the branch: the 'then' branch
  follows an edge, the 'else' branch answers with the seed count; only the matched branch runs.

Every golden action is recorded with its step (key acquisition is step 1 for every keyed
platform of the trajectory; pages and FAN calls share a step).  Answer material comes from
`answers.compute` over the executed rows.  The executed path is then pruned to its minimal
sufficient path (`minimal`: every remaining call is needed; the answer spec refers to calls by
step; the other sufficient paths, the executed one among them, are recorded as
`alternative_paths`, and what pruning did as `pruning`).  Failures are recorded rejections with a
reason code.
"""

import asyncio
import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from factory.config import ProjectConfig
from factory.graph import plan as plans
from factory.graph.edge import Edge, parse_edges
from factory.io import dumps
from factory.kg.graph import norm_name
from factory.report import bar_plot, counts, md_table, rate
from factory.semtypes import ValueTypes
from factory.synthesis import answers, minimal
from factory.synthesis.execute import ChainRun, Fetched, Stage, call_row, fetch, junction, run_chain
from factory.synthesis.injection import is_instruction_like
from factory.synthesis.junctions import DRV, FAN, REJECTION_REASONS, SEQ, Rejection
from factory.tools.executor import ToolExecutor
from factory.tools.outcomes import Outcome, is_success_outcome
from factory.tools.registry import ToolRegistry, executor_factory

log = logging.getLogger(__name__)

CATEGORIES = ["SEQ", "FAN", "DRV", "SEM", "CMP", "COND", "MIXED"]
TEMPLATES = ["chain", "SEM", "CMP", "COND"]


def _stable(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def category(pattern: str) -> str:
    parts = pattern.split("+")
    return parts[0] if len(set(parts)) == 1 else "MIXED"


class World:
    """What a domain's synthesis can use: specs, usable edges, seeds per start tool."""

    def __init__(
        self,
        domain: str,
        graph: Mapping[str, Any],
        inventories: Mapping[str, Any],
        probes: Mapping[str, Any],
        cfg: ProjectConfig,
    ):
        self.domain = domain
        self.cfg = cfg
        self.specs = ToolRegistry.from_inventories(inventories)
        self.types = ValueTypes.from_graph(graph)  # value types of the graph's tools (value_type(tid, name))
        syn = cfg.synthesis

        def usable(tid: str) -> bool:
            s = self.specs.get(tid)
            return s is not None and s.key_acquisition is None and "state_hash" not in s.output_fields

        self.edges: list[Edge] = [
            e
            for e in parse_edges(graph["edges"])
            if e.status == "retained"
            and e.successes >= syn.min_edge_successes
            and (syn.cross_domain or e.target_domain == domain)
            and usable(e.source_tool_id)
            and usable(e.target_tool_id)
            and not self.specs[e.source_tool_id].state_changing
        ]
        self.edges.sort(key=lambda e: e.edge_id)
        self.out: dict[str, list[Edge]] = {}
        for e in self.edges:
            self.out.setdefault(e.source_tool_id, []).append(e)
        self.seeds: dict[str, list[dict[str, Any]]] = {}
        rows = [*(graph.get("observations") or []), *(probes.get(domain, {}).get("rows") or [])]
        for r in rows:
            tid = r.get("tool_id") or f"{domain}/{r.get('platform')}/{r.get('tool')}"
            spec = self.specs.get(tid)
            if spec is None or not usable(tid) or spec.state_changing or spec.domain != domain:
                continue
            if not is_success_outcome(r.get("outcome", Outcome.SEMANTIC_SUCCESS.value)):
                continue
            if "record_count" in r and not r["record_count"]:
                continue
            generic = spec.generic_params.names()
            args = {k: v for k, v in (r.get("args") or {}).items() if k not in generic and v not in (None, "")}
            if any(isinstance(v, str) and "<KEY>" in v for v in args.values()):
                continue
            if any(is_instruction_like(v) for v in args.values()):  # never a seed
                continue
            bucket = self.seeds.setdefault(tid, [])
            if args not in bucket:
                bucket.append(args)
        self.key_tool = {p: k.name for p in self.specs.platforms() if (k := self.specs.key_tool(p)) is not None}
        self.state_tool = {
            s.platform: tid for tid, s in self.specs.items() if "state_hash" in s.output_fields and s.domain == domain
        }

    def chains(self, max_edges: int) -> list[list[Edge]]:
        """Every simple path of 1..max_edges usable edges starting at a tool with seeds (deterministic)."""
        out: list[list[Edge]] = []

        def walk(path: list[Edge], visited: set[str]) -> None:
            out.append(list(path))
            tid = path[-1].target_tool_id
            if len(path) >= max_edges or self.specs[tid].state_changing:
                return
            for e in self.out.get(tid, []):
                if e.target_tool_id not in visited:
                    walk([*path, e], visited | {e.target_tool_id})

        for src in sorted(self.out):
            if not self.seeds.get(src):
                continue
            for e in self.out[src]:
                walk([e], {src, e.target_tool_id})
        return out

    def executor(self) -> ToolExecutor:
        return executor_factory(self.cfg, None, self.specs, scan=True)()


# --------------------------------------------------------------------------- assembling a trajectory


class _Builder:
    """Turns executed stages into golden actions, junction records and answer specs."""

    def __init__(self, world: World):
        self.world = world
        self.actions: list[dict[str, Any]] = []
        self.records: list[list[dict[str, Any]]] = []  # every record of each action (pruning reads them)
        self.logical: list[int] = []  # the logical call of each action (its pages share one)
        self.step = 1

    def keys(self, platforms: Sequence[str], ex: ToolExecutor) -> list[tuple[str, Any]]:
        return [(p, self.world.key_tool[p]) for p in sorted(set(platforms)) if p in self.world.key_tool]

    def add_stage(self, fetched: Sequence[Fetched]) -> list[int]:
        """Golden actions of one step; returns the index of each logical call's first page."""
        self.step += 1
        firsts = []
        for f in fetched:
            firsts.append(len(self.actions))
            lid = len(set(self.logical))
            for c in f.calls:
                self.actions.append(call_row(c, self.step, f.tool_id))
                self.records.append(list(c.records))
                self.logical.append(lid)
        return firsts


async def _acquire_keys(ex: ToolExecutor, world: World, platforms: set[str]) -> list[dict[str, Any]]:
    rows = []
    keyed = sorted(p for p in platforms if p in world.key_tool)
    specs = [next(s for s in world.specs.values() if s.platform == p and s.key_acquisition) for p in keyed]
    results = await ex.call_many([(s, {}) for s in specs])
    for s, r in zip(specs, results, strict=True):
        if not r.ok:
            raise Rejection("call_failed", f"{s.name}: {r.outcome.value}")
        row = call_row(r, 1, f"{s.domain}/{s.platform}/{s.name}")
        row["sample"] = []  # the key itself never enters a record
        rows.append(row)
    return rows


def _platforms(world: World, tids: Sequence[str]) -> set[str]:
    out = set()
    for t in tids:
        s = world.specs[t]
        if s.generic_params.key:
            out.add(s.platform)
    return out


async def _state_hash(ex: ToolExecutor, world: World, platforms: set[str]) -> dict[str, str]:
    out = {}
    for p in sorted(platforms):
        tid = world.state_tool.get(p)
        if tid:
            r = await ex.call(world.specs[tid], {})
            if r.ok and r.records:
                out[p] = str(r.records[0].get("state_hash"))
    return out


def _seed_entries(world: World, tid: str, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"tool_id": tid, "param": p, "value": v} for p, v in args.items()]


def _edge_lineage(edges: Sequence[Edge]) -> list[dict[str, Any]]:
    return [
        {
            "edge_id": e.edge_id,
            "source": e.source_tool,
            "target": e.target_tool,
            "alpha": e.alpha,
            "beta": e.beta,
            "posterior_mean": e.posterior_mean,
            "successes": e.successes,
            "trials": e.trials,
        }
        for e in edges
    ]


async def _chain_stages(
    ex: ToolExecutor, world: World, edges: Sequence[Edge], seed_tid: str, seed: Mapping[str, Any], rng
) -> ChainRun:
    syn = world.cfg.synthesis
    return await run_chain(ex, world.specs, edges, seed_tid, seed, syn.fan_out_budget, syn.max_scan_records, rng)


def _finish(
    world: World,
    template: str,
    pattern: str,
    key_rows: list[dict[str, Any]],
    builder: _Builder,
    answer_spec: dict[str, Any],
    *,
    junctions: list[dict[str, Any]],
    seeds: list[dict[str, Any]],
    thresholds: list[Any],
    bridges: list[Any],
    edges: Sequence[Edge],
    describe: dict[str, Any],
    state_hash: dict[str, str],
) -> dict[str, Any]:
    """The trajectory record: the answer of the executed path, then the path pruned to its minimal
    sufficient calls (`minimal`), the answer spec referring to calls by step."""
    actions = key_rows + builder.actions
    offset = len(key_rows)
    records: list[list[dict[str, Any]]] = [[] for _ in key_rows] + builder.records
    mp = minimal.minimal_path(
        actions, records, _shift(answer_spec, offset), junctions, world.specs,
        phi=world.cfg.synthesis.fan_out_budget, logical=[-1 - i for i in range(offset)] + builder.logical,
        given=[(s["param"], s["value"]) for s in seeds] + [("", t) for t in thresholds],
    )  # fmt: skip
    full_actions, full_spec = mp.original
    ans = answers.compute(full_spec, minimal.with_records(full_actions, records, range(len(actions))))
    v = ans.get("value")
    if v is None or v == [] or (isinstance(v, list) and any(x is None for x in v)):
        raise Rejection("tie" if answer_spec["kind"] == "cmp" else "empty_result", "no answer value")
    if is_instruction_like(v):
        raise Rejection("injected_text", "the answer would be instruction-like text from a tool")
    problem = minimal.disagreement(mp, records, ans)
    if problem:
        raise Rejection("prune_mismatch", problem)
    orphans = minimal.unsent(mp, [s["value"] for s in seeds]) if mp.removed else []
    if orphans:
        raise Rejection("seed_unused", f"no call of the minimal path sends {orphans!r} ({mp.summary()})")
    kept = [a for a in mp.actions if not world.specs[a["tool_id"]].key_acquisition]
    if template == "chain" and junctions and not mp.junctions:
        raise Rejection("collapsed", f"the answer is already in the records of {kept[0]['tool']} ({mp.summary()})")
    if template == "SEM" and len({a["tool_id"] for a in kept}) < 2:
        raise Rejection("collapsed", f"one tool answers every part ({mp.summary()})")
    actions = mp.actions
    ans = answers.compute(mp.answer_spec, minimal.with_records(actions, records, mp.keep))
    if mp.junctions_changed:
        pattern = minimal.pattern_of(template, mp.junctions, pattern)
        describe = {**describe, "question_junctions": junctions}
    if mp.moved:
        describe = {**describe, "answer_from": mp.moved}
    tools = sorted({a["tool_id"] for a in actions})
    ident = dumps([world.domain, [(a["step"], a["tool"], a["args"]) for a in actions]])
    return {
        "trajectory_id": "sha256:" + hashlib.sha256(ident.encode()).hexdigest(),
        "domain": world.domain,
        "template": template,
        "pattern": pattern,
        "category": category(pattern) if template == "chain" else template if pattern == template else "MIXED",
        "platforms": sorted({world.specs[t].platform for t in tools}),
        "tools": tools,
        "golden_actions": actions,
        "steps": max(a["step"] for a in actions),
        "calls": len(actions),
        "junctions": mp.junctions,
        "seeds": seeds,
        "thresholds": thresholds,
        "bridge_values": [v for v in bridges if not isinstance(v, dict | list)],
        "answer_spec": mp.answer_spec,
        "answer": ans,
        "alternative_paths": mp.alternative_records(),
        "pruning": mp.report(),
        "edges": _edge_lineage(edges),
        "describe": describe,
        "state_changing": any(world.specs[t].state_changing for t in tools),
        "expected_state_hash": state_hash,
    }


def _shift(spec: Any, k: int) -> Any:
    """A template's answer spec (positions among the stage actions) over the full action list (keys first)."""
    if isinstance(spec, dict):
        out = {}
        for key, v in spec.items():
            if key in ("calls",):
                out[key] = [i + k for i in v]
            elif key == "cond_call":
                out[key] = v + k
            else:
                out[key] = _shift(v, k)
        return out
    if isinstance(spec, list):
        return [_shift(x, k) for x in spec]
    return spec


def _terminal_spec(world: World, stage: Stage, firsts: list[int], rng) -> tuple[dict[str, Any], dict[str, Any]]:
    """Count when any terminal call has several records; else a descriptive value of its record."""
    f0 = stage.fetched[0]
    spec = world.specs[f0.tool_id]
    if all(f.total == 1 for f in stage.fetched):
        used = set(f0.args)
        cands = [
            k
            for k, v in f0.records[0].items()
            if isinstance(v, str | int | float) and not isinstance(v, bool) and v not in ("", None)
            and k not in used and not k.lower().endswith(("id", "cd", "code")) and k in spec.output_fields
        ]  # fmt: skip
        if cands:
            field = sorted(cands)[int(rng.integers(len(cands)))]
            return {"kind": "value", "calls": firsts, "field": field}, {
                "ask": "value",
                "tool_id": f0.tool_id,
                "field": field,
            }
    return {"kind": "count", "calls": firsts}, {"ask": "count", "tool_id": f0.tool_id}


# --------------------------------------------------------------------------- the four templates


async def chain_trajectory(world: World, edges: list[Edge], seed: dict[str, Any], rng) -> dict[str, Any]:
    seed_tid = edges[0].source_tool_id
    tids = [seed_tid, *(e.target_tool_id for e in edges)]
    platforms = _platforms(world, tids)
    async with world.executor() as ex:
        key_rows = await _acquire_keys(ex, world, platforms)
        run = await _chain_stages(ex, world, edges, seed_tid, seed, rng)
        b = _Builder(world)
        firsts = [b.add_stage(s.fetched) for s in run.stages]
        spec, ask = _terminal_spec(world, run.stages[-1], firsts[-1], rng)
        state = (
            await _state_hash(ex, world, {world.specs[t].platform for t in tids})
            if any(world.specs[t].state_changing for t in tids)
            else {}
        )
    pattern = "+".join(j["type"] for j in run.junctions)
    return _finish(
        world, "chain", pattern, key_rows, b, spec,
        junctions=run.junctions,
        seeds=_seed_entries(world, seed_tid, seed) + run.constants,
        thresholds=run.thresholds, bridges=run.bridge_values, edges=edges,
        describe={"chain": tids, **ask}, state_hash=state,
    )  # fmt: skip


async def sem_trajectory(
    world: World, a: str, pa: str, b_tid: str, pb: str, seed: dict[str, Any], rng
) -> dict[str, Any]:
    value = seed[pa]
    args_b = {pb: value}
    for s in world.seeds.get(b_tid, []):  # other required inputs of B from its own seeds
        args_b = {**{k: v for k, v in s.items() if k != pb and k in world.specs[b_tid].required_params}, pb: value}
        break
    async with world.executor() as ex:
        key_rows = await _acquire_keys(ex, world, _platforms(world, [a, b_tid]))
        syn = world.cfg.synthesis
        fa, fb = await asyncio.gather(
            fetch(ex, world.specs[a], a, seed, syn.max_scan_records),
            fetch(ex, world.specs[b_tid], b_tid, args_b, syn.max_scan_records),
        )
    builder = _Builder(world)
    firsts = builder.add_stage([fa, fb])
    parts, asks = [], []
    for f, i in zip((fa, fb), firsts, strict=True):
        sp, ask = _terminal_spec(world, Stage(fetched=[f]), [i], rng)
        parts.append(sp)
        asks.append(ask)
    seeds = _seed_entries(world, a, seed) + [e for e in _seed_entries(world, b_tid, args_b) if e["param"] != pb]
    return _finish(
        world, "SEM", "SEM", key_rows, builder, {"kind": "sem", "parts": parts},
        junctions=[], seeds=seeds, thresholds=[], bridges=[], edges=[],
        describe={"parts": asks, "shared": {"param": pa, "value": value}}, state_hash={},
    )  # fmt: skip


async def cmp_trajectory(
    world: World, tid: str, seed: dict[str, Any], param: str, other: Any, edge: Edge | None, rng
) -> dict[str, Any]:
    syn = world.cfg.synthesis
    seeds_args = [seed, {**seed, param: other}]
    tids = [tid] + ([edge.target_tool_id] if edge else [])
    async with world.executor() as ex:
        key_rows = await _acquire_keys(ex, world, _platforms(world, tids))
        f0 = await asyncio.gather(*(fetch(ex, world.specs[tid], tid, s, syn.max_scan_records) for s in seeds_args))
        runs = [ChainRun(stages=[Stage(fetched=[f])]) for f in f0]
        if edge is not None:
            for r in runs:
                r.stages.append(
                    await junction(
                        ex, world.specs, edge, r.stages[0].fetched, syn.fan_out_budget, syn.max_scan_records, rng, r
                    )
                )
    b = _Builder(world)
    firsts_per_stage = [b.add_stage([f for r in runs for f in r.stages[k].fetched]) for k in range(len(runs[0].stages))]
    last = firsts_per_stage[-1]
    n_a = len(runs[0].stages[-1].fetched)
    arms = [{"kind": "count", "calls": last[:n_a]}, {"kind": "count", "calls": last[n_a:]}]
    order = "more" if rng.random() < 0.6 else "fewer"
    spec = {"kind": "cmp", "arms": arms, "labels": [seed[param], other], "order": order}
    junctions = [j for r in runs for j in r.junctions]
    pattern = "CMP" if edge is None else "CMP+" + "+".join(sorted({j["type"] for j in junctions}))
    seeds = _seed_entries(world, tid, seed) + [{"tool_id": tid, "param": param, "value": other}]
    for r in runs:
        seeds += [c for c in r.constants if c not in seeds]
    return _finish(
        world, "CMP", pattern, key_rows, b, spec,
        junctions=junctions, seeds=seeds,
        thresholds=[t for r in runs for t in r.thresholds],
        bridges=[v for r in runs for v in r.bridge_values], edges=[edge] if edge else [],
        describe={"ask": "count", "tool_id": tids[-1], "compare": {"param": param, "tool_id": tid}, "order": order},
        state_hash={},
    )  # fmt: skip


async def cond_trajectory(world: World, edge: Edge, seed: dict[str, Any], rng) -> dict[str, Any]:
    syn = world.cfg.synthesis
    tid = edge.source_tool_id
    tids = [tid, edge.target_tool_id]
    async with world.executor() as ex:
        key_rows = await _acquire_keys(ex, world, _platforms(world, tids))
        f0 = await fetch(ex, world.specs[tid], tid, seed, syn.max_scan_records)
        c = f0.total
        holds = rng.random() < 0.5
        threshold = max(1, c - c // 3) if holds else c + max(1, c // 2)
        run = ChainRun(stages=[Stage(fetched=[f0])])
        if holds:
            run.stages.append(
                await junction(ex, world.specs, edge, [f0], syn.fan_out_budget, syn.max_scan_records, rng, run)
            )
    b = _Builder(world)
    firsts = [b.add_stage(s.fetched) for s in run.stages]
    then_spec = {"kind": "count", "calls": firsts[1]} if holds else {"kind": "count", "calls": []}
    spec = {"kind": "cond", "cond_call": firsts[0][0], "threshold": threshold, "then": then_spec,
            "else": {"kind": "count", "calls": firsts[0]}}  # fmt: skip
    pattern = "COND" if not run.junctions or run.junctions[0]["type"] == SEQ else f"COND+{run.junctions[0]['type']}"
    return _finish(
        world, "COND", pattern, key_rows, b, spec,
        junctions=run.junctions, seeds=_seed_entries(world, tid, seed) + run.constants,
        thresholds=[threshold, *run.thresholds], bridges=run.bridge_values, edges=[edge],
        describe={"ask": "count", "cond_tool_id": tid, "then_tool_id": edge.target_tool_id, "threshold": threshold},
        state_hash={},
    )  # fmt: skip


# --------------------------------------------------------------------------- the stage


def _sem_pairs(world: World) -> list[tuple[str, str, str, str]]:
    tools = sorted(
        t for t, s in world.specs.items()
        if s.domain == world.domain and world.seeds.get(t) and not s.state_changing and s.key_acquisition is None
    )  # fmt: skip
    all_tools = sorted(
        t for t, s in world.specs.items()
        if s.domain == world.domain and not s.state_changing and s.key_acquisition is None
        and "state_hash" not in s.output_fields
    )  # fmt: skip
    out = []
    for a in tools:
        for pa in plans.bindable_params(world.specs[a]):
            if pa not in world.specs[a].required_params:
                continue
            for b in all_tools:
                if b == a:
                    continue
                for pb in world.specs[b].required_params:
                    if (
                        pb in plans.bindable_params(world.specs[b])
                        and norm_name(pb) == norm_name(pa)
                        and world.types.same_type(a, pa, b, pb)  # one value type (one code system), not one name
                    ):
                        out.append((a, pa, b, pb))
    return out


def _cmp_options(world: World) -> list[tuple[str, str]]:
    out = []
    for tid in sorted(world.seeds):
        vals: dict[str, set[str]] = {}
        for s in world.seeds[tid]:
            for p, v in s.items():
                vals.setdefault(p, set()).add(dumps(v))
        out += [(tid, p) for p, vs in sorted(vals.items()) if len(vs) >= 2]
    return out


async def _synthesize(
    world: World, progress: Callable[[str], None]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    syn = world.cfg.synthesis
    quotas = {c: (syn.per_pattern if c in syn.patterns else 0) for c in CATEGORIES}
    kept: list[dict[str, Any]] = []
    have: dict[str, int] = dict.fromkeys(CATEGORIES, 0)
    seen: set[str] = set()
    rejected: list[dict[str, Any]] = []
    chains = world.chains(syn.max_chain_edges)
    sem = _sem_pairs(world)
    cmp_opts = _cmp_options(world)
    cond_edges = [
        e for e in world.edges if world.seeds.get(e.source_tool_id) and not world.specs[e.target_tool_id].state_changing
    ]
    templates = [t for t in TEMPLATES if t == "chain" or quotas.get(t, 0) > 0]
    for attempt in range(syn.attempts):
        if all(have[c] >= quotas[c] for c in CATEGORIES):
            break
        rng = np.random.default_rng([world.cfg.seed, _stable(world.domain), attempt])
        open_t = [t for t in templates if t != "chain" and have[t] < quotas[t]]
        if any(have[c] < quotas[c] for c in ("SEQ", "FAN", "DRV", "MIXED")):
            open_t.append("chain")
        if not open_t:
            break
        template = open_t[attempt % len(open_t)]
        info: dict[str, Any] = {"attempt": attempt, "template": template}
        try:
            if template == "chain":
                if not chains:
                    raise Rejection("no_seed", "no chain starts at a tool with known arguments")
                edges = chains[int(rng.integers(len(chains)))]
                seeds = world.seeds[edges[0].source_tool_id]
                seed = seeds[int(rng.integers(len(seeds)))]
                info["tools"] = [edges[0].source_tool, *(e.target_tool for e in edges)]
                t = await chain_trajectory(world, edges, seed, rng)
            elif template == "SEM":
                if not sem:
                    raise Rejection("no_partner", "no two tools share an input")
                a, pa, b, pb = sem[int(rng.integers(len(sem)))]
                seeds = [s for s in world.seeds[a] if pa in s]
                if not seeds:
                    raise Rejection("no_seed", f"no known {pa} for {a}")
                info["tools"] = [a, b]
                t = await sem_trajectory(world, a, pa, b, pb, seeds[int(rng.integers(len(seeds)))], rng)
            elif template == "CMP":
                if not cmp_opts:
                    raise Rejection("no_partner", "no tool with two known values of an input")
                tid, p = cmp_opts[int(rng.integers(len(cmp_opts)))]
                seeds = [s for s in world.seeds[tid] if p in s]
                seed = seeds[0]
                others = [s[p] for s in seeds if dumps(s[p]) != dumps(seed[p])]
                other = others[int(rng.integers(len(others)))]
                out = world.out.get(tid, [])
                edge = out[int(rng.integers(len(out)))] if out and rng.random() < 0.5 else None
                if edge is not None and world.specs[edge.target_tool_id].state_changing:
                    edge = None
                info["tools"] = [tid] + ([edge.target_tool] if edge else [])
                t = await cmp_trajectory(world, tid, seed, p, other, edge, rng)
            else:
                if not cond_edges:
                    raise Rejection("no_seed", "no edge with a seeded source")
                edge = cond_edges[int(rng.integers(len(cond_edges)))]
                seeds = world.seeds[edge.source_tool_id]
                info["tools"] = [edge.source_tool, edge.target_tool]
                t = await cond_trajectory(world, edge, seeds[int(rng.integers(len(seeds)))], rng)
            if t["trajectory_id"] in seen:
                raise Rejection("duplicate", "an identical trajectory is kept already")
            if have[t["category"]] >= quotas[t["category"]]:
                raise Rejection("quota_full", f"{t['category']} has {quotas[t['category']]} already")
            seen.add(t["trajectory_id"])
            have[t["category"]] += 1
            kept.append(t)
        except Rejection as r:
            rejected.append({**info, "reason": r.reason, "detail": r.detail})
        except Exception as e:  # noqa: BLE001 - one broken attempt never stops the stage
            log.warning("trajectory attempt %d failed unexpectedly: %s", attempt, e)
            rejected.append({**info, "reason": "call_failed", "detail": f"{type(e).__name__}: {e}"[:200]})
    progress(f"{world.domain}: {len(kept)} trajectories kept, {len(rejected)} rejected ({have})")
    return kept, rejected


def build_trajectories(
    domain: str,
    graph: Mapping[str, Any],
    inventories: Mapping[str, Any],
    probes: Mapping[str, Any],
    cfg: ProjectConfig,
    progress: Callable[[str], None] = log.info,
) -> tuple[dict[str, Any], dict[str, Any]]:
    world = World(domain, graph, inventories, probes, cfg)
    kept, rejected = asyncio.run(_synthesize(world, progress))
    value = {
        "domain": domain,
        "fingerprint": graph.get("fingerprint"),
        "config": cfg.synthesis.model_dump(mode="json"),
        "seed": cfg.seed,
        "trajectories": kept,
        "rejected": rejected,
        "admits": admits(world),
    }
    return value, trajectory_metadata(value)


def admits(world: World) -> dict[str, bool]:
    """Which templates the domain's graph can instantiate at all."""
    return {
        "chain": bool(world.chains(1)),
        "SEM": bool(_sem_pairs(world)),
        "CMP": bool(_cmp_options(world)),
        "COND": any(world.seeds.get(e.source_tool_id) for e in world.edges),
    }


# --------------------------------------------------------------------------- statistics and gates


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else 0.0


def structure_stats(trajs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Tables 10–12: calls per task, steps, sequential/parallel calls, one-to-many chaining, pattern mix."""
    calls = [t["calls"] for t in trajs]
    steps = [t["steps"] for t in trajs]
    parallel = sum(
        sum(1 for a in t["golden_actions"] if sum(b["step"] == a["step"] for b in t["golden_actions"]) > 1)
        for t in trajs
    )
    junctions = [j for t in trajs for j in t["junctions"]]
    chained = [t for t in trajs if t["junctions"]]
    one_to_many = [t for t in chained if any(j["n"] >= 2 for j in t["junctions"])]
    card = [j["n"] for j in junctions if j["n"] >= 2]
    cats = counts(t["category"] for t in trajs)
    return {
        "tasks": len(trajs),
        "calls_mean": round(float(np.mean(calls)), 3) if calls else 0.0,
        "calls_median": _pct(calls, 50),
        "calls_max": max(calls, default=0),
        "calls_min": min(calls, default=0),
        "steps_mean": round(float(np.mean(steps)), 3) if steps else 0.0,
        "steps_le3_share": rate(sum(s <= 3 for s in steps), len(steps)),
        "steps_4_5_share": rate(sum(4 <= s <= 5 for s in steps), len(steps)),
        "steps_ge6_share": rate(sum(s >= 6 for s in steps), len(steps)),
        "parallel_call_share": rate(parallel, sum(calls)),
        "junctions": len(junctions),
        "one_to_many_share": rate(len(one_to_many), len(chained)),
        "one_to_many_junction_share": rate(sum(j["n"] >= 2 for j in junctions), len(junctions)),
        "chained_cardinality_median": _pct(card, 50),
        "chained_cardinality_p90": _pct(card, 90),
        "chained_cardinality_max": max(card, default=0),
        "by_category": {c: cats.get(c, 0) for c in CATEGORIES},
        "by_junction": {k: sum(j["type"] == k for j in junctions) for k in (SEQ, FAN, DRV)},
    }


def pruning_stats(value: Mapping[str, Any]) -> dict[str, Any]:
    """Minimal golden paths (factory.synthesis.minimal): calls per trajectory before and after pruning, the
    share of trajectories pruned, calls pruned by reason, answer reads moved, and trajectories rejected
    because their minimal path lost the template's shape."""
    trajs = value["trajectories"]
    reports = [t.get("pruning") or {} for t in trajs]
    before = [r.get("calls_before", t["calls"]) for r, t in zip(reports, trajs, strict=True)]
    after = [r.get("calls_after", t["calls"]) for r, t in zip(reports, trajs, strict=True)]
    removed = counts(x["reason"] for r in reports for x in r.get("removed") or [])
    rejected = counts(r["reason"] for r in value["rejected"] if r["reason"] in minimal.REJECTIONS)
    return {
        "pruned_share": rate(sum(bool(r.get("removed")) for r in reports), len(trajs)),
        "calls_before_mean": round(float(np.mean(before)), 3) if before else 0.0,
        "calls_after_mean": round(float(np.mean(after)), 3) if after else 0.0,
        "calls_pruned": sum(removed.values()),
        "calls_pruned_by_reason": {k: removed.get(k, 0) for k in minimal.REASONS if removed.get(k)},
        "answer_moved": sum(bool(r.get("moved")) for r in reports),
        "with_alternatives": sum(bool(t.get("alternative_paths")) for t in trajs),
        "rejected_by_pruning": {k: rejected.get(k, 0) for k in minimal.REJECTIONS if rejected.get(k)},
    }


def trajectory_metadata(value: Mapping[str, Any]) -> dict[str, Any]:
    trajs = value["trajectories"]
    st = structure_stats(trajs)
    reasons = counts(r["reason"] for r in value["rejected"])
    meta: dict[str, Any] = {
        **{k: v for k, v in st.items() if not isinstance(v, dict)},
        "by_category": st["by_category"],
        "by_junction": st["by_junction"],
        "minimal_paths": pruning_stats(value),
        "rejected": len(value["rejected"]),
        "rejections_by_reason": {
            r: reasons.get(r, 0) for r in (*REJECTION_REASONS, *minimal.REJECTIONS) if reasons.get(r)
        },
        "admits": value["admits"],
        "state_changing": sum(bool(t["state_changing"]) for t in trajs),
        "table12": md_table(
            [{"type": c, "count": n, "%": round(100 * rate(n, len(trajs)), 1)} for c, n in st["by_category"].items()],
            limit=10,
        ),
        "preview": md_table(
            [
                {
                    "category": t["category"],
                    "pattern": t["pattern"],
                    "tools": " → ".join(x.rsplit("/", 1)[-1] for x in t["describe"].get("chain", t["tools"])),
                    "calls": t["calls"],
                    "pruned": ", ".join(
                        f"{x['tool']} ({x['reason']})" for x in (t.get("pruning") or {}).get("removed") or []
                    ),
                    "n": ",".join(str(j["n"]) for j in t["junctions"]),
                    "answer": t["answer"]["value"],
                }
                for t in trajs
            ],
            limit=15,
        ),
    }
    if trajs:
        meta["pattern_plot"] = bar_plot(
            {c: n for c, n in st["by_category"].items()}, title="trajectories by pattern (Table 12)"
        )
    return meta


def trajectories_frame(value: Mapping[str, Any], phi: int):
    """One row per golden action and junction, the shape expectations/trajectories.json validates."""
    import pandas as pd

    rows = []
    for t in value["trajectories"]:
        for a in t["golden_actions"]:
            rows.append({"trajectory_id": t["trajectory_id"], "kind": "action", "outcome": a["outcome"],
                         "type_consistent": True, "width_ok": True})  # fmt: skip
        for j in t["junctions"]:
            expected = SEQ if j["n"] == 1 else FAN if j["n"] <= phi else DRV
            rows.append(
                {
                    "trajectory_id": t["trajectory_id"],
                    "kind": "junction",
                    "outcome": "semantic_success",
                    "type_consistent": j["type"] == expected and (j["type"] != DRV or j["process"] is not None),
                    "width_ok": 1 <= j["width"] <= phi and (j["type"] != FAN or j["width"] == j["n"]),
                }
            )
    return pd.DataFrame(rows, columns=["trajectory_id", "kind", "outcome", "type_consistent", "width_ok"])
