"""The grounding check of a generated query (pure; EDGE Appendix J, Table 18 rules as code).

A query is grounded when
- it is non-empty and in the configured language;
- every concrete value it cites (numbers, quoted text, code-like tokens) is a seed
  argument or a process-node threshold;
- no bridge value (a value passed from one step to the next) appears;
- no API vocabulary appears: tool names, code-like field or parameter names
  (snake_case, camelCase, with digits), identifiers in code formatting, and
  words such as "API", "endpoint", "JSON", "parameter";
- EDGE Table 18's self-check items 3-5 and its memo rule: no parenthetical clarification copied from a
  tool description (one with a comma, or a long one found in a description), no repeated organisation
  prefix or phrase ("통계 항목 통계 항목"), no meta wording (tie-breaks, sorting, "the returned records"),
  no run of more than 30 characters copied from a description or a long memo-like seed value.

`grounding_problems` returns reason codes ("bridge_value:DL", ...); empty means grounded.
"""

import re
from collections.abc import Iterable
from typing import Any

from factory.llm.roles import language_problems
from factory.llm.rules import is_memo, mentions

JARGON = {
    "en": ["api", "apis", "endpoint", "endpoints", "json", "parameter", "parameters", "param", "schema",
           "field", "fields", "tool", "tools", "function call", "query string", "http", "payload"],
    "ko": ["API", "api", "엔드포인트", "파라미터", "매개변수", "필드", "스키마", "JSON", "json", "호출", "도구"],
}  # fmt: skip
_CODE_LIKE = re.compile(r"(_|[a-z][A-Z]|\d)")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?![\w])")
# a quotation opens and closes outside words: the apostrophes of "the album's artist … the album's title" quote nothing
_QUOTED = re.compile(r"(?<!\w)[\"“'‘`]([^\"”'’`]{1,80})[\"”'’`](?!\w)")
_CODE_TOKEN = re.compile(r"(?<![\w])([A-Z0-9]{2,6})(?![\w])")
_MIN_LEN = 2
_PAREN = re.compile(r"[(（]([^()（）]{1,200})[)）]")
# meta / processing wording (Table 18 item 5): how the system picks or orders results is never the user's concern
META = {
    "en": ["tie-break", "tie-breaking", "tiebreak", "tie break", "ties are broken", "sorted", "sorting",
           "sort order", "ascending", "descending", "returned records", "retrieved", "the returned", "result set",
           "result list", "first record", "response data"],
    "ko": ["동점", "정렬", "오름차순", "내림차순", "조회 결과", "응답 데이터", "반환", "결과 목록", "첫 번째 레코드"],
}  # fmt: skip
COPY_LIMIT = 30  # characters: a longer run copied from a description or memo is not the user's wording
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def code_like(identifier: str) -> bool:
    """snake_case, camelCase or with digits: an identifier no user would say."""
    return bool(_CODE_LIKE.search(identifier))


def description_words(texts: Iterable[str]) -> set[str]:
    """Words of the tool descriptions: acronyms there (IATA, FAA) are vocabulary, not cited values."""
    return {w for t in texts for w in re.findall(r"[A-Za-z0-9]+", t or "")}


def vocabulary(tool_names: Iterable[str], field_names: Iterable[str]) -> list[str]:
    """The identifiers a query must not contain: every tool name, and code-like field/param names."""
    out = set(tool_names)
    out.update(f.rsplit(".", 1)[-1] for f in field_names if code_like(f.rsplit(".", 1)[-1]))
    return sorted(out)


def _norm(v: Any) -> str:
    s = str(v).strip()
    if isinstance(v, float) and v.is_integer():
        s = str(int(v))
    return s.casefold()


def _num(s: str) -> float | None:
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return None


def _covered(token: str, allowed: Iterable[Any]) -> bool:
    t = token.casefold().replace(",", "")
    tn = _num(t)
    if tn is not None and any(_num(_norm(a)) == tn for a in allowed):
        return True
    for a in allowed:
        a_s = _norm(a).replace(",", "")
        if t == a_s or (len(t) >= 1 and re.search(rf"(?<![0-9a-z]){re.escape(t)}(?![0-9a-z])", a_s)):
            return True
    return False


def copied_run(text: str, sources: Iterable[str], limit: int = COPY_LIMIT) -> str | None:
    """The first run of more than `limit` characters of `text` (from a word start to a word end) that
    appears verbatim (case-insensitive, spaces normalized) in one of `sources`, else None."""
    t = " ".join(text.split())
    low = t.casefold()
    srcs = [" ".join(s.split()).casefold() for s in sources if s and len(s) > limit]
    if not srcs:
        return None
    starts = [m.start() for m in _WORD.finditer(t)]
    ends = [m.end() for m in _WORD.finditer(t)]
    for i in starts:
        for j in reversed(ends):
            if j - i <= limit:
                break
            piece = low[i:j]
            if any(piece in s for s in srcs):
                return t[i:j]
    return None


def self_check_problems(
    query: str, *, language: str, descriptions: Iterable[str] = (), prefixes: Iterable[str] = (),
    memo_values: Iterable[str] = (),
) -> list[str]:  # fmt: skip
    """Table 18 items 3-5 and the memo rule as reason codes: `parenthetical:…`, `repeated_prefix:…`,
    `repeated_phrase:…`, `meta_wording:…`, `copied_text:…`."""
    problems: list[str] = []
    descs = [d for d in descriptions if d]
    folded = [" ".join(d.split()).casefold() for d in descs]
    for m in _PAREN.finditer(query):
        inner = m.group(1).strip()
        if "," in inner or "，" in inner or (len(inner) > 10 and any(inner.casefold() in d for d in folded)):
            problems.append(f"parenthetical:{inner[:40]}")
    low = query.casefold()
    for p in {p.strip() for p in prefixes if p and len(p.strip()) >= 4}:
        if len(re.findall(rf"(?<!\w){re.escape(p.casefold())}(?!\w)", low)) >= 2:
            problems.append(f"repeated_prefix:{p}")
    rep = re.search(r"(?<!\w)([^\W\d_]{2,}(?:\s+[^\W\d_]{2,}){0,3})\s+\1(?!\w)", query, re.IGNORECASE)
    if rep and len(rep.group(1)) >= 4:
        problems.append(f"repeated_phrase:{rep.group(1)}")
    for w in META.get(language, []):
        if mentions(query, w):
            problems.append(f"meta_wording:{w}")
            break
    copied = copied_run(query, [*descs, *(v for v in memo_values if is_memo(v))])
    if copied:
        problems.append(f"copied_text:{copied[:40]}")
    return problems


def grounding_problems(
    query: str,
    *,
    language: str,
    allowed_values: Iterable[Any] = (),
    bridge_values: Iterable[Any] = (),
    forbidden_identifiers: Iterable[str] = (),
    plain_field_names: Iterable[str] = (),
    vocabulary_words: Iterable[str] = (),
    descriptions: Iterable[str] = (),
    prefixes: Iterable[str] = (),
) -> list[str]:
    """Reason codes of everything wrong with `query` (empty list: grounded). `descriptions` (tool, parameter
    and field descriptions) and `prefixes` (organisation / platform prefixes of tool names) enable the
    self-check items (`self_check_problems`)."""
    problems = [f"language:{p}" for p in language_problems(query, language)]
    if problems and not query.strip():
        return ["empty_query"]
    allowed_values = list(allowed_values)
    problems += self_check_problems(
        query, language=language, descriptions=descriptions, prefixes=prefixes, memo_values=allowed_values
    )
    allowed = [a for a in allowed_values if a is not None and str(a).strip()]
    allowed_norm = {_norm(a) for a in allowed}
    for v in bridge_values:
        if v is None or len(str(v).strip()) < _MIN_LEN or _norm(v) in allowed_norm:
            continue
        if mentions(query, v if isinstance(v, str) else str(v)):
            problems.append(f"bridge_value:{v}")
    for ident in forbidden_identifiers:
        if ident and re.search(rf"(?<![0-9A-Za-z_]){re.escape(ident)}(?![0-9A-Za-z_])", query, re.IGNORECASE):
            problems.append(f"api_vocabulary:{ident}")
    for name in plain_field_names:  # plain-word field names only count in code formatting: `name`, name=, name:
        if re.search(rf"`{re.escape(name)}`|(?<![\w]){re.escape(name)}\s*[=:]\s*\S", query):
            problems.append(f"api_vocabulary:{name}")
    for word in JARGON.get(language, []) + (JARGON["en"][:4] if language == "ko" else []):
        if mentions(query, word):
            problems.append(f"api_vocabulary:{word}")
            break
    cited = [m.group(0) for m in _NUMBER.finditer(query)]
    cited += [m.group(1) for m in _QUOTED.finditer(query)]
    words = {w.casefold() for w in vocabulary_words}
    cited += [
        m.group(1)
        for m in _CODE_TOKEN.finditer(query)
        if not m.group(1).isdigit() and m.group(1).casefold() not in words
    ]
    for c in cited:
        if not _covered(c, allowed):
            problems.append(f"uncited_value:{c}")
    return sorted(set(problems))
