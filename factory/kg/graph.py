"""The knowledge graph: typed values observed in real executions and how they relate.

Entities are values seen in tool outputs or accepted as tool inputs, typed as
code, name, date, number, boolean or text (from the field name first, then the
value's shape) and keyed by a content hash of (type, normalized value).
Triples relate them to the tool surface and to each other:

- ``(entity, value_of, field:<tool_id>#<field>)``: the value appeared in that output field;
- ``(entity, accepted_by, param:<tool_id>#<param>)``: a call with this argument
  succeeded with at least one record;
- ``(entity, same_record, entity)``: two code/name values of one record
  (carrier 'DL' ~ name 'Delta Air Lines Inc.'), the material of later pivots.

Every triple carries provenance: tool, platform, field, call digest and origin
(probe or path).  It answers "which real values can fill this parameter?" for
CLARIFY candidates and source arguments (`values_for`).
"""

import hashlib
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import pandas as pd

from factory.config import KGConfig
from factory.io import dumps
from factory.tools.outcomes import is_success_outcome
from factory.tools.spec import tool_id

ENTITY_TYPES = ["code", "name", "date", "number", "boolean", "text"]
PREDICATES = ["value_of", "accepted_by", "same_record"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CODE_WORDS = {"code", "cd", "id", "iata", "icao", "lid", "tailnum", "carrier", "no", "key", "type"}
_NAME_WORDS = {"name", "nm", "title", "city", "country", "manufacturer", "model", "composer", "keyword", "query"}
_DATE = re.compile(r"^(19|20)\d{2}-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])$")
_SHORT_CODE = re.compile(r"^[A-Z0-9][A-Z0-9_-]{0,9}$")


@lru_cache(maxsize=65536)
def norm_name(name: str) -> str:
    return re.sub(r"[^0-9a-z가-힣]", "", name.rsplit(".", 1)[-1].lower())


def _words(name: str) -> set[str]:
    return {w.lower() for w in re.split(r"[^0-9A-Za-z]+", _CAMEL.sub(" ", name.rsplit(".", 1)[-1])) if w}


@lru_cache(maxsize=65536)
def _name_type(field: str) -> str | None:
    """The entity type a field's name alone decides (date / code / name), None when the value must."""
    words = _words(field)
    if words & {"date", "dt", "ymd"}:
        return "date"
    if words & _CODE_WORDS or any(w.endswith(("cd", "id")) and len(w) > 2 for w in words):
        return "code"
    if words & _NAME_WORDS or any(w.endswith("nm") for w in words):
        return "name"
    return None


def entity_type(field: str, value: Any) -> str:
    """Type of a value as it appears in `field`."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str) and _DATE.match(value.strip()):
        return "date"
    by_name = _name_type(field)
    if by_name is not None:
        return by_name
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str) and _SHORT_CODE.match(value):
        return "code"
    return "text"


def _normalize(value: Any) -> str:
    s = str(value).strip()
    if isinstance(value, float) and value.is_integer():
        s = str(int(value))
    return s.casefold()


@lru_cache(maxsize=262144, typed=True)
def entity_id(etype: str, value: Any) -> str:
    return "ent:" + hashlib.sha256(f"{etype}|{_normalize(value)}".encode()).hexdigest()[:16]


def _usable(v: Any) -> bool:
    if v is None or isinstance(v, dict | list):
        return False
    if isinstance(v, str) and (not v.strip() or len(v) > 200 or v == "<KEY>"):
        return False
    return True


class KnowledgeGraph:
    """Entities and provenance-carrying triples of one domain (plus values seen in other domains' tools)."""

    def __init__(self, domain: str, cfg: KGConfig | None = None, *, lookups_only: bool = False):
        self.domain = domain
        self.cfg = cfg or KGConfig()
        # lookups_only: keep the value lookups (field_values, accepted, values_for) and no entities or
        # triples (the skeleton reads only the lookups; they do not depend on the entities)
        self.lookups_only = lookups_only
        self.entities: dict[str, dict[str, Any]] = {}
        self.triples: dict[tuple[str, str, str], dict[str, Any]] = {}
        # lookups: (tool_id, field) → values; (tool_id, param) → accepted values; norm field name → values
        self._field_values: dict[tuple[str, str], list[Any]] = {}
        self._accepted: dict[tuple[str, str], list[Any]] = {}
        self._by_name: dict[tuple[str, str], list[Any]] = {}
        self.calls_seen: set[str] = set()
        self._entity_fields: dict[str, set[str]] = {}  # entity id → its `fields` as a set (membership)

    # ------------------------------------------------------------------ building

    def _entity(self, field: str, value: Any) -> str | None:
        etype = entity_type(field, value)
        eid = entity_id(etype, value)
        if eid not in self.entities:
            if len(self.entities) >= self.cfg.max_entities:
                return None
            self.entities[eid] = {"entity_id": eid, "type": etype, "value": value, "fields": [], "count": 0}
        ent = self.entities[eid]
        ent["count"] += 1
        return eid

    def _triple(self, s: str, p: str, o: str, prov: dict[str, Any]) -> None:
        key = (s, p, o)
        if key in self.triples:
            self.triples[key]["count"] += 1
            return
        self.triples[key] = {"subject": s, "predicate": p, "object": o, "count": 1, "provenance": prov}

    @staticmethod
    def _remember(store: dict, key: Any, value: Any, limit: int) -> bool:
        bucket = store.setdefault(key, [])
        if value in bucket or len(bucket) >= limit:
            return value in bucket
        bucket.append(value)
        return True

    def add_call(
        self,
        *,
        domain: str,
        platform: str,
        tool: str,
        args: Mapping[str, Any],
        records: Iterable[Mapping[str, Any]],
        call_digest: str,
        ok: bool,
        origin: str,
        generic: Iterable[str] = (),
    ) -> None:
        """Observe one executed call (only successful calls with records are informative)."""
        records = [r for r in records if isinstance(r, Mapping)]
        if not ok or not records:
            return
        tid = tool_id(domain, platform, tool)
        generic = set(generic)
        limit = self.cfg.values_per_field
        if self.lookups_only:
            self._add_lookups(tid, domain, args, generic, records, limit)
            self.calls_seen.add(call_digest)
            return
        base = {"tool": tool, "platform": platform, "domain": domain, "call_digest": call_digest, "origin": origin}
        for param, v in args.items():
            if param in generic or not _usable(v):
                continue
            if self._remember(self._accepted, (tid, param), v, limit):
                eid = self._entity(param, v)
                if eid:
                    self._triple(eid, "accepted_by", f"param:{tid}#{param}", {**base, "field": param})
        for rec in records:
            linked: list[tuple[str, str]] = []
            for field, v in rec.items():
                if not _usable(v):
                    continue
                kept = self._remember(self._field_values, (tid, field), v, limit)
                self._remember(self._by_name, (domain, norm_name(field)), v, limit)
                if not kept:
                    continue
                eid = self._entity(field, v)
                if eid is None:
                    continue
                fref = f"{tid}#{field}"
                seen = self._entity_fields.get(eid)
                if seen is None:
                    seen = self._entity_fields[eid] = set(self.entities[eid]["fields"])
                if fref not in seen:
                    seen.add(fref)
                    self.entities[eid]["fields"].append(fref)
                self._triple(eid, "value_of", f"field:{fref}", {**base, "field": field})
                if self.entities[eid]["type"] in ("code", "name") and len(linked) < self.cfg.cooccurrence_fields:
                    linked.append((field, eid))
            for i, (fa, a) in enumerate(linked):
                for fb, b in linked[i + 1 :]:
                    if a != b:
                        self._triple(a, "same_record", b, {**base, "field": f"{fa}|{fb}"})
        self.calls_seen.add(call_digest)

    def _add_lookups(
        self,
        tid: str,
        domain: str,
        args: Mapping[str, Any],
        generic: set[str],
        records: list[Mapping[str, Any]],
        limit: int,
    ) -> None:
        """The lookups `add_call` keeps (same values, same order), without entities or triples."""
        remember = self._remember
        for param, v in args.items():
            if param not in generic and _usable(v):
                remember(self._accepted, (tid, param), v, limit)
        for rec in records:
            for field, v in rec.items():
                if _usable(v):
                    remember(self._field_values, (tid, field), v, limit)
                    remember(self._by_name, (domain, norm_name(field)), v, limit)

    def add_probe_rows(
        self, domain: str, rows: Iterable[Mapping[str, Any]], generic_by_tool: Mapping[str, set[str]]
    ) -> None:
        """Observe the rows of a tool_probes value (first record plus sampled values per field)."""
        for r in rows:
            if not is_success_outcome(r.get("outcome")) or not r.get("record_count"):
                continue
            records: list[dict[str, Any]] = []
            if r.get("first_record"):
                records.append(dict(r["first_record"]))
            samples = r.get("sample_values") or {}
            depth = max((len(v) for v in samples.values()), default=0)
            for i in range(1, depth):  # sampled values, recombined per position (not real records: no links)
                records.append({f: vs[i] for f, vs in samples.items() if i < len(vs)})
            self.add_call(
                domain=domain,
                platform=r["platform"],
                tool=r["tool"],
                args=r.get("args") or {},
                records=records,
                call_digest=r.get("call_digest") or "",
                ok=True,
                origin="probe",
                generic=generic_by_tool.get(r["tool"], set()),
            )

    # ------------------------------------------------------------------ lookups

    def values_for(self, tid: str, param: str, *, limit: int = 10) -> list[Any]:
        """Real values for parameter `param` of tool `tid`: accepted before, echoed in its own
        output, then seen in a field of the same name of the same domain (another domain's 'year'
        or 'code' is another thing)."""
        out: list[Any] = []
        for v in (
            *self._accepted.get((tid, param), []),
            *self._field_values.get((tid, param), []),
            *self._by_name.get((tid.split("/", 1)[0], norm_name(param)), []),
        ):
            if v not in out:
                out.append(v)
            if len(out) >= limit:
                break
        return out

    def accepted(self, tid: str, param: str) -> list[Any]:
        return list(self._accepted.get((tid, param), []))

    def field_values(self, tid: str, field: str) -> list[Any]:
        return list(self._field_values.get((tid, field), []))

    # ------------------------------------------------------------------ (de)serialization

    def to_value(self, fingerprint: str | None = None) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "fingerprint": fingerprint,
            "entities": sorted(self.entities.values(), key=lambda e: e["entity_id"]),
            "triples": sorted(self.triples.values(), key=lambda t: (t["subject"], t["predicate"], t["object"])),
            "lookups": {
                "field_values": [[k[0], k[1], v] for k, v in sorted(self._field_values.items())],
                "accepted": [[k[0], k[1], v] for k, v in sorted(self._accepted.items())],
                "by_name": sorted([k[0], k[1], v] for k, v in self._by_name.items()),
            },
        }

    @classmethod
    def from_value(cls, value: Mapping[str, Any], cfg: KGConfig | None = None) -> "KnowledgeGraph":
        kg = cls(value["domain"], cfg)
        kg.entities = {e["entity_id"]: dict(e) for e in value.get("entities", [])}
        kg.triples = {(t["subject"], t["predicate"], t["object"]): dict(t) for t in value.get("triples", [])}
        lk = value.get("lookups") or {}
        kg._field_values = {(a, b): list(v) for a, b, v in lk.get("field_values", [])}
        kg._accepted = {(a, b): list(v) for a, b, v in lk.get("accepted", [])}
        kg._by_name = {(d, k): list(v) for d, k, v in lk.get("by_name", [])}
        return kg

    def digest(self) -> str:
        return hashlib.sha256(dumps(self.to_value()).encode()).hexdigest()


# --------------------------------------------------------------------------- gate frames and metadata


def triples_frame(value: Mapping[str, Any]) -> pd.DataFrame:
    """One row per triple: predicate, provenance fields, and whether its entities exist."""
    ids = {e["entity_id"] for e in value.get("entities", [])}
    rows = []
    for t in value.get("triples", []):
        prov = t.get("provenance") or {}
        obj_is_entity = t["object"].startswith("ent:")
        rows.append(
            {
                "predicate": t["predicate"],
                "subject_exists": t["subject"] in ids,
                "object_exists": (t["object"] in ids)
                if obj_is_entity
                else t["object"].startswith(("field:", "param:")),
                "tool": prov.get("tool") or None,
                "field": prov.get("field") or None,
                "call_digest": prov.get("call_digest") or None,
            }
        )
    return pd.DataFrame(rows, columns=["predicate", "subject_exists", "object_exists", "tool", "field", "call_digest"])
