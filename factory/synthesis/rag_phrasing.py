"""Realization of multi-source (API+RAG) questions and answers (pure; issue 17 items 4-5).

A multi-source question is asked the way a person asks it: about an entity, never about a tool, a field or a
document's wording. Its parts come from two places:

- the API hops are named by the tool frames (`factory.frames`, the domain's reviewed `lexicon/<domain>.yaml`), through
  the same references the API-only questions use (`factory.synthesis.phrasing`): "the track 'Inject The Venom'", "the
  album of the track 'Inject The Venom'", "기장읍이 속한 시군구";
- the passage hops are named by the corpus's reviewed **passage lexicon** (`lexicon/passages/<domain>.yaml`): the forms
  of its document titles (what record a document is about, by value type, and which other title parts a question
  states: "on 3 January 2013", "2015년") and its facts, one regular expression over one sentence each: a number asked
  for ("What was the strongest sustained wind at {doc} {date}, in mph?", with its answer sentence), or a name an API
  takes ("the longest track on {doc}", of value type ``track.title``).

A document form may also say which entities' records lead to it by a hop every reader makes without a tool
(`known_from`: a 구 → its 시도, reason code ``known_hop``), how an answer names what such a hop found (`found`: '청운동이
있는 종로구'), words read from a table of the domain's tool lexicon by a title part (`tables`: the 시도's '구' or '시·군'),
and patterns over the whole passage whose groups the facts may use (`context`: the census years a bulletin compares).

A number or a name of a passage that no reviewed fact covers is never asked: the chain is dropped with reason
``unphraseable`` and one of `UNPHRASEABLE_CODES`, as API-only chains a person cannot say are.
"""

import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from factory import prompts
from factory.synthesis import answers
from factory.synthesis import phrasing as ph

UNPHRASEABLE_CODES = {
    "document": "the gold document's title has no reviewed form, or a title part is neither stated nor implied",
    "passage_fact": "no reviewed fact of the passage lexicon asks for a number the passage states",
    "value_fact": "no reviewed fact names a value of the passage that an API parameter takes",
    "no_lexicon": "the domain has no passage lexicon (lexicon/passages/<domain>.yaml)",
    "reference": "the API hop has no noun phrase (phrasing.Unphraseable: label, action, ...)",
    "template": "a template names a part the document or fact does not give",
    "known_hop": "the API hop to the document is one a person makes without a tool (종로구 → 서울특별시): the question "
    "would be a riddle whose bridge every reader knows",
}
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]  # fmt: skip
_CURRENCIES = {"usd", "eur", "gbp", "krw", "jpy"}
_SLOT = re.compile(r"\{(\w+)(?::(\w+))?\}")


class PassageLexiconError(ValueError):
    """A passage lexicon file that cannot be used (the message names the file and the entry)."""


class RagUnphraseable(Exception):
    """The multi-source question cannot be said naturally; `code` is one of `UNPHRASEABLE_CODES`."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class DocumentForm:
    kind: str
    title: re.Pattern[str]
    subject: tuple[str, ...]  # value types of the record the document is about
    name: Mapping[str, str]  # lang → the document named by itself ('the album {subject} by {artist}')
    say: Mapping[str, Mapping[str, str]]  # title part → lang → how a question states it ('on {v:long_date}')
    # lang → the reference over an API field ('{up_iga} 속한 시도'); the search for a document of this form about a
    # value ('{subject} 인구주택총조사 결과')
    hop: Mapping[str, str] = field(default_factory=dict)
    query: str = "{subject}"
    # entities whose records a reader maps to this document's subject without a tool (a 시군구 → its 시도): a document
    # reached from such a record is not asked through it (RagUnphraseable 'known_hop')
    known_from: tuple[str, ...] = ()
    # lang → how an answer names the document reached over `hop`, with what the hop found ('{up_iga} 있는 {subject}':
    # '청운동이 있는 종로구'); without it the answer repeats the question's phrase
    found: Mapping[str, str] = field(default_factory=dict)
    # patterns over the whole passage whose named groups every fact of the document may use (the years a 시군구
    # bulletin covers, '(2010~2020년)': a change is asked between two stated years, not 'since 2010')
    context: tuple[re.Pattern[str], ...] = ()

    def context_slots(self, sentences: Sequence[str]) -> dict[str, str]:
        text = "\n".join(sentences)
        out: dict[str, str] = {}
        for pattern in self.context:
            m = pattern.search(text)
            if m:
                out.update({k: v for k, v in m.groupdict().items() if v is not None})
        return out

    # slot → (title part, {value: {lang: word}}): a word chosen by a title part from a table of the domain's tool
    # lexicon ('{districts}': 구 for 서울특별시, 시·군 for 전라남도; lexicon/korea.yaml `tables`)
    tables: Mapping[str, tuple[str, Mapping[str, Mapping[str, str]]]] = field(default_factory=dict)

    def table_slots(self, parts: Mapping[str, str], lang: str) -> dict[str, str]:
        """The table words of a document with these title parts (a slot whose row has no word is left out: a
        template naming it raises RagUnphraseable('template'))."""
        out: dict[str, str] = {}
        for slot, (part, words_) in self.tables.items():
            word = (words_.get(str(parts.get(part) or "")) or {}).get(lang)
            if word:
                out[slot] = word
        return out


@dataclass(frozen=True)
class Fact:
    kinds: tuple[str, ...]
    match: re.Pattern[str]
    ask: Mapping[str, str]
    answer: Mapping[str, str]
    type: str = ""  # value type of group `v` (a name fact)
    phrase: Mapping[str, str] = field(default_factory=dict)
    # the domain's APIs can compute the fact too (the corpus is rendered from data they serve): a policy that forbids
    # the documents leaves a question about it answerable
    derivable: bool = False
    # only for documents whose subject (the title's `subject` part) matches: a wording that holds for some subjects
    # ('시군구(일반구 단위)' says something for 경기도, nothing for 서울특별시, blind read s10)
    subject: re.Pattern[str] | None = None
    # {group: word}: the number is negative when that group of the match reads that word ('0.6% 감소' → -0.6): the
    # typed answer carries the direction a question asks for ('늘었는지 줄었는지'), not only the answer's sentence (blind
    # read s11 r2ko #6: gold 0.6 for a fall of 0.58%)
    negative: Mapping[str, str] = field(default_factory=dict)
    # a regular expression over the named value (group `v`): only when it matches are the phrase's parenthetical
    # qualifiers said ('시·군·구(일반구 단위)'); otherwise both readings name the same record and the qualifier is dropped
    # (the least populous 시군구 of 경기도 is 연천군 whether or not 수원시's 구 are counted one by one)
    qualify_if: re.Pattern[str] | None = None
    # fields of the named record's API output that the sentence already states in other words ('the longest track is X
    # (5 min 44 s)': its milliseconds): never the answer of the API hop after it (the passage would give it)
    states: tuple[str, ...] = ()
    # the API platforms whose data the fact is computed from (a derivable fact; `derived_by: [chinook-store]`): no other
    # API can give it, so a policy forbidding the documents and these platforms leaves no permitted tool that can
    # (a refusal, factory/retrieval/policy.py), and a ban of one of them that the path does not use tests something
    derived_by: tuple[str, ...] = ()

    def applies(self, doc: "DocRef") -> bool:
        return self.subject is None or bool(self.subject.search(str(doc.parts.get("subject") or "")))

    @property
    def is_name(self) -> bool:
        return "v" in self.match.groupindex


@dataclass(frozen=True)
class PassageLexicon:
    documents: tuple[DocumentForm, ...]
    facts: tuple[Fact, ...]
    file: str = ""

    def queries(self, value_type: str | None, value: str) -> list[str]:
        """The searches for a document about `value` (of `value_type`): each form's `query` whose subject is that type
        (every form's when the type is unknown), in order, without repeats."""
        base = (value_type or "").split("@")[0]
        forms = [d for d in self.documents if not base or base in d.subject]
        return list(dict.fromkeys(d.query.replace("{subject}", value) for d in forms))

    def form_of(self, title: str) -> tuple[DocumentForm, dict[str, str]] | None:
        """The first document form whose title pattern matches `title`, with the title's parts."""
        for d in self.documents:
            m = d.title.match(title.strip())
            if m:
                return d, {k: v for k, v in m.groupdict().items() if v is not None}
        return None


def _lang_map(entry: Any, where: str) -> dict[str, str]:
    if entry is None:
        return {}
    if not isinstance(entry, Mapping) or not all(isinstance(v, str) for v in entry.values()):
        raise PassageLexiconError(f"{where}: expected {{lang: text}}, got {entry!r}")
    return {str(k): str(v) for k, v in entry.items()}


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise PassageLexiconError(f"{where}: expected true or false, got {value!r}")
    return value


def _regex(text: Any, where: str) -> re.Pattern[str]:
    try:
        return re.compile(str(text))
    except re.error as e:
        raise PassageLexiconError(f"{where}: {text!r} is no regular expression ({e})") from e


def tool_lexicon_tables(path: Path) -> dict[str, Any]:
    """The `tables` of the domain's tool lexicon beside the passage lexicon (lexicon/<domain>.yaml for
    lexicon/passages/<domain>.yaml); {} when there is none."""
    tool = path.parent.parent / path.name
    if not tool.is_file():
        return {}
    try:
        data = yaml.safe_load(tool.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise PassageLexiconError(f"tool lexicon {tool}: cannot be read ({e})") from e
    return dict(data.get("tables") or {}) if isinstance(data, Mapping) else {}


def _form_tables(entry: Any, tables: Mapping[str, Any], where: str) -> dict[str, tuple[str, dict[str, dict[str, str]]]]:
    from factory.frames import table_words

    out: dict[str, tuple[str, dict[str, dict[str, str]]]] = {}
    for slot, spec in (entry or {}).items():
        if not isinstance(spec, Mapping) or not {"table", "by"} <= set(spec):
            raise PassageLexiconError(f"{where}.tables.{slot}: expected {{table, by}}")
        rows = tables.get(str(spec["table"]))
        if rows is None:
            raise PassageLexiconError(f"{where}.tables.{slot}: the tool lexicon has no table {spec['table']!r}")
        langs = sorted({k for r in rows for k in r if k not in ("names", "codes")})
        by_name: dict[str, dict[str, str]] = {}
        for lang in langs:
            for name, word in table_words(rows, lang).items():
                by_name.setdefault(name, {})[lang] = word
        out[str(slot)] = (str(spec["by"]), by_name)
    return out


def load_passage_lexicon(path: str | Path, tables: Mapping[str, Any] | None = None) -> PassageLexicon:
    """Read and check a passage lexicon file (see the module docstring; `lexicon/passages/music.yaml` documents the
    keys). `tables`: the tool lexicon's tables a document form reads (default: those of lexicon/<domain>.yaml beside
    it). Raises PassageLexiconError naming the file and the entry."""
    p = Path(path)
    if tables is None:
        tables = tool_lexicon_tables(p)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise PassageLexiconError(f"passage lexicon {p}: cannot be read ({e})") from e
    if not isinstance(data, Mapping) or set(data) - {"documents", "facts"}:
        raise PassageLexiconError(f"passage lexicon {p}: expected only the keys documents, facts")
    docs: list[DocumentForm] = []
    for i, d in enumerate(data.get("documents") or []):
        where = f"passage lexicon {p}: documents[{i}]"
        if not isinstance(d, Mapping) or not {"kind", "title", "subject", "name"} <= set(d):
            raise PassageLexiconError(f"{where}: needs kind, title, subject and name")
        title = _regex(d["title"], where)
        if "subject" not in title.groupindex:
            raise PassageLexiconError(f"{where}: the title pattern has no group `subject`")
        say = {str(k): _lang_map(v, f"{where}.say.{k}") for k, v in (d.get("say") or {}).items()}
        for part in say:
            if part not in title.groupindex:
                raise PassageLexiconError(f"{where}: say names {part!r}, which the title pattern does not capture")
        subject = d["subject"]
        known = d.get("known_from") or []
        docs.append(DocumentForm(str(d["kind"]), title, tuple([subject] if isinstance(subject, str) else subject),
                                 _lang_map(d["name"], f"{where}.name"), say, _lang_map(d.get("hop"), f"{where}.hop"),
                                 str(d.get("query") or "{subject}"),
                                 known_from=tuple([known] if isinstance(known, str) else [str(k) for k in known]),
                                 tables=_form_tables(d.get("tables"), tables, where),
                                 found=_lang_map(d.get("found"), f"{where}.found"),
                                 context=tuple(_regex(c, f"{where}.context") for c in d.get("context") or [])))  # fmt: skip
        for slot, (part, _) in docs[-1].tables.items():
            if part not in title.groupindex:
                raise PassageLexiconError(
                    f"{where}: tables.{slot} reads {part!r}, which the title pattern does not capture"
                )
        if "{subject}" not in docs[-1].query:
            raise PassageLexiconError(f"{where}: query {docs[-1].query!r} does not name {{subject}}")
    kinds = {d.kind for d in docs}
    facts: list[Fact] = []
    for i, f in enumerate(data.get("facts") or []):
        where = f"passage lexicon {p}: facts[{i}]"
        if not isinstance(f, Mapping) or not {"in", "match"} <= set(f):
            raise PassageLexiconError(f"{where}: needs in and match")
        fin = tuple([f["in"]] if isinstance(f["in"], str) else f["in"])
        if set(fin) - kinds:
            raise PassageLexiconError(f"{where}: in names unknown document kinds {sorted(set(fin) - kinds)}")
        m = _regex(f["match"], where)
        fact = Fact(fin, m, _lang_map(f.get("ask"), f"{where}.ask"), _lang_map(f.get("answer"), f"{where}.answer"),
                    str(f.get("type") or ""), _lang_map(f.get("phrase"), f"{where}.phrase"),
                    _flag(f.get("derivable", False), f"{where}.derivable"),
                    _regex(f["subject"], f"{where}.subject") if f.get("subject") else None,
                    _lang_map(f.get("negative"), f"{where}.negative"),
                    _regex(f["qualify_if"], f"{where}.qualify_if") if f.get("qualify_if") else None,
                    tuple(str(x) for x in f.get("states") or []),
                    tuple(str(x) for x in f.get("derived_by") or []))  # fmt: skip
        if fact.derived_by and not fact.derivable:
            raise PassageLexiconError(f"{where}: derived_by names the platforms a derivable fact is computed from "
                                      "(set derivable: true)")  # fmt: skip
        for group in fact.negative:
            if group not in m.groupindex:
                raise PassageLexiconError(f"{where}: negative names {group!r}, which the match does not capture")
        if fact.states and not fact.is_name:
            raise PassageLexiconError(f"{where}: states is for a name fact (group v)")
        if fact.qualify_if is not None and not fact.is_name:
            raise PassageLexiconError(f"{where}: qualify_if is for a name fact (group v)")
        if ("n" in m.groupindex) == fact.is_name:
            raise PassageLexiconError(f"{where}: match needs exactly one of the groups `n` (a number) and `v` (a name)")
        if fact.is_name and not (fact.type and fact.phrase):
            raise PassageLexiconError(f"{where}: a name fact (group v) needs type and phrase")
        if not fact.is_name and not (fact.ask and fact.answer):
            raise PassageLexiconError(f"{where}: a number fact (group n) needs ask and answer")
        facts.append(fact)
    return PassageLexicon(tuple(docs), tuple(facts), str(p))


def passage_lexicon_file(project_dir: str | Path, domain: str) -> Path | None:
    path = Path(project_dir) / "lexicon" / "passages" / f"{domain}.yaml"
    return path if path.is_file() else None


# --------------------------------------------------------------------------- filling templates


def long_date(v: str) -> str:
    """'2013-01-03' → '3 January 2013' (anything else unchanged)."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", v.strip())
    if not m or not 1 <= int(m.group(2)) <= 12:
        return v
    return f"{int(m.group(3))} {_MONTHS[int(m.group(2)) - 1]} {m.group(1)}"


def fill(template: str, slots: Mapping[str, str], where: str = "") -> str:
    """`template` with {name} (and {name:long_date}, {name:tail}: the name's last syllable) replaced; {Name}: capitalized; {name_iga}/{name_eul}/{name_eun}:
    with the Korean particle; a slot it does not give raises RagUnphraseable('template')."""

    def one(m: re.Match[str]) -> str:
        name, fmt = m.group(1), m.group(2)
        base, _, josa = name.partition("_")
        key = base if base in slots else base[:1].lower() + base[1:]
        if key not in slots:
            raise RagUnphraseable(f"{where}: template {template!r} names {{{name}}}, which is not given", "template")
        v = str(slots[key])
        if fmt == "long_date":
            v = long_date(v)
        elif fmt == "tail":  # what kind of place a Korean name is: '종로구' → '구', '수원시 장안구' → '구'
            v = v.strip()[-1:]
        if base != key:
            v = v[:1].upper() + v[1:]
        pairs = {"iga": "이/가", "eul": "을/를", "eun": "은/는", "gwa": "과/와"}
        return prompts.josa(v, pairs[josa]) if josa in pairs else v

    return re.sub(r"\s{2,}", " ", _SLOT.sub(one, template)).strip()


def _said_parts(form: DocumentForm, parts: Mapping[str, str], lang: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in parts.items():
        if k in form.say:
            tpl = form.say[k].get(lang)
            if tpl is None:
                raise RagUnphraseable(f"no {lang} form to state the title part {k!r} of {form.kind}", "document")
            out[k] = fill(tpl, {"v": v}, form.kind)
        else:
            out[k] = v
    return out


# --------------------------------------------------------------------------- documents


@dataclass
class DocRef:
    """How a question names the gold document: `text` ({doc}), the title parts stated ({date}, {year}, …)."""

    text: str
    form: DocumentForm
    parts: dict[str, str]
    slots: dict[str, str]
    found: str = ""  # how an answer names it with what the hop found ('청운동이 있는 종로구'); "" = `text`


def named_document(lex: PassageLexicon, title: str, lang: str) -> DocRef:
    """The document named by itself (a RAG-first question): its form's `name` with every title part."""
    found = lex.form_of(title)
    if found is None:
        raise RagUnphraseable(f"no reviewed title form matches {title!r}", "document")
    form, parts = found
    tpl = form.name.get(lang)
    if not tpl:
        raise RagUnphraseable(f"{form.kind}: no {lang} name", "document")
    said = _said_parts(form, parts, lang)
    words_ = form.table_slots(parts, lang)
    text = fill(tpl, {**parts, **words_}, form.kind)
    return DocRef(text, form, parts, {**words_, **said, "doc": text})


def _plain_name(up: ph.Ref) -> str:
    """The record named by its name alone when the name already says what it is ('the airport Laguardia Airport' →
    'Laguardia Airport')."""
    m = re.fullmatch(rf"the {re.escape(up.sing)} (.+)", up.text, re.IGNORECASE) if up.sing else None
    if m and m.group(1).casefold().endswith(" " + up.sing.casefold()):
        return m.group(1)
    return up.text


def document_via(
    lex: PassageLexicon,
    title: str,
    lang: str,
    entity_type: str | None,
    up: ph.Ref,
    hop_noun: str | None,
    record_values: Sequence[Any],
    same_record: bool,
    up_entity: str | None = None,
) -> DocRef:
    """The document reached from an API record: the record `up` names (`same_record`: the bridge field is one of its
    own names) or the one its reference field names (`hop_noun`: 'album'); title parts not stated by the form's `say`
    must be values of the API record (the album's artist), else RagUnphraseable('document'). A hop from a record of an
    entity the form's `known_from` lists (`up_entity`: a 시군구 to its 시도) is no question: RagUnphraseable('known_hop')."""
    found = lex.form_of(title)
    if found is None:
        raise RagUnphraseable(f"no reviewed title form matches {title!r}", "document")
    form, parts = found
    if up_entity and not same_record and up_entity in form.known_from:
        raise RagUnphraseable(
            f"{up.text} → the {form.kind} of {title!r}: a reader knows it without a tool", "known_hop"
        )
    if entity_type and entity_type.split("@")[0] not in form.subject:
        raise RagUnphraseable(f"the bridge is a {entity_type}, the document {title!r} is about a {form.subject}",
                              "document")  # fmt: skip
    held = {str(v).strip().casefold() for v in record_values}
    for k, v in parts.items():
        if k != "subject" and k not in form.say and v.strip().casefold() not in held:
            raise RagUnphraseable(f"title part {k}={v!r} of {title!r} is neither stated nor in the API record",
                                  "document")  # fmt: skip
    words_ = form.table_slots(parts, lang)
    answer_name = ""
    if same_record or not hop_noun:
        text = _plain_name(up)
    elif form.hop.get(lang):
        # {named}: the record by its quoted title alone ("the artist who recorded 'X'", not "… recorded the track 'X'")
        text = fill(form.hop[lang], {**parts, **words_, "up": up.text, "named": ph.quoted_name(up.text, up.sing)},
                    form.kind)  # fmt: skip
        if form.found.get(lang):
            answer_name = fill(form.found[lang], {**parts, **words_, "up": up.text}, form.kind)
    else:
        text = ph._hop(up, hop_noun, lang, up.steps + 1).text
    said = _said_parts(form, {k: v for k, v in parts.items() if k in form.say}, lang)
    # title parts the question may state (they are values of the API record: the 시도 of a 동's district)
    stated = {k: v for k, v in parts.items() if k not in ("subject", *form.say)}
    return DocRef(text, form, parts, {**stated, **words_, **said, "doc": text}, answer_name)


# --------------------------------------------------------------------------- facts


def _number(text: str) -> int | float:
    t = text.replace(",", "")
    return float(t) if "." in t else int(t)


@dataclass
class NumberFact:
    sentence: str
    shown: str  # the number as the passage writes it
    value: int | float
    question: str
    answer_text: str
    fact: Fact


def number_facts(lex: PassageLexicon, doc: DocRef, sentences: Sequence[str], lang: str) -> list[NumberFact]:
    """Every number of the passage that a reviewed fact asks for, with its question and answer sentence."""
    out: list[NumberFact] = []
    context = doc.form.context_slots(sentences)
    for f in lex.facts:
        if f.is_name or doc.form.kind not in f.kinds or lang not in f.ask or lang not in f.answer or not f.applies(doc):
            continue
        for s in sentences:
            m = f.match.search(s)
            if not m:
                continue
            slots = {**doc.slots, **context, **{k: v for k, v in m.groupdict().items() if v is not None}}
            try:
                q = _sentence(fill(f.ask[lang], slots, doc.form.kind), lang)
                # the answer names what the hop found ('청운동이 있는 종로구의 …'), the question only how to find it
                a = _sentence(fill(f.answer[lang], {**slots, "doc": doc.found or doc.text}, doc.form.kind), lang)
            except RagUnphraseable:  # a word this document has none of ('{districts}' of 세종특별자치시): not asked
                continue
            value = _number(m.group("n"))
            if any(m.groupdict().get(g) == word for g, word in f.negative.items()):
                value = -value
            out.append(NumberFact(s, m.group("n"), value, q, a, f))
    return out


@dataclass
class NameFact:
    sentence: str
    value: str
    type: str
    phrase: str  # the record the value names ('the longest track on the album …')
    fact: Fact
    answer_phrase: str = ""  # the same, naming what the hop to the document found ('율전동이 있는 경기도에서 …')


def name_facts(lex: PassageLexicon, doc: DocRef, sentences: Sequence[str], lang: str) -> list[NameFact]:
    """Every name of the passage that a reviewed fact names, with the phrase for its record."""
    out: list[NameFact] = []
    for f in lex.facts:
        if not f.is_name or doc.form.kind not in f.kinds or lang not in f.phrase or not f.applies(doc):
            continue
        for s in sentences:
            m = f.match.search(s)
            if m:
                slots = {**doc.slots, **{k: v for k, v in m.groupdict().items() if v is not None}}
                if f.qualify_if is not None and not f.qualify_if.search(m.group("v").strip()):
                    slots = {k: unqualified(v) if k in doc.form.tables else v for k, v in slots.items()}
                try:
                    phrase = fill(f.phrase[lang], slots, doc.form.kind)
                    said = fill(f.phrase[lang], {**slots, "doc": doc.found}, doc.form.kind) if doc.found else phrase
                except RagUnphraseable:  # a word this document has none of: not asked
                    continue
                out.append(NameFact(s, m.group("v").strip(), f.type, phrase, f, said))
    return out


_QUALIFIER = re.compile(r"\s*\([^()]*\)$")


def unqualified(word: str) -> str:
    """A table word without its parenthetical qualifier ('시·군·구(일반구 단위)' → '시·군·구')."""
    return _QUALIFIER.sub("", word) if isinstance(word, str) else word


def _sentence(text: str, lang: str) -> str:
    text = text.strip()
    if lang != "ko":
        text = text[:1].upper() + text[1:]
    return text


# --------------------------------------------------------------------------- API answers


# an API value asked of a record in one of several ways, by a stable hash of the question ('What is the file size
# of …' opened 11% of the demo's English questions in s13: issue 15 allows no opening above 10%)
_VALUE_FORMS = (
    "{who} is the {f} of {subject}?",
    "Can you tell me the {f} of {subject}?",
    "I'd like to know the {f} of {subject}.",
)


def value_question(subject: str, frame: Mapping[str, Any], fname: str, lang: str) -> tuple[str, dict[str, Any]]:
    """The question for field `fname` of the record `subject` names, and the answer frame (`answers.short_statement`):
    'Who is the composer of the longest track on …?', '… 행정구역 영문명은 무엇입니까?'."""
    try:
        sing, pl = ph._noun(frame, lang)
    except ph.Unphraseable:
        sing, pl = "", ""
    parts = ph._value_parts(ph.Ref(subject, True, sing, pl), frame, fname, lang)
    f = parts["field"]
    slot = (frame.get("fields") or {}).get(fname) or {}
    unit = str(parts.get("unit") or "")
    unit = unit.upper() if unit.lower() in _CURRENCIES else unit  # '0.99 USD', not '0.99 usd'
    asked = (slot.get("ask") or {}).get(lang) if isinstance(slot.get("ask"), Mapping) else None
    if asked:  # the lexicon's wording: the record found and the value at once ('… 구는 어디이고, 영문으로는 …')
        said = (slot.get("answer") or {}).get(lang) if isinstance(slot.get("answer"), Mapping) else None
        return fill(asked, {"subject": subject}, fname), {"kind": "value", "field": f, "unit": unit, "subject": subject,
                                                          "answer": said or ""}  # fmt: skip
    if lang == "ko":
        q = f"{subject}의 {prompts.josa(f, '은/는')} 무엇입니까?"
    elif parts.get("how_many"):
        q = f"How many {parts['how_many']} does {subject} have?"
    else:
        who = "Who" if slot.get("kind") == "reference" and ph.fr.is_person(slot.get("entity")) else "What"
        q = _VALUE_FORMS[zlib.crc32(f"{subject}|{fname}".encode()) % len(_VALUE_FORMS)].format(
            who=who, f=f, subject=subject
        )
    short = {"kind": "value", "field": f, "unit": unit, "subject": subject}
    return q, short


def value_answer(v: Any, short: Mapping[str, Any], lang: str, bridge: str | None = None) -> str:
    """The answer sentence: the lexicon's `answer` wording of the field (naming the record the document gave,
    `bridge`), else the field's value stated of the subject."""
    typ = "number" if isinstance(v, int | float) and not isinstance(v, bool) else "string"
    tpl = str(short.get("answer") or "")
    if tpl:
        shown = f"{v:,}" if typ == "number" and isinstance(v, int) and not isinstance(v, bool) else str(v)
        try:
            slots = {"subject": str(short.get("subject") or ""), "v": shown, **({"bridge": bridge} if bridge else {})}
            return _sentence(fill(tpl, slots, "answer"), lang)
        except RagUnphraseable:
            pass
    subject = str(short.get("subject") or "")
    if bridge and subject and lang != "ko" and bridge.strip("'").casefold() not in subject.casefold():
        # the record the document picked, named ('The file size of the longest track on the album X, 'Princess of
        # the Dawn', is …'): a reply that leaves it out reads as withholding it (blind read s18 r3 #7, #20)
        short = {**short, "subject": f"{subject}, {bridge},"}
    said = answers.short_statement(v, typ, short, lang)
    shown = f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)
    return answers._sentence(said, lang) if said else (f"답은 {shown}입니다." if lang == "ko" else f"It is {shown}.")


__all__ = [
    "DocRef", "DocumentForm", "Fact", "NameFact", "NumberFact", "PassageLexicon", "PassageLexiconError",
    "RagUnphraseable", "UNPHRASEABLE_CODES", "document_via", "fill", "load_passage_lexicon", "long_date",
    "name_facts", "named_document", "number_facts", "passage_lexicon_file", "unqualified", "value_answer",
    "value_question",
]  # fmt: skip
