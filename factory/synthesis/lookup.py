"""Name-first grounding (issue 15, item 2): a question names entities the way people do (pure planning,
executed lookups).

A query cites an artist by name, an album by title, a customer by name, never by the service's surrogate
key ("artist id 142").  When a trajectory's seed argument is a key, synthesis states its display value
instead and prepends the call that resolves it: a lookup tool whose records hold both the display value and
the key.  Value types say which arguments are keys (`key_kind`):

- ``internal``: an ``<entity>.id@<platform>`` value (a surrogate integer): resolved by a lookup, or the seed
  is not used (``internal_seed``);
- ``code``: an ``<entity>.code@<platform>`` value (KOSTAT/admin codes): borderline public identifiers,
  resolved when a lookup exists and picks one record, kept as they are otherwise when short (a 2-digit 시도 code;
  a longer one is ``unnamed_code``: no one asks about '읍면동 코드 26710250');
- public standards (IATA, ICAO, tail numbers) and every other type: cited as they are.

A lookup is an edge of G* into the seed tool that binds the key parameter from a field of the lookup tool's
records (`lookup_plans`), where those records also carry a display field of the key's entity (the
`same_record` relation of the knowledge graph, read through value types: ``artist.name`` beside
``artist.id@…``).  The lookup is called with the display value (a search by name: ``search_artists(name=
'AC/DC')``), or lists its records (``list_playlists()``), its own key arguments resolved the same way one
level up (an album's title is looked up among the albums of its artist, the artist by name).  Searches
match substrings, so the record whose display value EQUALS the name is picked: the junction keeps that one
record, with an ``eq`` process node when the call returned several; a name that picks no record or several
distinct keys is ``ambiguous_name``, and so is a name whose search also found other records holding it (a
substring: 'Battlestar Galactica (Classic)') that have records of their own in the target tool: the answer would
depend on reading the name exactly or as the search does.

The display value of a key is read from a record that holds both (records seen in probes and in executed
calls, else one call of a tool that takes the key: `Names`); those reading calls are the synthesizer's own
knowledge, never golden actions.  The lookup call itself is a golden step: executed, replayed, and kept by
minimal-path pruning since the key it passes on is stated nowhere in the question.
"""

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factory.graph import plan as plans
from factory.graph.edge import Edge
from factory.io import dumps
from factory.semtypes import UNKNOWN, TypeRef, ValueTypes, is_valid_type
from factory.synthesis.coerce import Uncoercible, coerce_value
from factory.synthesis.execute import Fetched, count_only, fetch
from factory.synthesis.junctions import SEQ, Rejection, distinct_keys
from factory.tools.executor import ToolExecutor
from factory.tools.spec import ToolSpec

INTERNAL, CODE = "internal", "code"

#: Trajectory rejections of name-first grounding (recorded by the trajectories stage beside its own reasons).
REJECTIONS = {
    "internal_seed": "a seed is an internal surrogate key (artist id 142) and no lookup resolves it from a name",
    "ambiguous_name": "the display name of a key picks no record or several of its lookup (two playlists 'Music')",
    "unnamed_code": "a seed is a long platform code (읍면동 코드 26710250) no lookup names: no one cites it",
}
DISPLAY_ROLES = ("name", "title")
MAX_CITED_CODE = 2  # characters of a platform code a question may cite when no lookup names it (`_keep_code`)
COMPOSED = ("first_name", "last_name")  # a person's name from two fields: 'Luís Gonçalves'
MAX_AMBIGUITY_CHECKS = 3  # other records a name search found whose own listing is checked (`_unambiguous`)
DESCRIBE_TOOLS = 3  # tools called at most to read a key's display value
_ADMITTED = ("equal", "subtype")


def _ref(t: str | None) -> TypeRef | None:
    if not t or t == UNKNOWN or not is_valid_type(t):
        return None
    try:
        return TypeRef.parse(t)
    except ValueError:
        return None


def key_kind(types: ValueTypes, tid: str, param: str) -> str | None:
    """'internal' for a platform's surrogate id, 'code' for a platform's own code, None for anything else
    (public standards, names, scalars, untyped)."""
    ref = _ref(types.param_type(tid, param))
    if ref is None or ref.entity is None or ref.system is None or ref.system.startswith("std:"):
        return None
    return INTERNAL if ref.role == "id" else CODE if ref.role == "code" else None


def display_fields(types: ValueTypes, tid: str, entity: str) -> tuple[str, ...] | None:
    """The output fields of `tid` that name an `entity` the way people do: its name or title, else its first and
    last name; None when its records carry none."""
    typed = {f: r for f, t in ((types.tools.get(tid) or {}).get("fields") or {}).items() if (r := _ref(t))}
    for role in DISPLAY_ROLES:
        hit = sorted(f for f, r in typed.items() if r.entity == entity and r.role == role)
        if hit:
            return (hit[0],)
    parts = [sorted(f for f, r in typed.items() if r.entity == entity and r.role == role) for role in COMPOSED]
    return (parts[0][0], parts[1][0]) if all(parts) else None


def _text(v: Any) -> str:
    return unicodedata.normalize("NFC", str(v)).strip()


def display_of(record: Mapping[str, Any], fields: Sequence[str]) -> str | None:
    """The display value of a record ('AC/DC'; 'Luís Gonçalves' from first and last name), None when missing."""
    vals = [record.get(f) for f in fields]
    if any(v is None or v == "" or isinstance(v, dict | list | bool) for v in vals):
        return None
    return " ".join(_text(v) for v in vals)


def _canon(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return _text(v).casefold()


@dataclass(frozen=True)
class Plan:
    """A lookup: tool `edge.source` resolves `param` of `edge.target` from a display value."""

    edge: Edge
    param: str  # the target's key parameter
    key_field: str  # the lookup records' field bound into it
    transform: str | None
    entity: str  # what the key names (the lookup records' entity)
    display: tuple[str, ...]  # the lookup records' display fields of that entity
    name_param: str | None  # the lookup's argument that takes the display value (None: a listing, picked by eq)
    nested: tuple[str, ...]  # the lookup's own key arguments, resolved one level up

    @property
    def tool_id(self) -> str:
        return self.edge.source_tool_id


@dataclass
class Step:
    """One executed lookup: its call, the junction into the argument it resolves, what the question states."""

    fetched: Fetched
    junction: dict[str, Any]
    key: Any
    name: str
    stated: dict[str, str]  # the lookup tool and the argument (or, for a listing, the display field) naming it
    seeds: list[dict[str, Any]] = field(default_factory=list)
    thresholds: list[Any] = field(default_factory=list)
    depth: int = 0  # 0 feeds the template's call; 1 feeds a depth-0 lookup


@dataclass
class Grounding:
    """The lookups of one trajectory and each target's arguments with their keys resolved."""

    args: list[dict[str, Any]]
    steps: list[Step] = field(default_factory=list)
    extra_junctions: list[dict[str, Any]] = field(default_factory=list)  # a lookup feeding a second target
    resolved: dict[tuple[int, str], Step] = field(default_factory=dict)  # (target, param) → its lookup
    to: dict[tuple[int, str], str] = field(default_factory=dict)  # (target, param) → 'tool.param' it feeds
    kept_codes: list[str] = field(default_factory=list)  # codes cited as they are (no lookup picked one record)

    def stages(self) -> list[list[Fetched]]:
        """The lookup calls by golden step, outermost first (a nested lookup runs before the one it feeds)."""
        depth = max((s.depth for s in self.steps), default=-1)
        out: list[list[Fetched]] = []
        seen: set[int] = set()  # one listing call picks several names (both arms of a comparison)
        for d in range(depth, -1, -1):
            stage = []
            for s in self.steps:
                if s.depth == d and id(s.fetched) not in seen:
                    seen.add(id(s.fetched))
                    stage.append(s.fetched)
            out.append(stage)
        return out

    @property
    def junctions(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        seen: list[tuple[int, dict[str, Any]]] = []
        for s in sorted(self.steps, key=lambda s: -s.depth):
            if (id(s.fetched), s.junction) not in seen:  # one call feeding one argument (an artist of two albums)
                seen.append((id(s.fetched), s.junction))
                out.append(s.junction)
        return out + self.extra_junctions

    @property
    def seeds(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for s in sorted(self.steps, key=lambda s: -s.depth):
            out += [e for e in s.seeds if e not in out]
        return out

    @property
    def thresholds(self) -> list[Any]:
        return [t for s in sorted(self.steps, key=lambda s: -s.depth) for t in s.thresholds]

    @property
    def bridges(self) -> list[Any]:
        return [s.key for s in self.steps]

    def records(self) -> list[dict[str, Any]]:
        """What the trajectory keeps of its lookups (`lookups`): each junction with the name it states."""
        out = []
        for (i, p), s in sorted(self.resolved.items()):
            out.append({**s.stated, "name": s.name, "key": s.key, "target": i, "resolves": p,
                                "from": s.junction["from"], "to": self.to[(i, p)], "depth": s.depth})  # fmt: skip
        for s in self.steps:
            if s.depth > 0:
                out.append({**s.stated, "name": s.name, "key": s.key, "target": None,
                            "resolves": s.junction["to"].split(".", 1)[1], "from": s.junction["from"],
                            "to": s.junction["to"], "depth": s.depth})  # fmt: skip
        return out

    def label(self, target: int, param: str) -> Any:
        """The value the question states for a target's argument: the display name when it was resolved."""
        s = self.resolved.get((target, param))
        return s.name if s is not None else self.args[target][param]

    def lookup_of(self, target: int, param: str) -> dict[str, Any] | None:
        """The lookup tool and the argument (or display field) that carries the stated name."""
        s = self.resolved.get((target, param))
        return dict(s.stated) if s is not None else None


class Names:
    """Display values of keys, read from records that hold both (probe rows, executed calls, describing calls)."""

    def __init__(self, types: ValueTypes):
        self.types = types
        self.index: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}  # (key type, value) → (tool, record)

    def note(self, tid: str, records: Sequence[Mapping[str, Any]]) -> None:
        fields = (self.types.tools.get(tid) or {}).get("fields") or {}
        keys = [
            (f, t) for f, t in fields.items() if (r := _ref(t)) and r.entity and r.system and r.role in ("id", "code")
        ]
        if not keys:
            return
        for rec in records:
            for f, t in keys:
                v = rec.get(f)
                if v is None or isinstance(v, dict | list) or (t, _canon(v)) in self.index:
                    continue
                ent = _ref(t).entity  # type: ignore[union-attr]
                disp = display_fields(self.types, tid, ent) if ent else None
                if disp and display_of(rec, disp) is not None:
                    self.index[(t, _canon(v))] = (tid, dict(rec))

    def find(self, key_type: str, value: Any) -> tuple[str, dict[str, Any]] | None:
        """A record holding `value` as a key of `key_type` (or of a narrower type the parameter accepts)."""
        hit = self.index.get((key_type, _canon(value)))
        if hit is not None:
            return hit
        for (t, v), rec in sorted(self.index.items()):
            if v == _canon(value) and self.types.accepts(key_type, t) in ("equal", "subtype"):
                return rec
        return None


class Grounder:
    """Lookup plans of one domain's tools over G* (static) and their execution in a trajectory's session."""

    def __init__(
        self,
        types: ValueTypes,
        specs: Mapping[str, ToolSpec],
        edges: Sequence[Edge],
        usable: Sequence[str],
        depth: int = 2,
        bound: int = 100,
    ):
        self.types = types
        self.specs = specs
        self.depth = depth
        self.bound = bound
        self.usable = set(usable)
        self.into: dict[str, list[Edge]] = {}
        for e in edges:
            self.into.setdefault(e.target_tool_id, []).append(e)
        self.names = Names(types)
        self.unnameable: set[tuple[str, str, str]] = set()  # (tool, param, value) whose key no lookup names
        self._plans: dict[tuple[str, str, int], list[Plan]] = {}

    # ----------------------------------------------------------------- static plans

    def plans(self, tid: str, param: str, depth: int | None = None) -> list[Plan]:
        """Lookups that resolve `param` of `tid` from a display value, searches first, then listings."""
        depth = self.depth if depth is None else depth
        key = (tid, param, depth)
        if key not in self._plans:
            self._plans[key] = [] if depth < 1 else self._find_plans(tid, param, depth)
        return self._plans[key]

    def _find_plans(self, tid: str, param: str, depth: int) -> list[Plan]:
        want = self.types.param_type(tid, param)
        out: list[Plan] = []
        for e in sorted(self.into.get(tid, []), key=lambda e: e.edge_id):
            st = e.plan.get(param) or {}
            src = e.source_tool_id
            spec = self.specs.get(src)
            if (
                st.get("kind") != plans.UPSTREAM
                or spec is None
                or src == tid
                or src not in self.usable
                or spec.state_changing
                or any(s.get("kind") == plans.UPSTREAM for p, s in e.plan.items() if p != param)
            ):
                continue
            kf = str(st.get("field"))
            ft = self.types.field_type(src, kf)
            ref = _ref(ft)
            if ref is None or ref.entity is None or self.types.accepts(want, ft) not in ("equal", "subtype"):
                continue
            disp = display_fields(self.types, src, ref.entity)
            if disp is None:
                continue
            name_types = {self.types.field_type(src, disp[0])} if len(disp) == 1 else set()
            name_types |= {f"{ref.entity}.{r}" for r in DISPLAY_ROLES}
            generic = spec.generic_params.names()
            name_param = next(
                (p for p in sorted(spec.params) if p not in generic and self.types.param_type(src, p) in name_types),
                None,
            )
            nested: list[str] = []
            ok = True
            for p in spec.required_params:
                if p in generic or p == name_param:
                    continue
                nref = _ref(self.types.param_type(src, p))
                if (  # the lookup's own key of another entity (an album among its artist's albums), not the same key
                    key_kind(self.types, src, p) is not None
                    and nref is not None
                    and nref.entity != ref.entity
                    and self.plans(src, p, depth - 1)
                ):
                    nested.append(p)
                else:
                    ok = False
            if ok:
                out.append(Plan(e, param, kf, st.get("transform"), ref.entity, disp, name_param, tuple(nested)))
        out.sort(key=lambda p: (p.name_param is None, len(p.nested), p.edge.edge_id))
        return out

    def groundable(self, tid: str, args: Mapping[str, Any]) -> str | None:
        """None when every internal key of a seed has a lookup; else why not (the `internal_seed` detail)."""
        for p, v in sorted(args.items()):
            if key_kind(self.types, tid, p) == INTERNAL and (isinstance(v, list) or not self.plans(tid, p)):
                name = self.specs[tid].name if tid in self.specs else tid
                return f"{name}.{p}={v!r} is an internal key ({self.types.param_type(tid, p)}) and no lookup states it"
        return None

    def nameable(self, tid: str, args: Mapping[str, Any]) -> bool:
        """False when an internal key of `args` was found to have no name that picks it (`ambiguous_name`)."""
        return not any((tid, p, _canon(v)) in self.unnameable for p, v in args.items() if not isinstance(v, list))

    # ----------------------------------------------------------------- execution

    async def ground(self, ex: ToolExecutor, targets: Sequence[tuple[str, Mapping[str, Any]]]) -> Grounding:
        """Resolve the keys of each (tool, arguments) target into lookups; Rejection('internal_seed' or
        'ambiguous_name') when an internal key cannot be stated by name."""
        g = Grounding(args=[dict(a) for _, a in targets])
        calls: dict[str, Fetched] = {}  # lookup calls by tool and arguments: a listing is called once
        done: dict[tuple[str, str], Step] = {}  # (key type, value) → the lookup that already resolved it
        for i, (tid, args) in enumerate(targets):
            for p, v in sorted(args.items()):
                kind = key_kind(self.types, tid, p)
                if kind is None:
                    continue
                name = self.specs[tid].name
                ktype = str(self.types.param_type(tid, p))
                prior = done.get((ktype, _canon(v))) if not isinstance(v, list) else None
                if prior is not None:  # the same key for a second target (SEM): one lookup feeds both
                    j = {**prior.junction, "to": f"{name}.{p}"}
                    g.extra_junctions.append(j)
                    g.resolved[(i, p)] = prior
                    g.to[(i, p)] = j["to"]
                    g.args[i][p] = self._typed(tid, p, prior.key)
                    continue
                if isinstance(v, list) or not self.plans(tid, p):
                    if kind == INTERNAL:
                        raise Rejection("internal_seed", self.groundable(tid, {p: v}) or f"{name}.{p}={v!r}")
                    self._keep_code(g, name, p, v)
                    continue
                try:
                    steps = await self._resolve(ex, tid, p, v, self.depth, calls)
                except Rejection as r:
                    if kind == INTERNAL:
                        if r.reason in REJECTIONS:  # a property of the value, not of this attempt: not drawn again
                            self.unnameable.add((tid, p, _canon(v)))
                        raise
                    self._keep_code(g, name, p, v)
                    continue
                g.steps += steps
                done[(ktype, _canon(v))] = steps[-1]
                g.resolved[(i, p)] = steps[-1]
                g.to[(i, p)] = steps[-1].junction["to"]
                g.args[i][p] = self._typed(tid, p, steps[-1].key)
        return g

    @staticmethod
    def _keep_code(g: Grounding, name: str, p: str, v: Any) -> None:
        """A platform's code no lookup names is cited as it is when it is short (a 2-digit 시도 code); a long one
        is no question anyone asks (blind read s16: '행정안전부 읍면동 코드 26710250과 …
        26710330의 리 수는 몇 곳 차이 나나요?'): Rejection('unnamed_code')."""
        if len(str(v)) > MAX_CITED_CODE:
            raise Rejection("unnamed_code", f"{name}.{p}={v!r} is a code no lookup names, too long to cite")
        g.kept_codes.append(f"{name}.{p}={v}")

    def _typed(self, tid: str, p: str, v: Any) -> Any:
        try:
            return coerce_value(v, self.specs[tid].params.get(p))
        except Uncoercible as e:
            raise Rejection("uncoercible_value", f"{self.specs[tid].name}.{p}: {e}"[:200]) from None

    async def describe(self, ex: ToolExecutor, key_type: str, value: Any) -> tuple[str, dict[str, Any]] | None:
        """A record that holds `value` as a key of `key_type` and its entity's display value: from records seen,
        else from a call of a tool that takes that key (not a golden action)."""
        hit = self.names.find(key_type, value)
        if hit is not None:
            return hit
        calls: list[tuple[int, str, dict[str, Any]]] = []  # a tool taking the key first, then a full listing
        for tid in sorted(self.usable):
            spec = self.specs.get(tid)
            if spec is None or spec.state_changing:
                continue
            generic = spec.generic_params.names()
            req = [p for p in spec.required_params if p not in generic]
            if len(req) == 1 and self.types.accepts(self.types.param_type(tid, req[0]), key_type) in _ADMITTED:
                calls.append((0, tid, {req[0]: value}))
            fields = (self.types.tools.get(tid) or {}).get("fields") or {}
            if not req and any(self.types.accepts(key_type, t) in _ADMITTED for t in fields.values()):
                calls.append((1, tid, {}))
        for _, tid, args in sorted(calls, key=lambda c: (c[0], c[1]))[:DESCRIBE_TOOLS]:
            try:
                f = await fetch(ex, self.specs[tid], tid, args, self.bound)
            except Rejection:
                continue
            self.names.note(tid, f.records)
            if (hit := self.names.find(key_type, value)) is not None:
                return hit
        return None

    async def _unambiguous(
        self, ex: ToolExecutor, plan: Plan, tid: str, records: Sequence[Mapping[str, Any]], name: str, key: Any
    ) -> None:
        """Rejection('ambiguous_name') when the search by `name` also found other records that hold the name (a
        substring match: 'Battlestar Galactica' finds 'Battlestar Galactica (Classic)') and the target tool has
        records for one of them: a reader taking the name as the search does would add those records and get
        another answer (blind read s11 en #15: a compared album count 2 vs 1 becomes 3 vs 1). A match whose own
        listing is empty changes no count or list ('Aerosmith & Sierra Leone's Refugee Allstars': 0 albums); a
        target call that cannot be sent with the key alone proves nothing and is not held against the name."""
        spec = self.specs[tid]
        low = _canon(name)
        others = [
            r
            for r in records
            if _canon(display_of(r, plan.display) or "") != low
            and low in _canon(display_of(r, plan.display) or "")
            and r.get(plan.key_field) is not None
            and _canon(r.get(plan.key_field)) != _canon(key)
        ]
        for r in others[:MAX_AMBIGUITY_CHECKS]:
            other = self._typed(tid, plan.param, plans.apply_transform(r[plan.key_field], plan.transform))
            n = await count_only(ex, spec, {plan.param: other}, self.bound)
            if n:
                raise Rejection(
                    "ambiguous_name",
                    f"{self.specs[plan.tool_id].name}({plan.name_param}={name!r}) also finds "
                    f"{display_of(r, plan.display)!r}, which has {n} {spec.name} records: the name's reading "
                    f"decides the answer"[:200],
                )

    async def _resolve(
        self, ex: ToolExecutor, tid: str, param: str, value: Any, depth: int, calls: dict[str, Fetched]
    ) -> list[Step]:
        """The lookups (outermost first) whose last one passes `value` into `param` of `tid` from a stated name."""
        ktype = str(self.types.param_type(tid, param))
        last: Rejection | None = None
        for plan in self.plans(tid, param, depth):
            try:
                return await self._run(ex, plan, tid, ktype, value, depth, calls)
            except Rejection as r:
                last = r
        raise last or Rejection("internal_seed", f"no lookup resolves {self.specs[tid].name}.{param}={value!r}")

    async def _run(
        self, ex: ToolExecutor, plan: Plan, tid: str, ktype: str, value: Any, depth: int, calls: dict[str, Fetched]
    ) -> list[Step]:
        lspec = self.specs[plan.tool_id]
        target = self.specs[tid].name
        described = await self.describe(ex, ktype, value)
        if described is None:
            raise Rejection("internal_seed", f"no record names {target}.{plan.param}={value!r} ({ktype})")
        dtid, rec = described
        ddisp = display_fields(self.types, dtid, plan.entity)
        name = display_of(rec, ddisp) if ddisp else None
        if name is None:
            raise Rejection("internal_seed", f"no {plan.entity} name beside {target}.{plan.param}={value!r}")
        args: dict[str, Any] = {}
        steps: list[Step] = []
        if plan.name_param:
            args[plan.name_param] = name
        for p in plan.nested:  # the lookup's own key, read from the same record, resolved one level up
            ptype = self.types.param_type(plan.tool_id, p)
            src = next(
                (
                    f
                    for f, t in sorted(((self.types.tools.get(dtid) or {}).get("fields") or {}).items())
                    if self.types.accepts(ptype, t) in ("equal", "subtype") and rec.get(f) is not None
                ),
                None,
            )
            if src is None:
                raise Rejection("internal_seed", f"no {p} of {lspec.name} beside {target}.{plan.param}={value!r}")
            inner = await self._resolve(ex, plan.tool_id, p, rec[src], depth - 1, calls)
            steps += [Step(**{**s.__dict__, "depth": s.depth + 1}) for s in inner]
            args[p] = self._typed(plan.tool_id, p, inner[-1].key)
        sent = dumps([plan.tool_id, args])
        if sent not in calls:
            calls[sent] = await fetch(ex, lspec, plan.tool_id, args, self.bound)
            self.names.note(plan.tool_id, calls[sent].records)
        f = calls[sent]
        picked = [r for r in f.records if display_of(r, plan.display) == name]
        keys = distinct_keys(picked, [plan.key_field])
        if len(keys) != 1:
            raise Rejection(
                "ambiguous_name",
                f"{lspec.name}({dumps(args)[:60]}) has {len(keys)} {plan.entity} records named {name!r}"[:200],
            )
        key = self._typed(tid, plan.param, plans.apply_transform(keys[0][0], plan.transform))
        if _canon(key) != _canon(value):
            raise Rejection("ambiguous_name", f"{name!r} is {plan.entity} {key}, not {value}")
        n_in = len(distinct_keys(f.records, [plan.key_field]))
        node = None
        if n_in > 1:
            if len(plan.display) > 1:
                raise Rejection("ambiguous_name", f"{lspec.name} returned {n_in} {plan.entity} records for {name!r}")
            node = {"field": plan.display[0], "operator": "eq", "threshold": name, "n_in": n_in, "n_out": 1}
            if plan.name_param:
                await self._unambiguous(ex, plan, tid, f.records, name, key)
        junction = {
            "from": f"{lspec.name}.{plan.key_field}",
            "to": f"{target}.{plan.param}",
            "edge_id": plan.edge.edge_id,
            "type": SEQ,  # one key passes on: the record the name picks
            "n": 1,
            "width": 1,
            "process": node,
        }
        stated = {"tool_id": plan.tool_id, "param": plan.name_param or plan.display[0]}
        step = Step(fetched=f, junction=junction, key=key, name=name, stated=stated)
        # the question states the name for the key it names ('the albums of artist AC/DC'); `via` is the lookup it
        # is sent to (`picked`: a listing's record picked by that name, the name sent to no call)
        via = {**stated, **({} if plan.name_param else {"picked": True})}
        step.seeds.append({"tool_id": tid, "param": plan.param, "value": name, "via": via})
        if node is not None or not plan.name_param:
            step.thresholds.append(name)
        return [*steps, step]
