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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from factory import prompts
from factory.config import ProjectConfig
from factory.frames import frames_for
from factory.llm.client import ModelClient
from factory.llm.errors import LLMError
from factory.llm.roles import role
from factory.llm.schemas import AnswerMaterial, QueryParaphraseInput, QueryWriterInput, TrajectoryStep
from factory.records import AlternativePath, Answer, GoldenAction, Lineage, RewardBasis, Task, task_id
from factory.report import counts, md_table, rate
from factory.synthesis import answers, phrasing
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
        ),
        variant=variant,
    )


class _Reject(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


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
            if (a["tool_id"], p, _canon(v)) in seeds or _canon(v) in seed_values:
                continue
            out.append(f"{a['tool']}.{p}={v}")
    return sorted(set(out))


def _canon(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip().casefold()


def _check(
    query: str,
    t: Mapping[str, Any],
    specs: Mapping[str, ToolSpec],
    lang: str,
    vocab: Sequence[str],
    plain: Sequence[str],
    words: Iterable[str] = frozenset(),
) -> list[str]:
    allowed = [x for s in t["seeds"] for x in _seed_scalars(s["value"])]
    allowed += list(t["thresholds"]) + phrasing.default_values(t, specs)
    return grounding_problems(
        query,
        language=lang,
        allowed_values=allowed,
        bridge_values=t["bridge_values"],
        forbidden_identifiers=vocab,
        plain_field_names=plain,
        vocabulary_words=words,
    )


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
    from the tool frames of `lexicon` (the domain's tool_lexicon value), else from rules over the specs."""
    lang = cfg.domain(domain).language
    syn = cfg.synthesis
    specs = ToolRegistry.from_inventories(inventories)
    frames = ((lexicon or {}).get("nouns") or {}).get("tools") or frames_for(specs)
    names = [s.name for s in specs.values()]
    field_names = {f for s in specs.values() for f in [*s.output_fields, *s.params]}
    vocab = vocabulary(names, field_names)
    plain = sorted(f for f in field_names if not code_like(f))
    words = description_words(
        [s.description for s in specs.values()]
        + [f.description for s in specs.values() for f in s.output_fields.values()]
        + [str(p.get("description", "")) for s in specs.values() for p in s.params.values()]
    )
    rows: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    trajs: list[Mapping[str, Any]] = []
    inputs: list[QueryWriterInput] = []
    for i, t in enumerate(trajectories["trajectories"]):
        try:
            unstated = unstated_arguments(t, specs)
            if unstated:
                raise _Reject("unstated_argument", "; ".join(unstated))
            inputs.append(writer_input(t, specs, lang, i, frames))
        except phrasing.Unphraseable as e:
            rejected.append(
                {"trajectory_id": t["trajectory_id"], "reason": "unphraseable", "detail": str(e), "query": ""}
            )
            continue
        except _Reject as e:
            rejected.append({"trajectory_id": t["trajectory_id"], "reason": e.reason, "detail": e.detail, "query": ""})
            continue
        trajs.append(t)
    written = model.map("query_writer", inputs) if inputs else []
    templated: list[tuple[Mapping[str, Any], str, Any]] = []
    for t, res in zip(trajs, written, strict=True):
        q = res.output.query if res.output is not None else ""
        problems = _check(q, t, specs, lang, vocab, plain, words)
        if problems:
            rejected.append(
                {
                    "trajectory_id": t["trajectory_id"],
                    "reason": "ungrounded_template",
                    "detail": ", ".join(problems),
                    "query": q,
                }
            )
            continue
        templated.append((t, q, res))
    paraphrased: list[Any] = [None] * len(templated)
    if syn.paraphrase and templated:
        para_inputs = [
            QueryParaphraseInput(
                query=q,
                answer=answers.answer_text(t["answer"], lang),
                language=lang,
                must_keep=[s["value"] for s in t["seeds"] if isinstance(s["value"], str | int | float)],
                forbidden=[v for v in t["bridge_values"] if isinstance(v, str | int | float)],
                variant=i,
            )
            for i, (t, q, _) in enumerate(templated)
        ]
        try:
            paraphrased = model.map("query_paraphrase", para_inputs)
        except LLMError as e:  # the paraphrase is optional: every query keeps its templated form, counted
            log.warning("query_paraphrase unavailable, templated queries kept: %s", e)
            paraphrased = [_UNAVAILABLE] * len(templated)
    fallbacks = 0
    fallback_reasons: list[str] = []
    for (t, q, wres), pres in zip(templated, paraphrased, strict=True):
        query, source = q, "rules"
        if pres is _UNAVAILABLE:
            fallbacks += 1
            fallback_reasons.append("paraphrase_unavailable")
            source = "fallback"
            pres = None
        elif pres is not None:
            pq = pres.output.query if pres.output is not None and not pres.failure else ""
            problems = _check(pq, t, specs, lang, vocab, plain, words) if pq else ["paraphrase_failed"]
            if problems:
                fallbacks += 1
                fallback_reasons.extend(p.split(":", 1)[0] for p in problems)
                source = "fallback"
            else:
                query, source = pq, "paraphrase"
        rows.append(
            _task(t, query, q, source, lang, cfg, specs, wres, pres, run_id, trajectories).model_dump(
                by_alias=True, mode="json"
            )
        )
    value = {"domain": domain, "language": lang, "tasks": rows, "rejected": rejected, "fallbacks": fallbacks}
    meta = query_metadata(value, fallback_reasons)
    return value, meta


_GOLDEN = ("step", "tool", "platform", "args", "result_digest", "records", "total_count", "call_digest")


def _task(t, query, templated, source, lang, cfg, specs, wres, pres, run_id, trajectories) -> Task:
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
    return Task(
        id=task_id(t["domain"], golden, query),
        domain=t["domain"],
        platforms=platforms,
        language=lang,
        query=query,
        templated_query=templated,
        query_source=source,
        answer=Answer(
            type=ans["type"],
            value=ans["value"],
            text=answers.answer_text(ans, lang),
            fields=ans["fields"],
            branch=ans.get("branch"),
            branches=ans.get("branches"),
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


def query_metadata(value: Mapping[str, Any], fallback_reasons: Sequence[str] = ()) -> dict[str, Any]:
    tasks = value["tasks"]
    src = counts(t["query_source"] for t in tasks)
    return {
        "tasks": len(tasks),
        "language": value["language"],
        "rejected": len(value["rejected"]),
        "grounding_fallbacks": value["fallbacks"],
        "fallback_rate": rate(value["fallbacks"], len(tasks)),
        "fallback_reasons": counts(fallback_reasons),
        "query_sources": src,
        "by_category": counts(t["category"] for t in tasks),
        "answer_types": counts(t["answer"]["type"] for t in tasks),
        "environment_tasks": sum("ENVIRONMENT" in t["reward_basis"] for t in tasks),
        "preview": md_table(
            [
                {
                    "category": t["category"],
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
