"""Personas of simulated users (kotraj `persona`): register, urgency, region, digital literacy.

Korean personas carry the register (반말/존댓말) the simulator must keep; a verified question is written in
존댓말, so a 반말 persona is drawn only when `to_banmal` can rewrite every sentence ending of the request
(otherwise the persona would contradict its own first message).
"""

import random
import re
from typing import Any

from factory.llm.simulator import spoken_place
from factory.prompts import josa

EN_FIELDS: dict[str, tuple[str, ...]] = {
    "age_group": ("20s", "30s", "40s", "50s", "60s+"),
    "register": ("casual", "formal"),
    "style": ("hurried", "relaxed"),
    "region": ("New York", "Texas", "California", "London", "Toronto"),
    "digital_literacy": ("high", "low"),
}
KO_FIELDS: dict[str, tuple[str, ...]] = {
    "연령대": ("20대", "30대", "40대", "50대", "60대 이상"),
    "격식": ("반말", "존댓말"),
    "스타일": ("급함", "느긋함"),
    "지역 맥락": ("수도권", "부산·경남 생활권", "대전·충청 생활권", "광주·전라 생활권", "대구·경북 생활권"),
    "디지털 활용": ("높음", "낮음"),
}
REGISTER_KEY = {"en": "register", "ko": "격식"}

# 존댓말 sentence endings → 반말, tried in order at the end of each sentence; `{N}` takes 이야/야 by the
# final consonant of the syllable before the ending.
_BANMAL_ENDINGS: tuple[tuple[str, str], ...] = (
    ("무엇인가요", "뭐야"),
    ("무엇입니까", "뭐야"),
    ("무엇이에요", "뭐야"),
    ("포함해서요", "포함해서"),
    ("세서요", "세서"),
    ("으로요", "으로"),
    ("어떻게 되나요", "어떻게 돼"),
    ("알려 주시겠어요", "알려 줄래"),
    ("알려 주세요", "알려 줘"),
    ("궁금합니다", "궁금해"),
    ("인가요", "{N}"),
    ("입니까", "{N}"),
    # '-나요' in 반말 is '-어/아' said to a person ('몇 곳 차이 나?'): '-니?' is how one asks a child (blind s14 #15)
    ("차이 나나요", "차이 나"),
    ("었나요", "었어"),
    ("았나요", "았어"),
    ("였나요", "였어"),
    ("했나요", "했어"),
    ("있나요", "있어"),
    ("없나요", "없어"),
    ("많나요", "많아"),
    ("적나요", "적어"),
    ("되나요", "돼"),
    ("나요", "니"),
    ("할까요", "할까"),
)
_POLITE_LEFT = re.compile(r"(요|니다|니까|세요)\s*$")


def draw_persona(language: str, rng: random.Random, *, register: str | None = None) -> dict[str, str]:
    """A persona in the task's language; `register` forces the register value (e.g. '존댓말')."""
    fields = KO_FIELDS if language == "ko" else EN_FIELDS
    out = {k: rng.choice(v) for k, v in fields.items()}
    if register is not None:
        out[REGISTER_KEY.get(language, "register")] = register
    return out


def _copula(before: str) -> str:
    """이야 after a final consonant, 야 otherwise (josa's rule, read off the syllable before)."""
    return "이야" if josa(before or "가", "이/가").endswith("이") else "야"


def to_banmal(text: str) -> str | None:
    """The request rewritten in 반말, or None when some sentence ending is not one the rules know."""
    parts = re.split(r"([.?!])", text.strip())
    out: list[str] = []
    for i in range(0, len(parts), 2):
        sentence = parts[i]
        mark = parts[i + 1] if i + 1 < len(parts) else ""
        if not sentence.strip():
            out.append(sentence + mark)
            continue
        body = sentence.rstrip()
        for polite, plain in _BANMAL_ENDINGS:
            if body.endswith(polite):
                stem = body[: -len(polite)]
                body = stem + (plain.replace("{N}", _copula(stem[-1:])) if "{N}" in plain else plain)
                break
        if _POLITE_LEFT.search(body):
            return None
        out.append(body + mark)
    return "".join(out).strip()


_KO_LEGAL_BASIS = re.compile(r"\s*법정동 기준으로요?\.?")


def plain_for_novice(text: str, persona: dict[str, Any]) -> str:
    """A Korean request in the words of a user not at ease with computers: no counting basis said as an afterthought
    ('… 법정동 기준으로요.') where the request names it already. The basis itself stays: '동 수' alone reads as 행정동
    and flips the count (blind s14c #13 #16: 16 행정동 against 45 법정동), so '법정동' is never made '동'.
    Unchanged for any other persona."""
    if persona.get("디지털 활용") != "낮음":
        return text
    out = _KO_LEGAL_BASIS.sub("", text)
    return (out if "법정" in out else text).strip()


# the particle after a 시도's name, re-fitted to its short name's last syllable ('서울특별시는' → '서울은')
_KO_PARTICLES = {"은": "은/는", "는": "은/는", "이": "이/가", "가": "이/가", "을": "을/를", "를": "을/를",
                 "과": "과/와", "와": "과/와", "으로": "으로/로", "로": "으로/로"}  # fmt: skip
# a word that may be a 시도's official name (`spoken_place` decides), then a particle or the word's end
_KO_SIDO_SAID = re.compile(
    r"(?<![가-힣])([가-힣]+?(?:특별시|광역시|특별자치시|특별자치도|도))"
    r"(?:(으로|로|은|는|이|가|을|를|과|와)(?![가-힣])|(?=에|의|보다|도|만|까지|[\s,.?!]|$))"
)


def spoken_sido(text: str) -> str:
    """A request's 시도 named as people say them in talk (`simulator.spoken_place`: '서울특별시는 광주광역시보다' →
    '서울은 광주보다'; blind s16 conversations r2 #1, #8), the particle after each fitted to the short name.
    광주광역시 stays in full beside 경기도 (경기도 광주시 is another 광주)."""

    def say(m: re.Match[str]) -> str:
        short = spoken_place(m.group(1))
        if short == m.group(1) or (m.group(1) == "광주광역시" and "경기" in text):
            return m.group(0)
        particle = m.group(2)
        if particle is None:
            return short
        return josa(short, _KO_PARTICLES[particle])

    return _KO_SIDO_SAID.sub(say, text)


# '몇 곳' is written Korean; in talk places are counted with 개 ('구가 몇 개 더 많아?': blind s17 conversations #4, #12),
# the particle after it re-fitted (곳이야 → 개야)
_KO_COUNTER_SAID = (("몇 곳이야", "몇 개야"), ("몇 곳이에요", "몇 개예요"), ("몇 곳이", "몇 개가"), ("몇 곳을", "몇 개를"),
                    ("몇 곳은", "몇 개는"), ("몇 곳과", "몇 개와"), ("몇 곳", "몇 개"))  # fmt: skip
_KO_DOT = re.compile(r"(?<=[가-힣])·(?=[가-힣])")
# '구군' typed without the dot read as office jargon to a reader (blind s17 r3 #7, #13): people say '구하고 군'; a census
# named in full ('2010년 인구주택총조사 기준으로') is the bulletin's word, a person asks by the year (r3 #11; the reply
# names the census)
_KO_HOW_MANY_THERE = re.compile(r"의 (?P<noun>[가-힣]+) 수는 어떻게 (?P<end>되나요|돼요|돼)\?")
_KO_SAID_WORDS = (("구·군", "구하고 군"), ("년 인구주택총조사 기준으로", "년 기준으로"))


def spoken_korean(text: str) -> str:
    """A Korean request as people type it in a chat: 시도 by their short names (`spoken_sido`), no middle dot between
    place kinds ('읍·면' → '읍면'; '구·군' is '구하고 군'), a census by its year ('2010년 기준으로'), places counted
    with 개 ('몇 곳' → '몇 개')."""
    out = spoken_sido(text)
    for written, said in _KO_SAID_WORDS:
        out = out.replace(written, said)
    if "주택" in out:  # houses are counted 채 in talk; 호 is the census's counter (s18 r1 #2)
        out = out.replace("몇 호", "몇 채")
    out = _KO_DOT.sub("", out)
    # '달성군의 읍면 수는 어떻게 되나요?' is a form's question (s18 r1 #11, #15): '달성군에는 읍면이 몇 개 있어요?'
    out = _KO_HOW_MANY_THERE.sub(
        lambda m: f"에는 {josa(m['noun'], '이/가')} 몇 개 {'있어' if m['end'] == '돼' else '있어요'}?", out
    )
    for written, said in _KO_COUNTER_SAID:
        out = out.replace(written, said)
    return out


def korean_register(text: str, persona: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The request in the persona's register, as people type it (`spoken_korean`); a 반말 persona whose request cannot
    be rewritten turns 존댓말."""
    if persona.get("격식") != "반말":  # '무엇입니까' is a form's question: in a chat, '무엇인가요'
        return spoken_korean(text.replace("무엇입니까", "무엇인가요")), persona
    plain = to_banmal(text)
    if plain is None:
        return spoken_korean(text), {**persona, "격식": "존댓말"}
    return spoken_korean(plain), persona


_POLITE_END = re.compile(r"(요|니다|니까|세요|죠)\s*$")
_BANMAL_END = re.compile(r"(야|어|아|줘|해|니|래|지|네|돼|게|까|봐|다|워|냐|자)\s*$")


def sentence_registers(text: str) -> set[str]:
    """The registers a Korean message's sentences end in ('존댓말', '반말'); a sentence that is only a name or
    a noun ('철마면.') has none."""
    out: set[str] = set()
    for sentence in re.split(r"[.?!…]+", text):
        body = sentence.strip().rstrip(",~ ")
        if not body:
            continue
        if _POLITE_END.search(body):
            out.add("존댓말")
        elif _BANMAL_END.search(body):
            out.add("반말")
    return out


def register_consistent(messages: list[str], persona: dict[str, Any]) -> bool:
    """Whether every user message of a Korean conversation keeps the persona's register (반말/존댓말)."""
    want = persona.get("격식")
    if want not in ("반말", "존댓말"):
        return True
    return all(sentence_registers(m) <= {want} for m in messages)


# 시도 → the 생활권 a person asking about it most likely lives in (강원·제주 fit none of the drawn ones)
_KO_REGION_OF = (
    (("서울", "인천", "경기"), "수도권"),  # 인천·경기 사람은 '서울 생활권'이라 하지 않는다 (blind s14 #5)
    (("부산", "울산", "경상남도", "경남"), "부산·경남 생활권"),
    (("대전", "세종", "충청", "충북", "충남"), "대전·충청 생활권"),
    (("광주", "전라", "전북", "전남"), "광주·전라 생활권"),
    (("대구", "경상북도", "경북"), "대구·경북 생활권"),
)
_KO_SIDO = re.compile(r"(\S+?)(?:특별시|광역시|특별자치시|특별자치도|도)(?=[\s에의은는이가을를과와,?]|$)")
# code systems and identifiers: words a person at ease with computers (or a specialist) uses
# a code quoted even once ('KLGA', 'LKP') is jargon a low-literacy user does not type (blind read s11 #4, #19)
_EN_JARGON = re.compile(r"\b(?:IATA|ICAO|FAA|code|codes|ID|id|identifier)\b|\b[A-Z]{3,4}\b")
# code-system words, and '법정동', which a user at ease with administrative terms says (blind read s18 r3 #11, #14,
# #15: a low-literacy 60대 user asking for '법정동'; '동' alone would be counted as 행정동, so the word stays)
_KO_JARGON = re.compile(r"(?:코드|식별자|법정동|ICAO|IATA|\bID\b|(?<![A-Za-z])[A-Z]{3,4}(?![A-Za-z]))")


def regions_named(text: str) -> set[str]:
    """The 생활권 of every 시도 a Korean text names ('부산광역시 기장군' → {'부산·경남 생활권'}); JSON quotes count as
    word ends, so a tool result's `"sidoNm": "부산광역시"` is read too."""
    text = text.replace('"', " ")
    return {
        region
        for m in _KO_SIDO.finditer(text)
        for names, region in _KO_REGION_OF
        if any(m.group(1).startswith(n) or m.group(0).startswith(n) for n in names)
    }


def fit_to_found(persona: dict[str, Any], request: str, found: list[str]) -> dict[str, Any]:
    """A Korean persona whose request names no 시도 ('우리 군의 읍·면은 몇 곳인가요?', the 군 withheld) living where
    the conversation's own tool results place it (every record says 부산광역시 → 부산·경남 생활권, not a 생활권 drawn at
    random: blind s14 #11); unchanged when the request names the place or the results name several 시도."""
    if regions_named(request):
        return persona
    regions = set().union(*(regions_named(t) for t in found)) if found else set()
    return {**persona, "지역 맥락": regions.pop()} if len(regions) == 1 else persona


def fit_to_request(persona: dict[str, Any], text: str, language: str) -> dict[str, Any]:
    """The persona made to fit what it asks: a Korean user asking about one 시도's places lives there (a 대전 중구
    question comes from the 대전·충청 생활권, not from 부산), and a question in code-system words (IATA codes,
    행정구역 코드) comes from a user at ease with computers."""
    out = dict(persona)
    if language == "ko":
        regions = regions_named(text)
        if len(regions) == 1:
            out["지역 맥락"] = regions.pop()
        if _KO_JARGON.search(text):
            out["디지털 활용"] = "높음"
    else:
        if _EN_JARGON.search(text) or _ACCENTED.search(text):  # a name typed with its accents ('František
            out["digital_literacy"] = "high"  # Wichterlová') is copied by a user at ease with computers (s19 r1 #17)
        if _EN_HEADLINE.search(text):  # 'Brazil vs Norway: which one has more customers?' is typed by a casual user at
            out["register"] = "casual"  # ease with chat (blind read s18 r3 #1: not by a formal, low-literacy one)
            out["digital_literacy"] = "high"
    return out


_ACCENTED = re.compile(r"[À-ɏ]")
_EN_HEADLINE = re.compile(r"^(?:[^:?.]+ )?\S+ vs\.? [^:?]+:")
