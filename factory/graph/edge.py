"""The edge u → v of the skeleton and connectivity graphs (EDGE §3.2): one typed record.

`factory.graph.skeleton` writes edges, `factory.graph.refine` moves their posteriors and
statuses, synthesis walks the retained ones, drift and lineage read them back.  Each module
parses the edges it is given once (`parse_edges`) and reads attributes; stored values hold
`Edge.model_dump(mode="json")`, which is exactly the dict stored before the model existed:
the optional fields (`eval_trials`, `eval_successes`, `posterior_mean`, `prob_above_tau`)
are left out while unset (None), as the stage that computes them had not added the keys.

`bindings`, `plan` and `cache` stay JSON objects: their shapes belong to `factory.graph.plan`
(bindings, source plans) and `factory.graph.refine` (cache entries).
"""

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

EdgeStatus = Literal["retained", "pruned"]

# Keys a stored edge carries only once the loop computed them (absent, never null, before).
OPTIONAL_KEYS = ("eval_trials", "eval_successes", "posterior_mean", "prob_above_tau")


class Edge(BaseModel):
    """A candidate dependency: outputs of tool u fill inputs of tool v, with a Beta posterior θ_e."""

    model_config = ConfigDict(extra="forbid")

    edge_id: str = Field(description="Content hash of (source id, target id, bindings): `plan.edge_id`.")
    source_tool: str = Field(description="Name of the source tool u.")
    source_domain: str = Field(description="Domain of u; an edge is stored with its source's domain.")
    source_platform: str = Field(description="Platform of u.")
    source_tool_id: str = Field(description="<domain>/<platform>/<tool> of u (`factory.kg.graph.tool_id`).")
    target_tool: str = Field(description="Name of the target tool v.")
    target_domain: str = Field(description="Domain of v (another domain than u's for cross-domain edges).")
    target_platform: str = Field(description="Platform of v.")
    target_tool_id: str = Field(description="<domain>/<platform>/<tool> of v.")
    cross_domain: bool = Field(description="True when v was retrieved among the top-K_x cross-domain neighbours.")
    similarity: float = Field(description="Cosine similarity of u's and v's signature embeddings (4 places).")
    bindings: list[dict[str, Any]] = Field(
        description="B_e: {target_param, source_field, transform or null}, checked against both schemas "
        "(`plan.validate_bindings`); admitted by value type with `type_check` (equal / subtype / "
        "unknown_overlap) and the `value_type` passed (`factory.semtypes`)."
    )
    plan: dict[str, dict[str, Any]] = Field(
        description="Source plan Π_e: target parameter → {kind: UPSTREAM | DEFAULT | CLARIFY, …} (`plan.compile_plan`)."
    )
    feasibility: float = Field(description="Feasibility score s_e of the edge_proposal role (4 places).")
    reason: str = Field(description="The proposal's one-sentence reason.")
    alpha: float = Field(description="α_e of the posterior Beta(α_e, β_e): prior plus weighted successes.")
    beta: float = Field(description="β_e of the posterior: prior plus weighted failures (Table 7).")
    prior_alpha: float = Field(description="α of the feasibility prior, 1 + κ·s_e.")
    prior_beta: float = Field(description="β of the feasibility prior, 1 + κ·(1 − s_e).")
    trials: int = Field(default=0, description="n_e: executed steps of the edge in the loop.")
    successes: int = Field(default=0, description="Steps of the edge whose outcome was a success.")
    outcome_counts: dict[str, int] = Field(
        default_factory=dict, description="Outcome class (Table 7 plus empty_result) → steps in the loop."
    )
    status: EdgeStatus = Field(default="retained", description="retained (in G*) or pruned by Eq. 5.")
    pruned_at_iteration: int | None = Field(default=None, description="Iteration that pruned the edge; None if not.")
    cache: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Edge cache C: up to cache_per_edge successful steps {input, first_record, call_digest}.",
    )
    proposal_provenance: dict[str, Any] = Field(
        description="Who proposed the edge (role result provenance, or {implementation: external})."
    )
    eval_trials: int | None = Field(default=None, description="Held-out sweep steps (set only once swept).")
    eval_successes: int | None = Field(default=None, description="Held-out sweep successes (set with eval_trials).")
    posterior_mean: float | None = Field(default=None, description="α/(α+β) after the loop (connectivity graph).")
    prob_above_tau: float | None = Field(default=None, description="Pr[θ_e > τ] after the loop (connectivity graph).")

    @model_serializer(mode="wrap")
    def _leave_out_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for k in OPTIONAL_KEYS:
            if k in data and data[k] is None:
                del data[k]
        return data

    def to_json(self) -> dict[str, Any]:
        """The stored form (JSON-ready dict)."""
        return self.model_dump(mode="json")


def parse_edges(edges: Iterable[Mapping[str, Any] | Edge]) -> list[Edge]:
    """Edges of a graph value as `Edge` objects (already parsed ones are kept as they are)."""
    return [e if isinstance(e, Edge) else Edge.model_validate(e) for e in edges]
