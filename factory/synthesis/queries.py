"""The generated_queries stage (EDGE Phase B, query half): grounded queries and Task records (pure core).

For each trajectory the `query_writer` role (rules: per-pattern templates in
prompts/query_writer/rules.<lang>.j2) writes the templated query from natural labels of the
seeds, the process-node qualifier and the answer; the `query_paraphrase` role may rephrase it.
Both pass `grounding.grounding_problems` or: a failing paraphrase falls back to the templated
query (counted), a failing templated query drops the trajectory (a recorded rejection).
"""

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from factory import prompts
from factory.config import ProjectConfig
from factory.llm.client import ModelClient
from factory.llm.errors import LLMError
from factory.llm.roles import role
from factory.llm.schemas import AnswerMaterial, QueryParaphraseInput, QueryWriterInput, TrajectoryStep
from factory.records import AlternativePath, Answer, GoldenAction, Lineage, RewardBasis, Task, task_id
from factory.report import counts, md_table, rate
from factory.synthesis import answers
from factory.synthesis.grounding import code_like, description_words, grounding_problems, vocabulary
from factory.synthesis.labels import field_label, param_label, tool_noun
from factory.tools.registry import ToolRegistry, ToolResolutionError
from factory.tools.spec import ToolSpec

log = logging.getLogger(__name__)
_UNAVAILABLE = object()

_OPS = {
    "en": {
        "max": "with the highest {f}", "min": "with the lowest {f}", "ge": "whose {f} is at least {t}",
        "le": "whose {f} is at most {t}", "eq": "whose {f} is {t}", "date_after": "whose {f} is after {t}",
        "most_frequent": "with the most common {f}",
    },
    "ko": {
        "max": "{fj} 가장 높은", "min": "{fj} 가장 낮은", "ge": "{fj} {t} 이상인", "le": "{fj} {t} 이하인",
        "eq": "{fj} {t}인", "date_after": "{fj} {t} 이후인", "most_frequent": "가장 흔한 {f}의",
    },
}  # fmt: skip


def _josa(word: str, pair: str) -> str:
    return prompts.josa(word, pair)


def _question_junctions(t: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The junctions the question speaks of: those of the executed path, also when pruning to the minimal
    path bypassed or dropped some (`describe.question_junctions`, factory.synthesis.minimal)."""
    return list(t["describe"].get("question_junctions", t["junctions"]))


def _qualifier(t: Mapping[str, Any], specs: ToolRegistry, lang: str) -> str:
    parts = []
    for j in [*_question_junctions(t), *(t.get("counterfactual_junctions") or [])]:
        node = j.get("process")
        if not node:
            continue
        up_tool = j["from"].split(".", 1)[0]
        try:
            spec: ToolSpec | None = specs.resolve(up_tool, platforms=t["platforms"], domain=t["domain"])
        except ToolResolutionError:
            spec = None
        f = field_label(spec, node["field"]) if spec else node["field"]
        noun = tool_noun(spec) if spec else ""
        phrase = _OPS[lang][node["operator"]].format(f=f, fj=_josa(f, "이/가"), t=node["threshold"])
        parts.append(f"{noun} {phrase}" if lang == "en" else f"{phrase} {noun}")
    if t["template"] == "COND":
        d = t["describe"]
        noun = tool_noun(specs[d["cond_tool_id"]])
        if lang == "ko":
            parts.append(f"{noun} 결과가 {d['threshold']}건 이상이면")
        else:
            parts.append(f"there are at least {d['threshold']} {noun}")
    if t["template"] == "CMP" and t["describe"].get("cmp") != "difference":
        noun = tool_noun(specs[t["describe"]["tool_id"]])
        more = t["describe"]["order"] == "more"
        if lang == "ko":
            parts.append(f"{noun} 건수가 더 {'많은' if more else '적은'} 쪽")
        else:
            parts.append(f"has {'more' if more else 'fewer'} {noun}")
    return "; ".join(parts) if lang == "en" else " ".join(parts)


def _describe(t: Mapping[str, Any], specs: Mapping[str, ToolSpec], lang: str) -> str:
    d = t["describe"]

    def one(ask: Mapping[str, Any]) -> str:
        spec = specs[ask["tool_id"]]
        noun = tool_noun(spec)
        if ask.get("ask") == "value":
            f = field_label(spec, ask["field"])
            return f"{noun}의 {f}" if lang == "ko" else f"the {f} of the {noun}"
        asked = _question_junctions(t)
        total = len(asked) and asked[-1]["width"] > 1
        if lang == "ko":
            return f"{noun}의 {'총 ' if total else ''}건수"
        return f"the {'total ' if total else ''}number of {noun}"

    if t["template"] == "SEM":
        a, b = (one(p) for p in d["parts"])
        return f"{_josa(a, '과/와')} {b}" if lang == "ko" else f"{a} and {b}"
    if t["template"] == "CMP" and d.get("cmp") == "difference":
        noun = tool_noun(specs[d["tool_id"]])
        return f"{noun} 건수의 차이" if lang == "ko" else f"the difference between their numbers of {noun}"
    if t["template"] == "CMP":
        spec = specs[d["compare"]["tool_id"]]
        return param_label(spec, d["compare"]["param"])
    if t["template"] == "COND":
        then = one({"ask": "count", "tool_id": d["then_tool_id"]})
        other = one({"ask": "count", "tool_id": d["cond_tool_id"]})
        return f"{then} (아니면 {other})" if lang == "ko" else f"{then} (otherwise, {other})"
    return one(d)


def _seed_values(t: Mapping[str, Any], specs: Mapping[str, ToolSpec], lang: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in t["seeds"]:
        label = param_label(specs[s["tool_id"]], s["param"])
        if label in out:
            both = t["template"] == "CMP" and t["describe"].get("cmp") == "difference"
            joiner = (" 및 " if both else " 또는 ") if lang == "ko" else (" and " if both else " or ")
            out[label] = f"{out[label]}{joiner}{s['value']}"
        else:
            out[label] = s["value"]
    if not out:  # a chain that starts from a full listing: 'all airlines' / '전체 시도'
        d = t["describe"]
        first = (
            d.get("chain", [None])[0] or d.get("cond_tool_id") or d.get("compare", {}).get("tool_id")
            or (d.get("parts") or [{}])[0].get("tool_id") or t["tools"][-1]
        )  # fmt: skip
        noun = tool_noun(specs[first])
        out = {"전체": noun} if lang == "ko" else {"all": noun}
    return out


def _main_pattern(t: Mapping[str, Any]) -> str:
    if t["template"] == "CMP" and t["describe"].get("cmp") == "difference":
        return "SEQ"  # 'what is the difference between …' — no choice between the two
    if t["template"] != "chain":
        return t["template"]
    return t["pattern"].split("+")[-1] if "DRV" not in t["pattern"] else "DRV"


def writer_input(t: Mapping[str, Any], specs: ToolRegistry, lang: str, variant: int) -> QueryWriterInput:
    ans = t["answer"]
    steps = [
        TrajectoryStep(step=a["step"], tool=a["tool"], summary=a["tool"], args={}, result_count=a["records"])
        for a in t["golden_actions"]
    ]
    value = ans["value"] if not isinstance(ans["value"], dict) else str(ans["value"])
    return QueryWriterInput(
        pattern=_main_pattern(t),
        language=lang,  # type: ignore[arg-type]
        steps=steps,
        seed_values=_seed_values(t, specs, lang),
        qualifier=_qualifier(t, specs, lang),
        answer=AnswerMaterial(
            type="list" if isinstance(value, list) else "number" if ans["type"] == "number" else "string",
            value=value,
            fields=ans["fields"],
            description=_describe(t, specs, lang),
        ),
        variant=variant,
    )


def _check(
    query: str,
    t: Mapping[str, Any],
    lang: str,
    vocab: Sequence[str],
    plain: Sequence[str],
    words: Iterable[str] = frozenset(),
) -> list[str]:
    allowed = [s["value"] for s in t["seeds"]] + list(t["thresholds"])
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
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Task rows (query, answer, golden actions, lineage) for every grounded trajectory."""
    lang = cfg.domain(domain).language
    syn = cfg.synthesis
    specs = ToolRegistry.from_inventories(inventories)
    names = [s.name for s in specs.values()]
    field_names = {f for s in specs.values() for f in [*s.output_fields, *s.params]}
    vocab = vocabulary(names, field_names)
    plain = sorted(f for f in field_names if not code_like(f))
    words = description_words(
        [s.description for s in specs.values()]
        + [f.description for s in specs.values() for f in s.output_fields.values()]
        + [str(p.get("description", "")) for s in specs.values() for p in s.params.values()]
    )
    trajs = list(trajectories["trajectories"])
    inputs = [writer_input(t, specs, lang, i) for i, t in enumerate(trajs)]
    written = model.map("query_writer", inputs) if inputs else []
    rows: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    templated: list[tuple[dict[str, Any], str, Any]] = []
    for t, res in zip(trajs, written, strict=True):
        q = res.output.query if res.output is not None else ""
        problems = _check(q, t, lang, vocab, plain, words)
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
            problems = _check(pq, t, lang, vocab, plain, words) if pq else ["paraphrase_failed"]
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
        allowed = [s["value"] for s in t["seeds"]] + list(t["thresholds"]) if t else []
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
