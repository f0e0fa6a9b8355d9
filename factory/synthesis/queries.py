"""The generated_queries stage (EDGE Phase B, query half): grounded queries and Task records (pure core).

For each trajectory the `query_writer` role (rules: per-pattern templates in
prompts/query_writer/rules.<lang>.j2) writes the templated query from the trajectory's
realization (`phrasing`: one noun phrase naming every step of the golden path, its seeds,
process nodes, junction fields and the documented defaults that shape a result); the
`query_paraphrase` role may rephrase it.  Both pass `grounding.grounding_problems` or: a failing
paraphrase falls back to the templated query (counted), a failing templated query drops the
trajectory (a recorded rejection).

Before any text is written a trajectory is rejected (recorded, with its reason) when
- a golden (or other-branch) call sends an argument the question cannot account for: not a
  stated seed, not fed by a junction from an upstream result, not the parameter's documented
  default, not a key/paging/format parameter (``unstated_argument``);
- its path cannot be told clearly from the labels available (``unphraseable``: a label that is a
  sentence or a verb phrase, a chain over too many hops, branches or parts that read the same).
"""

import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from factory import prompts
from factory.config import ProjectConfig
from factory.frames import frames_for
from factory.llm import rules
from factory.llm.client import ModelClient
from factory.llm.errors import LLMError
from factory.llm.roles import role
from factory.llm.rules import main_pattern
from factory.llm.schemas import AnswerMaterial, QueryDraft, QueryParaphraseInput, QueryWriterInput, TrajectoryStep
from factory.records import AlternativePath, Answer, GoldenAction, Lineage, RewardBasis, Task, task_id
from factory.report import counts, md_table, rate
from factory.synthesis import answers, fluency, phrasing
from factory.synthesis.fluency import rule_problems
from factory.synthesis.grounding import code_like, description_words, grounding_problems, vocabulary
from factory.synthesis.labels import param_label, tool_noun
from factory.tools.registry import ToolRegistry
from factory.tools.spec import ToolSpec

log = logging.getLogger(__name__)
_UNAVAILABLE = object()


def _josa(word: str, pair: str) -> str:
    return prompts.josa(word, pair)


def _question_junctions(t: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The junctions the question speaks of: those of the executed path, also when pruning to the minimal
    path bypassed or dropped some (`describe.question_junctions`, factory.synthesis.minimal)."""
    return list(t["describe"].get("question_junctions", t["junctions"]))


def _seed_scalars(value: Any) -> list[Any]:
    """The values a seed states: a list argument (open_nodes(names=["Ada"])) states each of its items."""
    return [x for x in value if x is not None] if isinstance(value, list) else [value]


def _seed_values(t: Mapping[str, Any], specs: Mapping[str, ToolSpec], lang: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in t["seeds"]:
        label = param_label(specs[s["tool_id"]], s["param"])
        value = ", ".join(str(x) for x in _seed_scalars(s["value"])) if isinstance(s["value"], list) else s["value"]
        if label in out and out[label] == value:
            continue
        n = 2
        key = label
        while key in out:  # a second value of the same parameter (a CMP's other arm): each is cited verbatim
            key, n = f"{label} ({n})", n + 1
        out[key] = value  # a list argument as the text that names its items
    if not out:  # a chain that starts from a full listing: 'all airlines' / '전체 시도'
        d = t["describe"]
        first = (
            d.get("chain", [None])[0] or d.get("cond_tool_id") or d.get("compare", {}).get("tool_id")
            or (d.get("parts") or [{}])[0].get("tool_id") or t["tools"][-1]
        )  # fmt: skip
        noun = tool_noun(specs[first])
        out = {"전체": noun} if lang == "ko" else {"all": noun}
    return out


def _realize(
    t: Mapping[str, Any], specs: ToolRegistry, lang: str, frames: Mapping[str, Any] | None = None
) -> phrasing.Realization:
    """The realization of a trajectory's question from the tool frames (the tool_lexicon's `nouns`, else rules
    over the specs), every step of its golden path named (`phrasing`); raises `phrasing.Unphraseable`."""
    fr = frames if frames is not None else frames_for(specs)
    every_cf = list(t.get("counterfactual_junctions") or [])
    return phrasing.realize(t, specs, fr, _question_junctions(t), every_cf, lang)


def writer_input(
    t: Mapping[str, Any], specs: ToolRegistry, lang: str, variant: int, frames: Mapping[str, Any] | None = None
) -> QueryWriterInput:
    """The query writer's input; raises `phrasing.Unphraseable` when the question cannot be stated clearly."""
    ans = t["answer"]
    steps = [
        TrajectoryStep(step=a["step"], tool=a["tool"], summary=a["tool"], args={}, result_count=a["records"])
        for a in t["golden_actions"]
    ]
    value = ans["value"] if not isinstance(ans["value"], dict) else str(ans["value"])
    r = _realize(t, specs, lang, frames)
    return QueryWriterInput(
        pattern=r.pattern,
        language=lang,  # type: ignore[arg-type]
        steps=steps,
        seed_values=_seed_values(t, specs, lang),
        qualifier=r.qualifier,
        answer=AnswerMaterial(
            type="list" if isinstance(value, list) else "number" if ans["type"] == "number" else "string",
            value=value,
            fields=ans["fields"],
            description=r.description,
            otherwise=r.otherwise,
            options=r.options,
            parts=r.parts,
            sem_parts=[phrasing.part_description(x, lang) for x in r.parts.get("parts", [])]
            if r.pattern == "BOTH"
            else [],
            counter=str(r.parts.get("counter") or "") if lang == "ko" else "",
        ),
        variant=variant,
    )


def unaskable(t: Mapping[str, Any], specs: ToolRegistry, lang: str, frames: Mapping[str, Any]) -> dict[str, str] | None:
    """Why no question can be asked of trajectory `t` (its rejection record: ``unstated_argument``, an argument
    the question cannot state, or ``unphraseable`` with the `phrasing.Unphraseable` code), or None."""
    unstated = unstated_arguments(t, specs)
    if unstated:
        return {"reason": "unstated_argument", "detail": "; ".join(unstated)}
    try:
        _realize(t, specs, lang, frames)
    except phrasing.Unphraseable as e:
        return {"reason": "unphraseable", "code": e.code, "detail": f"{e.code}: {e}"}
    return None


def askability(
    inventories: Mapping[str, Any], lexicon: Mapping[str, Any] | None, lang: str
) -> Callable[[Mapping[str, Any]], str | None]:
    """The check `build_trajectories` runs on a candidate before it takes a place of the quota: `unaskable`, the
    query writer's own check in `generated_queries`, so the quota is filled by trajectories a question can be asked
    about."""
    specs = ToolRegistry.from_inventories(inventories)
    frames = ((lexicon or {}).get("nouns") or {}).get("tools") or frames_for(specs)

    def why(t: Mapping[str, Any]) -> str | None:
        bad = unaskable(t, specs, lang, frames)
        return None if bad is None else f"{bad['reason']}: {bad['detail']}"

    return why


class _RulesDraft:
    """The rules writer's question where a model serves `query_writer` (the template it falls back to), with
    the provenance a role result records."""

    def __init__(self, inp: QueryWriterInput) -> None:
        self.output: QueryDraft = rules.query_writer(inp)
        self.language = inp.language

    def provenance(self) -> dict[str, Any]:
        name = rules.QUERY_TEMPLATE.format(lang=self.language)
        return {
            "role": "query_writer",
            "implementation": "rules",
            "backend": "rules",
            "model": rules.RULES_VERSION,
            "prompts": {name: f"sha256:{prompts.template_hash(name)}"},
        }


def rules_writer_result(inp: QueryWriterInput) -> _RulesDraft:
    return _RulesDraft(inp)


def unstated_arguments(t: Mapping[str, Any], specs: Mapping[str, ToolSpec]) -> list[str]:
    """Arguments a call of the golden path (or of the other branch) sends that the question cannot account for:
    not a seed value the question states, not a parameter fed from an upstream result by a junction, not the
    parameter's documented default, not a key/paging/format parameter.  'tool.param=value' per argument."""
    seeds = {(s["tool_id"], s["param"], _canon(s["value"])) for s in t["seeds"]}
    seed_values = {_canon(s["value"]) for s in t["seeds"]}
    fed: set[tuple[str, str]] = set()
    for j in [*t["junctions"], *_question_junctions(t), *(t.get("counterfactual_junctions") or [])]:
        tool, _, params = j["to"].partition(".")
        fed.update((tool, p) for p in params.split("+") if p)
    out: list[str] = []
    for a in [*t["golden_actions"], *(t.get("counterfactual_actions") or [])]:
        spec = specs.get(a.get("tool_id", ""))
        if spec is None or spec.key_acquisition:
            continue
        generic = spec.generic_params.names()
        for p, v in (a.get("args") or {}).items():
            if p in generic or v == "<KEY>" or (a["tool"], p) in fed:
                continue
            if "default" in spec.params.get(p, {}) and _canon(spec.params[p]["default"]) == _canon(v):
                continue
            if _all_records_cap(spec, p, v):
                continue
            if (a["tool_id"], p, _canon(v)) in seeds or _canon(v) in seed_values:
                continue
            out.append(f"{a['tool']}.{p}={v}")
    return sorted(set(out))


def _all_records_cap(spec: ToolSpec, name: str, value: Any) -> bool:
    """A record cap (`phrasing.is_cap`) sent at its documented maximum: how an agent asks for every record (the
    question asks about all of them; a call that returned exactly the cap is rejected upstream as ``capped_count``)."""
    schema = spec.params.get(name) or {}
    return "maximum" in schema and _canon(schema["maximum"]) == _canon(value) and phrasing.is_cap(spec, name)


def _canon(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip().casefold()


def _check(
    query: str,
    t: Mapping[str, Any],
    specs: Mapping[str, ToolSpec],
    lang: str,
    ctx: "_Context",
    template: bool = False,
) -> list[str]:
    """Grounding problems of a question; a templated one is exempt from the copied-description rule (its labels
    are taken from the descriptions by design: 'number of resource links to return'), a model's is not."""
    return grounding_problems(
        query,
        language=lang,
        allowed_values=_allowed(t, specs),
        bridge_values=t["bridge_values"],
        forbidden_identifiers=ctx.vocab,
        plain_field_names=ctx.plain,
        vocabulary_words=ctx.words,
        descriptions=() if template else ctx.descriptions,
        prefixes=ctx.prefixes,
    )


def _allowed(t: Mapping[str, Any], specs: Mapping[str, ToolSpec]) -> list[Any]:
    allowed = [x for s in t["seeds"] for x in _seed_scalars(s["value"])]
    allowed += list(t["thresholds"]) + phrasing.default_values(t, specs)
    return allowed + phrasing.spoken_forms(allowed)  # '23:29' for a threshold 2329, '2:00' for hour 2


class _Context:
    """What every check of a domain's queries needs: API vocabulary, descriptions, organisation prefixes."""

    def __init__(self, specs: ToolRegistry) -> None:
        names = [s.name for s in specs.values()]
        field_names = {f for s in specs.values() for f in [*s.output_fields, *s.params]}
        self.vocab = vocabulary(names, field_names)
        self.plain = sorted(f for f in field_names if not code_like(f))
        self.descriptions = sorted(
            {s.description for s in specs.values()}
            | {f.description for s in specs.values() for f in s.output_fields.values()}
            | {str(p.get("description", "")) for s in specs.values() for p in s.params.values()} - {""}
        )
        self.words = description_words(self.descriptions)
        # an organisation prefix: a platform's name words ('chinook', 'kostat census') said twice in one query
        self.prefixes = sorted({s.platform.replace("-", " ").replace("_", " ") for s in specs.values() if s.platform})


def answer_frame(inp: QueryWriterInput) -> dict[str, Any]:
    """What the answer sentence states the value as (`answers.answer_text`), from the query writer's input."""
    a, ko = inp.answer, inp.language == "ko"
    return {
        "pattern": main_pattern(inp.pattern),
        "description": a.description,
        "otherwise": a.otherwise,
        "options": list(a.options),
        "qualifier": inp.qualifier,
        # COND: the then-branch's counter and the condition's records' (the else-branch counts those): '52곳', not '52개'
        "counter": a.counter or (str(((a.parts or {}).get("then") or {}).get("counter") or "") if ko else ""),
        "otherwise_counter": str(((a.parts or {}).get("cond") or {}).get("counter") or "") if ko else "",
        # what the answer sentence names instead of the question's chain (`answers.short_statement`)
        "short": short_frame(main_pattern(inp.pattern), a.parts or {}),
        # a choice of two ('Which has more …, and by how many?') is answered by the side and the margin: a reply
        # that names the side alone is not the answer (`eval.scoring.score_response`; blind read s15 en2 #16)
        "margin": (a.parts or {}).get("margin") if main_pattern(inp.pattern) == "WHICH" else None,
        # a comparison's sides as the question names them (the one with more first): the answer names the winner
        "compare": {
            k: (a.parts or {})[k]
            for k in ("mode", "noun", "subj", "full", "plural", "big", "front", "attr")
            if k in (a.parts or {})
        }
        if not ko
        else {},  # fmt: skip
    }


def short_frame(pattern: str, parts: Mapping[str, Any]) -> dict[str, Any]:
    """The parts an answer sentence needs to answer first and name the entity, not the chain: the counted noun
    and its owner (when the owner is one named record, no nested phrase), the asked field and its unit."""
    if pattern in ("SEM", "BOTH"):
        return {"parts": [short_frame("PATH", p) for p in parts.get("parts") or []]}
    if pattern in ("COND", "IF"):
        return {
            "then": short_frame("PATH", parts.get("then") or {}),
            # the threshold, for the answer of the other branch ('only 1 customer from Norway, fewer than 5')
            "else": {
                **short_frame("PATH", parts.get("cond") or {}),
                **(
                    {"threshold": str((parts.get("cond") or {})["threshold"])}
                    if (parts.get("cond") or {}).get("threshold") is not None
                    else {}
                ),
            },
        }
    if parts.get("ask") == "value":
        subject = str(parts.get("subject") or "")
        return {"kind": "value", "field": str(parts.get("field") or ""), "unit": str(parts.get("unit") or ""),
                "subject": subject if parts.get("one") and _relations(subject) == 0 else ""}  # fmt: skip
    if parts.get("ask") in ("count", "total"):
        owner, np = str(parts.get("owner") or ""), str(parts.get("np") or "")
        return {"kind": "count", "noun": str(parts.get("noun") or ""), "owner": owner if _relations(owner) == 0 else "",
                "np": np if _relations(np) <= 1 or (_relations(np) <= 2 and len(np) <= 24) else "",
                "owner_one": bool(parts.get("owner_one", True)),
                "counter": str(parts.get("counter") or "")}  # fmt: skip
    return {}


def _relations(phrase: str) -> int:
    """How many relations a phrase nests ('the albums of the artist X': 1); a long phrase counts as many."""
    if len(phrase) > 60:
        return 9
    return len(re.findall(r"\b(?:of|among|whose|as)\b|의 |중 |에 있는 |와 같은 |과 같은 ", phrase))


def _sub_inputs(inp: QueryWriterInput) -> list[QueryWriterInput]:
    """Stage one of the two-stage composition (EDGE App. J, Tables 20-21): one sub-question per step of a
    SEM/CMP/COND question (CMP: each side's count; COND: the condition, then each branch; SEM: each part).
    Empty for a sequential question (written in one stage)."""
    a, ko = inp.answer, inp.language == "ko"
    pat = main_pattern(inp.pattern)
    pat = {"CMP": "DIFF" if a.type == "number" else "WHICH", "COND": "IF", "SEM": "BOTH"}.get(pat, pat)
    if pat in ("WHICH", "DIFF") and len(a.options) == 2:
        parts = [f"{o}의 {a.description}" if ko else f"{a.description} for {o}" for o in a.options]
    elif pat == "IF" and inp.qualifier:
        cond = f"{inp.qualifier}인지 여부" if ko else f"whether {inp.qualifier}"
        parts = [cond, a.description] + ([a.otherwise] if a.otherwise else [])
    elif pat == "BOTH" and len(a.sem_parts) >= 2:
        parts = list(a.sem_parts)
    else:
        return []
    return [
        inp.model_copy(
            update={
                "pattern": "PATH",
                "stage": "sub",
                "qualifier": "",
                "answer": a.model_copy(
                    update={"description": p, "otherwise": "", "options": [], "parts": {}, "sem_parts": []}
                ),
            }
        )
        for p in parts
    ]


def _model_queries(model: ModelClient, inputs: Sequence[QueryWriterInput]) -> list[tuple[str, Any]]:
    """The model writer's question for each input: ('' on a failure) with the final role result. SEM/CMP/COND
    go in two stages (sub-questions, then one composed question); a failed sub-question fails the question."""
    subs = [_sub_inputs(inp) for inp in inputs]
    flat = [s for group in subs for s in group]
    sub_res = model.map("query_writer", flat) if flat else []
    composed: list[QueryWriterInput] = []
    failed: set[int] = set()
    k = 0
    for i, (inp, group) in enumerate(zip(inputs, subs, strict=True)):
        if not group:
            composed.append(inp)
            continue
        res = sub_res[k : k + len(group)]
        k += len(group)
        if any(r.output is None or r.implementation != "model" for r in res):
            failed.add(i)
        questions = [r.output.query if r.output is not None else "" for r in res]
        composed.append(inp.model_copy(update={"stage": "compose", "sub_questions": questions}))
    final = model.map("query_writer", composed) if composed else []
    out: list[tuple[str, Any]] = []
    for i, r in enumerate(final):
        ok = i not in failed and r.output is not None and r.implementation == "model"
        out.append((r.output.query if ok and r.output is not None else "", r))
    return out


def build_queries(
    domain: str,
    trajectories: Mapping[str, Any],
    inventories: Mapping[str, Any],
    cfg: ProjectConfig,
    model: ModelClient,
    run_id: str | None = None,
    lexicon: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Task rows (query, answer, golden actions, lineage) for every grounded trajectory; the questions are composed
    from the tool frames of `lexicon` (the domain's tool_lexicon value), else from rules over the specs.

    Per trajectory the rules writer's variants (`synthesis.fluency.candidates`) are checked (grounding, the
    rule check of `fluency`) and ranked by the `fluency_scorer` role; the best is the templated query. A model
    mapped to `query_writer` then writes the question (two stages for SEM/CMP/COND) and one mapped to
    `query_paraphrase` rephrases it; their text goes out only when it passes the same checks
    (`query_source`: template, model, or fallback where a model was asked and the template went out)."""
    lang = cfg.domain(domain).language
    syn = cfg.synthesis
    flu = syn.fluency
    specs = ToolRegistry.from_inventories(inventories)
    frames = ((lexicon or {}).get("nouns") or {}).get("tools") or frames_for(specs)
    ctx = _Context(specs)
    rows: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    trajs: list[Mapping[str, Any]] = []
    groups: list[list[QueryWriterInput]] = []
    model_writes = model.uses_model("query_writer", lang)
    n_cand = 1 if model_writes else flu.candidates
    for i, t in enumerate(trajectories["trajectories"]):
        if (bad := unaskable(t, specs, lang, frames)) is not None:
            rejected.append({"trajectory_id": t["trajectory_id"], **bad, "query": ""})
            continue
        groups.append([writer_input(t, specs, lang, i + k, frames) for k in range(n_cand)])
        trajs.append(t)
    # the templated candidates: the rules writer's variants (the role's rules implementation, also where a model
    # writes: the template is what goes out when the model's question fails its checks)
    if model_writes:
        written: list[Any] = [rules_writer_result(g[0]) for g in groups]
    else:
        written = model.map("query_writer", [x for g in groups for x in g]) if groups else []
    per: list[list[Any]] = []
    k = 0
    for g in groups:
        per.append(written[k : k + len(g)])
        k += len(g)
    # grounding, then the rule check, then the scorer
    kept: list[tuple[Mapping[str, Any], QueryWriterInput, list[str], list[Any], list[list[str]]]] = []
    for t, g, res in zip(trajs, groups, per, strict=True):
        texts: list[str] = []
        results: list[Any] = []
        first_problems: list[str] = []
        for r in res:
            q = r.output.query if r.output is not None else ""
            problems = _check(q, t, specs, lang, ctx, template=True)
            if problems:
                first_problems = first_problems or [q, ", ".join(problems)]
            elif q not in texts:
                texts.append(q)
                results.append(r)
        if not texts:
            rejected.append(
                {
                    "trajectory_id": t["trajectory_id"],
                    "reason": "ungrounded_template",
                    "detail": first_problems[1],
                    "query": first_problems[0],
                }
            )
            continue
        allowed = _allowed(t, specs)
        checks = [rule_problems(q, lang, allowed=allowed, descriptions=ctx.descriptions) for q in texts]
        kept.append((t, g[0], texts, results, checks))
    scored, scorer = fluency.score_texts(model, [texts for _, _, texts, _, _ in kept], lang)
    chosen: list[tuple[Mapping[str, Any], QueryWriterInput, str, Any, float | None]] = []
    fluency_drops = 0
    openings: dict[str, int] = {}  # how often each opening was chosen: near-equal candidates vary the surface
    for (t, inp, texts, results, checks), scores in zip(kept, scored, strict=True):
        c = fluency.choose(texts, scores, checks, flu.min_score, used=openings, margin=flu.margin)
        if c.index is not None:
            key = fluency.opening(texts[c.index])
            openings[key] = openings.get(key, 0) + 1
        if c.index is None:
            fluency_drops += 1
            rejected.append(
                {"trajectory_id": t["trajectory_id"], "reason": c.reason, "detail": c.detail, "query": texts[0]}
            )
            continue
        chosen.append((t, inp, texts[c.index], results[c.index], c.score))
    # the model path: a model-written question, then a paraphrase, each kept only when it passes every check
    n = len(chosen)
    finals: list[str] = [q for _, _, q, _, _ in chosen]
    sources: list[str] = ["template"] * n
    model_res: list[Any] = [None] * n
    para_res: list[Any] = [None] * n
    fallback_reasons: list[str] = []
    pending: list[int] = []  # tasks whose final text is a model's (scored below)

    def accept(i: int, text: str, failure: str | None) -> bool:
        t = chosen[i][0]
        problems = [failure] if failure else _check(text, t, specs, lang, ctx)
        if not problems:
            problems = rule_problems(text, lang, allowed=_allowed(t, specs), descriptions=ctx.descriptions)
        if problems:
            fallback_reasons.extend(p.split(":", 1)[0] for p in problems)
            return False
        return True

    if model_writes and chosen:
        for i, (q, r) in enumerate(_model_queries(model, [inp for _, inp, _, _, _ in chosen])):
            model_res[i] = r
            if accept(i, q, None if q else "writer_failed"):
                finals[i], sources[i] = q, "model"
                pending.append(i)
            else:
                sources[i] = "fallback"
    if syn.paraphrase and chosen and model.uses_model("query_paraphrase", lang):
        para_inputs = [
            QueryParaphraseInput(
                query=finals[i],
                answer=answers.answer_text(t["answer"], lang, answer_frame(inp)),
                language=lang,
                must_keep=[s["value"] for s in t["seeds"] if isinstance(s["value"], str | int | float)],
                forbidden=[v for v in t["bridge_values"] if isinstance(v, str | int | float)],
                variant=i,
            )
            for i, (t, inp, _, _, _) in enumerate(chosen)
        ]
        try:
            paraphrased = model.map("query_paraphrase", para_inputs)
        except LLMError as e:  # the paraphrase is optional: every query keeps its text, counted
            log.warning("query_paraphrase unavailable, queries kept as written: %s", e)
            fallback_reasons.extend(["paraphrase_unavailable"] * n)
            sources = [s if s == "model" else "fallback" for s in sources]
        else:
            for i, pres in enumerate(paraphrased):
                para_res[i] = pres
                pq = pres.output.query if pres.output is not None and not pres.failure else ""
                if accept(i, pq, None if pq else "paraphrase_failed"):
                    finals[i], sources[i] = pq, "model"
                    if i not in pending:
                        pending.append(i)
                elif sources[i] != "model":
                    sources[i] = "fallback"
    scores_out = [c[4] for c in chosen]
    if pending:  # a model's text is scored like a template: one below the threshold is not sent
        rescored, _ = fluency.score_texts(model, [[finals[i]] for i in pending], lang)
        for i, (s,) in zip(pending, rescored, strict=True):
            if s is not None and s < flu.min_score:
                fallback_reasons.append("disfluent")
                finals[i], sources[i], s = chosen[i][2], "fallback", chosen[i][4]
            scores_out[i] = s
    for i, (t, inp, templated, wres, _) in enumerate(chosen):
        rows.append(
            _task(
                t, finals[i], templated, sources[i], lang, cfg, specs,
                model_res[i] or wres, para_res[i], run_id, trajectories,
                frame=answer_frame(inp), fluency_score=scores_out[i], scorer=scorer,
            ).model_dump(by_alias=True, mode="json")
        )  # fmt: skip
    fallbacks = sum(s == "fallback" for s in sources)
    value = {
        "domain": domain,
        "language": lang,
        "tasks": rows,
        "rejected": rejected,
        "fallbacks": fallbacks,
        "fluency": {"scorer": scorer, "min_score": flu.min_score, "candidates": n_cand, "dropped": fluency_drops},
    }
    meta = query_metadata(value, fallback_reasons)
    return value, meta


_GOLDEN = ("step", "tool", "platform", "args", "result_digest", "records", "total_count", "call_digest")


def _task(
    t, query, templated, source, lang, cfg, specs, wres, pres, run_id, trajectories, *, frame, fluency_score, scorer
) -> Task:
    syn = cfg.synthesis
    actions = t["golden_actions"]
    golden = [{k: a[k] for k in _GOLDEN} for a in actions]
    alternatives = [
        {
            "note": p["note"],
            "actions": [{k: a[k] for k in _GOLDEN} for a in p["actions"]],
            "answer_spec": p["answer_spec"],
        }
        for p in t.get("alternative_paths") or []
    ]
    every = [*actions, *(a for p in t.get("alternative_paths") or [] for a in p["actions"])]
    platforms = t["platforms"]
    # the golden path's tools and those of every other sufficient path (a model may take any of them)
    chain_tools = sorted(
        {specs[tid].name for tid in t["tools"]}
        | {specs[a["tool_id"]].name for a in every if not specs[a["tool_id"]].key_acquisition}
    )
    pool = sorted(
        s.name for s in specs.values()
        if s.platform in platforms and s.name not in chain_tools and s.key_acquisition is None
    )  # fmt: skip
    k = min(syn.distractors, len(pool))
    start = int(t["trajectory_id"][7:15], 16) % max(len(pool), 1)
    distractors = [pool[(start + i) % len(pool)] for i in range(k)]
    key_tools = {
        a["platform"]: a["tool"] for a in actions if specs.get(a["tool_id"]) and specs[a["tool_id"]].key_acquisition
    }
    available = sorted(set(chain_tools) | set(distractors))
    ans = t["answer"]
    basis: list[RewardBasis] = ["RESPONSE", "ACTION", "ENVIRONMENT"] if t["state_changing"] else ["RESPONSE", "ACTION"]
    prompts_used: dict[str, str] = {}
    models: dict[str, Any] = {}
    if scorer.get("implementation") not in (None, "none"):
        models["fluency_scorer"] = scorer
    for name, res in (("query_writer", wres), ("query_paraphrase", pres)):
        if res is None:
            continue
        prov = res.provenance()
        models[name] = prov
        prompts_used.update(prov.get("prompts") or {})
        for tmpl in role(name).rules_templates:
            n = tmpl.format(lang=lang)
            if prompts.exists(n):
                prompts_used[n] = f"sha256:{prompts.template_hash(n)}"
    query, templated = phrasing.qualifiers_after(query, lang), phrasing.qualifiers_after(templated, lang)
    return Task(
        id=task_id(t["domain"], golden, query),
        domain=t["domain"],
        platforms=platforms,
        language=lang,
        query=query,
        templated_query=templated,
        query_source=source,
        fluency=fluency_score,
        answer=Answer(
            type=ans["type"],
            value=ans["value"],
            text=answers.answer_text(ans, lang, frame),
            fields=ans["fields"],
            branch=ans.get("branch"),
            branches=ans.get("branches"),
            frame=frame,
        ),
        pattern=t["pattern"],
        category=t["category"],
        junctions=t["junctions"],
        golden_actions=[GoldenAction.model_validate(a) for a in golden],
        answer_spec=t["answer_spec"],
        counterfactual_actions=[
            GoldenAction.model_validate({k: a[k] for k in GoldenAction.model_fields if k in a})
            for a in t.get("counterfactual_actions") or []
        ],
        alternative_paths=[AlternativePath.model_validate(p) for p in alternatives],
        available_tools=available,
        system_state={"current_date": syn.current_date, "api_key": {"acquire_with": key_tools}},
        # the headroom over the minimal path, and room for every recorded sufficient path
        max_allowed_calls=max([math.ceil(len(golden) * syn.headroom), *(len(p["actions"]) for p in alternatives)]),
        reward_basis=basis,
        expected_state_hash=t["expected_state_hash"],
        lineage=Lineage(
            trajectory_id=t["trajectory_id"],
            run_id=run_id,
            surface={t["domain"]: trajectories.get("fingerprint") or ""},
            edges=t["edges"],
            call_digests=[a["call_digest"] for a in actions],
            prompts=prompts_used,
            models=models,
        ),
    )


_INTERNAL_ID = re.compile(r"\bid\b\W{0,3}\d|[A-Za-z0-9]_id\b|\bID\b\W{0,3}\d", re.IGNORECASE)
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b")
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _TOKEN.findall(text)]


def _surface(task: Mapping[str, Any]) -> str:
    """The query's surface form: every cited value and number masked, so two questions about different seeds
    with the same wording count once."""
    q = task["query"]
    values = sorted({str(v) for v in _cited_values(task) if str(v).strip()}, key=len, reverse=True)
    for v in values:
        q = re.sub(re.escape(v), "<v>", q, flags=re.IGNORECASE)
    return re.sub(r"\d+(?:[.,]\d+)*", "<n>", q)


def _cited_values(task: Mapping[str, Any]) -> list[Any]:
    out: list[Any] = []
    for a in task["golden_actions"]:
        for v in (a.get("args") or {}).values():
            out.extend(v if isinstance(v, list) else [v])
    return out


def _quantiles(xs: Sequence[float]) -> dict[str, float]:
    if not xs:
        return {}
    v = sorted(xs)

    def q(p: float) -> float:
        return round(float(v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]), 3)

    return {
        "min": q(0),
        "p25": q(0.25),
        "median": q(0.5),
        "p75": q(0.75),
        "max": q(1),
        "mean": round(sum(v) / len(v), 3),
    }


def language_metrics(tasks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Issue 15 item 7, for one language's tasks: share citing internal ids (`id 5`, `album_id`) or snake_case
    names (goal 0), distinct surface forms, distinct-2, lengths, fluency scores, model vs template share, and
    the most common opening (the first three words) with its share (goal: at most 10%)."""
    n = len(tasks)
    queries = [t["query"] for t in tasks]
    ids = sum(bool(_INTERNAL_ID.search(q)) for q in queries)
    snake = sum(bool(_SNAKE.search(q)) for q in queries)
    bigrams = [tuple(w[i : i + 2]) for w in map(_words, queries) for i in range(len(w) - 1)]
    openers = counts(" ".join(_words(q)[:3]) for q in queries)
    top = max(openers.items(), key=lambda kv: kv[1]) if openers else ("", 0)
    src = counts(t["query_source"] for t in tasks)
    scores = [float(t["fluency"]) for t in tasks if t.get("fluency") is not None]
    return {
        "queries": n,
        "internal_id_share": rate(ids, n),
        "snake_case_share": rate(snake, n),
        "distinct_surface_forms": len({_surface(t) for t in tasks}),
        "distinct_surface_share": rate(len({_surface(t) for t in tasks}), n),
        "distinct_2": rate(len(set(bigrams)), len(bigrams)),
        "length_words": _quantiles([len(_words(q)) for q in queries]),
        "length_chars": _quantiles([len(q) for q in queries]),
        "fluency": {"scored": len(scores), **_quantiles(scores)},
        "model_share": rate(src.get("model", 0), n),
        "template_share": rate(src.get("template", 0), n),
        "fallback_share": rate(src.get("fallback", 0), n),
        "top_opening": top[0],
        "top_opening_share": rate(top[1], n),
    }


def query_metadata(value: Mapping[str, Any], fallback_reasons: Sequence[str] = ()) -> dict[str, Any]:
    tasks = value["tasks"]
    src = counts(t["query_source"] for t in tasks)
    by_lang: dict[str, list[Mapping[str, Any]]] = {}
    for t in tasks:
        by_lang.setdefault(t["language"], []).append(t)
    flu = value.get("fluency") or {}
    scorer = flu.get("scorer") or {}
    return {
        "tasks": len(tasks),
        "language": value["language"],
        "rejected": len(value["rejected"]),
        "rejection_reasons": counts(r["reason"] for r in value["rejected"]),
        # why questions could not be said (phrasing.Unphraseable codes: too_nested, circular, record_count, …)
        "unphraseable_codes": counts(
            r.get("code") or "label" for r in value["rejected"] if r["reason"] == "unphraseable"
        ),
        "grounding_fallbacks": value["fallbacks"],
        "fallback_rate": rate(value["fallbacks"], len(tasks)),
        "fallback_reasons": counts(fallback_reasons),
        "query_sources": src,
        "fluency_scorer": f"{scorer.get('implementation', 'none')}:{scorer.get('backend', '')}/{scorer.get('model', '')}"
        + (f" ({scorer['scored_groups']}/{scorer['groups']} questions scored)" if "groups" in scorer else "")
        + (f" (failed {scorer.get('failed_groups')}: {scorer['failure']})" if scorer.get("failure") else ""),
        "fluency_dropped": int(flu.get("dropped", 0)),
        "query_metrics": {lang: language_metrics(ts) for lang, ts in sorted(by_lang.items())},
        "by_category": counts(t["category"] for t in tasks),
        "answer_types": counts(t["answer"]["type"] for t in tasks),
        "environment_tasks": sum("ENVIRONMENT" in t["reward_basis"] for t in tasks),
        "preview": md_table(
            [
                {
                    "category": t["category"],
                    "source": t["query_source"],
                    "fluency": "" if t.get("fluency") is None else f"{t['fluency']:.2f}",
                    "query": t["query"],
                    "answer": t["answer"]["text"],
                    "calls": len(t["golden_actions"]),
                }
                for t in tasks
            ],
            limit=12,
        ),
    }


def queries_frame(value: Mapping[str, Any], trajectories: Mapping[str, Any]):
    """One row per task: the shape expectations/generated_queries.json validates."""
    import pandas as pd

    by_id = {t["trajectory_id"]: t for t in trajectories["trajectories"]}
    rows = []
    for task in value["tasks"]:
        t = by_id.get(task["lineage"]["trajectory_id"])
        bridges = t["bridge_values"] if t else []
        allowed = [x for s in t["seeds"] for x in _seed_scalars(s["value"])] + list(t["thresholds"]) if t else []
        probs = grounding_problems(
            task["query"], language=value["language"], allowed_values=allowed, bridge_values=bridges
        )
        rows.append(
            {
                "id": task["id"],
                "query": task["query"],
                "query_length": len(task["query"].strip()),
                "language_ok": not any(p.startswith("language") for p in probs),
                "bridge_free": not any(p.startswith("bridge_value") for p in probs),
                "answer_type": task["answer"]["type"],
                "all_actions_ok": all(a["call_digest"] for a in task["golden_actions"]),
            }
        )
    return pd.DataFrame(
        rows, columns=["id", "query", "query_length", "language_ok", "bridge_free", "answer_type", "all_actions_ok"]
    )
