"""Execute tools for real and classify every call into the EDGE outcome taxonomy.

One interface for HTTP (OpenAPI) and MCP tools::

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
  header (seconds or HTTP date) replaces the computed delay, capped too.
  503, 4xx and refused connections are not retried.
- API keys: a tool whose ``generic_params.key`` is set gets its platform's key
  injected (query/header/body per ``key_in``) unless the caller passed one
  (the ``<KEY>`` placeholder counts as "not passed").  Keys come from
  ``api_keys`` or are acquired once per platform and executor by calling the
  platform's key-acquisition tool (lazily, under a lock).
- Secrets never leave the executor: every known key string is replaced by
  ``<KEY>`` in args, detail, records and body; the key parameter itself is
  always shown as ``<KEY>``.  URLs are never logged.

Classification (see `classify_http_error` and `_finish`)
--------------------------------------------------------
connection refused / unreachable / connect timeout, 503, 405, 410, 404 for an
unknown route (FastAPI's ``{"detail": "Not Found"}`` or a non-JSON 404) →
endpoint_unavailable; 404 with any other detail (a path value that names
nothing) → schema_mismatch; read timeout → timeout; 429 → rate_limit;
401/403 → auth_error; other 5xx → server_error; 400/422 whose body reports a
missing parameter (FastAPI detail type ``missing``, or "required"/"missing" in
the message) → missing_field, other 400/422 → schema_mismatch; other 4xx →
uncategorized.  A 2xx body that is not JSON → uncategorized.  Envelope codes in
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
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote

import httpx

from factory.config import ExecutorConfig, SourceConfig
from factory.tools.fingerprint import sha256_digest
from factory.tools.mcp import MCPSession, classify_error_text, flatten_exception, interpret_result, run_sync
from factory.tools.openapi import CONTENT_TYPE_KEY, RAW_BODY_FLAG, dig, non_null_schema
from factory.tools.outcomes import CallResult, Outcome
from factory.tools.sources import SourceError, mcp_locator
from factory.tools.spec import ToolSpec

logger = logging.getLogger(__name__)

KEY_PLACEHOLDER = "<KEY>"
MIN_SUBSTRING_SECRET_LEN = 6
RETRY_STATUSES = frozenset({429, 500, 502, 504})
UNAVAILABLE_STATUSES = frozenset({405, 410, 501, 503})
ENVELOPE_AUTH_CODES = frozenset({"20", "30", "31", "32"})
ENVELOPE_CODE_OUTCOMES: dict[str, Outcome] = {
    "10": Outcome.SCHEMA_MISMATCH,
    "11": Outcome.MISSING_FIELD,
    "22": Outcome.RATE_LIMIT,
    **dict.fromkeys(ENVELOPE_AUTH_CODES, Outcome.AUTH_ERROR),
}
DETAIL_MAX = 300

CallSpec = tuple["ToolSpec | str", Mapping[str, Any] | None]


@dataclass
class _Exchange:
    """What came back from one (possibly retried) execution, before extraction and redaction."""

    outcome: Outcome | None = None  # set for failures; None means "a body to interpret"
    status_code: int | None = None
    body: Any = None
    detail: str = ""
    attempts: int = 1


class _KeyUnavailable(Exception):
    pass


def _nonempty(v: Any) -> bool:
    return v is not None and v != "" and v != [] and v != {}


def _short(text: str, limit: int = DETAIL_MAX) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _to_int(v: Any) -> int | None:
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return None


def _retry_after_s(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _query_value(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return [_query_value(x) for x in v]
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False)
    return v


def classify_http_error(status: int, parsed: Any, text: str) -> tuple[Outcome, str]:
    """Outcome and short reason of a non-2xx HTTP response."""
    detail = parsed.get("detail") if isinstance(parsed, dict) else None
    reason = _short(json.dumps(detail, ensure_ascii=False) if detail is not None else text or f"HTTP {status}")
    if status == 429:
        return Outcome.RATE_LIMIT, f"HTTP 429: {reason}"
    if status in (401, 403):
        return Outcome.AUTH_ERROR, f"HTTP {status}: {reason}"
    if status in UNAVAILABLE_STATUSES:
        return Outcome.ENDPOINT_UNAVAILABLE, f"HTTP {status}: {reason}"
    if status == 404:
        if parsed is None or detail == "Not Found" or not isinstance(parsed, dict):
            return Outcome.ENDPOINT_UNAVAILABLE, f"HTTP 404 (no such endpoint): {reason}"
        return Outcome.SCHEMA_MISMATCH, f"HTTP 404 (value names nothing): {reason}"
    if status >= 500:
        return Outcome.SERVER_ERROR, f"HTTP {status}: {reason}"
    if status in (400, 422):
        if _reports_missing(detail if detail is not None else parsed if parsed is not None else text):
            return Outcome.MISSING_FIELD, f"HTTP {status}: {reason}"
        return Outcome.SCHEMA_MISMATCH, f"HTTP {status}: {reason}"
    return Outcome.UNCATEGORIZED, f"HTTP {status}: {reason}"


def _reports_missing(detail: Any) -> bool:
    """FastAPI/pydantic ``type: missing`` items, or a message saying a parameter is required/missing."""
    if isinstance(detail, list):
        return any(
            isinstance(d, dict) and str(d.get("type", "")) in ("missing", "value_error.missing") for d in detail
        ) or any(isinstance(d, str) and _reports_missing(d) for d in detail)
    if isinstance(detail, dict):
        if str(detail.get("type", "")) in ("missing", "value_error.missing"):
            return True
        return any(_reports_missing(v) for k, v in detail.items() if k in ("detail", "message", "msg", "error"))
    if isinstance(detail, str):
        low = detail.lower()
        return "missing" in low or "required" in low
    return False


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
    ) -> None:
        self.cfg = cfg or ExecutorConfig()
        self.tools: dict[str, ToolSpec] = {}
        for t in tools:
            self.tools.setdefault(t.name, t)
            self.tools[t.qualified_name] = t
        self._keys: dict[str, str] = {p: k for p, k in (api_keys or {}).items() if k}
        self._secrets: set[str] = set(self._keys.values())
        self._key_locks: dict[str, asyncio.Lock] = {}
        self._sems: dict[str, asyncio.Semaphore] = {}
        self._mcp_sources = {mcp_locator(s): s for s in sources if s.kind == "mcp"}
        self._mcp: dict[str, MCPSession] = {}
        self._mcp_errors: dict[str, str] = {}
        self._mcp_lock: asyncio.Lock | None = None
        self._client = http_client
        self._own_client = http_client is None

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> ToolExecutor:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.cfg.timeout_s, follow_redirects=True)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        sessions, self._mcp = list(self._mcp.values()), {}
        for s in sessions:
            await s.close()
        if self._client is not None and self._own_client:
            await self._client.aclose()
            self._client = None

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
        sent = dict(caller_args)
        key_param = tool.generic_params.key
        if key_param and tool.key_acquisition is None:
            given = sent.get(key_param)
            if given in (None, "", KEY_PLACEHOLDER):
                try:
                    key = await self._platform_key(tool.platform)
                except _KeyUnavailable as e:
                    ex = _Exchange(outcome=Outcome.AUTH_ERROR, detail=f"could not acquire an API key: {e}", attempts=0)
                    return self._finish(tool, caller_args, sent, ex, t0)
                if key is not None:
                    sent[key_param] = key
                else:
                    sent.pop(key_param, None)
            else:
                self._add_secret(str(given))
        self._fill_format_params(tool, sent)
        if self._client is None:
            raise RuntimeError("ToolExecutor must be used as `async with ToolExecutor(...) as ex`")
        async with self._sem(tool.platform):
            if tool.method == "MCP":
                ex = await self._execute_mcp(tool, sent)
            else:
                ex = await self._execute_http(tool, sent)
        if tool.key_acquisition is not None and ex.outcome is None:
            key = dig(ex.body, tool.key_acquisition.output_field)
            if _nonempty(key) and isinstance(key, str | int):
                self._add_secret(str(key))
                self._keys.setdefault(tool.platform, str(key))
        return self._finish(tool, caller_args, sent, ex, t0)

    async def call_many(self, calls: Sequence[CallSpec]) -> list[CallResult]:
        """Execute calls concurrently (bounded per platform); results in input order."""
        return list(await asyncio.gather(*(self.call(t, a) for t, a in calls)))

    def redact(self, obj: Any) -> Any:
        """Replace every known secret in `obj` (strings, nested containers) by ``<KEY>``."""
        long_secrets = sorted((s for s in self._secrets if len(s) >= MIN_SUBSTRING_SECRET_LEN), key=len, reverse=True)
        return _redact(obj, self._secrets, long_secrets)

    def known_secrets(self) -> list[str]:
        """Every key this executor was given or handed out (for leak checks; never log these)."""
        return sorted(self._secrets)

    # ------------------------------------------------------------------ keys

    def _add_secret(self, value: str) -> None:
        if value and value != KEY_PLACEHOLDER:
            self._secrets.add(value)

    async def _platform_key(self, platform: str) -> str | None:
        if platform in self._keys:
            return self._keys[platform]
        lock = self._key_locks.setdefault(platform, asyncio.Lock())
        async with lock:
            if platform in self._keys:
                return self._keys[platform]
            acq = next(
                (t for t in self.tools.values() if t.platform == platform and t.key_acquisition is not None), None
            )
            if acq is None:
                return None
            res = await self.call(acq, {})
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
            sem = self._sems[platform] = asyncio.Semaphore(self.cfg.concurrency_per_platform)
        return sem

    def _backoff(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(retry_after, self.cfg.max_backoff_s)
        return min(self.cfg.backoff_base_s * (2 ** (attempt - 1)), self.cfg.max_backoff_s)

    # ------------------------------------------------------------------ HTTP

    def _build_request(self, tool: ToolSpec, sent: dict[str, Any]) -> tuple[str, dict[str, Any]] | str:
        """``(url, httpx request kwargs)`` or an error message for a call that cannot be sent."""
        base = tool.source.base_url
        if not base:
            return "no base URL for this tool (none configured and none in the spec)"
        path = tool.path
        missing: list[str] = []
        query: dict[str, Any] = {}
        headers: dict[str, str] = {}
        body: dict[str, Any] = {}
        raw_body: Any = None
        has_raw = False
        for pname, loc in tool.param_locations.items():
            if loc == "path" and "{" + pname + "}" in path:
                v = sent.get(pname)
                if not _nonempty(v):
                    missing.append(pname)
                    continue
                path = path.replace("{" + pname + "}", quote(str(_query_value(v)), safe=""))
        if missing:
            return "missing required path parameter(s): " + ", ".join(missing)
        for pname, v in sent.items():
            if v is None:
                continue
            loc = tool.param_locations.get(pname, "query")
            if loc == "path":
                continue
            if loc == "header":
                headers[pname] = str(_query_value(v))
            elif loc == "body":
                if non_null_schema(tool.params.get(pname, {})).get(RAW_BODY_FLAG):
                    raw_body, has_raw = v, True
                else:
                    body[pname] = v
            else:
                query[pname] = _query_value(v)
        kwargs: dict[str, Any] = {"params": query, "headers": headers}
        content_type = tool.input_schema.get(CONTENT_TYPE_KEY)
        if has_raw:
            kwargs["json"] = raw_body
        elif body:
            if content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
                kwargs["data"] = {k: _query_value(v) for k, v in body.items()}
            else:
                kwargs["json"] = body
        return base.rstrip("/") + "/" + path.lstrip("/"), kwargs

    async def _execute_http(self, tool: ToolSpec, sent: dict[str, Any]) -> _Exchange:
        built = self._build_request(tool, sent)
        if isinstance(built, str):
            outcome = Outcome.MISSING_FIELD if built.startswith("missing") else Outcome.ENDPOINT_UNAVAILABLE
            return _Exchange(outcome=outcome, detail=built, attempts=0)
        url, kwargs = built
        assert self._client is not None
        attempts = 0
        last = _Exchange()
        for attempt in range(1, self.cfg.max_retries + 2):
            attempts = attempt
            retry_after: float | None = None
            try:
                resp = await self._client.request(tool.method, url, timeout=self.cfg.timeout_s, **kwargs)
            except httpx.ConnectTimeout as e:
                return _Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=f"connect timeout: {e}", attempts=attempt)
            except httpx.TimeoutException as e:
                last = _Exchange(Outcome.TIMEOUT, detail=f"no answer within {self.cfg.timeout_s}s ({type(e).__name__})")
            except httpx.ConnectError as e:
                return _Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=f"cannot connect: {e}", attempts=attempt)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
                last = _Exchange(Outcome.SERVER_ERROR, detail=f"connection dropped: {type(e).__name__}: {e}")
            except (httpx.HTTPError, httpx.InvalidURL, ValueError, TypeError) as e:
                return _Exchange(Outcome.UNCATEGORIZED, detail=f"{type(e).__name__}: {e}", attempts=attempt)
            else:
                last = self._read_response(resp)
                if resp.status_code not in RETRY_STATUSES:
                    last.attempts = attempt
                    return last
                retry_after = _retry_after_s(resp.headers.get("retry-after"))
            if attempt <= self.cfg.max_retries:
                delay = self._backoff(attempt, retry_after)
                logger.debug("%s: %s, retry %d in %.2fs", tool.qualified_name, last.outcome, attempt, delay)
                await asyncio.sleep(delay)
        last.attempts = attempts
        return last

    def _read_response(self, resp: httpx.Response) -> _Exchange:
        status = resp.status_code
        text = resp.text
        parsed: Any = None
        parse_ok = True
        if text.strip():
            try:
                parsed = resp.json()
            except ValueError:
                parse_ok = False
        if 200 <= status < 300:
            if not parse_ok:
                ctype = resp.headers.get("content-type", "?")
                return _Exchange(
                    Outcome.UNCATEGORIZED,
                    status,
                    detail=f"HTTP {status} body is not JSON ({ctype}): {_short(text, 120)}",
                )
            return _Exchange(None, status, body=parsed)
        outcome, detail = classify_http_error(status, parsed if parse_ok else None, text)
        return _Exchange(outcome, status, body=parsed if parse_ok else None, detail=detail)

    # ------------------------------------------------------------------ MCP

    async def _session(self, tool: ToolSpec) -> MCPSession:
        locator = tool.source.locator
        if locator in self._mcp:
            return self._mcp[locator]
        if locator in self._mcp_errors:
            raise SourceError(self._mcp_errors[locator])
        if self._mcp_lock is None:
            self._mcp_lock = asyncio.Lock()
        async with self._mcp_lock:
            if locator in self._mcp:
                return self._mcp[locator]
            src = self._mcp_sources.get(locator)
            session = MCPSession(
                locator,
                url=tool.source.base_url,
                env=src.env if src is not None else None,
            )
            try:
                await session.start()
            except SourceError as e:
                self._mcp_errors[locator] = str(e)
                raise
            self._mcp[locator] = session
            return session

    async def _execute_mcp(self, tool: ToolSpec, sent: dict[str, Any]) -> _Exchange:
        try:
            session = await self._session(tool)
        except SourceError as e:
            return _Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=str(e), attempts=0)
        last = _Exchange()
        attempts = 0
        for attempt in range(1, self.cfg.max_retries + 2):
            attempts = attempt
            try:
                res = await asyncio.wait_for(
                    session.call_tool(tool.name, sent, self.cfg.timeout_s), self.cfg.timeout_s + 1.0
                )
            except TimeoutError:
                last = _Exchange(Outcome.TIMEOUT, detail=f"no answer within {self.cfg.timeout_s}s")
            except Exception as e:  # noqa: BLE001 - MCPError, closed streams, ...
                text = flatten_exception(e)
                low = text.lower()
                if "timed out" in low or "timeout" in low:
                    last = _Exchange(Outcome.TIMEOUT, detail=_short(text))
                elif "connection closed" in low or "closed" in low or isinstance(e, ConnectionError):
                    return _Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=_short(text), attempts=attempt)
                else:
                    return _Exchange(classify_error_text(text), detail=_short(text), attempts=attempt)
            else:
                outcome, body, detail = interpret_result(res)
                last = _Exchange(outcome, body=body, detail=detail)
                if outcome not in (Outcome.RATE_LIMIT, Outcome.TIMEOUT):
                    last.attempts = attempt
                    return last
            if attempt <= self.cfg.max_retries:
                await asyncio.sleep(self._backoff(attempt))
        last.attempts = attempts
        return last

    # ------------------------------------------------------------------ results

    def _finish(
        self, tool: ToolSpec, caller_args: dict[str, Any], sent: dict[str, Any], ex: _Exchange, t0: float
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
        result = CallResult(
            domain=tool.domain,
            platform=tool.platform,
            tool=tool.name,
            args=shown_args,
            outcome=outcome,
            status_code=ex.status_code,
            detail=_short(str(self.redact(detail))),
            records=self.redact(records[:kept]),
            record_count=record_count,
            total_count=total,
            body=self.redact(shown_body),
            attempts=ex.attempts,
            elapsed_ms=round((time.monotonic() - t0) * 1000.0, 1),
            call_digest=sha256_digest([tool.platform, tool.name, shown_args]),
        )
        logger.debug("%s → %s (%d attempts, %d records)", tool.qualified_name, outcome.value, ex.attempts, record_count)
        return result

    def _interpret_success(
        self, tool: ToolSpec, caller_args: dict[str, Any], body: Any, status: int | None
    ) -> tuple[Outcome, str, list[dict[str, Any]], int | None]:
        """Outcome, detail, records and total count of a 2xx / non-error MCP body."""
        total = _to_int(dig(body, tool.total_count_path)) if tool.total_count_path else None
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

    async def go() -> list[CallResult]:
        async with ToolExecutor(tool_list, cfg, api_keys, sources=source_list) as ex:
            return await ex.call_many(calls)

    return run_sync(go())
