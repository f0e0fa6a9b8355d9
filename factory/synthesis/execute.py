"""Executing trajectory building blocks for real: logical calls (with paging), junctions, chains.

A *logical call* is one tool call with all its pages: page 1 with the largest page size the
schema allows (bounded by `max_scan_records`), then, when the reported total exceeds what came
back, the remaining pages in parallel (they share a golden step).  A total above
`max_scan_records` is a `Rejection('response_too_large')`: nothing beyond one bounded page is
ever read; a chain's seed call above it is typed by a bounded scan instead (`run_chain`,
`factory.synthesis.scan`).

Every argument is converted to its parameter's JSON-Schema type where it is built (edge
arguments from a record, cache constants, DEFAULT values) and again before a call is sent
(`factory.synthesis.coerce`): a value with no form of that type is a
`Rejection('uncoercible_value')`.  A junction can be run with a *fixed* process node (the
re-evaluation of a template on another seed keeps the question's operator and field).
"""

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from factory.graph import plan as plans
from factory.graph.edge import Edge
from factory.semtypes import UNKNOWN, TypeRef, ValueTypes
from factory.synthesis.coerce import Uncoercible, coerce_args, coerce_value, schema_types
from factory.synthesis.junctions import (
    DRV,
    Rejection,
    apply_operator,
    choose_process_node,
    distinct_keys,
    junction_type,
    key_of,
    reapply_node,
)
from factory.synthesis.phrasing import stated_defaults
from factory.tools.argvalues import entry_kind
from factory.tools.executor import ToolExecutor
from factory.tools.fingerprint import sha256_digest
from factory.tools.outcomes import CallResult
from factory.tools.spec import ToolSpec

THRESHOLD_OPERATORS = ("ge", "le", "eq", "date_after")  # their pivots are stated in the query
#: parameters that cap how many records one call returns (beside a source's detected page size)
LIMIT_NAMES = frozenset({"limit", "max_results", "maxresults", "top", "top_k", "page_size", "pagesize", "per_page"})


@dataclass
class Fetched:
    """One logical call: its page calls and every record read."""

    tool_id: str
    args: dict[str, Any]
    calls: list[CallResult]
    records: list[dict[str, Any]]
    total: int

    @property
    def count(self) -> int:
        return self.total


@dataclass
class Stage:
    """The logical calls of one step of a trajectory (several for FAN, CMP arms, SEM)."""

    fetched: list[Fetched]
    role: str = "chain"  # chain | seed | branch | arm


@dataclass
class ChainRun:
    stages: list[Stage] = field(default_factory=list)
    junctions: list[dict[str, Any]] = field(default_factory=list)
    bridge_values: list[Any] = field(default_factory=list)
    thresholds: list[Any] = field(default_factory=list)
    constants: list[dict[str, Any]] = field(default_factory=list)  # required args filled from the edge cache
    # seed calls above the bound typed by a bounded scan (`factory.synthesis.scan`): what each scan decided
    scans: list[dict[str, Any]] = field(default_factory=list)


def page_args(spec: ToolSpec, args: Mapping[str, Any], bound: int) -> dict[str, Any]:
    out = dict(args)
    g = spec.generic_params
    if g.page_size and g.page_size in spec.params:
        schema = spec.params[g.page_size]
        mx = schema.get("maximum") or 100
        out[g.page_size] = int(min(mx, bound))
    if g.page and g.page in spec.params:
        out[g.page] = 1
    return out


def record_cap(spec: ToolSpec, args: Mapping[str, Any]) -> tuple[str, int] | None:
    """(parameter, value) of the integer parameter capping the call's record count (the source's page size or
    a `limit`-like name) as sent, else its schema default; None when the tool has none or no value is known."""
    names = [spec.generic_params.page_size] if spec.generic_params.page_size else []
    names += sorted(p for p in spec.params if p.lower() in LIMIT_NAMES and p not in names)
    for p in names:
        schema = spec.params.get(p) or {}
        if "integer" not in schema_types(schema):
            continue
        v = args.get(p, schema.get("default"))
        if isinstance(v, int | float) and not isinstance(v, bool) and v >= 1:
            return p, int(v)
    return None


def _capped(spec: ToolSpec, cap: tuple[str, int], reported: int | None, got: int, total: int) -> bool:
    """Whether `got` records may be the cap rather than the data: as many as the cap and no total beyond them. A
    paged API's reported total is trusted; a `limit` tool's own count of what it returned (`count: 10`) is not."""
    if reported is not None and cap[0] == spec.generic_params.page_size:
        return False
    return got >= cap[1] and total <= got


def _raised(spec: ToolSpec, param: str, value: int, bound: int) -> int | None:
    """A larger cap the schema allows (its maximum, at most `bound`), or None."""
    mx = (spec.params.get(param) or {}).get("maximum")
    if not isinstance(mx, int | float) or isinstance(mx, bool):
        return None
    up = int(min(mx, bound))
    return up if up > value else None


def typed_args(spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
    """`args` converted to the tool's parameter types; Rejection('uncoercible_value') when one cannot be."""
    try:
        return coerce_args(spec.params, args, spec.name)
    except Uncoercible as e:
        raise Rejection("uncoercible_value", str(e)[:200]) from None


async def fetch(ex: ToolExecutor, spec: ToolSpec, tid: str, args: Mapping[str, Any], bound: int) -> Fetched:
    """Execute a logical call; Rejection on failure, on an empty result, or on a total above `bound`. A documented
    default that shapes the result (a search radius, `phrasing.stated_defaults`) is sent explicitly: the question
    states it ('within 100 km'), so the golden call passes it too rather than relying on the tool's default (blind
    read s11 conversations #20: `airports_near` called without the radius the user gave)."""
    args = page_args(spec, typed_args(spec, {**stated_defaults(spec, args), **args}), bound)
    res = await ex.call(spec, args)
    if not res.ok:
        raise Rejection("call_failed", f"{spec.name}: {res.outcome.value} {res.detail}"[:200])
    records = list(res.records)
    total = res.total_count if res.total_count is not None else res.record_count
    if total > bound:
        raise Rejection(
            "response_too_large", f"{spec.name} reports {total} records (bound {bound})", call=(tid, dict(args), total)
        )
    calls = [res]
    if total > len(records):
        g = spec.generic_params
        if not g.page or g.page not in spec.params or not res.record_count:
            raise Rejection("response_too_large", f"{spec.name}: {total} records and no way to page")
        pages = math.ceil(total / res.record_count)
        more = await ex.call_many([(spec, {**args, g.page: p}) for p in range(2, pages + 1)])
        for r in more:
            if not r.ok:
                raise Rejection("call_failed", f"{spec.name} page: {r.outcome.value} {r.detail}"[:200])
            records.extend(r.records)
        calls.extend(more)
    if not records:
        raise Rejection("empty_result", f"{spec.name}({_brief(args)}) returned no records")
    cap = record_cap(spec, args)
    if cap is not None and _capped(spec, cap, res.total_count, len(records), total):
        # exactly as many records as the cap allows and no total: the answer would be the cap ('the airports
        # within 100 km (at most 10)' → 10), not the data; ask again under the largest cap allowed, else reject
        up = _raised(spec, cap[0], cap[1], bound)
        if up is None:
            raise Rejection(
                "capped_count",
                f"{spec.name} returned {len(records)} records, its {cap[0]} = {cap[1]}: there may be more",
            )
        return await fetch(ex, spec, tid, {**args, cap[0]: up}, bound)
    return Fetched(tool_id=tid, args=dict(res.args), calls=calls, records=records[:bound], total=total)


async def count_only(ex: ToolExecutor, spec: ToolSpec, args: Mapping[str, Any], bound: int) -> int | None:
    """The record count of one call, from its first page only (one HTTP call); None when the call fails,
    or when the tool reports no total and the page came back full (the count is unknown)."""
    sent = page_args(spec, typed_args(spec, args), bound)
    res = await ex.call(spec, sent)
    if not res.ok:
        return None
    total = int(res.total_count) if res.total_count is not None else int(res.record_count)
    cap = record_cap(spec, sent)
    if cap is not None and _capped(spec, cap, res.total_count, int(res.record_count), total):
        return None  # a full page and no total beyond it: the count is unknown
    return total


def _brief(args: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items() if v != "<KEY>")[:120]


def edge_args(
    edge: Edge,
    record: Mapping[str, Any],
    constants: list[dict[str, Any]] | None = None,
    spec: ToolSpec | None = None,
) -> dict[str, Any]:
    """Target arguments: bound fields from `record`, DEFAULT generics, required CLARIFY params from the
    edge cache C (then the plan's candidates).  Cache-filled values are reported in `constants`.
    With the target `spec`, every value has its parameter's type (Rejection('uncoercible_value'))."""
    params = spec.params if spec is not None else {}

    def typed(p: str, v: Any) -> Any:
        try:
            return coerce_value(v, params.get(p))
        except Uncoercible as e:
            raise Rejection("uncoercible_value", f"{edge.target_tool}.{p}: {e}"[:200]) from None

    args: dict[str, Any] = {}
    cache_inputs = [c.get("input") or {} for c in edge.cache]
    for p, st in edge.plan.items():
        kind = st["kind"]
        if kind == plans.UPSTREAM:
            args[p] = typed(p, plans.apply_transform(record.get(st["field"]), st.get("transform")))
        elif kind == plans.DEFAULT:
            args[p] = typed(p, st["value"])
        elif kind == plans.CLARIFY and st.get("required"):
            vals = [c[p] for c in cache_inputs if c.get(p) not in (None, "")] or list(st.get("candidates") or [])
            if vals:
                args[p] = typed(p, vals[0])
                if constants is not None:
                    constants.append({"tool_id": edge.target_tool_id, "param": p, "value": args[p]})
    return args


def converts_own_argument(types: ValueTypes, f: Fetched, fields: Sequence[str], key: Sequence[Any]) -> bool:
    """Whether the value every record of `f` shares names the entity `f` was asked about in another form (the
    sigungu listing of sido code 31 carries the sido's name): a conversion of the call's own argument, the
    same entity level; not the argument itself (a round trip) nor another entity (the province of a district)."""
    for name, value in zip(fields, key, strict=True):
        ft = types.field_type(f.tool_id, name)
        if not ft or ft == UNKNOWN:
            return False
        entity = TypeRef.parse(ft).entity
        same = False
        for p, arg in f.args.items():
            pt = types.param_type(f.tool_id, p)
            if pt and pt != UNKNOWN and TypeRef.parse(pt).entity == entity and str(arg) != str(value):
                same = True
        if not same:
            return False
    return True


async def junction(
    ex: ToolExecutor,
    specs: Mapping[str, ToolSpec],
    edge: Edge,
    upstream: Sequence[Fetched],
    phi: int,
    bound: int,
    rng: np.random.Generator,
    run: ChainRun,
    fixed: Mapping[str, Any] | None = None,
    types: ValueTypes | None = None,
) -> Stage:
    """Type the junction by cardinality, insert a process node for DRV, execute the downstream call(s).

    `fixed` re-runs a junction of a known template on another seed (or the second arm of a comparison):
    {'process': node or None}.  The junction must be of the same kind: with a node, more than φ values
    and the node applied again (max/min/most-frequent pivots re-read from these records); without one,
    at most φ values; else Rejection('no_valid_pivot')."""
    fields = plans.upstream_fields(edge.plan)
    records, path_kind = of_path_kind([r for f in upstream for r in f.records], edge, specs[edge.target_tool_id])
    keys = distinct_keys(records, fields)
    if not keys:
        what = f"{path_kind} entry" if path_kind else "record"
        raise Rejection("junction_field_missing", f"no {what} of {edge.source_tool} has {', '.join(fields)}")
    n = len(keys)
    called = [f for f in upstream if f.records]
    per_call = [distinct_keys(f.records, fields) for f in called]
    listings = [f for f in upstream if sum(key_of(r, fields) is not None for r in f.records) >= 2]
    conversion = types is not None and all(
        converts_own_argument(types, f, fields, k[0]) for f, k in zip(called, per_call, strict=True) if len(k) == 1
    )
    if listings and all(len(k) == 1 for k in per_call) and not conversion:
        # the 13 읍면동 of 11500 all carry 서울특별시; each album's tracks all carry that album's id: the value is
        # what the call was about (its context), so the next call climbs back to another entity level
        raise Rejection(
            "entity_level",
            f"every record of each {edge.source_tool} call shares its {', '.join(fields)} "
            f"({', '.join(str(k[0][0]) for k in per_call[:3])}): {edge.target_tool} would be about the calls' "
            "context, not about their records",
        )
    jtype = junction_type(n, phi)
    node = None
    kept: Sequence[Mapping[str, Any]] = records
    if fixed is not None:  # the same kind of junction as the template's: a process node exactly when DRV
        if fixed.get("process") and jtype == DRV:
            node = reapply_node(records, fields, fixed["process"], phi)
        elif fixed.get("process"):
            raise Rejection(
                "no_valid_pivot", f"{n} values of {', '.join(fields)}: the template's process node needs more"
            )
        elif jtype == DRV:
            raise Rejection("no_valid_pivot", f"{n} values of {', '.join(fields)} and no process node in the template")
    elif jtype == DRV:
        node = choose_process_node(records, fields, phi, rng)
    if node is not None:
        kept = apply_operator(records, node)
        keys = distinct_keys(kept, fields)
        if node["operator"] in THRESHOLD_OPERATORS:
            run.thresholds.append(node["threshold"])
    if node is None and (missing := sum(key_of(r, fields) is None for r in kept)):
        raise Rejection(
            "unbridged_records",
            f"{missing} of {len(kept)} {edge.source_tool} records have no {', '.join(fields)}: the junction drops them",
        )
    first: dict[tuple | None, Mapping[str, Any]] = {}
    for r in kept:
        first.setdefault(key_of(r, fields), r)
    spec = specs[edge.target_tool_id]
    arg_sets = [edge_args(edge, first[k], run.constants if i == 0 else None, spec) for i, k in enumerate(keys)]
    if len({repr(sorted(a.items())) for a in arg_sets}) < len(arg_sets):  # two values, one call (a transform)
        raise Rejection("repeated_call", f"{len(keys)} values of {', '.join(fields)} give the same {spec.name} call")
    if spec.state_changing:  # one at a time: ids the service hands out then follow the golden order
        fetched: list[Fetched | BaseException] = []
        for a in arg_sets:
            try:
                fetched.append(await fetch(ex, spec, edge.target_tool_id, a, bound))
            except Exception as e:  # noqa: BLE001 - same handling as the concurrent branch
                fetched.append(e)
    else:
        fetched = await asyncio.gather(
            *(fetch(ex, spec, edge.target_tool_id, a, bound) for a in arg_sets), return_exceptions=True
        )
    done: list[Fetched] = []
    for f in fetched:
        if isinstance(f, BaseException):
            raise f
        done.append(f)
    passed = []
    for a in arg_sets:
        for st_p, st in edge.plan.items():
            if st["kind"] == plans.UPSTREAM:
                passed.append(a[st_p])
    for k in keys:
        passed.extend(k)
    run.bridge_values.extend(v for v in passed if v not in run.bridge_values)
    run.junctions.append(
        {
            "from": f"{edge.source_tool}.{'+'.join(fields)}",
            "to": f"{edge.target_tool}.{'+'.join(p for p, s in edge.plan.items() if s['kind'] == plans.UPSTREAM)}",
            "edge_id": edge.edge_id,
            "type": jtype,
            "n": n,
            "width": len(keys),
            "process": node,
            **({"path_kind": path_kind} if path_kind else {}),
        }
    )
    return Stage(fetched=done)


def of_path_kind(
    records: Sequence[dict[str, Any]], edge: Edge, target: ToolSpec
) -> tuple[list[dict[str, Any]], str | None]:
    """The listing entries of the kind the target's path input takes (`ToolSpec.path_kinds`: files for a
    file reader, folders for a lister) and that kind; records that are no listing entry (no ``type`` of
    file/directory) are kept.  Unchanged, with None, when the input's kind is unknown or no record is an entry."""
    fed = [p for p, st in edge.plan.items() if st["kind"] == plans.UPSTREAM]
    kinds = {target.path_kinds[p] for p in fed if p in target.path_kinds}
    if len(kinds) != 1 or not any(entry_kind(r) for r in records):
        return list(records), None
    (want,) = kinds
    return [r for r in records if entry_kind(r) in (None, want)], want


async def run_chain(
    ex: ToolExecutor,
    specs: Mapping[str, ToolSpec],
    edges: Sequence[Edge],
    seed_tid: str,
    seed_args: Mapping[str, Any],
    phi: int,
    bound: int,
    rng: np.random.Generator,
    nodes: Sequence[Mapping[str, Any] | None] | None = None,
    types: ValueTypes | None = None,
) -> ChainRun:
    """The seed call, then one junction per edge; `nodes` (one per edge) re-runs a known template.

    A seed call whose total is above `bound` (`response_too_large`) is not read: a bounded scan
    (`scan_junction`) types its junction on the first edge's fields from the reported total and a
    sample, and for DRV the verified equality filter (the process node, whose filtered call has 1..φ
    values) becomes the seed call; its filter values are cited like constants.  `bound` is then what a
    scan holds in memory, not a limit on the response (a SEQ/FAN seed above it is still rejected: its
    records are all needed downstream)."""
    run = ChainRun()
    try:
        f0 = await fetch(ex, specs[seed_tid], seed_tid, seed_args, bound)
    except Rejection as too_large:
        if too_large.reason != "response_too_large" or not edges:
            raise
        f0 = await _scanned_seed(ex, specs[seed_tid], seed_tid, seed_args, edges[0], phi, bound, rng, run, too_large)
    run.stages.append(Stage(fetched=[f0], role="seed"))
    for i, e in enumerate(edges):
        fixed = None if nodes is None else {"process": nodes[i]}
        run.stages.append(await junction(ex, specs, e, run.stages[-1].fetched, phi, bound, rng, run, fixed, types))
    return run


async def _scanned_seed(
    ex: ToolExecutor,
    spec: ToolSpec,
    tid: str,
    args: Mapping[str, Any],
    edge: Edge,
    phi: int,
    bound: int,
    rng: np.random.Generator,
    run: ChainRun,
    too_large: Rejection,
) -> Fetched:
    """The seed call narrowed by the verified process node of a bounded scan (DRV), else `too_large`."""
    from factory.synthesis.scan import scan_junction  # scan builds on fetch: imported where it is used

    fields = plans.upstream_fields(edge.plan)
    scan = await scan_junction(ex, spec, tid, args, fields, phi, bound, rng)
    if scan.node is None or scan.kept is None:
        raise too_large  # SEQ/FAN over more records than the bound: every record would be needed
    filters = scan.node["filters"]
    run.constants.extend({"tool_id": tid, "param": p, "value": v} for p, v in filters.items())
    run.scans.append(
        {
            "tool_id": tid,
            "fields": list(fields),
            "type": scan.jtype,
            "total": scan.total,
            "records_read": scan.records_read,
            "pages_read": scan.pages_read,
            "sample": len(scan.sample),
            "process": scan.node,
        }
    )
    return scan.kept


def call_row(res: CallResult, step: int, tid: str) -> dict[str, Any]:
    """A golden action (plus what the trajectory keeps of the result)."""
    return {
        "step": step,
        "tool": res.tool,
        "tool_id": tid,
        "platform": res.platform,
        "args": res.args,
        "outcome": res.outcome.value,
        "records": res.record_count,
        "total_count": res.total_count,
        "call_digest": res.call_digest,
        "result_digest": sha256_digest([res.records, res.total_count]),
        "sample": res.records[:2],
    }
