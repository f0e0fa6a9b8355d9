"""Natural labels for tools, parameters and fields, taken from their descriptions (pure).

A query names things the way a user would: 'airline name', 'departure delay in minutes',
'기준 연도' — never `carrier` or `sigunguCd`.  Labels come from the first clause of a
description with examples, parentheses, code spans and filter boilerplate removed; when a
description yields nothing usable the identifier is split into words.
"""

import re

from factory.tools.observed import OBSERVED_DESCRIPTION  # the placeholder of an inferred field: no label
from factory.tools.spec import ToolSpec

_PAREN = re.compile(r"\s*[\(（\[][^)）\]]*[\)）\]]")
_CODE = re.compile(r"`[^`]*`")
_LEAD_EN = re.compile(
    r"^(only\s+.*?\bthis\s+|part of (the|an?)\s+|the\s+|an?\s+|filter by\s+|name of (the|an?)\s+new\s+)",
    re.IGNORECASE,
)
_VERB_EN = re.compile(r"^(list|get|search|find|show|look up|fetch|return|retrieve)\s+(an?\s+|the\s+)?", re.IGNORECASE)
_VERB_KO = re.compile(r"\s*(목록\s*)?(조회|검색|발급)$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


# Korean descriptions of filters: '이 통계 유형의 항목만 조회' → '통계 유형', '시도명의 일부로 결과 제한' → '시도명',
# '검색할 행정구역 이름' → '행정구역 이름'
_FILTER_KO = (
    (re.compile(r"^이\s+(.+?)의\s+\S+만\s+(조회|검색)$"), r"\1"),
    (re.compile(r"^(.+?)의\s+일부로\s+.*$"), r"\1"),
    (re.compile(r"^(검색할|조회할)\s+"), ""),
)
# words no one says aloud in a question: standard numbers ('ISO 3166-1 alpha-2'), ranges ('0-23'), formats
_NOISE = re.compile(r"\bISO\s+[\d-]+(\s+alpha-\d)?\s*|\s*\b[\w-]*\d[\w-]*\b|\s*\bYYYY-MM-DD\b")
_ATLEAST = re.compile(r"^only\s+.*?\bat least this many\s+(.+)$", re.IGNORECASE)


def _clause(desc: str) -> str:
    s = _CODE.sub("", _PAREN.sub("", desc or "")).strip()
    s = _ATLEAST.sub(r"minimum number of \1", s)
    s = re.split(r"(?<=[a-z가-힣\)])\.\s|[;:]|,\s*(e\.g\.|예:|for example)|,\s|\be\.g\.|예:", s)[0]
    s = re.sub(r"\s+(from|of|in|for|with|use with)\s+\w*_\w*.*$", "", s)  # '... from search_artists'
    s = " ".join(w for w in s.split() if "_" not in w)
    s = s.strip(" .,")
    for pat, rep in _FILTER_KO:
        s = pat.sub(rep, s)
    s = _NOISE.sub("", s).strip(" .,-")
    return re.sub(r"\s+(in|of|on|at|for|from|to|with|between)$", "", s)


def words(identifier: str) -> str:
    return " ".join(w.lower() for w in re.split(r"[_\W]+", _CAMEL.sub(" ", identifier)) if w)


def param_label(spec: ToolSpec, param: str) -> str:
    s = _LEAD_EN.sub("", _clause(str(spec.params.get(param, {}).get("description", ""))))
    s = _LEAD_EN.sub("", s).strip()
    return _lower_first(s) if 0 < len(s) <= 40 else words(param)


def field_label(spec: ToolSpec, field: str) -> str:
    f = spec.output_fields.get(field)
    desc = f.description if f and f.description != OBSERVED_DESCRIPTION else ""
    s = _LEAD_EN.sub("", _clause(desc)).strip()
    return _lower_first(s) if 0 < len(s) <= 40 else words(field)


def tool_noun(spec: ToolSpec) -> str:
    """'List flights.' → 'flights'; '센서스 통계 조회.' → '센서스 통계'."""
    first = re.split(r"\.\s|\.$|:\s", spec.description.strip(), maxsplit=1)[0]
    s = _VERB_KO.sub("", _VERB_EN.sub("", _PAREN.sub("", first))).strip(" .")
    s = re.sub(r"\s+by\s+.*$", "", s)
    # too long or empty: the tool's name without its verb ('list_allowed_directories' → 'allowed directories')
    return _lower_first(s) if 0 < len(s) <= 40 else _VERB_EN.sub("", words(spec.name))


def _lower_first(s: str) -> str:
    if len(s) > 1 and s[0].isupper() and not s[1].isupper():
        return s[0].lower() + s[1:]
    return s
