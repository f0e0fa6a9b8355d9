"""The grounding check of a generated query (pure; EDGE Appendix J, Table 18 rules as code).

A query is grounded when
- it is non-empty and in the configured language;
- every concrete value it cites (numbers, quoted text, code-like tokens) is a seed
  argument or a process-node threshold;
- no bridge value (a value passed from one step to the next) appears;
- no API vocabulary appears: tool names, code-like field or parameter names
  (snake_case, camelCase, with digits), identifiers in code formatting, and
  words such as "API", "endpoint", "JSON", "parameter".

`grounding_problems` returns reason codes ("bridge_value:DL", ...); empty means grounded.
"""

import re
from collections.abc import Iterable
from typing import Any

from factory.llm.roles import language_problems
from factory.llm.rules import mentions

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


def grounding_problems(
    query: str,
    *,
    language: str,
    allowed_values: Iterable[Any] = (),
    bridge_values: Iterable[Any] = (),
    forbidden_identifiers: Iterable[str] = (),
    plain_field_names: Iterable[str] = (),
    vocabulary_words: Iterable[str] = (),
) -> list[str]:
    """Reason codes of everything wrong with `query` (empty list: grounded)."""
    problems = [f"language:{p}" for p in language_problems(query, language)]
    if problems and not query.strip():
        return ["empty_query"]
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
