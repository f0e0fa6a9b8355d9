"""Conversation tasks (kotraj case kinds) built from verified tasks (issue 19 item 1).

Every published task of `dataset_splits` (kept by the filter cascade: its golden calls were executed and
replayed) whose question a person would type (`naturalness.askability`: short chains, no database wording, no
conditional that is false by construction) yields candidate conversation tasks that keep its golden calls,
split and state hash:

- its base case by the shape of its golden calls without key acquisition: `single` (one call),
  `sequential` (one call per step, steps in order), `parallel` (some step issues several independent calls);
- `multi_turn` when the question cites exactly one seed value: the opening brings up the thing the way people
  do ("There's a track I'm curious about. … that track …"; "궁금한 시군구가 하나 있어요. 그 시군구의 …"), the
  value goes to `hidden_info` under its noun, and the agent must ask for it;
- `no_call` for a deterministic share: a request no offered tool serves (the gold reply declines briefly and
  says what the tools look up) or one answerable without a lookup (the gold reply answers it);
- `single` count questions from listing calls that take no argument ("시도는 모두 몇 곳인가요?").

The persona is drawn to fit the question (a hurried or low-literacy one asks only short questions; Korean
requests are rewritten to the persona's 반말/존댓말); the gold reply gives the answer first
(`answer_reply`). `build.select` keeps one conversation per underlying question and split.

`success_criteria`: `required_calls` (tool name + `args_subset`, the compared arguments of each golden call:
key, paging and format parameters left out; `optional` when the call only finds arguments a later call sends, so
another way to them passes: `_finds_only`), `ordering` ([i, j]: required call i before j, from the golden
steps), `terminal_state` (platform → state hash the environment must end in), `no_call`.
"""

import hashlib
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from factory import prompts
from factory.conversations.naturalness import SHORT, askability, fitted, plain_korean, plain_names, speakable
from factory.conversations.persona import (
    REGISTER_KEY,
    draw_persona,
    fit_to_request,
    korean_register,
    plain_for_novice,
)
from factory.conversations.wording import (
    chat_difference,
    clear_cutoffs,
    compared_reply,
    context_first,
    difference_reply,
    from_how_many,
    named_reply,
    plain_terms,
    possessives,
    said_in_reply,
    selected_entity,
    spoken_dates,
    spoken_korean_noun,
    spoken_korean_qualifiers,
    styled_english,
    there_are_last,
    which_then,
)
from factory.eval.oracle import coerce
from factory.eval.scoring import is_key_action, key_tool_names, spec_of, value_compare_args
from factory.io import dumps
from factory.llm.agent import hidden_params
from factory.llm.simulator import mentions_value, opening, spoken_place
from factory.synthesis import answers
from factory.synthesis.phrasing import KO_CONDITIONS, KO_CONDITIONS_SAID
from factory.tools.executor import KEY_PLACEHOLDER
from factory.tools.spec import ToolSpec

CASE_KINDS = ("single", "sequential", "parallel", "multi_turn", "no_call")
NO_CALL_KINDS = ("out_of_scope", "direct")
NO_CALL_TEMPLATE = "conversations/no_call.{lang}"
NO_CALL_FORMS = 10  # requests per kind in the template: few forms repeat within a split's sample (blind read s11)
Specs = Mapping[tuple[str, str], ToolSpec]
# (tool_id, param, language) → the noun naming the value's kind ('track', '읍면동'), None when unknown
NounOf = Callable[[str, str, str], str | None]

_EN_NOT_NOUNS = frozenset(
    "a an the of and or with between at in on for to from by is are was were do does did than as that this "
    "its their his her my your our into through via near over under about".split()  # 'flying into AMK': no noun (s15)
)


_COUNTING = frozenset({"many", "much", "few", "more", "fewer", "less"})


class ConversationTaskError(ValueError):
    """A verified task that cannot become a conversation task (no calls, unknown tool)."""


def _seed_int(*parts: Any) -> int:
    return int(hashlib.sha256(dumps(list(parts)).encode()).hexdigest()[:8], 16)


def required_calls(task: Mapping[str, Any], specs: Specs) -> tuple[list[dict[str, Any]], list[list[int]]]:
    """The golden calls a model must make (key acquisition left out) as `required_calls`, and the ordering
    pairs [i, j] (every call of a step before every call of the next step)."""
    keys = key_tool_names(task.get("system_state") or {})
    calls: list[dict[str, Any]] = []
    needed: list[bool] = []
    try:
        read = answers.positions(task.get("answer_spec") or {}, task["golden_actions"])
    except answers.SpecError:
        read = None  # an answer nobody can locate: every call stays required
    for pos, a in enumerate(task["golden_actions"]):
        if is_key_action(a, specs, keys):
            continue
        spec = spec_of(specs, a)
        props = (spec.input_schema.get("properties") or {}) if spec is not None else {}
        hide = hidden_params(spec) if spec is not None else set()
        subset = {
            k: coerce(v, props.get(k) or {})
            for k, v in value_compare_args(a, spec).items()
            if k not in hide and v != KEY_PLACEHOLDER
        }
        arguments = {
            k: coerce(v, props.get(k) or {}) for k, v in a["args"].items() if k not in hide and v != KEY_PLACEHOLDER
        }
        calls.append(
            {"name": a["tool"], "platform": a["platform"], "step": a["step"], "args_subset": subset, "args": arguments}
        )
        # the answer reads it, it writes, or nothing says what it reads: never optional (`_finds_only`)
        needed.append(read is None or pos in read or bool(spec is not None and spec.state_changing))
    steps = sorted({c["step"] for c in calls})
    for c, must in zip(calls, needed, strict=True):
        c["optional"] = not must and _finds_only(c, calls, steps)
    ordering = [
        [i, j]
        for s, nxt in zip(steps, steps[1:], strict=False)
        for i, c in enumerate(calls)
        if c["step"] == s
        for j, d in enumerate(calls)
        if d["step"] == nxt
    ]
    return calls, ordering


_AGAINST = re.compile(r"(\d[\d,.]*) against (\d)")
_VERSUS = (" against ", " to ", " versus ")


def _versus(text: str, variant: int) -> str:
    """Two compared counts said in one of several ways ('41 against 37', '41 to 37', '41 versus 37'): 'against'
    closed 6 of 10 English conversations of the s16 read."""
    word = _VERSUS[variant % len(_VERSUS)]
    return _AGAINST.sub(lambda m: m.group(1) + word + m.group(2), text)


def _compared(text: str, task: Mapping[str, Any], variant: int) -> str:
    """A comparison reply with both sides' counts and the margin said as people answer (`compared_reply`), else the
    two counts joined in one of several ways (`_versus`)."""
    frame = (task.get("answer") or {}).get("frame") or {}
    said = compared_reply(text, str(task.get("language") or "en"), frame, variant)
    return said if said is not None else _versus(text, variant)


# a user who asks for the figure alone ('숫자만 알려 주시면 돼요', 'Just the number pls.')
_ASKS_BRIEF = re.compile(r"숫자만|간단히 답해|\bjust the (?:number|figure)\b|\ba short answer\b", re.IGNORECASE)
_ASIDE = re.compile(r"\s*\([^()]*\d[^()]*\)")  # a breakdown holds figures; a name's '(Classic)' stays


def _briefly(solved: dict[str, Any], initial_message: str) -> dict[str, Any]:
    """The solved task with its reply's asides dropped ('5곳 차이입니다(광주광역시 5곳, 인천광역시 10곳).' → '5곳
    차이입니다.') when the user asked for the figure alone (blind read s15 conversations #9)."""
    if not _ASKS_BRIEF.search(initial_message):
        return solved
    text = _ASIDE.sub("", str(solved["answer"]["text"])).strip()
    return {**solved, "answer": {**solved["answer"], "text": text}} if text else solved


def _finds_only(call: Mapping[str, Any], calls: Sequence[Mapping[str, Any]], steps: Sequence[int]) -> bool:
    """Whether a golden call (one the answer does not read and that writes nothing) only finds arguments of later
    calls (a lookup of the way: 인천광역시 동구 → its code), so another way to the same arguments passes (blind read
    s15 conversations #6, #14: `search_admin_sigungu` finds the code `list_admin_sido` → `list_admin_sigungu` did).
    Not a call of the last step, nor one followed by a call that sends nothing to compare (then only the lookup
    shows the way was taken)."""
    if call["step"] == steps[-1]:
        return False
    later = [d for d in calls if d["step"] > call["step"]]
    return bool(later) and all(d["args_subset"] for d in later)


def base_case(calls: Sequence[Mapping[str, Any]]) -> str:
    if not calls:
        raise ConversationTaskError("the task has no call besides key acquisition")
    if len(calls) == 1:
        return "single"
    per_step: dict[int, set[str]] = {}
    for c in calls:  # the pages of one listing (same tool, same compared arguments) are one request
        per_step.setdefault(c["step"], set()).add(dumps([c["name"], c.get("args_subset") or {}]))
    if len(per_step) == 1 and len(next(iter(per_step.values()))) == 1:
        return "single"
    return "parallel" if max(len(v) for v in per_step.values()) > 1 else "sequential"


def answer_values(task: Mapping[str, Any]) -> list[Any]:
    """The gold answer's scalar values that its text states (what the simulator waits to hear)."""
    ans = task.get("answer") or {}
    value = ans.get("value")
    values = value if isinstance(value, list) else [value]
    text = str(ans.get("text") or "")
    return [
        v for v in values if isinstance(v, str | int | float) and not isinstance(v, bool) and mentions_value(text, v)
    ]


# --------------------------------------------------------------------------- masking (multi_turn)


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def mask_english(query: str, value: str, *, first: str | None = None) -> tuple[str, str] | None:
    """The question with `value` masked behind its noun ('of airport ICN' → 'of an airport', later mentions
    'that airport'; `first`: the determiner of the first mention instead of the article) and the noun; None
    when some mention has no noun before it."""
    pat = re.compile(rf"\b(?:(?:the|a|an) )?([a-z]+) {re.escape(value)}(?![\w])")
    found = list(pat.finditer(query))
    if not found or any(m.group(1) in _EN_NOT_NOUNS for m in found):
        return None
    noun = found[0].group(1)
    if any(m.group(1) != noun for m in found):
        return None
    before = query[: found[0].start()].split()
    if (before and before[-1].lower() in _COUNTING) or (noun.endswith("s") and not noun.endswith("ss")):
        return None  # 'how many routes JetBlue Airways has': the counted thing, not the value's noun (s11 #10)
    out = query
    for k, m in enumerate(reversed(found)):
        is_first = k == len(found) - 1
        det = (first or _article(noun)) if is_first else "that"
        out = out[: m.start()] + f"{det} {noun}" + out[m.end() :]
    if mentions_value(out, value):
        return None
    return out, noun


def mask_english_named(query: str, value: str, noun: str) -> tuple[str, str] | None:
    """The question with every mention of `value` said as 'that <noun>' when the question names the thing bare
    ('How many albums does Iron Maiden have?', "the artist who recorded 'Fast As a Shark'"): `noun` is the
    lexicon's word for the value's kind ('artist', 'track'), as Korean masks through `noun_of`. None when the noun
    is no singular word, the value is not cited or is the thing counted ('how many Iron Maiden …'), or a mention
    is left."""
    if not re.fullmatch(r"[a-z]+", noun or "") or (noun.endswith("s") and not noun.endswith("ss")):
        return None
    pat = re.compile(rf"(?<![\w'])(?:(?:the|a|an) )?(?:{re.escape(noun)} )?'?{re.escape(value)}'?(?![\w])")
    found = list(pat.finditer(query))
    if not found:
        return None
    if any(query[: m.start()].split()[-1:] in (["many"], ["much"]) for m in found):
        return None
    out = query
    for m in reversed(found):
        lead = "That" if m.start() == 0 else "that"
        out = out[: m.start()] + f"{lead} {noun}" + out[m.end() :]
    if mentions_value(out, value):
        return None
    return out, noun


_KO_PARTICLES = (("으로", "으로/로"), ("로", "으로/로"), ("은", "은/는"), ("는", "은/는"), ("을", "을/를"),
                 ("를", "을/를"), ("과", "과/와"), ("와", "과/와"), ("이", "이/가"), ("가", "이/가"))  # fmt: skip


def mask_korean(query: str, value: str, noun: str, first: str = "어느") -> str | None:
    """The question with `value` replaced by '<first> <noun>' (later mentions '그 <noun>'), particles refitted."""
    if not noun or value not in query:
        return None
    pieces = query.split(value)
    out = pieces[0]
    for k, rest in enumerate(pieces[1:]):
        word = f"{first} {noun}" if k == 0 else f"그 {noun}"
        for particle, pair in _KO_PARTICLES:
            if rest.startswith(particle) and (len(rest) == len(particle) or not rest[len(particle)].isalnum()):
                word, rest = prompts.josa(word, pair), rest[len(particle) :]
                break
        out += word + rest
    return out


def own_phrase(language: str, persona: Mapping[str, str], noun: str, variant: int = 0) -> str:
    """How the persona refers to a thing of its own situation before naming it ('my favourite band', 'the song
    I'm listening to', '우리 구', '제가 사는 곳'): the template's `own` form for the noun."""
    out = prompts.render(_RULES.format(lang=language), kind="own", persona=dict(persona), facts=[], text="",
                         variant=variant, noun=noun)  # fmt: skip
    return " ".join(out.split())


_RULES = "user_simulator/rules.{lang}"


def said_as_own(request: str, noun: str, language: str, persona: Mapping[str, str], variant: int = 0) -> str | None:
    """A masked request ('… that track …', '… 그 구의 …') with the thing's first mention said as part of the user's
    situation (`own_phrase`: 'How long is the song I'm listening to?', '우리 구의 법정동은 몇 개예요?'), so the
    request is under-specified the way people's are and the assistant asks which one; later mentions stay
    'that track' / '그 구'. None when the first mention is not there or is owned ("that track's")."""
    if language == "en" and (led := _lead_as_own(request, noun)) is not None:
        return led
    placeholder = f"that {noun}" if language == "en" else f"그 {noun}"
    i = request.find(placeholder) if language == "ko" else request.lower().find(placeholder)
    if i < 0:
        return None
    rest = request[i + len(placeholder) :]
    # the owned noun phrase up to the next function word: "that airport's time zone and …" → "the time zone of my
    # home airport and …", not "the time of my home airport zone" (own read s14)
    owned = re.match(_EN_OWNED, rest) if language == "en" else None
    if owned is not None:  # "that track's artist" → "the artist of the song I'm listening to"
        phrase = _own_before(persona, noun, variant, rest[owned.end() :], request[:i])
        head = request[:i] + f"the {owned.group(1)} of "
        head = head[:1].upper() + head[1:] if i == 0 else head
        return head + phrase + rest[owned.end() :]
    if language == "en" and (rest.startswith("'") or rest[:1].isalnum()):
        return None
    if language == "ko" and rest[:1].isalnum() and not _KO_PARTICLE_AT.match(rest):
        return None
    phrase = (
        own_phrase(language, persona, noun, variant)
        if language == "ko"
        else _own_before(persona, noun, variant, rest, request[:i])
    )
    head = request[:i]
    if language == "ko" and head.endswith("에 있는 "):  # '광주광역시에 있는 그 구' → '광주광역시에서 제가 사는 구'
        region = head[: -len("에 있는 ")]
        ours = [
            x for x in (own_phrase(language, persona, noun, variant + k) for k in range(4)) if x.startswith("우리 ")
        ]
        banmal = persona.get("격식") == "반말"
        short = spoken_place(region.strip())  # '인천광역시' → '인천': how people say where they live
        # several ways to say where one lives, so conversations do not share one opener (blind s14 #5, #14)
        lives_in = [
            region + ("에 사는데, " if banmal else "에 사는데요, "),
            short + (" 사는데, " if banmal else " 사는데요, "),
            ("나 " if banmal else "저는 ") + short + (" 살거든. " if banmal else " 살아요. "),
            short + ("에 살고 있는데, " if banmal else "에 살고 있는데요, "),
        ]
        if " " not in region.strip() and ours and variant % 5:  # '광주광역시에 사는데요, 우리 구의 …'
            head, phrase = lives_in[variant % 5 - 1], ours[0]
        else:
            head = region + "에서 "
            lives = [own_phrase(language, persona, noun, variant + k) for k in range(4)]
            phrase = next((x for x in lives if " 사는 " in x), phrase)
    if language == "en" and i == 0:
        phrase = phrase[:1].upper() + phrase[1:]
    if language == "ko":
        for particle, pair in _KO_PARTICLES:
            if rest.startswith(particle) and (len(rest) == len(particle) or not rest[len(particle)].isalnum()):
                phrase, rest = prompts.josa(phrase, pair), rest[len(particle) :]
                break
    return head + phrase + rest


# A lead sentence about the user's trip through the masked thing ("I'm flying into that airport soon. …"): its
# clause becomes the thing's own phrase ("the airport I'm flying into") at the request's first mention of the thing,
# and the sentence goes ("I'm flying into my destination airport soon" stated nothing: blind read s18 r3 #2)
_EN_LEAD = re.compile(
    r"^(?P<clause>I(?:'m| am| have| will|'ll) [^.?!]*?) that (?P<noun>[a-z]+)\b[^.?!]*\.\s+(?P<rest>\S.*)$"
)
_EN_LEAD_SAID = (("I'm planning a trip through", "I'm passing through"), ("I am ", "I'm "))


def _lead_as_own(request: str, noun: str) -> str | None:
    m = _EN_LEAD.match(request)
    if m is None or m.group("noun") != noun:
        return None
    clause = m.group("clause")
    for written, said in _EN_LEAD_SAID:
        clause = clause.replace(written, said)
    own, rest = f"the {noun} {clause}", m.group("rest")
    firsts = [
        (re.compile(rf"\bthat {noun}\b"), lambda _: own),
        (re.compile(r"\bwhat its ([A-Za-z]+(?: [a-z]+)?) is\b"), lambda x: f"the {x.group(1)} of {own}"),
        (re.compile(r"\bwhat is its ([A-Za-z]+(?: [a-z]+)?)(?=[?,.])"), lambda x: f"what the {x.group(1)} of {own} is"),
        (re.compile(r"\bof it\b"), lambda _: f"of {own}"),
    ]
    hits = [(x.start(), pat, say) for pat, say in firsts if (x := pat.search(rest))]
    if not hits:
        return None
    _, pat, say = min(hits, key=lambda h: h[0])
    return pat.sub(say, rest, count=1)


# '제가 사는 구가 속한 시도의 구 수': no one asks which 시도 their own 구 is in (own read s14)
_KO_OWN_CONTAINER = re.compile(r"(?:사는|우리) \S+(?:이|가) (?:속한|있는) ")
_EN_OWNED = re.compile(
    r"'s ([a-z]+(?: [a-z]+)*?)(?=[,.?!;:]| (?:and|or|of|in|at|for|with|from|to|on|is|are|was|were|has|have|had|do|does"
    r"|did|be|than|that|which|who)\b|$)"
)


def _own_before(persona: Mapping[str, str], noun: str, variant: int, rest: str, head: str = "") -> str:
    """The English `own_phrase` whose last word is not the next word of the request ('the airline I'm flying with
    with the most flights' read garbled: own read s14), nor saying again what the request already does ("I'm flying
    into the airport I'm flying out of soon")."""
    nxt = rest.split()[:1]
    doing = {w for w in re.findall(r"[a-z]+ing\b", head.lower()) if len(w) > 4}
    forms = [own_phrase("en", persona, noun, variant + k) for k in range(4)]
    fit = [f for f in forms if not doing & set(re.findall(r"[a-z]+", f.lower()))] or forms
    if re.search(r"\bI(?:'m)?\b", head):  # a request already about the user's trip: no second clause of theirs
        fit = [f for f in fit if not re.search(r"\bI(?:'m)?\b", f)] or fit  # ('a trip through the airport I'm
        # flying out of': blind read s16 conversations #3)
    return next((f for f in fit if f.split()[-1:] != nxt), fit[0])


_KO_PARTICLE_AT = re.compile(r"(?:으로|로|은|는|을|를|과|와|이|가|의|에)(?![가-힣])")


def _seed_of(traj: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The one seed value a trajectory's question cites (None when it cites none or several)."""
    seeds = (traj or {}).get("seeds") or []
    values = {str(s.get("value")) for s in seeds}
    if len(values) != 1 or not isinstance(seeds[0].get("value"), str):
        return None
    s = seeds[0]
    via = s.get("via") or {}
    return {"value": s["value"], "tool_id": via.get("tool_id") or s["tool_id"], "param": via.get("param") or s["param"]}


def said_names(traj: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The names the question says for values a lookup converts, in the trajectory's order: a seed given `via`
    another tool ('경기도' is the sidoCd of list_admin_sigungu, found by list_admin_sido's sidoNm) as {name: the
    tool's bare name, param, value}. The recovery's name-for-code slip puts the name where the code goes."""
    out: list[dict[str, Any]] = []
    for s in (traj or {}).get("seeds") or []:
        if s.get("via") and isinstance(s.get("value"), str):
            out.append({"name": str(s["tool_id"]).rsplit("/", 1)[-1], "param": s["param"], "value": s["value"]})
    return out


def _child_seed(traj: Mapping[str, Any] | None, query: str) -> dict[str, Any] | None:
    """Of a question citing two seeds as '<parent> <child>' ('서울특별시 종로구'), the child: the one thing a user
    can leave out at first ('서울특별시에 있는 그 구'), the parent staying in the question. None otherwise."""
    seeds = [s for s in (traj or {}).get("seeds") or [] if isinstance(s.get("value"), str)]
    if len({s["value"] for s in seeds}) != 2:
        return None
    for child in seeds:
        parent = next(s for s in seeds if s["value"] != child["value"])
        if f"{parent['value']} {child['value']}" in query and query.count(child["value"]) == 1:
            via = child.get("via") or {}
            return {"value": child["value"], "tool_id": via.get("tool_id") or child["tool_id"],
                    "param": via.get("param") or child["param"]}  # fmt: skip
    return None


# --------------------------------------------------------------------------- building


def _common(task: Mapping[str, Any], case: str, variant: str, cfg_seed: int) -> dict[str, Any]:
    cid = "sha256:" + hashlib.sha256(dumps([task["id"], case, variant]).encode()).hexdigest()
    return {
        "id": cid,
        "source_task_id": task["id"],
        "domain": task["domain"],
        "language": task["language"],
        "split": task.get("split"),
        "case_pattern": case,
        "platforms": list(task.get("platforms") or []),
        "tools_subset": list(task.get("available_tools") or []),
        "system_state": dict(task.get("system_state") or {}),
        "seed": _seed_int(cfg_seed, cid),
        "source_pattern": task.get("pattern"),
    }


def chat_wording(
    text: str, language: str, frame: Mapping[str, Any] | None = None, variant: int = 0, *, several: bool = False
) -> str:
    """A verified question as a person types it into a chat: names without type labels, Korean places said the
    way people do (`several`: the named place is found in several 시군구: '신교동이 있는 시군구들의'); English
    possessives, 'how many X there are <where>', a stilted DIFF asked plainly."""
    if language == "ko":
        out = plain_korean(text)
        return _KO_WHERE_ONE.sub(r"\1들의 ", out) if several else out
    diff = chat_difference(text, frame or {}, variant)
    if diff is not None:
        return plain_names(diff)
    return from_how_many(there_are_last(possessives(plain_terms(plain_names(text)))))


def _qualified(text: str, language: str) -> str:
    """A request with its days as people write them ('June 13, 2008') and, in Korean, its code-book qualifiers
    said after the question ('… 몇 곳인가요? 법정동 기준으로요.'); a counting rule the question opens with is left to
    the reply ('구가 있는 시는 구별로 세면, …' pasted into a chat read garbled: blind read s16 conversations #11)."""
    text = spoken_dates(text, language)
    if language != "ko":
        return text
    text = _leading_basis(text)[1]
    return _KO_UNIT.sub("", spoken_korean_qualifiers(text)).strip()


# the counting conditions a Korean question may open with (phrasing.qualifiers_after), by the unit they count by
_KO_SAID_BASIS = {f: word for (word, _), forms in KO_CONDITIONS_SAID.items() for f in forms}
_KO_LEADING_UNIT = [  # the generic forms ('법정동 기준으로 보면'), read from the same table phrasing says them by
    re.compile("^" + re.escape(f).replace(re.escape("{x}"), r"(\S+)") + ",? ")
    for fs in KO_CONDITIONS.values()
    for f in fs
]


def _leading_basis(text: str) -> tuple[str | None, str]:
    """(the unit a Korean question's opening condition counts by, the question without it)."""
    body = text.lstrip()
    for said, word in _KO_SAID_BASIS.items():
        if body.startswith(said):
            return word, body[len(said) :].lstrip()
    m = next((m for r in _KO_LEADING_UNIT if (m := r.match(body))), None)
    return (m.group(1), body[m.end() :].lstrip()) if m else (None, text)


# '… 몇 곳 차이 나나요? 일반구 단위로 봐 주세요.': a counting basis no user adds (blind read s11 r2 #7); the request
# leaves it out and the gold reply says how it counted ('… 일반구 단위로 셌어요.', `counting_basis`)
_KO_UNIT = re.compile(r"\s*(\S+) 단위로 (?:봐 주세요|세서요|세어 주세요)\.?")


def counting_basis(text: str) -> str | None:
    """The unit a Korean request's afterthought counts by ('일반구' of '… 일반구 단위로 봐 주세요.'), None if none."""
    m = _KO_UNIT.search(spoken_korean_qualifiers(text))
    return m.group(1) if m else _leading_basis(text)[0]


_KO_WHERE_ONE = re.compile(r"(\S+(?:이|가) (?:있는|속한) (?:시군구|시도))의 ")


def _fans_out(task: Mapping[str, Any], seed: Mapping[str, Any] | None) -> bool:
    """Whether the seed's name stands for several things: the junction leaving the tool that looked it up fans
    out (two 신교동 in two 시군구)."""
    if seed is None:
        return False
    tool = str(seed.get("tool_id") or "").rsplit("/", 1)[-1]
    return any(str(j.get("from") or "").startswith(f"{tool}.") and int(j.get("width") or 1) > 1
               for j in task.get("junctions") or [])  # fmt: skip


_REGION_BEFORE = re.compile(r"(\S+(?:특별시|광역시|특별자치시|특별자치도|도)) $")


def _in_region(query: str, value: str) -> str:
    """A Korean question citing '<시도> <value>' with the place said as '<시도>에 있는 <value>', so that masking the
    value leaves '대전광역시에 있는 그 구' rather than '대전광역시 그 구'."""
    i = query.find(value)
    m = _REGION_BEFORE.search(query[:i]) if i > 0 else None
    if m is None:
        return query
    return query[: m.start()] + f"{m.group(1)}에 있는 " + query[i:]


# a question that counts a 시도's 시·군·구 themselves ('경기도와 인천광역시의 시·군·구 수는 …'), not what one of them holds
_COUNTS_DISTRICTS = re.compile(r"시·?군·?구(?:\([^)]*\))?(?: 수|는 몇|가 몇|를 모두)")


def _basis_said(solved: dict[str, Any], request: str, language: str) -> dict[str, Any]:
    """The solved conversation with a Korean reply that says it counted 법정동 when the request says only '동'
    (`plain_for_novice`): the user asked plainly, the assistant is exact."""
    text = str(solved["answer"]["text"])
    if language != "ko" or "법정" in request or "법정" in text or "동" not in request:
        return solved
    if not any(w in str(solved.get("task") or "") for w in ("법정동", "법정 읍면동")):
        return solved
    return {**solved, "answer": {**solved["answer"], "text": f"{text} 법정동 기준으로 셌어요."}}


def _fitted_persona(
    language: str, rng: random.Random, request: str, level: str, *, withholds: bool = False
) -> tuple[str, dict[str, str]]:
    """A persona that would ask this question (a hurried or low-literacy one asks only short questions; a user
    asking about one 시도's places lives there; code-system words come from a user at ease with computers), and
    the request in its register. `withholds`: the user brings the thing up before finding its name, which a
    hurried user does not do (they just name it)."""
    persona = fit_to_request(fitted(draw_persona(language, rng), level, language), request, language)
    if withholds:
        persona[_STYLE_KEY[language]] = "느긋함" if language == "ko" else "relaxed"
    if language == "ko":
        request, persona = korean_register(request, persona)
        request = plain_for_novice(request, persona)
    else:
        request = styled_english(request, persona)
    return request, persona


# 'airports with an IATA code': the code system that bounds what a tool counts is the assistant's to say; a user asks
# for 'airports' (blind s17 r2 #9, #17, #20: 'database wording'), as a Korean user asks for '동' and is told 법정동
_CODED = re.compile(r"\b([a-z]+s)( there are| are there)? (with an? [A-Z]{2,6} code)\b")


def left_to_reply(request: str, reply: str, language: str) -> str:
    """An English request without a code-system qualifier its reply states ('how many airports with an IATA code
    are there within 100 km of LGA' → '… airports …' when the reply says 'There are 24 airports with an IATA code
    …'); unchanged otherwise."""
    if language != "en":
        return request

    def plain(m: re.Match[str]) -> str:
        return m.group(1) + (m.group(2) or "") if f"{m.group(1)} {m.group(3)}" in reply else m.group(0)

    return _CODED.sub(plain, request)


_STYLE_KEY = {"en": "style", "ko": "스타일"}
_CONDITION_PREFIX = re.compile(r"^(?:The condition holds, so |조건이 성립하므로,? |조건을 만족하므로,? )")
REPLY_TEMPLATE = "conversations/reply.{lang}"
# a verified answer sentence this long or shorter is the reply as it is ('Customers from 6 countries have bought tracks
# by the artist who recorded …' (17 words) had become 'It is 6 countries.': blind read s16 conversations r2 #20)
REPLY_WORDS = {"en": 20, "ko": 10}
# answer frames whose sentence already starts with the answer ("The difference is 14: 10 for … against 24 …")
ANSWER_FIRST = ("DIFF", "WHICH")


def answer_reply(
    task: Mapping[str, Any],
    variant: int = 0,
    anchor: str = "",
    entity: tuple[str, str] | None = None,
    *,
    several: bool = False,
) -> str:
    """The gold assistant reply: the verified answer sentence when it is short, else a sentence that gives the
    answer first (the chain is not repeated back); never the conditional's bookkeeping. English replies name
    things without type labels, a conditional says that its condition held, and an answer sentence that names
    nothing the user asked about ("There are 3 albums.") names what it is about: the entity the chain selected
    (`entity`: (noun, value), 'the aircraft in question is N15980'), else what it counts stated in full
    ('There are 5 customers from the same country as Luís Gonçalves.'), else the entity the question starts from
    (`anchor`: 'the playlist Music Videos')."""
    ans = task.get("answer") or {}
    lang = task.get("language", "en")
    raw = str(ans.get("text") or "").strip()
    text = _CONDITION_PREFIX.sub("", raw)
    text = text[:1].upper() + text[1:] if lang == "en" else text
    frame = ans.get("frame") or {}
    pattern = frame.get("pattern")
    words = len(text.split())
    if lang == "ko":
        text = chat_wording(text, lang, several=several)  # '신교동이 속한 시군구들의 읍면동은 …'
    if lang == "en":
        text = plain_terms(plain_names(text))
        if pattern == "DIFF":
            text = difference_reply(text)
        if pattern == "IF" and ans.get("branch") == "then" and frame.get("qualifier") and text.startswith("Yes: "):
            return f"Yes, {plain_names(str(frame['qualifier']))}, and {text[len('Yes: ') :]}"
        if pattern == "BOTH" and words <= 2 * REPLY_WORDS["en"]:
            return text
        if pattern == "PATH" and words <= REPLY_WORDS["en"] and _names_nothing(text, task):
            return _named(text, task, frame, anchor, entity)
        picked = _PICKED.match(text)
        if picked is not None:  # the record a document picked, named first (s18 r3 #7: 'It is about 11.2 MB')
            head = _PICKED_HEAD.match(picked["subject"])
            if head is not None:
                return f"{head.group(1)[:1].upper()}{head.group(1)[1:]} is {picked['name']}, and its {picked['field']} is {picked['rest']}"
    short = words <= REPLY_WORDS.get(lang, 16) and pattern != "BOTH"
    if short or (pattern in ANSWER_FIRST and words <= 2 * REPLY_WORDS[lang]):
        return text
    values = answer_values(task) or [v for v in [ans.get("value")] if v is not None]
    unit = _unit_after(text, values[0]) if len(values) == 1 and lang == "en" else ""
    out = prompts.render(
        REPLY_TEMPLATE.format(lang=lang),
        values=values,
        unit=unit,
        counter=frame.get("counter") or "",
        pattern=pattern or "",
        description=" ".join(str(frame.get("description") or "").split()),
        variant=variant,
    )
    return " ".join(out.split()) or text


# an answer naming the record a document picked: "The file size of the longest track on the album 'X' by Y, 'Z', is …"
_PICKED = re.compile(
    r"^The (?P<field>[a-z][a-z ]*?) of (?P<subject>the .+?), (?P<name>'[^']+'), (?:is|was) (?P<rest>.+)$"
)
_PICKED_HEAD = re.compile(r"^(the (?:[a-z-]+ )*?[a-z-]+)(?= (?:on|of|in|from|by|for|at)\b)")


_NOT_UNITS = frozenset(
    "and or against for in of from to than as at on by with is are was were have has had do does did can could will "
    "would been be being bought sold made took left there each per".split()
)  # the verb after a counted noun is no unit ('6 countries have bought …' read 'It is 6 countries have.': blind s14)


def _unit_after(text: str, value: Any) -> str:
    """The unit the verified sentence says after the answer value ('… is 343719 milliseconds.' → 'milliseconds'),
    so the short reply keeps it ('It's 343719 milliseconds.', not 'It is 343719.'; a currency code: '15.84 USD')."""
    m = re.search(rf"(?<![\w.]){re.escape(str(value))}\s+((?:US )?(?:[a-z%]+|[A-Z]{{3}}\b)(?: [a-z]+)?)\b", text)
    if m is None:
        return ""
    words = [w for w in m.group(1).split() if w not in _NOT_UNITS]
    return " ".join(words[:1] if len(words) < len(m.group(1).split()) else words)


_COUNTED = re.compile(
    r"^the (total )?number of ([a-z]+(?: (?!(?:of|from|in|within|with|near|at|on|by)\b)[a-z]+)?) (.+)$"
)
_RELATION = re.compile(r"^(?:from|in|within|with|near|at|on)\b")


def _named(
    text: str, task: Mapping[str, Any], frame: Mapping[str, Any], anchor: str, entity: tuple[str, str] | None
) -> str:
    """An English answer sentence that names nothing the user asked about, naming what it is about: the entity
    the chain selected, else what it counts as the question's frame says it ('There are 5 customers from the same
    country as Luís Gonçalves.', 'Bjørn Hansen's invoices dated 2007-04-07 or later have 28 lines in total.'),
    else the entity the question starts from ('… for Luís Gonçalves.')."""
    if entity is not None:
        return plain_names(named_reply(text, entity=entity[1], entity_noun=entity[0]))
    said = re.fullmatch(r"There (?:are|is) (\S+) ([a-z]+(?: [a-z]+)?)\.", text)
    counted = _COUNTED.match(" ".join(str(frame.get("description") or "").split()))
    if said and counted and said.group(2) == counted.group(2):
        n, noun, total = said.group(1), said.group(2), " in total" if counted.group(1) else ""
        rest = clear_cutoffs(plain_terms(plain_names(counted.group(3))), task.get("junctions") or [], "en")
        same = re.fullmatch(r"of the same ([a-z]+) as (.+)", rest)
        if same:  # 'albums of the same artist as the track X' → 'The artist of the track X has 2 albums.'
            return possessives(f"The {same.group(1)} of {same.group(2)} has {n} {noun}{total}.")
        if _RELATION.match(rest):
            return possessives(f"There are {n} {noun} {rest}.")
        owner = possessives(rest[3:]) if rest.startswith("of ") else ""
        one = ((frame.get("short") or {}).get("owner_one", True)) is not False
        if owner and " of " not in owner and "'" in owner:
            return f"{owner[:1].upper()}{owner[1:]} {'has' if one else 'have'} {n} {noun}{total}."
        if owner.startswith("the ") and not any(c.isdigit() for c in owner):
            # 'The albums of the artist who recorded 'Balls to the Wall' have 4 tracks in total.', not 'There are 4
            # tracks for the track 'Balls to the Wall'.' (which counts something else)
            return f"The{owner[3:]} {'has' if one else 'have'} {n} {noun}{total}."
    return possessives(plain_names(named_reply(text, anchor=anchor)))


_CAPITALIZED = re.compile(r"(?:'[^']+'|\b[A-Z0-9][\w.&/()-]*(?: [A-Z0-9][\w.&/()-]*)*)")


def _names_nothing(text: str, task: Mapping[str, Any]) -> bool:
    """Whether an English answer sentence names none of the names and codes of its question (its first word
    left out)."""
    query = str(task.get("query") or "")
    found = (part.strip(".") for m in _CAPITALIZED.finditer(query) for part in re.split(r"[.?!:]\s+", m.group(0)))
    names = set(found) - {query.split(" ")[0], "How", "What", "Which", "Who"}
    names = {n for n in names if len(n) > 1 and n not in {"I", "I'm", "I'd"}}
    return not any(n in text for n in names)


def conversation_tasks(
    task: Mapping[str, Any],
    specs: Specs,
    *,
    trajectory: Mapping[str, Any] | None = None,
    noun_of: NounOf | None = None,
    no_call_every: int = 3,
    cfg_seed: int = 0,
    can: str = "",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The conversation tasks one verified task may yield (its base case, a multi_turn variant, a no_call
    request; `select` later keeps one conversation per underlying question and split), and the variants it
    could not yield (with reasons). A question nobody would type (`naturalness.askability`) yields no base or
    multi_turn case. `can`: what the domain's tools look up, for a no_call decline."""
    calls, ordering = required_calls(task, specs)
    lang = task["language"]
    rng = random.Random(_seed_int(cfg_seed, task["id"]))
    out: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    criteria = {
        "required_calls": [{k: c[k] for k in ("name", "args_subset", "step", "optional")} for c in calls],
        "ordering": ordering,
        "terminal_state": dict(task.get("expected_state_hash") or {}),
        "no_call": False,
    }
    variant = _seed_int(cfg_seed, task["id"], "wording")
    seed = _seed_of(trajectory)
    anchor = ""
    if seed is not None and lang == "en" and noun_of is not None:
        noun = noun_of(seed["tool_id"], seed["param"], lang)
        quoted = f"'{seed['value']}'" in str(task.get("query") or "")  # titles keep their quotes
        named = f"'{seed['value']}'" if quoted else str(seed["value"])
        anchor = f"the {noun} {named}" if noun else named
    entity: tuple[str, str] | None = None
    picked = selected_entity(task)
    if picked is not None and lang == "en" and noun_of is not None:
        spec = next((sp for (_, name), sp in specs.items() if name == picked[0]), None)
        what = noun_of(spec.tool_id, picked[1], lang) if spec is not None else None
        entity = (what, picked[2]) if what else None
    solved = {
        "golden_calls": calls,
        "golden_actions": list(task["golden_actions"]),
        "answer": {
            # days as the request says them ('on or after April 7, 2007', not '2007-04-07': s16 scaled run)
            "text": _compared(
                said_in_reply(answer_reply(task, variant, anchor, entity, several=_fans_out(task, seed)), lang),
                task,
                variant,
            ),
            "values": answer_values(task),
        },
        "task": task["query"],
    }
    basis = counting_basis(str(task.get("query") or "")) if lang == "ko" else None
    if basis and basis not in solved["answer"]["text"]:  # the request leaves the basis out; the reply says it
        how = (
            "구가 있는 시는 구별로 셌어요." if basis == "일반구" else f"{basis} 단위로 셌어요."
        )  # said as it means (s15)
        solved["answer"] = {**solved["answer"], "text": f"{solved['answer']['text']} {how}"}
    level, how = askability(task)
    if basis == "일반구" and _COUNTS_DISTRICTS.search(str(task.get("query") or "")):
        # '경기도의 시군구 수' means its 31 시·군 to a person; the tools list each 일반구 (44), and a reply that says
        # it counted them so was still read as wrong (blind reads s18 r3 #9, s19 r1 #9, s19 r2 #14)
        level, how = None, "the count splits a city into its 일반구, which '시군구 수' does not mean to a person"
    if level is None:
        for case in (base_case(calls), "multi_turn"):
            skipped.append({"source_task_id": task["id"], "case_pattern": case, "reason": f"not askable: {how}"})
    else:
        asked = clear_cutoffs(speakable(task["query"], lang), task.get("junctions") or [], lang)
        natural = {"level": level, "measure": how}
        frame = (task.get("answer") or {}).get("frame") or {}
        several = _fans_out(task, seed)
        said = chat_wording(asked, lang, frame, variant, several=several)  # names as people say them
        split = which_then(_qualified(said, lang)) if lang == "ko" else None
        request, persona = _fitted_persona(lang, rng, split or _qualified(said, lang), level)
        request = context_first(left_to_reply(request, solved["answer"]["text"], lang), lang, variant)
        base = _common(task, base_case(calls), "base", cfg_seed)
        base["said_names"] = said_names(trajectory)
        if split is not None:  # asked 'which one' first: kept only when the reply names it (build.name_found)
            plain = korean_register(_qualified(said, lang), persona)[0]
            base["asks_which"] = opening(lang, persona, plain, variant=variant)
        first = opening(lang, persona, request, variant=variant)
        out.append(
            {
                **base,
                **_basis_said(_briefly(solved, first), request, lang),
                "task": said,
                "initial_message": first,
                "persona": persona,
                "hidden_info": {},
                "success_criteria": criteria,
                "naturalness": natural,
            }
        )
        masked: tuple[str, str] | None = None
        why = "the question cites no single seed value"
        withheld = None if several else seed or (_child_seed(trajectory, asked) if lang == "ko" else None)
        if several:
            why = "the seed's name stands for several things ('that track' would presuppose one)"
        elif withheld is not None and lang == "ko":
            noun = noun_of(withheld["tool_id"], withheld["param"], lang) if noun_of else None
            spoken = spoken_korean_noun(withheld["value"], noun) if noun else None
            where = _in_region(plain_korean(asked), withheld["value"])
            text = mask_korean(where, withheld["value"], spoken, first="그") if spoken else None
            masked = (text, spoken) if text and spoken else None
            why = "no Korean noun names the seed's kind" if not noun else "the seed is not cited verbatim"
        elif withheld is not None:
            masked = mask_english(asked, withheld["value"], first="that")
            why = "some mention of the seed has no noun before it"
            noun = noun_of(withheld["tool_id"], withheld["param"], lang) if noun_of else None
            if masked is None and noun:  # 'Iron Maiden', not 'the artist Iron Maiden': the lexicon names its kind
                masked = mask_english_named(asked, withheld["value"], noun)
                why = "the seed is not cited as one thing of its kind"
        if masked is not None:
            text, noun = masked
            text = _qualified(chat_wording(text, lang), lang)
            request, persona = _fitted_persona(lang, rng, text, level, withholds=True)
            request = left_to_reply(request, solved["answer"]["text"], lang)
            owned = said_as_own(request, noun, lang, persona, variant)
            owned = context_first(owned, lang, variant) if owned is not None else None
            if owned is not None and lang == "ko" and _KO_OWN_CONTAINER.search(owned):
                skipped.append({"source_task_id": task["id"], "case_pattern": "multi_turn",
                                "reason": "asks which place holds the user's own (a person knows it)"})  # fmt: skip
                masked = None
            elif owned is None:
                skipped.append({"source_task_id": task["id"], "case_pattern": "multi_turn",
                                "reason": "the withheld thing cannot be said as the user's own"})  # fmt: skip
                masked = None
        if masked is not None:
            out.append(
                {
                    **_common(task, "multi_turn", "masked-seed", cfg_seed),
                    **_basis_said(solved, owned or "", lang),
                    "task": said,
                    "initial_message": opening(lang, persona, owned, variant=variant, noun=noun),  # type: ignore[arg-type]
                    "persona": persona,
                    "hidden_info": {noun: withheld["value"]},  # type: ignore[index]
                    "success_criteria": criteria,
                    "naturalness": natural,
                }
            )
        elif not any(x["case_pattern"] == "multi_turn" for x in skipped):
            skipped.append({"source_task_id": task["id"], "case_pattern": "multi_turn", "reason": why})
    if no_call_every > 0 and _seed_int(cfg_seed, task["id"], "no_call") % no_call_every == 0:
        subject = str(seed["value"]) if seed is not None else ""
        out.append(no_call_task(task, subject, rng, cfg_seed, can=can))
    return out, skipped


def no_call_task(
    task: Mapping[str, Any], subject: str, rng: random.Random, cfg_seed: int, *, can: str = ""
) -> dict[str, Any]:
    """A request the agent must handle without any call, near the verified task's subject: out of scope (the
    reply declines and says what the assistant can look up) or answerable directly (the reply answers)."""
    lang = task["language"]
    variant = _seed_int(cfg_seed, task["id"], "variant")
    kind = NO_CALL_KINDS[variant % len(NO_CALL_KINDS)]
    form = variant // 2
    persona = draw_persona(lang, rng)
    banmal = persona.get(REGISTER_KEY.get(lang, "")) == "반말"
    can, _, search = can.partition(SEARCH_SEP)
    alt = _seed_int(cfg_seed, task["id"], "decline", sorted(persona.items()))
    ctx = {"kind": kind, "subject": subject, "variant": form, "banmal": banmal, "can": can or _CAN_DEFAULT[lang],
           "search": search, "alt": alt}  # fmt: skip
    request = " ".join(prompts.render(NO_CALL_TEMPLATE.format(lang=lang), part="request", **ctx).split())
    reply = " ".join(prompts.render(NO_CALL_TEMPLATE.format(lang=lang), part="reply", **ctx).split())
    return {
        **_common(task, "no_call", f"{kind}-{form % NO_CALL_FORMS}", cfg_seed),
        "golden_calls": [],
        "golden_actions": [],
        "answer": {"text": reply, "values": []},
        "task": request,
        "no_call_kind": kind,
        "initial_message": opening(lang, persona, request, variant=variant),
        "persona": persona,
        "hidden_info": {},
        "success_criteria": {"required_calls": [], "ordering": [], "terminal_state": {}, "no_call": True},
    }


_CAN_DEFAULT = {"en": "the data my tools cover", "ko": "제 도구가 다루는"}
SEARCH_SEP = "\x1f"  # `can` = '<what the tools look up>' [SEARCH_SEP '<the collection a search tool covers>']
COUNT_TEMPLATE = "conversations/count.{lang}"
ToolNoun = Callable[[str, str], Mapping[str, Any] | None]  # (tool_id, language) → the lexicon's noun entry


def count_singles(
    task: Mapping[str, Any], specs: Specs, tool_noun: ToolNoun, cfg_seed: int = 0
) -> list[dict[str, Any]]:
    """`single` tasks from a verified task's listing calls that take no argument a user would give ("How many
    provinces are there?"): the call's recorded total is the answer; the call stays executed and replayable."""
    lang = task["language"]
    out: list[dict[str, Any]] = []
    keys = key_tool_names(task.get("system_state") or {})
    for a in task["golden_actions"]:
        spec = spec_of(specs, a)
        if spec is None or is_key_action(a, specs, keys) or spec.state_changing:
            continue
        total = a.get("total_count")
        noun = tool_noun(spec.tool_id, lang)
        if (
            value_compare_args(a, spec)
            or not isinstance(total, int)
            or isinstance(total, bool)
            or total < 2
            or not noun
        ):
            continue
        required = [p for p in spec.required_params if p not in spec.generic_params.names()]
        if required:
            continue
        variant = _seed_int(cfg_seed, spec.tool_id, "count")
        ctx = {"noun": noun, "total": total, "variant": variant}
        request = " ".join(prompts.render(COUNT_TEMPLATE.format(lang=lang), part="request", **ctx).split())
        reply = " ".join(prompts.render(COUNT_TEMPLATE.format(lang=lang), part="reply", **ctx).split())
        hide = hidden_params(spec)
        props = spec.input_schema.get("properties") or {}
        args = {
            k: coerce(v, props.get(k) or {}) for k, v in a["args"].items() if k not in hide and v != KEY_PLACEHOLDER
        }
        call = {"name": a["tool"], "platform": a["platform"], "step": 1, "args_subset": {}, "args": args}
        base = _common(task, "single", f"count:{spec.tool_id}", cfg_seed)
        rng = random.Random(base["seed"])
        request, persona = _fitted_persona(lang, rng, request, SHORT)
        out.append(
            {
                **base,
                "id": "sha256:" + hashlib.sha256(dumps([spec.tool_id, "count", total]).encode()).hexdigest(),
                "source_pattern": "COUNT",
                "golden_calls": [call],
                "golden_actions": [
                    a2
                    for a2 in task["golden_actions"]
                    if is_key_action(a2, specs, keys) and a2.get("platform") == a["platform"]
                ]
                + [{**a, "step": 2}],
                "answer": {"text": reply, "values": [total]},
                "task": request,
                "initial_message": opening(lang, persona, request, variant=variant),
                "persona": persona,
                "hidden_info": {},
                "success_criteria": {
                    "required_calls": [{"name": a["tool"], "args_subset": {}, "step": 1}],
                    "ordering": [],
                    "terminal_state": {},
                    "no_call": False,
                },
                "naturalness": {"level": SHORT, "measure": "one listing call"},
                "counted": [noun.get("noun") or noun.get("plural"), total],  # what the question counts
            }
        )
    return out


def lexicon_tool_noun(lexicons: Mapping[str, Mapping[str, Any]]) -> ToolNoun:
    """`ToolNoun` over `tool_lexicon` values: the tool's own noun entry in a language ({sing, plural} in
    English, {noun, counter} in Korean), None when the entry is missing or not in that language."""
    tools: dict[str, Mapping[str, Any]] = {}
    for lex in lexicons.values():
        tools.update(((lex.get("nouns") or {}).get("tools") or {}).items())

    def tool_noun(tool_id: str, language: str) -> Mapping[str, Any] | None:
        n = ((tools.get(tool_id) or {}).get("noun") or {}).get(language)
        if not isinstance(n, Mapping):
            return None
        if language == "ko":
            word = str(n.get("noun") or "")
            ok = bool(word) and all("\uac00" <= ch <= "\ud7a3" or ch == " " for ch in word) and n.get("counter")
            return n if ok else None
        return n if n.get("plural") else None

    return tool_noun


_KO_LEVELS = ("시도", "시군구", "읍면동", "법정 읍면동", "리")


# the index's own words for what a document search returns: no user asks for 'passages' (blind read s11 #5)
_INTERNAL_WORDS = frozenset({"passages", "passage", "chunks", "documents", "snippets", "문단", "구절", "문서 조각"})


def capabilities(tool_ids: Sequence[str], tool_noun: ToolNoun, language: str, limit: int = 4) -> str:
    """What the offered tools look up, for a decline: 'airlines, aircraft and airports' / '시도, 시군구, 읍면동'."""
    words: list[str] = []
    for tid in tool_ids:
        n = tool_noun(tid, language)
        w = (n.get("noun") if language == "ko" else n.get("plural")) if n else None
        if isinstance(w, str) and w and w not in words and "state" not in w and w not in _INTERNAL_WORDS:
            words.append(w)
    if language == "ko":  # the administrative levels from the top down: '시도, 시군구, 읍면동, 리'
        words.sort(key=lambda w: _KO_LEVELS.index(w) if w in _KO_LEVELS else len(_KO_LEVELS))
    # 'airports with an IATA code' beside 'airports', 'hourly weather records' beside 'weather records': the kind is
    # said once, in its general word ('airports, IATA-coded airports and trips': own read s14)
    words = [
        w for w in words
        if not any(v != w and (re.search(rf"[\s-]{re.escape(v)}$", w) or w.startswith(v + " ")) for v in words)
    ]  # fmt: skip
    words = words[:limit]
    if not words:
        return ""
    if language == "ko" and len(words) > 2 and all(w in _KO_LEVELS for w in words):
        # a decline says in plain words what it looks up, not the code book's list of levels ('시도, 시군구, 법정
        # 읍면동, 리 정보라면 …': blind s14 #3, #13)
        return "시군구나 동네 같은 행정구역"
    if language == "ko":
        if len(words) == 2:  # '시도나 읍면동', '읍면동이나 리'
            return f"{prompts.josa(words[0], '이나/나')} {words[1]}"
        return words[0] if len(words) == 1 else f"{prompts.josa(words[0], '이나/나')} {words[1]} 같은"
    if len(words) == 1:
        return ", ".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def lexicon_catalogue_tools(lexicons: Mapping[str, Mapping[str, Any]]) -> frozenset[str]:
    """The tools whose records are the service's own catalogue (the lexicon's `chat: false`, e.g. the census
    tool's list of statistic items): a question only about them is no conversation a person has."""
    out: set[str] = set()
    for lex in lexicons.values():
        for tid, entry in ((lex.get("nouns") or {}).get("tools") or {}).items():
            if isinstance(entry, Mapping) and entry.get("chat") is False:
                out.add(tid)
    return frozenset(out)


def about_catalogue(task: Mapping[str, Any], specs: Specs, catalogue: frozenset[str]) -> bool:
    """Whether every call of a task goes to a catalogue tool (`lexicon_catalogue_tools`)."""
    if not catalogue:
        return False
    keys = key_tool_names(task.get("system_state") or {})
    actions = [a for a in task.get("golden_actions") or [] if not is_key_action(a, specs, keys)]
    ids = [getattr(spec_of(specs, a), "tool_id", None) for a in actions]
    return bool(ids) and all(i in catalogue for i in ids)


def lexicon_param_entity(lexicons: Mapping[str, Mapping[str, Any]]) -> Callable[[str, str], str | None]:
    """(tool_id, param) → the entity its value names (the lexicon's `entity`: 'artist' for list_artist_albums's
    artist_id and for search_artists's name), None when the lexicon does not say."""
    tools: dict[str, Mapping[str, Any]] = {}
    for lex in lexicons.values():
        tools.update(((lex.get("nouns") or {}).get("tools") or {}).items())

    def entity(tool_id: str, param: str) -> str | None:
        p = ((tools.get(tool_id) or {}).get("params") or {}).get(param) or {}
        e = p.get("entity") if isinstance(p, Mapping) else None
        return str(e) if e else None

    return entity


def lexicon_noun_of(lexicons: Mapping[str, Mapping[str, Any]]) -> NounOf:
    """`NounOf` over `tool_lexicon` values: a parameter's own noun, else its tool's noun when it names the
    tool's entity."""
    tools: dict[str, Mapping[str, Any]] = {}
    for lex in lexicons.values():
        tools.update(((lex.get("nouns") or {}).get("tools") or {}).items())

    def noun_of(tool_id: str, param: str, language: str) -> str | None:
        t = tools.get(tool_id) or {}
        p = (t.get("params") or {}).get(param) or {}
        own = (p.get("noun") or {}).get(language)
        if isinstance(own, str) and own:
            return own
        if p.get("entity") and p.get("entity") == t.get("entity"):
            n = (t.get("noun") or {}).get(language)
            n = n.get("noun") or n.get("sing") if isinstance(n, Mapping) else n
            return n if isinstance(n, str) and n else None
        return None

    return noun_of
