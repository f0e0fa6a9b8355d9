"""Decontamination of a retrieval corpus: which chunks the index must not serve, each with a reason code.

VAKRA builds its indices so that retrieval never short-cuts a task meant for the APIs. A chunk is
removed when (first matching rule wins, in this order; "states" means within one sentence):

- ``api_answer_stated`` (a): it states the answer of an API-only task of its domain: it contains an
  answer value of the task together with an anchor of the task (an argument value the question
  names) in one sentence, so the task could be answered from the passage without calling the tools.
  A number is read only where it stands for itself: never inside a date ("2008-03-28", "January 18,
  2013", "2020년"), a clock time or compound duration ("15:00", "3 h 28 min"), a rank ("day 18 of
  31", "18th", "21위"), a range or a larger number ("28만 2,967명"); and a number of one or two digits
  (a count, as common as a day of the month) only when the sentence says what it counts: a word of
  the task follows it ("48 tracks", "18 more routes": a word of the question or of the answer
  sentence, `TaskFacts.vocab`) or a Korean counter does ("25개", "14곳");
- ``api_bridge_stated`` (a): it states a bridge value of such a task (an argument of a later call
  that the question does not name, i.e. a value the chain had to look up; digits only when 4+ long,
  shorter ones are ids and counts) with an anchor (numbers of 3 characters or fewer are never anchors);
- ``held_out_near_duplicate`` (c): it holds at least `retrieval.held_out_containment` of the
  character 5-grams of a dev/test question (the shingles of `factory.splits.minhash`), so a
  held-out item leaks through retrieval;
- ``cross_domain_leak`` (d): it states an answer of another domain's API-only task (same rule as
  (a)), or its Jaccard similarity with a chunk of another domain's corpus is at least
  `retrieval.cross_domain_jaccard` (the same text filed under two domains).

(b), the reverse, runs in the judged_queries cascade (stage rules, reason ``rag_answerable_by_api``,
`rag_answerable`): a RAG-only task (hop type "RAG") is dropped when an API response the factory executed
(probe records, the domain's trajectory calls) holds its answer value together with a value its question
names (the same record: a statement about that entity), so the APIs answer it without the documents. The
index's waterfall counts those drops beside the chunk removals.
Values shorter than `retrieval.min_value_chars` decide nothing (a "3" is in every document).
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from factory.config import RetrievalConfig
from factory.splits.minhash import jaccard, normalize

REASONS: dict[str, str] = {
    "api_answer_stated": "(a) states the answer of an API-only task of the domain (answer value with a task anchor)",
    "api_bridge_stated": "(a) states a bridge value of an API-only task (a looked-up argument, with a task anchor)",
    "held_out_near_duplicate": "(c) holds a dev/test question (character 5-gram containment)",
    "benchmark_near_duplicate": "(c) holds a question of a benchmark file (splits.benchmarks; 5-gram containment)",
    "cross_domain_leak": "(d) states another domain's answer, or duplicates another domain's chunk",
}
GENERIC_ARGS = {"api_key", "serviceKey", "page", "per_page", "pageNo", "numOfRows", "_type", "limit", "offset"}
HELD_OUT = ("dev", "test")
_SHORT_NUMBER = re.compile(r"[\d,.]{1,3}")
_NUMERIC = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")  # a value form that is a number
_SHORT_COUNT = re.compile(r"-?\d{1,2}")  # one or two digits: a statement only with what it counts
_MON = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
        r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")  # fmt: skip
# spans whose digits are no number of their own (normalized text): dates, clock times, compound durations,
# ranks and ordinals, ranges, Korean large-number units (28만 2,967 is 282,967, not 28)
_NOT_A_NUMBER = re.compile(
    "|".join(
        [
            r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}",  # 2008-03-28
            r"\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}",  # 28/03/2008
            rf"\b{_MON}\s*\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?",  # january 18, 2013; jan. 18
            rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MON}(?:,?\s+\d{{4}})?",  # 18 january 2013
            rf"\b{_MON}\s+\d{{4}}",  # january 2013
            r"\d{4}\s*년(?:\s*\d{1,2}\s*월(?:\s*\d{1,2}\s*일)?)?",  # 2013년 1월 18일, 2020년
            r"\d{1,2}\s*월(?:\s*\d{1,2}\s*일)?",  # 1월 18일
            r"\d{1,2}:\d{2}(?::\d{2})?",  # 15:00
            r"\d+\s*h\s+\d+\s*min(?:\s+\d+\s*s)?|\d+\s*min\s+\d+\s*s",  # 3 h 28 min 06 s
            r"\d+\s+of\s+\d+",  # day 18 of 31
            r"(?:\b(?:day|rank|no\.|number)\s*|#\s*)\d+(?:\s+of\s+\d+)?",  # day 18 of 31, no. 18, #18
            r"\d+(?:st|nd|rd|th)\b",  # 18th
            r"\d+\s*위",  # 21위
            r"\d+\s*[-~–]\s*\d+",  # 2010~2020, 10-12
            r"\d+\s*[만억조](?:\s*[\d,]+)?",  # 28만 2,967
        ]
    )
)
# Korean counters: a number carrying one is a count of something ("25개 시군구", "14곳"); 년/월/일/위/% are not
_COUNTER = re.compile(r"\s?(?:개소|개국|개|곳|명|건|곡|권|편|장|가구|호|종|회|마리)")
_FILLER = {"more", "fewer", "less", "additional", "other", "further", "extra", "different", "distinct", "unique",
           "separate", "new", "total", "whole"}  # fmt: skip
_STOP = {"a", "an", "the", "of", "in", "on", "at", "by", "for", "to", "from", "with", "and", "or", "than", "as", "is",
         "are", "was", "were", "be", "been", "has", "have", "had", "do", "does", "did", "how", "many", "much", "what",
         "which", "who", "whom", "whose", "where", "when", "there", "their", "its", "it", "this", "that", "these",
         "those", "number", "between", "difference", "same", "if", "so", "can", "you", "me", "tell", "please", "know",
         "like", "would", "i", "my", "any", "all", "into", "out", "up", "about"} | _FILLER  # fmt: skip
SHINGLE = 5
_P = np.uint64(1_000_003)
_BANDS, _ROWS = 6, 4
_PERM_A = np.random.default_rng(17).integers(1, 2**31 - 1, size=_BANDS * _ROWS, dtype=np.uint64)
_PERM_B = np.random.default_rng(18).integers(0, 2**31 - 1, size=_BANDS * _ROWS, dtype=np.uint64)
_PRIME = np.uint64(2**31 - 1)


def _bands(hashes: np.ndarray) -> list[tuple[int, bytes]]:
    """LSH band keys of a shingle-hash set: a MinHash signature of _BANDS x _ROWS permutations, cut in bands."""
    if not len(hashes):
        return []
    h = hashes.astype(np.uint64)[:, None]
    sig = ((h * _PERM_A[None, :] + _PERM_B[None, :]) % _PRIME).min(axis=0)
    return [(b, sig[b * _ROWS : (b + 1) * _ROWS].tobytes()) for b in range(_BANDS)]


def shingle_hashes(text: str, n: int = SHINGLE) -> np.ndarray:
    """Sorted distinct 32-bit hashes of the character n-grams of the normalized text (the shingle sets of
    `factory.splits.minhash`, hashed by a vectorized polynomial over code points instead of SHA-1 per
    shingle: the same sets, up to 32-bit collisions, about 20x faster; only compared with each other here)."""
    t = normalize(text)
    if not t:
        return np.zeros(0, dtype=np.uint32)
    cps = np.frombuffer(t.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    if len(cps) <= n:
        cps = np.concatenate([cps, np.zeros(n - len(cps), dtype=np.uint64)])
    m = len(cps) - n + 1
    h = np.zeros(m, dtype=np.uint64)
    with np.errstate(over="ignore"):  # wrapping uint64 arithmetic is the hash
        for j in range(n):
            h = h * _P + cps[j : j + m]
        h ^= h >> np.uint64(29)
    return np.unique((h & np.uint64(0xFFFFFFFF)).astype(np.uint32))


@dataclass(frozen=True)
class TaskFacts:
    """What a task would leak: its answer values, bridge values and the anchors its question names."""

    task_id: str
    domain: str
    split: str
    query: str
    answers: tuple[str, ...]
    bridges: tuple[str, ...]
    anchors: tuple[str, ...]
    # the words the task says what it counts or measures with (stems of the question's and the answer sentence's
    # words): a one- or two-digit number states the task's answer only when one of them follows it
    vocab: tuple[str, ...] = ()


def _scalars(v: Any) -> Iterable[Any]:
    if isinstance(v, dict):
        for x in v.values():
            yield from _scalars(x)
    elif isinstance(v, list | tuple):
        for x in v:
            yield from _scalars(x)
    elif v is not None and not isinstance(v, bool):
        yield v


def value_forms(v: Any) -> set[str]:
    """The ways a value is written in text: 1234 → {"1234", "1,234"}; 2.5 → {"2.5", "2.50"}; strings as they are."""
    if isinstance(v, bool) or v is None:
        return set()
    if isinstance(v, int) or (isinstance(v, float) and float(v).is_integer()):
        n = int(v)
        return {str(n), f"{n:,}"}
    if isinstance(v, float):
        return {f"{v:g}", f"{v:.2f}", f"{v:,.2f}", f"{v:.1f}"}
    s = str(v).strip()
    return {s} if s else set()


def is_api_only(task: Mapping[str, Any]) -> bool:
    """A task none of whose golden calls is a retrieval search."""
    return not any(a.get("source_type") == "retrieval" for a in task.get("golden_actions") or [])


def task_facts(task: Mapping[str, Any]) -> TaskFacts:
    query = str(task.get("query") or "")
    q = normalize(query)
    anchors: set[str] = set()
    bridges: set[str] = set()
    for action in task.get("golden_actions") or []:
        for name, v in (action.get("args") or {}).items():
            if name in GENERIC_ARGS or v == "<KEY>":
                continue
            for form in value_forms(v) if not isinstance(v, dict | list) else set():
                (anchors if normalize(form) in q else bridges).add(form)
    # a short number is an id, an hour or a count: as an anchor or a bridge it names nothing (a "15" is in
    # every "15:00"); dates, codes and names do
    anchors = {a for a in anchors if not _SHORT_NUMBER.fullmatch(a)}
    bridges = {b for b in bridges if not _SHORT_NUMBER.fullmatch(b)}
    answer = task.get("answer") or {}
    answers = {f for v in _scalars(answer.get("value")) for f in value_forms(v)}
    return TaskFacts(
        task_id=str(task.get("id")),
        domain=str(task.get("domain")),
        split=str(task.get("split")),
        query=query,
        answers=tuple(sorted(answers - anchors)),
        bridges=tuple(sorted(bridges - anchors)),
        anchors=tuple(sorted(anchors)),
        vocab=tuple(sorted(_vocab(f"{q} {normalize(str(answer.get('text') or ''))}"))),
    )


def _stem(word: str) -> str:
    """A crude English plural stem: routes → route, countries → country, matches → match."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _vocab(text: str) -> set[str]:
    """Stems of the content words of a (normalized) text; "%" when it asks for a percentage."""
    out = {_stem(w) for w in re.findall(r"[a-z]+", text) if w not in _STOP and len(w) > 1}
    if "%" in text or "percent" in text or "퍼센트" in text:
        out |= {"%", "percent"}
    return out


def _counted(text: str, end: int, vocab: Iterable[str]) -> bool:
    """Whether the number ending at `end` of `text` says what it counts: a Korean counter follows it, or a word
    of the task (after comparatives: "18 more routes")."""
    rest = text[end : end + 80]
    if _COUNTER.match(rest):
        return True
    for tok in re.findall(r"[a-z]+|%|[^\sa-z]", rest)[:4]:
        if tok in _FILLER:
            continue
        return (_stem(tok) if tok != "percent" else "%") in set(vocab)
    return False


def mask_non_numbers(text: str) -> str:
    """The (normalized) text with the digits of dates, times, durations, ranks, ranges and parts of larger numbers
    replaced by "_" (same length): a number read in what is left stands for itself."""
    return _NOT_A_NUMBER.sub(lambda m: re.sub(r"\d", "_", m.group(0)), text)


def _pattern(values: Iterable[str], min_chars: int) -> re.Pattern[str] | None:
    vals = sorted({normalize(v) for v in values if len(normalize(v)) >= min_chars}, key=len, reverse=True)
    if not vals:
        return None
    # left: not inside a Latin/digit/Hangul word; right: not followed by a Latin letter or digit
    # (a Korean particle may follow: 군포시의); a number is not part of a longer number or decimal, nor next to
    # digits masked out by `mask_non_numbers`
    return re.compile(r"(?<![0-9a-z가-힣.,_])(?:" + "|".join(map(re.escape, vals)) + r")(?![0-9a-z_]|[.,][0-9])")


class _Rules:
    """One task's patterns, compiled on first use (most tasks never meet a chunk naming their anchors)."""

    def __init__(self, facts: TaskFacts, min_chars: int, anchor_texts: tuple[str, ...]) -> None:
        self.facts, self.min_chars = facts, min_chars
        self.anchor_texts = anchor_texts  # normalized: a chunk without any of them as a substring cannot match

    @cached_property
    def anchors(self) -> re.Pattern[str]:
        pat = _pattern(self.facts.anchors, self.min_chars)
        assert pat is not None  # _compile keeps only tasks with an anchor
        return pat

    @cached_property
    def answers(self) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
        """(pattern of the non-numeric answer forms, pattern of the numeric ones)."""
        return _split_patterns(self.facts.answers, self.min_chars)

    @cached_property
    def bridges(self) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
        return _split_patterns(self.facts.bridges, self.min_chars)


def _split_patterns(values: Sequence[str], min_chars: int) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    numbers = [v for v in values if _NUMERIC.fullmatch(normalize(v))]
    return _pattern([v for v in values if v not in numbers], min_chars), _pattern(numbers, min_chars)


def _number_stated(sentence: str, masked: str, pat: re.Pattern[str], vocab: Sequence[str]) -> str | None:
    """The first number of `pat` the sentence states: read in the masked sentence (no date, time, rank or part of
    a larger number), a one- or two-digit one only with what it counts after it."""
    for m in pat.finditer(masked):
        if not _SHORT_COUNT.fullmatch(m.group(0)) or _counted(sentence, m.end(), vocab):
            return m.group(0)
    return None


def _compile(facts: Sequence[TaskFacts], min_chars: int) -> list[_Rules]:
    out = []
    for f in facts:
        texts = tuple(sorted({normalize(a) for a in f.anchors if len(normalize(a)) >= min_chars}))
        if texts:
            out.append(_Rules(f, min_chars, texts))
    return out


_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=다\.)\s*|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of a (normalized) text: split after . ! ? (a decimal point is no end) and line breaks."""
    return [s for s in _SENTENCE.split(text) if s.strip()]


class _AnchorIndex:
    """Rules by the first 3 characters of each anchor: a chunk's character 3-grams select the few rules
    whose anchors can occur in it (then confirmed as substrings), instead of testing every task per chunk."""

    def __init__(self, rules: Sequence[_Rules]) -> None:
        self.rules = list(rules)
        self.by_head: dict[str, list[tuple[str, int]]] = {}
        for i, r in enumerate(self.rules):
            for a in r.anchor_texts:
                self.by_head.setdefault(a[:3], []).append((a, i))

    def candidates(self, text: str) -> list[_Rules]:
        if not self.rules:
            return []
        heads = {text[i : i + 3] for i in range(max(1, len(text) - 1))}
        hit = {i for h in heads & self.by_head.keys() for a, i in self.by_head[h] if a in text}
        return [self.rules[i] for i in sorted(hit)]


def _states(text: str, index: _AnchorIndex) -> tuple[str, TaskFacts, str] | None:
    """(kind, task, value) for the first task whose answer or bridge value one sentence of the text
    states together with an anchor of the task (the same sentence: a statement about that entity)."""
    rules = index.candidates(text)
    if not rules:
        return None
    sents = sentences(text)
    masked: dict[str, str] = {}
    for r in rules:
        with_anchor = [s for s in sents if r.anchors.search(s)]
        for kind, (texts, numbers) in (("answer", r.answers), ("bridge", r.bridges)):
            for s in with_anchor:
                m = texts.search(s) if texts is not None else None
                if m:
                    return kind, r.facts, m.group(0)
                if numbers is not None:
                    if s not in masked:
                        masked[s] = mask_non_numbers(s)
                    value = _number_stated(s, masked[s], numbers, r.facts.vocab)
                    if value is not None:
                        return kind, r.facts, value
    return None


def decontaminate(
    domain: str,
    chunks: Sequence[Mapping[str, Any]],
    tasks: Sequence[Mapping[str, Any]],
    other_chunks: Mapping[str, Sequence[Mapping[str, Any]]],
    settings: RetrievalConfig,
    benchmark: Sequence[tuple[str, str]] = (),
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The removal verdicts of a domain's chunks ({id, reason, detail, evidence}) and their counts.

    `tasks`: every published task (all domains, with `split`); `other_chunks`: the other domains'
    corpus chunks by domain; `benchmark`: (row id, question) of the configured benchmark files
    (`splits.benchmarks`), held out like dev/test questions (rule (c))."""
    api_tasks = [t for t in tasks if is_api_only(t)]
    facts = [task_facts(t) for t in api_tasks]
    own = _AnchorIndex(_compile([f for f in facts if f.domain == domain], settings.min_value_chars))
    foreign = _AnchorIndex(_compile([f for f in facts if f.domain != domain], settings.min_value_chars))
    # (reason, what it holds, evidence, shingles): the dev/test questions and the benchmark rows
    held_out = [
        (
            "held_out_near_duplicate",
            f"the {f.split} question {f.query[:80]!r}",
            f.task_id,
            shingle_hashes(f.query, SHINGLE),
        )
        for f in facts
        if f.split in HELD_OUT and f.query
    ]
    held_out += [
        ("benchmark_near_duplicate", f"the benchmark question {q[:80]!r}", rid, shingle_hashes(q, SHINGLE))
        for rid, q in benchmark
        if q
    ]
    held_out = [h for h in held_out if len(h[3])]
    # every held-out shingle with the question it belongs to: one isin per chunk counts them all
    ho_hashes = np.concatenate([h[3] for h in held_out]) if held_out else np.zeros(0, dtype=np.uint32)
    ho_owner = np.repeat(np.arange(len(held_out)), [len(h[3]) for h in held_out]) if held_out else ho_hashes
    ho_sizes = np.array([len(h[3]) for h in held_out], dtype=np.float64)
    other_sk = [
        (d, c["id"], shingle_hashes(c["text"], SHINGLE))
        for d, cs in sorted(other_chunks.items())
        if d != domain
        for c in cs
    ]
    other_index: dict[tuple[int, bytes], list[int]] = {}  # LSH bands of MinHash signatures → candidate rows
    for i, (_, _, sk) in enumerate(other_sk):
        for key in _bands(sk):
            other_index.setdefault(key, []).append(i)
    verdicts: list[dict[str, Any]] = []
    for c in chunks:
        text = normalize(c["text"])
        verdict: dict[str, Any] | None = None
        hit = _states(text, own)
        if hit:
            kind, f, value = hit
            verdict = {
                "reason": f"api_{kind}_stated",
                "detail": f"states {kind} value {value!r} of API-only task {f.task_id[:19]} next to an anchor "
                f"({', '.join(f.anchors[:3])})",
                "evidence": f.task_id,
            }
        sk = shingle_hashes(c["text"], SHINGLE) if verdict is None else np.zeros(0, dtype=np.uint32)
        if verdict is None and len(sk) and held_out:
            shared = np.bincount(ho_owner[np.isin(ho_hashes, sk, assume_unique=False)], minlength=len(held_out))
            hits = np.flatnonzero(shared / ho_sizes >= settings.held_out_containment)
            if len(hits):
                reason, what, evidence, _ = held_out[int(hits[0])]
                verdict = {"reason": reason, "detail": f"holds {what}", "evidence": evidence}
        if verdict is None:
            hit = _states(text, foreign)
            if hit:
                kind, f, value = hit
                verdict = {
                    "reason": "cross_domain_leak",
                    "detail": f"states {kind} value {value!r} of {f.domain} task {f.task_id[:19]}",
                    "evidence": f.task_id,
                }
        if verdict is None and len(sk):
            # candidates share a band (LSH: 6 bands of 4 MinHash rows find a pair at Jaccard 0.85 with
            # probability 0.99, one at 0.3 with 0.05); the exact Jaccard decides
            cands = {i for key in _bands(sk) for i in other_index.get(key, ())}
            for i in sorted(cands):
                d, oid, osk = other_sk[i]
                sim = jaccard(sk, osk)
                if sim >= settings.cross_domain_jaccard:
                    verdict = {
                        "reason": "cross_domain_leak",
                        "detail": f"duplicates chunk {oid} of domain {d} (Jaccard {sim:.2f})",
                        "evidence": oid,
                    }
                    break
        if verdict is not None:
            verdicts.append({"id": c["id"], **verdict})
    counts = {r: sum(1 for v in verdicts if v["reason"] == r) for r in REASONS}
    stats = {
        "api_only_tasks": len([f for f in facts if f.domain == domain]),
        "api_only_tasks_with_anchor": len(own.rules),
        "held_out_questions": sum(1 for h in held_out if h[0] == "held_out_near_duplicate"),
        "benchmark_questions": sum(1 for h in held_out if h[0] == "benchmark_near_duplicate"),
        # the domain's published tasks with a retrieval call: RAG-only (hop type "RAG") and API+RAG chains
        "rag_only_tasks": sum(1 for t in tasks if t.get("domain") == domain and is_rag_only(t)),
        "api_rag_tasks": sum(
            1 for t in tasks if t.get("domain") == domain and not is_api_only(t) and not is_rag_only(t)
        ),
        "removed": counts,
    }
    return verdicts, stats


# --------------------------------------------------------------------------- rule (b): RAG tasks the APIs answer

RAG_REASON = "rag_answerable_by_api"


@dataclass(frozen=True)
class ApiRecord:
    """One record of an executed API response: where it came from, and the record."""

    tool: str
    platform: str
    call_digest: str
    record: Mapping[str, Any]


def api_records(probe_rows: Iterable[Mapping[str, Any]], trajectories: Iterable[Mapping[str, Any]]) -> list[ApiRecord]:
    """The API records the factory executed: each successful probe's first record and every sampled record
    of the trajectories' golden API calls (`sample`; retrieval calls are no API evidence)."""
    out: list[ApiRecord] = []
    for r in probe_rows:
        rec = r.get("first_record")
        if isinstance(rec, Mapping) and r.get("record_count"):
            out.append(ApiRecord(str(r.get("tool")), str(r.get("platform")), str(r.get("call_digest") or ""), rec))
    for t in trajectories:
        for step in t.get("golden_actions") or []:
            if step.get("source_type") == "retrieval" or str(step.get("platform")) == "retrieval":
                continue
            for rec in step.get("sample") or []:
                if isinstance(rec, Mapping):
                    out.append(
                        ApiRecord(
                            str(step.get("tool")), str(step.get("platform")), str(step.get("call_digest") or ""), rec
                        )
                    )
    return out


def is_rag_only(task: Mapping[str, Any]) -> bool:
    """hop type "RAG" (or, on rows without one, golden calls that are all retrieval searches)."""
    hop = task.get("hop_type")
    if hop is not None:
        return hop == "RAG"
    actions = task.get("golden_actions") or []
    return bool(actions) and all(a.get("source_type") == "retrieval" for a in actions)


def rag_answerable(task: Mapping[str, Any], records: Sequence[ApiRecord], min_chars: int) -> dict[str, Any] | None:
    """Rule (b): the first API record that holds the RAG-only task's answer value (a field equal to it) and a
    value the question names (a string field of 3+ characters, or a number of 4+ digits, found in the
    question as a whole word) → {"reason", "detail", "evidence"}; None when no record does (or the task is
    not RAG-only)."""
    if not is_rag_only(task):
        return None
    answer = (task.get("answer") or {}).get("value")
    answers = {normalize(f) for v in _scalars(answer) for f in value_forms(v)}
    answers = {a for a in answers if len(a) >= min_chars}
    if not answers:
        return None
    q = normalize(str(task.get("query") or ""))
    for r in records:
        vals = [v for v in _scalars(r.record) if not isinstance(v, dict | list)]
        forms = {normalize(f): v for v in vals for f in value_forms(v)}
        hit = next((a for a in sorted(answers) if a in forms), None)
        if hit is None:
            continue
        names = {
            normalize(f)
            for v in vals
            for f in value_forms(v)
            if normalize(f) != hit and len(normalize(f)) >= max(3, min_chars) and not _SHORT_NUMBER.fullmatch(f)
            and not (normalize(f).replace(",", "").replace(".", "").isdigit() and len(normalize(f)) < 4)
        }  # fmt: skip
        pat = _pattern(names, max(3, min_chars)) if names else None
        m = pat.search(q) if pat is not None else None
        if m:
            return {
                "reason": RAG_REASON,
                "detail": f"API {r.platform}/{r.tool} returned {hit!r} in a record naming {m.group(0)!r}, which the "
                f"question names (call {r.call_digest[:19]})",
                "evidence": r.call_digest or f"{r.platform}/{r.tool}",
            }
    return None
