"""The skeleton graph (EDGE §3.2, first half): candidate edges, proposals, admission, priors.

For each source tool u of the domain, a dense retriever over signature
embeddings (the tool_catalog) picks its top-K same-domain and top-K_x
cross-domain neighbours v.  A candidate no output field of which could fill any
bindable input of v by value type is rejected at once (`type_feasible`:
`no_type_compatible_slots`, one sparse product over the tools' type signatures);
one `edge_proposal` role call per remaining candidate returns a feasibility score s, bindings (target param ← source field) and
default candidates; the bindings are checked against the real schemas, the
plan is compiled (`factory.graph.plan`), and the edge is admitted when
s ≥ s_min and at least one binding survived.  Its prior is
Beta(1 + κs, 1 + κ(1 − s)).

Value types (`factory.semtypes`, held by tool_lexicon): a binding is admitted only when the
source field's type may fill the target parameter's (equal, or a narrower entity of the same
code system), or, where a side is 'unknown', when the names agree and the observed values
overlap.  Other bindings are dropped and recorded with their reason (`type_rejections`:
type_mismatch / type_unverified); a proposal left without a binding is rejected with
that reason.  Kept bindings carry their `type_check` and the `value_type` they pass, and
the graph value carries the types of the tools it involves (`value_types`) for later stages.

Never edges: key-acquisition tools (as source or target) and API-key
parameters.  Tools with no output fields cannot be sources and tools with no
bindable input cannot be targets; they are counted, not errors.  A proposal
whose bindings name fields or parameters that do not exist keeps its valid
bindings; the dropped ones are counted (`invalid_bindings`).
"""

import contextlib
import gc
import hashlib
import heapq
import logging
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from factory.config import ProjectConfig
from factory.graph import plan as plans
from factory.graph.edge import Edge, parse_edges
from factory.graph.plan import CLARIFY, DEFAULT, UPSTREAM
from factory.graph.posterior import prior
from factory.io import dumps
from factory.kg.graph import KnowledgeGraph
from factory.lexicon import infer_value_types
from factory.llm.schemas import Binding, EdgeProposalInput, ToolBrief
from factory.report import Markdown, bar_plot, md_table, rate
from factory.semtypes import ADMITTED_CHECKS, UNKNOWN, TypeCheck, TypeRef, ValueTypes, check_binding, is_valid_type
from factory.tools.identifiers import singular, uri_id, uri_words, words
from factory.tools.observed import schema_source_map
from factory.tools.registry import ToolRegistry
from factory.tools.safety import refusal
from factory.tools.spec import ToolSpec

log = logging.getLogger(__name__)

# (role name, inputs) → RoleResult-like objects with .output, .fallback, .failure, .provenance()
ProposalFn = Callable[[list[EdgeProposalInput]], list[Any]]


def seed_knowledge_graph(
    domain: str,
    specs: Mapping[str, ToolSpec],
    probes: Mapping[str, Mapping[str, Any]],
    cfg: ProjectConfig,
    lookups_only: bool = False,
) -> KnowledgeGraph:
    """A knowledge graph of every domain's probe observations (the values tools emit and accept).
    `lookups_only`: the value lookups alone, no entities or triples (what the skeleton reads)."""
    kg = KnowledgeGraph(domain, cfg.kg, lookups_only=lookups_only)
    by_domain: dict[str, list[ToolSpec]] = {}
    for s in specs.values():
        by_domain.setdefault(s.domain, []).append(s)
    for d in sorted(probes):
        generic = {s.name: s.generic_params.names() for s in by_domain.get(d, [])}
        kg.add_probe_rows(d, probes[d].get("rows", []), generic)
    return kg


def target_examples(
    kg: KnowledgeGraph, tid: str, spec: ToolSpec, bindable: list[str] | None = None
) -> dict[str, list[Any]]:
    """Values the target is known to accept for each parameter: accepted in a call with records,
    or echoed in its own output field of that name.  (Not the domain-wide pool: a same-named
    field of another tool may hold another code system.)"""
    out = {}
    for p in plans.bindable_params(spec) if bindable is None else bindable:
        accepted = kg.accepted(tid, p)
        vals = accepted + [v for v in kg.field_values(tid, p) if v not in accepted]
        if vals:
            out[p] = vals[:8]
    return out


_SCALARS = (str, int, float, bool)  # a brief's sample and example values (`schemas.Scalar`)


def brief(kg: KnowledgeGraph, tid: str, spec: ToolSpec, bindable: list[str] | None = None) -> ToolBrief:
    samples = {f: kg.field_values(tid, f)[:5] for f in spec.output_fields}
    samples = {f: [v for v in vs if isinstance(v, _SCALARS)] for f, vs in samples.items()}
    examples = {
        p: [v for v in vs if isinstance(v, _SCALARS)] for p, vs in target_examples(kg, tid, spec, bindable).items()
    }
    return ToolBrief.from_spec(spec, samples, examples)


def target_values(kg: KnowledgeGraph, tid: str, spec: ToolSpec, param: str) -> list[Any]:
    """Values parameter `param` of `tid` is known to take: accepted in calls, echoed in its own output
    field of that name, its enum and examples."""
    schema = spec.params.get(param, {})
    vals = [*kg.accepted(tid, param), *kg.field_values(tid, param)]
    vals += [*(schema.get("enum") or []), *(schema.get("examples") or [])]
    return vals


def type_filter(
    types: ValueTypes,
    kg: KnowledgeGraph,
    src: str,
    tgt: str,
    s_spec: ToolSpec,
    t_spec: ToolSpec,
    bindings: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split bindings into admitted ones (annotated with `type_check`, `value_type`) and rejections."""
    kept: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    for b in bindings:
        f, p = b["source_field"], b["target_param"]
        if b.get("transform") == "uri_id":
            check, why = check_uri_id(types, src, f, tgt, p, kg.field_values(src, f))
            passed = types.param_type(tgt, p)  # the id the URIs end with has the parameter's type
        else:
            check, why = check_binding(
                types, src, f, tgt, p, kg.field_values(src, f), target_values(kg, tgt, t_spec, p)
            )
            passed = types.field_type(src, f)
        if check in ADMITTED_CHECKS:
            kept.append({**b, "type_check": check, "value_type": passed})
        else:
            rejected.append(
                {
                    "source": f"{s_spec.platform}.{s_spec.name}",
                    "target": f"{t_spec.platform}.{t_spec.name}",
                    "source_field": f,
                    "target_param": p,
                    "source_type": types.field_type(src, f),
                    "target_type": types.param_type(tgt, p),
                    "reason": "type_mismatch" if check == "mismatch" else "type_unverified",
                    "detail": why,
                }
            )
    return kept, rejected


def check_uri_id(
    types: ValueTypes, src: str, field: str, tgt: str, param: str, source_values: list[Any]
) -> tuple[TypeCheck, str]:
    """May the ids that `field`'s URIs end with (transform ``uri_id``) fill `param`?  (check, reason)

    'equal' when every observed value of the field is a URI ending in an id and naming, in its host or
    path, the entity of the parameter (its value type's entity, else the words of its name before
    ``id``: ``resourceId`` → resource); 'mismatch' when the parameter is typed as something other than
    an id or code; 'unverified' when no observed value shows it."""
    pt = types.param_type(tgt, param)
    ref = TypeRef.parse(pt) if pt and is_valid_type(pt) else None
    if ref is not None and ref.role != UNKNOWN and not ref.is_code:
        return "mismatch", f"{param} takes {pt}, not an id a URI ends with"
    uris = [v for v in source_values if isinstance(v, str)]
    if not uris or any(uri_id(v) is None for v in uris):
        return "unverified", f"no observed value of {field} is a URI ending in an id"
    if ref is not None and ref.entity:
        entity = {singular(w) for w in words(ref.entity)}
    else:
        entity = {singular(w) for w in words(param)[:-1]}
    if not entity or not all(entity & uri_words(v) for v in uris):
        return "unverified", f"the URIs of {field} do not name {'/'.join(sorted(entity)) or param}"
    return "equal", f"the ids the URIs of {field} end with ({'/'.join(sorted(entity))}) fill {pt or param}"


def _unit(vecs: np.ndarray) -> np.ndarray:
    return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


def candidate_pairs(
    domain: str,
    specs: Mapping[str, ToolSpec],
    catalog: pd.DataFrame,
    k_same: int,
    k_cross: int,
    legacy: bool = False,
    block: int = 512,
    only_sources: Collection[str] | None = None,
    bindable: Mapping[str, list[str]] | None = None,
) -> tuple[list[tuple[str, str, float, bool]], dict[str, Any]]:
    """(source id, target id, cosine similarity, cross-domain?) by dense retrieval, plus counts.

    Each source's top `k_same` same-domain and top `k_cross` cross-domain targets by cosine similarity,
    ties broken by target id.  Sources are scored in blocks of `block` rows (one matrix product and
    one partial sort per block: no Python loop over source × target); `legacy=True` runs the earlier
    per-source loop (kept for the benchmark's side-by-side figures; same pairs).  `only_sources`: score
    just these sources (the benchmark times the earlier loop on a sample of them).  `bindable`: each
    tool's `plans.bindable_params`, when the caller has them."""
    if bindable is None:
        bindable = {t: plans.bindable_params(s) for t, s in specs.items()}
    stats: dict[str, list[str]] = {
        "tools_without_outputs": [],
        "tools_without_inputs": [],
        "tools_without_embedding": [],
    }
    emb = _Embeddings(catalog, specs)
    for tid, s in sorted(specs.items()):
        if s.domain == domain and not s.key_acquisition and not s.output_fields:
            stats["tools_without_outputs"].append(s.name)
        if s.domain == domain and not s.key_acquisition and not bindable[tid]:
            stats["tools_without_inputs"].append(s.name)
        if tid not in emb:
            stats["tools_without_embedding"].append(tid)
    targets = sorted(t for t, s in specs.items() if t in emb and not s.key_acquisition and bindable[t])
    sources = sorted(
        t for t, s in specs.items() if s.domain == domain and t in emb and not s.key_acquisition and s.output_fields
    )
    if only_sources is not None:
        sources = [t for t in sources if t in only_sources]
    pairs: list[tuple[str, str, float, bool]] = []
    if not targets or not sources:
        return pairs, stats
    tmat = _unit(emb.rows(targets))
    if legacy:
        for src in sources:
            sims = tmat @ _unit(emb.rows([src]))[0]
            same = [(float(sims[i]), t) for i, t in enumerate(targets) if t != src and specs[t].domain == domain]
            cross = [(float(sims[i]), t) for i, t in enumerate(targets) if specs[t].domain != domain]
            for group, k, is_cross in ((same, k_same, False), (cross, k_cross, True)):
                for sim, t in sorted(group, key=lambda x: (-x[0], x[1]))[:k]:
                    pairs.append((src, t, round(sim, 4), is_cross))
        return pairs, stats
    smat = _unit(emb.rows(sources))
    with _one_blas_thread():
        _score_blocks(pairs, domain, specs, sources, targets, smat, tmat, k_same, k_cross, block)
    return pairs, stats


def _one_blas_thread() -> Any:
    """BLAS limited to one thread for the blocked product: between two blocks' products (tens of ms each) the
    idle BLAS threads spin, taking the core the partial sorts need; on a shared 2-core machine the build took
    ~1.5-2 CPU s more with two threads at 10,000 tools
    (benchmarks/results/scale_issue20_session10_2026-12-02.md)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency of the project (pyproject)
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _score_blocks(
    pairs: list[tuple[str, str, float, bool]],
    domain: str,
    specs: Mapping[str, ToolSpec],
    sources: list[str],
    targets: list[str],
    smat: np.ndarray,
    tmat: np.ndarray,
    k_same: int,
    k_cross: int,
    block: int,
) -> None:
    """`candidate_pairs`' blocks of sources: one product and the partial sorts per block, appended to `pairs`."""
    in_domain = np.array([specs[t].domain == domain for t in targets])
    t_index = {t: i for i, t in enumerate(targets)}
    tmat_t = tmat.T
    buf = np.empty((min(block, len(sources)), len(targets)), dtype=np.float32)  # one block's scores, reused
    for lo in range(0, len(sources), block):
        srcs = sources[lo : lo + block]
        sims = np.matmul(smat[lo : lo + block], tmat_t, out=buf[: len(srcs)])  # (sources in block) × targets
        self_cols = np.array([t_index.get(s, -1) for s in srcs])
        rows = np.flatnonzero(self_cols >= 0)
        # never an edge to itself: its own column out of the same-domain ranking (never a cross-domain
        # target, never read back: a -inf score is never picked)
        sims[rows, self_cols[rows]] = -np.inf
        picked: list[tuple[bool, list[np.ndarray]]] = []
        for k, is_cross in ((k_same, False), (k_cross, True)):
            mask = ~in_domain if is_cross else in_domain
            if k <= 0 or not mask.any():
                continue
            scores = sims if mask.all() else np.where(mask[None, :], sims, np.float32(-np.inf))
            picked.append((is_cross, _top_k(scores, k)))
        # per source: same-domain targets, then cross-domain ones; Python floats (float64), rounded as before
        got = [(is_cross, *_cols_and_scores(sims, tops)) for is_cross, tops in picked]
        for r, src in enumerate(srcs):
            for is_cross, cols, vals in got:
                pairs += [(src, targets[c], round(v, 4), is_cross) for c, v in zip(cols[r], vals[r], strict=True)]


def _cols_and_scores(sims: np.ndarray, tops: list[np.ndarray]) -> tuple[list[list[int]], list[list[float]]]:
    """Per row, its picked columns and their scores as Python lists (one gather when every row has as many)."""
    if tops and all(len(t) == len(tops[0]) for t in tops):
        idx = np.stack(tops) if len(tops[0]) else np.zeros((len(tops), 0), dtype=np.intp)
        return idx.tolist(), np.take_along_axis(sims[: len(tops)], idx, axis=1).tolist()
    return [t.tolist() for t in tops], [sims[r, t].tolist() for r, t in enumerate(tops)]


class _Embeddings:
    """The catalog's signature embeddings as one float32 matrix, rows by tool id (a later row of the
    same id wins, as a dict built row by row keeps it)."""

    def __init__(self, catalog: pd.DataFrame, specs: Mapping[str, ToolSpec]):
        ids = catalog["tool_id"].tolist() if len(catalog) else []
        vecs = catalog["embedding"].tolist() if len(catalog) else []
        keep = [i for i, t in enumerate(ids) if t in specs]
        self._rows: dict[str, np.ndarray] | None = None
        self.index = {ids[i]: n for n, i in enumerate(keep)}
        if not keep:
            self.matrix = np.zeros((0, 0), dtype=np.float32)
            return
        try:  # one conversion for the whole column
            self.matrix = np.asarray([vecs[i] for i in keep], dtype=np.float32).reshape(len(keep), -1)
        except ValueError:  # ragged rows: one array per row
            self.matrix = np.empty((0, 0), dtype=np.float32)
            self._rows = {ids[i]: np.asarray(vecs[i], dtype=np.float32) for i in keep}

    def __contains__(self, tid: object) -> bool:
        return tid in self.index

    def rows(self, tids: list[str]) -> np.ndarray:
        if self._rows is not None:
            return np.stack([self._rows[t] for t in tids])
        return self.matrix[[self.index[t] for t in tids]]


_UNSET: Any = object()

# Column groups of the top-K prefilter: a row's k best scores lie in its k groups of highest maximum.
_GROUP = 64


def _top_k(scores: np.ndarray, k: int) -> list[np.ndarray]:
    """Per row, the column indices of its `k` largest finite scores, best first, ties by column index.

    Exact, with no sort of whole rows: the columns are cut into groups of `_GROUP`, each row keeps
    the k groups of highest maximum (the k-th largest score of a row is at least the k-th largest
    group maximum, so no score of another group can be among the k best, unless a group maximum
    ties with it: then the row is resolved on its own) and one partial sort runs over the k·`_GROUP`
    scores kept.  A row whose k-th score is tied (or that has fewer than `k` finite scores) is
    resolved exactly on its own."""
    n_rows, n_cols = scores.shape
    kk = min(k, n_cols)
    if n_cols < 8 * kk * _GROUP:
        cols = np.broadcast_to(np.arange(n_cols), scores.shape)
        return _top_k_of(scores, cols, scores, kk, np.zeros(n_rows, dtype=bool))
    full = n_cols // _GROUP * _GROUP
    gmax = scores[:, :full].reshape(n_rows, -1, _GROUP).max(axis=2)
    if full < n_cols:
        gmax = np.concatenate([gmax, scores[:, full:].max(axis=1, keepdims=True)], axis=1)
    gpart = np.argpartition(-gmax, kk - 1, axis=1)[:, :kk]
    gthr = np.take_along_axis(gmax, gpart, axis=1).min(axis=1)
    # another group reaches the k-th group maximum: its scores may tie with the k-th best
    exact = ((gmax >= gthr[:, None]).sum(axis=1) > kk) | ~np.isfinite(gthr)
    cols = (gpart[:, :, None] * _GROUP + np.arange(_GROUP)).reshape(n_rows, -1)
    outside = cols >= n_cols  # the last, shorter group
    cols = np.where(outside, n_cols - 1, cols)
    vals = np.take_along_axis(scores, cols, axis=1)
    vals[outside] = -np.inf
    return _top_k_of(vals, cols, scores, kk, exact)


def _top_k_of(vals: np.ndarray, cols: np.ndarray, scores: np.ndarray, kk: int, exact: np.ndarray) -> list[np.ndarray]:
    """`_top_k` over the kept scores `vals` (their columns `cols` in `scores`); rows in `exact`, and rows
    whose k-th kept score is tied or not finite, are resolved on the whole row of `scores`."""
    n = vals.shape[1]
    part = np.argpartition(vals, n - kk, axis=1)[:, n - kk :]  # the kk largest (no negated copy of the block)
    pv = np.take_along_axis(vals, part, axis=1)
    pc = np.take_along_axis(cols, part, axis=1)
    thr = pv.min(axis=1)
    exact = exact | ((vals >= thr[:, None]).sum(axis=1) > kk) | ~np.isfinite(thr)
    order = np.lexsort((pc, -pv), axis=-1)
    best = np.take_along_axis(pc, order, axis=1)
    out: list[np.ndarray] = []
    for r in range(vals.shape[0]):
        if not exact[r]:
            out.append(best[r])
            continue
        row = scores[r]
        t = float(np.sort(row[np.isfinite(row)])[::-1][kk - 1]) if np.isfinite(row).sum() >= kk else -np.inf
        idx = np.flatnonzero(np.isfinite(row) & (row >= t))
        out.append(idx[np.lexsort((idx, -row[idx]))][:kk])
    return out


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector paused inside the block (reference counting still frees what it
    drops).  Building 10^5 edges allocates millions of containers, each few hundred of which start a
    collection that walks the (large) inventories and probes held by the caller: at 10,000 tools that
    was a third of the build's CPU.  The collector's previous state is restored on exit."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@no_cyclic_gc()  # a context manager as a decorator: the collector paused for the whole build
def build_skeleton(
    domain: str,
    inventories: Mapping[str, Mapping[str, Any]],
    probes: Mapping[str, Mapping[str, Any]],
    catalog: pd.DataFrame,
    cfg: ProjectConfig,
    propose: ProposalFn,
    lexicons: Mapping[str, Mapping[str, Any]] | None = None,
    legacy: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Candidate edges of `domain`'s tools → admitted skeleton edges with plans and priors.

    Candidates no binding of which could pass the value-type check (`type_feasible`, vectorized over
    the tools' type signatures) are rejected before any proposal (`no_type_compatible_slots`); the
    others are proposed and admitted as before, with per-tool facts and binding checks computed once
    per signature (`_Admission`) and the edges written as stored dicts (no `Edge` model per candidate).
    `legacy`: the earlier path (per-source retrieval loop, a proposal for every candidate, one
    `Edge` model per admitted edge), for the benchmark's side-by-side figures and the equivalence test.

    `lexicons`: the tool_lexicon values (domain → value) holding the value types; a domain without
    one (None: every domain) has its types inferred directly (`factory.lexicon.infer_value_types`)."""
    g = cfg.graph
    specs = ToolRegistry.from_inventories(inventories, probes)  # declared or observed output fields
    kg = seed_knowledge_graph(domain, specs, probes, cfg, lookups_only=True)  # the skeleton reads the lookups
    types = ValueTypes.from_lexicons(lexicons or {})
    unlexed = set(inventories) - set(lexicons or {})  # domains whose tool_lexicon is not materialized
    if unlexed:
        inferred = infer_value_types(inventories, probes, cfg)
        types.tools.update({t: v for t, v in inferred.tools.items() if t.split("/", 1)[0] in unlexed})
    bindable = {t: plans.bindable_params(s) for t, s in specs.items()}  # once per tool
    pairs, stats = candidate_pairs(
        domain, specs, catalog, g.k_same_domain, g.k_cross_domain, legacy=legacy, bindable=bindable
    )
    refused = {tid for tid, s in specs.items() if refusal(s, cfg)}  # destructive, not opted into: no edges
    pairs = [p for p in pairs if p[0] not in refused and p[1] not in refused]
    stats["destructive_tools_left_out"] = sorted(specs[t].name for t in refused if specs[t].domain == domain)
    briefs: dict[str, ToolBrief] = {}

    def b(tid: str) -> ToolBrief:
        if tid not in briefs:
            briefs[tid] = brief(kg, tid, specs[tid], bindable[tid])
        return briefs[tid]

    counters = {
        "candidates": len(pairs),
        "cross_domain_candidates": sum(1 for p in pairs if p[3]),
        "no_type_compatible_slots": 0,
        "proposal_failures": 0,
        "proposal_fallbacks": 0,
        "invalid_bindings": 0,
        "proposals_without_bindings": 0,
        "below_s_min": 0,
        "duplicate_edges": 0,
        "type_mismatch": 0,
        "type_unverified": 0,
        "rejected_by_type": 0,
    }
    if legacy:
        inputs = [EdgeProposalInput(source=b(s), target=b(t)) for s, t, _, _ in pairs]
        results = propose(inputs) if inputs else []
        edges, rejected, type_rejections, invalid_examples = _admit_legacy(
            pairs, results, specs, kg, types, cfg, counters
        )
    else:
        feasible = type_feasible(pairs, specs, types, kg, bindable)
        rejected = [
            {"source": s, "target": t, "feasibility": None, "why": "no_type_compatible_slots"}
            for (s, t, _, _), ok in zip(pairs, feasible, strict=True)
            if not ok
        ]
        counters["no_type_compatible_slots"] = len(rejected)
        asked = [p for p, ok in zip(pairs, feasible, strict=True) if ok]
        # the briefs are validated once per tool; an input per candidate only pairs them
        for tid in sorted({p[0] for p in asked} | {p[1] for p in asked}):
            b(tid)
        pair = EdgeProposalInput.pair
        inputs = [pair(briefs[s], briefs[t]) for s, t, _, _ in asked]
        results = propose(inputs) if inputs else []
        adm = _Admission(specs, kg, types, cfg, bindable)
        edges, more, type_rejections, invalid_examples = adm.admit(asked, results, counters)
        rejected += more
    edges.sort(key=lambda e: (e["source_tool_id"], -e["feasibility"], e["target_tool_id"], e["edge_id"]))
    fingerprint = inventories[domain]["fingerprint"] if domain in inventories else None
    stats_out = {
        **counters,
        "admitted": len(edges),
        "admitted_cross_domain": sum(1 for e in edges if e["cross_domain"]),
        "admission_rate": rate(len(edges), len(pairs)),
        "tools_without_outputs": stats["tools_without_outputs"],
        "tools_without_inputs": stats["tools_without_inputs"],
        "tools_without_embedding": stats["tools_without_embedding"],
        "destructive_tools_left_out": stats["destructive_tools_left_out"],
        "invalid_binding_examples": invalid_examples[:20],
    }
    involved = sorted({e["source_tool_id"] for e in edges} | {e["target_tool_id"] for e in edges})
    typed = sorted(set(involved) | {t for t, s in specs.items() if s.domain == domain})
    value = {
        "domain": domain,
        "fingerprint": fingerprint,
        "config": g.model_dump(mode="json"),
        "schemas": {tid: schema_snapshot(specs[tid], bindable[tid]) for tid in involved},
        "edges": edges,
        "rejected": rejected,
        "type_rejections": type_rejections,
        "value_types": types.section(typed),
        "output_schema_sources": schema_source_map((specs[t] for t in typed), probes),
        "stats": stats_out,
    }
    return value, skeleton_metadata(value)


def _admit_legacy(
    pairs: list[tuple[str, str, float, bool]],
    results: list[Any],
    specs: Mapping[str, ToolSpec],
    kg: KnowledgeGraph,
    types: ValueTypes,
    cfg: ProjectConfig,
    counters: dict[str, int],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The earlier per-candidate admission (one `Edge` model per admitted edge): benchmark and tests."""
    g = cfg.graph
    edges: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    type_rejections: list[dict[str, Any]] = []
    invalid_examples: list[str] = []
    seen: set[str] = set()
    for (src, tgt, sim, cross), res in zip(pairs, results, strict=True):
        out = getattr(res, "output", None)
        if getattr(res, "fallback", False):
            counters["proposal_fallbacks"] += 1
        if out is None:
            counters["proposal_failures"] += 1
            rejected.append({"source": src, "target": tgt, "feasibility": None, "why": "proposal_failed"})
            continue
        s_spec, t_spec = specs[src], specs[tgt]
        bindings, dropped = plans.validate_bindings(
            s_spec, t_spec, [bd.model_dump() if hasattr(bd, "model_dump") else dict(bd) for bd in out.bindings]
        )
        counters["invalid_bindings"] += len(dropped)
        invalid_examples += [f"{s_spec.name}→{t_spec.name}: {d}" for d in dropped]
        score = float(out.feasibility_score)
        if not bindings:
            counters["proposals_without_bindings"] += 1
            rejected.append({"source": src, "target": tgt, "feasibility": score, "why": "no_valid_binding"})
            continue
        bindings, by_type = type_filter(types, kg, src, tgt, s_spec, t_spec, bindings)
        for r in by_type:
            counters[r["reason"]] += 1
        type_rejections += by_type
        if not bindings:
            counters["rejected_by_type"] += 1
            why = "type_mismatch" if any(r["reason"] == "type_mismatch" for r in by_type) else "type_unverified"
            rejected.append({"source": src, "target": tgt, "feasibility": score, "why": why})
            continue
        if score < g.s_min:
            counters["below_s_min"] += 1
            rejected.append({"source": src, "target": tgt, "feasibility": score, "why": "below_s_min"})
            continue
        eid = plans.edge_id(src, tgt, bindings)
        if eid in seen:
            counters["duplicate_edges"] += 1
            continue
        seen.add(eid)
        bound = {x["target_param"] for x in bindings}
        bindable = set(plans.bindable_params(t_spec))
        candidates: dict[str, list[Any]] = {}
        for p in sorted(bindable - bound):
            vals = [v for v in out.default_candidates.get(p, [])]
            vals += [v for v in kg.values_for(tgt, p) if v not in vals]
            candidates[p] = vals[: g.clarify_candidates]
        a0, b0 = prior(score, g.kappa)
        edges.append(
            Edge(
                edge_id=eid,
                source_tool=s_spec.name,
                source_domain=s_spec.domain,
                source_platform=s_spec.platform,
                source_tool_id=src,
                target_tool=t_spec.name,
                target_domain=t_spec.domain,
                target_platform=t_spec.platform,
                target_tool_id=tgt,
                cross_domain=cross,
                similarity=sim,
                bindings=bindings,
                plan=plans.compile_plan(t_spec, bindings, candidates),
                feasibility=round(score, 4),
                reason=out.reason,
                alpha=a0,
                beta=b0,
                prior_alpha=a0,
                prior_beta=b0,
                proposal_provenance=res.provenance() if hasattr(res, "provenance") else {"implementation": "external"},
            ).to_json()
        )
    return edges, rejected, type_rejections, invalid_examples


def _unknown(t: str | None) -> bool:
    return not t or t == UNKNOWN


def _uri_fillable(pt: str | None) -> bool:
    """May a parameter of type `pt` take the id a URI ends with (`check_uri_id` does not say mismatch)?"""
    ref = TypeRef.parse(pt) if pt and is_valid_type(pt) else None
    return ref is None or ref.role == UNKNOWN or ref.is_code


@lru_cache(maxsize=65536)
def _name_keys(name: str) -> tuple[tuple[str, ...], str]:
    return (tuple(words(name)), _squash_name(name))


def _squash_name(name: str) -> str:
    return re.sub(r"[^0-9a-z가-힣]", "", name.rsplit(".", 1)[-1].lower())


def type_feasible(
    pairs: list[tuple[str, str, float, bool]],
    specs: Mapping[str, ToolSpec],
    types: ValueTypes,
    kg: KnowledgeGraph,
    bindable: Mapping[str, list[str]] | None = None,
) -> np.ndarray:
    """Per candidate (source, target): may any binding of an output field of the source to a bindable
    parameter of the target pass `type_filter`?  False only when none can, so proposing the pair is
    useless; computed as one sparse product over the tools' type signatures (no loop over pairs).

    A slot pair can pass when the field's type is accepted by the parameter's (`ValueTypes.accepts`:
    equal or subtype), or when a side is unknown and the names agree (words or squashed name; the
    observed-value overlap is not required here), or (transform ``uri_id``) when every observed value
    of the field is a URI ending in an id and the parameter may take such an id.  Each tool becomes a
    set of tokens: as a source, the parameter types its fields fill, the name keys of its unknown-typed
    fields ("u") and of all its fields ("a"), and "uri"; as a target, its parameter types, the name keys
    of all its parameters ("u") and of its unknown-typed ones ("a"), and "uri"."""
    if not pairs:
        return np.zeros(0, dtype=bool)
    from scipy import sparse

    tools = sorted({p[0] for p in pairs} | {p[1] for p in pairs})
    row = {t: i for i, t in enumerate(tools)}
    # each slot's type read once: (name, type) of the output fields and bindable parameters
    ftyped: dict[str, list[tuple[str, str | None]]] = {}
    ptyped: dict[str, list[tuple[str, str | None]]] = {}
    for t in tools:
        fmap = (types.tools.get(t) or {}).get("fields", {})
        pmap = (types.tools.get(t) or {}).get("params", {})
        ftyped[t] = [(f, fmap.get(f)) for f in specs[t].output_fields]
        ptyped[t] = [
            (p, pmap.get(p)) for p in (bindable[t] if bindable is not None else plans.bindable_params(specs[t]))
        ]
    src_types = {ft for fs in ftyped.values() for _, ft in fs if ft and ft != UNKNOWN}
    tgt_types = sorted({pt for ps in ptyped.values() for _, pt in ps if pt and pt != UNKNOWN})
    fills = {st: [pt for pt in tgt_types if types.accepts(pt, st) in ("equal", "subtype")] for st in src_types}
    vocab: dict[Any, int] = {}

    def tok(x: Any) -> int:
        return vocab.setdefault(x, len(vocab))

    uri_tok = tok(("uri",))
    # a slot's tokens depend only on its name and type: written once per (name, type)
    f_toks: dict[tuple[str, str | None], list[int]] = {}
    p_toks: dict[tuple[str, str | None], list[int]] = {}
    s_rows: list[int] = []
    s_cols: list[int] = []
    t_rows: list[int] = []
    t_cols: list[int] = []
    for t in tools:
        i = row[t]
        for f, ft in ftyped[t]:
            got = f_toks.get((f, ft))
            if got is None:
                keys = _name_keys(f)
                toks: list[tuple[Any, ...]] = [("a", k) for k in keys]
                if _unknown(ft):
                    toks += [("u", k) for k in keys]
                else:
                    toks += [("t", pt) for pt in fills.get(ft or "", [])]
                got = f_toks[(f, ft)] = [tok(x) for x in toks]
            vals = [v for v in kg.field_values(t, f) if isinstance(v, str)]  # as check_uri_id reads them
            if vals and all("://" in v and uri_id(v) is not None for v in vals):  # a URI has '://'
                got = [*got, uri_tok]
            s_rows += [i] * len(got)
            s_cols += got
        for p, pt in ptyped[t]:
            got = p_toks.get((p, pt))
            if got is None:
                keys = _name_keys(p)
                toks = [("u", k) for k in keys]
                if _unknown(pt):
                    toks += [("a", k) for k in keys]
                else:
                    toks.append(("t", pt))
                if _uri_fillable(pt):
                    toks.append(("uri",))
                got = p_toks[(p, pt)] = [tok(x) for x in toks]
            t_rows += [i] * len(got)
            t_cols += got
    shape = (len(tools), max(len(vocab), 1))
    smat = sparse.csr_matrix((np.ones(len(s_rows), dtype=np.float32), (s_rows, s_cols)), shape=shape)
    tmat = sparse.csr_matrix((np.ones(len(t_rows), dtype=np.float32), (t_rows, t_cols)), shape=shape)
    si = np.array([row[p[0]] for p in pairs])
    ti = np.array([row[p[1]] for p in pairs])
    hits = np.asarray(smat[si].multiply(tmat[ti]).sum(axis=1)).ravel()
    return hits > 0


class _Admission:
    """Admission of proposed candidates with per-tool facts computed once per tool, binding checks once
    per (field signature, parameter signature), and edges written as their stored dicts.  Gives what
    `_admit_legacy` gives (tests/graph/test_graph_demo.py compares them on the demo)."""

    def __init__(
        self,
        specs: Mapping[str, ToolSpec],
        kg: KnowledgeGraph,
        types: ValueTypes,
        cfg: ProjectConfig,
        bindable: Mapping[str, list[str]] | None = None,
    ):
        self.specs, self.kg, self.types, self.g = specs, kg, types, cfg.graph
        self._bindable: dict[str, list[str]] = dict(bindable or {})
        self._fields: dict[str, set[str]] = {}
        self._bindable_sets: dict[str, set[str]] = {}
        self._priors: dict[float, tuple[float, float, float]] = {}  # feasibility → (α, β, itself rounded)
        self._compilers: dict[str, plans.PlanCompiler] = {}
        self._values_for: dict[tuple[str, str], list[Any]] = {}
        self._fsig: dict[tuple[str, str], int | None] = {}
        self._psig: dict[tuple[str, str], int | None] = {}
        self._sig_ids: dict[Any, int] = {}
        self._checks: dict[int, tuple[str, str, str | None]] = {}  # signature ids and uri, packed
        self._shapes: dict[tuple[str, Any], plans.PlanShape] = {}  # (target, binding set) → its plan's shape
        self._canon: dict[tuple[tuple[str, str, str], ...], str] = {}  # bindings → canonical JSON rows
        self._heads: dict[str, tuple[str, str, str, str]] = {}  # tool id → name, domain, platform, JSON id
        self._tool_sigs: dict[str, _ToolSigs] = {}
        self._cands: dict[tuple[Any, ...], list[Any]] = {}  # (target, param, proposed) → known values to add

    def bindable(self, tid: str) -> list[str]:
        if tid not in self._bindable:
            self._bindable[tid] = plans.bindable_params(self.specs[tid])
        return self._bindable[tid]

    def bindable_set(self, tid: str) -> set[str]:
        got = self._bindable_sets.get(tid)
        if got is None:
            got = self._bindable_sets[tid] = set(self.bindable(tid))
        return got

    def fields(self, tid: str) -> set[str]:
        if tid not in self._fields:
            self._fields[tid] = set(self.specs[tid].output_fields)
        return self._fields[tid]

    def values_for(self, tid: str, p: str) -> list[Any]:
        if (tid, p) not in self._values_for:
            self._values_for[(tid, p)] = self.kg.values_for(tid, p)
        return self._values_for[(tid, p)]

    def compiler(self, tid: str) -> "plans.PlanCompiler":
        if tid not in self._compilers:
            self._compilers[tid] = plans.PlanCompiler(self.specs[tid])
        return self._compilers[tid]

    def _field_sig(self, src: str, f: str) -> int | None:
        """What a binding check reads of the source side (name, type, observed values), as a small int
        (equal signatures, equal ints: the check memo's keys hash at once); None when unhashable."""
        sid = self._fsig.get((src, f), _UNSET)
        if sid is _UNSET:
            key = ("field", f, self.types.field_type(src, f), tuple(self.kg.field_values(src, f)))
            sid = self._fsig[(src, f)] = self._intern(key)
        return sid

    def _param_sig(self, tgt: str, p: str) -> int | None:
        """What a binding check reads of the target side (name, type, known values), as `_field_sig`."""
        sid = self._psig.get((tgt, p), _UNSET)
        if sid is _UNSET:
            vals = target_values(self.kg, tgt, self.specs[tgt], p)
            sid = self._psig[(tgt, p)] = self._intern(("param", p, self.types.param_type(tgt, p), tuple(vals)))
        return sid

    def _intern(self, key: Any) -> int | None:
        try:
            return self._sig_ids.setdefault(key, len(self._sig_ids))
        except TypeError:  # an unhashable value: never memoized
            return None

    def check(self, src: str, f: str, tgt: str, p: str, uri: bool) -> tuple[str, str, str | None]:
        """(check, reason, value type passed) of one binding, as `type_filter` decides it."""
        fk, pk = self._field_sig(src, f), self._param_sig(tgt, p)
        memo = fk << 32 | pk << 1 | uri if fk is not None and pk is not None else None
        if memo is not None:
            got = self._checks.get(memo)
            if got is not None:
                return got
        if uri:
            check, why = check_uri_id(self.types, src, f, tgt, p, self.kg.field_values(src, f))
            passed = self.types.param_type(tgt, p)
        else:
            check, why = check_binding(
                self.types,
                src,
                f,
                tgt,
                p,
                self.kg.field_values(src, f),
                target_values(self.kg, tgt, self.specs[tgt], p),
            )
            passed = self.types.field_type(src, f)
        out = (check, why, passed)
        if memo is not None:
            self._checks[memo] = out
        return out

    def _sig_maps(self, tid: str) -> "_ToolSigs":
        """The tool's per-field and per-parameter signature ids, computed on first use."""
        got = self._tool_sigs.get(tid)
        if got is None:
            got = self._tool_sigs[tid] = _ToolSigs()
        return got

    def _head(self, tid: str) -> tuple[str, str, str, str]:
        """(name, domain, platform, id as JSON) of a tool, read once."""
        got = self._heads.get(tid)
        if got is None:
            s = self.specs[tid]
            got = self._heads[tid] = (s.name, s.domain, s.platform, plans.json_string(tid))
        return got

    def admit(
        self, pairs: list[tuple[str, str, float, bool]], results: list[Any], counters: dict[str, int]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[str]]:
        """The proposals of `pairs` checked and admitted as `_admit_legacy` does.  The loop is the build's
        hottest at 10^5 candidates: what it reads per tool (names, field/parameter sets, signature ids)
        and per binding set (the canonical JSON of the edge id, the unbound parameters) is looked up,
        not recomputed, and a binding check costs one integer-keyed dict lookup once its signatures are
        known."""
        g, specs = self.g, self.specs
        s_min, clarify = g.s_min, g.clarify_candidates
        edges: list[dict[str, Any]] = []
        rejected: list[dict[str, Any]] = []
        type_rejections: list[dict[str, Any]] = []
        invalid_examples: list[str] = []
        seen: set[str] = set()
        fields_of, params_of, heads, sigs_of = self._fields, self._bindable_sets, self._heads, self._tool_sigs
        checks, canon, shapes, cand_memo = self._checks, self._canon, self._shapes, self._cands
        transforms = plans.TRANSFORMS
        sha256 = hashlib.sha256
        n_fallbacks = 0
        for (src, tgt, sim, cross), res in zip(pairs, results, strict=True):
            out = getattr(res, "output", None)
            if getattr(res, "fallback", False):
                n_fallbacks += 1
            if out is None:
                counters["proposal_failures"] += 1
                rejected.append({"source": src, "target": tgt, "feasibility": None, "why": "proposal_failed"})
                continue
            fields = fields_of.get(src)
            if fields is None:
                fields = self.fields(src)
            params = params_of.get(tgt)
            if params is None:
                params = self.bindable_set(tgt)
            # the proposal's bindings as `plans.validate_bindings` keeps them, or None when it drops one
            valid: list[tuple[str, str, str | None]] | None = []
            ps: list[str] = []
            for bd in out.bindings:
                if isinstance(bd, Binding):  # read as its model_dump() would give it
                    p, f, t = bd.target_param, bd.source_field, bd.transform or None
                else:
                    p, f, t = bd.get("target_param"), bd.get("source_field"), bd.get("transform") or None
                    if not isinstance(p, str) or not isinstance(f, str):
                        valid = None
                        break
                if f not in fields or p not in params or p in ps or (t is not None and t not in transforms):
                    valid = None
                    break
                ps.append(p)
                valid.append((p, f, t))  # type: ignore[union-attr]
            if valid is None:  # something is dropped: the exact reasons
                raw = [bd.model_dump() if hasattr(bd, "model_dump") else dict(bd) for bd in out.bindings]
                s_spec, t_spec = specs[src], specs[tgt]
                dicts, dropped = plans.validate_bindings(s_spec, t_spec, raw)
                counters["invalid_bindings"] += len(dropped)
                invalid_examples += [f"{s_spec.name}→{t_spec.name}: {d}" for d in dropped]
                valid = [(d["target_param"], d["source_field"], d["transform"]) for d in dicts]
            score = float(out.feasibility_score)
            if not valid:
                counters["proposals_without_bindings"] += 1
                rejected.append({"source": src, "target": tgt, "feasibility": score, "why": "no_valid_binding"})
                continue
            s_sigs = sigs_of.get(src) or self._sig_maps(src)
            t_sigs = sigs_of.get(tgt) or self._sig_maps(tgt)
            kept: list[dict[str, Any]] = []
            by_type: list[dict[str, Any]] = []
            for p, f, t in valid:
                uri = t == "uri_id"
                fk = s_sigs.fields.get(f, _UNSET)
                if fk is _UNSET:
                    fk = s_sigs.fields[f] = self._field_sig(src, f)
                pk = t_sigs.params.get(p, _UNSET)
                if pk is _UNSET:
                    pk = t_sigs.params[p] = self._param_sig(tgt, p)
                got = checks.get(fk << 32 | pk << 1 | uri) if fk is not None and pk is not None else None
                if got is None:
                    got = self.check(src, f, tgt, p, uri)
                check, why, passed = got
                if check in ADMITTED_CHECKS:
                    kept.append(
                        {
                            "target_param": p,
                            "source_field": f,
                            "transform": t,
                            "type_check": check,
                            "value_type": passed,
                        }
                    )
                    continue
                s_spec, t_spec = specs[src], specs[tgt]
                by_type.append(
                    {
                        "source": f"{s_spec.platform}.{s_spec.name}",
                        "target": f"{t_spec.platform}.{t_spec.name}",
                        "source_field": f,
                        "target_param": p,
                        "source_type": self.types.field_type(src, f),
                        "target_type": self.types.param_type(tgt, p),
                        "reason": "type_mismatch" if check == "mismatch" else "type_unverified",
                        "detail": why,
                    }
                )
            if by_type:
                for r in by_type:
                    counters[r["reason"]] += 1
                type_rejections += by_type
            if not kept:
                counters["rejected_by_type"] += 1
                why = "type_mismatch" if any(r["reason"] == "type_mismatch" for r in by_type) else "type_unverified"
                rejected.append({"source": src, "target": tgt, "feasibility": score, "why": why})
                continue
            if score < s_min:
                counters["below_s_min"] += 1
                rejected.append({"source": src, "target": tgt, "feasibility": score, "why": "below_s_min"})
                continue
            # the edge id: `plans.edge_id`, the canonical JSON of the binding set written once per set
            key = tuple((b["target_param"], b["source_field"], b["transform"] or "") for b in kept)
            rows = canon.get(key)
            if rows is None:
                rows = canon[key] = self._canon_rows(key)
            hs, ht = heads.get(src) or self._head(src), heads.get(tgt) or self._head(tgt)
            eid = "sha256:" + sha256(f"[{hs[3]}, {ht[3]}, [{rows}]]".encode()).hexdigest()
            if eid in seen:
                counters["duplicate_edges"] += 1
                continue
            seen.add(eid)
            # the plan: its shape (which parameter comes from where) once per target and binding set, the
            # CLARIFY candidates per edge: the proposal's, then the known values not among them (memoized
            # per equal proposal: `not in` compares by equality, so equal keys give equal lists)
            shape = shapes.get((tgt, key))
            if shape is None:
                shape = shapes[(tgt, key)] = self.compiler(tgt).shape(kept)
            plan: dict[str, dict[str, Any]] = {}
            defaults = out.default_candidates
            for p, kind, a, b in shape:
                if kind == UPSTREAM:
                    plan[p] = {"kind": UPSTREAM, "field": a, "transform": b}
                elif kind == DEFAULT:
                    plan[p] = {"kind": DEFAULT, "value": a}
                else:
                    given = defaults.get(p) or ()
                    ck: tuple[Any, ...] | None = (tgt, p, tuple(given))
                    try:
                        extra = cand_memo.get(ck)  # type: ignore[arg-type]
                    except TypeError:  # an unhashable candidate: never memoized
                        ck, extra = None, None
                    if extra is None:
                        extra = [v for v in self.values_for(tgt, p) if v not in given]
                        if ck is not None:
                            cand_memo[ck] = extra
                    plan[p] = {"kind": CLARIFY, "candidates": [*given, *extra][:clarify], "required": a}
            ab = self._priors.get(score)
            if ab is None:
                a0, b0 = prior(score, g.kappa)
                ab = self._priors[score] = (float(a0), float(b0), round(score, 4))
            a0, b0, rounded = ab
            edges.append(
                {
                    "edge_id": eid,
                    "source_tool": hs[0],
                    "source_domain": hs[1],
                    "source_platform": hs[2],
                    "source_tool_id": src,
                    "target_tool": ht[0],
                    "target_domain": ht[1],
                    "target_platform": ht[2],
                    "target_tool_id": tgt,
                    "cross_domain": bool(cross),
                    "similarity": float(sim),
                    "bindings": kept,
                    "plan": plan,
                    "feasibility": rounded,
                    "reason": out.reason,
                    "alpha": a0,
                    "beta": b0,
                    "prior_alpha": a0,
                    "prior_beta": b0,
                    "trials": 0,
                    "successes": 0,
                    "outcome_counts": {},
                    "status": "retained",
                    "pruned_at_iteration": None,
                    "cache": [],
                    "proposal_provenance": (
                        res.provenance() if hasattr(res, "provenance") else {"implementation": "external"}
                    ),
                }
            )
        counters["proposal_fallbacks"] += n_fallbacks
        return edges, rejected, type_rejections, invalid_examples

    @staticmethod
    def _canon_rows(key: tuple[tuple[Any, Any, Any], ...]) -> str:
        """The canonical JSON rows of a binding set (`plans.edge_id`'s, sorted by parameter)."""
        if all(isinstance(x, str) for c in key for x in c):
            q = plans.json_string
            return ", ".join(f"[{q(p)}, {q(f)}, {q(t)}]" for p, f, t in sorted(key))
        return dumps(sorted(key))[1:-1]


class _ToolSigs:
    """A tool's binding-check signature ids: output field → id, parameter → id (None: unhashable)."""

    __slots__ = ("fields", "params")

    def __init__(self) -> None:
        self.fields: dict[str, int | None] = {}
        self.params: dict[str, int | None] = {}


def skeleton_metadata(value: Mapping[str, Any]) -> dict[str, Any]:
    st = value["stats"]
    raw = value["edges"]
    scores = [float(e.feasibility if isinstance(e, Edge) else e["feasibility"]) for e in raw]
    # tenths of the score, the last one closed (int() of a non-negative score, as numpy truncates it)
    per_bin = np.bincount(np.minimum((np.asarray(scores, dtype=np.float64) * 10).astype(np.int64), 9), minlength=10)
    hist = {f"{lo / 10:.1f}-{(lo + 1) / 10:.1f}": int(per_bin[lo]) for lo in range(10)}
    return {
        "candidates": st["candidates"],
        "cross_domain_candidates": st["cross_domain_candidates"],
        "admitted": st["admitted"],
        "admitted_cross_domain": st["admitted_cross_domain"],
        "admission_rate": st["admission_rate"],
        "below_s_min": st["below_s_min"],
        "proposals_without_bindings": st["proposals_without_bindings"],
        "invalid_bindings": st["invalid_bindings"],
        "proposal_failures": st["proposal_failures"],
        "proposal_fallbacks": st["proposal_fallbacks"],
        "type_mismatch": st.get("type_mismatch", 0),
        "type_unverified": st.get("type_unverified", 0),
        "rejected_by_type": st.get("rejected_by_type", 0),
        "type_rejections": md_table(
            [
                {k: r[k] for k in ("source", "target", "source_field", "target_param", "reason", "detail")}
                for r in value.get("type_rejections", [])
            ]
            or [{"reason": "none"}],
            limit=25,
        ),
        "tools_without_outputs": len(st["tools_without_outputs"]),
        "tools_without_inputs": len(st["tools_without_inputs"]),
        "tools_without_embedding": len(st["tools_without_embedding"]),
        "mean_feasibility": round(float(np.mean(scores)), 4) if scores else 0.0,
        "feasibility_histogram": bar_plot(hist, title="feasibility of admitted edges", xlabel="s_e", ylabel="edges"),
        "invalid_binding_examples": Markdown("\n".join(f"- {x}" for x in st["invalid_binding_examples"]) or "_none_"),
        "preview": edge_table(parse_edges(_top(raw, scores, 20)), limit=20),
    }


def _top(edges: list[Any], scores: list[float], n: int) -> list[Any]:
    """The `n` edges of highest score, ties in stored order (what a stable sort by -score keeps first)."""
    order = heapq.nsmallest(n, range(len(edges)), key=lambda i: -scores[i])  # = sorted(...)[:n], stable
    return [edges[i] for i in order]


def edge_table(edges: list[Edge], limit: int = 20, extra: tuple[str, ...] = ()) -> Markdown:
    """A preview table of `edges`; `extra` names further `Edge` fields to show."""
    rows = []
    for e in edges:
        row = {
            "source": f"{e.source_platform}.{e.source_tool}",
            "target": f"{e.target_platform}.{e.target_tool}" + (f" [{e.target_domain}]" if e.cross_domain else ""),
            "bindings": ", ".join(f"{b['target_param']}←{b['source_field']}" for b in e.bindings),
            "s": e.feasibility,
        }
        for k in extra:
            row[k] = getattr(e, k)
        rows.append(row)
    return md_table(rows, limit=limit)


def schema_snapshot(spec: ToolSpec, bindable: list[str] | None = None) -> dict[str, list[str]]:
    """The part of a tool's schemas a binding refers to (kept with the graph for its gate)."""
    params = plans.bindable_params(spec) if bindable is None else bindable
    return {"output_fields": sorted(spec.output_fields), "bindable_params": sorted(params)}


def edges_frame(value: Mapping[str, Any], specs: Mapping[str, ToolSpec] | None = None) -> pd.DataFrame:
    """One row per edge for the skeleton/connectivity suites.  `bindings_in_schemas` re-checks every
    binding against the tools' schemas (`specs`, else the snapshot stored with the graph)."""
    s_min = value["config"]["s_min"]
    n_min = value["config"]["n_min"]
    schemas = {t: schema_snapshot(s) for t, s in specs.items()} if specs is not None else value.get("schemas", {})
    rows = []
    for e in parse_edges(value["edges"]):
        src, tgt = schemas.get(e.source_tool_id), schemas.get(e.target_tool_id)
        ok = bool(
            src is not None
            and tgt is not None
            and e.bindings
            and all(
                b["source_field"] in src["output_fields"] and b["target_param"] in tgt["bindable_params"]
                for b in e.bindings
            )
        )
        rows.append(
            {
                "edge_id": e.edge_id,
                "feasibility": e.feasibility,
                "admitted_ok": e.feasibility >= s_min,
                "bindings": len(e.bindings),
                "bindings_in_schemas": ok,
                "alpha": e.alpha,
                "beta": e.beta,
                "trials": e.trials,
                "status": e.status,
                "prune_after_n_min": e.status != "pruned" or e.trials >= n_min,
            }
        )
    cols = [
        "edge_id",
        "feasibility",
        "admitted_ok",
        "bindings",
        "bindings_in_schemas",
        "alpha",
        "beta",
        "trials",
        "status",
        "prune_after_n_min",
    ]
    return pd.DataFrame(rows, columns=cols)
