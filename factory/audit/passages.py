"""Search calls, passage values and policies in the audit.

A search call (golden action with ``source_type: retrieval``, tool ``search_<collection>``) cites the
passages the chain uses (`passage_ids`). The audit

1. looks each cited id up in the served index (the LanceDB table ``<domain>__<collection>`` at the
   version the published `retrieval_index` value pins; `LanceIndex`): an id that is not there is
   ``passage_missing``;
2. re-derives the passage's document from the raw data (`factory.audit.corpora.document`, named by the
   passage's `source`) and reads every statement of the passage with its own patterns: a statement
   that disagrees with the raw data is ``misstates``;
3. checks that the call's query names that document (an entity or title the raw data gives the
   document; a district's bulletin is also named by its province): otherwise ``other_document`` (a search
   for the genre 'Rock' citing the note of the album 'For Those About To Rock We Salute You'); when the
   query names several documents, a passage value must be the same in every one that makes the
   statement (else the question is ambiguous);

and then the chain continues as for API values: a passage value that answers the task (`passage_value`
spec: the number filling the gap of the spec's statement) is the raw value of the statement it fills,
checked against the stored answer; a value a passage binds into an API argument (a RAG→API junction)
must be a statement of the passage that agrees with the raw data, and its kind must be one the
parameter accepts, and the API call is then re-derived by its reference like any other.

Policies (`Task.policy`): ``changes_answer`` must forbid a source every path of the task uses and
expect the fixed unanswerable sentence (and when it forbids the APIs, no served passage about an entity
the question names may state the answer); ``no_effect`` must forbid a source the golden path does not use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from factory.audit import corpora, kinds
from factory.audit.corpora import Slot, UnknownDocument, norm_name
from factory.audit.spec import CallResult, same

SOURCE_TYPES = ("api", "retrieval")
POLICY_CATEGORIES = ("changes_answer", "no_effect", "none")
UNANSWERABLE = {"en": "no permitted tool can answer", "ko": "허용된 도구로는 이 질문에 답할 수 없습니다"}
_NUMBER = r"-?\d[\d,]*(?:\.\d+)?"


class PassageIndex(Protocol):
    """The served passages of a domain's collection: id → row (id, title, source, position, text); None when
    the index is not available to the audit."""

    def rows(self, domain: str, collection: str) -> Mapping[str, Mapping[str, Any]] | None: ...

    def collections(self, domain: str) -> list[str]: ...


@dataclass
class MemoryIndex:
    """An index given as rows ({(domain, collection): [row, ...]}), for task files and tests."""

    tables: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]] = field(default_factory=dict)

    def collections(self, domain: str) -> list[str]:
        return sorted(c for d, c in self.tables if d == domain)

    def rows(self, domain: str, collection: str) -> Mapping[str, Mapping[str, Any]] | None:
        rows = self.tables.get((domain, collection))
        return None if rows is None else {str(r["id"]): r for r in rows}


class LanceIndex:
    """The project's served LanceDB tables, each opened at the version its `retrieval_index` value pins
    (`pins`: table name → (uri, version)); a table without a pin is not available."""

    def __init__(self, pins: Mapping[str, tuple[str, int]]):
        self.pins = dict(pins)
        self._cache: dict[str, dict[str, dict[str, Any]] | None] = {}

    def collections(self, domain: str) -> list[str]:
        return sorted(t.split("__", 1)[1] for t in self.pins if t.startswith(f"{domain}__"))

    def rows(self, domain: str, collection: str) -> Mapping[str, Mapping[str, Any]] | None:
        name = f"{domain}__{collection}"
        if name not in self._cache:
            self._cache[name] = self._read(name)
        return self._cache[name]

    def _read(self, name: str) -> dict[str, dict[str, Any]] | None:
        if name not in self.pins:
            return None
        import lancedb

        from factory.io import object_store_options

        uri, version = self.pins[name]
        table = lancedb.connect(uri, storage_options=object_store_options(uri) or None).open_table(name)
        table.checkout(version)
        cols = ["id", "title", "source", "position", "text"]
        data = table.to_arrow().select(cols).to_pylist()
        return {str(r["id"]): r for r in data}


def is_search(action: Mapping[str, Any]) -> bool:
    return action.get("source_type") == "retrieval"


def collection_of(tool: str) -> str:
    return tool.removeprefix("search_")


def _query_names(query: Any, doc: corpora.Document, row: Mapping[str, Any]) -> bool:
    q = norm_name(query)
    return bool(q) and (q in doc.names or q == norm_name(row.get("title") or ""))


@dataclass
class SearchCheck:
    """What the audit found for one search call."""

    status: str  # ok | passage_missing | misstates | other_document | unknown_document | no_index | no_passage
    detail: str = ""
    result: CallResult | None = None
    slots: dict[str, list[Slot]] = field(default_factory=dict)  # passage id → its statements
    documents: dict[str, corpora.Document] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status in ("passage_missing", "misstates", "other_document", "no_passage")


def check_search(action: Mapping[str, Any], domain: str, index: PassageIndex | None) -> SearchCheck:
    """Steps 1-3 of the module docstring for one search call."""
    ids = [str(i) for i in action.get("passage_ids") or []]
    if not ids:
        return SearchCheck("no_passage", "the search call cites no passage id")
    rows = index.rows(domain, collection_of(str(action["tool"]))) if index is not None else None
    if rows is None:
        return SearchCheck("no_index", f"no served index of {domain}/{collection_of(str(action['tool']))} to read")
    missing = [i for i in ids if i not in rows]
    if missing:
        return SearchCheck("passage_missing", f"passage(s) {missing} are not in the served index",
                           CallResult(error=f"passages {missing} not in the index"))  # fmt: skip
    found = [dict(rows[i]) for i in ids]
    check = SearchCheck("ok", "", CallResult(records=found))
    query = (action.get("args") or {}).get("query")
    for row in found:
        try:
            doc = corpora.document(str(row.get("source") or ""))
        except UnknownDocument as e:
            check.status, check.detail = "unknown_document", str(e)
            return check
        check.documents[row["id"]] = doc
        read = corpora.slots(str(row.get("text") or ""), doc)
        check.slots[row["id"]] = read
        bad = [s for s in read if not s.agrees]
        if bad:
            check.status = "misstates"
            check.detail = "; ".join(f"{row['id']} states {s.key} {s.stated!r}, raw data {s.raw!r}" for s in bad[:3])
            return check
        if not _query_names(query, doc, row):
            check.status = "other_document"
            check.detail = f"query {query!r} does not name the document of {row['id']} ({row.get('source')})"
            return check
    return check


def _statement_pattern(statement: str) -> re.Pattern[str] | None:
    """The spec's statement as a pattern over the passage: ___ is the answered number, [a field] the entity
    the question names through an earlier call (any text)."""
    if "___" not in statement:
        return None
    parts = re.split(r"(___|\[[^\]]+\])", statement.strip())
    out = []
    for p in parts:
        if p == "___":
            out.append(f"(?P<gap>{_NUMBER})")
        elif p.startswith("[") and p.endswith("]"):
            out.append(r".+?")
        else:
            out.append(re.escape(p))
    return re.compile("".join(out))


def passage_answer(
    spec: Mapping[str, Any], search: SearchCheck, domain: str, collection: str, index: PassageIndex | None,
    query: Any,
) -> dict[str, Any]:  # fmt: skip
    """The raw-data answer of a `passage_value` spec: {status, reason, derived}."""
    pid = str(spec.get("passage_id") or "")
    if search.result is None or search.result.error:
        return {"status": "wrong", "reason": f"the cited passage cannot be read: {search.detail}"}
    rows = {r["id"]: r for r in search.result.records}
    if pid not in rows:
        return {"status": "wrong", "reason": f"spec passage {pid} is not one the search call cites"}
    pattern = _statement_pattern(str(spec.get("statement") or ""))
    if pattern is None:
        return {"status": "wrong", "reason": "the passage_value spec has no statement with a gap (___)"}
    text = str(rows[pid].get("text") or "")
    m = pattern.search(text)
    if m is None:
        return {"status": "wrong", "reason": f"passage {pid} does not make the statement {spec.get('statement')!r}"}
    offset, number = m.start("gap"), m.group("gap")
    cover = [s for s in search.slots.get(pid, []) if s.start <= offset and m.end("gap") <= s.end]
    if not cover:
        return {"status": "not_derivable", "reason": f"no statement the audit reads covers the gap ({number!r})"}
    slot = cover[0]
    derived = corpora.answer_value(slot, number, offset)
    if derived is None:
        return {"status": "not_derivable", "reason": f"the raw data gives no value for {slot.key}"}
    out: dict[str, Any] = {"derived": derived, "slot": slot.key}
    # the gap holds the size the passage writes; a change's sign is in the words after it ('0.6% 감소')
    if not same(abs(derived) if slot.kind == "change" else derived, corpora.to_number(number)):
        return {**out, "status": "wrong", "reason": f"passage {pid} states {number} for {slot.key}, raw {derived!r}"}
    others = _ambiguous(pattern, pid, query, search.documents[pid], domain, collection, index, number)
    if others:
        return {**out, "status": "wrong", "reason": f"query {query!r} names {len(others) + 1} documents whose "
                f"statement fills the gap differently ({', '.join(others[:3])})"}  # fmt: skip
    return {**out, "status": "derived"}


def _ambiguous(
    pattern: re.Pattern[str], pid: str, query: Any, doc: corpora.Document, domain: str, collection: str,
    index: PassageIndex | None, number: str,
) -> list[str]:  # fmt: skip
    """Other served documents the query names that make the statement with another number in the gap."""
    rows = index.rows(domain, collection) if index is not None else None
    if not rows:
        return []
    q = norm_name(query)
    out = []
    for rid, row in rows.items():
        if rid == pid or row.get("source") == doc.source:
            continue
        if q not in corpora.names(str(row.get("source") or "")) and q != norm_name(row.get("title") or ""):
            continue
        m = pattern.search(str(row.get("text") or ""))
        if m is not None and not same(corpora.to_number(m.group("gap")), corpora.to_number(number)):
            out.append(f"{row.get('source')}: {m.group('gap')}")
    return out


def passage_bridge(
    value: Any, platform: str, tool: str, param: str, search: SearchCheck
) -> dict[str, Any]:  # fmt: skip
    """A value a passage binds into `tool.param`: {status, slot?, from_kind?, to_kinds, detail}; status ok |
    type_mismatch | misstated | not_stated | not_read | not_checked."""
    pk = kinds.param_kinds(platform, tool, param)
    row: dict[str, Any] = {"to_kinds": list(pk)}
    if search.result is None or search.result.error or not search.slots:
        return {**row, "status": "not_checked", "detail": search.detail}
    v = norm_name(value)
    for pid, read in search.slots.items():
        for s in read:
            items = [norm_name(x) for x in corpora.list_items(s)] if s.kind.startswith("list:") else []
            stated = norm_name(s.stated)
            if stated != v and v not in items and not (s.kind.startswith("list:") and v in stated.split(", ")):
                continue
            kind = s.kind.split(":", 1)[1] if s.kind.startswith("list:") else s.kind
            row.update(slot=s.key, passage=pid, from_kind=kind)
            if not s.agrees or (s.kind.startswith("list:") and v not in items) or (not items and stated != v):
                return {**row, "status": "misstated", "detail": f"{pid} {s.key} {s.stated!r}, raw {s.raw!r}"}
            if pk and not kinds.accepts(pk, kind):
                return {**row, "status": "type_mismatch",
                        "detail": f"{s.key} is a {kind}; {tool}.{param} takes {'/'.join(pk)}"}  # fmt: skip
            return {**row, "status": "ok" if pk else "untyped", "detail": ""}
    texts = " ".join(str(r.get("text") or "") for r in search.result.records)
    if v and v in norm_name(texts):
        return {**row, "status": "not_read", "detail": f"{value!r} is in the passage outside the statements read"}
    return {**row, "status": "not_stated", "detail": f"no cited passage states {value!r}"}


def documents_answer(task: Mapping[str, Any], index: PassageIndex | None) -> str | None:
    """A served passage that answers an API-only task: the values the golden calls send name its document's
    subject (`corpora.subject`: e.g. the airport and the date of a bulletin) and one of its statements has
    the answer as its raw value.
    None when there is none (or no index to read)."""
    answer = (task.get("answer") or {}).get("value")
    if answer is None or isinstance(answer, list | dict) or index is None:
        return None
    named = {
        norm_name(v)
        for a in task.get("golden_actions") or []
        for v in (a.get("args") or {}).values()
        if isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip() and v != "<KEY>"
    }
    domain = str(task.get("domain") or "")
    for collection in index.collections(domain):
        for rid, row in (index.rows(domain, collection) or {}).items():
            if not any(alt <= named for alt in corpora.subject(str(row.get("source") or ""))):
                continue
            try:
                doc = corpora.document(str(row.get("source")))
            except UnknownDocument:
                continue
            for slot in corpora.slots(str(row.get("text") or ""), doc):
                if slot.agrees and slot.kind not in ("hour",) and same(slot.raw, answer):
                    return f"{rid} ({row.get('source')}) states {slot.key} = {slot.stated!r}"
    return None


def check_policy(task: Mapping[str, Any], index: PassageIndex | None = None) -> tuple[str, str] | None:
    """(status, reason) of a task's policy when it is unknown or wrong; None when it is right (or absent). A
    changes_answer policy that forbids the APIs claims the documents cannot answer: a served passage that
    states the answer about an entity the question names refutes it."""
    pol = task.get("policy")
    if pol is None:
        return None
    if not isinstance(pol, Mapping):
        return "wrong", f"unknown policy value {pol!r}"
    cat = pol.get("category")
    if cat not in POLICY_CATEGORIES:
        return "wrong", f"unknown policy category {cat!r} (the audit knows {', '.join(POLICY_CATEGORIES)})"
    forbidden = list(pol.get("forbidden_sources") or [])
    unknown = [s for s in forbidden if s not in SOURCE_TYPES]
    if unknown:
        return "wrong", f"policy forbids unknown source type(s) {unknown}"
    platforms = [str(p) for p in pol.get("forbidden_platforms") or []]  # API platforms forbidden one by one
    paths = [task.get("golden_actions") or []] + [p.get("actions") or [] for p in task.get("alternative_paths") or []]
    used = [
        {str(a.get("source_type") or "api") for a in p}
        | {f"api:{a.get('platform')}" for a in p if str(a.get("source_type") or "api") == "api"}
        for p in paths
    ]
    forbidden = forbidden + [f"api:{p}" for p in platforms]
    if cat == "changes_answer":
        if not forbidden:
            return "wrong", "a changes_answer policy that forbids no source"
        if not all(any(s in u for s in forbidden) for u in used):
            return "wrong", f"a path of the task uses none of the forbidden sources {forbidden}: the tools can answer"
        expected = norm_name(pol.get("expected_answer") or "")
        lang = str(task.get("language") or "en")
        if norm_name(UNANSWERABLE.get(lang, UNANSWERABLE["en"])) not in expected:
            return "wrong", f"expected answer {pol.get('expected_answer')!r} does not say no permitted tool can answer"
        if "retrieval" not in forbidden:  # the documents stay permitted: none may state the answer
            found = documents_answer(task, index)
            if found:
                return "wrong", f"the documents are permitted and a served passage answers: {found}"
    elif cat == "no_effect" and any(s in used[0] for s in forbidden):
        return "wrong", f"a no_effect policy forbids {forbidden}, which the golden path uses"
    return None
