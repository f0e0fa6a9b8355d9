"""Chat wording of a verified question and its gold reply (issue 19, blind read s9).

A verified task's query is written from its chain, and its answer sentence from the answer frame; both are sound,
but a person typing into a chat says them differently. These rewrites keep the meaning (the same calls, the same
answer) and change only the surface:

- `clear_cutoffs`: a date cut-off taken from the data ("dated after 2008-06-12", where 2008-06-12 is itself an
  invoice date) reads either way; the question says the first day that counts ("dated 2008-06-13 or later").
- `possessives` (English): "the invoices of Luís Gonçalves" → "Luís Gonçalves's invoices".
- `there_are_last` (English): "how many airports in the same state as JFK there are" → "how many airports there
  are in the same state as JFK" (a long noun phrase before "there are" reads as a form).
- `chat_difference` (English): a DIFF question in the form "How far apart are A and B in the number of X?" asked
  as a person would ("Which has more X, A or B, and by how many?").
- `named_reply`: an answer sentence that names nothing the user asked about ("There are 316 flights.") names the
  entity the chain went through ("… N15980 is the aircraft.") or the one the user gave.
- `skeleton`: the question with its names, codes and numbers masked, so that near-duplicates in one split can be
  told apart from different questions.
"""

import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from factory.frames import plural
from factory.prompts import josa
from factory.synthesis.answers import _one_of

_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


def _next_day(value: Any) -> tuple[str, str] | None:
    m = _DATE.match(str(value or ""))
    if m is None:
        return None
    try:
        day = dt.date.fromisoformat(m.group(1))
    except ValueError:
        return None
    return m.group(1), (day + dt.timedelta(days=1)).isoformat()


def clear_cutoffs(text: str, junctions: Sequence[Mapping[str, Any]], language: str) -> str:
    """The question with each strict date cut-off of its junctions (`date_after`: records strictly after the
    threshold, a value the data holds) said as the first day that counts."""
    out = text
    for j in junctions:
        process = j.get("process") or {}
        if process.get("operator") != "date_after":
            continue
        days = _next_day(process.get("threshold"))
        if days is None:
            continue
        day, first = days
        if language == "ko":  # '이후' includes its day in Korean: the first day that counts
            out = re.sub(rf"{re.escape(day)}(?: 00:00:00)?(\s*)이후", rf"{first}\1이후", out)
        else:
            out = re.sub(rf"\bafter {re.escape(day)}(?: 00:00:00)?\b", f"{first} or later", out)
    return out


_NAME = r"(?:[A-Z0-9][\w.&/()-]*(?: (?:[A-Z0-9&][\w.&/()-]*|\([A-Z][^)]*\)|de|da|do|of the))*)"
# a name that goes on into a possessive word is the owner's start, not the owner ('the origin airports of JetBlue
# Airways' routes' had become "JetBlue's origin airports Airways' routes": s17 demo)
_OWNED = re.compile(
    rf"\b[Tt]he ((?:[a-z]+ )?[a-z]+) of ({_NAME}|that [a-z]+)(?=[\s?.,;:!]|$)(?!\s+[A-Z0-9][\w.&/()-]*'s?(?:\s|$))"
)
_NOT_OWNED = frozenset({"number", "total", "difference", "same", "sum", "count", "one", "group", "gap", "rest"})


_ABBREVIATION = re.compile(r"\b(?:Inc|Co|Corp|Ltd|Jr|Sr|St|Bros)\.$")


def _possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") and not name.endswith("ss") else f"{name}'s"


def possessives(text: str) -> str:
    """English: 'the <noun> of <Name>' → '<Name>'s <noun>' (the time zone of AMK → AMK's time zone)."""

    def swap(m: re.Match[str]) -> str:
        noun, name, tail = m.group(1), m.group(2), ""
        if name.endswith(".") and not _ABBREVIATION.search(name):
            name, tail = name[:-1], "."  # the sentence's full stop
        if any(w in _NOT_OWNED for w in noun.split()) or " or " in f" {noun} " or name.endswith("."):
            return m.group(0)  # 'Inc.' at a sentence end: the full stop is also the sentence's
        if name.endswith(")"):  # "Battlestar Galactica (Classic)'s albums" reads as a query (blind read s11 #7)
            return m.group(0)
        return f"{_possessive(name)} {noun}{tail}"

    return _OWNED.sub(swap, text)


_THERE_ARE = re.compile(
    r"\bhow many ([a-z]+(?: [a-z]+)?) ((?:in|within|from|with|on|at|near|of|dated|whose)\b[^?]*?) there are\b",
    re.I,
)


_FROM_HOW_MANY = re.compile(r"^From how many ([a-z]+) (?:have|has|did) ([a-z]+) ([a-z]+) (.+)\?$")


def from_how_many(text: str) -> str:
    """'From how many countries have customers bought tracks by X?' (a fronted preposition: a form's wording, not a
    chat's: blind s14 #18, #19) as people ask it: 'In how many countries have customers bought tracks by X?' ('How
    many countries do customers who bought tracks by X come from?' read as a join in words: s17 r3 #17). Other
    questions stay as they are."""
    m = _FROM_HOW_MANY.match(text.strip())
    if m is None:
        return text
    things, who, did, rest = m.groups()
    return f"In how many {things} have {who} {did} {rest}?"


def there_are_last(text: str) -> str:
    """English: 'how many <noun> <modifier> there are' → 'how many <noun> there are <modifier>'."""
    return _THERE_ARE.sub(lambda m: f"{m.group(0)[:8]} {m.group(1)} there are {m.group(2)}", text)


_STILTED_DIFF = re.compile(r"^(?:How far apart are|What is the difference between|How big is the gap between)\b")


_WHICH_KIND = re.compile(r"^Which [a-z]+ has more [a-z ]+, .+ or .+, and by how many\?$")
_WHICH_OR = re.compile(r"^(?P<a>.+?) or (?P<b>.+?): which (?:one )?has more (?P<n>[a-z ]+), and by how many\?$")


def chat_difference(query: str, frame: Mapping[str, Any], variant: int = 0) -> str | None:
    """English DIFF question as a person asks it, from its frame (two options, what is counted), in one of several
    forms (`variant`): no one form is shared by many conversations (blind read s11 r2 #17, #19: every parallel
    one read "X or Y: which has more albums, and by how many?"). None when the query is not one of the stilted or
    templated forms or the counted thing is not one the forms can say."""
    said = _WHICH_OR.match(query)
    asked = frame.get("pattern") == "DIFF" and (_STILTED_DIFF.match(query) or said)
    # 'Which airport has more routes, JFK or LGA, and by how many?': one form for every such question (s18 r1 #1, #16)
    which = frame.get("pattern") == "WHICH" and frame.get("qualifier") == "more" and _WHICH_KIND.match(query)
    if not (asked or which):
        return None
    options = [str(o) for o in frame.get("options") or []]
    what = " ".join(str(frame.get("description") or "").split())
    if len(options) != 2 or not what:
        return None
    a, b = options
    if said and {said.group("a"), said.group("b")} == {a, b}:
        a, b = said.group("a"), said.group("b")  # the order the question gave
    theirs = re.fullmatch(r"([a-z]+) of their ([a-z]+)", what)
    each = re.fullmatch(r"([a-z]+(?: [a-z]+)?) within (\d+ \w+) of each", what)
    if theirs:
        n, m = theirs.groups()
        forms = [f"Whose {m} have more {n} in total, {a} or {b}? And by how many?",
                 f"{a} vs {b}: whose {m} have more {n}, and by how many?",
                 f"Counting all their {m}, who has more {n}, {a} or {b}? How many more?",
                 f"I'm comparing {a} and {b}. Whose {m} add up to more {n}, and what's the difference?"]  # fmt: skip
    elif its := re.fullmatch(r"([a-z]+) of its ([a-z]+)", what):
        n, m = its.groups()
        a, b = (re.sub(r"^the [a-z]+ (?=')", "", o) for o in (a, b))
        forms = [f"{a} or {b}: which one's {m} has more {n}, and by how many?",
                 f"Whose {m} has more {n}, {a} or {b}? And by how many?",
                 f"Which {m} has more {n}: the one with {a} or the one with {b}? By how many?",
                 f"I'm comparing the {m}s of {a} and {b}. Which has more {n}, and how many more?"]  # fmt: skip
    elif each:
        n, dist = each.groups()
        forms = [f"Which has more {n} within {dist}, {a} or {b}? And by how many?",
                 f"{a} vs {b}: which one has more {n} within {dist}, and by how many?",
                 f"Are there more {n} within {dist} of {a} or of {b}? How many more?",
                 f"I'm choosing between {a} and {b}. Which has more {n} within {dist}, and what's the difference?"]  # fmt: skip
    elif re.fullmatch(r"[a-z]+(?: (?:in|from|at|of|flown by) [A-Z0-9][\w-]*)?", what):
        forms = [f"Which has more {what}, {a} or {b}? And by how many?",
                 f"{a} vs {b}: which one has more {what}, and by how many?",
                 f"Does {a} have more {what} than {b}, or is it the other way round? By how many?",
                 f"I'm comparing {a} and {b}. Which one has more {what}, and how many more?",
                 f"Between {a} and {b}, which has more {what}? What's the gap?",
                 f"Do {a} and {b} have the same number of {what}? If not, which has more, and by how many?"]  # fmt: skip
    else:
        return None
    return forms[variant % len(forms)]


def named_reply(text: str, *, entity: str = "", entity_noun: str = "", anchor: str = "") -> str:
    """An English answer sentence that names nothing the user asked about, naming what it is about: the entity
    the chain selected (`entity`, a `entity_noun`: 'There are 316 flights; the aircraft is N15980.') or the one
    the user gave (`anchor`: 'There are 32 invoice lines for Luís Gonçalves.')."""
    t = text[:-1] if text.endswith(".") else text
    if entity and entity_noun:
        return f"{t}. The {entity_noun} in question is {entity}."
    if anchor:
        return f"{t} for {anchor}."
    return text


def selected_entity(task: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(tool_id-less tool name, parameter, value) of the entity a DRV max/min junction selected (one record out of
    several), read off the golden call that received it; None when the chain selects nothing that way."""
    for j in task.get("junctions") or []:
        process = j.get("process") or {}
        if process.get("operator") not in ("max", "min") or process.get("n_out") != 1 or (process.get("n_in") or 0) < 2:
            continue
        to = str(j.get("to") or "")
        tool, _, params = to.partition(".")
        if "+" in params or not params:
            continue
        values = {
            str(a["args"][params])
            for a in task.get("golden_actions") or []
            if a.get("tool") == tool and params in (a.get("args") or {})
        }
        if len(values) == 1:
            return tool, params, values.pop()
    return None


_MASK = re.compile(
    r"'[^']+'|\"[^\"]+\"|\b\d[\d.,:-]*\b|"
    + _NAME
    + r"|[가-힣]+(?:특별시|광역시|특별자치시|특별자치도|도|시|군|구|동|읍|면|리)\b"
)


def skeleton(text: str, values: Iterable[Any] = ()) -> str:
    """The question with its values (`values`: seeds, options), quoted titles, numbers and names masked; case and
    spacing folded. Two questions with one skeleton ask the same thing about (maybe) different things."""
    out = text
    for v in sorted((str(v) for v in values if str(v or "").strip()), key=len, reverse=True):
        out = out.replace(v, "\x00")
    out = _MASK.sub("\x00", out)
    return " ".join(out.replace("\x00", "<x>").casefold().split())


_KO_PLACE_SUFFIX = {"시군구": ("구", "군", "시"), "읍면동": ("동", "읍", "면"), "시도": ("도",)}


def spoken_korean_noun(value: str, noun: str) -> str:
    """The word people use for a Korean place kind: '구' for 중구 rather than the code-book '시군구'."""
    for suffix in _KO_PLACE_SUFFIX.get(noun, ()):
        if str(value).endswith(suffix) and len(str(value)) > len(suffix):
            return suffix
    return noun


_EMBEDDED = re.compile(
    r"^(?:Could you find out|Can you count|Could you count|Do you know|Can you tell me|Could you tell me) "
    r"how many ([a-z]+(?: [a-z]+)?) there (are|is)\b(.*)$"
)
# "Please tell me how many tracks the album containing 'Lavadeira' has." → "How many tracks does the album … have?"
_EMBEDDED_HAS = re.compile(
    r"^(?:Please tell me|Tell me|Could you tell me|Can you tell me|Do you know|Could you find out|I wonder|"
    r"I'd like to know) how many ([a-z]+(?: (?!(?:the|a|an|this|that|my|our|their|its)\b)[a-z]+)?) (.+?) (has|have)[.?]$"
)
_PREAMBLE = re.compile(r"^(?:I'm curious: |I'm curious, |I was wondering: |Two things: )")
_CONTRACTIONS = (("What is ", "What's "), ("Who is ", "Who's "), ("How many are there", "How many are there"),
                 ("I would ", "I'd "), (" do not ", " don't "), (" does not ", " doesn't "))  # fmt: skip


def styled_english(text: str, persona: Mapping[str, str]) -> str:
    """An English request in the persona's way of typing: a hurried user drops the preamble and asks directly
    ('How many airports are there in …?'), a casual one uses contractions."""
    out = text
    if persona.get("style") == "hurried":
        out = _PREAMBLE.sub("", out)
        m = _EMBEDDED.match(out)
        if m is not None:
            out = f"How many {m.group(1)} {m.group(2)} there{m.group(3)}"
        h = _EMBEDDED_HAS.match(out)
        if h is not None:  # asked straight, as a hurried person types it (own read s13)
            out = f"How many {h.group(1)} {'does' if h.group(3) == 'has' else 'do'} {h.group(2)} have?"
        out = out[:1].upper() + out[1:]
    if persona.get("register") == "casual":
        for formal, casual in _CONTRACTIONS:
            out = out.replace(formal, casual)
        if out.startswith(_FLAT_ASK):  # 'Please tell me how many …' is a form's voice, not a casual user's (s16 r2 #4)
            ask = _CASUAL_ASKS[int(hashlib.sha256(out.encode()).hexdigest()[:8], 16) % len(_CASUAL_ASKS)]
            rest = out[len(_FLAT_ASK) :].rstrip(".")
            out = f"{ask}{rest}?"
    return out


_FLAT_ASK = "Please tell me "
_CASUAL_ASKS = ("Any idea ", "Can you tell me ", "Do you happen to know ", "Could you check ")


_DIFF_SAID = re.compile(
    r"^The difference is (?P<d>[\d.,]+): (?P<a>[\d.,]+) for (?P<x>.+?) against (?P<b>[\d.,]+) for (?P<y>.+)\.$"
)


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def difference_reply(text: str) -> str:
    """An English DIFF answer sentence with the option that has more first ('The Office has more, by 2: 3 against
    1.'), so the reply answers 'which one, and by how many' at once; the sentence itself when it is not one."""
    m = _DIFF_SAID.match(text)
    if m is None:
        return text
    a, b = _number(m["a"]), _number(m["b"])
    if a is None or b is None or a == b:
        return text
    (win, hi), lo = ((m["x"], m["a"]), m["b"]) if a > b else ((m["y"], m["b"]), m["a"])
    return f"{win[:1].upper()}{win[1:]} has more, by {m['d']}: {hi} against {lo}."


_JARGON = (
    (re.compile(r"\bwith the same country and subdivision as\b"), "in the same state or province as"),
    (re.compile(r"\bsharing its country and subdivision\b"), "in its state or province"),
    (re.compile(r"\bin the same country and subdivision\b"), "in the same state or province"),
)


_PLAIN_NOUNS = {"subdivision": "state or province"}


def plain_noun(noun: str) -> str:
    """English: a code-book noun as people say it ('subdivision' → 'state or province')."""
    return _PLAIN_NOUNS.get(noun, noun)


def plain_terms(text: str) -> str:
    """English: code-book words said as people say them ('with the same country and subdivision as EWR' → 'in the
    same state or province as EWR': the subdivision is the first-level region within the country)."""
    for pattern, said in _JARGON:
        text = pattern.sub(said, text)
    return text


_KO_QUALIFIER = re.compile(r"\((\S+(?: \S+)*?) (포함|단위|기준)\)")
_KO_AFTERTHOUGHT = {"포함": "{x}도 포함해서요.", "단위": "{x} 단위로 세서요.", "기준": "{x} 기준으로요."}
_KO_LEGAL = re.compile(r"법정 (읍면동|동)")


def spoken_korean_qualifiers(text: str) -> str:
    """A Korean request with its code-book qualifiers said the way a person adds them, after the question: a
    parenthetical '시군구(일반구 포함)' becomes '시군구 … ? 일반구도 포함해서요.', and '법정 읍면동' becomes '읍면동 … ?
    법정동 기준으로요.' (the count stays the legal one; the user says so once, as an afterthought)."""
    out: list[str] = []
    for sentence in re.findall(r"[^.?!]+[.?!]?\s*", text):
        later: list[str] = []
        for m in _KO_QUALIFIER.finditer(sentence):
            said = _KO_AFTERTHOUGHT[m.group(2)].format(x=m.group(1))
            if said not in later:
                later.append(said)
        body = _KO_QUALIFIER.sub("", sentence)
        if _KO_LEGAL.search(body):
            body = _KO_LEGAL.sub(r"\1", body)
            later.append("법정동 기준으로요.")
        end = len(body) - len(body.rstrip())
        out.append(body.rstrip() + "".join(" " + x for x in later) + body[len(body) - end :] if later else body)
    return "".join(out).strip()


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?: 00:00:00)?\b")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")  # fmt: skip


def spoken_dates(text: str, language: str) -> str:
    """A request's ISO days as people write them ('2008-06-13' → 'June 13, 2008', '2008년 6월 13일'); a string
    that is not a real day stays as it is."""

    def say(m: re.Match[str]) -> str:
        try:
            day = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return m.group(0)
        if language == "ko":
            return f"{day.year}년 {day.month}월 {day.day}일"
        return f"{_MONTHS[day.month - 1]} {day.day}, {day.year}"

    return _ISO_DAY.sub(say, text)


_KO_WHICH_THEN = re.compile(
    r"^(?P<pre>.*?)(?P<clause>\S+ 가장 (?:많은|적은|큰|작은|높은|낮은|긴|짧은)) (?P<noun>[가-힣]+)의 (?P<field>[^?]+?)(?:은|는) "
    r"(?:무엇인가요|무엇입니까)\?(?P<rest>.*)$"
)


def which_then(text: str) -> str | None:
    """A Korean request for a field of the entity a superlative picks, asked the way people do: which one first,
    then its field ('… 인구가 가장 많은 시군구의 코드는 무엇인가요?' → '… 인구가 가장 많은 시군구가 어디인가요? 그 시군구의 코드도
    알려 주세요.'); None when the request is not of that form. The reply must then name the entity (`found`)."""
    from factory.prompts import josa

    m = _KO_WHICH_THEN.match(text)
    if m is None:
        return None
    noun = m["noun"]
    return (
        f"{m['pre']}{m['clause']} {josa(noun, '이/가')} 어디인가요? 그 {noun}의 {m['field']}도 알려 주세요.{m['rest']}"
    )


_TZ = re.compile(r"\b((?:America|Pacific|Asia)/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)\b(?! \()")
# (zone region, the zone's winter abbreviation) → the name people say; 'CST' is also China's, so the region decides
_TZ_SAID = {
    ("America", "EST"): "Eastern Time", ("America", "CST"): "Central Time", ("America", "MST"): "Mountain Time",
    ("America", "PST"): "Pacific Time", ("America", "AKST"): "Alaska Time", ("America", "AST"): "Atlantic Time",
    ("America", "NST"): "Newfoundland Time", ("America", "HST"): "Hawaii-Aleutian Time",
    ("Pacific", "HST"): "Hawaii Time", ("Asia", "KST"): "Korea Standard Time", ("Asia", "JST"): "Japan Standard Time",
}  # fmt: skip


def spoken_time_zones(text: str, language: str) -> str:
    """An English reply's time zone ids said as people name them, the id kept beside it ('America/Chicago' →
    'Central Time (America/Chicago)': blind s16 conversations r2 #16); a zone without a common name stays as it is."""
    if language != "en":
        return text

    def say(m: re.Match[str]) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            abbreviation = dt.datetime(2013, 1, 15, tzinfo=ZoneInfo(m.group(1))).tzname()
        except (ZoneInfoNotFoundError, ValueError):
            return m.group(0)
        name = _TZ_SAID.get((m.group(1).split("/")[0], str(abbreviation)))
        return f"{name} ({m.group(1)})" if name else m.group(0)

    return _TZ.sub(say, text)


_BIG_MEASURE = re.compile(r"\b(\d{5,})(?= (?:bytes|milliseconds|ms|feet|meters|metres|km|miles)\b)")


def grouped_measures(text: str, language: str) -> str:
    """An English reply's large measures with their digits grouped ('6290521 bytes' → '6,290,521 bytes': blind s17
    conversations #2); codes, ids and years, which no unit follows, stay as they are."""
    if language != "en":
        return text
    return _BIG_MEASURE.sub(lambda m: f"{int(m.group(1)):,}", text)


def said_in_reply(text: str, language: str) -> str:
    """A gold reply's days, time zones and large measures as people say them (`spoken_dates`, `spoken_time_zones`,
    `grouped_measures`)."""
    return grouped_measures(spoken_time_zones(spoken_dates(text, language), language), language)


# An English comparison answer as the factory's answer sentence states it: '<X> has <d> more <what> than <Z>: <cx>
# versus <cz>.' (DIFF) or '<X> has more <what>, by <d>: <cx> versus <cz>.' (WHICH; `difference_reply`'s has no
# <what>); 'There are <d> more <what> <where X> than <where Z>: …' compares places.
_NUM = r"[\d][\d,.]*"
_CMP_THAN = re.compile(
    rf"^(?P<x>.+?) (?P<verb>has|have) (?P<d>{_NUM}) (?P<q>more|fewer) (?P<what>.+?) than (?P<z>.+?): "
    rf"(?P<cx>{_NUM}) (?:versus|to|against) (?P<cz>{_NUM})\.$"
)
_CMP_BY = re.compile(
    rf"^(?P<x>.+?) (?P<verb>has|have) (?P<q>more|fewer)(?: (?P<what>.+?))?, by (?P<d>{_NUM}): "
    rf"(?P<cx>{_NUM}) (?:versus|to|against) (?P<cz>{_NUM})\.$"
)
_CMP_THERE = re.compile(
    rf"^There (?:are|is) (?P<d>{_NUM}) (?P<q>more|fewer) (?P<what>.+?) than (?P<z>.+?): "
    rf"(?P<cx>{_NUM}) (?:versus|to|against) (?P<cz>{_NUM})\.$"
)
# Korean: '<큰 쪽>이 <작은 쪽>보다 20곳 더 많습니다(<A> 5곳, <B> 25곳).' and '<무엇>은 <이긴 쪽>이 25곳으로 15곳 더
# 많습니다(<진 쪽>은 10곳).'
_KO_CMP_THAN = re.compile(
    r"^(?P<x>\S+?)(?:이|가) (?P<z>\S+?)보다 (?P<d>[\d,]+)(?P<u>\S*?) 더 (?P<w>많|적)습니다"
    r"\((?P<o0>\S+) (?P<a>[\d,]+)\S*, (?P<o1>\S+) (?P<b>[\d,]+)\S*\)\.(?P<rest>.*)$"
)
_KO_CMP_WHICH = re.compile(
    r"^(?P<desc>.+?)(?:은|는) (?P<x>\S+?)(?:이|가) (?P<cx>[\d,]+)(?P<u>\S*?)(?:으로|로) (?P<d>[\d,]+)\S* 더 "
    r"(?P<w>많|적)습니다\((?P<z>\S+?)(?:은|는) (?P<cz>[\d,]+)\S*\)\.(?P<rest>.*)$"
)


def _other_side(x: str, options: Sequence[str]) -> str | None:
    """The option that is not `x` (the side an answer sentence names first), by its name as the options say it."""
    if len(options) != 2:
        return None
    hits = [i for i, o in enumerate(options) if o.casefold() == x.casefold() or o.casefold() in x.casefold()]
    return options[1 - hits[0]] if len(hits) == 1 else None


def _they(z: str, verb: str) -> str:
    """The verb for the other side: 'Passengers'' (the albums of) have, 'Aerosmith' has."""
    return "have" if verb == "have" or z.endswith("'") else "has"


def compared_reply(text: str, language: str, frame: Mapping[str, Any], variant: int = 0) -> str | None:
    """A comparison answer said the way a person answers 'which has more, and by how many': both counts with their
    sides named, then the margin ('JFK has 70 routes and LGA has 68, so JFK has 2 more.'), in one of a few orders,
    instead of the answer sentence's 'X has more routes, by 2: 70 versus 68.' that closed 8 of 20 conversations of
    the s17 r3 read. None when `text` is no comparison sentence this knows."""
    if language == "ko":
        return _ko_compared_reply(text, variant % 2)
    front = _FRONT.match(text)
    if front is not None:  # 'For Delta, LGA has 18 more routes than EWR: …': the frame said once, before the reply
        said = compared_reply(front["rest"][:1].upper() + front["rest"][1:], language, frame, variant % 4)
        if said is None:
            return None
        first, _, rest = said.partition(" ")
        return f"{front['front']}, {first.lower() if first in ('There', 'The') else first} {rest}"
    v = variant % 5
    options = [str(o) for o in frame.get("options") or []]
    m = _CMP_THERE.match(text)
    if m is not None:
        what, z, cx, cz, d, q = m["what"], m["z"], m["cx"], m["cz"], m["d"], m["q"]
        if d == "1":  # 'There is 1 more airport …': the phrase is in the singular, the counts need the plural
            return None
        what = _counted(cx, what)
        if v == 1:
            return f"There are {cx} {what}, compared with {cz} {z}: a difference of {d}."
        return f"There are {cx} {what} and {cz} {z}, so {d} {q}."
    m = _CMP_THAN.match(text) or _CMP_BY.match(text)
    if m is None:
        return None
    x, verb, what, q, d, cx, cz = m["x"], m["verb"], m["what"] or "", m["q"], m["d"], m["cx"], m["cz"]
    z = m.groupdict().get("z") or _other_side(x, options)
    if d == "1" and "z" in m.groupdict():  # '1 more customer than': the phrase is in the singular
        what = _in_plural(what)
    if not z or not what:
        return None
    zv = _they(z, verb)
    if v == 0 and "'" in x:  # 'Eric Clapton's albums have …, so Eric Clapton's albums have 34 more' says it twice
        return f"{x} {verb} {cx} {_counted(cx, what)} and {z} {zv} {cz}, a difference of {d}."
    if v == 0:
        return f"{x} {verb} {cx} {_counted(cx, what)} and {z} {zv} {cz}, so {x} {verb} {d} {q}."
    if v == 1 and "'" not in x + z:  # "Passengers' have 14 tracks" cannot open a sentence
        return f"{z} {zv} {cz} {_counted(cz, what)} and {x} {verb} {cx}: {d} {q} for {x}."
    if v == 1:
        return f"{x} {verb} {cx} {_counted(cx, what)} and {z} {zv} {cz}, a difference of {d}."
    if v == 2:
        return f"{x} {verb} {d} {q}: {cx} {_counted(cx, what)}, compared with {cz} for {z}."
    if v == 3 or "'" in x + z:
        return f"{x} {verb} {cx} {_counted(cx, what)}, {d} {q} than {z} ({cz})."
    return f"{x}: {cx} {_counted(cx, what)}. {z}: {cz}. So {x} {verb} {d} {q}."


_FRONT = re.compile(r"^(?P<front>For [A-Z][^,]*), (?P<rest>.+)$")


_AFTER_NOUN = frozenset({"with", "from", "flown", "in", "of", "on", "within", "by", "at", "to", "that", "who"})


def _in_plural(what: str) -> str:
    """A singular noun phrase ('customer', 'route flown by DL') in the plural, when its noun is plainly its first
    word (alone or before a preposition); '' when that cannot be told ('hourly weather record')."""
    words = what.split(" ")
    if len(words) > 1 and words[1] not in _AFTER_NOUN:
        return ""
    return " ".join([plural(words[0]), *words[1:]])


def _counted(n: str, what: str) -> str:
    """`what` (a plural noun phrase) as `n` of it is said: '1 album', '21 albums'."""
    return _one_of(what) if n == "1" else what


def _ko_compared_reply(text: str, v: int) -> str | None:
    m = _KO_CMP_THAN.match(text)
    if m is not None:
        x, z, d, u, w = m["x"], m["z"], m["d"], m["u"], m["w"]
        counts = {m["o0"]: m["a"], m["o1"]: m["b"]}
        if set(counts) != {x, z}:
            return None
        cx, cz = counts[x], counts[z]
        head = ""
    else:
        m = _KO_CMP_WHICH.match(text)
        if m is None:
            return None
        x, z, d, u, w, cx, cz = m["x"], m["z"], m["d"], m["u"], m["w"], m["cx"], m["cz"]
        head = josa(m["desc"], "은/는") + " "
    word = f"{w}습니다"
    rest = m["rest"]
    if v == 1:
        return f"{head}{josa(x, '이/가')} {d}{u} 더 {word}. {x} {cx}{u}, {z} {josa(f'{cz}{u}', '이에요/예요')}.{rest}"
    return f"{head}{x} {cx}{u}, {z} {josa(f'{cz}{u}', '으로/로')} {josa(x, '이/가')} {d}{u} 더 {word}.{rest}"


# A request that reaches a thing through a title in one relative clause ('the artist who recorded 'X'', 'the album
# containing 'X'') and the same through something of the user's own ('the album containing the song I'm listening
# to'): a join written out in words (blind read s17 r3 #8, #17).
_THROUGH_TITLE = re.compile(r"\bthe (album|artist) (?:containing|who recorded) '([^']+)'")
_THROUGH_OWN = re.compile(
    r"\bthe (album|artist) (?:containing|who recorded|of) "
    r"(the song I'm listening to|the track that's playing|the song stuck in my head)"
)
_HEARD = ("I keep listening to '{t}'. ", "'{t}' just came on. ", "I've had '{t}' on repeat. ")
# a question about the store's business (its invoices, sales, customers) is a clerk's, not a listener's (s18 r1 #5:
# "'Inject The Venom' just came on. How many invoices include …")
_STORE = re.compile(r"\b(?:invoices?|customers?|sold|sales|copies|earned|revenue|the store)\b")
_ASKED_ABOUT = ("A customer just asked me about '{t}'. ", "We had a request for '{t}' today. ",
                "I'm restocking '{t}'. ")  # fmt: skip
_BEHIND = {"album": "the album it's on", "artist": "the artist behind it"}
# "How many copies of tracks by the artist behind it has the store sold?" read stilted (blind read s19 r1 #18)
# "How many airports are there in the same state as ASX?" read as a templated hop (blind read s19 r1 #2): a person
# says where they are going first
_SAME_PLACE = re.compile(r"\bin the same (?P<unit>state or province|state|province|country) as (?P<code>[A-Z]{3})\b")
_TRIP = ("I'm flying out of {c} soon. ", "I have a layover at {c} next week. ", "My flight lands at {c} tomorrow. ")
# "how many customers there are from the same country as František Wichterlová" read templated (s19 r1 #17)
_CUSTOMERS_SAID = (
    (re.compile(r"\bhow many customers there are from\b"), "how many of our customers are from"),
    (re.compile(r"\bHow many customers are there from\b"), "How many of our customers are from"),
)
_STORE_SAID = (
    (re.compile(r"\btracks by the artist behind it\b"), "that artist's tracks"),
    (re.compile(r"\bhas the store sold\b"), "have we sold"),
    (re.compile(r"\bthe store has sold\b"), "we have sold"),
    (re.compile(r"\bearned the store\b"), "earned us"),
)
_OWN_SAID = {
    "the song I'm listening to": "I'm listening to a song. ",
    "the track that's playing": "There's a track playing. ",
    "the song stuck in my head": "I have a song stuck in my head. ",
}
_ITS = {"album": "its album", "artist": "its artist"}


def _scene_after_greeting(scene: str, rest: str) -> str:
    """`scene` said before the request `rest`, after its greeting if it opens with one ('Hey! I'm flying out of …')."""
    lead = re.match(r"^((?:Hi|Hey|Hello)[^.!?]*[.!?] )", rest)
    head = lead.group(1) if lead else ""
    rest = rest[len(head) :]
    return head + scene + rest[:1].upper() + rest[1:]


def context_first(request: str, language: str, variant: int = 0) -> str:
    """An English request that says first what the user is listening to and then asks about it ("I keep listening
    to 'Fast As a Shark'. How many tracks are on the album it's on?" for "… the album containing 'Fast As a Shark'
    …"), the way people set the scene before a question; unchanged when it names no such chain or names it twice."""
    if language != "en":
        return request
    m = _THROUGH_TITLE.search(request)
    if m is not None and request.count(f"'{m.group(2)}'") == 1:
        store = _STORE.search(request) is not None
        scenes = _ASKED_ABOUT if store else _HEARD
        scene = scenes[variant % len(scenes)].format(t=m.group(2))
        rest = request[: m.start()] + _BEHIND[m.group(1)] + request[m.end() :]
        if store:  # the clerk speaks for the store ('How many copies of that artist's tracks have we sold?')
            for said, ours in _STORE_SAID:
                rest = said.sub(ours, rest)
        return scene + rest[:1].upper() + rest[1:]
    m = _SAME_PLACE.search(request)
    if m is not None and request.count(m.group("code")) == 1:  # the trip first, then 'its state' (s19 r1 #2)
        scene = _TRIP[variant % len(_TRIP)].format(c=m.group("code"))
        rest = request[: m.start()] + f"in its {m.group('unit')}" + request[m.end() :]
        return _scene_after_greeting(scene, rest)
    for said, ours in _CUSTOMERS_SAID:  # a question about the store's customers is asked by its staff
        request = said.sub(ours, request)
    m = _THROUGH_OWN.search(request)
    if m is not None and request.count(m.group(2)) == 1:
        rest = request[: m.start()] + _ITS[m.group(1)] + request[m.end() :]
        return _scene_after_greeting(_OWN_SAID[m.group(2)], rest)
    return request
