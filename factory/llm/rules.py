"""Deterministic (`rules`) implementations of every model role.

They need no model and are always available: binding proposals from name,
description, type and value evidence; arguments from examples, enums, defaults
and known values; queries from per-pattern templates in `prompts/`; judges by
string and logic checks; an agent that replays the golden actions.
"""

import inspect
import json
import re
import unicodedata
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

from factory import prompts
from factory.llm.schemas import (
    AgentResult,
    AgentTaskInput,
    AnswerLeakageInput,
    AnswerMaterial,
    Binding,
    DecorativeChainInput,
    EdgeProposal,
    EdgeProposalInput,
    FieldBrief,
    FluencyInput,
    FluencyScores,
    JudgeVerdict,
    NonGradableInput,
    ParamBrief,
    QueryDraft,
    QueryParaphraseInput,
    QueryWriterInput,
    Scalar,
    SourceArguments,
    SourceArgumentsInput,
    ToolCallRecord,
)
from factory.tools.identifiers import singular, uri_id, uri_words, words

RULES_VERSION = "rules-v2"

Executor = Callable[[str, dict[str, Any]], Any | Awaitable[Any]]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^0-9a-zA-Z\uac00-\ud7a3]+")
_STOP = frozenset("a an the of for by to in on and or with is are get list find search return returns id".split())
# Suffixes that name the same thing in API field names (carrierCode ~ carrier_cd ~ carrier).
_SYNONYMS = {"cd": "code", "nm": "name", "no": "number", "num": "number", "dt": "date", "ymd": "date", "yr": "year"}


@lru_cache(maxsize=65536)  # pure; edge proposals ask for the same names and descriptions again and again
def tokens(text: str) -> frozenset[str]:
    """Lower-case word tokens of an identifier or a sentence (camelCase and snake_case split)."""
    out = set()
    for t in _SPLIT.split(_CAMEL.sub(" ", text)):
        t = t.lower()
        if t and t not in _STOP:
            out.add(_SYNONYMS.get(t, t))
    return frozenset(out)


def _jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@lru_cache(maxsize=65536)
def _norm_name(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.rsplit(".", 1)[-1].lower())


def _name_similarity(param: str, field: str) -> float:
    if _norm_name(param) == _norm_name(field):
        return 1.0
    tp, tf = tokens(param), tokens(field.rsplit(".", 1)[-1])
    if not tp or not tf:
        return 0.0
    # containment counts more than plain overlap: 'carrier' vs 'carrier_code'
    return max(_jaccard(tp, tf), 0.8 * len(tp & tf) / min(len(tp), len(tf)))


_NUMERIC = {"integer", "number"}


def _type_compat(param_type: str, field_type: str) -> float:
    if param_type == field_type:
        return 1.0
    if "boolean" in (param_type, field_type):  # a flag takes no code, name or number
        return 0.0
    if param_type in _NUMERIC and field_type in _NUMERIC:
        return 0.9
    if "string" in (param_type, field_type) and ({param_type, field_type} & _NUMERIC):
        return 0.6
    if "object" in (param_type, field_type) or "array" in (param_type, field_type):
        return 0.1
    return 0.4


@lru_cache(maxsize=65536, typed=True)
def _norm_value(v: Scalar) -> str:
    s = str(v).strip().casefold()
    return s[:-2] if s.endswith(".0") and s[:-2].lstrip("-").isdigit() else s


def _distinctiveness(v: str) -> float:
    """How much a shared value says: small numbers and one-character values coincide by chance
    (an arrival delay of 11 is not a province code '11'); codes and names do not."""
    if len(v) <= 1 or v in ("true", "false"):
        return 0.1
    if v.lstrip("-").replace(".", "", 1).isdigit() and len(v.lstrip("-").split(".")[0]) <= 3:
        return 0.25
    return 1.0


_LONG_ID = re.compile(r"^-?\d{12,}$|^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _value_overlap(field: FieldBrief, param: ParamBrief) -> float:
    """Shared values, weighted by how much each says, over the smaller of the two sets; one shared long id
    (12+ digits, a UUID) is half the evidence whatever the sets' sizes: it cannot coincide by chance, and a
    target whose accepted ids came from several listings (get_pet_by_id fed by findByStatus and by findByTags)
    would otherwise look weakly bound to each."""
    accepted = {_norm_value(v) for v in [*param.examples, *(param.enum or [])]}
    seen = {_norm_value(v) for v in field.samples}
    if not accepted or not seen:
        return 0.0
    both = accepted & seen
    shared = sum(_distinctiveness(v) for v in both)
    overlap = min(shared / min(len(accepted), len(seen)), 1.0)
    return max(overlap, 0.5) if any(_LONG_ID.match(v) for v in both) else overlap


_DATE_DASH = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_COMPACT = re.compile(r"^\d{8}$")


def _transform(field: FieldBrief, param: ParamBrief) -> str | None:
    fs = [str(s) for s in field.samples]
    ps = [str(s) for s in [*param.examples, *(param.enum or [])]]
    if fs and ps:
        if all(_DATE_DASH.match(s) for s in fs) and all(_DATE_COMPACT.match(s) for s in ps):
            return "date:YYYYMMDD"
        if all(_DATE_COMPACT.match(s) for s in fs) and all(_DATE_DASH.match(s) for s in ps):
            return "date:YYYY-MM-DD"
        if all(s.isupper() for s in ps if s.isalpha()) and any(s.islower() for s in fs if s.isalpha()):
            return "upper"
    if param.type in _NUMERIC and field.type == "string":
        return "to_number"
    if param.type == "string" and field.type in _NUMERIC:
        return "to_string"
    return None


def binding_score(field: FieldBrief, param: ParamBrief) -> float:
    """Evidence that `field` (source output) can fill `param` (target input), in [0, 1]."""
    name = _name_similarity(param.name, field.name)
    desc = _jaccard(tokens(f"{param.name} {param.description}"), tokens(f"{field.name} {field.description}"))
    typ = _type_compat(param.type, field.type)
    if typ == 0.0:
        return 0.0
    overlap = _value_overlap(field, param)
    score = 0.45 * name + 0.15 * desc + 0.15 * typ + 0.25 * overlap
    if overlap >= 0.5:  # shared real values are the strongest evidence there is
        score = max(score, 0.5 + 0.5 * overlap * typ)
    return round(min(score, 1.0), 4)


BIND_MIN = 0.4
_SCALAR_TYPES = {"string", "integer", "number"}


def _element_view(param: ParamBrief) -> ParamBrief | None:
    """An array parameter of scalars seen as one of its elements (``names: string[]`` → ``name: string``),
    so a scalar field of the source's records fills it wrapped in a list; None for any other parameter."""
    if param.type != "array" or param.items_type not in _SCALAR_TYPES:
        return None
    name = param.name[:-1] if len(param.name) > 3 and param.name.endswith("s") else param.name
    return param.model_copy(update={"name": name, "type": param.items_type, "enum": None, "examples": []})


_ID_WORDS = {"id", "key", "no", "number", "num"}


def _uri_id_view(f: FieldBrief, p: ParamBrief) -> FieldBrief | None:
    """A field of URIs seen as the ids they end with, named as the parameter, when the parameter is an
    id of something every URI names (``resourceId`` ← ``demo://resource/dynamic/text/2``: 2); None
    otherwise (transform ``uri_id``)."""
    if p.type not in _SCALAR_TYPES or f.type != "string" or not f.samples:
        return None
    pw = [singular(w) for w in words(p.name)]
    if len(pw) < 2 or pw[-1] not in _ID_WORDS:
        return None
    ids = [uri_id(s) for s in f.samples]
    if any(i is None for i in ids) or not all(set(pw[:-1]) & uri_words(s) for s in f.samples):
        return None
    typ = "integer" if all(isinstance(i, int) for i in ids) else "string"
    return f.model_copy(update={"name": p.name, "type": typ, "samples": ids})


def _score_pair(f: FieldBrief, p: ParamBrief) -> tuple[float, str | None]:
    """(binding score, transform) of field `f` filling parameter `p`; array-of-scalar parameters take one
    scalar value wrapped in a list (transform ``wrap``); an id parameter may take the id a URI field ends
    with (transform ``uri_id``)."""
    element = _element_view(p)
    if element is not None:
        if f.type not in _SCALAR_TYPES:
            return 0.0, None
        return binding_score(f, element), "wrap"
    direct = binding_score(f, p)
    view = _uri_id_view(f, p)
    if view is not None and (by_id := binding_score(view, p)) > direct:
        return by_id, "uri_id"
    return direct, None


def edge_proposal(inp: EdgeProposalInput) -> EdgeProposal:
    src, tgt = inp.source, inp.target
    bindings: list[Binding] = []
    scores: list[float] = []
    used_fields: set[str] = set()
    candidates: list[tuple[float, ParamBrief, FieldBrief, str | None]] = []
    for p in tgt.semantic_params:
        for f in src.fields:
            score, wrap = _score_pair(f, p)
            candidates.append((score, p, f, wrap))
    bound: set[str] = set()
    for score, p, f, wrap in sorted(candidates, key=lambda c: (-c[0], c[1].name, c[2].name)):
        if score < BIND_MIN or p.name in bound or f.name in used_fields:
            continue
        transform = wrap or _transform(f, p)
        bindings.append(Binding(target_param=p.name, source_field=f.name, transform=transform))
        scores.append(score)
        bound.add(p.name)
        used_fields.add(f.name)
    defaults: dict[str, list[Scalar]] = {}
    for p in tgt.semantic_params:
        if p.name in bound:
            continue
        values = list(p.enum or []) or list(p.examples) or ([p.default] if p.default is not None else [])
        if values:
            defaults[p.name] = values[:3]
    required = [p.name for p in tgt.semantic_params if p.required]
    covered = [n for n in required if n in bound or n in defaults]
    coverage = len(covered) / len(required) if required else 1.0
    topical = _jaccard(tokens(f"{src.name} {src.description}"), tokens(f"{tgt.name} {tgt.description}"))
    if bindings:
        feasibility = 0.5 * max(scores) + 0.2 * (sum(scores) / len(scores)) + 0.2 * coverage + 0.1 * topical
        reason = (
            f"binds {', '.join(f'{b.source_field}→{b.target_param}' for b in bindings)} "
            f"(best evidence {max(scores):.2f}); {len(covered)}/{len(required)} required inputs covered"
        )
    else:
        feasibility = 0.1 * topical
        reason = f"no output field of {src.name} matches an input of {tgt.name}"
    return EdgeProposal(
        feasibility_score=round(min(max(feasibility, 0.0), 1.0), 4),
        reason=reason,
        bindings=bindings,
        default_candidates=defaults,
    )


def source_arguments(inp: SourceArgumentsInput) -> SourceArguments:
    args: dict[str, Scalar] = {}
    for p in inp.tool.semantic_params:
        pools = [inp.known_values.get(p.name, []), p.examples, p.enum or []]
        pool = next((list(x) for x in pools if x), [])
        if pool:
            args[p.name] = pool[inp.variant % len(pool)]
        elif p.default is not None and p.required:
            args[p.name] = p.default
    return SourceArguments(args=args)


# --------------------------------------------------------------------------- queries


def answer_text(answer: AnswerMaterial, language: str = "en") -> str:
    """The gold answer as text: numbers without spurious decimals, lists comma-joined."""
    v = answer.value
    if answer.type == "boolean" or isinstance(v, bool):
        yes = bool(v) if not isinstance(v, str) else v.strip().lower() in {"true", "yes", "1", "예"}
        return ("예" if yes else "아니요") if language == "ko" else ("yes" if yes else "no")
    if isinstance(v, list | tuple):
        return ", ".join(answer_text(AnswerMaterial(value=x, description=""), language) for x in v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def main_pattern(pattern: str) -> str:
    """The pattern a query template is chosen by: 'SEQ+FAN' → 'FAN' (the last, outermost junction)."""
    parts = [p for p in re.split(r"[^A-Za-z]+", pattern.upper()) if p]
    return parts[-1] if parts else "SEQ"


QUERY_TEMPLATE = "query_writer/rules.{lang}"


def query_writer(inp: QueryWriterInput) -> QueryDraft:
    steps = sorted(inp.steps, key=lambda s: s.step)
    query = prompts.render(
        QUERY_TEMPLATE.format(lang=inp.language),
        pattern=main_pattern(inp.pattern),
        steps=steps,
        seeds=inp.seed_values,
        qualifier=inp.qualifier,
        answer=inp.answer,
        variant=inp.variant,
    )
    query = re.sub(r"\.\.$", ".", " ".join(query.split()))  # a name ending in '.' ('American Airlines Inc.') ends it
    return QueryDraft(query=query, answer=answer_text(inp.answer, inp.language))


def query_paraphrase(inp: QueryParaphraseInput) -> QueryDraft:
    """Rules do not paraphrase: the question comes back as it was written (the stage records it as `template`;
    fixed opening phrases around it would only make every query start the same way)."""
    return QueryDraft(query=" ".join(inp.query.split()), answer=inp.answer)


def fluency_scorer(inp: FluencyInput) -> FluencyScores:
    """Rules cannot measure fluency: no text gets a score (the stage's rule checks still apply)."""
    return FluencyScores(scores=[None] * len(inp.texts))


# --------------------------------------------------------------------------- judges


_LOWER_WORD = re.compile(r"(?<![\w])[a-z\uac00-\ud7a3]{3,}")


def is_memo(value: Any) -> bool:
    """A long free-text value (a memo, note, description: over 30 characters, with a sentence break or running
    lower-case text) that a question generalizes instead of copying (EDGE App. J). A list of names ('Angus
    Young, Malcolm Young, Brian Johnson') or a long title is no memo: it is cited as it is."""
    if not isinstance(value, str) or len(value) <= 30:
        return False
    return bool(re.search(r"[.;!?]\s", value)) or len(_LOWER_WORD.findall(value)) >= 3


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def mentions(text: str, value: Scalar) -> bool:
    """Whether `value` appears in `text` as a whole token (case-insensitive; numbers not inside longer numbers)."""
    v = _fold(_norm_value(value) if not isinstance(value, str) else value.strip())
    if not v:
        return False
    t = _fold(text)
    if re.fullmatch(r"[0-9a-z_.\-]+", v):
        return re.search(rf"(?<![0-9a-z]){re.escape(v)}(?![0-9a-z])", t) is not None
    return v in t


_SHORT = 2  # values shorter than this (like '1' or 'a') say nothing when they appear


def answer_leakage(inp: AnswerLeakageInput) -> JudgeVerdict:
    allowed = {_norm_value(v) for v in inp.seed_values}
    answer_values = list(inp.answer_values) or ([inp.answer] if inp.answer.strip() else [])
    for v in answer_values:
        if len(str(v)) >= _SHORT and _norm_value(v) not in allowed and mentions(inp.query, v):
            return JudgeVerdict(verdict=True, reason=f"answer_in_query: the query states the answer value {v!r}")
    answer_set = {_norm_value(v) for v in answer_values}
    for v in inp.intermediate_values:
        nv = _norm_value(v)
        if len(str(v)) >= _SHORT and nv not in allowed and nv not in answer_set and mentions(inp.query, v):
            return JudgeVerdict(
                verdict=True,
                reason=f"intermediate_in_query: the query states {v!r}, which a step must derive",
            )
    return JudgeVerdict(verdict=False, reason="no_leak: neither the answer nor a derived value appears in the query")


_VAGUE = {
    "en": [
        "recent",
        "recently",
        "latest",
        "nowadays",
        "currently",
        "some",
        "several",
        "various",
        "main",
        "best",
        "interesting",
        "popular",
        "good",
        "etc",
    ],
    "ko": ["최근", "최신", "요즘", "현재", "일부", "몇몇", "여러", "주요", "가장 좋은", "재미있는", "인기", "등등"],
}
_ERROR_ANSWERS = {"", "none", "null", "n/a", "nan", "error", "unknown", "오류", "없음", "[]", "{}"}


def non_gradable(inp: NonGradableInput) -> JudgeVerdict:
    a = _fold(inp.answer.strip())
    if a in _ERROR_ANSWERS or a.startswith(("error", "오류")):
        return JudgeVerdict(
            verdict=True, reason=f"empty_or_error_answer: the gold answer {inp.answer!r} cannot be checked"
        )
    if inp.realtime and not inp.fixed_time:
        return JudgeVerdict(
            verdict=True, reason="realtime_without_timestamp: the answer changes with time and no time is fixed"
        )
    if inp.answer_items is not None and inp.answer_items > inp.max_list_items:
        return JudgeVerdict(
            verdict=True, reason=f"answer_too_long: a list of {inp.answer_items} items (max {inp.max_list_items})"
        )
    words = [w for w in _VAGUE[inp.language] if mentions(inp.query, w)]
    if words:
        return JudgeVerdict(verdict=True, reason=f"vague_terms: {', '.join(words)}")
    return JudgeVerdict(verdict=False, reason="gradable: a fixed, non-empty answer checkable by comparison")


def decorative_chain(inp: DecorativeChainInput) -> JudgeVerdict:
    steps = sorted(inp.steps, key=lambda s: s.step)
    last = steps[-1].step
    for s in steps:
        if s.step == last:
            continue
        if not s.passed_values and not s.feeds_answer:
            return JudgeVerdict(
                verdict=True,
                reason=f"step_unused: step {s.step} ({s.tool}) passes nothing to later steps or the answer",
            )
        if s.passed_values and not s.feeds_answer and all(mentions(inp.query, v) for v in s.passed_values):
            return JudgeVerdict(
                verdict=True,
                reason=f"step_skippable: the query already states what step {s.step} ({s.tool}) derives",
            )
    return JudgeVerdict(verdict=False, reason="every_step_needed: each step feeds a later step or the answer")


# --------------------------------------------------------------------------- agent


def _preview(result: Any, limit: int = 2000) -> Any:
    text = json.dumps(result, ensure_ascii=False, default=str)
    return result if len(text) <= limit else text[:limit] + "…"


async def call_executor(executor: Executor, tool: str, args: dict[str, Any]) -> Any:
    out = executor(tool, args)
    return await out if inspect.isawaitable(out) else out


async def agent_resolver(inp: AgentTaskInput, executor: Executor) -> AgentResult:
    """Replay the golden actions through the executor; the answer is the golden one (or the last result)."""
    trace: list[ToolCallRecord] = []
    last: Any = None
    for a in sorted(inp.golden_actions, key=lambda a: a.step)[: inp.max_calls]:
        try:
            last = await call_executor(executor, a.tool, dict(a.args))
            trace.append(ToolCallRecord(step=a.step, tool=a.tool, args=a.args, ok=True, result=_preview(last)))
        except Exception as e:  # the trace records the failure; the caller judges it
            trace.append(
                ToolCallRecord(step=a.step, tool=a.tool, args=a.args, ok=False, error=f"{type(e).__name__}: {e}")
            )
            return AgentResult(final_answer="", trace=trace, stop_reason="error")
    answer = (
        inp.golden_answer
        if inp.golden_answer is not None
        else json.dumps(_preview(last), ensure_ascii=False, default=str)
    )
    return AgentResult(final_answer=answer, trace=trace, stop_reason="replayed")
