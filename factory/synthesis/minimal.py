"""Minimal golden paths by necessity: a built trajectory pruned to the calls its answer needs (pure).

Every *unit* of a trajectory is removed in turn and the rest is tested for sufficiency, i.e. the
answer is still derivable from the remaining results:

(a) every remaining call's bound arguments (the values a junction passed on) are values the
    question states (seed values; a number only for a like-named parameter), or still come from
    the records of a remaining earlier call: the same values in the junction's field (or a field
    named like the parameter), the same *set* of values once the junction's process node has run. A
    call whose records feed a junction, or whose records the answer selects from, keeps every
    page: a set of values, a process node's selection, the record of one entity are read over
    the whole result;
(b) every remaining call that needs an API key still has its platform's key call;
(c) every answer input is still there, or is already present in a remaining call's record of the
    same entity: a record that carries each identifying argument of the answer's call (its value
    in the parameter's field or the junction's source field) and, for a value, the same field with
    the same value (a lookup of one record); for a count, a count field named after what the call
    lists (``track_count`` for ``list_album_tracks``) equal to the call's total. The answer spec
    then reads that record (``answers``: a reference with ``record`` and, for a count, ``field``).

Units: a key call; a page after the first; the calls of one tool at one step (the calls of a FAN
are one operation over the upstream values, and go or stay together). Units are tried latest step
first (so the answer moves to the earliest call that already has it), then pages, then keys, until
nothing more can go. State-changing calls (their effect is the task's outcome) and calls of unknown
tools are never removed.

The result records why each call went (`REASONS`), which answer reads moved, the rewritten
junctions, and the other sufficient paths (`alternatives`): the original path and, when an answer
read moved, the shortest path that reads the answer from its original calls. Steps are renumbered
1..n and answer specs refer to calls by ``{"step", "index"}``.
"""

import re
import unicodedata
from collections.abc import Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

from factory.graph.plan import TRANSFORMS, apply_transform
from factory.io import dumps
from factory.kg.graph import norm_name
from factory.synthesis.answers import SpecError, compute, ref, references, same_scalar, select
from factory.synthesis.junctions import DRV, apply_operator, distinct_keys, junction_ends, junction_type
from factory.tools.spec import ToolSpec

REASONS = {
    "unused_key": "an API-key call whose platform no remaining call uses",
    "extra_page": "a page after the first of a call whose total is read from page 1, its records read by nothing",
    "answer_present": "what the answer reads from it is already in a remaining call's record of the same entity",
    "bridged_elsewhere": "the values it passes on are already in the records of the call before it",
    "stated_in_query": "the values it passes on are stated in the question (seed values, thresholds)",
    "unused": "neither read by the answer nor passing values to a remaining call",
}

#: Trajectory rejections of this stage (recorded by the trajectories stage beside its own reasons).
REJECTIONS = {
    "collapsed": "the minimal path is no longer the template's shape (a chain without a junction, a SEM of one tool)",
    "prune_mismatch": "the minimal path does not reproduce the answer of the full path",
    "seed_unused": "the minimal path sends a value the question states to no call: the answer does not depend on it",
}

_TRANSFORMS = tuple(t for t in TRANSFORMS if t != "first_token")  # first_token would match too loosely
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


# --------------------------------------------------------------------------- the calls and junctions


@dataclass
class _Call:
    i: int
    step: int
    tool: str
    tool_id: str
    platform: str
    args: dict[str, Any]
    records: list[dict[str, Any]]
    total: int
    logical: Any
    first: bool  # the first page of its logical call
    key: bool  # an API-key acquisition call
    keyed: str | None  # the platform whose key it needs
    semantic: dict[str, Any]  # arguments with task meaning (no key, paging or format)
    pinned: bool  # never removed (state-changing, unknown tool)

    @property
    def group(self) -> tuple[int, str]:
        return (self.step, self.tool)


@dataclass
class _Junction:
    src: tuple[int, str]  # (step, tool) of the upstream calls
    fields: tuple[str, ...]
    dst: tuple[int, str]
    params: tuple[str, ...]
    process: dict[str, Any] | None
    originals: list[dict[str, Any]]
    rewritten: dict[str, Any] | None = None  # the junction record after re-sourcing


def _calls(
    actions: Sequence[Mapping[str, Any]],
    records: Sequence[Sequence[Mapping[str, Any]]],
    specs: Mapping[str, ToolSpec],
    logical: Sequence[Any] | None,
) -> list[_Call]:
    out: list[_Call] = []
    seen: set[Any] = set()
    for i, a in enumerate(actions):
        spec = specs.get(a.get("tool_id") or "")
        g = spec.generic_params if spec is not None else None
        generic = g.names() if g is not None else set()
        args = dict(a.get("args") or {})
        lid = (
            logical[i]
            if logical is not None
            else (a["step"], a.get("tool_id"), dumps({k: v for k, v in args.items() if g is None or k != g.page}))
        )
        total = a.get("total_count")
        out.append(
            _Call(
                i=i,
                step=int(a["step"]),
                tool=a["tool"],
                tool_id=a.get("tool_id") or "",
                platform=a.get("platform") or (spec.platform if spec else ""),
                args=args,
                records=[dict(r) for r in records[i]],
                total=int(total) if total is not None else int(a.get("records") or 0),
                logical=lid,
                first=lid not in seen,
                key=spec is not None and spec.key_acquisition is not None,
                keyed=spec.platform if spec is not None and g is not None and g.key else None,
                semantic={k: v for k, v in args.items() if k not in generic and v != "<KEY>"},
                pinned=spec is None or spec.state_changing,
            )
        )
        seen.add(lid)
    return out


def _junctions(calls: Sequence[_Call], junctions: Sequence[Mapping[str, Any]]) -> list[_Junction]:
    """Junction records placed on the steps they connect (a junction feeds the first later step that calls
    its target with its parameters; CMP arms' identical records share one)."""
    out: dict[tuple, _Junction] = {}
    for j in junctions:
        if (ends := junction_ends(j)) is None:
            continue
        up, fields, down, params = ends
        for ds in sorted({c.step for c in calls if c.tool == down and all(q in c.args for q in params)}):
            ups = [c.step for c in calls if c.tool == up and c.step < ds]
            if not ups:
                continue
            key = (max(ups), up, fields, ds, down, params)
            if key in out:
                out[key].originals.append(dict(j))
            else:
                out[key] = _Junction((max(ups), up), fields, (ds, down), params, j.get("process"), [dict(j)])
            break
    return list(out.values())


# --------------------------------------------------------------------------- answer reads


@dataclass
class _Read:
    """One call the answer spec reads: `holder[slot]` is a position or a substitution."""

    holder: Any
    slot: Any
    kind: str  # count | value | opaque (a spec kind this module does not know: never moved)
    field: str | None
    origin: int  # the call the question asks about

    @property
    def target(self) -> int:
        x = self.holder[self.slot]
        return int(x["at"]) if isinstance(x, Mapping) else int(x)


def _origin(x: Any) -> int:
    return int(x["origin"]) if isinstance(x, Mapping) else int(x)


def _reads(spec: Any) -> list[_Read]:
    out: list[_Read] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            kind = node.get("kind")
            for k, v in node.items():
                if k == "calls" and isinstance(v, list):
                    rk = kind if kind in ("count", "value") else "opaque"
                    for n, x in enumerate(v):
                        out.append(_Read(v, n, rk, node.get("field") if rk == "value" else None, _origin(x)))
                elif k == "cond_call":
                    out.append(_Read(node, k, "count", None, _origin(v)))
                else:
                    walk(v)
        elif isinstance(node, list):
            for x in node:
                walk(x)

    walk(spec)
    return out


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    return None


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^0-9a-z]+", _CAMEL.sub("_", name).lower()) if w]


def _singular(w: str) -> str:
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def count_field_for(name: str, tool: str) -> bool:
    """Whether record field `name` counts what `tool` lists: ``track_count`` / ``num_tracks`` / ``trackCount``
    for ``list_album_tracks`` (the field's noun among the tool name's words)."""
    words = _words(name)
    if len(words) >= 2 and words[-1] in ("count", "cnt"):
        stem = words[:-1]
    elif len(words) >= 2 and words[0] in ("num", "n", "number"):
        stem = [w for w in words[1:] if w != "of"]
    else:
        return False
    tool_words = {_singular(w) for w in _words(tool)}
    return bool(stem) and all(_singular(w) in tool_words for w in stem)


def _bound_equal(value: Any, arg: Any) -> bool:
    """A record value that, as is or through a binding transform, is the argument a call was sent."""
    if same_scalar(value, arg):
        return True
    if isinstance(arg, list) and len(arg) == 1 and not isinstance(value, list):  # a `wrap` binding
        return _bound_equal(value, arg[0])
    if value is None or isinstance(value, dict | list):
        return False
    return any(same_scalar(apply_transform(value, t), arg) for t in _TRANSFORMS)


Identity = list[tuple[str, Any, tuple[str, ...]]]


def _identity(x: _Call, junctions: Sequence[_Junction]) -> Identity | None:
    """(param, value, field names that may carry it) for each task-meaningful argument of `x`; None when `x`
    has none (nothing identifies the entity) or a structured argument."""
    out: Identity = []
    for p, v in x.semantic.items():
        if v is None or isinstance(v, dict | list):
            return None
        names = [p]
        for j in junctions:
            if j.dst[1] == x.tool:
                names += [f for f, q in zip(j.fields, j.params, strict=True) if q == p]
        out.append((p, v, tuple(dict.fromkeys(names))))
    return out or None


def _same_entity(rec: Mapping[str, Any], ident: Identity) -> dict[str, Any] | None:
    """The record selector (field → value) when `rec` carries every identifying argument."""
    sel: dict[str, Any] = {}
    for _, v, names in ident:
        hit = next((n for n in names if n in rec and _bound_equal(rec[n], v)), None)
        if hit is None:
            return None
        sel[hit] = rec[hit]
    return sel


def _substitute(read: _Read, x: _Call, ident: Identity, cands: Sequence[_Call]) -> dict[str, Any] | None:
    """Where else the answer read of `x` is already present (a substitution entry), or None."""
    if read.kind == "value":
        if x.total != 1 or not x.records or read.field is None or x.records[0].get(read.field) is None:
            return None  # a value of one looked-up entity only
        want = x.records[0][read.field]
        for y in cands:
            for rec in y.records:
                sel = _same_entity(rec, ident)
                if sel is None or read.field not in rec or not same_scalar(rec[read.field], want):
                    continue
                chosen = select(y.records, sel)
                if chosen is not None and same_scalar(chosen.get(read.field), want):
                    return {"at": y.i, "record": sel, "origin": x.i}
        return None
    if read.kind == "count":
        for y in cands:
            for rec in y.records:
                sel = _same_entity(rec, ident)
                if sel is None:
                    continue
                for name, val in rec.items():
                    n = _number(val)
                    if name in sel or n is None or n != x.total or not count_field_for(name, x.tool):
                        continue
                    chosen = select(y.records, sel)
                    if chosen is not None and _number(chosen.get(name)) == x.total:
                        return {"at": y.i, "record": sel, "field": name, "origin": x.i}
        return None
    return None


# --------------------------------------------------------------------------- re-sourcing a junction


def _canon(v: Any) -> str:
    n = _number(v)
    if n is None and isinstance(v, str):
        try:
            n = float(v.strip())
        except ValueError:
            n = None
    return f"n:{n!r}" if n is not None else "s:" + unicodedata.normalize("NFC", str(v)).strip()


def _resource(
    j: _Junction, into: _Junction, upstream: Sequence[_Call], down: Sequence[_Call], phi: int
) -> dict[str, Any] | None:
    """The junction record `upstream → down` that replaces `into` (upstream → G) and `j` (G → down) when the
    downstream arguments are the values (after `into`'s process node) of upstream's records; else None."""
    recs = [r for c in sorted(upstream, key=lambda c: c.i) for r in c.records]
    try:
        chosen = apply_operator(recs, into.process) if into.process else recs
    except (ValueError, TypeError, KeyError):
        return None
    tuples = [tuple(d.args[p] for p in j.params) for d in down]
    picks: list[tuple[str, str | None]] = []
    for k, (f, p) in enumerate(zip(j.fields, j.params, strict=True)):
        names = [f, p] + [uf for uf, up in zip(into.fields, into.params, strict=True) if norm_name(up) == norm_name(f)]
        pick = None
        for name in dict.fromkeys(names):
            for t in (None, *_TRANSFORMS):
                column = {_canon(apply_transform(r.get(name), t)) for r in chosen if r.get(name) is not None}
                if all(_canon(tp[k]) in column for tp in tuples):
                    pick = (name, t)
                    break
            if pick:
                break
        if pick is None:
            return None
        picks.append(pick)
    names = [n for n, _ in picks]
    keys_all = distinct_keys(recs, names)
    keys = distinct_keys(chosen, names)
    mapped = {tuple(_canon(apply_transform(v, t)) for v, (_, t) in zip(k, picks, strict=True)) for k in keys}
    if mapped != {tuple(_canon(v) for v in tp) for tp in tuples}:
        return None
    n, width = len(keys_all), len(keys)
    typ = junction_type(n, phi) if n else None
    if typ is None or not ((into.process is None and width == n) or (into.process is not None and typ == DRV)):
        return None
    process = {**into.process, "n_in": n, "n_out": width} if into.process else None
    return {
        "from": f"{upstream[0].tool}.{'+'.join(names)}",
        "to": f"{down[0].tool}.{'+'.join(j.params)}",
        "edge_id": "",
        "type": typ,
        "n": n,
        "width": width,
        "process": process,
    }


# --------------------------------------------------------------------------- pruning


@dataclass
class _State:
    calls: list[_Call]
    junctions: list[_Junction]
    spec: dict[str, Any]
    keep: set[int]
    phi: int
    substitute: bool
    given: set[tuple[str, str]] = field(default_factory=set)  # (parameter, canonical value) the question states
    placed: list[_Junction] = field(default_factory=list)  # the junctions as built (identities read them)
    removed: dict[int, str] = field(default_factory=dict)  # call → reason

    def group(self, g: tuple[int, str], among: set[int] | None = None) -> list[_Call]:
        among = self.keep if among is None else among
        return [c for c in self.calls if c.i in among and not c.key and c.group == g]

    def downstream(self, j: _Junction, among: set[int]) -> list[_Call]:
        """The calls `j` feeds. Where several junctions feed one step (a CMP's two arms, one album picked in an
        artist's listing, the other found through a track), only the calls whose arguments are values of
        `j`'s source records: the other arm's call is not fed by it."""
        down = [c for c in self.group(j.dst, among) if all(p in c.args for p in j.params)]
        if sum(k.dst == j.dst for k in self.junctions) < 2:
            return down
        recs = [r for c in self.calls if c.group == j.src for r in c.records]
        fed = {
            c.i
            for c in self.calls
            if c.group == j.dst
            and all(p in c.args for p in j.params)
            and any(
                all(f in r and _bound_equal(r[f], c.args[p]) for f, p in zip(j.fields, j.params, strict=True))
                for r in recs
            )
        }
        return [c for c in down if c.i in fed] if fed else down  # none matched (a transform): every call


def _related(a: str, b: str) -> bool:
    a, b = norm_name(a), norm_name(b)
    return bool(a and b) and (a in b or b in a)


def _stated(st: _State, value: Any, param: str, field: str) -> bool:
    """Whether the question states `value`: a seed value; a number only as the seed of a like-named
    parameter (an album id 1 is not stated by a genre id 1)."""
    c = _canon(value)
    if c.startswith("s:"):
        return any(v == c for _, v in st.given)
    return any(v == c and name and (_related(name, param) or _related(name, field)) for name, v in st.given)


def _try_group(st: _State, unit: list[_Call]) -> bool:
    """Remove the calls of one tool at one step if the rest stays sufficient; True when removed."""
    if any(c.pinned for c in unit):
        return False
    ids = {c.i for c in unit}
    rest = st.keep - ids
    # (c) the answer's inputs
    plan: list[tuple[_Read, dict[str, Any]]] = []
    for read in _reads(st.spec):
        if read.target not in ids:
            continue
        if read.kind == "opaque" or not st.substitute:
            return False
        x = st.calls[read.origin]
        ident = _identity(x, st.placed)
        if ident is None:
            return False
        cands = sorted(
            (c for c in st.calls if c.i in rest and not c.key and c.step <= x.step), key=lambda c: (c.step, c.i)
        )
        sub = _substitute(read, x, ident, cands)
        if sub is None:
            return False
        plan.append((read, sub))
    # (a) the values it passes on
    g = unit[0].group
    rewires: list[tuple[_Junction, _Junction, dict[str, Any]]] = []
    stated: list[_Junction] = []
    for j in st.junctions:
        if j.src != g:
            continue
        down = st.downstream(j, rest)
        if not down:
            continue
        if all(_stated(st, d.args[p], p, f) for d in down for f, p in zip(j.fields, j.params, strict=True)):
            stated.append(j)  # the question states every value it passes on
            continue
        feeding = [k for k in st.junctions if k.dst == g]
        if j.process is not None or len(feeding) != 1:
            return False
        upstream = st.group(feeding[0].src, rest)
        pages_kept = all(c.i in rest for c in st.calls if any(c.logical == u.logical for u in upstream))
        new = _resource(j, feeding[0], upstream, down, st.phi) if upstream and pages_kept else None
        if new is None:
            return False
        rewires.append((j, feeding[0], new))
    # removal
    for read, sub in plan:
        read.holder[read.slot] = sub
    for j, into, new in rewires:
        j.src, j.fields, j.process, j.rewritten = (
            into.src,
            tuple(new["from"].split(".", 1)[1].split("+")),
            new["process"],
            new,
        )
    gone = {id(k) for k in stated}
    left_in_g = bool(st.group(g, rest))  # one arm's call of a step went, the other arm's stays
    st.junctions = [
        k
        for k in st.junctions
        if id(k) not in gone
        and (k.dst != g or (left_in_g and st.downstream(k, rest)))
        and (k.src != g or st.downstream(k, rest))
    ]
    reason = "answer_present" if plan else "bridged_elsewhere" if rewires else "stated_in_query" if stated else "unused"
    for c in unit:
        st.removed[c.i] = reason
    st.keep = rest
    return True


def _arms(st: _State, unit: Sequence[_Call]) -> bool:
    """Whether every call of `unit` is read by the answer on its own (one count or value read per call, none of
    them feeding a later call): separate answer parts rather than one fan-out operation."""
    ids = {c.i for c in unit}
    reads = [r for r in _reads(st.spec) if r.target in ids]
    g = unit[0].group
    if any(j.src == g and st.downstream(j, st.keep) for j in st.junctions):
        return False
    # one read per call, each in its own part of the spec (a FAN's count reads its calls as one list)
    return len(reads) == len(unit) == len({r.target for r in reads}) == len({id(r.holder) for r in reads})


def _feeds(st: _State, g: tuple[int, str]) -> bool:
    return any(j.src == g and st.downstream(j, st.keep) for j in st.junctions)


def _prune(st: _State) -> None:
    changed = True
    while changed:
        changed = False
        groups = sorted({c.group for c in st.calls if c.i in st.keep and not c.key}, key=lambda g: (-g[0], g[1]))
        for g in groups:
            unit = st.group(g)
            if unit and _try_group(st, unit):
                changed = True
            elif len(unit) >= 2 and _arms(st, unit):
                # calls of one step the answer reads one by one (CMP arms, SEM parts) go one at a time: an arm's
                # count a listing already carries (track_count) needs no call, whatever the other arm needs
                for c in unit:
                    if c.i in st.keep and _try_group(st, [c]):
                        changed = True
        reads = _reads(st.spec)
        read = {r.target for r in reads}
        # a listing the answer reads a record of is scanned for it (and a selection over it reads it all)
        scanned = {st.calls[r.target].group for r in reads if isinstance(r.holder[r.slot], Mapping)}
        for c in sorted(st.calls, key=lambda c: (-c.step, -c.i)):
            if c.i in st.keep and not c.first and not c.key and not c.pinned and c.i not in read:
                if not _feeds(st, c.group) and c.group not in scanned:
                    st.keep.discard(c.i)
                    st.removed[c.i] = "extra_page"
                    changed = True
        for c in st.calls:
            if c.i in st.keep and c.key and not any(o.keyed == c.platform for o in st.calls if o.i in st.keep):
                st.keep.discard(c.i)
                st.removed[c.i] = "unused_key"
                changed = True


# --------------------------------------------------------------------------- results


def relabel(
    actions: Sequence[Mapping[str, Any]], keep: Sequence[int], spec: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The kept actions with steps renumbered 1..n, and the spec (positions or substitutions into `actions`)
    rewritten to ``{"step", "index"}`` references of the kept actions."""
    keep = sorted(keep)
    renum = {s: n + 1 for n, s in enumerate(sorted({int(actions[i]["step"]) for i in keep}))}
    where: dict[int, tuple[int, int]] = {}
    used: dict[int, int] = {}
    out = []
    for i in keep:
        s = renum[int(actions[i]["step"])]
        where[i] = (s, used.get(s, 0))
        used[s] = used.get(s, 0) + 1
        out.append({**actions[i], "step": s})

    def to_ref(x: Any) -> dict[str, Any]:
        at = x["at"] if isinstance(x, Mapping) else x
        if at not in where:
            raise SpecError(f"the answer reads action {at}, which is not on the path")
        s, i = where[at]
        extra = {k: x[k] for k in ("record", "field") if isinstance(x, Mapping) and x.get(k)}
        return ref(s, i, **extra)

    def conv(node: Any) -> Any:
        if isinstance(node, Mapping):
            outd: dict[str, Any] = {}
            for k, v in node.items():
                if k == "calls" and isinstance(v, list):
                    outd[k] = [to_ref(x) for x in v]
                elif k == "cond_call":
                    outd[k] = to_ref(v)
                else:
                    outd[k] = conv(v)
            return outd
        if isinstance(node, list):
            return [conv(x) for x in node]
        return node

    return out, conv(spec)


_GOLDEN_KEYS = ("step", "tool", "tool_id", "platform", "args", "outcome", "records", "total_count", "call_digest",
                "result_digest")  # fmt: skip


@dataclass
class MinimalPath:
    actions: list[dict[str, Any]]  # the minimal path, steps renumbered
    answer_spec: dict[str, Any]  # {"step", "index"} references into `actions`
    junctions: list[dict[str, Any]]
    removed: list[dict[str, Any]]  # {"step" (original), "tool", "reason"} per pruned call
    moved: list[dict[str, Any]]  # answer reads now served by another call's record
    original: tuple[list[dict[str, Any]], dict[str, Any]]  # the full path, relabelled
    alternatives: list[dict[str, Any]]  # other sufficient paths: {"actions", "answer_spec", "note", "keep"}
    keep: list[int]  # positions (in the input actions) of the minimal path's calls
    junctions_changed: bool = False

    def alternative_records(self) -> list[dict[str, Any]]:
        """The other sufficient paths as stored with a trajectory (golden-action fields, no samples)."""
        return [
            {
                "note": a["note"],
                "calls": len(a["actions"]),
                "actions": [{k: x[k] for k in _GOLDEN_KEYS if k in x} for x in a["actions"]],
                "answer_spec": a["answer_spec"],
            }
            for a in self.alternatives
        ]

    def report(self) -> dict[str, Any]:
        """What pruning did, per trajectory: calls before and after, each removed call with its reason."""
        return {
            "calls_before": len(self.original[0]),
            "calls_after": len(self.actions),
            "removed": self.removed,
            "moved": self.moved,
        }

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for r in self.removed:
            counts[r["reason"]] = counts.get(r["reason"], 0) + 1
        why = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        return f"{len(self.original[0])} → {len(self.actions)} calls" + (f": {why}" if why else "")


def with_records(
    actions: Sequence[Mapping[str, Any]], records: Sequence[Sequence[Mapping[str, Any]]], keep: Sequence[int]
) -> list[dict[str, Any]]:
    """Result rows for `answers.compute`: each action with every record its call returned."""
    return [{**a, "records_list": list(records[i])} for a, i in zip(actions, keep, strict=True)]


def _agree(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    va, vb = a.get("value"), b.get("value")
    if isinstance(va, list) and isinstance(vb, list):
        same = len(va) == len(vb) and all(same_scalar(x, y) or x == y for x, y in zip(va, vb, strict=True))
    elif isinstance(va, list) or isinstance(vb, list):
        same = False
    else:
        same = va == vb or same_scalar(va, vb)
    return same and a.get("branch") == b.get("branch") and a.get("counts") == b.get("counts")


def disagreement(mp: MinimalPath, records: Sequence[Sequence[Mapping[str, Any]]], answer: Mapping[str, Any]) -> str:
    """'' when the minimal path and every alternative compute `answer` from the recorded results, else why not."""
    paths = [("minimal", mp.actions, mp.answer_spec, mp.keep)]
    paths += [(a["note"], a["actions"], a["answer_spec"], a["keep"]) for a in mp.alternatives]
    for name, actions, spec, keep in paths:
        try:
            got = compute(spec, with_records(actions, records, keep))
        except SpecError as e:
            return f"{name} path: {e}"
        if not _agree(got, answer):
            return f"{name} path answers {got.get('value')!r}, the full path {answer.get('value')!r}"
    return ""


def unsent(mp: MinimalPath, values: Sequence[Any]) -> list[Any]:
    """The `values` (the question's seed values) that no call of the minimal path sends and no answer reference
    selects a record by (an hour the answer's weather record is read for)."""
    sent = [v for a in mp.actions for v in (a.get("args") or {}).values()]
    sent += [v for r in references(mp.answer_spec) for v in (r.get("record") or {}).values()]
    used = {_canon(v) for v in sent if not isinstance(v, dict | list)}
    return [v for v in values if _canon(v) not in used]


def pattern_of(template: str, junctions: Sequence[Mapping[str, Any]], fallback: str) -> str:
    """The pattern of a pruned path from its junctions, named as the templates name them."""
    types = [str(j["type"]) for j in junctions]
    if template == "chain":
        return "+".join(types)
    if template == "CMP":
        return "CMP+" + "+".join(sorted(set(types))) if types else "CMP"
    if template == "COND":
        return f"COND+{types[0]}" if types and types[0] != "SEQ" else "COND"
    return fallback


def _run(calls: list[_Call], junctions: Sequence[Mapping[str, Any]], spec: Any, phi: int, substitute: bool,
         given: set[tuple[str, str]]) -> _State:  # fmt: skip
    st = _State(calls, _junctions(calls, junctions), deepcopy(dict(spec)), {c.i for c in calls}, phi, substitute,
                given, _junctions(calls, junctions))  # fmt: skip
    _prune(st)
    return st


def _junction_records(st: _State, junctions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The junction records of the pruned path, in their original order: unchanged ones as they were,
    re-sourced ones rewritten (once for the records they merge), those without a remaining end dropped."""
    placed = {dumps(o) for j in _junctions(st.calls, junctions) for o in j.originals}
    alive = {dumps(o): j for j in st.junctions for o in j.originals}
    out: list[dict[str, Any]] = []
    done: set[int] = set()
    for o in junctions:
        key = dumps(dict(o))
        if key not in placed:  # connects no calls of this path: kept as it was
            out.append(dict(o))
            continue
        j = alive.get(key)
        if j is None:
            continue
        if j.rewritten is None:
            out.append(dict(o))
        elif id(j) not in done:
            out.append(dict(j.rewritten))
            done.add(id(j))
    return out


def _moved(st: _State) -> list[dict[str, Any]]:
    out = []
    for read in _reads(st.spec):
        x = read.holder[read.slot]
        if isinstance(x, Mapping):
            y = st.calls[int(x["at"])]
            out.append(
                {
                    "from": {"tool_id": st.calls[read.origin].tool_id, "ask": read.kind, "field": read.field},
                    "to": {"tool_id": y.tool_id, "field": x.get("field") or read.field, "record": dict(x["record"])},
                }
            )
    return out


def minimal_path(
    actions: Sequence[Mapping[str, Any]],
    records: Sequence[Sequence[Mapping[str, Any]]],
    answer_spec: Mapping[str, Any],
    junctions: Sequence[Mapping[str, Any]],
    specs: Mapping[str, ToolSpec],
    *,
    phi: int,
    logical: Sequence[Any] | None = None,
    given: Sequence[tuple[str, Any]] = (),
) -> MinimalPath:
    """Prune a trajectory to its minimal sufficient path.

    `actions` are the golden actions in order (``step``, ``tool``, ``tool_id``, ``platform``, ``args``,
    ``total_count``, ``records``), `records` every record each returned, `answer_spec` refers to calls by
    0-based position in `actions`, `logical` (optional) names each action's logical call (its pages
    share one), `given` the (parameter, value) pairs the question states (seed values; thresholds with
    parameter ""): a call that passes on only such values is not needed for them."""
    calls = _calls(actions, records, specs, logical)
    stated = {(str(p or ""), _canon(v)) for p, v in given if v is not None and not isinstance(v, dict | list)}
    st = _run(calls, junctions, answer_spec, phi, substitute=True, given=stated)
    keep = sorted(st.keep)
    path, spec = relabel(actions, keep, st.spec)
    original = relabel(actions, range(len(actions)), answer_spec)
    alternatives: list[dict[str, Any]] = []
    if st.removed:
        alternatives.append(
            {"actions": original[0], "answer_spec": original[1], "note": "original", "keep": list(range(len(actions)))}
        )
    moved = _moved(st)
    if moved:
        plain = _run(calls, junctions, answer_spec, phi, substitute=False, given=stated)
        if sorted(plain.keep) not in (keep, list(range(len(actions)))):
            p_actions, p_spec = relabel(actions, sorted(plain.keep), plain.spec)
            alternatives.append(
                {"actions": p_actions, "answer_spec": p_spec, "note": "answer read from its original calls",
                 "keep": sorted(plain.keep)}
            )  # fmt: skip
    removed = [
        {"step": int(actions[i]["step"]), "tool": actions[i]["tool"], "reason": r}
        for i, r in sorted(st.removed.items())
    ]
    out_j = _junction_records(st, junctions)
    changed = dumps(out_j) != dumps([dict(j) for j in junctions])
    return MinimalPath(path, spec, out_j, removed, moved, original, alternatives, keep, changed)
