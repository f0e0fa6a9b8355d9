"""The user simulator's deterministic side (issue 19): what a turn of the agent asks for, and the rules user.

Shared by the `user_simulator` role (its rules implementation and its guard against leaks) and by the
episode scorer in `factory.conversations` (which classifies simulator faults with the same reading of a
turn, so a model simulator is judged by the rules the rules simulator follows).

The rules user:
- reveals a hidden fact only in reply to an agent turn that asks for it (names it, or asks a question while
  exactly one fact is still unrevealed);
- confirms what the agent asks to confirm;
- stops with `STOP` once the agent has stated every answer value (or, for a task without answer values,
  has replied with a statement); after two statements that do not answer, it gives up (also with `STOP`).
"""

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from factory import prompts
from factory.config import ProjectConfig
from factory.llm.schemas import SimulatorInput, SimulatorReply

STOP = "###STOP###"
RULES_TEMPLATE = "user_simulator/rules.{lang}"
MAX_NUDGES = 1  # statements that do not answer before the rules user gives up

_KO_QUESTION = re.compile(r"(까요|나요|세요|습니까|ㅂ니까|인가요|을까|ㄹ까|알려\s*주|말씀해\s*주|어느|어떤|무슨)")
_EN_QUESTION = re.compile(r"^\s*(which|what|who|where|when|could you|can you|would you|please tell|tell me)\b", re.I)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def is_question(text: str, language: str) -> bool:
    """Whether an agent turn asks the user something."""
    if "?" in text or "？" in text:
        return True
    return bool(_KO_QUESTION.search(text)) if language == "ko" else bool(_EN_QUESTION.search(text))


def _terms(name: str) -> list[str]:
    return [t for t in re.split(r"[\s_/·,()]+", _fold(name)) if len(t) >= 2]


def mentions_value(text: str, value: Any) -> bool:
    """Whether `value` appears in `text` as a whole token (case- and width-insensitive; a number's grouped digits
    read as the number: '6,290,521 bytes' says 6290521)."""
    v = _fold(str(value).strip())
    if not v:
        return False
    t = _fold(text)
    if re.fullmatch(r"\d{4,}(?:\.\d+)?", v):
        t = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", t)
    if re.fullmatch(r"[0-9a-z_.\-:]+", v):
        return re.search(rf"(?<![0-9a-z]){re.escape(v)}(?![0-9a-z])", t) is not None
    return v in t


def asked_facts(text: str, hidden_info: Mapping[str, Any], revealed: Sequence[str], language: str) -> list[str]:
    """The hidden facts an agent turn asks for: those it names in a question; a question naming none asks for
    the one fact still unrevealed when exactly one is."""
    if not text or not is_question(text, language):
        return []
    folded = _fold(text)
    named = [n for n in hidden_info if any(t in folded for t in _terms(n))]
    if named:
        return named
    open_facts = [n for n in hidden_info if n not in revealed]
    return open_facts if len(open_facts) == 1 and not _confirmation(text, hidden_info) else []


def _confirmation(text: str, hidden_info: Mapping[str, Any]) -> bool:
    """A question that already states a hidden value ('Do you mean ICN?') asks to confirm, not to reveal."""
    return any(mentions_value(text, v) for v in hidden_info.values())


def leaked_facts(
    message: str, asked: Sequence[str], hidden_info: Mapping[str, Any], revealed: Sequence[str]
) -> list[str]:
    """Facts a user message states although they were neither asked for in the agent's last turn nor revealed
    before: a leak (the kotraj simulator fault 'leaked hidden info unasked')."""
    return [n for n, v in hidden_info.items() if n not in asked and n not in revealed and mentions_value(message, v)]


def goal_met(transcript: Sequence[Mapping[str, str]], answer_values: Sequence[Any], language: str = "en") -> bool:
    """Whether some agent turn states every answer value (no answer values: some agent turn that is not a
    question)."""
    said = [m.get("content") or "" for m in transcript if m.get("role") == "assistant"]
    said = [s for s in said if s.strip()]
    if not answer_values:
        return any(not is_question(s, language) for s in said)
    return any(all(mentions_value(s, v) for v in answer_values) for s in said)


def _variant(inp: SimulatorInput) -> int:
    """The form a turn's wording takes: fixed per task and turn (so replays agree), varied across tasks."""
    turn = sum(1 for m in inp.transcript if m.get("role") == "user")
    return int(hashlib.sha256(f"{inp.task}\x1f{turn}".encode()).hexdigest()[:8], 16)


_EN_DECLINE = re.compile(r"\b(?:can't|cannot|can not|not able to|unable to)\b", re.I)
_KO_DECLINE = re.compile(r"(?:할 수 없|수 없어요|수 없습니다|못 해요|못합니다|어려워요)")


def declined(text: str, language: str) -> bool:
    """Whether an agent turn turns the request down ("I can't send text messages, …"): the user's last word then
    takes the refusal in, it does not thank for an answer."""
    return bool((_KO_DECLINE if language == "ko" else _EN_DECLINE).search(text or ""))


_EN_NOT_UNIT = frozenset(
    "and or against more fewer less than for in of from to as at on by with is are was were".split()
)
_KO_COUNTER = r"(?:개월|곳|개|명|건|곡|장|편|번|년|시간|분|초|원|달러|센티미터|킬로미터|미터|킬로그램|도)"


def echo(said: str, values: Sequence[Any], language: str) -> str:
    """The answer as the agent said it, for the user to say back when closing ('18 playlists', '87곳', 'Revelations');
    '' when there is not exactly one answer value, or it is a bare number with no unit or counter after it ('1' in
    'ISW has 1 more airport' says nothing on its own), a quoted title (it names the thing asked about), or a Korean name that does not end in Hangul (a particle after
    'Yeoncheon-gun' would be a guess)."""
    if len(values) != 1 or isinstance(values[0], bool):
        return ""
    value = prompts.environment().filters["value"](values[0])
    if re.search(rf"\(\s*{re.escape(value)}", said):
        return ""  # the figure in brackets is the exact one beside the said form ('5 minutes 44 seconds (343719 …)')
    if isinstance(values[0], int | float):
        if language == "ko":
            m = re.search(rf"(?<![\d.]){re.escape(value)}\s?({_KO_COUNTER})", said)
            return f"{value}{m.group(1)}" if m else ""
        m = re.search(rf"(?<![\w.]){re.escape(value)}\s+([a-z][a-z-]*)\b", said)
        return f"{value} {m.group(1)}" if m and m.group(1) not in _EN_NOT_UNIT else ""
    if len(value) > 40 or not mentions_value(said, value) or re.search(rf"['\"‘“]{re.escape(value)}['\"’”]", said):
        return ""  # a quoted title says which thing, not what was learned ('Oh nice, Fast As a Shark.')
    if language == "ko" and not ("가" <= value[-1:] <= "힣"):
        return ""
    return spoken_place(value) if language == "ko" else value


_KO_SHORT = ((re.compile(r"^(.+?)(?:특별시|광역시|특별자치시)$"), r"\1"), (re.compile(r"^강원특별자치도$"), "강원도"),
             (re.compile(r"^전북특별자치도$"), "전북"), (re.compile(r"^(.+?)특별자치도$"), r"\1"),
             (re.compile(r"^(충|전|경)(?:청|라|상)(북|남)도$"), r"\1\2"))  # fmt: skip


def spoken_place(name: str) -> str:
    """A 시도's official name as people say it in conversation: '서울특별시' → '서울', '부산광역시' → '부산',
    '제주특별자치도' → '제주', '강원특별자치도' → '강원도', '충청북도' → '충북' (blind read s14c conversations:
    '서울특별시구나' read as a form letter); any other name ('경기도', '종로구') as it is."""
    for pattern, short in _KO_SHORT:
        if pattern.match(name):
            return pattern.sub(short, name)
    return name


def _render(inp: SimulatorInput, kind: str, facts: Sequence[tuple[str, Any]] = (), *, refused: bool = False) -> str:
    last = inp.transcript[-1]
    said = str(last.get("content") or "") if last.get("role") == "assistant" else ""
    text = prompts.render(
        RULES_TEMPLATE.format(lang=inp.language),
        kind=kind,
        persona=inp.persona,
        facts=[list(f) for f in facts],
        text="",
        variant=_variant(inp) if kind != "nudge" else 0,
        declined=refused,
        echo=echo(said, inp.answer_values, inp.language) if kind == "thanks" and not refused else "",
    )
    return " ".join(text.split())


def opening(language: str, persona: Mapping[str, str], text: str, *, variant: int = 0, noun: str | None = None) -> str:
    """The user's first message: the persona's opener and the request (`variant` picks the form); with `noun`,
    a request whose one thing is withheld ('that track'), introduced the way a person brings it up."""
    out = prompts.render(
        RULES_TEMPLATE.format(lang=language),
        kind="open" if noun is None else "open_masked",
        persona=dict(persona),
        facts=[],
        text=text,
        variant=variant,
        noun=noun or "",
    )
    return " ".join(out.split())


def user_simulator(inp: SimulatorInput) -> SimulatorReply:
    """The rules user's next message for the transcript (whose last turn is the agent's)."""
    last = inp.transcript[-1]
    said = (last.get("content") or "").strip() if last.get("role") == "assistant" else ""
    asked = asked_facts(said, inp.hidden_info, inp.revealed, inp.language)
    if asked:
        return SimulatorReply(
            message=_render(inp, "reveal", [(n, inp.hidden_info[n]) for n in asked]), revealed=list(asked)
        )
    if goal_met(inp.transcript, inp.answer_values, inp.language) and said:
        refused = not inp.answer_values and declined(said, inp.language)
        return SimulatorReply(message=f"{_render(inp, 'thanks', refused=refused)} {STOP}", stop=True)
    if said and is_question(said, inp.language):
        return SimulatorReply(message=_render(inp, "confirm"))
    nudges = sum(1 for m in inp.transcript if m.get("role") == "user" and m.get("content") == _render(inp, "nudge"))
    if nudges >= MAX_NUDGES:
        return SimulatorReply(message=f"{_render(inp, 'give_up')} {STOP}", stop=True)
    return SimulatorReply(message=_render(inp, "nudge"))


def reply_problems(inp: SimulatorInput, out: SimulatorReply) -> list[str]:
    """Guard of a model simulator's reply: not empty unless stopping, no hidden fact the agent did not ask for,
    no hidden value changed."""
    problems = []
    if not out.message.strip() and not out.stop:
        problems.append("the message is empty but stop is false")
    last = inp.transcript[-1]
    said = (last.get("content") or "") if last.get("role") == "assistant" else ""
    asked = asked_facts(said, inp.hidden_info, inp.revealed, inp.language)
    leaked = leaked_facts(out.message, asked, inp.hidden_info, inp.revealed)
    if leaked:
        problems.append(f"the message reveals {', '.join(leaked)} although the assistant did not ask for it")
    unknown = [n for n in out.revealed if n not in inp.hidden_info]
    if unknown:
        problems.append(f"revealed names facts that are not hidden_info: {', '.join(unknown)}")
    return problems


def simulator_pin(cfg: ProjectConfig) -> dict[str, Any]:
    """The user simulator as it is pinned: backend, model and temperature per language, template hashes."""
    from factory.llm.roles import role
    from factory.llm.rules import RULES_VERSION
    from factory.model_config import RULES
    from factory.paths import package_root

    spec = role("user_simulator")
    per_language: dict[str, Any] = {}
    for lang in cfg.models.languages:
        name = cfg.models.backend_for(spec.name, lang)
        if name == RULES:
            per_language[lang] = {"backend": RULES, "model": RULES_VERSION, "temperature": 0.0}
        else:
            b = cfg.models.backends[name]
            per_language[lang] = {"backend": name, "model": b.model, "temperature": b.temperature}
    rules_code = package_root() / "factory" / "llm" / "simulator.py"
    return {
        "role": spec.name,
        "languages": per_language,
        "rules_implementation": "sha256:" + hashlib.sha256(rules_code.read_bytes()).hexdigest(),
        "prompts": prompts.template_hashes(spec.all_templates()),
    }
