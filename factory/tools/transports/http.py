"""HTTP transport (OpenAPI / Swagger tools): build the request, send it, read the response.

Parameters go where `ToolSpec.param_locations` says (path, query, header, body); a body is
sent as JSON, as a form when the input schema's `CONTENT_TYPE_KEY` says so, or whole when a
property carries `RAW_BODY_FLAG`.  The key of a bearer/basic security scheme
(`GenericParams.key_scheme`) goes in the Authorization header as ``Bearer <key>`` or
``Basic base64(user:password)`` (`authorization_value`).  Requests ask for JSON (`ACCEPT`) unless
the call sets its own Accept header.  A missing required path parameter
or a tool without a base URL cannot be sent (`NotSent`).  Retryable: 429, 500/502/504 (with the ``Retry-After``
header, seconds or HTTP date), read/write timeouts and dropped connections; not retried:
503, other 4xx, refused connections and connect timeouts.  Non-2xx responses are classified
by `classify_http_error`.
"""

from __future__ import annotations

import base64
import functools
import json
import ssl
import time
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote

import httpx

from factory.tools.bounds import too_deep, too_large
from factory.tools.outcomes import Outcome
from factory.tools.schema import CONTENT_TYPE_KEY, FORM_CONTENT_TYPES, RAW_BODY_FLAG, non_null_schema
from factory.tools.spec import ToolSpec
from factory.tools.transports.base import Exchange, NotSent, Transport, TransportOptions, nonempty, short

ACCEPT = "application/json, */*;q=0.1"
RETRY_STATUSES = frozenset({429, 500, 502, 504})
UNAVAILABLE_STATUSES = frozenset({405, 410, 501, 503})


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default TLS context, built once per process: loading the CA bundle costs about 0.1-0.2 s, and
    synthesis opens an executor session (one client) per attempt and per re-run."""
    return httpx.create_ssl_context()


class HttpTransport(Transport):
    """Sends OpenAPI tools' calls with one `httpx.AsyncClient` (created on `open` unless injected)."""

    kind = "openapi"

    def __init__(self, options: TransportOptions) -> None:
        super().__init__(options)
        self._client = options.http_client
        self._own_client = options.http_client is None

    async def open(self) -> None:
        if self._client is None:
            pool = self.cfg.max_connections  # every connection a platform's concurrency needs stays alive
            self._client = httpx.AsyncClient(
                timeout=self.cfg.timeout_s,
                follow_redirects=True,
                verify=_tls_context(),
                limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
            )

    async def close(self) -> None:
        if self._client is not None and self._own_client:
            await self._client.aclose()
            self._client = None

    async def prepare(self, tool: ToolSpec, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        built = build_request(tool, args)
        if isinstance(built, str):
            outcome = Outcome.MISSING_FIELD if built.startswith("missing") else Outcome.ENDPOINT_UNAVAILABLE
            raise NotSent(outcome, built)
        return built

    async def send(self, tool: ToolSpec, prepared: tuple[str, dict[str, Any]]) -> Exchange:
        url, kwargs = prepared
        assert self._client is not None
        try:
            resp = await self._read(tool.method, url, kwargs)
        except _TooLarge as e:
            return Exchange(Outcome.SCHEMA_MISMATCH, e.status, detail=too_large(self.cfg.max_response_bytes))
        except httpx.ConnectTimeout as e:
            return Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=f"connect timeout: {e}")
        except httpx.TimeoutException as e:
            detail = f"no answer within {self.cfg.timeout_s}s ({type(e).__name__})"
            return Exchange(Outcome.TIMEOUT, detail=detail, retry=True)
        except httpx.ConnectError as e:
            return Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=f"cannot connect: {e}")
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
            return Exchange(Outcome.SERVER_ERROR, detail=f"connection dropped: {type(e).__name__}: {e}", retry=True)
        except (httpx.HTTPError, httpx.InvalidURL, ValueError, TypeError) as e:
            return Exchange(Outcome.UNCATEGORIZED, detail=f"{type(e).__name__}: {e}")
        ex = read_response(resp)
        if resp.status_code in RETRY_STATUSES:
            ex.retry = True
            ex.retry_after = retry_after_s(resp.headers.get("retry-after"))
        return ex

    async def _read(self, method: str, url: str, kwargs: dict[str, Any]) -> httpx.Response:
        """Send and read the body as a stream, stopping at ``max_response_bytes`` (`_TooLarge`)."""
        assert self._client is not None
        limit = self.cfg.max_response_bytes
        async with self._client.stream(method, url, timeout=self.cfg.timeout_s, **kwargs) as resp:
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit and "content-encoding" not in resp.headers:
                raise _TooLarge(resp.status_code)
            buf = bytearray()
            async for chunk in resp.aiter_bytes():  # decoded: a compressed bomb is cut too
                buf.extend(chunk)
                if len(buf) > limit:
                    raise _TooLarge(resp.status_code)
        headers = [(k, v) for k, v in resp.headers.multi_items() if k.lower() not in _DECODED_HEADERS]
        return httpx.Response(resp.status_code, headers=headers, content=bytes(buf), request=resp.request)


_DECODED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class _TooLarge(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def build_request(tool: ToolSpec, sent: dict[str, Any]) -> tuple[str, dict[str, Any]] | str:
    """``(url, httpx request kwargs)`` or an error message for a call that cannot be sent."""
    base = tool.source.base_url
    if not base:
        return (
            f"no base URL for {tool.qualified_name}: the source sets no base_url and its spec "
            f"({tool.source.locator}) names no absolute server URL; set base_url on the source"
        )
    wire = tool.param_wire_names
    path = tool.path
    auth_key, scheme = tool.generic_params.key, tool.generic_params.key_scheme
    missing: list[str] = []
    query: dict[str, Any] = {}
    headers: dict[str, str] = {}
    body: dict[str, Any] = {}
    raw_body: Any = None
    has_raw = False
    for pname, loc in tool.param_locations.items():
        slot = "{" + wire.get(pname, pname) + "}"
        if loc == "path" and slot in path:
            v = sent.get(pname)
            if not nonempty(v):
                missing.append(pname)
                continue
            path = path.replace(slot, quote(str(query_value(v)), safe=""))
    if missing:
        return "missing required path parameter(s): " + ", ".join(missing)
    for pname, v in sent.items():
        if v is None:
            continue
        loc = tool.param_locations.get(pname, "query")
        if loc == "path":
            continue
        name = wire.get(pname, pname)
        if loc == "header":
            value = str(query_value(v))
            headers[name] = authorization_value(scheme, value) if pname == auth_key and scheme else value
        elif loc == "body":
            if non_null_schema(tool.params.get(pname, {})).get(RAW_BODY_FLAG):
                raw_body, has_raw = v, True
            else:
                body[name] = v
        else:
            query[name] = query_value(v)
    if not any(h.lower() == "accept" for h in headers):  # JSON first: a service offering XML too picks its first type
        headers["Accept"] = ACCEPT
    kwargs: dict[str, Any] = {"params": query, "headers": headers}
    content_type = tool.input_schema.get(CONTENT_TYPE_KEY)
    if has_raw:
        kwargs["json"] = raw_body
    elif body:
        if content_type in FORM_CONTENT_TYPES:
            kwargs["data"] = {k: query_value(v) for k, v in body.items()}
        else:
            kwargs["json"] = body
    return base.rstrip("/") + "/" + path.lstrip("/"), kwargs


def authorization_value(scheme: str, key: str) -> str:
    """The Authorization header value for a key: ``Bearer <key>``, or ``Basic base64(<key>)`` for a
    ``user:password`` key; a value that already names its scheme (``Bearer …``/``Basic …``) is sent as it is."""
    if key.split(" ", 1)[0].lower() in ("bearer", "basic") and " " in key.strip():
        return key
    if scheme == "basic":
        return "Basic " + base64.b64encode(key.encode("utf-8")).decode("ascii")
    return "Bearer " + key


def read_response(resp: httpx.Response) -> Exchange:
    """A 2xx JSON body to interpret, or the classified failure of any other response."""
    status = resp.status_code
    text = resp.text
    parsed: Any = None
    parse_ok = True
    if text.strip():
        try:
            parsed = resp.json()
        except RecursionError:
            return Exchange(Outcome.SCHEMA_MISMATCH, status, detail=too_deep())
        except ValueError:
            parse_ok = False
    if 200 <= status < 300:
        if not parse_ok:
            ctype = resp.headers.get("content-type", "?")
            return Exchange(
                Outcome.UNCATEGORIZED,
                status,
                detail=f"HTTP {status} body is not JSON ({ctype}): {short(text, 120)}",
            )
        return Exchange(None, status, body=parsed)
    outcome, detail = classify_http_error(status, parsed if parse_ok else None, text)
    return Exchange(outcome, status, body=parsed if parse_ok else None, detail=detail)


def classify_http_error(status: int, parsed: Any, text: str) -> tuple[Outcome, str]:
    """Outcome and short reason of a non-2xx HTTP response."""
    detail = parsed.get("detail") if isinstance(parsed, dict) else None
    reason = short(json.dumps(detail, ensure_ascii=False) if detail is not None else text or f"HTTP {status}")
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


def retry_after_s(value: str | None) -> float | None:
    """A ``Retry-After`` header (seconds or an HTTP date) in seconds from now; None when absent or unreadable."""
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


def query_value(v: Any) -> Any:
    """A value as a query/header/form value: booleans as true/false, objects as JSON text."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return [query_value(x) for x in v]
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False)
    return v
