"""Realization of a trajectory as noun phrases that name every step of its golden path (pure).

A question is well posed only when a reader can compute its answer from the question alone:
every call the golden path takes is named, with the values it is sent.  A chain
``T₀ → T₁ → … → T_m`` is therefore realized as one nested noun phrase, built from the seed
outwards:

- the seed call's records: "the census statistics with stat type economy and year 2015"
  (every seed value and every documented default that shapes the result is stated);
- a process node picks among them: "the census statistic with the highest statistic value
  among …";
- a junction passes fields of the picked records to the next tool's parameters, and says which:
  "the districts whose province code is the province code of …" (the upstream *field* is named,
  so a flight's origin is "the origin airport code of the flight", never "the airport");
- the answer: "the number of …", "the total number of …" over several calls, or
  "the elevation of …".

Korean builds the same phrase with modifiers before the noun ("… 중 통계값이 가장 높은 센서스
통계의 시도 코드에 해당하는 시군구의 수").  COND, CMP and SEM questions are composed of the same
pieces.  Where a label is not a usable noun phrase (a sentence copied from a description, a
verb phrase, an identifier) or the chain is too long to read, `Unphraseable` is raised: the
trajectory is rejected rather than published with a question that does not say what it asks.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factory import prompts
from factory.synthesis.labels import field_label, param_label, tool_noun, words
from factory.tools.spec import ToolSpec

_THAT = "\x00that\x00"  # the placeholder of a compared value in a CMP arm's phrase
MAX_JUNCTIONS = 3  # a nested phrase over more hops is no longer readable
MAX_PHRASE_CHARS = {"en": 420, "ko": 260}

# a noun that still reads like a verb phrase, a label that reads like a sentence or an instruction
_VERB_START = re.compile(r"^(list|get|find|show|create|add|delete|update|set|return|remove)\b", re.IGNORECASE)
_BAD_EN = re.compile(r"\b(given|this|these|that|when|if)$|\bwhen\b|^only\b", re.IGNORECASE)
_BAD_KO = re.compile(r"(조회|검색|합니다|입니다|제한|발급|만\b|할\s)")
_IDENT = re.compile(r"[a-z][A-Z]|_")


class Unphraseable(Exception):
    """The trajectory cannot be stated clearly from the labels available (reason `unphraseable`)."""


def _josa(word: str, pair: str) -> str:
    return prompts.josa(word, pair)


# --------------------------------------------------------------------------- nouns


@dataclass(frozen=True)
class Noun:
    sing: str
    plural: str


_MASS = ("weather", "information", "data")
_UNCOUNTED = ("aircraft", "statistics", "weather", "facts", "information", "data", "series")


_PREP = re.compile(r"\s+(?=(from|of|in|with|at|for|near|to|by|on|within)\s)")


def _head(noun: str) -> tuple[str, str]:
    """('routes', ' from NYC'): the head of a noun phrase and what follows it."""
    parts = _PREP.split(noun, maxsplit=1)
    return (parts[0], noun[len(parts[0]) :]) if len(parts) > 1 else (noun, "")


def singular(noun: str) -> str:
    """'airports' → 'airport', 'countries' → 'country', 'routes from NYC' → 'route from NYC'; words that do not
    inflect stay (and non-Latin words)."""
    noun, tail = _head(noun)
    return _singular(noun) + tail


def plural(noun: str) -> str:
    noun, tail = _head(noun)
    return _plural(noun) + tail


def _singular(noun: str) -> str:
    head, _, last = noun.rpartition(" ")
    if not last.isascii():
        return noun
    if last.endswith(_UNCOUNTED) or not last.endswith("s") or last.endswith("ss"):
        return noun
    if last.endswith("ies"):
        last = last[:-3] + "y"
    elif last.endswith(("ches", "shes", "xes", "sses")):
        last = last[:-2]
    else:
        last = last[:-1]
    return f"{head} {last}".strip()


def _plural(noun: str) -> str:
    head, _, last = noun.rpartition(" ")
    if not last.isascii():
        return noun
    if last.endswith(_UNCOUNTED) or last.endswith("s") and not last.endswith("ss"):
        return noun
    if last.endswith("y") and last[-2:-1] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(("ch", "sh", "x", "ss")):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}".strip()


def entity(spec: ToolSpec, lang: str) -> Noun:
    """The entity a tool's records are: 'airports', '시군구' (Unphraseable when no noun phrase is left)."""
    raw = tool_noun(spec)
    if lang == "ko":
        n = re.sub(r"\s+\S+(으로|로)\s+.*$", "", raw).strip()  # '행정구역 이름으로 코드' → '행정구역'
        n = re.sub(r"\s*목록$", "", n)
        if not n or _BAD_KO.search(n) or _IDENT.search(n) or len(n.split()) > 4:
            raise Unphraseable(f"no Korean noun for {spec.name}: {raw!r}")
        return Noun(n, n)
    n = re.sub(r"^(all|one|the|an?)\s+", "", raw, flags=re.IGNORECASE)
    n = re.sub(r"^\w+'s\s+", "", n)  # "artist's albums" → 'albums' (the owner is named by the junction)
    about = re.search(r"\s+of\s+an?\s+(\w+)\b", n)
    if about and spec.records_path is None:  # a one-record lookup 'location facts of an airport' is about the airport
        n = about.group(1)
    n = re.sub(r"\s+(of|at|for|in)\s+(an?|the|this|one)\s+.*$", "", n)  # 'airports of a country' → 'airports'
    n = re.sub(r"\s+given$", "", n)
    if n.split()[-1:] and n.split()[-1].lower() in _MASS:  # 'hourly weather' is counted in records
        n += " records"
    if not n or _VERB_START.search(n) or _BAD_EN.search(n) or _IDENT.search(n) or len(n.split()) > 5:
        raise Unphraseable(f"no English noun for {spec.name}: {raw!r}")
    return Noun(singular(n), plural(n))


def usable(label: str, lang: str) -> str:
    """`label` when it reads as a noun phrase; Unphraseable otherwise."""
    bad = _BAD_KO if lang == "ko" else _BAD_EN
    if not label or bad.search(label) or _IDENT.search(label) or len(label.split()) > (5 if lang == "ko" else 7):
        raise Unphraseable(f"label {label!r} is not a noun phrase")
    return label


def _p(spec: ToolSpec, param: str, lang: str) -> str:
    """The input's label; when its description is no noun phrase (Petstore's orderId: 'ID of pet that
    needs to be fetched'), the words of its name ('order id')."""
    try:
        return usable(param_label(spec, param), lang)
    except Unphraseable:
        return usable(words(param), lang)


def _f(spec: ToolSpec, field: str, lang: str) -> str:
    return usable(field_label(spec, field), lang)


def _value(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _join(items: Sequence[str], lang: str) -> str:
    if lang == "ko":
        if len(items) <= 1:
            return "".join(items)
        return " ".join(_josa(x, "과/와") for x in items[:-1]) + " " + items[-1]
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# --------------------------------------------------------------------------- the pieces


def stated_defaults(spec: ToolSpec, sent: Mapping[str, Any]) -> dict[str, Any]:
    """Documented defaults of the tool's task parameters that the call did not send: they shape the result
    (a search radius, a result limit), so the question states them."""
    generic = spec.generic_params.names()
    return {
        p: s["default"]
        for p, s in spec.params.items()
        if "default" in s and p not in sent and p not in generic and s["default"] not in (None, "")
    }


def constraints(spec: ToolSpec, values: Sequence[tuple[str, Any]], lang: str) -> str:
    """'with stat type economy and year 2015' / '통계 유형이 economy이고 기준 연도가 2015인 ' (empty without values)."""
    if not values:
        return ""
    parts = []
    for p, v in values:
        sch = spec.params.get(p, {})
        label = _p(spec, p, lang)
        if sch.get("type") == "boolean" or isinstance(v, bool):
            if not v:
                raise Unphraseable(f"{spec.name}.{p}=false cannot be stated")
            parts.append(label)  # 'only airports that have an IATA code' reads as a condition of its own
            continue
        parts.append(f"{_josa(label, '이/가')} {_value(v)}" if lang == "ko" else f"{label} {_value(v)}")
    if lang == "ko":
        return "".join(f"{x}이고 " for x in parts[:-1]) + f"{parts[-1]}인 "
    return " with " + _join(parts, lang)


_SELECT = {
    "en": {
        "max": "the {sing} with the highest {f} among {ref}", "min": "the {sing} with the lowest {f} among {ref}",
        "ge": "the {plural} whose {f} is at least {t} among {ref}",
        "le": "the {plural} whose {f} is at most {t} among {ref}", "eq": "the {plural} whose {f} is {t} among {ref}",
        "date_after": "the {plural} whose {f} is after {t} among {ref}",
        "most_frequent": "the {plural} with the most common {f} among {ref}",
    },
    "ko": {
        "max": "{ref} 중 {fj} 가장 높은 {sing}", "min": "{ref} 중 {fj} 가장 낮은 {sing}",
        "ge": "{ref} 중 {fj} {t} 이상인 {sing}", "le": "{ref} 중 {fj} {t} 이하인 {sing}",
        "eq": "{ref} 중 {fj} {t}인 {sing}", "date_after": "{ref} 중 {fj} {t} 이후인 {sing}",
        "most_frequent": "{ref} 중 가장 흔한 {f}{suffix} 가진 {sing}",
    },
}  # fmt: skip
_MULTI = ("ge", "le", "eq", "date_after", "most_frequent")


@dataclass
class Ref:
    """A phrase naming some records: `text` ('the airport with IATA code OSN') and whether it names one."""

    text: str
    one: bool
    noun: Noun


def seed_ref(spec: ToolSpec, values: Sequence[tuple[str, Any]], sent: Mapping[str, Any], lang: str, one: bool) -> Ref:
    n = entity(spec, lang)
    defaults = [(p, v) for p, v in stated_defaults(spec, sent).items()]
    cons = constraints(spec, [*values, *defaults], lang)
    if lang == "ko":
        return Ref(f"{cons}{n.sing}", one, n)
    return Ref(f"the {n.sing if one else n.plural}{cons}", one, n)


def select(ref: Ref, node: Mapping[str, Any] | None, spec: ToolSpec, lang: str) -> Ref:
    """The records a process node keeps among `ref` (unchanged without a node)."""
    if not node:
        return ref
    op = node["operator"]
    f = _f(spec, node["field"], lang)
    text = _SELECT[lang][op].format(
        sing=ref.noun.sing,
        plural=ref.noun.plural,
        f=f,
        fj=_josa(f, "이/가"),
        t=_value(node.get("threshold")),
        ref=ref.text,
        suffix=_josa(f, "을/를")[len(f) :],
    )
    return Ref(text, op not in _MULTI, ref.noun)


def _own_key(up: "Ref", from_label: str) -> bool:
    """The field is the upstream record's own key ('IATA code' of an airport, '시도 코드' of a 시도), not a
    reference to another entity ('purchased track id' of an invoice line, 'country code' of an airport)."""
    words = set(re.findall(r"[\w/-]+", from_label.lower())) - _KEY_WORDS - set(up.noun.sing.lower().split())
    return not words


def same_entity(
    up: "Ref", from_label: str, from_fields: Sequence[str], spec: ToolSpec, to_params: Sequence[str]
) -> bool:
    """The next call looks the same entity up by its own key ('iata' of a nearby airport → airport_timezone(iata)):
    a one-record lookup (no records list) whose key parameter has the name of the upstream record's own key."""
    norm = [re.sub(r"[^a-z0-9]", "", x.lower()) for x in (*from_fields, *to_params)]
    k = len(from_fields)
    return spec.records_path is None and k == len(to_params) and norm[:k] == norm[k:] and _own_key(up, from_label)


_KEY_WORDS = {"code", "id", "identifier", "name", "number", "key", "iata", "icao", "faa", "two-character",
              "three-letter", "코드", "이름", "번호"}  # fmt: skip


def key_link(up: Ref, from_label: str, from_fields: Sequence[str], spec: ToolSpec, to_params: Sequence[str]) -> bool:
    """The upstream records' own key is sent to a listing under the same name ('iata' of an airport → the nearby
    airports of that airport; '시도 코드' of a 시도 → its 시군구): the listing belongs to the upstream entity."""
    norm = [re.sub(r"[^a-z0-9]", "", x.lower()) for x in (*from_fields, *to_params)]
    k = len(from_fields)
    return (
        spec.records_path is not None and k == len(to_params) == 1 and norm[:k] == norm[k:] and _own_key(up, from_label)
    )


def link(
    up: Ref, up_spec: ToolSpec, from_fields: Sequence[str], spec: ToolSpec, to_params: Sequence[str],
    values: Sequence[tuple[str, Any]], sent: Mapping[str, Any], lang: str,
) -> Ref:  # fmt: skip
    """The records of `spec` whose `to_params` are the `from_fields` of `up`."""
    n = entity(spec, lang)
    cons_vals = [*values, *stated_defaults(spec, sent).items()]
    fl = _join([_f(up_spec, f, lang) for f in from_fields], lang)
    if same_entity(up, fl, from_fields, spec, to_params) and not cons_vals:
        if lang == "ko":
            return Ref(up.text, up.one, n)
        text = up.text if up.one or up.text.startswith("each of ") else f"each of {up.text}"
        return Ref(text, up.one, n)
    pl = _join([_p(spec, p, lang) for p in to_params], lang)
    if key_link(up, fl, from_fields, spec, to_params):  # 'the nearby airports of the airport …', '… 시도의 시군구'
        cons = constraints(spec, cons_vals, lang)
        if lang == "ko":
            return Ref(f"{up.text}{'' if up.one else ' 각각'}의 {cons}{n.sing}", False, n)
        upt = up.text[len("each of ") :] if up.text.startswith("each of ") else up.text
        return Ref(f"the {n.plural}{cons} of {'' if up.one else 'any of '}{upt}", False, n)
    if lang == "ko":
        cons = constraints(spec, cons_vals, lang)
        each = " 각각" if not up.one else ""
        return Ref(f"{up.text}{each}의 {fl}에 해당하는 {cons}{n.sing}", False, n)
    cons = constraints(spec, cons_vals, lang)
    verb = "are" if len(to_params) > 1 else "is"
    of = "of" if up.one else "of any of"
    upt = up.text[len("each of ") :] if up.text.startswith("each of ") else up.text
    one = up.one and spec.records_path is None  # a lookup of one record for one upstream record
    return Ref(f"the {n.sing if one else n.plural}{cons} whose {pl} {verb} the {fl} {of} {upt}", one, n)


def ask(ref: Ref, spec: ToolSpec, what: Mapping[str, Any], total: bool, lang: str) -> str:
    """The answer phrase over the terminal records."""
    if what.get("ask") == "value":
        f = _f(spec, what["field"], lang)
        if lang == "ko":
            return f"{ref.text}의 {f}"
        return (
            f"the {f} of {ref.text}" if ref.one or ref.text.startswith("each of") else f"the {f} of each of {ref.text}"
        )
    if lang == "ko":
        return f"{ref.text}의 {'총 ' if total else ''}수"
    return f"the {'total ' if total else ''}number of {re.sub(r'^the ', '', _plural_ref(ref))}"


def _plural_ref(ref: Ref) -> str:
    t = ref.text
    if t.startswith("each of "):
        return t[len("each of ") :]
    if t.startswith(f"the {ref.noun.sing} ") and ref.noun.sing != ref.noun.plural:
        return f"the {ref.noun.plural} " + t[len(f"the {ref.noun.sing} ") :]
    return t


# --------------------------------------------------------------------------- whole trajectories


def _ends(j: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    return j["from"].split(".", 1)[1].split("+"), j["to"].split(".", 1)[1].split("+")


def _seeds_of(t: Mapping[str, Any], tid: str, skip: Sequence[str] = ()) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for s in t["seeds"]:
        if s["tool_id"] == tid and s["param"] not in skip and (s["param"], s["value"]) not in out:
            out.append((s["param"], s["value"]))
    return out


def _sent(t: Mapping[str, Any], tid: str) -> dict[str, Any]:
    """Every parameter any call of `tid` was sent (in the golden, pruned-away or counterfactual actions)."""
    out: dict[str, Any] = {}
    acts = [*t["golden_actions"], *(t.get("counterfactual_actions") or [])]
    acts += [a for p in t.get("alternative_paths") or [] for a in p.get("actions", [])]
    for a in acts:
        if a.get("tool_id") == tid:
            out.update(a.get("args") or {})
    return out


def chain_refs(
    t: Mapping[str, Any], specs: Mapping[str, ToolSpec], tids: Sequence[str], junctions: Sequence[Mapping[str, Any]],
    lang: str, start: Ref | None = None, seed_skip: Sequence[str] = (),
) -> Ref:  # fmt: skip
    """The phrase naming the terminal records of the chain `tids` (its seed phrase `start`, if given)."""
    if len(tids) != len(junctions) + 1:
        raise Unphraseable(f"{len(tids)} tools but {len(junctions)} junctions")
    if len(junctions) > MAX_JUNCTIONS:
        raise Unphraseable(f"{len(junctions)} hops are too many for one question")
    s0 = specs[tids[0]]
    first_one = bool(junctions) and junctions[0]["n"] == 1 and not junctions[0].get("process")
    ref = start or seed_ref(s0, _seeds_of(t, tids[0], seed_skip), _sent(t, tids[0]), lang, first_one)
    for k, j in enumerate(junctions):
        up_spec, spec = specs[tids[k]], specs[tids[k + 1]]
        ref = select(ref, j.get("process"), up_spec, lang)
        fields, params = _ends(j)
        ref = link(ref, up_spec, fields, spec, params, _seeds_of(t, tids[k + 1]), _sent(t, tids[k + 1]), lang)
    return ref


def _checked(text: str, lang: str) -> str:
    if len(text) > MAX_PHRASE_CHARS[lang]:
        raise Unphraseable(f"the phrase runs to {len(text)} characters")
    return text


def chain_description(
    t: Mapping[str, Any], specs: Mapping[str, ToolSpec], junctions: Sequence[Mapping[str, Any]], lang: str
) -> str:
    """The whole question of a chain as one noun phrase: 'the number of … of … with …'."""
    d = t["describe"]
    tids = list(d["chain"])
    ref = chain_refs(t, specs, tids, junctions, lang)
    total = bool(junctions) and junctions[-1]["width"] > 1 and d.get("ask") != "value"
    return _checked(ask(ref, specs[tids[-1]], d, total, lang), lang)


def cond_description(
    t: Mapping[str, Any], specs: Mapping[str, ToolSpec], junctions: Sequence[Mapping[str, Any]], lang: str
) -> tuple[str, str, str]:
    """(condition, then-phrase, else-phrase) of a COND: 'there are at least 5 …' / '… 5건 이상이면'."""
    d = t["describe"]
    cid, tid = d["cond_tool_id"], d["then_tool_id"]
    cs = specs[cid]
    base = seed_ref(cs, _seeds_of(t, cid), _sent(t, cid), lang, False)
    if lang == "ko":
        cond = f"{_josa(base.text, '이/가')} {_value(d['threshold'])}건 이상이면"
        those = Ref(f"그 {base.noun.sing}", False, base.noun)
    else:
        cond = f"there are at least {_value(d['threshold'])} {base.text[len('the ') :]}"
        those = Ref(f"those {base.noun.plural}", False, base.noun)
    then_ref = chain_refs(t, specs, [cid, tid], junctions[:1], lang, start=those)
    total = bool(junctions) and junctions[0]["width"] > 1
    then = ask(then_ref, specs[tid], {"ask": "count"}, total, lang)
    other = ask(those, cs, {"ask": "count"}, False, lang)
    if then == other:
        raise Unphraseable(f"both branches read {then!r}")
    return _checked(cond, lang), _checked(then, lang), other


def cmp_description(
    t: Mapping[str, Any], specs: Mapping[str, ToolSpec], junctions: Sequence[Mapping[str, Any]], lang: str
) -> tuple[str, str, list[str]]:
    """(what is counted, the compared parameter's label, the two labelled values) of a CMP."""
    d = t["describe"]
    tid, param = d["compare"]["tool_id"], d["compare"]["param"]
    spec = specs[tid]
    label = _p(spec, param, lang)
    values = [s["value"] for s in t["seeds"] if s["tool_id"] == tid and s["param"] == param]
    if len(values) != 2:
        raise Unphraseable(f"{len(values)} compared values of {param}")
    tids = [tid] + ([d["tool_id"]] if d["tool_id"] != tid or junctions else [])
    arm = junctions[: len(tids) - 1]
    start = None
    if arm:  # the compared value is sent to the first tool: its records are named 'with that <label>'
        s0 = specs[tid]
        others = _seeds_of(t, tid, [param])
        # 'the album with that artist id' only when every arm passes on one record (an artist of two albums
        # in the other arm makes it 'the albums'): the arms' junctions follow each other in `junctions`
        firsts = junctions[:: len(arm)]
        first_one = all(j["n"] == 1 and not j.get("process") for j in firsts)
        start = seed_ref(s0, [*others, (param, _THAT)], _sent(t, tid), lang, first_one)
        that = f"{_josa(label, '이/가')} 해당 값인" if lang == "ko" else f"that {label}"
        start = Ref(start.text.replace(f"{_josa(label, '이/가')} {_THAT}인", that).replace(f"{label} {_THAT}", that),
                    start.one, start.noun)  # fmt: skip
        if _THAT in start.text:
            raise Unphraseable(f"the compared {label!r} cannot be referred to")
    ref = chain_refs(t, specs, tids, arm, lang, start=start, seed_skip=[param])
    counted = ref.text if lang == "ko" else re.sub(r"^the\s+", "", _plural_ref(ref))
    return _checked(counted, lang), label, [_value(v) for v in values]


def sem_description(t: Mapping[str, Any], specs: Mapping[str, ToolSpec], lang: str) -> str:
    """Both parts of a SEM question, each with the shared value it is asked for."""
    d = t["describe"]
    shared = d["shared"]["value"]
    phrases, refs, fields = [], [], []
    for part in d["parts"]:
        tid = part["tool_id"]
        spec = specs[tid]
        sent = _sent(t, tid)
        values = _seeds_of(t, tid)
        if not any(v == shared for _, v in values):
            values = [(p, v) for p, v in sent.items() if v == shared and p in spec.params][:1] + values
        ref = seed_ref(spec, values, sent, lang, part.get("ask") == "value")
        phrases.append(ask(ref, spec, part, False, lang))
        refs.append(ref.text)
        fields.append(_f(spec, part["field"], lang) if part.get("ask") == "value" else None)
    if len(set(phrases)) < len(phrases):
        raise Unphraseable(f"the parts read the same: {phrases[0]!r}")
    if len(set(refs)) == 1 and all(fields) and len(set(fields)) == len(fields):  # two facts of one entity
        f = [x for x in fields if x]
        if lang == "ko":
            return _checked(f"{refs[0]}의 {_join(f, lang)}", lang)
        return _checked(f"the {' and the '.join(f)} of {refs[0]}", lang)
    return _checked(_join(phrases, lang), lang)


def default_values(t: Mapping[str, Any], specs: Mapping[str, ToolSpec]) -> list[Any]:
    """The documented defaults a question of `t` may state (`stated_defaults` of every tool it calls)."""
    out: list[Any] = []
    d = t["describe"]
    acts = [*t["golden_actions"], *(t.get("counterfactual_actions") or [])]
    tids = {a.get("tool_id") for a in acts} | set(d.get("chain") or [])
    tids |= {d.get(k) for k in ("cond_tool_id", "then_tool_id", "tool_id")} | {p["tool_id"] for p in d.get("parts", [])}
    tids |= {(d.get("compare") or {}).get("tool_id")}
    for tid in sorted(x for x in tids if x):
        spec = specs.get(tid) if tid else None
        if spec is not None:
            out += [v for v in stated_defaults(spec, _sent(t, tid)).values() if v not in out]
    return out
