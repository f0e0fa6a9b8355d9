"""Semantic value types of tool inputs and outputs (DESIGN: "Value types are the method's spine").

A value type says what a value *is*, beyond its JSON type:

- an entity and a role: ``playlist.name``, ``track.title``, ``airport.iata``, ``country.iso2``;
- for codes and ids, the code system they belong to: ``album.id@chinook-catalog``,
  ``region.code@kostat-census``.  A public standard is its own system and is written as the role
  (``airport.iata``, ``airport.icao``, ``airport.faa``, ``aircraft.tailnum``, ``country.iso2``,
  ``timezone.iana``); any other code or id is the platform's own until evidence says that two
  platforms share it;
- a scalar kind without an entity: ``date``, ``year``, ``month``, ``hour``, ``time``, ``duration``,
  ``count``, ``amount``, ``percent``, ``latitude``, ``longitude``, ``distance``, ``boolean``,
  ``email``, ``phone``, ``url``, ``digest``, ``limit``, ``path`` (a file-system path);
- ``measure.<name>`` for any other number (a temperature, a statistic's value): equal only to
  itself;
- ``unknown`` where nothing says what the value is (free text, categories); such a slot binds only
  under the `check_binding` rule for unknown types.

Inference (`infer_types`), per parameter and output field of every tool, in this order:

1. a reviewed override of the domain (`Overrides`, a YAML file in the project folder);
2. the name: role words (``id``, ``cd``/``code``, ``nm``/``name``/``title``, ``iata``, ``date``,
   ``count``, ...) and entity words before them (``album_id`` → album; ``sidoCd`` → sido;
   ``dest_name`` → airport); a bare display or search name (``name``, ``title``, ``q``,
   ``keyword``) belongs to the tool's entity, i.e. what its records are (`tool_entity`:
   ``list_album_tracks`` returns tracks, ``add_track_to_playlist`` a playlist);
3. the description and schema: a standard named in the description (IATA, ICAO, FAA, ISO 3166,
   IANA), "code"/"코드", "id", "name"/"이름"/"명"; ``format``/``pattern`` (dates), enums;
4. the observed values (probe rows): code-like strings (short, upper case or digits) against
   names, ISO dates.

Code systems.  Codes and ids of one entity family (the root of `PARENTS`: sido, sigungu, emd and
ri are regions) start as one system per platform.  Two platforms' systems are merged when

- a reviewed override declares the types equal, or
- a description documents where a value comes from or goes to on another platform ("Id of the
  track to add (from search_tracks ...)", "use with add_track_to_playlist"), or
- their observed code → display-name pairs agree (records that carry both a code and a name,
  and calls whose argument code names one entity in every record) at least
  `min_agreements` times with no conflict;

and never merged when a reviewed override declares them distinct or the observed pairs
conflict (one code, two names; one name that is unique on both sides, two codes).  A public
standard absorbs the platform systems that document it.

A narrower entity is accepted where a broader one is asked (`PARENTS`: a sido code where a
region code is asked, in the same system); transforms (upper, to_number, ...) keep a type.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from factory.tools.identifiers import singular, words
from factory.tools.spec import ToolSpec

UNKNOWN = "unknown"
SCALARS = (
    "date",
    "year",
    "month",
    "hour",
    "time",
    "duration",
    "count",
    "amount",
    "percent",
    "latitude",
    "longitude",
    "distance",
    "boolean",
    "email",
    "phone",
    "url",
    "digest",
    "limit",
    "path",
)
STANDARDS = ("iata", "icao", "faa", "tailnum", "iso2", "iso3", "iana")
CODE_ROLES = ("code", "id")
DISPLAY_ROLES = ("name", "title", "name_en")
# entities whose display name is a title (a track's `name` is its title)
TITLED = {"track", "album", "song", "book", "film", "movie", "episode", "article", "video", "podcast"}
# entity → broader entity: a narrower value is accepted where the broader one is asked
PARENTS: dict[str, str] = {"sido": "region", "sigungu": "region", "emd": "region", "ri": "region"}

SOURCES = ("override", "name", "description", "schema", "values", "search", "fallback")
TypeCheck = Literal["equal", "subtype", "unknown_overlap", "mismatch", "unverified"]
ADMITTED_CHECKS = ("equal", "subtype", "unknown_overlap")

_TYPE_RE = re.compile(r"^(?:unknown|[a-z][a-z0-9_]*|[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*(?:@[A-Za-z0-9][A-Za-z0-9._-]*)?)$")
_DATE = re.compile(r"^(19|20)\d{2}-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])$")
_CODE_VALUE = re.compile(r"^[A-Z0-9][A-Z0-9_-]{0,11}$")

# ------------------------------------------------------------------------------------ vocabulary

VERBS = {
    "get", "list", "search", "find", "create", "add", "update", "delete", "remove", "fetch",
    "lookup", "query", "read", "set", "post", "put", "count", "show", "describe",
}  # fmt: skip
# name words that never name an entity of a tool's records
_NOT_ENTITIES = {
    "by", "of", "for", "to", "from", "in", "on", "with", "all", "nearest", "near", "daily", "hourly",
    "census", "admin", "info", "detail", "details", "data", "item", "items", "result", "results",
    "response", "body", "header", "great", "circle", "coordinates",
}  # fmt: skip
ALIASES = {
    "carrier": "airline",
    "carriers": "airline",
    "plane": "aircraft",
    "origin": "airport",
    "dest": "airport",
    "destination": "airport",
    "adm": "region",
    "district": "region",
    "tz": "timezone",
    "statistics": "statistic",
    "stat": "statistic",
}
BUILTIN_ENTITIES = {
    "airport", "airline", "aircraft", "flight", "route", "country", "city", "subdivision", "state",
    "region", "sido", "sigungu", "emd", "ri", "timezone", "track", "album", "artist", "playlist",
    "genre", "customer", "invoice", "employee", "composer", "user", "order", "product", "station",
}  # fmt: skip
_ID_WORDS = {"id": "id", "ids": "id", "no": "code", "number": "code", "cd": "code", "code": "code", "key": "code"}
_NAME_WORDS = {"name", "nm", "title", "label"}
_KIND_WORDS = {"type", "kind", "category"}
_NAME_OF = re.compile(r"^(?:the |an? )?names? of (?:the |an? )?([a-z][a-z0-9_]*)\b")
_STANDARD_WORDS = {"iata": "iata", "icao": "icao", "faa": "faa", "lid": "faa", "tailnum": "tailnum"}
_SEARCH_WORDS = {"q", "query", "keyword", "keywords", "search", "term", "text"}
_SCALAR_WORDS = {
    "date": "date", "dt": "date", "ymd": "date", "day": "date",
    "year": "year", "yr": "year", "month": "month", "hour": "hour", "time": "time",
    "count": "count", "cnt": "count", "quantity": "count", "qty": "count", "size": "count",
    "lat": "latitude", "latitude": "latitude", "lon": "longitude", "lng": "longitude", "longitude": "longitude",
    "km": "distance", "miles": "distance", "distance": "distance",
    "price": "amount", "amount": "amount", "total": "amount", "cost": "amount", "fee": "amount",
    "pct": "percent", "percent": "percent", "share": "percent", "ratio": "percent",
    "email": "email", "mail": "email", "phone": "phone", "fax": "phone", "tel": "phone",
    "url": "url", "uri": "url", "link": "url", "hash": "digest", "digest": "digest", "sha256": "digest",
    "delay": "duration", "milliseconds": "duration", "ms": "duration", "seconds": "duration",
    "minutes": "duration", "duration": "duration", "limit": "limit", "path": "path", "filepath": "path",
}  # fmt: skip
_QUALIFIERS = {"min", "max", "from", "to", "start", "end", "mean", "avg", "sched", "billing", "first", "last"}


def is_valid_type(t: Any) -> bool:
    return isinstance(t, str) and bool(_TYPE_RE.match(t))


def root(entity: str, parents: Mapping[str, str] | None = None) -> str:
    parents = PARENTS if parents is None else parents
    seen = {entity}
    while entity in parents and parents[entity] not in seen:
        entity = parents[entity]
        seen.add(entity)
    return entity


def ancestors(entity: str, parents: Mapping[str, str]) -> list[str]:
    out = [entity]
    while out[-1] in parents and parents[out[-1]] not in out:
        out.append(parents[out[-1]])
    return out


# ------------------------------------------------------------------------------------ the type value


@dataclass(frozen=True)
class TypeRef:
    """A parsed type: `entity.role@system` (system only for codes/ids), a scalar, or unknown."""

    entity: str | None
    role: str
    system: str | None = None  # a platform name, or "std:<standard>"

    def __str__(self) -> str:
        if self.entity is None:
            return self.role
        if self.system is None:
            return f"{self.entity}.{self.role}"
        if self.system.startswith("std:"):
            return f"{self.entity}.{self.system[4:]}"
        return f"{self.entity}.{self.role}@{self.system}"

    @property
    def is_code(self) -> bool:
        return self.entity is not None and self.role in CODE_ROLES

    @classmethod
    def parse(cls, text: str) -> "TypeRef":
        if not is_valid_type(text):
            raise ValueError(f"{text!r} is not a value type (entity.role[@system], a scalar kind or 'unknown')")
        if "." not in text:
            if text != UNKNOWN and text not in SCALARS:
                raise ValueError(f"{text!r} is not a scalar kind ({', '.join(SCALARS)}) nor 'unknown'")
            return cls(None, text)
        ent, rest = text.split(".", 1)
        role, _, system = rest.partition("@")
        if role in STANDARDS:
            if system:
                raise ValueError(f"{text!r}: a public standard ({role}) is its own code system; drop '@{system}'")
            return cls(ent, "code", f"std:{role}")
        if role in CODE_ROLES and not system:
            raise ValueError(f"{text!r}: a code or id needs its system ('{ent}.{role}@<platform>')")
        if system and role not in CODE_ROLES:
            raise ValueError(f"{text!r}: only codes and ids have a system, not {role!r}")
        return cls(ent, role, system or None)


def _node(t: TypeRef, parents: Mapping[str, str]) -> tuple[str, str, str] | None:
    """The code-system key of a code/id type: (entity family, role, system)."""
    if not t.is_code or t.system is None or t.entity is None:
        return None
    return (root(t.entity, parents), t.role, t.system)


# ------------------------------------------------------------------------------------ overrides


class TypesFileError(ValueError):
    """A reviewed value-type file that cannot be used (named with its path and the problem)."""


SlotKind = Literal["param", "field"]


class Overrides(BaseModel):
    """A domain's reviewed value types (`types/<domain>.yaml`; README "Value types").

    ``slots``: ``[param:|field:]<platform>/<tool>.<name>: <type>`` (``*`` for every tool of the
    platform; without a prefix both the parameter and the output field of that name);
    ``equal``/``distinct``: lists of types that are one type / never one type;
    ``parents``: entity → broader entity (accepted where the broader is asked).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    slots: dict[str, str] = Field(default_factory=dict)
    equal: list[list[str]] = Field(default_factory=list)
    distinct: list[list[str]] = Field(default_factory=list)
    parents: dict[str, str] = Field(default_factory=dict)
    _source: str = PrivateAttr(default="")

    @property
    def source(self) -> str:
        """Where the overrides were read from (file paths, comma-separated)."""
        return self._source

    def from_file(self, source: str) -> "Overrides":
        out = self.model_copy()
        out._source = source
        return out

    @field_validator("slots")
    @classmethod
    def _slots(cls, v: dict[str, str]) -> dict[str, str]:
        for key, t in v.items():
            parse_slot_key(key)
            try:
                TypeRef.parse(t)
            except ValueError as e:
                raise ValueError(f"{key}: {e}") from None
        return v

    @field_validator("equal", "distinct")
    @classmethod
    def _groups(cls, v: list[list[str]]) -> list[list[str]]:
        for group in v:
            if len(group) < 2:
                raise ValueError(f"{group}: a group names at least two types")
            for t in group:
                TypeRef.parse(t)
        return v

    @field_validator("parents")
    @classmethod
    def _parents(cls, v: dict[str, str]) -> dict[str, str]:
        for a, b in v.items():
            if not re.match(r"^[a-z][a-z0-9_]*$", a) or not re.match(r"^[a-z][a-z0-9_]*$", b) or a == b:
                raise ValueError(f"parents: {a!r} → {b!r} must be two different entity names")
        return v

    def merged(self, other: "Overrides") -> "Overrides":
        clash = {k for k in self.slots.keys() & other.slots.keys() if self.slots[k] != other.slots[k]}
        if clash:
            raise TypesFileError(f"{self.source} and {other.source} type {sorted(clash)} differently")
        return Overrides(
            slots={**self.slots, **other.slots},
            equal=[*self.equal, *other.equal],
            distinct=[*self.distinct, *other.distinct],
            parents={**self.parents, **other.parents},
        ).from_file(", ".join(s for s in (self.source, other.source) if s))


_SLOT_KEY = re.compile(r"^(?:(param|field):)?([^/\s]+)/([^.\s]+)\.(\S+)$")


def parse_slot_key(key: str) -> tuple[SlotKind | None, str, str, str]:
    m = _SLOT_KEY.match(key)
    if not m:
        raise ValueError(f"slot {key!r}: write [param:|field:]<platform>/<tool>.<name> (tool '*' for every tool)")
    kind = m.group(1)
    return (kind if kind in ("param", "field") else None), m.group(2), m.group(3), m.group(4)  # type: ignore[return-value]


def load_overrides(path: str | Path) -> Overrides:
    """Read and validate one reviewed value-type file; errors name the file and the key."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise TypesFileError(f"value-type file {p}: cannot be read ({e.strerror or e})") from e
    except yaml.YAMLError as e:
        raise TypesFileError(f"value-type file {p}: not valid YAML ({e})") from e
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TypesFileError(f"value-type file {p}: the top level must be a mapping (slots, equal, distinct, parents)")
    try:
        return Overrides(**data).from_file(str(p))
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(x) for x in err['loc']) or '(top)'}: {err['msg']}" for err in e.errors())
        raise TypesFileError(f"value-type file {p}: {problems}") from e


def check_overrides(ov: Overrides, specs: Mapping[str, ToolSpec]) -> None:
    """Every slot key names a platform, tool and slot that exist (else TypesFileError)."""
    for key in ov.slots:
        kind, platform, tool, name = parse_slot_key(key)
        tools = [s for s in specs.values() if s.platform == platform]
        if not tools:
            raise TypesFileError(
                f"value-type file {ov.source}: slot {key!r}: no platform {platform!r} in the inventories"
            )
        if tool != "*":
            tools = [s for s in tools if s.name == tool]
            if not tools:
                raise TypesFileError(f"value-type file {ov.source}: slot {key!r}: {platform} has no tool {tool!r}")
        hits = [
            s
            for s in tools
            if (kind in (None, "param") and name in s.params) or (kind in (None, "field") and name in s.output_fields)
        ]
        if not hits:
            what = {"param": "parameter", "field": "output field"}.get(kind or "", "parameter or field")
            raise TypesFileError(f"value-type file {ov.source}: slot {key!r}: no {what} {name!r} on {platform}/{tool}")


def override_for(ov: Overrides, spec: ToolSpec, kind: SlotKind, name: str) -> tuple[str, str] | None:
    """(type, key) of the most specific override of one slot: exact tool before '*', kind before none."""
    best: tuple[int, str, str] | None = None
    for key, t in ov.slots.items():
        k, platform, tool, n = parse_slot_key(key)
        if platform != spec.platform or n != name or (k is not None and k != kind) or tool not in ("*", spec.name):
            continue
        rank = (2 if tool != "*" else 0) + (1 if k is not None else 0)
        if best is None or rank > best[0]:
            best = (rank, t, key)
    return (best[1], best[2]) if best else None


# ------------------------------------------------------------------------------------ per-tool inference


def tool_entity(spec: ToolSpec, vocab: set[str]) -> str:
    """What the tool's records are: a noun of its name (after the verb; before 'by'; after 'to' for
    add/assign tools), preferring known entities, else the records path's last word."""
    ws = words(spec.name)
    verb = ws[0] if ws and ws[0] in VERBS else None
    if verb:
        ws = ws[1:]
    if "by" in ws:
        ws = ws[: ws.index("by")]
    if verb in ("add", "assign", "append", "move") and "to" in ws:
        ws = ws[ws.index("to") + 1 :]
    nouns = [w for w in ws if w not in _NOT_ENTITIES and not w.isdigit()]
    cands: list[str] = []
    for i, w in enumerate(nouns):
        if i + 1 < len(nouns):  # two-word entities (invoice_line, media_type)
            pair = f"{w}_{singular(nouns[i + 1])}"
            if pair in vocab:
                cands.append(pair)
        s = ALIASES.get(w, ALIASES.get(singular(w), singular(w)))
        if s in vocab:
            cands.append(s)
    if cands:
        return cands[-1]
    if spec.records_path:
        last = singular(words(spec.records_path)[-1]) if words(spec.records_path) else ""
        if last in vocab:
            return ALIASES.get(last, last)
        collection = words(spec.records_path)[-1] if words(spec.records_path) else ""
        if last and last != collection and last not in _NOT_ENTITIES and collection not in _NOT_ENTITIES:
            # no noun of the name is a known entity, but the records sit under a plural noun:
            # read_graph's and open_nodes' records under `entities` are entities (not graphs, nodes)
            return last
    return ALIASES.get(singular(nouns[-1]), singular(nouns[-1])) if nouns else "record"


def entity_vocabulary(specs: Iterable[ToolSpec]) -> set[str]:
    """Entities of these tools: built-in nouns, prefixes of id/code slots, nouns of tool names."""
    vocab = set(BUILTIN_ENTITIES) | set(ALIASES.values())
    for s in specs:
        for name in [*s.params, *s.output_fields]:
            ws = words(name)
            if len(ws) >= 2 and ws[-1] in _ID_WORDS:
                vocab.add(ALIASES.get("_".join(ws[:-1]), "_".join(ws[:-1])))
        collection = words(s.records_path or "")[-1:]  # records under `entities`, `relations`: entities
        if collection and collection[0] not in _NOT_ENTITIES and singular(collection[0]) != collection[0]:
            vocab.add(ALIASES.get(singular(collection[0]), singular(collection[0])))
    return vocab


@dataclass
class SlotInfo:
    """What the inference knows about one parameter or output field."""

    tool_id: str
    kind: SlotKind
    name: str
    json_type: str = "string"
    description: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict)
    values: list[Any] = field(default_factory=list)


def _standard_in(text: str) -> str | None:
    t = text.lower()
    hits = []
    for key, std in (
        ("iata", "iata"),
        ("icao", "icao"),
        ("faa", "faa"),
        ("alpha-2", "iso2"),
        ("alpha 2", "iso2"),
        ("alpha-3", "iso3"),
        ("iana", "iana"),
    ):
        i = t.find(key)
        if i >= 0:
            hits.append((i, std))
    return min(hits)[1] if hits else None


def _says_code(text: str) -> bool:
    t = text.lower()
    return bool(re.search(r"\bcodes?\b|코드", t))


def _says_id(text: str) -> bool:
    return bool(re.search(r"\b(id|ids|identifier)\b", text.lower()))


def _says_name(text: str) -> bool:
    t = text.lower()
    return bool(re.search(r"\bnames?\b|\btitles?\b|이름|명\b|명\s|명$", t))


def _code_like(values: Sequence[Any]) -> bool | None:
    vals = [v for v in values if isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip()]
    if not vals:
        return None
    return all(isinstance(v, int) or _CODE_VALUE.match(str(v)) for v in vals)


def _described_values(text: str) -> list[str]:
    """Example values a description shows: `quoted` ones, else upper-case tokens (EWR, JFK)."""
    quoted = re.findall(r"`([^`]+)`", text)
    return quoted or [t for t in re.findall(r"\b[A-Z][A-Z0-9]{1,5}\b", text) if t not in ("ISO", "NYC", "USA", "ID")]


def _json_type(schema: Mapping[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, str):
        return t
    for alt in schema.get("anyOf") or schema.get("oneOf") or []:
        if isinstance(alt, Mapping) and alt.get("type") not in (None, "null"):
            return str(alt["type"])
    return "string"


def _pattern(schema: Mapping[str, Any]) -> str:
    if isinstance(schema.get("pattern"), str):
        return str(schema["pattern"])
    for alt in schema.get("anyOf") or schema.get("oneOf") or []:
        if isinstance(alt, Mapping) and isinstance(alt.get("pattern"), str):
            return str(alt["pattern"])
    return ""


def _display(entity: str, language: str | None = None) -> str:
    role = "title" if entity in TITLED else "name"
    return f"{role}_{language}" if language == "en" and role == "name" else role


def _entity_of(prefix: list[str], vocab: set[str]) -> str | None:
    """The entity named by the words before a role word, if they name one."""
    ws = [w for w in prefix if w not in _QUALIFIERS]
    for i in range(len(ws)):
        cand = "_".join(ws[i:])
        cand = ALIASES.get(cand, cand)
        if cand in vocab:
            return cand
        sing = ALIASES.get(singular(cand), singular(cand))
        if sing in vocab:
            return sing
    return None


def infer_slot(slot: SlotInfo, platform: str, entity: str, vocab: set[str], search_tool: bool) -> tuple[str, str, str]:
    """(type, source, evidence) of one slot from its name, description, schema and observed values."""
    ws = words(slot.name)
    desc = slot.description or ""
    jt = slot.json_type
    pattern = _pattern(slot.schema)
    if slot.schema.get("format") in ("date", "date-time") or "\\d{4}-" in pattern:
        return "date", "schema", f"format/pattern {slot.schema.get('format') or pattern}"
    if jt == "boolean":
        return "boolean", "schema", "boolean"
    if not ws:
        return UNKNOWN, "fallback", "no name words"
    lang = None
    if len(ws) >= 2 and ws[-1] in ("en", "ko", "eng", "kor"):
        lang = "en" if ws[-1] in ("en", "eng") else None
        ws = ws[:-1]
    core = [w for w in ws if not w.isdigit()] or ws
    if slot.kind == "param" and _json_type(slot.schema) == "array":  # names: string[] takes names
        core = [*core[:-1], singular(core[-1])]
    last = core[-1]
    # 1. standard code words (iata, icao, lid, tailnum)
    if last in _STANDARD_WORDS:
        std_ent = _entity_of(core[:-1], vocab) or ("aircraft" if last == "tailnum" else "airport")
        return str(TypeRef(std_ent, "code", f"std:{_STANDARD_WORDS[last]}")), "name", f"{last} in the name"
    # 2. id / code words
    if last in _ID_WORDS and len(core) >= 2 or (last in ("id", "cd", "code") and len(core) == 1):
        named = _entity_of(core[:-1], vocab) if len(core) >= 2 else entity
        code_ent = named or ALIASES.get("_".join(core[:-1]), "_".join(core[:-1]))
        std = _standard_in(desc)
        role = _ID_WORDS[last]
        if std and role == "code":
            return str(TypeRef(code_ent, "code", f"std:{std}")), "description", f"{std} in the description"
        return str(TypeRef(code_ent, role, platform)), "name", f"{last} in the name"
    # 3. display names and titles
    if last in _NAME_WORDS:
        prefix = core[:-1]
        owner = _entity_of(prefix, vocab)
        if owner is None and prefix and "_".join(prefix) == entity:
            owner = entity  # describe_table(table_name): the name of the tool's own entity, not an attribute
        if owner is None and prefix:
            return str(TypeRef(entity, "_".join(prefix) + "_name")), "name", "an attribute name of the record"
        name_ent = owner or entity
        src = "search" if search_tool and slot.kind == "param" and not prefix else "name"
        return str(TypeRef(name_ent, _display(name_ent, lang))), src, f"{last} of {name_ent}"
    # 3b. the kind of a named entity's record (entityType, relation_kind): what sort of that entity it is
    if last in _KIND_WORDS and len(core) >= 2:
        owner = _entity_of(core[:-1], vocab)
        if owner is not None:
            return str(TypeRef(owner, "type")), "name", f"{last} of {owner}"
    # 4. scalar kinds
    if last in _SCALAR_WORDS:
        kind = _SCALAR_WORDS[last]
        if kind == "date" and jt in ("integer", "number") and last == "day":
            return f"measure.{'_'.join(core)}", "name", "a day number"
        if kind == "count" and jt not in ("integer", "number"):
            pass
        else:
            return kind, "name", f"{last} in the name"
    # 5. an entity word alone (carrier, origin, country, city, tz, ...)
    ent = _entity_of(core, vocab) if len(core) <= 2 else None
    if re.search(r"comma-separated|separated by commas|list of", desc.lower()):
        return UNKNOWN, "description", "a list of values in one string"
    if ent is not None and jt in ("string", "integer") and not (jt == "integer" and last.endswith("s")):
        std = _standard_in(desc)
        if std:
            return str(TypeRef(ent, "code", f"std:{std}")), "description", f"{std} in the description"
        if _says_id(desc):
            return str(TypeRef(ent, "id", platform)), "description", "an id by its description"
        if _says_code(desc) and not _says_name(desc):
            return str(TypeRef(ent, "code", platform)), "description", "a code by its description"
        if _says_name(desc) and not _says_code(desc):
            return str(TypeRef(ent, _display(ent, lang))), "description", "a name by its description"
        cl = _code_like(slot.values or _described_values(desc))
        if cl is True:
            return str(TypeRef(ent, "code", platform)), "values", "code-like observed values"
        if cl is False or jt == "string":
            return (
                str(TypeRef(ent, _display(ent, lang))),
                "values" if cl is False else "fallback",
                ("name-like observed values" if cl is False else "a string of an entity"),
            )
    # 6. search texts: what the tool searches
    if last in _SEARCH_WORDS and slot.kind == "param":
        return str(TypeRef(entity, _display(entity, lang))), "search", f"searches {entity}"
    # 7. numbers: counts (plural nouns) and measures
    if jt in ("integer", "number"):
        if jt == "integer" and (last.endswith("s") or last in ("count", "size")) and last not in ("status",):
            return "count", "name", f"a number of {last}"
        if slot.values and all(isinstance(v, str) and _DATE.match(v) for v in slot.values):
            return "date", "values", "dates observed"
        return f"measure.{'_'.join(w for w in ws if w not in ('min', 'max'))}", "fallback", "a number"
    if slot.values and all(isinstance(v, str) and _DATE.match(v.strip()) for v in slot.values):
        return "date", "values", "ISO dates observed"
    said = _NAME_OF.search(desc.lower())  # "The name of the entity where the relation starts"
    if said and jt == "string":
        ent = _entity_of([said.group(1)], vocab)
        if ent is not None:
            return str(TypeRef(ent, _display(ent, lang))), "description", f"the name of {ent} by its description"
    return UNKNOWN, "fallback", "nothing says what it is"


def _slot_infos(spec: ToolSpec, values: Mapping[tuple[str, str, str], list[Any]]) -> list[SlotInfo]:
    tid = spec.tool_id
    out = []
    for p in spec.semantic_params():
        if p == spec.generic_params.key:
            continue
        schema = spec.params.get(p, {})
        jt = _json_type(schema)
        if jt == "array" and isinstance(schema.get("items"), Mapping):
            jt = _json_type(schema["items"])
        seen = list(values.get((tid, "param", p), []))
        for v in [*(schema.get("examples") or []), schema.get("example"), *(schema.get("enum") or [])]:
            if isinstance(v, str | int | float) and not isinstance(v, bool) and v not in seen:
                seen.append(v)
        out.append(SlotInfo(tid, "param", p, jt, str(schema.get("description") or ""), schema, seen))
    for f, of in spec.output_fields.items():
        schema = {"format": of.format} if of.format else {}
        out.append(SlotInfo(tid, "field", f, of.type, of.description, schema, values.get((tid, "field", f), [])))
    return out


def typed_tools(specs: Mapping[str, ToolSpec]) -> list[ToolSpec]:
    """Tools whose slots carry types: all but key-acquisition tools."""
    return [s for _, s in sorted(specs.items()) if s.key_acquisition is None]


# ------------------------------------------------------------------------------------ observations


def _norm(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return re.sub(r"\s+", "", str(v)).casefold()


def observed_values(
    probes: Mapping[str, Mapping[str, Any]], specs: Mapping[str, ToolSpec]
) -> dict[tuple[str, str, str], list[Any]]:
    """(tool id, 'param'|'field', name) → distinct scalar values seen in successful probes."""
    by_name = {(s.domain, s.platform, s.name): s for s in specs.values()}
    out: dict[tuple[str, str, str], list[Any]] = {}

    def keep(key: tuple[str, str, str], v: Any) -> None:
        if isinstance(v, dict | list) or v is None or (isinstance(v, str) and (not v.strip() or v == "<KEY>")):
            return
        bucket = out.setdefault(key, [])
        if v not in bucket and len(bucket) < 30:
            bucket.append(v)

    for d, pv in sorted(probes.items()):
        for r in pv.get("rows") or []:
            spec = by_name.get((d, r.get("platform"), r.get("tool")))
            if spec is None or not str(r.get("outcome", "")).endswith("success") or not r.get("record_count"):
                continue
            for p, v in (r.get("args") or {}).items():
                keep((spec.tool_id, "param", p), v)
            for f, vs in (r.get("sample_values") or {}).items():
                for v in vs:
                    keep((spec.tool_id, "field", f), v)
    return out


def code_name_pairs(
    probes: Mapping[str, Mapping[str, Any]],
    specs: Mapping[str, ToolSpec],
    types: Mapping[tuple[str, str, str], TypeRef],
    parents: Mapping[str, str],
) -> dict[tuple[str, str, str], set[tuple[str, str]]]:
    """(entity family, role, platform) → observed (code, display name) pairs.

    From real records (a probe's first record) holding a code and a display name of one entity,
    and from calls whose code argument names one entity in every record (one sampled name)."""
    by_name = {(s.domain, s.platform, s.name): s for s in specs.values()}
    out: dict[tuple[str, str, str], set[tuple[str, str]]] = {}

    def add(t: TypeRef, platform: str, code: Any, name: Any) -> None:
        if t.entity is None or code in (None, "") or name in (None, "") or isinstance(code, dict | list):
            return
        key = (root(t.entity, parents), t.role, platform)
        out.setdefault(key, set()).add((_norm(code), _norm(name)))

    for d, pv in sorted(probes.items()):
        for r in pv.get("rows") or []:
            spec = by_name.get((d, r.get("platform"), r.get("tool")))
            if spec is None or not str(r.get("outcome", "")).endswith("success") or not r.get("record_count"):
                continue
            tid = spec.tool_id
            names_in_record = {
                types[(tid, "field", f)].entity: f
                for f in spec.output_fields
                if (tid, "field", f) in types and types[(tid, "field", f)].role in DISPLAY_ROLES[:2]
            }
            rec = r.get("first_record") or {}
            for f, v in rec.items():
                t = types.get((tid, "field", f))
                if t is not None and t.is_code and t.system == spec.platform and t.entity in names_in_record:
                    add(t, spec.platform, v, rec.get(names_in_record[t.entity]))
            samples = r.get("sample_values") or {}
            for p, v in (r.get("args") or {}).items():
                t = types.get((tid, "param", p))
                if t is None or not t.is_code or t.system != spec.platform or t.entity not in names_in_record:
                    continue
                named = samples.get(names_in_record[t.entity]) or []
                echoed = samples.get(p) or []  # the argument echoed in the records, if it is
                # the argument filters to one entity: every record names the same one
                if len(named) == 1 and len(echoed) <= 1:
                    add(t, spec.platform, v, named[0])
    return out


@dataclass
class Comparison:
    """Observed code → name pairs of two platforms' systems of one entity family."""

    family: str
    role: str
    a: str
    b: str
    agreements: int
    conflicts: int
    examples: list[str]

    @property
    def verdict(self) -> str:
        if self.conflicts:
            return "distinct"
        return "same" if self.agreements else "no_evidence"


def compare_pairs(
    family: str, role: str, a: str, pa: set[tuple[str, str]], b: str, pb: set[tuple[str, str]]
) -> Comparison:
    """Agreements and conflicts of two platforms' pairs: by code (one code, two names) and by name
    (a name unique on both sides with two codes)."""
    ca: dict[str, set[str]] = {}
    cb: dict[str, set[str]] = {}
    na: dict[str, set[str]] = {}
    nb: dict[str, set[str]] = {}
    for c, n in pa:
        ca.setdefault(c, set()).add(n)
        na.setdefault(n, set()).add(c)
    for c, n in pb:
        cb.setdefault(c, set()).add(n)
        nb.setdefault(n, set()).add(c)
    agree: set[tuple[str, str]] = set()
    conflicts: list[str] = []
    for c in sorted(ca.keys() & cb.keys()):
        if ca[c] & cb[c]:
            agree.update((c, n) for n in ca[c] & cb[c])
        else:
            conflicts.append(f"{c}: {a} {sorted(ca[c])[0]} vs {b} {sorted(cb[c])[0]}")
    for n in sorted(na.keys() & nb.keys()):
        if len(na[n]) == 1 and len(nb[n]) == 1:
            (x,), (y,) = na[n], nb[n]
            if x == y:
                agree.add((x, n))
            else:
                conflicts.append(f"{n}: {a} {x} vs {b} {y}")
    examples = conflicts[:3] + [f"{c} = {n}" for c, n in sorted(agree)[:3]]
    return Comparison(family, role, a, b, len(agree), len(conflicts), examples)


# ------------------------------------------------------------------------------------ code systems


class _Systems:
    """Union-find over code-system keys (family, role, system) with cannot-link pairs."""

    def __init__(self) -> None:
        self.parent: dict[tuple[str, str, str], tuple[str, str, str]] = {}
        self.cannot: set[frozenset[tuple[str, str, str]]] = set()
        self.log: list[dict[str, Any]] = []

    def find(self, k: tuple[str, str, str]) -> tuple[str, str, str]:
        self.parent.setdefault(k, k)
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    def members(self, k: tuple[str, str, str]) -> list[tuple[str, str, str]]:
        r = self.find(k)
        return sorted(x for x in list(self.parent) if self.find(x) == r)

    def blocked(self, a: tuple[str, str, str], b: tuple[str, str, str]) -> str | None:
        ma, mb = self.members(a), self.members(b)
        for x in ma:
            for y in mb:
                if frozenset((x, y)) in self.cannot:
                    return f"{x[2]} and {y[2]} are distinct"
        stds = {x[2] for x in ma + mb if x[2].startswith("std:")}
        if len(stds) > 1:
            return f"two standards ({', '.join(sorted(stds))})"
        return None

    def union(self, a: tuple[str, str, str], b: tuple[str, str, str], why: str) -> bool:
        if a[:2] != b[:2]:
            self.log.append({"a": a, "b": b, "why": why, "merged": False, "blocked": "different entity or role"})
            return False
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        block = self.blocked(a, b)
        self.log.append({"a": a, "b": b, "why": why, "merged": block is None, "blocked": block})
        if block is not None:
            return False
        keep, other = sorted((ra, rb), key=_rank)
        self.parent[other] = keep
        return True

    def canonical(self, k: tuple[str, str, str]) -> str:
        return self.find(k)[2]


def _rank(k: tuple[str, str, str]) -> tuple[int, str]:
    return (0 if k[2].startswith("std:") else 1, k[2])


# a tool named in prose: an identifier with an underscore or an inner capital (search_tracks, getSidoList)
_TOOL_MENTION = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b")


def _mentions(
    text: str, tools_by_name: Mapping[str, list[ToolSpec]], titles: Mapping[str, list[ToolSpec]]
) -> list[ToolSpec]:
    out: list[ToolSpec] = []
    for w in _TOOL_MENTION.findall(text or ""):
        for s in tools_by_name.get(w, []):
            if s not in out:
                out.append(s)
    for title, specs in titles.items():
        if title and title in (text or ""):
            out += [s for s in specs if s not in out]
    return out


def _title(spec: ToolSpec) -> str:
    first = re.split(r"[.。]\s", spec.description or "", maxsplit=1)[0].strip()
    return first if 2 <= len(first) <= 40 else ""


# ------------------------------------------------------------------------------------ the whole inference


@dataclass
class Typing:
    type: str
    source: str
    evidence: str


@dataclass
class Inference:
    """Value types of every slot of the given tools, the code systems and their evidence."""

    slots: dict[tuple[str, str, str], Typing]
    entities: dict[str, str]
    systems: list[dict[str, Any]]
    comparisons: list[Comparison]
    merges: list[dict[str, Any]]
    parents: dict[str, str]
    overrides_applied: list[str]
    # tool id → sorted [(kind, name, type)]: built on first use, so `tool_types` over every tool is
    # linear in the slots (a scan of every slot per tool was quadratic: minutes at 10k tools)
    _by_tool: dict[str, list[tuple[str, str, str]]] | None = field(default=None, repr=False, compare=False)

    def tool_types(self, tid: str) -> dict[str, Any]:
        if self._by_tool is None:  # slots are complete when an Inference is built
            index: dict[str, list[tuple[str, str, str]]] = {}
            for (t_id, k, n), t in sorted(self.slots.items()):
                index.setdefault(t_id, []).append((k, n, t.type))
            self._by_tool = index
        slots = self._by_tool.get(tid, [])
        params = {n: typ for k, n, typ in slots if k == "param"}
        fields = {n: typ for k, n, typ in slots if k == "field"}
        return {"entity": self.entities.get(tid), "params": params, "fields": fields}


SlotKey = tuple[str, str, str]  # (tool id, 'param' | 'field', name)
SystemKey = tuple[str, str, str]  # (entity family, role, system)


def _link_groups(systems: _Systems, groups: list[list[str]], parents: Mapping[str, str], why: str | None) -> None:
    """Override groups: `why` None adds cannot-links (distinct), else merges (equal)."""
    for group in groups:
        keys = [k for k in (_node(TypeRef.parse(t), parents) for t in group) if k is not None]
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                if why is None:
                    systems.cannot.add(frozenset((a, b)))
                else:
                    systems.union(a, b, why)


def _compare_platforms(pairs: Mapping[SystemKey, set[tuple[str, str]]]) -> list[Comparison]:
    keys = sorted(pairs)
    out = []
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            if a[:2] == b[:2] and a[2] != b[2]:
                out.append(compare_pairs(a[0], a[1], a[2], pairs[a], b[2], pairs[b]))
    return out


def _same_named_links(
    systems: _Systems, refs: Mapping[SlotKey, TypeRef], specs: Mapping[str, ToolSpec], parents: Mapping[str, str]
) -> None:
    """One platform's slots of one name and entity family share one system (a standard that one of
    them names becomes the platform's: `carrier` documented as an IATA code once)."""
    by_name: dict[tuple[str, str, str, str], set[SystemKey]] = {}
    for (tid, _kind, name), ref in refs.items():
        key = _node(ref, parents)
        if key is not None:
            by_name.setdefault((specs[tid].platform, name, key[0], key[1]), set()).add(key)
    for (platform, name, _f, _r), keys in sorted(by_name.items()):
        ordered = sorted(keys)
        for other in ordered[1:]:
            systems.union(ordered[0], other, f"{platform}: slots named {name!r}")


def _documented_links(
    systems: _Systems,
    refs: Mapping[SlotKey, TypeRef],
    specs: Mapping[str, ToolSpec],
    tools: Sequence[ToolSpec],
    parents: Mapping[str, str],
) -> None:
    """A slot whose description names another tool ("from search_tracks", "use with get_plane")
    shares its system with that tool's slot of the same name (else of the same entity)."""
    by_tool_name: dict[str, list[ToolSpec]] = {}
    titles: dict[str, list[ToolSpec]] = {}
    for spec in tools:
        by_tool_name.setdefault(spec.name, []).append(spec)
        if _title(spec):
            titles.setdefault(_title(spec), []).append(spec)
    for (tid, kind, name), ref in sorted(refs.items()):
        key = _node(ref, parents)
        if key is None:
            continue
        spec = specs[tid]
        text = str(
            spec.params.get(name, {}).get("description", "")
            if kind == "param"
            else spec.output_fields[name].description
        )
        mentioned = [m for m in _mentions(text, by_tool_name, titles) if m.tool_id != tid]
        own_platform = any(m.platform == spec.platform for m in mentioned)
        for m in mentioned:
            if m.platform != spec.platform and own_platform and _title(m) and _title(m) in text:
                continue  # a title found on the own platform first (titles repeat across platforms)
            other = "field" if kind == "param" else "param"
            names = [name, *(x for x in (m.output_fields if other == "field" else m.params) if x != name)]
            for n in names:
                cref = refs.get((m.tool_id, other, n))
                ckey = _node(cref, parents) if cref is not None else None
                if cref is not None and ckey is not None and ckey[:2] == key[:2] and cref.entity == ref.entity:
                    systems.union(key, ckey, f"{spec.platform}/{spec.name}.{name} documents {m.platform}/{m.name}")
                    break


def infer_types(
    specs: Mapping[str, ToolSpec],
    probes: Mapping[str, Mapping[str, Any]],
    overrides: Overrides | None = None,
    *,
    min_agreements: int = 1,
) -> Inference:
    """Value types of every slot of `specs` (all domains: code systems are compared across them)."""
    ov = overrides or Overrides()
    check_overrides(ov, specs)
    parents = {**PARENTS, **ov.parents}
    tools = typed_tools(specs)
    vocab = entity_vocabulary(tools) | set(parents) | set(parents.values())
    values = observed_values(probes, specs)
    entities = {s.tool_id: tool_entity(s, vocab) for s in tools}
    raw: dict[SlotKey, Typing] = {}
    applied: list[str] = []
    for spec in tools:
        search = words(spec.name)[:1] in (["search"], ["find"]) or "contain" in spec.description.lower()
        for info in _slot_infos(spec, values):
            key = (info.tool_id, info.kind, info.name)
            hit = override_for(ov, spec, info.kind, info.name)
            if hit is not None:
                raw[key] = Typing(hit[0], "override", f"{ov.source}: {hit[1]}")
                applied.append(hit[1])
                continue
            raw[key] = Typing(*infer_slot(info, spec.platform, entities[spec.tool_id], vocab, search))
    refs = {k: TypeRef.parse(v.type) for k, v in raw.items()}
    systems = _Systems()
    for ref in refs.values():
        if (node := _node(ref, parents)) is not None:
            systems.find(node)
    # cannot-links first (reviewed, then conflicting observed pairs), then merges by strength
    _link_groups(systems, ov.distinct, parents, None)
    comparisons = _compare_platforms(code_name_pairs(probes, specs, refs, parents))
    for c in comparisons:
        if c.verdict == "distinct":
            systems.cannot.add(frozenset(((c.family, c.role, c.a), (c.family, c.role, c.b))))
    _link_groups(systems, ov.equal, parents, f"override {ov.source}")
    _same_named_links(systems, refs, specs, parents)
    _documented_links(systems, refs, specs, tools, parents)
    for c in comparisons:
        if c.verdict == "same" and c.agreements >= min_agreements:
            systems.union((c.family, c.role, c.a), (c.family, c.role, c.b), f"{c.agreements} agreeing code-name pairs")
    slots: dict[SlotKey, Typing] = {}
    for skey, typing in raw.items():
        ref = refs[skey]
        node = _node(ref, parents)
        if node is not None:
            ref = TypeRef(ref.entity, ref.role, systems.canonical(node))
        slots[skey] = Typing(str(ref), typing.source, typing.evidence)
    classes: dict[SystemKey, list[str]] = {}
    for k in list(systems.parent):
        classes.setdefault(systems.find(k), []).append(k[2])
    system_rows = [
        {
            "family": r[0],
            "role": r[1],
            "system": r[2].removeprefix("std:"),
            "members": sorted(m.removeprefix("std:") for m in ms),
        }
        for r, ms in sorted(classes.items())
    ]
    merges = [
        {
            "a": f"{m['a'][0]}.{m['a'][1]}@{m['a'][2]}",
            "b": f"{m['b'][0]}.{m['b'][1]}@{m['b'][2]}",
            "why": m["why"],
            "merged": m["merged"],
            "blocked": m["blocked"],
        }
        for m in systems.log
    ]
    return Inference(slots, entities, system_rows, comparisons, merges, parents, sorted(set(applied)))


# ------------------------------------------------------------------------------------ reading types


class ValueTypes:
    """The value types stages read: `value_type(tid, name)`, `param_type`, `field_type`, `accepts`.

    Built from tool_lexicon values (`from_lexicons`) or from the `value_types` section a graph
    value carries (`from_graph`); empty when neither has types (every lookup is None)."""

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | None = None, parents: Mapping[str, str] | None = None):
        self.tools: dict[str, Mapping[str, Any]] = dict(tools or {})
        self.parents: dict[str, str] = {**PARENTS, **(parents or {})}

    def __bool__(self) -> bool:
        return bool(self.tools)

    @classmethod
    def from_lexicons(cls, lexicons: Mapping[str, Mapping[str, Any]]) -> "ValueTypes":
        tools: dict[str, Mapping[str, Any]] = {}
        parents: dict[str, str] = {}
        for _, lex in sorted(lexicons.items()):
            vt = (lex or {}).get("value_types") or {}
            tools.update(vt.get("tools") or {})
            parents.update(vt.get("parents") or {})
        return cls(tools, parents)

    @classmethod
    def from_graph(cls, graph: Mapping[str, Any]) -> "ValueTypes":
        vt = graph.get("value_types") or {}
        return cls(vt.get("tools") or {}, vt.get("parents") or {})

    def section(self, tool_ids: Iterable[str]) -> dict[str, Any]:
        """The `value_types` section of a graph value for these tools."""
        return {"tools": {t: self.tools[t] for t in sorted(set(tool_ids)) if t in self.tools}, "parents": self.parents}

    def param_type(self, tid: str, name: str) -> str | None:
        return (self.tools.get(tid) or {}).get("params", {}).get(name)

    def field_type(self, tid: str, name: str) -> str | None:
        return (self.tools.get(tid) or {}).get("fields", {}).get(name)

    def value_type(self, tid: str, name: str, kind: SlotKind | None = None) -> str | None:
        """The type of input `name` of tool `tid` (kind 'param'), of its output field (kind 'field'),
        or without a kind the input's type, else the field's."""
        if kind == "param":
            return self.param_type(tid, name)
        if kind == "field":
            return self.field_type(tid, name)
        return self.param_type(tid, name) or self.field_type(tid, name)

    def accepts(self, param_type: str | None, value_type: str | None) -> TypeCheck | None:
        """'equal'/'subtype' when a value of `value_type` may fill a parameter of `param_type`,
        'mismatch' when not, None when a side is unknown (or not typed)."""
        if not param_type or not value_type or UNKNOWN in (param_type, value_type):
            return None
        if param_type == value_type:
            return "equal"
        p, v = TypeRef.parse(param_type), TypeRef.parse(value_type)
        if (
            p.entity is not None
            and v.entity is not None
            and p.role == v.role
            and p.system == v.system
            and p.entity in ancestors(v.entity, self.parents)[1:]
        ):
            return "subtype"
        return "mismatch"

    def entity(self, tid: str) -> str | None:
        """What the tool's records are (`track` for list_album_tracks), None when not typed."""
        return (self.tools.get(tid) or {}).get("entity")

    def names_own_records(self, tid: str, param: str) -> bool:
        """The input is a display name (name/title) of the very entity the tool returns: a search of
        artists by artist name, whose count is how many share that name (1 for a full name)."""
        t, own = self.param_type(tid, param), self.entity(tid)
        if not t or not own or t == UNKNOWN:
            return False
        ref = TypeRef.parse(t)
        return ref.entity == own and ref.role in ("name", "title")

    def same_type(self, tid_a: str, param_a: str, tid_b: str, param_b: str) -> bool:
        """Two inputs take the same values: both typed (not unknown) and equal (the SEM pairing)."""
        a, b = self.param_type(tid_a, param_a), self.param_type(tid_b, param_b)
        return bool(a and b and a == b and a != UNKNOWN)


def check_binding(
    types: ValueTypes,
    source_tid: str,
    source_field: str,
    target_tid: str,
    target_param: str,
    source_values: Sequence[Any] = (),
    target_values: Sequence[Any] = (),
) -> tuple[TypeCheck, str]:
    """May `source_field` of `source_tid` fill `target_param` of `target_tid`?  (check, reason)

    Both typed: the types agree (`ValueTypes.accepts`).  A side unknown: admitted only when the
    names agree and the values the source emits overlap the values the target is known to take
    (accepted in calls, echoed in its output, enum or examples)."""
    st, pt = types.field_type(source_tid, source_field), types.param_type(target_tid, target_param)
    verdict = types.accepts(pt, st)
    if verdict in ("equal", "subtype"):
        return verdict, f"{st} fills {pt}"
    if verdict == "mismatch":
        return "mismatch", f"{source_field} is {st}, {target_param} takes {pt}"
    if words(source_field) != words(target_param) and _squash(source_field) != _squash(target_param):
        return "unverified", f"type unknown ({st or 'untyped'} → {pt or 'untyped'}) and names differ"
    shared = {_norm(v) for v in source_values if not isinstance(v, dict | list)} & {
        _norm(v) for v in target_values if not isinstance(v, dict | list)
    }
    if shared:
        return "unknown_overlap", f"type unknown; same name and {len(shared)} shared observed value(s)"
    return "unverified", f"type unknown ({st or 'untyped'} → {pt or 'untyped'}); no observed value in common"


def _squash(name: str) -> str:
    return re.sub(r"[^0-9a-z가-힣]", "", name.rsplit(".", 1)[-1].lower())
