"""Execute tools for real and classify every call into the EDGE outcome taxonomy.

One interface for every source kind (HTTP for OpenAPI tools, MCP)::

    async with ToolExecutor(tools, cfg, api_keys) as ex:
        result = await ex.call("list_flights", {"carrier": "DL"})
        results = await ex.call_many([(tool, args), ...])

or synchronously ``run_calls(tools, [(tool, args), ...], cfg)``.

Behaviour
---------
- Concurrency is bounded per platform (``cfg.concurrency_per_platform``).
- Retries (up to ``cfg.max_retries``) with exponential backoff
  (``cfg.backoff_base_s * 2**n``, capped at ``cfg.max_backoff_s``) on 429,
  500/502/504, read/write timeouts and dropped connections; a ``Retry-After``
  header (seconds or HTTP date) replaces the computed delay, honoured up to
  ``cfg.max_retry_after_s``; a tool asking for longer is unavailable for the rest
  of the executor session (its later calls are answered without a request).
  503, 4xx and refused connections are not retried.
- Circuit breaker per tool: after ``cfg.breaker_threshold`` consecutive server
  errors/timeouts the tool's further calls are endpoint_unavailable without a
  request.  `call_counts` reports, per tool, calls, real requests and calls
  answered without one (``short_circuited``), for the stages' metadata.
- Hostile bodies: a body over ``cfg.max_response_bytes`` (the transports stop
  reading at the cap) or nested deeper than `MAX_JSON_DEPTH` is schema_mismatch
  (a structural failure of that tool), never an exception.  What a result keeps
  is bounded by ``cfg.max_stored_bytes`` (long strings cut, records dropped,
  ``truncated`` set); ``body_digest`` is the sha256 of the whole parsed body.
- API keys: a tool whose ``generic_params.key`` is set gets its platform's key
  injected (query/header/body per ``key_in``) unless the caller passed one
  (the ``<KEY>`` placeholder counts as "not passed").  Keys come from
  ``api_keys`` or are acquired once per platform and executor by calling the
  platform's key-acquisition tool (lazily, under a lock).  A bearer/basic security scheme's key
  (``generic_params.key_scheme``) is the Authorization header's credential (the HTTP transport
  sends ``Bearer <key>`` / ``Basic base64(<key>)``; the base64 form is a secret too).  Without a
  key, a tool that requires a bearer/basic credential is not sent (auth_error), and an auth error of
  a call sent without its key says which environment variable to set (the source's ``api_key_env``).
- Episodes (`episode`, `in_episode`, `call_many(..., episodes=True)`): calls made inside one
  (in its task and the tasks it starts) see the platform's shared session until the episode's
  first state-changing call on that platform; that call and every later call of the episode on
  the platform use a fresh key of the episode's own (a new session, starting from the service's
  initial state). Concurrent episodes therefore never see each other's state changes, and the
  shared session never changes: stateful exploration (probes, graph paths) is reproducible
  whatever the interleaving. Outside an episode, calls use the shared session as before.
- Secrets never leave the executor: every known key string is replaced by
  ``<KEY>`` in args, detail, records and body; the key parameter itself is
  always shown as ``<KEY>``.  URLs are never logged.
- Key-like values (``key_patterns``, the project's ``exports.secret_patterns`` when built by
  `executor_factory`) that a tool returns in its data are replaced by ``<REDACTED>`` where they
  enter, per value; `CallResult.key_like_redacted` counts them (the export's key scan stays the
  last line of defence, but no longer meets values that were already redacted here).

Transports
----------
The wire work is a `Transport` per source kind (`factory.tools.transports.TRANSPORTS`:
``openapi`` → `HttpTransport`, ``mcp`` → `McpTransport`): it prepares and sends one attempt
and says whether the failure is transient.  Everything else is here, shared by all kinds:
keys, redaction, retries and backoff, concurrency, the interpretation of a body, the result.

Classification (see `classify_http_error` and `_finish`)
--------------------------------------------------------
connection refused / unreachable / connect timeout, 503, 405, 410, 404 for an
unknown route (FastAPI's ``{"detail": "Not Found"}`` or a non-JSON 404) →
endpoint_unavailable; 404 with any other detail (a path value that names
nothing) → schema_mismatch; read timeout → timeout; 429 → rate_limit;
401/403 → auth_error; other 5xx → server_error; 400/422 whose body reports a
missing parameter (FastAPI detail type ``missing``, or "required"/"missing" in
the message) → missing_field, other 400/422 → schema_mismatch; other 4xx →
uncategorized.  A 2xx body that is not JSON → uncategorized.  A 2xx body that is wholly an
error envelope (``{"error": ...}``, ``{"errors": [...]}``, ``{"success": false}``,
``{"status": "error"}``; `factory.tools.outcomes.error_envelope`) is classified by its message,
the rule in the detail.  Envelope codes in
a 2xx body: ok codes → success, no-data codes → success with 0 records,
20/30/31/32 → auth_error, 10 → schema_mismatch, 11 → missing_field,
22 → rate_limit, others → uncategorized.

A 2xx body without the records path: when the path's container exists but is
empty (data.go.kr sends ``"items": ""`` for zero rows), when the envelope said
ok/no-data, or when the total count is 0 → success with 0 records; otherwise
the response does not have the declared shape → missing_field (the field the
downstream binding needs is absent).

A successful call is semantic_success when at least one non-generic argument
carried a non-empty value, else generic_only_success.  A missing required path
parameter cannot be sent: it is classified missing_field locally (attempts=0).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from factory.config import ExecutorConfig, SourceConfig
from factory.redaction import register_secret
from factory.tools.bounds import MAX_JSON_DEPTH, json_depth_exceeds, too_deep
from factory.tools.fingerprint import sha256_digest
from factory.tools.mcp import run_sync
from factory.tools.outcomes import CallResult, Outcome, content_detail, error_envelope
from factory.tools.schema import dig, non_null_schema
from factory.tools.spec import ToolSpec
from factory.tools.transports import TRANSPORTS, Exchange, NotSent, Transport, TransportOptions
from factory.tools.transports.base import nonempty as _nonempty
from factory.tools.transports.base import short as _short
from factory.tools.transports.http import authorization_value, classify_http_error
from factory.tools.transports.recorded import Recordings, RecordingTransport, recorded

__all__ = ["KEY_PLACEHOLDER", "CallSpec", "ToolExecutor", "classify_http_error", "run_calls", "run_many"]

logger = logging.getLogger(__name__)

KEY_PLACEHOLDER = "<KEY>"
KEY_LIKE_PLACEHOLDER = "<REDACTED>"
MIN_SUBSTRING_SECRET_LEN = 6
ENVELOPE_AUTH_CODES = frozenset({"20", "30", "31", "32"})
ENVELOPE_CODE_OUTCOMES: dict[str, Outcome] = {
    "10": Outcome.SCHEMA_MISMATCH,
    "11": Outcome.MISSING_FIELD,
    "22": Outcome.RATE_LIMIT,
    **dict.fromkeys(ENVELOPE_AUTH_CODES, Outcome.AUTH_ERROR),
}

CallSpec = tuple["ToolSpec | str", Mapping[str, Any] | None]
BREAKER_OUTCOMES = frozenset({Outcome.SERVER_ERROR, Outcome.TIMEOUT})
STORED_STRING_MIN = 200  # the shortest cut of a long string when a result is bounded


@dataclass
class _ToolState:
    """Per tool and executor session: request counts and why the tool is off (None while it is on)."""

    calls: int = 0
    requests: int = 0
    short_circuited: int = 0
    consecutive_failures: int = 0
    unavailable: str | None = None


class _KeyUnavailable(Exception):
    pass


@dataclass
class _Episode:
    """The private sessions of one episode: platform → key, opened at its first state change there."""

    keys: dict[str, str] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


T = TypeVar("T")


def _to_int(v: Any) -> int | None:
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return None


class ToolExecutor:
    """Executes ToolSpecs (HTTP or MCP) with retries, key handling, redaction and classification."""

    def __init__(
        self,
        tools: Iterable[ToolSpec],
        cfg: ExecutorConfig | None = None,
        api_keys: Mapping[str, str] | None = None,
        *,
        sources: Iterable[SourceConfig] = (),
        http_client: httpx.AsyncClient | None = None,
        workdir: str | os.PathLike | None = None,
        refuse: Mapping[str, str] | None = None,
        key_patterns: Iterable[str] = (),
        recordings: Recordings | None = None,
    ) -> None:
        self.cfg = cfg or ExecutorConfig()
        self._refuse = dict(refuse or {})  # qualified name → why it is never sent (factory.tools.safety)
        self._key_patterns = [re.compile(p) for p in key_patterns]
        self.tools: dict[str, ToolSpec] = {}
        for t in tools:
            self.tools.setdefault(t.name, t)
            self.tools[t.qualified_name] = t
        self._keys: dict[str, str] = {p: k for p, k in (api_keys or {}).items() if k}
        self._secrets: set[str] = set(self._keys.values())
        sources = tuple(sources)
        self._key_envs = {s.platform: s.api_key_env for s in sources if s.platform and s.api_key_env}
        for key in self._secrets:
            register_secret(key)  # log lines never show it (factory.redaction)
        self._key_locks: dict[str, asyncio.Lock] = {}
        self._episode: ContextVar[_Episode | None] = ContextVar(f"tool-episode-{id(self)}", default=None)
        self._sems: dict[str, asyncio.Semaphore] = {}
        self._states: dict[str, _ToolState] = {}
        options = TransportOptions(
            self.cfg, sources, http_client, str(workdir) if workdir is not None else None, self._episode.get
        )
        self._transports: dict[str, Transport] = {kind: cls(options) for kind, cls in TRANSPORTS.items()}
        if recordings is not None and any(recorded(t) for t in self.tools.values()):  # responses: record
            self._transports = {k: RecordingTransport(t, recordings) for k, t in self._transports.items()}
        self._open = False

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> ToolExecutor:
        for transport in self._transports.values():
            await transport.open()
        self._open = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._open = False
        for transport in reversed(self._transports.values()):
            await transport.close()

    # ------------------------------------------------------------------ public API

    def tool(self, tool_or_name: ToolSpec | str) -> ToolSpec:
        """The ToolSpec for a spec or a (qualified) name; KeyError naming the tool when unknown."""
        if isinstance(tool_or_name, ToolSpec):
            return tool_or_name
        try:
            return self.tools[tool_or_name]
        except KeyError:
            raise KeyError(f"unknown tool {tool_or_name!r}; this executor knows {len(self.tools)} names") from None

    async def call(self, tool_or_name: ToolSpec | str, args: Mapping[str, Any] | None = None) -> CallResult:
        """Execute one call and classify it.  Never raises for remote failures."""
        tool = self.tool(tool_or_name)
        t0 = time.monotonic()
        caller_args = dict(args or {})
        if tool.qualified_name in self._refuse:  # a destructive tool the project did not opt into: never sent
            refused = Exchange(
                outcome=Outcome.ENDPOINT_UNAVAILABLE, detail=self._refuse[tool.qualified_name], attempts=0
            )
            return self._finish(tool, caller_args, dict(caller_args), refused, t0)
        sent = dict(caller_args)
        key_param = tool.generic_params.key
        no_key = False  # the tool takes a key and none was sent: an auth error says how to give one
        if key_param and tool.key_acquisition is None:
            given = sent.get(key_param)
            if given in (None, "", KEY_PLACEHOLDER):
                try:
                    key = await self._key_for(tool)
                except _KeyUnavailable as e:
                    ex = Exchange(outcome=Outcome.AUTH_ERROR, detail=f"could not acquire an API key: {e}", attempts=0)
                    return self._finish(tool, caller_args, sent, ex, t0)
                if key is not None:
                    sent[key_param] = key
                    self._add_auth_secret(tool, key)
                else:
                    sent.pop(key_param, None)
                    no_key = True
                    if tool.generic_params.key_scheme and key_param in tool.required_params:
                        ex = Exchange(outcome=Outcome.AUTH_ERROR, detail=self._key_hint(tool), attempts=0)
                        return self._finish(tool, caller_args, sent, ex, t0)
            else:
                self._add_secret(str(given))
                self._add_auth_secret(tool, str(given))
        self._fill_format_params(tool, sent)
        if not self._open:
            raise RuntimeError("ToolExecutor must be used as `async with ToolExecutor(...) as ex`")
        async with self._sem(tool.platform):
            ex = await self._execute(tool, sent)
        if no_key and ex.outcome is Outcome.AUTH_ERROR:
            ex.detail = f"{self._key_hint(tool)} ({ex.detail})"
        if tool.key_acquisition is not None and ex.outcome is None:
            key = dig(ex.body, tool.key_acquisition.output_field)
            if _nonempty(key) and isinstance(key, str | int):
                self._add_secret(str(key))
                episode = self._episode.get()
                if episode is not None:  # a key asked for inside an episode opens the episode's own session
                    episode.keys[tool.platform] = str(key)
                else:
                    self._keys.setdefault(tool.platform, str(key))
        return self._finish(tool, caller_args, sent, ex, t0)

    async def call_many(self, calls: Sequence[CallSpec], *, episodes: bool = False) -> list[CallResult]:
        """Execute calls concurrently (bounded per platform); results in input order. With `episodes`,
        every call is an episode of its own (a state-changing one runs in a fresh session)."""
        if episodes:
            return list(await asyncio.gather(*(self.in_episode(self.call(t, a)) for t, a in calls)))
        return list(await asyncio.gather(*(self.call(t, a) for t, a in calls)))

    @contextmanager
    def episode(self) -> Iterator[None]:
        """Calls made inside the block (and in the tasks started inside it) form one episode: from its
        first state-changing call on a platform on, they use a session of their own there (see module doc)."""
        token = self._episode.set(_Episode())
        try:
            yield
        finally:
            self._episode.reset(token)

    async def in_episode(self, aw: Awaitable[T]) -> T:
        """Await `aw` as one episode (wrap each of concurrent jobs: `gather(ex.in_episode(job) ...)`)."""
        with self.episode():
            episode = self._episode.get()
            try:
                return await aw
            finally:
                for transport in self._transports.values():  # e.g. the episode's own MCP servers
                    await transport.end_scope(episode)

    def redact(self, obj: Any) -> Any:
        """Replace every known secret in `obj` (strings, nested containers) by ``<KEY>``."""
        long_secrets = sorted((s for s in self._secrets if len(s) >= MIN_SUBSTRING_SECRET_LEN), key=len, reverse=True)
        return _redact(obj, self._secrets, long_secrets)

    def _redact_key_like(self, obj: Any, found: list[int]) -> Any:
        """`obj` with every match of the key patterns replaced by ``<REDACTED>``; adds the count to found[0]."""
        if not self._key_patterns:
            return obj
        if isinstance(obj, str):
            for p in self._key_patterns:
                obj, n = p.subn(KEY_LIKE_PLACEHOLDER, obj)
                found[0] += n
            return obj
        if isinstance(obj, dict):
            return {self._redact_key_like(k, found): self._redact_key_like(v, found) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self._redact_key_like(v, found) for v in obj]
        return obj

    def call_counts(self) -> dict[str, dict[str, int]]:
        """Per called tool (qualified name): ``calls``, real ``requests`` sent, calls ``short_circuited``."""
        return {
            name: {"calls": st.calls, "requests": st.requests, "short_circuited": st.short_circuited}
            for name, st in sorted(self._states.items())
        }

    def unavailable_tools(self) -> dict[str, str]:
        """Tools switched off for this session (Retry-After beyond the ceiling, open breaker) and why."""
        return {name: st.unavailable for name, st in sorted(self._states.items()) if st.unavailable}

    def known_secrets(self) -> list[str]:
        """Every key this executor was given or handed out (for leak checks; never log these)."""
        return sorted(self._secrets)

    # ------------------------------------------------------------------ keys

    def _add_secret(self, value: str) -> None:
        if value and value != KEY_PLACEHOLDER:
            self._secrets.add(value)
            register_secret(value)

    def _add_auth_secret(self, tool: ToolSpec, key: str) -> None:
        """The credential as the Authorization header carries it (a basic key's base64) is a secret too."""
        scheme = tool.generic_params.key_scheme
        if scheme is not None and key != KEY_PLACEHOLDER:
            self._add_secret(authorization_value(scheme, key).split(" ", 1)[1])

    def _key_hint(self, tool: ToolSpec) -> str:
        """What to set so that `tool` gets its platform's key (for a call sent without one)."""
        what = {"bearer": "bearer token", "basic": "user:password for HTTP basic auth"}.get(
            tool.generic_params.key_scheme or "", "API key"
        )
        env = self._key_envs.get(tool.platform)
        if env:
            return (
                f"no {what} for platform {tool.platform}: set the environment variable {env} (its source's api_key_env)"
            )
        return (
            f"no {what} for platform {tool.platform}: name an environment variable in its source's api_key_env"
            f" (with platform: {tool.platform}) and set it"
        )

    async def _key_for(self, tool: ToolSpec) -> str | None:
        """The key of the session a call goes to: its episode's own one on a platform where the episode
        changed state (opened by its first state-changing call there), else the shared one."""
        episode = self._episode.get()
        if episode is None:
            return await self._platform_key(tool.platform)
        if tool.platform in episode.keys:
            return episode.keys[tool.platform]
        if not tool.state_changing:
            return await self._platform_key(tool.platform)
        async with episode.lock:
            if tool.platform not in episode.keys:
                acq = self._key_tool(tool.platform)
                if acq is None:  # a platform without keys has one session only
                    return await self._platform_key(tool.platform)
                res = await self.call(acq, {})  # inside the episode: the key becomes the episode's
                if tool.platform not in episode.keys:
                    raise _KeyUnavailable(f"{acq.name} answered {res.outcome.value}: {res.detail}")
                logger.info("opened an episode session on platform %s with %s", tool.platform, acq.name)
            return episode.keys[tool.platform]

    def _key_tool(self, platform: str) -> ToolSpec | None:
        return next((t for t in self.tools.values() if t.platform == platform and t.key_acquisition is not None), None)

    async def _platform_key(self, platform: str) -> str | None:
        if platform in self._keys:
            return self._keys[platform]
        lock = self._key_locks.setdefault(platform, asyncio.Lock())
        async with lock:
            if platform in self._keys:
                return self._keys[platform]
            acq = self._key_tool(platform)
            if acq is None:
                return None
            token = self._episode.set(None)  # the shared key, even when an episode asks for it first
            try:
                res = await self.call(acq, {})
            finally:
                self._episode.reset(token)
            if platform in self._keys:
                logger.info("acquired an API key for platform %s with %s", platform, acq.name)
                return self._keys[platform]
            raise _KeyUnavailable(f"{acq.name} answered {res.outcome.value}: {res.detail}")

    def _fill_format_params(self, tool: ToolSpec, sent: dict[str, Any]) -> None:
        """A missing response-format parameter that offers 'json' is set to it (e.g. _type=json)."""
        for name in tool.generic_params.format:
            if name in sent or name not in tool.params:
                continue
            schema = non_null_schema(tool.params[name])
            for v in schema.get("enum") or []:
                if str(v).lower() == "json":
                    sent[name] = v
                    break

    def _sem(self, platform: str) -> asyncio.Semaphore:
        sem = self._sems.get(platform)
        if sem is None:
            n = self.cfg.platform_concurrency.get(platform, self.cfg.concurrency_per_platform)
            sem = self._sems[platform] = asyncio.Semaphore(n)
        return sem

    def _backoff(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(retry_after, self.cfg.max_retry_after_s)
        return min(self.cfg.backoff_base_s * (2 ** (attempt - 1)), self.cfg.max_backoff_s)

    # ------------------------------------------------------------------ execution

    def _transport(self, tool: ToolSpec) -> Transport:
        try:
            return self._transports[tool.source.kind]
        except KeyError:
            raise KeyError(f"{tool.qualified_name}: no transport for source kind {tool.source.kind!r}") from None

    async def _execute(self, tool: ToolSpec, sent: dict[str, Any]) -> Exchange:
        """Send a call with its kind's transport, retrying transient failures with backoff."""
        transport = self._transport(tool)
        state = self._states.setdefault(tool.qualified_name, _ToolState())
        state.calls += 1
        if state.unavailable:
            state.short_circuited += 1
            return Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=state.unavailable, attempts=0)
        try:
            prepared = await transport.prepare(tool, sent)
        except NotSent as e:
            return Exchange(e.outcome, detail=e.detail, attempts=0)
        last = Exchange()
        attempts = 0
        for attempt in range(1, self.cfg.max_retries + 2):
            if state.unavailable and attempt > 1:  # switched off meanwhile (a concurrent call of the tool)
                break
            attempts = attempt
            state.requests += 1
            last = await transport.send(tool, prepared)
            last = self._checked(last)
            self._track(tool, state, last)
            if not last.retry or state.unavailable:
                last.attempts = attempt
                return last
            if attempt <= self.cfg.max_retries:
                delay = self._backoff(attempt, last.retry_after)
                logger.debug("%s: %s, retry %d in %.2fs", tool.qualified_name, last.outcome, attempt, delay)
                await asyncio.sleep(delay)
        last.attempts = attempts
        return last

    def _checked(self, ex: Exchange) -> Exchange:
        """A body nested deeper than `MAX_JSON_DEPTH` is a structural failure (nothing downstream recurses into it)."""
        if ex.outcome is None and json_depth_exceeds(ex.body, MAX_JSON_DEPTH):
            return Exchange(
                Outcome.SCHEMA_MISMATCH,
                ex.status_code,
                detail=too_deep(),
            )
        return ex

    def _track(self, tool: ToolSpec, state: _ToolState, ex: Exchange) -> None:
        """Breaker and Retry-After bookkeeping after one real request."""
        if ex.outcome in BREAKER_OUTCOMES:
            state.consecutive_failures += 1
            if state.consecutive_failures >= self.cfg.breaker_threshold and not state.unavailable:
                state.unavailable = (
                    f"circuit open: {state.consecutive_failures} consecutive server errors/timeouts"
                    " (no more calls this run)"
                )
                logger.warning("%s: %s", tool.qualified_name, state.unavailable)
        elif ex.outcome is not Outcome.RATE_LIMIT:
            state.consecutive_failures = 0
        ceiling = self.cfg.max_retry_after_s
        if ex.retry and ex.retry_after is not None and ex.retry_after > ceiling:
            state.unavailable = (
                f"asked to retry after {ex.retry_after:.0f}s, more than executor.max_retry_after_s={ceiling:g}s"
                " (no more calls this run)"
            )
            ex.detail = f"{ex.detail}; {state.unavailable}"
            logger.warning("%s: %s", tool.qualified_name, state.unavailable)

    # ------------------------------------------------------------------ results

    def _finish(
        self, tool: ToolSpec, caller_args: dict[str, Any], sent: dict[str, Any], ex: Exchange, t0: float
    ) -> CallResult:
        key_param = tool.generic_params.key
        shown_args = {k: (KEY_PLACEHOLDER if k == key_param and tool.key_acquisition is None else v)
                      for k, v in sent.items()}  # fmt: skip
        shown_args = self.redact(shown_args)
        outcome = ex.outcome
        detail = ex.detail
        records: list[dict[str, Any]] = []
        record_count = 0
        total: int | None = None
        body = ex.body
        if outcome is None:
            outcome, detail, records, total = self._interpret_success(tool, caller_args, body, ex.status_code)
            record_count = len(records)
        kept = self.cfg.max_records_kept
        shown_body = None
        if body is not None and (tool.records_path is None or not outcome.is_success):
            shown_body = body[:kept] if isinstance(body, list) else body
        kept_records, shown_body, truncated = _bounded(
            self.redact(records[:kept]), self.redact(shown_body), self.cfg.max_stored_bytes
        )
        found = [0]
        shown_args = self._redact_key_like(shown_args, found)
        kept_records = self._redact_key_like(kept_records, found)
        detail = self._redact_key_like(str(self.redact(detail)), found)
        in_body = [0]  # the body repeats the records when the tool has no records path: count it once
        shown_body = self._redact_key_like(shown_body, in_body)
        found[0] += 0 if kept_records else in_body[0]
        if found[0]:
            logger.info("%s: %d key-like value(s) redacted", tool.qualified_name, found[0])
        result = CallResult(
            domain=tool.domain,
            platform=tool.platform,
            tool=tool.name,
            args=shown_args,
            outcome=outcome,
            status_code=ex.status_code,
            detail=_short(detail),
            records=kept_records,
            record_count=record_count,
            total_count=total,
            body=shown_body,
            body_digest=sha256_digest(self.redact(body)) if body is not None else "",
            truncated=truncated,
            attempts=ex.attempts,
            elapsed_ms=round((time.monotonic() - t0) * 1000.0, 1),
            call_digest=sha256_digest([tool.platform, tool.name, shown_args]),
            key_like_redacted=found[0],
        )
        logger.debug("%s → %s (%d attempts, %d records)", tool.qualified_name, outcome.value, ex.attempts, record_count)
        return result

    def _interpret_success(
        self, tool: ToolSpec, caller_args: dict[str, Any], body: Any, status: int | None
    ) -> tuple[Outcome, str, list[dict[str, Any]], int | None]:
        """Outcome, detail, records and total count of a 2xx / non-error MCP body."""
        total = _to_int(dig(body, tool.total_count_path)) if tool.total_count_path else None
        failed = error_envelope(body) if tool.envelope is None else None  # a 200 whose whole body is an error
        if failed is not None:
            outcome, rule, message = failed
            prefix = f"HTTP {status}: " if status is not None else ""
            return outcome, prefix + content_detail(rule, message), [], total
        envelope_ok = False
        if tool.envelope is not None and isinstance(body, dict):
            code = dig(body, tool.envelope.code_path)
            if code is not None:
                code_s = str(code).strip()
                msg = dig(body, tool.envelope.message_path) if tool.envelope.message_path else None
                label = f"result code {code_s}" + (f" ({msg})" if msg else "")
                if code_s in tool.envelope.no_data_codes:
                    return self._success(tool, caller_args), f"{label}: no data", [], total or 0
                if code_s not in tool.envelope.ok_codes:
                    return ENVELOPE_CODE_OUTCOMES.get(code_s, Outcome.UNCATEGORIZED), label, [], total
                envelope_ok = True
        if tool.records_path:
            value = dig(body, tool.records_path)
            if value is None or value == "":
                parent = tool.records_path.rsplit(".", 1)[0] if "." in tool.records_path else None
                present_but_empty = _path_prefix_exists(body, tool.records_path) or (
                    parent is not None and dig(body, parent) in ("", None, {}, []) and _path_prefix_exists(body, parent)
                )
                if envelope_ok or total == 0 or present_but_empty:
                    return self._success(tool, caller_args), "no records", [], total if total is not None else 0
                return Outcome.MISSING_FIELD, f"response lacks the records path {tool.records_path!r}", [], total
            records = _as_records(value)
        else:
            records = _as_records(body) if body is not None else []
        detail = f"{len(records)} record(s)" + (f" of {total}" if total is not None else "")
        if status is not None:
            detail = f"HTTP {status}: {detail}"
        return self._success(tool, caller_args), detail, records, total

    def _success(self, tool: ToolSpec, caller_args: Mapping[str, Any]) -> Outcome:
        generic = tool.generic_params.names()
        semantic = any(k not in generic and _nonempty(v) for k, v in caller_args.items())
        return Outcome.SEMANTIC_SUCCESS if semantic else Outcome.GENERIC_ONLY_SUCCESS


def _path_prefix_exists(body: Any, path: str) -> bool:
    """Whether the dotted path's last key exists in its parent (even with an empty value)."""
    if "." in path:
        parent_path, last = path.rsplit(".", 1)
        parent = dig(body, parent_path)
    else:
        parent, last = body, path
    return isinstance(parent, dict) and last in parent


def _size(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, default=str))


def _cut_strings(obj: Any, limit: int) -> Any:
    """`obj` with every string longer than `limit` cut to a prefix ending in an ellipsis."""
    if isinstance(obj, str):
        return obj if len(obj) <= limit else obj[: limit - 1] + "…"
    if isinstance(obj, dict):
        return {k: _cut_strings(v, limit) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_cut_strings(v, limit) for v in obj]
    return obj


def _bounded(records: list[dict[str, Any]], body: Any, max_bytes: int) -> tuple[list[dict[str, Any]], Any, bool]:
    """Records and body whose serialized size stays within about `max_bytes` (a bounded sample of them).

    Within the bound nothing changes.  Otherwise long strings are cut (to an equal share of the
    bound, at least `STORED_STRING_MIN` characters), then records beyond the bound are dropped
    and a body still too large is replaced by ``{"truncated": true, "bytes": n, "sample": text}``.
    """
    if _size(records) + _size(body) <= max_bytes:
        return records, body, False
    share = max(STORED_STRING_MIN, max_bytes // (2 * (len(records) + 1)))
    cut = [_cut_strings(r, share) for r in records]
    kept: list[dict[str, Any]] = []
    used = 0
    for r in cut:
        n = _size(r)
        if kept and used + n > max_bytes // 2:
            break
        kept.append(r)
        used += n
    if body is not None:
        full = _size(body)
        body = _cut_strings(body, share)
        text = json.dumps(body, ensure_ascii=False, default=str)
        if len(text) > max_bytes // 2:
            body = {"truncated": True, "bytes": full, "sample": text[: max_bytes // 4]}
    return kept, body, True


def _as_records(value: Any) -> list[dict[str, Any]]:
    """A list → its items (non-objects wrapped as {"value": x}); an object → one record; a scalar → one."""
    if isinstance(value, list):
        return [v if isinstance(v, dict) else {"value": v} for v in value]
    if isinstance(value, dict):
        return [value]
    return [{"value": value}]


def _redact(obj: Any, exact: set[str], long_secrets: list[str]) -> Any:
    if isinstance(obj, str):
        if obj in exact:
            return KEY_PLACEHOLDER
        for s in long_secrets:
            if s in obj:
                obj = obj.replace(s, KEY_PLACEHOLDER)
        return obj
    if isinstance(obj, dict):
        return {_redact(k, exact, long_secrets): _redact(v, exact, long_secrets) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_redact(v, exact, long_secrets) for v in obj]
    if isinstance(obj, int | float) and not isinstance(obj, bool) and str(obj) in exact:
        return KEY_PLACEHOLDER
    return obj


def run_calls(
    tools: Iterable[ToolSpec],
    calls: Sequence[CallSpec],
    cfg: ExecutorConfig | None = None,
    api_keys: Mapping[str, str] | None = None,
    *,
    sources: Iterable[SourceConfig] = (),
) -> list[CallResult]:
    """Synchronous helper: open an executor, run `calls` concurrently, close it."""
    tool_list = list(tools)
    source_list = list(sources)
    return run_many(lambda: ToolExecutor(tool_list, cfg, api_keys, sources=source_list), calls)


def run_many(make_executor: Callable[[], ToolExecutor], calls: Sequence[CallSpec]) -> list[CallResult]:
    """Synchronous helper: open the executor `make_executor` builds, run `calls` concurrently, close it."""

    async def go() -> list[CallResult]:
        async with make_executor() as ex:
            return await ex.call_many(calls)

    return run_sync(go())
