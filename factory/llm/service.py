"""The one LLM interface: `LLM` routes each role to its configured implementation.

- `rules` roles run the deterministic implementations in `factory.llm.rules`.
- Model roles render the role's prompt templates, ask the backend for a reply
  that follows the reply model's JSON schema (`json_object` + schema for
  llama.cpp, `json_schema` for OpenAI/vLLM), validate it with pydantic and the
  role's guards, re-ask a bounded number of times with the error, and on a
  final failure record the raw text (result, failure log, per-role count) and,
  if configured, fall back to the rules output.
- Every backend (`local`, `openai`, `vllm`) is the same `openai.AsyncOpenAI`
  code path against an OpenAI-compatible URL; `local` and `vllm` may first
  start their server (`factory.llm.servers`).
- Replies are cached durably before they are used; token and call counts are
  kept per role (`LLM.track()` scopes them to one asset).

Sync wrappers (`call`, `map`, `resolve`) run their own event loop, for Dagster
assets; the async forms (`acall`, `amap`, `aresolve`) are the primitives.
"""

import asyncio
import json
import os
import re
import threading
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import httpx
import openai
from pydantic import BaseModel, Field, ValidationError

from factory import prompts
from factory.llm import rules
from factory.llm.agent import resolve_task
from factory.llm.cache import ResponseCache, request_key, sha256_json
from factory.llm.client import Executor
from factory.llm.errors import BackendUnavailableError, LLMError
from factory.llm.roles import ROLES, RoleSpec, role
from factory.llm.schemas import AgentResult, AgentTaskInput, FluencyInput, FluencyScores
from factory.llm.servers import ManagedServer, local_command, vllm_command
from factory.model_config import (
    RULES,
    LocalBackendConfig,
    ModelsConfig,
    OpenAIBackendConfig,
    VLLMBackendConfig,
)
from factory.paths import resolve_path

T = TypeVar("T", bound=BaseModel)
ChatBackendConfig = LocalBackendConfig | OpenAIBackendConfig | VLLMBackendConfig
HttpClientFactory = Callable[[], httpx.AsyncClient]


# --------------------------------------------------------------------------- accounting


@dataclass
class RoleStats:
    """Counters of one role (or of all roles together)."""

    calls: int = 0  # role invocations
    model_calls: int = 0  # invocations served by a model backend
    rules_calls: int = 0  # invocations served by rules (configured or fallback)
    requests: int = 0  # HTTP requests sent to a backend
    cache_hits: int = 0  # requests answered from the cache
    prompt_tokens: int = 0
    completion_tokens: int = 0
    invalid_replies: int = 0  # replies that failed schema or guard validation
    failures: int = 0  # invocations whose model output never validated
    fallbacks: int = 0  # failures answered by rules instead

    def add(self, **inc: int) -> None:
        for k, v in inc.items():
            setattr(self, k, getattr(self, k) + v)

    def __add__(self, other: "RoleStats") -> "RoleStats":
        return RoleStats(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


class Accounting:
    """Per-role counters; `metadata()` flattens them for an asset's metadata."""

    def __init__(self) -> None:
        self.by_role: dict[str, RoleStats] = defaultdict(RoleStats)

    def add(self, role_name: str, **inc: int) -> None:
        self.by_role[role_name].add(**inc)

    def total(self) -> RoleStats:
        out = RoleStats()
        for s in self.by_role.values():
            out = out + s
        return out

    def metadata(self, prefix: str = "llm") -> dict[str, int | str]:
        """Flat {'llm/requests': n, 'llm/<role>/failures': n, ..., 'llm/summary': markdown}."""
        md: dict[str, int | str] = {f"{prefix}/{k}": v for k, v in asdict(self.total()).items()}
        for name, s in sorted(self.by_role.items()):
            for k in ("calls", "requests", "cache_hits", "prompt_tokens", "completion_tokens", "failures", "fallbacks"):
                md[f"{prefix}/{name}/{k}"] = getattr(s, k)
        header = "| role | calls | model | rules | requests | cache hits | prompt tok | completion tok | invalid | failures | fallbacks |"
        rows = [header, "|" + "---|" * 11]
        for name, s in sorted(self.by_role.items()):
            rows.append(
                f"| {name} | {s.calls} | {s.model_calls} | {s.rules_calls} | {s.requests} | {s.cache_hits} | "
                f"{s.prompt_tokens} | {s.completion_tokens} | {s.invalid_replies} | {s.failures} | {s.fallbacks} |"
            )
        md[f"{prefix}/summary"] = "\n".join(rows)
        return md


# --------------------------------------------------------------------------- results


class CallFailure(BaseModel):
    """A model output that never validated; kept with its raw text."""

    backend: str
    model: str
    error: str
    raw_text: str | None
    attempts: int


class RoleResult(BaseModel, Generic[T]):
    """The output of one role invocation and where it came from."""

    role: str
    language: str | None = None
    output: T | None = Field(description="None only when the model failed and fallback is off.")
    implementation: Literal["model", "rules"]
    backend: str = Field(description="Backend name that produced `output` ('rules' for rules and fallbacks).")
    model: str = Field(description="Model id, or the rules version.")
    prompts: dict[str, str] = Field(default_factory=dict, description="Template name → sha256 of the prompts used.")
    requests: int = 0
    cache_hits: int = 0
    attempts: int = 0
    failure: CallFailure | None = None
    fallback: bool = Field(default=False, description="The model failed and rules produced `output`.")

    @property
    def ok(self) -> bool:
        return self.failure is None

    def provenance(self) -> dict[str, Any]:
        """What an artifact records about how this output was produced."""
        out: dict[str, Any] = {
            "role": self.role,
            "implementation": self.implementation,
            "backend": self.backend,
            "model": self.model,
            "prompts": self.prompts,
        }
        if self.failure is not None:
            out["failure"] = self.failure.model_dump()
        return out


# --------------------------------------------------------------------------- backends


def server_for(
    name: str, cfg: ChatBackendConfig, models: ModelsConfig, state_dir: Path | None = None
) -> ManagedServer | None:
    """The managed server of a `local` or launching `vllm` backend; None for plain endpoints."""
    state_dir = state_dir or resolve_path(models.cache.path).parent / "servers"
    if isinstance(cfg, LocalBackendConfig):
        return ManagedServer(
            name=name,
            base_url=cfg.base_url,
            model=cfg.model,
            command=None,
            state_dir=state_dir,
            startup_timeout_s=cfg.startup_timeout_s,
            keep_alive=cfg.keep_alive,
        )
    if isinstance(cfg, VLLMBackendConfig):
        key = os.environ.get(cfg.api_key_env) if cfg.api_key_env else None
        return ManagedServer(
            name=name,
            base_url=cfg.base_url,
            model=cfg.model,
            command=None,
            state_dir=state_dir,
            startup_timeout_s=cfg.startup_timeout_s,
            keep_alive=cfg.keep_alive,
            api_key=key,
        )
    return None


def launch_command(cfg: ChatBackendConfig) -> list[str] | None:
    """The command that starts this backend's server, or None where the factory does not launch one."""
    if isinstance(cfg, LocalBackendConfig):
        return local_command(cfg)
    if isinstance(cfg, VLLMBackendConfig) and cfg.launch and cfg.url is None:
        return vllm_command(cfg)
    return None


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def extract_json(text: str) -> str:
    """The JSON object inside a reply (code fences and chatter around it removed)."""
    t = _FENCE.sub("", text.strip())
    start, end = t.find("{"), t.rfind("}")
    return t[start : end + 1] if start != -1 and end > start else t


class ChatBackend:
    """One OpenAI-compatible chat endpoint with cache, accounting and bounded concurrency."""

    def __init__(
        self,
        name: str,
        cfg: ChatBackendConfig,
        models: ModelsConfig,
        cache: ResponseCache | None,
        accounting: Callable[..., None],
        state_dir: Path | None = None,
        http_client_factory: HttpClientFactory | None = None,
    ) -> None:
        self.name = name
        self.cfg = cfg
        self.model = cfg.model
        self.url = cfg.base_url
        self.kind = cfg.kind
        # the identity that changes replies: llama.cpp/vLLM by kind, any other endpoint by its URL
        self.endpoint = cfg.kind if cfg.kind != "openai" else f"openai:{cfg.base_url}"
        self._models = models
        self._cache = cache
        self._count = accounting
        self._http_client_factory = http_client_factory
        self.server = server_for(name, cfg, models, state_dir)
        self._started = False
        self._start_lock = threading.Lock()
        self._per_loop: dict[int, tuple[openai.AsyncOpenAI, asyncio.Semaphore]] = {}

    # ------------------------------------------------------------------ lifecycle

    def _overflow_hint(self, body: str) -> str:
        """A pointer to the setting to change when the server says the prompt does not fit its context."""
        if "context_length_exceeded" not in body and "exceeds the available context" not in body:
            return ""
        n_ctx = getattr(self.cfg, "n_ctx", None)
        if n_ctx is None:
            return " (the prompt does not fit the model's context: offer fewer tools or use a longer-context model)"
        return f" (the prompt does not fit the context of {n_ctx} tokens: raise models.backends.{self.name}.n_ctx)"

    def _api_key(self) -> str:
        env = getattr(self.cfg, "api_key_env", None)
        if env:
            key = os.environ.get(env)
            if key:
                return key
            if isinstance(self.cfg, OpenAIBackendConfig):
                raise LLMError(
                    f"backend {self.name!r} ({self.url}): environment variable {env} with the API key is not set"
                )
        return "sk-no-key-required"

    def start(self) -> None:
        """Make sure the server answers (starting a managed one if needed). Idempotent."""
        with self._start_lock:
            if self._started:
                return
            if self.server is not None:
                if self.server.command is None and not self.server.healthy():
                    self.server.command = launch_command(self.cfg)  # raises ServerStartError if it cannot
                    if self.server.command is None:
                        raise BackendUnavailableError(self.name, self.url, "no server answers and launching is off")
                self.server.ensure()
            self._started = True

    def _client(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._per_loop:
            client = openai.AsyncOpenAI(
                base_url=self.url,
                api_key=self._api_key(),
                timeout=self.cfg.timeout_s,
                max_retries=self.cfg.max_connection_retries,
                http_client=self._http_client_factory() if self._http_client_factory else None,  # type: ignore[arg-type]  # openai's stubs say httpx2.AsyncClient; it takes an httpx.AsyncClient too
            )
            self._per_loop[loop_id] = (client, asyncio.Semaphore(self.cfg.concurrency))
        return self._per_loop[loop_id]

    async def aclose_loop(self) -> None:
        """Close the client bound to the running loop (called before a sync wrapper's loop ends)."""
        entry = self._per_loop.pop(id(asyncio.get_running_loop()), None)
        if entry is not None:
            await entry[0].close()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        self._started = False

    async def unreachable(self, timeout_s: float = 10.0) -> str | None:
        """GET <url>/models: None when the endpoint answers anything (an error status included),
        else why it could not be reached (connection refused, connect timeout)."""
        factory = self._http_client_factory
        client = factory() if factory else httpx.AsyncClient(timeout=timeout_s)
        try:
            await client.get(self.url.rstrip("/") + "/models", timeout=timeout_s)
        except (httpx.ConnectError, httpx.ConnectTimeout) as e:
            return str(e)
        except httpx.HTTPError:
            pass  # it answered something
        finally:
            await client.aclose()
        return None

    def variant(self, cache: ResponseCache | None, **sampling: Any) -> "ChatBackend":
        """This endpoint with other sampling (temperature, seed, max_tokens): same name, server and
        HTTP client factory, own request parameters (so the response cache keys them apart)."""
        v = ChatBackend(
            self.name,
            self.cfg.model_copy(update=sampling),
            self._models,
            cache,
            self._count,
            http_client_factory=self._http_client_factory,
        )
        v.server = self.server  # one server per backend: lifecycle stays with the original
        return v

    # ------------------------------------------------------------------ requests

    def _response_format(self, schema: dict[str, Any], schema_name: str) -> dict[str, Any]:
        mode = self.cfg.structured_mode
        if mode == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": schema_name, "schema": schema, "strict": False}}
        return {"type": "json_object"}

    async def chat(
        self,
        role_name: str,
        messages: list[dict[str, Any]],
        *,
        schema: dict[str, Any] | None = None,
        schema_name: str = "reply",
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """One chat completion → ({'content', 'tool_calls'}, cache_hit). Cached before it is returned."""
        params: dict[str, Any] = {"temperature": self.cfg.temperature, "max_tokens": self.cfg.max_tokens}
        if self.cfg.seed is not None:
            params["seed"] = self.cfg.seed
        if schema is not None:
            params["response_format"] = self._response_format(schema, schema_name)
        if tools:
            params["tools"] = tools
            if tool_choice:
                params["tool_choice"] = tool_choice
        key = request_key(
            endpoint=self.endpoint,
            model=self.model,
            messages=messages,
            params={k: v for k, v in params.items() if k not in ("tools", "response_format")}
            | {"structured_mode": self.cfg.structured_mode if schema is not None else None, "tool_choice": tool_choice},
            schema=schema,
            tools=tools,
        )
        if (hit := self._cached(role_name, key)) is not None:
            return hit.message, True
        await asyncio.to_thread(self.start)
        client, sem = self._client()
        async with sem:
            try:
                resp = await client.chat.completions.create(model=self.model, messages=messages, **params)  # type: ignore[arg-type]
            except openai.APIConnectionError as e:  # includes timeouts
                detail = f"{type(e).__name__}: {e}"
                if self.server is not None and self.server.pid is not None:
                    detail += f" (server log {self.server.log_path})"
                raise BackendUnavailableError(self.name, self.url, detail) from e
            except openai.APIStatusError as e:
                body = (e.response.text or "")[:500] if e.response is not None else ""
                raise LLMError(
                    f"LLM backend {self.name!r} at {self.url} answered HTTP {e.status_code} for role {role_name}"
                    f"{self._overflow_hint(body)}: {body}"
                ) from e
        choice = resp.choices[0].message
        message: dict[str, Any] = {"content": choice.content}
        if choice.tool_calls:
            message["tool_calls"] = [
                {
                    "id": tc.id,
                    "type": "function",
                    "function": {"name": tc.function.name, "arguments": tc.function.arguments},  # type: ignore[union-attr]  # only function tools are offered
                }
                for tc in choice.tool_calls
            ]
        pt = resp.usage.prompt_tokens if resp.usage else 0
        ct = resp.usage.completion_tokens if resp.usage else 0
        if self._cache is not None:
            self._cache.put(
                key,
                endpoint=self.endpoint,
                model=self.model,
                role=role_name,
                message=message,
                prompt_tokens=pt,
                completion_tokens=ct,
            )
        self._count(role_name, requests=1, prompt_tokens=pt, completion_tokens=ct)
        return message, False

    def _cached(self, role_name: str, key: str) -> Any:
        """The cached reply under `key` (counted as a cache hit of the role), None without one."""
        hit = self._cache.get(key) if self._cache is not None else None
        if hit is not None:
            self._count(role_name, cache_hits=1)
        return hit

    async def score(self, role_name: str, text: str) -> tuple[float | None, bool]:
        """(mean token log-likelihood of `text`, cache_hit): one `/v1/completions` request that echoes the
        prompt with each token's logprob (`echo`, `logprobs: 0`, `max_tokens: 1`). The prompt is
        `score_prefix + text`; only the tokens of `text` are averaged. None when the endpoint returns no
        logprobs for it. Cached like a chat reply."""
        prompt = self.cfg.score_prefix + text
        params: dict[str, Any] = {"echo": True, "logprobs": 0, "max_tokens": 1, "temperature": 0.0}
        key = request_key(
            endpoint=self.endpoint,
            model=self.model,
            messages=[{"role": "completion", "content": prompt}],
            params=params | {"kind": "score"},
            schema=None,
            tools=None,
        )
        if (hit := self._cached(role_name, key)) is not None:
            return hit.message.get("score"), True
        await asyncio.to_thread(self.start)
        client, sem = self._client()
        async with sem:
            try:
                resp = await client.completions.create(model=self.model, prompt=prompt, **params)
            except openai.APIConnectionError as e:
                raise BackendUnavailableError(self.name, self.url, f"{type(e).__name__}: {e}") from e
            except openai.APIStatusError as e:
                body = (e.response.text or "")[:300] if e.response is not None else ""
                raise LLMError(
                    f"LLM backend {self.name!r} at {self.url} answered HTTP {e.status_code} to a /completions "
                    f"request with echoed logprobs (role {role_name}): {body}"
                ) from e
        choice = resp.choices[0]
        pt = resp.usage.prompt_tokens if resp.usage else 0
        ct = resp.usage.completion_tokens if resp.usage else 0
        lp = choice.logprobs
        value = text_logprob(list(lp.tokens or []), list(lp.token_logprobs or []), text, ct) if lp else None
        if self._cache is not None:
            self._cache.put(
                key,
                endpoint=self.endpoint,
                model=self.model,
                role=role_name,
                message={"content": None, "score": value},
                prompt_tokens=pt,
                completion_tokens=ct,
            )
        self._count(role_name, requests=1, prompt_tokens=pt, completion_tokens=ct)
        return value, False


def text_logprob(tokens: list[str], logprobs: list[float | None], text: str, generated: int) -> float | None:
    """Mean logprob of the trailing prompt tokens that spell `text`, from an echoed completion: the echoed
    tokens are the prompt's (a leading BOS may be left out) followed by `generated` new ones; the tokens of
    `text` are found from the end of the prompt by their lengths (offsets differ between servers)."""
    n = len(tokens) - max(generated, 0)
    if n <= 0 or len(logprobs) < n:
        return None
    want, have, picked = len(text), 0, []
    for i in range(n - 1, -1, -1):
        picked.append(logprobs[i])
        have += len(tokens[i])
        if have >= want:
            break
    vals = [v for v in picked if v is not None]
    return sum(vals) / len(vals) if vals else None


# --------------------------------------------------------------------------- the interface


def _short_error(e: Exception, limit: int = 400) -> str:
    if isinstance(e, ValidationError):
        parts = [f"{'.'.join(str(x) for x in err['loc']) or '(root)'}: {err['msg']}" for err in e.errors()[:5]]
        text = "; ".join(parts)
    else:
        text = str(e)
    return text[:limit]


class _GuardError(ValueError):
    pass


class LLM:
    """Routes every model role to its configured backend; see the module docstring.

    Implements `factory.llm.client.ModelClient`, the face the stages use."""

    def __init__(
        self,
        config: ModelsConfig | None = None,
        *,
        cache_path: str | Path | None | Literal["config"] = "config",
        state_dir: str | Path | None = None,
        http_client_factory: HttpClientFactory | None = None,
    ) -> None:
        self.config = config or ModelsConfig()
        if cache_path == "config":
            cache_path = self.config.cache.path if self.config.cache.enabled else None
        self.cache: ResponseCache | None = ResponseCache(resolve_path(cache_path)) if cache_path is not None else None
        self._trackers: list[Accounting] = []
        self._score_down: dict[str, str] = {}  # backend → why it cannot score (fluency_scorer)
        self.accounting = Accounting()
        self._lock = threading.Lock()
        sdir = Path(state_dir) if state_dir else None
        self.backends: dict[str, ChatBackend] = {
            name: ChatBackend(name, cfg, self.config, self.cache, self._count, sdir, http_client_factory)
            for name, cfg in self.config.backends.items()
        }

    # ------------------------------------------------------------------ accounting

    def _count(self, role_name: str, **inc: int) -> None:
        with self._lock:
            self.accounting.add(role_name, **inc)
            for t in self._trackers:
                t.add(role_name, **inc)

    @contextmanager
    def track(self) -> Iterator[Accounting]:
        """Count only what happens inside the block (e.g. one asset): `with llm.track() as acct: ...`."""
        acct = Accounting()
        with self._lock:
            self._trackers.append(acct)
        try:
            yield acct
        finally:
            with self._lock:
                self._trackers.remove(acct)

    def metadata(self, prefix: str = "llm") -> dict[str, int | str]:
        return self.accounting.metadata(prefix)

    # ------------------------------------------------------------------ routing

    def backend_name(self, role_name: str, language: str | None = None) -> str:
        return self.config.backend_for(role(role_name).name, language)

    def uses_model(self, role_name: str, language: str | None = None) -> bool:
        """Whether a model backend (not rules) serves the role (in `language`, for language roles)."""
        return self.backend_name(role_name, language) != RULES

    def implementation(self, role_name: str, language: str | None = None) -> dict[str, str]:
        """{'backend': name, 'model': id} serving a role (for lineage and code versions)."""
        name = self.backend_name(role_name, language)
        if name == RULES:
            return {"backend": RULES, "model": rules.RULES_VERSION}
        return {"backend": name, "model": self.backends[name].model}

    def code_version(self, role_name: str, languages: Sequence[str] = ("en", "ko")) -> str:
        """Prompt-template hash plus the implementations serving the role: for an asset's code_version."""
        spec = role(role_name)
        impls = sorted({json.dumps(self.implementation(role_name, lang), sort_keys=True) for lang in languages})
        return sha256_json({"prompts": prompts.prompts_version(spec.all_templates()), "impl": impls})[:16]

    # ------------------------------------------------------------------ calls

    def _coerce(self, spec: RoleSpec, inp: BaseModel | dict[str, Any]) -> BaseModel:
        if isinstance(inp, spec.input_model):
            return inp
        if isinstance(inp, BaseModel):
            inp = inp.model_dump()
        return spec.input_model.model_validate(inp)

    def _rules_result(self, spec: RoleSpec, inp: BaseModel, language: str | None) -> RoleResult[Any]:
        out = spec.rules(inp)
        names = [t.format(lang=language or "en") for t in spec.rules_templates]
        return RoleResult(
            role=spec.name,
            language=language,
            output=out,
            implementation="rules",
            backend=RULES,
            model=rules.RULES_VERSION,
            prompts=prompts.template_hashes(names),
        )

    async def acall(self, role_name: str, inp: BaseModel | dict[str, Any]) -> RoleResult[Any]:
        """Run one role on one input."""
        spec = role(role_name)
        if spec.name == "agent_resolver":
            raise LLMError("agent_resolver needs tools to run: use LLM.resolve / LLM.aresolve")
        inp = self._coerce(spec, inp)
        language = spec.language_of(inp) if spec.language_specific else None
        bname = self.config.backend_for(spec.name, language)
        self._count(spec.name, calls=1)
        if bname == RULES:
            self._count(spec.name, rules_calls=1)
            return self._rules_result(spec, inp, language)
        self._count(spec.name, model_calls=1)
        if spec.name == "fluency_scorer":
            return await self._fluency(spec, inp, language, self.backends[bname])
        return await self._structured(spec, inp, language, self.backends[bname])

    async def _fluency(
        self, spec: RoleSpec, inp: BaseModel, language: str | None, backend: ChatBackend
    ) -> RoleResult[Any]:
        """Scores from the backend's /v1/completions logprobs. An endpoint that cannot score (unreachable, no
        server, no echoed logprobs) is recorded as the failure of every later request too (no restart per
        text); its texts get the rules' None scores with `fallback` set."""
        assert isinstance(inp, FluencyInput)
        error = self._score_down.get(backend.name)
        requests = hits = 0
        scores: list[float | None] = []
        if error is None:
            try:
                for text in inp.texts:
                    v, hit = await backend.score(spec.name, text)
                    scores.append(v)
                    hits += hit
                    requests += not hit
            except LLMError as e:
                error = self._score_down.setdefault(backend.name, _short_error(e))
        base: dict[str, Any] = {
            "role": spec.name,
            "language": language,
            "backend": backend.name,
            "model": backend.model,
            "requests": requests,
            "cache_hits": hits,
            "attempts": 1,
        }
        if error is None:
            return RoleResult(output=FluencyScores(scores=scores), implementation="model", **base)
        failure = CallFailure(backend=backend.name, model=backend.model, error=error, raw_text=None, attempts=1)
        self._count(spec.name, failures=1, fallbacks=1, rules_calls=1)
        return RoleResult(
            output=rules.fluency_scorer(inp),
            implementation="rules",
            failure=failure,
            fallback=True,
            **base | {"backend": RULES, "model": rules.RULES_VERSION},
        )

    async def _structured(
        self, spec: RoleSpec, inp: BaseModel, language: str | None, backend: ChatBackend
    ) -> RoleResult[Any]:
        messages = spec.messages(inp)
        schema = spec.schema()
        used = spec.model_templates(language or "en")
        prompt_hashes = prompts.template_hashes([*used, "common/repair.en"])
        raw: str | None = None
        error = ""
        requests = hits = 0
        attempts = 0
        for attempts in range(1, self.config.max_retries + 2):
            message, hit = await backend.chat(
                spec.name, messages, schema=schema, schema_name=spec.output_model.__name__
            )
            hits += hit
            requests += not hit
            raw = message.get("content") or ""
            try:
                parsed = spec.output_model.model_validate_json(extract_json(raw))
                problems = spec.check(inp, parsed)
                if problems:
                    raise _GuardError("; ".join(problems))
                return RoleResult(
                    role=spec.name,
                    language=language,
                    output=spec.final(inp, parsed),
                    implementation="model",
                    backend=backend.name,
                    model=backend.model,
                    prompts=prompt_hashes,
                    requests=requests,
                    cache_hits=hits,
                    attempts=attempts,
                )
            except (ValidationError, ValueError) as e:
                error = _short_error(e)
                self._count(spec.name, invalid_replies=1)
                messages = [
                    *messages,
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": prompts.render("common/repair.en", error=error)},
                ]
        failure = CallFailure(backend=backend.name, model=backend.model, error=error, raw_text=raw, attempts=attempts)
        self._count(spec.name, failures=1)
        if self.cache is not None:
            self.cache.record_failure(
                role=spec.name,
                backend=backend.name,
                model=backend.model,
                input_hash=sha256_json(inp.model_dump(mode="json")),
                error=error,
                raw_text=raw,
                attempts=attempts,
            )
        result: RoleResult[Any] = RoleResult(
            role=spec.name,
            language=language,
            output=None,
            implementation="model",
            backend=backend.name,
            model=backend.model,
            prompts=prompt_hashes,
            requests=requests,
            cache_hits=hits,
            attempts=attempts,
            failure=failure,
        )
        if self.config.fallback_to_rules:
            self._count(spec.name, fallbacks=1, rules_calls=1)
            fb = self._rules_result(spec, inp, language)
            result = result.model_copy(
                update={
                    "output": fb.output,
                    "implementation": "rules",
                    "backend": RULES,
                    "model": rules.RULES_VERSION,
                    "prompts": {**prompt_hashes, **fb.prompts},
                    "fallback": True,
                }
            )
        return result

    async def amap(self, role_name: str, inputs: Sequence[BaseModel | dict[str, Any]]) -> list[RoleResult[Any]]:
        """Run a role over many inputs concurrently (bounded per backend); order is kept.

        If the backend becomes unreachable the first such error is raised; every reply
        received before it is already cached.
        """
        tasks = [asyncio.ensure_future(self.acall(role_name, x)) for x in inputs]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def aresolve(self, inp: AgentTaskInput | dict[str, Any], executor: Executor) -> RoleResult[AgentResult]:
        """Solve a task with tools: a model through the agent runner (`factory.llm.agent`: OpenAI
        tool calls, or tools described in the prompt and every family's call format parsed), or rules
        by replaying golden actions."""
        spec = role("agent_resolver")
        task = self._coerce(spec, inp)
        assert isinstance(task, AgentTaskInput)
        bname = self.config.backend_for(spec.name, task.language)
        self._count(spec.name, calls=1)
        if bname == RULES:
            self._count(spec.name, rules_calls=1)
            out = await rules.agent_resolver(task, executor)
            return RoleResult(
                role=spec.name,
                language=task.language,
                output=out,
                implementation="rules",
                backend=RULES,
                model=rules.RULES_VERSION,
            )
        self._count(spec.name, model_calls=1)
        backend = self.backends[bname]
        out, episode, templates = await resolve_task(backend, task, executor, role_name=spec.name)
        return RoleResult(
            role=spec.name,
            language=task.language,
            output=out,
            implementation="model",
            backend=backend.name,
            model=backend.model,
            prompts=prompts.template_hashes(templates),
            requests=episode.requests,
            cache_hits=episode.cache_hits,
            attempts=1,
        )

    # ------------------------------------------------------------------ chat backends

    def backend_names(self) -> list[str]:
        """The declared chat backends (sorted; 'rules' is not one)."""
        return sorted(self.backends)

    def chat_backend(self, name: str) -> ChatBackend:
        """The chat endpoint `name` (what the agent runner and the evaluation judge drive)."""
        if name not in self.backends:
            raise LLMError(f"unknown backend {name!r}; declared backends: {', '.join(self.backend_names())}")
        return self.backends[name]

    def backend_variant(
        self, name: str, *, temperature: float, seed: int | None, max_tokens: int | None = None, cache: bool = True
    ) -> ChatBackend:
        """Backend `name` with one run's sampling (temperature, seed, max_tokens): same endpoint and
        server, own request parameters, so the response cache keys runs apart; `cache=False` bypasses
        the response cache. Requests are counted in this object's accounting."""
        sampling: dict[str, Any] = {"temperature": temperature, "seed": seed}
        if max_tokens is not None:
            sampling["max_tokens"] = max_tokens
        return self.chat_backend(name).variant(self.cache if cache else None, **sampling)

    # ------------------------------------------------------------------ sync wrappers

    async def aclose_loop(self) -> None:
        """Close every backend's client bound to the running event loop: call it before a loop you
        started ends (the sync wrappers do)."""
        for b in self.backends.values():
            await b.aclose_loop()

    def _run(self, coro: Awaitable[Any]) -> Any:
        async def main() -> Any:
            try:
                return await coro
            finally:
                await self.aclose_loop()

        return asyncio.run(main())

    def call(self, role_name: str, inp: BaseModel | dict[str, Any]) -> RoleResult[Any]:
        return self._run(self.acall(role_name, inp))

    def map(self, role_name: str, inputs: Sequence[BaseModel | dict[str, Any]]) -> list[RoleResult[Any]]:
        return self._run(self.amap(role_name, inputs))

    def resolve(self, inp: AgentTaskInput | dict[str, Any], executor: Executor) -> RoleResult[AgentResult]:
        return self._run(self.aresolve(inp, executor))

    # ------------------------------------------------------------------ lifecycle

    def start(self, role_names: Sequence[str] | None = None) -> None:
        """Start (or reuse) the servers of the backends serving `role_names` (default: all mapped roles)."""
        names = set(role_names or ROLES)
        for b in {self.config.backend_for(r, lang) for r in names for lang in (None, *self.config.languages)}:
            if b != RULES:
                self.backends[b].start()

    def close(self) -> None:
        """Stop servers this object started (unless keep_alive) and close the cache."""
        for b in self.backends.values():
            b.stop()
        if self.cache is not None:
            self.cache.close()

    def __enter__(self) -> "LLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
