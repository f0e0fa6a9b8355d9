"""Beta posteriors of edges: the feasibility prior, Table 7 updates and the pruning rule (Eq. 5).

Every edge e carries θ_e ~ Beta(α_e, β_e), its probability of executing
successfully.  The prior is anchored to the feasibility score s_e of the
proposal, α = 1 + κ·s, β = 1 + κ·(1 − s).  Each executed step of the edge adds
one trial and moves α (successes) or β (failures) by the weight of its outcome
class (EDGE Table 7): structural faults, which implicate the binding, weigh far
more than environmental ones (rate limits, timeouts, server errors), so random
infrastructure noise cannot prune a correctly bound edge.

One class is added to Table 7: ``empty_result``, a call that succeeded but
returned no records although a bound upstream value was passed.  A wrong
binding usually fails exactly this way on real APIs (a code from another code
system "names nothing" and the API answers with an empty list, not an error),
so it counts as a structural failure with `GraphConfig.empty_result_penalty`
(default 1.0, the weight of missing_field).

Another class stands for Table 7's "type mismatch": ``type_mismatch``, a step of an edge whose
binding passes a value of another value type than its target parameter takes
(`factory.semtypes`).  Whatever the call returned (a generic-only success, where the bound value
did not matter, or records that only look like an answer) it counts against the edge with the
weight of schema_mismatch (β+1.5).

An edge is pruned at iteration t iff n_e ≥ n_min and Pr[θ_e > τ] < ε, where
Pr[θ_e > τ] = 1 − I_τ(α_e, β_e) is the complement of the regularized incomplete
beta function.
"""

from scipy.special import betainc

from factory.config import GraphConfig
from factory.graph.edge import Edge
from factory.tools.outcomes import OUTCOME_CLASSES, Outcome, is_success_outcome

EMPTY_RESULT = "empty_result"
TYPE_MISMATCH = "type_mismatch"
EDGE_OUTCOME_CLASSES: list[str] = [*OUTCOME_CLASSES, EMPTY_RESULT, TYPE_MISMATCH]

# (parameter, increment) per outcome class, EDGE Table 7.
TABLE7: dict[str, tuple[str, float]] = {
    Outcome.SEMANTIC_SUCCESS.value: ("alpha", 1.0),
    Outcome.GENERIC_ONLY_SUCCESS.value: ("alpha", 0.3),
    Outcome.SCHEMA_MISMATCH.value: ("beta", 1.5),
    Outcome.MISSING_FIELD.value: ("beta", 1.0),
    Outcome.RATE_LIMIT.value: ("beta", 0.1),
    Outcome.TIMEOUT.value: ("beta", 0.3),
    Outcome.SERVER_ERROR.value: ("beta", 0.3),
    Outcome.AUTH_ERROR.value: ("beta", 0.5),
    Outcome.ENDPOINT_UNAVAILABLE.value: ("beta", 0.8),
    Outcome.UNCATEGORIZED.value: ("beta", 0.5),
}


def outcome_update(outcome: str, cfg: GraphConfig) -> tuple[str, float]:
    """Which Beta parameter an outcome moves, and by how much."""
    if outcome == EMPTY_RESULT:
        return "beta", cfg.empty_result_penalty
    if outcome == TYPE_MISMATCH:
        return TABLE7[Outcome.SCHEMA_MISMATCH.value]
    return TABLE7[outcome]


def outcome_group(outcome: str) -> str:
    if outcome in (EMPTY_RESULT, TYPE_MISMATCH):
        return "structural"
    return Outcome(outcome).group


def prior(feasibility: float, kappa: float) -> tuple[float, float]:
    """Feasibility-anchored Beta prior (α, β) = (1 + κs, 1 + κ(1 − s))."""
    s = min(max(float(feasibility), 0.0), 1.0)
    return 1.0 + kappa * s, 1.0 + kappa * (1.0 - s)


def prob_above(alpha: float, beta: float, tau: float) -> float:
    """Pr[θ > τ] for θ ~ Beta(α, β): 1 − I_τ(α, β)."""
    return float(1.0 - betainc(alpha, beta, tau))


def posterior_mean(alpha: float, beta: float) -> float:
    return alpha / (alpha + beta)


def should_prune(edge: Edge, cfg: GraphConfig) -> bool:
    """Eq. 5: n_e ≥ n_min and Pr[θ_e > τ] < ε."""
    return edge.trials >= cfg.n_min and prob_above(edge.alpha, edge.beta, cfg.tau_prune) < cfg.epsilon_prune


def apply_outcome(edge: Edge, outcome: str, cfg: GraphConfig) -> None:
    """Record one trial of `edge` with `outcome` (in place)."""
    param, inc = outcome_update(outcome, cfg)
    if param == "alpha":
        edge.alpha = round(edge.alpha + inc, 6)
    else:
        edge.beta = round(edge.beta + inc, 6)
    edge.trials += 1
    if is_success_outcome(outcome):
        edge.successes += 1
    edge.outcome_counts[outcome] = edge.outcome_counts.get(outcome, 0) + 1
