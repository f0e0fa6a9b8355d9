"""Row models shared by every stage after synthesis: the `Task` (one row of the final dataset).

Judges, splits and exports read and write these; `task_id` is the content hash of the canonical
(domain, golden actions, query), so the same trajectory and query always get the same id.
"""

import hashlib
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from factory.io import dumps

AnswerType = Literal["string", "number", "judge"]
RewardBasis = Literal["RESPONSE", "ACTION", "ENVIRONMENT"]
Stage = Literal["rules", "judges", "resolve"]  # the cascade stage a Verdict comes from


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class GoldenAction(_Row):
    step: int = Field(ge=1, description="1-based; parallel calls (FAN, pages, CMP arms, SEM) share a step.")
    tool: str
    platform: str
    args: dict[str, Any] = Field(description="Arguments as sent; API keys only as <KEY>.")
    result_digest: str = Field(default="", description="sha256 of the records and total count returned.")
    records: int = Field(default=0, description="Records in the response.")
    total_count: int | None = None
    call_digest: str = ""
    source_type: Literal["api", "retrieval"] = Field(default="api", description="The tool's source kind (issue 17).")
    passage_ids: list[str] = Field(
        default_factory=list, description="Retrieval calls: the returned chunk ids the next hop / the answer uses."
    )


class AlternativePath(_Row):
    """Another sufficient path for a task: its calls, and how the answer is read from them."""

    note: str = Field(
        description="Which path: 'original' (as synthesized, before pruning to the minimal path) or how it differs."
    )
    actions: list[GoldenAction] = Field(description="The path's calls, steps numbered 1..n like golden_actions.")
    answer_spec: dict[str, Any] = Field(description="The answer spec over this path's calls ({'step', 'index'} refs).")


class Junction(_Row):
    from_: str = Field(alias="from", description="<tool>.<field> of the upstream call.")
    to: str = Field(description="<tool>.<param> of the downstream call.")
    type: Literal["SEQ", "FAN", "DRV"]
    n: int = Field(ge=1, description="Distinct values of the connecting field in the upstream result.")
    width: int = Field(ge=1, description="Downstream calls issued (≤ φ).")
    edge_id: str = ""
    process: dict[str, Any] | None = Field(default=None, description="DRV: field, operator, threshold, n_in, n_out.")
    path_kind: Literal["file", "directory"] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,  # absent unless the junction kept one kind of listing entry
        description="The kind of listing entries the junction passed on (a file reader gets the listing's files, "
        "a folder lister its folders: `factory.synthesis.execute.of_path_kind`).",
    )


class Answer(_Row):
    type: AnswerType
    value: Any
    text: str = Field(
        description="The gold answer as a sentence in the query's language, value with what it is (units, "
        "counters); `value` is what scorers compare."
    )
    fields: list[str] = Field(default_factory=list)
    branch: Literal["then", "else"] | None = None
    branches: dict[str, Any] | None = Field(
        default=None,
        description="COND: the answer of each branch for the task's seed (both executed); `branch` says which holds.",
    )
    frame: dict[str, Any] | None = Field(
        default=None,
        description="What `text` states the value as (pattern, description, otherwise, options, qualifier, "
        "counter: the query writer's answer material), so a re-computed answer is phrased the same way.",
    )


class Verdict(_Row):
    """One filter's decision on one task (judged_queries); every verdict is kept in lineage.verdicts."""

    stage: Stage
    check: str = Field(description="Which check ran, e.g. near_duplicate, answer_leakage, replay, agent_resolve.")
    passed: bool = Field(description="False when this check found the defect it looks for.")
    reason: str | None = Field(default=None, description="Reason code from factory.filters.reasons when not passed.")
    judge: str = Field(default="rules", description="rules | execution | model:<backend>/<model id>.")
    detail: str = ""
    action: Literal["keep", "reject", "replace_answer", "none"] = Field(
        default="none", description="What the cascade did because of this verdict."
    )


class Lineage(_Row):
    trajectory_id: str
    run_id: str | None = None
    surface: dict[str, str] = Field(default_factory=dict, description="Tool-surface fingerprint per platform/domain.")
    edges: list[dict[str, Any]] = Field(default_factory=list, description="Edge ids with their posteriors.")
    call_digests: list[str] = Field(default_factory=list)
    prompts: dict[str, str] = Field(default_factory=dict, description="Template name → sha256.")
    models: dict[str, Any] = Field(default_factory=dict, description="Role → backend/model provenance.")
    verdicts: list[dict[str, Any]] = Field(default_factory=list, description="Filter verdicts (later stages).")


#: Lineage fields that vary from run to run with the same content: kept in the asset values (where
#: `factory lineage` reads them), left out of every published file, so content hashes stay stable.
PER_RUN_LINEAGE = ("run_id",)


def published_task(task: Mapping[str, Any]) -> dict[str, Any]:
    """A task as written to published files (split files, exports): per-run lineage fields removed."""
    lin = task.get("lineage")
    if not isinstance(lin, Mapping):
        return dict(task)
    return {**task, "lineage": {k: v for k, v in lin.items() if k not in PER_RUN_LINEAGE}}


#: What a changes_answer policy keeps of the task as it is without the policy (`policy["unrestricted"]`): the
#: published golden path holds no call the policy forbids (factory.retrieval.policy.restrict).
UNRESTRICTED_FIELDS = ("golden_actions", "alternative_paths", "counterfactual_actions", "answer_spec", "answer")


def unrestricted(task: Mapping[str, Any]) -> dict[str, Any]:
    """The task as it is without its tool-use policy: a changes_answer task's golden path, other paths, answer spec
    and answer are its policy's `unrestricted` record (the calls the forbidden tools would answer with, kept as
    lineage); any other task as it is. The audit re-derives the unrestricted answer from it; a conversation, which
    carries no policy, is built from it."""
    pol = task.get("policy")
    kept = pol.get("unrestricted") if isinstance(pol, Mapping) else None
    if not isinstance(kept, Mapping):
        return dict(task)
    return {**task, **{k: kept[k] for k in UNRESTRICTED_FIELDS if k in kept}}


class Task(_Row):
    id: str = Field(description="sha256 of canonical (domain, golden_actions, query).")
    domain: str
    platforms: list[str]
    language: Literal["ko", "en"]
    query: str
    templated_query: str = Field(description="The rules writer's query (the fallback).")
    query_source: Literal["template", "model", "fallback"] = Field(
        default="template",
        description="template: the rules writer's query as written; model: a model wrote or paraphrased it and "
        "the text passed the grounding check; fallback: a model was asked but failed, the templated query went out.",
    )
    fluency: float | None = Field(
        default=None,
        description="Mean token log-likelihood of the query under the fluency scorer (English, a model mapped); "
        "None where no model scores (Korean: the rule check; see lineage.models.fluency).",
    )
    answer: Answer
    pattern: str = Field(description="Ordered junction types, e.g. 'SEQ+FAN', or SEM / CMP / COND(+...).")
    category: Literal["SEQ", "FAN", "DRV", "SEM", "CMP", "COND", "MIXED"]
    junctions: list[Junction] = Field(default_factory=list)
    golden_actions: list[GoldenAction] = Field(
        description="The minimal sufficient path: every call is needed (factory.synthesis.minimal)."
    )
    answer_spec: dict[str, Any] = Field(
        description="How the answer is computed from the golden actions' results (factory.synthesis.answers). A call "
        "is referenced as {'step': s, 'index': i}: the i-th (0-based) golden action of the 1-based step s; a "
        "reference may add 'record' (the fields selecting a record other than the first) and, in a count, 'field' "
        "(a count field of that record read instead of the call's total)."
    )
    alternative_paths: list[AlternativePath] = Field(
        default_factory=list,
        description="Other sufficient paths (the original longer path among them). ACTION correctness accepts the "
        "golden path or any of these; efficiency is relative to the golden (minimal) path.",
    )
    counterfactual_actions: list[GoldenAction] = Field(
        default_factory=list,
        description="COND: the calls of the branch that does not hold, executed to record its answer; not golden.",
    )
    available_tools: list[str]
    system_state: dict[str, Any]
    max_allowed_calls: int
    reward_basis: list[RewardBasis]
    expected_state_hash: dict[str, str] = Field(
        default_factory=dict, description="Platform → state hash (ENVIRONMENT)."
    )
    answer_source: Literal["synthesis", "replay", "agent"] = Field(
        default="synthesis", description="Where the stored answer comes from (stage 3 may replace it)."
    )
    split: str | None = None
    hop_type: str | None = Field(
        default=None,
        description='"API", "RAG" or the sources an API+RAG chain calls in order, 2-5 hops: "API-RAG", "RAG-API", '
        '"API-RAG-API", "API-API-RAG", "RAG-API-API", "API-API-RAG-API", "API-RAG-API-API", "API-API-RAG-API-API" '
        '(`multisource.HOPS`; None on older rows: "API").',
    )
    policy: dict[str, Any] | None = Field(
        default=None,
        description="Tool-use policy (factory.retrieval.policy): category changes_answer | no_effect | none, scope "
        "(source | platform), text, forbidden_sources, forbidden_platforms (API platforms forbidden one by one), "
        "expected_answer (the unanswerable sentence when the policy changes the answer).",
    )
    lineage: Lineage


def task_id(domain: str, golden_actions: list[dict[str, Any]], query: str) -> str:
    canon = [domain, [[a["step"], a["tool"], a["args"]] for a in golden_actions], query]
    return "sha256:" + hashlib.sha256(dumps(canon).encode()).hexdigest()
