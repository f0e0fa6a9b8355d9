"""How a person would ask a verified question: which split tasks become conversations (issue 19, naturalness).

A verified task's query is written from its chain, so a long chain reads as a nested field path ("the latitude
in degrees of the airport with the highest latitude in degrees among the airports with the same country …").
Nobody types that into a chat. `askability` measures a query by two simple signals:

- nesting: the hops the sentence spells out (English: "of the/its/their …", "among", "whose", "with the same",
  "as the"; Korean: "의", "중", "같은", "속한", "이름이 같은");
- field labels: database words a person does not use for what they ask about ("records", "grouped by",
  "통계의 수", a unit stated after a field: "duration in milliseconds").

It sorts a query into `short` (any persona may ask it), `medium` (only an unhurried persona at ease with
computers asks it) or `None` (skipped: the reason says why). Conditional questions whose branch is false by
construction ("The condition does not hold") are skipped, as is any conditional for a hurried or low-literacy
persona. `speakable` drops the units a user would not say ("unit price in USD" → "unit price").
"""

import re
from collections.abc import Mapping
from typing import Any

# English hops: a determiner after "of" marks a nested entity ("of the albums", "of its artist").
_EN_HOPS = re.compile(
    r"\b(?:of (?:the|its|their|those|each)|among|whose|with the same|as the|in the group of|grouped by)\b", re.I
)
_EN_LABELS = re.compile(
    r"\b(?:records?|grouped by|origin-destination|statistics|whose number of|number of \w+ is (?:at|more|less)"
    r"|of the reference|maximum number of [\w ]+ returned|whose \w+ is (?:at|more|less)"  # a parameter read out
    r"|in (?:kilometres|kilometers|metres|meters|miles|seconds|minutes|hours|days) \d+)\b",  # 'in kilometres 100'
    re.I,
)
_EN_UNITS = re.compile(
    r"\s+in (?:degrees|milliseconds|seconds|minutes|USD|EUR|°F|°C|km|kilometers|meters|feet|bytes|percent)\b"
)
_EN_COUNTS_A_NAME = re.compile(r"\bhow many ([a-z]+) ([A-Z0-9][\w.&'-]*)")
_KO_HOPS = re.compile(r"(?:의\s|\s중\s|같은\s|속한\s|이름이 같은)")
_KO_LABELS = re.compile(r"(?:통계의 수|통계 수|레코드|행의 수)")

SHORT, MEDIUM = "short", "medium"
LIMITS = {  # (hops, words) at most, per level and language (Korean counts eojeol)
    "en": {SHORT: (1, 18), MEDIUM: (1, 30)},  # two hops in English read as a chained relation (blind read s8)
    "ko": {SHORT: (1, 9), MEDIUM: (2, 14)},
}


def hops(query: str, language: str) -> int:
    """Nested hops the sentence spells out."""
    return len((_KO_HOPS if language == "ko" else _EN_HOPS).findall(query + " "))


def labels(query: str, language: str) -> list[str]:
    """Database words in the sentence."""
    found = (_KO_LABELS if language == "ko" else _EN_LABELS).findall(query)
    return sorted({f.lower() for f in found})


def speakable(query: str, language: str) -> str:
    """The question as a user would type it: units after field names left out (the answer states them)."""
    if language == "ko":
        return query
    return _EN_UNITS.sub("", query)


# A type label before a name or code ("the artist Accept", "airline EV", "country KR"): people say the name.
# Tracks and albums keep theirs ("the track 'Snowballed'" is how people refer to a song title).
_EN_LABEL_BEFORE_NAME = re.compile(
    r"\b(?:(?:the|The) )?(?i:artist|airline|airport|customer|playlist|country|subdivision|aircraft|genre) "
    r"(?=(?:[A-Z0-9][\w.&/()-]*|'[^']+'))"
)


# "이름이 창성동인 읍면동의 시군구" stacks 의 (blind read s8): "창성동이 있는 시군구" is how people say it.
_KO_NAMED_PLACE = re.compile(r"이름이 (\S+?)인 (?:법정 )?(?:읍면동|시군구|시도|리)의 ")
_KO_NAMED_IN = re.compile(r"이름이 (\S+?)인 (?:법정 )?(?:읍면동|시군구|시도|리)(?:이|가) 속한 ")


def plain_korean(text: str) -> str:
    """Korean text with a place named by its 이름 said the way people do ('이름이 X인 읍면동의 시군구' → 'X이 있는 시군구',
    '이름이 X인 읍면동이 속한 시군구' → 'X이 속한 시군구'), and the code book's '시·도' typed as '시도'."""
    from factory.prompts import josa

    out = _KO_NAMED_PLACE.sub(lambda m: f"{josa(m.group(1), '이/가')} 있는 ", text)
    out = _KO_NAMED_IN.sub(lambda m: f"{josa(m.group(1), '이/가')} 속한 ", out)
    for dotted, typed in _KO_TYPED:  # '시·도' is a document's spelling; in a chat people type '시도' (r2 #2)
        out = out.replace(dotted, typed)
    return out


_KO_TYPED = (("시·군·구", "시군구"), ("읍·면·동", "읍면동"), ("시·도", "시도"))


def plain_names(text: str) -> str:
    """English text without type labels before names and codes; a sentence keeps its capital."""
    out = _EN_LABEL_BEFORE_NAME.sub("", text)
    return out[:1].upper() + out[1:] if text[:1].isupper() else out


# a named 구 or 군 said only to reach the 시도 it lies in ('성동구가 속한 시도의 …'): nobody asks which 시도 holds a 구
# they can name; a 동 or 리 may be (that is a lookup people do)
_KO_KNOWN_CONTAINER = re.compile(r"[가-힣]+[구군](?:이|가) 속한 시(?:·)?도")


def askability(task: Mapping[str, Any]) -> tuple[str | None, str]:
    """(`short` | `medium` | None, why) for a verified task's query."""
    lang = task.get("language", "en")
    query = str(task.get("query") or "")
    answer = task.get("answer") or {}
    frame = answer.get("frame") or {}
    if frame.get("pattern") == "IF" or answer.get("branch"):
        if answer.get("branch") != "then":
            return None, "conditional whose condition does not hold"
        if lang != "ko":  # "Are there at least 4 …? If yes, tell me …; if no, …" reads as an exam in a chat
            return None, "conditional question (an exam form, blind read s8)"
        conditional = True
    else:
        conditional = False
    n = hops(query, lang)
    words = len(speakable(query, lang).split())
    found = labels(query, lang)
    if found:
        return None, f"database wording ({', '.join(found)})"
    named = _EN_COUNTS_A_NAME.search(query) if lang != "ko" else None
    if named and not named.group(1).endswith("s") and named.group(1) not in ("aircraft", "people"):
        return None, f"counts a named thing ('how many {named.group(1)} {named.group(2)}')"
    if lang == "ko" and _KO_KNOWN_CONTAINER.search(
        query
    ):  # '성동구가 속한 시도의 구 수': people name 서울 (s17 r1 #14)
        return None, "asks through the 시도 of a named 구·군 (a person names the 시도)"
    options = [str(o) for o in frame.get("options") or []]
    if any(re.fullmatch(r"[\d.,]+|[a-z][a-z ]* \d[\d.]*", o) for o in options):
        return None, "compares argument values, not things ('120.7' against 'radius 100')"
    limits = LIMITS["ko" if lang == "ko" else "en"]
    for level in (SHORT, MEDIUM):
        max_hops, max_words = limits[level]
        if n <= max_hops and words <= max_words:
            return (MEDIUM if conditional else level), f"{n} hops, {words} words"
    return None, f"reads as a field path ({n} hops, {words} words)"


def fits(level: str, persona: Mapping[str, str], language: str) -> bool:
    """Whether a persona would ask a question of this level: a hurried or low-literacy one asks short ones."""
    if level == SHORT:
        return True
    if language == "ko":
        return persona.get("스타일") != "급함" and persona.get("디지털 활용") != "낮음"
    return persona.get("style") != "hurried" and persona.get("digital_literacy") != "low"


def fitted(persona: Mapping[str, str], level: str, language: str) -> dict[str, str]:
    """The persona, made unhurried and at ease with computers when the question is not short."""
    out = dict(persona)
    if fits(level, out, language):
        return out
    if language == "ko":
        out.update({"스타일": "느긋함", "디지털 활용": "높음"})
    else:
        out.update({"style": "relaxed", "digital_literacy": "high"})
    return out
