"""Execution-grounded refinement of the skeleton into G* (EDGE §3.2, second half; Appendix E).

Each of T iterations samples M paths over the retained edges and executes
them for real, concurrently:

1. a start tool is drawn among tools with outgoing retained edges; its
   arguments come from the `source_arguments` role (rules fallback), fed with
   real values from the knowledge graph;
2. from the current tool, every retained outgoing edge whose bound fields are
   present in the returned records is a candidate; the next edge is
   argmax θ̃_e with θ̃_e ~ Beta(α_e, β_e) (Thompson sampling), or with
   probability ε_exp a uniformly random candidate among the undecided ones
   (fewer than n_min trials, or Pr[θ > τ] < 0.5 without having been pruned;
   any candidate when there is none, which is the paper's plain ε-greedy);
3. the target's arguments follow the edge's source plan: bound fields from
   the records (up to `value_tries` distinct values are tried until one
   returns records), DEFAULT generic values, CLARIFY candidates for required
   unbound parameters.  The step's outcome class updates the edge (Table 7,
   `factory.graph.posterior`); a failure ends the path.

Outcome of a step: success with records → its success class; a success with
0 records although a bound value was passed → ``empty_result`` (structural,
see `posterior`); an environmental failure (rate limit, timeout, 5xx, auth,
unavailable) stops the value tries at once and counts with its small weight,
unless an earlier try already failed structurally (then that counts); a
structural failure tries the next value.  When the upstream call fails the
edge was never tried: no update.  A step of an edge whose binding fails the
value-type check (`factory.semtypes.check_binding`; the skeleton admits none, an
injected or older edge may have one) counts as ``type_mismatch`` whatever the
call returned: a value of another type was bound, so a success proves nothing.

Sampling decisions use a generator seeded from (seed, domain, iteration, path)
and the posteriors as of the start of the iteration; updates are applied after
all paths finished, in path order, then Eq. 5 prunes.  Given the same
execution outcomes, the result is the same whatever the interleaving.

State is checkpointed after every iteration (`<data_dir>/checkpoints/
connectivity_graph/<domain>.json`, keyed by a hash of the inputs and config);
a re-run with the same inputs resumes after the last finished iteration.  After
the loop an optional held-out sweep executes every tested edge a few more times
without updating it, to compare skeleton, retained and pruned edges on fresh
evidence (Figure 4).
"""

import asyncio
import copy
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import numpy as np

from factory.config import ProjectConfig
from factory.graph import plan as plans
from factory.graph.edge import Edge, parse_edges
from factory.graph.posterior import (
    EMPTY_RESULT,
    TYPE_MISMATCH,
    apply_outcome,
    outcome_group,
    posterior_mean,
    prob_above,
    should_prune,
)
from factory.graph.skeleton import target_values
from factory.io import Store, dumps
from factory.kg.graph import KnowledgeGraph
from factory.llm import rules
from factory.llm.schemas import SourceArguments, SourceArgumentsInput, ToolBrief
from factory.semtypes import ADMITTED_CHECKS, ValueTypes, check_binding
from factory.tools import argvalues
from factory.tools.executor import ToolExecutor
from factory.tools.outcomes import CallResult, is_success_outcome
from factory.tools.spec import ToolSpec

log = logging.getLogger(__name__)

ArgsFn = Callable[[list[SourceArgumentsInput]], Awaitable[list[Any]]]
CHECKPOINT_DIR = "checkpoints/connectivity_graph"


def _stable_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def path_rng(seed: int, domain: str, iteration: int, path: int) -> np.random.Generator:
    return np.random.default_rng([seed, _stable_int(domain), iteration, path])


def _scalar(v: Any) -> bool:
    return isinstance(v, str | int | float | bool)


# --------------------------------------------------------------------------- execution of one step


class _Runner:
    """Executes start calls and edge steps against an executor."""

    def __init__(
        self,
        ex: ToolExecutor,
        specs: Mapping[str, ToolSpec],
        value_tries: int,
        type_mismatched: frozenset[str] = frozenset(),
    ):
        self.ex = ex
        self.specs = specs
        self.value_tries = value_tries
        self.type_mismatched = type_mismatched  # edge ids whose binding passes a value of another type
        self.calls = 0

    async def call(self, tid: str, args: dict[str, Any]) -> CallResult:
        self.calls += 1
        return await self.ex.call(self.specs[tid], args)

    async def edge_step(self, edge: Edge, records: Sequence[Mapping[str, Any]], variant: int) -> dict[str, Any]:
        """Try the edge with up to `value_tries` distinct argument sets drawn from `records`."""
        tried: list[str] = []
        outcome, last = EMPTY_RESULT, None
        structural: str | None = None  # the binding already failed against a real answer
        for rec in records:
            args = plans.fill_args(edge.plan, rec, variant=variant + len(tried))
            if args is None or dumps(args) in tried:
                continue
            tried.append(dumps(args))
            res = await self.call(edge.target_tool_id, args)
            last = res
            if res.ok and res.record_count > 0:
                outcome = res.outcome.value
                break
            outcome = EMPTY_RESULT if res.ok else res.outcome.value
            if outcome_group(outcome) == "environmental":
                # noise ends the tries; evidence against the binding seen before it still counts
                outcome = structural or outcome
                break
            structural = outcome
            if len(tried) >= self.value_tries:
                break
        if edge.edge_id in self.type_mismatched and is_success_outcome(outcome):
            outcome = TYPE_MISMATCH  # the call came back, but with a value of another type bound
        step = {"edge_id": edge.edge_id, "outcome": outcome, "tries": len(tried)}
        if last is not None:
            step.update(
                args=last.args,
                call_digest=last.call_digest,
                records=last.records if is_success_outcome(outcome) else [],
                first_record=last.records[0] if is_success_outcome(outcome) and last.records else None,
                platform=last.platform,
                tool=last.tool,
            )
        return step


def _undecided(edge: Edge, g: Any) -> bool:
    return edge.trials < g.n_min or prob_above(edge.alpha, edge.beta, g.tau_prune) < 0.5


def _eligible(edge: Edge, records: Sequence[Mapping[str, Any]]) -> bool:
    fields = plans.upstream_fields(edge.plan)
    return any(all(r.get(f) not in (None, "") for f in fields) for r in records)


async def _run_path(
    runner: _Runner,
    index: int,
    start: str,
    start_args: dict[str, Any],
    out_edges: Mapping[str, list[Edge]],
    rng: np.random.Generator,
    cfg: ProjectConfig,
    forced: Edge | None = None,
) -> dict[str, Any]:
    """One sampled path (or, with `forced`, one start call followed by that edge)."""
    g = cfg.graph
    res = await runner.call(start, start_args)
    path: dict[str, Any] = {
        "index": index,
        "start": start,
        "start_args": res.args,
        "start_outcome": res.outcome.value,
        "start_records": res.record_count,
        "start_call": {
            "tool": res.tool,
            "platform": res.platform,
            "call_digest": res.call_digest,
            "records": res.records,
        },
        "steps": [],
    }
    if not (res.ok and res.record_count > 0):
        return path
    records, current, visited = res.records, start, {start}
    for hop in range(1 if forced else g.max_path_edges):
        if forced is not None:
            if not _eligible(forced, records):
                break
            edge = forced
        else:
            cands = [e for e in out_edges.get(current, []) if e.target_tool_id not in visited and _eligible(e, records)]
            if not cands:
                break
            if rng.random() < g.epsilon_explore:
                # exploration goes to undecided edges first (fewer than n_min trials, or a posterior
                # leaning towards pruning without settling it): with T·M scaled down from the paper's
                # 100·500, a uniform pick can leave such an edge in limbo for good
                cold = [e for e in cands if _undecided(e, g)] or cands
                edge = cold[int(rng.integers(len(cold)))]
            else:
                theta = [rng.beta(e.alpha, e.beta) for e in cands]
                edge = cands[int(np.argmax(theta))]
        step = await runner.edge_step(edge, records, variant=index + hop)
        path["steps"].append(step)
        if not is_success_outcome(step["outcome"]):
            break
        records, current = step["records"], edge.target_tool_id
        visited.add(current)
    return path


# --------------------------------------------------------------------------- start arguments


def start_inputs(
    starts: Sequence[str], specs: Mapping[str, ToolSpec], kg: KnowledgeGraph, variant0: int
) -> list[SourceArgumentsInput]:
    """Inputs of the `source_arguments` role for the start calls: the values the knowledge graph
    holds for each required input, else (no schema value either) `factory.tools.argvalues`' finds."""
    out = []
    for i, tid in enumerate(starts):
        spec = specs[tid]
        required = set(spec.required_params)
        known = {}
        for p in plans.bindable_params(spec):
            if p in required:
                vals = [v for v in kg.values_for(tid, p) if _scalar(v)]
                if not vals and not argvalues.schema_values(spec.params.get(p, {})):
                    # nothing observed, nothing in the schema: what argument discovery finds in the
                    # description, on the server's command line or by convention (SQL, timezones)
                    found = argvalues.candidates(spec, p, argvalues.ValuePool())
                    vals = [c.value for c in found if c.source not in argvalues.WEAK and _scalar(c.value)]
                if vals:
                    known[p] = vals
        out.append(SourceArgumentsInput(tool=ToolBrief.from_spec(spec), known_values=known, variant=variant0 + i))
    return out


def start_args(spec: ToolSpec, inp: SourceArgumentsInput, result: Any) -> tuple[dict[str, Any], bool]:
    """Validated semantic arguments of the start call plus its DEFAULT generic values; True when
    the rules fallback had to replace the role's output."""
    out = getattr(result, "output", None)
    fallback = bool(getattr(result, "fallback", False))
    params = set(plans.bindable_params(spec))
    if not isinstance(out, SourceArguments) or any(p not in params for p in out.args):
        out, fallback = rules.source_arguments(inp), True
    args: dict[str, Any] = dict(out.args)
    for p, schema in spec.params.items():
        if p in spec.generic_params.names() and p != spec.generic_params.key:
            v = plans.generic_default(spec, p, schema)
            if v is not None:
                args[p] = v
    return args, fallback


# --------------------------------------------------------------------------- the loop


def type_mismatched_edges(
    edges: Sequence[Edge], types: ValueTypes, kg: KnowledgeGraph, specs: Mapping[str, ToolSpec]
) -> frozenset[str]:
    """Ids of edges with a binding that fails the value-type check: its stored `type_check`, or
    (a binding stored without one) `check_binding` over the types and the observed values."""
    out = set()
    for e in edges:
        for b in e.bindings:
            check = b.get("type_check")
            if check is None and types and e.target_tool_id in specs:
                f, p = b["source_field"], b["target_param"]
                check, _ = check_binding(
                    types,
                    e.source_tool_id,
                    f,
                    e.target_tool_id,
                    p,
                    kg.field_values(e.source_tool_id, f),
                    target_values(kg, e.target_tool_id, specs[e.target_tool_id], p),
                )
            if check is not None and check not in ADMITTED_CHECKS:
                out.add(e.edge_id)
    return frozenset(out)


def _checkpoint_key(skeleton: Mapping[str, Any], edges: Sequence[Edge], cfg: ProjectConfig, domain: str) -> str:
    """Stable inputs only: the tool surface, the candidate edges, the graph config and the seed. The
    seeded knowledge graph is left out: it holds probe values that differ on every run (ids created by
    stateful calls), which made every re-run discard its checkpoint (issue 21 #11)."""
    canon = {
        "domain": domain,
        "edges": [(e.edge_id, e.prior_alpha, e.prior_beta) for e in edges],
        "fingerprint": skeleton.get("fingerprint"),
        "graph": cfg.graph.model_dump(mode="json"),
        "seed": cfg.seed,
        "value_types": skeleton.get("value_types"),
    }
    return hashlib.sha256(dumps(canon).encode()).hexdigest()


def _observe(kg: KnowledgeGraph, specs: Mapping[str, ToolSpec], tid: str, call: Mapping[str, Any], origin: str) -> None:
    spec = specs[tid]
    kg.add_call(
        domain=spec.domain,
        platform=spec.platform,
        tool=spec.name,
        args=call.get("args") or {},
        records=call.get("records") or [],
        call_digest=call.get("call_digest") or "",
        ok=True,
        origin=origin,
        generic=spec.generic_params.names(),
    )


class _Adjacency:
    """The retained edges of a run by source tool, in the order of the edge list, with the counts an
    iteration reports; `prune` keeps them current (an edge is only ever pruned, never restored)."""

    def __init__(self, edges: list[Edge], specs: Mapping[str, ToolSpec], state_changing: bool):
        self.edges = edges
        self.specs = specs
        self.state_changing = state_changing
        self.by_id = {e.edge_id: e for e in edges}
        self.position = {e.edge_id: i for i, e in enumerate(edges)}
        self.out_edges: dict[str, list[Edge]] = {}
        for e in edges:
            if e.status != "retained":
                continue
            if not state_changing and specs[e.target_tool_id].state_changing:
                continue
            self.out_edges.setdefault(e.source_tool_id, []).append(e)
        self.retained = sum(1 for e in edges if e.status == "retained")
        self.pruned = sum(1 for e in edges if e.status == "pruned")
        self._starts: list[str] | None = None

    def starts(self) -> list[str]:
        """Tools a path may start from (sorted): sources of a retained edge, not state-changing."""
        if self._starts is None:
            self._starts = sorted(s for s in self.out_edges if self.state_changing or not self.specs[s].state_changing)
        return self._starts

    def prune(self, e: Edge) -> None:
        self.retained -= 1
        self.pruned += 1
        out = self.out_edges.get(e.source_tool_id)
        at = next((i for i, x in enumerate(out or []) if x is e), None)
        if out is not None and at is not None:
            del out[at]
            if not out:
                del self.out_edges[e.source_tool_id]
                self._starts = None


class Refiner:
    """Runs the loop for one domain's skeleton (async; see `refine` for the sync entry point)."""

    def __init__(
        self,
        domain: str,
        skeleton: Mapping[str, Any],
        specs: Mapping[str, ToolSpec],
        kg: KnowledgeGraph,
        cfg: ProjectConfig,
        make_executor: Callable[[], ToolExecutor],
        source_args: ArgsFn | None = None,
        store: Store | None = None,
        progress: Callable[[str], None] = log.info,
        after_iteration: Callable[[int], None] | None = None,
        concurrent: bool = True,
        legacy: bool = False,
    ):
        self.concurrent = concurrent
        self.legacy = legacy  # the earlier whole-graph work per iteration (copies, prune scan): benchmark only
        self.domain = domain
        self.skeleton = skeleton
        self.edges = parse_edges(skeleton["edges"])
        self.specs = specs
        self.kg = kg
        self.cfg = cfg
        self.make_executor = make_executor
        self.source_args = source_args
        self.store = store
        self.progress = progress
        self.after_iteration = after_iteration
        self.key = _checkpoint_key(skeleton, self.edges, cfg, domain)
        self.types = ValueTypes.from_graph(skeleton)
        self.type_mismatched = type_mismatched_edges(self.edges, self.types, kg, specs)
        self.rel = f"{CHECKPOINT_DIR}/{domain}.json"
        self._adjacency: _Adjacency | None = None
        self._seen: tuple[list[Any], set[Any]] | None = None  # state["_seen_calls"] and a set of it

    # -- checkpoint
    def _load(self) -> dict[str, Any] | None:
        if self.store is None or not self.cfg.graph.checkpoint or not self.store.exists(self.rel):
            return None
        try:
            ck = self.store.read_json(self.rel)
        except Exception as e:  # a corrupt checkpoint is ignored, never fatal
            self.progress(f"ignoring unreadable checkpoint {self.rel}: {e}")
            return None
        if ck.get("key") != self.key:
            self.progress("checkpoint belongs to other inputs or config; starting over")
            return None
        state = ck["state"]
        state["edges"] = parse_edges(state["edges"])
        return state

    def _save(self, state: dict[str, Any]) -> None:
        if self.store is not None and self.cfg.graph.checkpoint:
            self.store.write_json(self.rel, {"key": self.key, "state": state})

    def clear(self) -> None:
        if self.store is not None:
            self.store.delete(self.rel)

    # -- arguments
    async def _args(self, starts: list[str], variant0: int) -> tuple[list[dict[str, Any]], int]:
        inputs = start_inputs(starts, self.specs, self.kg, variant0)
        results = await self.source_args(inputs) if self.source_args else [None] * len(inputs)
        out, fallbacks = [], 0
        for tid, inp, res in zip(starts, inputs, results, strict=True):
            args, fb = start_args(self.specs[tid], inp, res)
            fallbacks += fb and self.source_args is not None
            out.append(args)
        return out, fallbacks

    # -- the retained graph, kept between iterations
    def _index(self, state: dict[str, Any]) -> "_Adjacency":
        """Adjacency lists of the retained, executable edges (built once per run, then updated as
        edges are pruned), so an iteration costs what its paths do, not what the graph holds."""
        if self._adjacency is None or self._adjacency.edges is not state["edges"]:
            self._adjacency = _Adjacency(state["edges"], self.specs, self.cfg.graph.execute_state_changing)
        return self._adjacency

    # -- one iteration
    async def _iteration(self, runner: _Runner, state: dict[str, Any], t: int) -> None:
        g = self.cfg.graph
        if self.legacy:  # as before issue 20: a copy of every edge and the adjacency rebuilt each iteration
            live = state["edges"]
            adj = _Adjacency([e.model_copy() for e in live], self.specs, g.execute_state_changing)
            adj.by_id = {e.edge_id: e for e in live}
        else:
            adj = self._index(state)
        # posteriors as of the start of the iteration: nothing changes an edge before every path has
        # finished (the updates below), so the paths read the live edges
        out_edges = adj.out_edges
        starts_pool = adj.starts()
        t0, calls0 = time.monotonic(), runner.calls
        entry = {
            "iteration": t,
            "paths": 0,
            "passed": 0,
            "pass_rate": 0.0,
            "steps": 0,
            "step_successes": 0,
            "step_success_rate": 0.0,
            "start_failures": 0,
            "dead_ends": 0,
        }
        if starts_pool:
            rngs = [path_rng(self.cfg.seed, self.domain, t, i) for i in range(g.paths_per_iteration)]
            starts = [starts_pool[int(r.integers(len(starts_pool)))] for r in rngs]
            args, fallbacks = await self._args(starts, variant0=(t - 1) * g.paths_per_iteration)
            state["stats"]["start_arg_fallbacks"] += fallbacks
            jobs = [
                runner.ex.in_episode(_run_path(runner, i, s, a, out_edges, r, self.cfg))  # own state per path
                for i, (s, a, r) in enumerate(zip(starts, args, rngs, strict=False))
            ]
            if self.concurrent:
                paths = await asyncio.gather(*jobs)
            else:  # one path at a time (benchmark baseline)
                paths = [await j for j in jobs]
            touched: dict[str, Edge] = {}
            for p in paths:  # path order: deterministic updates
                if is_success_outcome(p["start_outcome"]) and p["start_records"]:
                    self._keep_observation(state, p["start"], {**p["start_call"], "args": p["start_args"]})
                else:
                    entry["start_failures"] += 1
                    continue
                if not p["steps"]:
                    entry["dead_ends"] += 1
                    continue
                entry["paths"] += 1
                ok_all = True
                for s in p["steps"]:
                    e = adj.by_id[s["edge_id"]]
                    apply_outcome(e, s["outcome"], g)
                    touched[e.edge_id] = e
                    entry["steps"] += 1
                    if is_success_outcome(s["outcome"]):
                        entry["step_successes"] += 1
                        self._cache(e, s)
                        self._keep_observation(state, e.target_tool_id, s)
                    else:
                        ok_all = False
                entry["passed"] += ok_all
            # Eq. 5 depends on an edge's own counts only: an edge no path tried is as it was
            checked: list[Edge] = list(state["edges"] if self.legacy else touched.values())
            for e in sorted(checked, key=lambda x: adj.position[x.edge_id]):
                if e.status == "retained" and should_prune(e, g):
                    e.status, e.pruned_at_iteration = "pruned", t
                    adj.prune(e)
        entry["pass_rate"] = round(entry["passed"] / entry["paths"], 4) if entry["paths"] else 0.0
        entry["step_success_rate"] = round(entry["step_successes"] / entry["steps"], 4) if entry["steps"] else 0.0
        entry["retained"] = adj.retained
        entry["pruned"] = adj.pruned
        entry["calls"] = runner.calls - calls0
        entry["seconds"] = round(time.monotonic() - t0, 3)
        state["history"].append(entry)

    def _cache(self, edge: Edge, step: Mapping[str, Any]) -> None:
        cache = edge.cache
        if len(cache) < self.cfg.graph.cache_per_edge and all(
            c["call_digest"] != step.get("call_digest") for c in cache
        ):
            cache.append(
                {
                    "input": step.get("args"),
                    "first_record": step.get("first_record"),
                    "call_digest": step.get("call_digest"),
                }
            )

    def _keep_observation(self, state: dict[str, Any], tid: str, call: Mapping[str, Any]) -> None:
        _observe(self.kg, self.specs, tid, call, "path")
        obs = state["observations"]
        digest = call.get("call_digest")
        listed = state["_seen_calls"]
        if self._seen is None or self._seen[0] is not listed:
            self._seen = (listed, set(listed))
        if len(obs) < self.cfg.graph.max_observations and digest not in self._seen[1]:
            listed.append(digest)
            self._seen[1].add(digest)
            spec = self.specs[tid]
            obs.append(
                {
                    "tool_id": tid,
                    "domain": spec.domain,
                    "platform": spec.platform,
                    "tool": spec.name,
                    "args": call.get("args") or {},
                    "records": list(call.get("records") or [])[:3],
                    "call_digest": digest,
                }
            )

    # -- held-out sweep
    async def _sweep(self, runner: _Runner, state: dict[str, Any]) -> None:
        n = self.cfg.graph.eval_trials_per_edge
        edges = [e for e in state["edges"] if e.trials > 0]
        if n <= 0 or not edges:
            return
        jobs = [(e, k) for e in edges for k in range(n)]
        starts = [e.source_tool_id for e, _ in jobs]
        args, _ = await self._args(starts, variant0=10_000)
        results = await asyncio.gather(
            *(
                runner.ex.in_episode(
                    _run_path(runner, i, s, a, {}, path_rng(self.cfg.seed, self.domain, 0, i), self.cfg, forced=e)
                )
                for i, ((e, _), s, a) in enumerate(zip(jobs, starts, args, strict=False))
            )
        )
        for (e, _), p in zip(jobs, results, strict=True):
            if not p["steps"]:
                continue
            e.eval_trials = (e.eval_trials or 0) + 1
            e.eval_successes = (e.eval_successes or 0) + int(is_success_outcome(p["steps"][0]["outcome"]))

    async def run(self) -> dict[str, Any]:
        g = self.cfg.graph
        state = self._load()
        resumed_from = 0
        if state is None:
            state = {
                "edges": copy.deepcopy(self.edges),
                "history": [],
                "observations": [],
                "_seen_calls": [],
                "stats": {"start_arg_fallbacks": 0},
            }
        else:
            resumed_from = len(state["history"])
            for ob in state["observations"]:  # rebuild the knowledge the finished iterations gathered
                _observe(self.kg, self.specs, ob["tool_id"], ob, "path")
            self.progress(f"{self.domain}: resuming after iteration {resumed_from}")
        state["stats"]["resumed_from_iteration"] = resumed_from
        async with self.make_executor() as ex:
            runner = _Runner(ex, self.specs, g.value_tries, self.type_mismatched)
            t_loop = time.monotonic()
            for t in range(len(state["history"]) + 1, g.iterations + 1):
                await self._iteration(runner, state, t)
                h = state["history"][-1]
                self.progress(
                    f"{self.domain} iteration {t}/{g.iterations}: {h['paths']} paths, pass {h['pass_rate']:.2f}, "
                    f"steps {h['step_success_rate']:.2f}, retained {h['retained']}, pruned {h['pruned']}"
                )
                self._save(state)
                if self.after_iteration is not None:
                    self.after_iteration(t)
            state["stats"]["loop_seconds"] = round(time.monotonic() - t_loop, 3)
            await self._sweep(runner, state)
            state["stats"]["calls"] = runner.calls
        state.pop("_seen_calls", None)
        self._adjacency = None
        return state


# --------------------------------------------------------------------------- summaries


def _set_rates(edges: Sequence[Edge], held_out: bool, min_trials: int) -> dict[str, Any]:
    """Success rates over `edges` with ≥ `min_trials` trials: in-loop counts, or the held-out sweep's."""
    counts = [(e.eval_trials or 0, e.eval_successes or 0) if held_out else (e.trials, e.successes) for e in edges]
    tested = [(n, k) for n, k in counts if n >= min_trials]
    trials = sum(n for n, _ in tested)
    succ = sum(k for _, k in tested)
    return {
        "edges": len(tested),
        "trial_success_rate": round(succ / trials, 4) if trials else None,
        "mean_edge_success_rate": round(float(np.mean([k / n for n, k in tested])), 4) if tested else None,
        "zero_success_share": round(sum(1 for _, k in tested if k == 0) / len(tested), 4) if tested else None,
    }


def figure4(edges: Sequence[Edge]) -> dict[str, Any]:
    """Execution success of the skeleton (every admitted edge), G* (retained) and the pruned set:
    in-loop trials (t_e ≥ 1 and ≥ 10) and the held-out sweep."""
    groups = {
        "skeleton": list(edges),
        "retained": [e for e in edges if e.status == "retained"],
        "pruned": [e for e in edges if e.status == "pruned"],
    }
    out: dict[str, Any] = {}
    for name, es in groups.items():
        out[name] = {
            "loop": _set_rates(es, held_out=False, min_trials=1),
            "loop_high_evidence": _set_rates(es, held_out=False, min_trials=10),
            "held_out": _set_rates(es, held_out=True, min_trials=1),
        }
    return out


def add_posterior_summary(e: Edge, tau: float) -> None:
    """Set the edge's posterior mean and Pr[θ > τ] (4 places), as stored in G*."""
    e.posterior_mean = round(posterior_mean(e.alpha, e.beta), 4)
    e.prob_above_tau = round(prob_above(e.alpha, e.beta, tau), 4)
