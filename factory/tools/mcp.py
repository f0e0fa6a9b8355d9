"""MCP servers as tool sources: listing tools as ToolSpecs and calling them.

Uses the installed `mcp` SDK (2.x `mcp.Client`) over stdio (a server started
as a subprocess from ``SourceConfig.command``; the pipe plumbing is `factory.tools.mcp_stdio`,
which caps the bytes of one message) or streamable HTTP
(``SourceConfig.url``).  A server that dies during start-up becomes a
`SourceError` carrying the tail of its stderr.

MCP servers are loose about errors: some report them as ordinary text with
``isError: false``, some answer with Python reprs, fenced JSON or ``key: value`` text instead
of JSON.  `interpret_result` therefore reads the text with `factory.tools.observed.parse_text`
and classifies by content as well as by the flag (`factory.tools.outcomes`: an error message
or an error envelope by its whole shape, with the rule that fired in the detail).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Coroutine, Mapping
from typing import IO, Any, TypeVar

from factory.tools.bounds import TooDeep, too_deep
from factory.tools.locators import SourceError, mcp_command, mcp_locator, slugify
from factory.tools.mcp_stdio import DEFAULT_MAX_MESSAGE_BYTES, bounded_stdio_client
from factory.tools.observed import parse_text, primary_records_path, single_text_field, text_field_value
from factory.tools.outcomes import (
    Outcome,
    classify_error,
    content_detail,
    error_envelope,
    error_text_rule,
    no_results_text,
)
from factory.tools.safety import mcp_destructive
from factory.tools.schema import (
    RefResolver,
    flatten_fields,
    infer_total_count_path,
    record_schema,
)
from factory.tools.spec import GenericParams, SourceRef, ToolSpec

logger = logging.getLogger(__name__)

T = TypeVar("T")
STARTUP_TIMEOUT_S = 60.0
STDERR_TAIL_CHARS = 800


def classify_error_text(text: str) -> Outcome:
    """Map an MCP error message (flagged or not) to the outcome taxonomy by its content
    (`factory.tools.outcomes.classify_error`, which also names the rule that fired)."""
    return classify_error(text)[0]


def parse_text_payload(text: str) -> Any:
    """The value a text payload holds (`factory.tools.observed.parse_text`: JSON, fenced JSON,
    Python reprs, markdown tables, ``key: value`` blocks, unnamed rows); None when none."""
    return parse_text(text)


def interpret_result(result: Any) -> tuple[Outcome | None, Any, str]:
    """Interpret a CallToolResult: ``(error outcome or None on success, parsed body, detail)``.

    A text payload nested too deep to parse is schema_mismatch (a structural failure).
    """
    try:
        return _interpret_result(result)
    except (TooDeep, RecursionError):
        return Outcome.SCHEMA_MISMATCH, None, too_deep()


def result_size(result: Any) -> int:
    """Characters of a CallToolResult's text blocks plus its structured content (serialized)."""
    n = sum(len(str(getattr(c, "text", "") or "")) for c in (result.content or []))
    if result.structured_content is not None:
        n += len(json.dumps(result.structured_content, default=str))
    return n


RESOURCE_LINK_KEYS = ("uri", "name", "title", "description", "mimeType", "size")


def resource_records(content: Any) -> list[dict[str, Any]]:
    """The resources a result's content blocks name, one record each, in order.

    A ``resource_link`` block (a reference the client may read later) gives ``{uri, name, title,
    description, mimeType, size}``; an embedded ``resource`` block (the resource's contents) gives
    ``{uri, mimeType}`` and the ``name``/``title``/``description`` its contents carry.  The contents
    themselves are not a field: servers write them anew on each read (server-everything stamps the
    time into every text resource), which would make the same call's records differ between the
    synthesis run and the export's replay; the uri names the resource.  Keys whose value the server
    left out are omitted."""
    out: list[dict[str, Any]] = []
    for c in content or []:
        kind = getattr(c, "type", None)
        if kind == "resource_link":
            rec = {k: _block_attr(c, k) for k in RESOURCE_LINK_KEYS}
        elif kind == "resource" and getattr(c, "resource", None) is not None:
            r = c.resource
            rec = {k: _block_attr(r, k) for k in ("uri", "name", "title", "description", "mimeType")}
        else:
            continue
        rec = {k: v for k, v in rec.items() if v is not None and v != ""}
        if rec.get("uri"):
            out.append(rec)
    return out


def _block_attr(block: Any, key: str) -> Any:
    """A content block's field by its wire name (``mimeType``) or the SDK's attribute (``mime_type``)."""
    attr = "mime_type" if key == "mimeType" else key
    v = getattr(block, attr, None)
    if v is None and isinstance(block, Mapping):
        v = block.get(key, block.get(attr))
    if v is None or isinstance(v, int | float | bool):
        return v
    return str(v)


def _interpret_result(result: Any) -> tuple[Outcome | None, Any, str]:
    texts = [str(getattr(c, "text", "")) for c in (result.content or []) if getattr(c, "type", None) == "text"]
    text = "\n".join(texts)
    if result.is_error:
        return classify_error_text(text), None, text.strip()[:300] or "tool reported an error"
    resources = resource_records(result.content) if result.structured_content is None else []
    if resources:  # links or embedded resources: they are the records, the prose around them is a caption
        if error_text_rule(text) == "error_lead":  # "Error: ..." beside a resource is still an error
            outcome, rule = classify_error(text)
            return outcome, None, content_detail(rule, text.strip()[:300])
        return None, _jsonable(resources), ""
    if result.structured_content is not None:
        body = text_field_value(result.structured_content)  # {content: "<listing>"}: the listing's records
        if isinstance(body, Mapping) and len(body) == 1 and no_results_text(str(next(iter(body.values())))):
            body = []  # {content: "No matches found"}: nothing found, not a record
    elif len(texts) > 1 and all(parse_text_payload(t) is not None for t in texts):
        body = [parse_text_payload(t) for t in texts]  # one content block per list item (FastMCP 1.x lists)
    else:
        shape = error_text_rule(text)  # an error message with isError false, by the shape of the whole text
        body = None if shape == "error_lead" else parse_text_payload(text)
        if body is None:
            if not text.strip():
                return None, None, ""
            if shape is not None:
                outcome, rule = classify_error(text)
                return outcome, None, content_detail(rule, text.strip()[:300])
            body = [] if no_results_text(text) else {"text": text}
    envelope = error_envelope(body)
    if envelope is not None:
        outcome, rule, message = envelope
        return outcome, None, content_detail(rule, message[:300])
    return None, _jsonable(body), ""


def _jsonable(obj: Any) -> Any:
    """Structured content may hold anything JSON-like: make the value plain JSON."""
    return json.loads(json.dumps(obj, default=str))


def _clean_schema(schema: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    """Resolve a tool schema's internal ``$ref``s (``#/$defs/...``) and drop ``$defs``."""
    if not schema:
        return {}
    resolved = RefResolver(dict(schema), where).resolve(dict(schema), where)
    resolved.pop("$defs", None)
    resolved.pop("definitions", None)
    return resolved


def tool_to_spec(tool: Any, *, domain: str, platform: str, source: SourceRef) -> ToolSpec:
    """One MCP `Tool` (from tools/list) as a ToolSpec (method MCP, every param located 'mcp')."""
    input_schema = _clean_schema(tool.input_schema, f"MCP server `{source.locator}` tool {tool.name}")
    input_schema.pop("title", None)
    input_schema.setdefault("type", "object")
    input_schema.setdefault("properties", {})
    input_schema.setdefault("required", [])
    output_schema = _clean_schema(tool.output_schema, f"MCP server `{source.locator}` tool {tool.name}")
    records_path = primary_records_path(output_schema) if output_schema else None
    # a declared {content: string} says only "text": its fields are observed from the parsed text
    declared = bool(output_schema) and single_text_field(output_schema) is None
    annotations = getattr(tool, "annotations", None)
    read_only = getattr(annotations, "read_only_hint", None) if annotations is not None else None
    destructive = getattr(annotations, "destructive_hint", None) if annotations is not None else None
    harmful = mcp_destructive(annotations, tool.name)
    return ToolSpec(
        domain=domain,
        platform=platform,
        name=tool.name,
        description=(tool.description or getattr(tool, "title", None) or tool.name).strip(),
        method="MCP",
        path="",
        input_schema=input_schema,
        param_locations=dict.fromkeys(input_schema["properties"], "mcp"),
        output_schema=output_schema,
        output_fields=flatten_fields(record_schema(output_schema, records_path)) if declared else {},
        records_path=records_path,
        total_count_path=infer_total_count_path(output_schema, records_path) if declared else None,
        generic_params=GenericParams(),
        state_changing=bool(destructive) or read_only is False or harmful,
        destructive=harmful,
        source=source,
    )


# --------------------------------------------------------------------------- sessions


class MCPSession:
    """One live MCP client connection, owned by a background task.

    The SDK's client is an anyio context whose task group must be entered and
    exited by the same task; running it in a dedicated task lets any task of
    the executor send requests while `start`/`close` may be awaited anywhere.
    """

    def __init__(
        self,
        locator: str,
        *,
        url: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike | None = None,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.locator = locator
        self.url = url
        self.env = dict(env or {})
        self.cwd = cwd  # a stdio server starts in the project folder (relative paths in its command line)
        self.startup_timeout_s = startup_timeout_s
        self.max_message_bytes = max_message_bytes  # stdio: a longer message fails its call (mcp_stdio)
        self.client: Any = None
        self._errlog: IO[str] | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._error: BaseException | None = None

    @property
    def label(self) -> str:
        return f"MCP server `{self.locator}`"

    def _stderr_tail(self) -> str:
        if self._errlog is None:
            return ""
        try:
            self._errlog.flush()
            self._errlog.seek(0)
            text = self._errlog.read()
        except (OSError, ValueError):
            return ""
        return text.strip()[-STDERR_TAIL_CHARS:]

    def _transport(self) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        if self.url:
            return self.url
        argv = mcp_command(self.locator)
        if not argv:
            raise SourceError(f"{self.label}: empty command")
        self._errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=self.env or None, cwd=None if self.cwd is None else str(self.cwd)
        )
        if sys.platform == "win32":  # pragma: no cover - the bounded plumbing is POSIX-only
            return stdio_client(params, errlog=self._errlog)
        return bounded_stdio_client(
            params, max_message_bytes=self.max_message_bytes, errlog=self._errlog, label=self.label
        )

    async def _run(self) -> None:
        from mcp import Client

        try:
            transport = self._transport()
            async with Client(transport, cache=None) as client:
                self.client = client
                self._ready.set()
                await self._closing.wait()
        except BaseException as e:  # noqa: BLE001 - reported to start() or logged
            if not self._ready.is_set():
                self._error = e
            elif not self._closing.is_set():
                logger.warning("%s: connection lost: %s", self.label, _flatten_exc(e))
            if isinstance(e, asyncio.CancelledError):
                raise
        finally:
            self.client = None
            self._ready.set()

    async def start(self) -> MCPSession:
        """Connect (and, for stdio, start the server); SourceError when it cannot start."""
        self._task = asyncio.create_task(self._run(), name=f"mcp:{self.locator}")
        try:
            await asyncio.wait_for(self._ready.wait(), self.startup_timeout_s)
        except TimeoutError as e:
            await self.close()
            raise SourceError(f"{self.label} did not answer within {self.startup_timeout_s:.0f}s at start") from e
        if self._error is not None or self.client is None:
            err = self._error
            tail = self._stderr_tail() or (_flatten_exc(err) if err is not None else "no session")
            await self.close()
            if isinstance(err, FileNotFoundError | PermissionError):
                raise SourceError(f"{self.label} cannot be started: {err}") from err
            raise SourceError(f"{self.label} closed the connection at start: {tail}") from err
        return self

    async def close(self) -> None:
        self._closing.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 15.0)
            except (TimeoutError, Exception):  # noqa: BLE001
                self._task.cancel()
            self._task = None
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    @property
    def alive(self) -> bool:
        """Connected and not closed (a session whose call saw the connection close is dropped by its user)."""
        return self.client is not None and self._task is not None and not self._task.done()

    async def list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        while True:
            page = await self.client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout_s: float | None = None) -> Any:
        if self.client is None:
            raise ConnectionError(f"{self.label}: connection is closed")
        return await self.client.call_tool(name, arguments, read_timeout_seconds=timeout_s)

    def server_name(self) -> str | None:
        try:
            info = self.client.session.server_info if self.client is not None else None
        except (RuntimeError, AttributeError):
            return None
        return getattr(info, "name", None)


def _flatten_exc(e: BaseException | None) -> str:
    if e is None:
        return ""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(_flatten_exc(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}"


def flatten_exception(e: BaseException) -> str:
    """Readable one-line text of an exception (exception groups unwrapped)."""
    return _flatten_exc(e)


async def load_mcp_async(source: Any, domain: str, cwd: str | os.PathLike | None = None) -> list[ToolSpec]:
    """List the tools of an MCP source (`SourceConfig`) as ToolSpecs; a stdio server starts in `cwd`."""
    locator = mcp_locator(source)
    session = MCPSession(locator, url=None if source.command else source.url, env=source.env, cwd=cwd)
    await session.start()
    try:
        tools = await session.list_tools()
        platform = source.platform or slugify(session.server_name() or locator.split()[-1])
    except Exception as e:
        raise SourceError(f"MCP server `{locator}`: listing tools failed: {_flatten_exc(e)}") from e
    finally:
        await session.close()
    ref = SourceRef(kind="mcp", locator=locator, base_url=None if source.command else source.url)
    specs = [tool_to_spec(t, domain=domain, platform=platform, source=ref) for t in tools]
    if not specs:
        raise SourceError(f"MCP server `{locator}` lists no tools")
    return specs


def load_mcp(source: Any, domain: str, cwd: str | os.PathLike | None = None) -> list[ToolSpec]:
    """Synchronous `load_mcp_async` (works inside a running event loop too, via a thread)."""
    return run_sync(load_mcp_async(source, domain, cwd))


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even when this thread already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:  # noqa: BLE001
            box["error"] = e

    th = threading.Thread(target=target, name="factory-run-sync")
    th.start()
    th.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
