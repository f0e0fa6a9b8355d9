"""The model roles of the pipeline: their input/output models, prompts, guards and rules.

Each `RoleSpec` ties one role to
- its input model and its reply model (whose JSON schema the backend follows),
- the prompt templates that render its messages (`<role>/system|user.<lang>`),
- guards: checks of a parsed reply against the input that a schema cannot
  express (bound parameters exist, seed values are cited, nothing leaks); a
  guard failure counts as an invalid reply, is retried and finally recorded,
- its `rules` implementation.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from factory import prompts
from factory.llm import rules, simulator
from factory.llm.schemas import (
    AgentResult,
    AgentTaskInput,
    AnswerLeakageInput,
    DecorativeChainInput,
    EdgeProposal,
    EdgeProposalInput,
    FluencyInput,
    FluencyScores,
    JudgeVerdict,
    NonGradableInput,
    QueryDraft,
    QueryParaphraseInput,
    QueryWriterInput,
    SimulatorInput,
    SimulatorReply,
    SourceArguments,
    SourceArgumentsInput,
)
from factory.model_config import LANGUAGE_ROLES, ROLE_NAMES

Guard = Callable[[Any, Any], list[str]]
Finalize = Callable[[Any, Any], Any]

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LETTER = re.compile(r"[^\W\d_]")


def language_problems(text: str, language: str) -> list[str]:
    """Empty when `text` looks like `language` (Korean: Hangul present; English: mostly Latin letters)."""
    if not text.strip():
        return ["the text is empty"]
    if language == "ko" and not _HANGUL.search(text):
        return ["the text is not Korean"]
    if language == "en":
        letters = _LETTER.findall(text)
        if letters and sum(ch.isascii() for ch in letters) / len(letters) < 0.7:
            return ["the text is not English"]
    return []


# --------------------------------------------------------------------------- guards


def _guard_edge(inp: EdgeProposalInput, out: EdgeProposal) -> list[str]:
    problems = []
    for b in out.bindings:
        if inp.target.param(b.target_param) is None:
            problems.append(f"binding target_param {b.target_param!r} is not an input of {inp.target.name}")
        elif b.target_param in inp.target.generic_params:
            problems.append(f"{b.target_param!r} is a key/paging/format input and must not be bound")
        if inp.source.field(b.source_field) is None:
            problems.append(f"binding source_field {b.source_field!r} is not an output field of {inp.source.name}")
    for p in out.default_candidates:
        if inp.target.param(p) is None:
            problems.append(f"default_candidates key {p!r} is not an input of {inp.target.name}")
    return problems


def _guard_args(inp: SourceArgumentsInput, out: SourceArguments) -> list[str]:
    problems = []
    semantic = {p.name: p for p in inp.tool.semantic_params}
    for name, value in out.args.items():
        p = semantic.get(name)
        if p is None:
            problems.append(f"{name!r} is not an input of {inp.tool.name} (or is a generic input)")
        elif p.enum and value not in p.enum and str(value) not in {str(e) for e in p.enum}:
            problems.append(f"{name}={value!r} is not one of {p.enum}")
        elif p.type in ("integer", "number") and not _numeric(value):
            problems.append(f"{name}={value!r} is not a number")
    for p in semantic.values():
        if p.required and p.name not in out.args:
            problems.append(f"required input {p.name!r} is missing")
    return problems


def _numeric(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _intermediate(steps: list[Any]) -> list[Any]:
    last = max(s.step for s in steps)
    return [v for s in steps if s.step != last and not s.feeds_answer for v in s.passed_values]


def _guard_query(inp: QueryWriterInput, out: QueryDraft) -> list[str]:
    problems = language_problems(out.query, inp.language)
    if inp.stage != "sub":  # a sub-question asks one step: it need not cite every value of the question
        missing = [
            str(v) for v in inp.seed_values.values() if not rules.is_memo(v) and not rules.mentions(out.query, v)
        ]
        if missing:
            problems.append(f"the query must cite {', '.join(missing)} verbatim")
    leak = rules.answer_leakage(
        AnswerLeakageInput(
            query=out.query,
            answer=rules.answer_text(inp.answer, inp.language),
            language=inp.language,
            answer_values=inp.answer.value if isinstance(inp.answer.value, list) else [inp.answer.value],
            intermediate_values=_intermediate(inp.steps),
            seed_values=list(inp.seed_values.values()),
        )
    )
    if leak.verdict:
        problems.append(leak.reason)
    return problems


def _final_query(inp: QueryWriterInput, out: QueryDraft) -> QueryDraft:
    # The model writes the question; the answer always comes from the executed material.
    return QueryDraft(query=" ".join(out.query.split()), answer=rules.answer_text(inp.answer, inp.language))


def _guard_paraphrase(inp: QueryParaphraseInput, out: QueryDraft) -> list[str]:
    problems = language_problems(out.query, inp.language)
    missing = [str(v) for v in inp.must_keep if not rules.mentions(out.query, v)]
    if missing:
        problems.append(f"the paraphrase must keep {', '.join(missing)} verbatim")
    keep = {str(v) for v in inp.must_keep}
    leaked = [str(v) for v in inp.forbidden if str(v) not in keep and rules.mentions(out.query, v)]
    if leaked:
        problems.append(f"the paraphrase must not mention {', '.join(leaked)}")
    if " ".join(out.query.split()).casefold() == " ".join(inp.query.split()).casefold():
        problems.append("the paraphrase repeats the question unchanged")
    if not 0.4 <= len(out.query) / max(len(inp.query), 1) <= 2.5:
        problems.append("the paraphrase is much shorter or longer than the question")
    return problems


def _final_paraphrase(inp: QueryParaphraseInput, out: QueryDraft) -> QueryDraft:
    return QueryDraft(query=" ".join(out.query.split()), answer=inp.answer)


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class RoleSpec:
    """Everything the model layer knows about one role."""

    name: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    rules: Callable[..., Any]
    prompt_stems: tuple[str, ...] = ("system", "user")
    rules_templates: tuple[str, ...] = ()
    extra_stems: tuple[str, ...] = ()  # templates rendered by the role's own code (versioned, not sent as messages)
    guard: Guard | None = None
    finalize: Finalize | None = None
    extra_context: Callable[[Any], dict[str, Any]] = field(default=lambda inp: {})

    @property
    def language_specific(self) -> bool:
        return self.name in LANGUAGE_ROLES

    def language_of(self, inp: BaseModel) -> str:
        return str(getattr(inp, "language", "en"))

    def template_name(self, stem: str, language: str) -> str:
        name = f"{self.name}/{stem}.{language}"
        return name if prompts.exists(name) else f"{self.name}/{stem}.en"

    def model_templates(self, language: str = "en") -> list[str]:
        names = [self.template_name(s, language) for s in self.prompt_stems]
        return [n for n in names if prompts.exists(n)]

    def all_templates(self) -> list[str]:
        """Every template this role may render, in any language (for code_version)."""
        names: set[str] = set()
        for lang in ("en", "ko"):
            names.update(self.model_templates(lang))
            names.update(self.template_name(s, lang) for s in self.extra_stems)
            names.update(t.format(lang=lang) for t in self.rules_templates)
        if self.output_model is not AgentResult:
            names.add("common/repair.en")
        return sorted(n for n in names if prompts.exists(n))

    def schema(self) -> dict[str, Any]:
        return self.output_model.model_json_schema()

    def messages(self, inp: BaseModel) -> list[dict[str, Any]]:
        """The chat messages of a model call for `inp`."""
        language = self.language_of(inp)
        ctx = {name: getattr(inp, name) for name in type(inp).model_fields}
        ctx["schema"] = json.dumps(self.schema(), ensure_ascii=False, separators=(",", ":"))
        ctx.update(self.extra_context(inp))
        out = []
        for stem in self.prompt_stems:
            name = self.template_name(stem, language)
            if prompts.exists(name):
                out.append({"role": "system" if stem == "system" else "user", "content": prompts.render(name, **ctx)})
        return out

    def check(self, inp: BaseModel, out: BaseModel) -> list[str]:
        return self.guard(inp, out) if self.guard else []

    def final(self, inp: BaseModel, out: BaseModel) -> BaseModel:
        return self.finalize(inp, out) if self.finalize else out


def _edge_ctx(inp: EdgeProposalInput) -> dict[str, Any]:
    return {"generic": inp.target.generic_params}


def _query_ctx(inp: QueryWriterInput) -> dict[str, Any]:
    return {"answer_text": rules.answer_text(inp.answer, inp.language)}


ROLES: dict[str, RoleSpec] = {
    s.name: s
    for s in [
        RoleSpec(
            name="edge_proposal",
            description="Feasibility, bindings and default candidates for a source → target tool edge.",
            input_model=EdgeProposalInput,
            output_model=EdgeProposal,
            rules=rules.edge_proposal,
            guard=_guard_edge,
            extra_context=_edge_ctx,
        ),
        RoleSpec(
            name="source_arguments",
            description="Arguments for a tool call that starts a chain.",
            input_model=SourceArgumentsInput,
            output_model=SourceArguments,
            rules=rules.source_arguments,
            guard=_guard_args,
        ),
        RoleSpec(
            name="query_writer",
            description="A user question (and its answer) for an executed trajectory.",
            input_model=QueryWriterInput,
            output_model=QueryDraft,
            rules=rules.query_writer,
            rules_templates=(rules.QUERY_TEMPLATE,),
            guard=_guard_query,
            finalize=_final_query,
            extra_context=_query_ctx,
        ),
        RoleSpec(
            name="query_paraphrase",
            description="A paraphrase of a question that keeps its values and answer.",
            input_model=QueryParaphraseInput,
            output_model=QueryDraft,
            rules=rules.query_paraphrase,
            guard=_guard_paraphrase,
            finalize=_final_paraphrase,
        ),
        RoleSpec(
            name="judge_answer_leakage",
            description="Does the question state its answer or a value a step must derive?",
            input_model=AnswerLeakageInput,
            output_model=JudgeVerdict,
            rules=rules.answer_leakage,
        ),
        RoleSpec(
            name="judge_non_gradable",
            description="Is the answer impossible to check automatically?",
            input_model=NonGradableInput,
            output_model=JudgeVerdict,
            rules=rules.non_gradable,
        ),
        RoleSpec(
            name="judge_decorative_chain",
            description="Does some step fail to constrain the final answer?",
            input_model=DecorativeChainInput,
            output_model=JudgeVerdict,
            rules=rules.decorative_chain,
        ),
        RoleSpec(
            name="agent_resolver",
            description="Solve a task with tools (model: OpenAI tool calls; rules: replay the golden actions).",
            input_model=AgentTaskInput,
            output_model=AgentResult,
            rules=rules.agent_resolver,
            prompt_stems=("system",),
            extra_stems=("feedback", "judge"),
        ),
        RoleSpec(
            name="fluency_scorer",
            description="Mean token log-likelihood of candidate sentences (model: /v1/completions with echoed "
            "logprobs; rules: no score).",
            input_model=FluencyInput,
            output_model=FluencyScores,
            rules=rules.fluency_scorer,
            prompt_stems=(),
        ),
        RoleSpec(
            name="user_simulator",
            description="The simulated user of a conversation task: reveals hidden facts when asked, confirms, "
            "stops when the goal is met (rules: factory.llm.simulator; model: pinned to temperature 0).",
            input_model=SimulatorInput,
            output_model=SimulatorReply,
            rules=simulator.user_simulator,
            rules_templates=(simulator.RULES_TEMPLATE,),
            guard=simulator.reply_problems,
        ),
    ]
}

assert set(ROLES) == set(ROLE_NAMES), "every configured role needs a RoleSpec"


def role(name: str) -> RoleSpec:
    try:
        return ROLES[name]
    except KeyError:
        raise KeyError(f"unknown role {name!r}; roles are: {', '.join(ROLES)}") from None


def role_prompts_version(name: str) -> str:
    """Version string of every template a role can render, for the consuming asset's code_version."""
    return prompts.prompts_version(role(name).all_templates())
