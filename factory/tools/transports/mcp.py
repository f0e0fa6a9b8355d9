"""MCP transport: one live session per server (started on first use, reused by every call).

A server that cannot be started is remembered: its calls are `NotSent` as
endpoint_unavailable without trying again within the executor.  Each attempt is bounded by
the executor timeout; timeouts and rate-limit answers are retryable, other errors are
classified by their text (`factory.tools.mcp.classify_error_text`), results by
`factory.tools.mcp.interpret_result`; a result larger than ``max_response_bytes`` is
schema_mismatch ("response too large"). Over stdio a message far over that cap
(`mcp_stdio.message_cap`) is not even read into memory: the client's line reader answers its
request with a "response too large" error, and the server's other calls go on.

A server whose connection closes during a call (it crashed) is restarted and the call retried
once; when it crashes again the crash is that tool's: server_error, and the dead session is
dropped so that the next call (of any tool) starts the server afresh.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from factory.tools.bounds import too_large
from factory.tools.locators import SourceError, mcp_locator
from factory.tools.mcp import MCPSession, classify_error_text, flatten_exception, interpret_result, result_size
from factory.tools.mcp_stdio import TOO_LARGE_MARKER, message_cap
from factory.tools.outcomes import Outcome
from factory.tools.spec import ToolSpec
from factory.tools.transports.base import Exchange, NotSent, Transport, TransportOptions, short

logger = logging.getLogger(__name__)

RETRY_OUTCOMES = frozenset({Outcome.RATE_LIMIT, Outcome.TIMEOUT})
_CLOSED = Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail="connection closed")  # marker: the server died mid-call


class McpTransport(Transport):
    """Calls MCP tools over sessions keyed by the tool's source locator (env from the configured source)."""

    kind = "mcp"

    def __init__(self, options: TransportOptions) -> None:
        super().__init__(options)
        self._sources = {mcp_locator(s): s for s in options.sources if s.kind == "mcp"}
        self._sessions: dict[str, MCPSession] = {}
        self._errors: dict[str, str] = {}
        self._lock: asyncio.Lock | None = None

    async def close(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        for s in sessions:
            await s.close()

    async def prepare(self, tool: ToolSpec, args: dict[str, Any]) -> tuple[MCPSession, dict[str, Any]]:
        try:
            return await self._session(tool), args
        except SourceError as e:
            raise NotSent(Outcome.ENDPOINT_UNAVAILABLE, str(e)) from e

    async def send(self, tool: ToolSpec, prepared: tuple[MCPSession, dict[str, Any]]) -> Exchange:
        session, args = prepared
        session = self._sessions.get(tool.source.locator, session)  # a restarted server replaces the prepared one
        ex = await self._attempt(session, tool, args)
        if ex is not _CLOSED:
            return ex
        logger.warning("%s: connection closed during %s; restarting it and retrying once", session.label, tool.name)
        try:
            session = await self._restart(tool, session)
        except SourceError as e:
            return Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=short(f"server closed during the call: {e}"))
        ex = await self._attempt(session, tool, args)
        if ex is not _CLOSED:
            return ex
        await self._drop(tool.source.locator, session)  # the next call starts the server again
        return Exchange(
            Outcome.SERVER_ERROR,
            detail=f"{session.label} crashed on this tool twice (restarted and retried once)",
        )

    async def _attempt(self, session: MCPSession, tool: ToolSpec, args: dict[str, Any]) -> Exchange:
        """One call; `_CLOSED` when the connection closed under it (the server died)."""
        timeout_s = self.cfg.timeout_s
        try:
            res = await asyncio.wait_for(
                session.call_tool(tool.original_name or tool.name, args, timeout_s), timeout_s + 1.0
            )
        except TimeoutError:
            return Exchange(Outcome.TIMEOUT, detail=f"no answer within {timeout_s}s", retry=True)
        except Exception as e:  # noqa: BLE001 - MCPError, closed streams, ...
            text = flatten_exception(e)
            low = text.lower()
            if TOO_LARGE_MARKER in low:  # the stdio reader discarded an answer over the message cap
                return Exchange(Outcome.SCHEMA_MISMATCH, detail=too_large(self.cfg.max_response_bytes))
            if "timed out" in low or "timeout" in low:
                return Exchange(Outcome.TIMEOUT, detail=short(text), retry=True)
            if "connection closed" in low or "closed" in low or isinstance(e, ConnectionError):
                return _CLOSED
            return Exchange(classify_error_text(text), detail=short(text))
        limit = self.cfg.max_response_bytes
        if result_size(res) > limit:
            return Exchange(Outcome.SCHEMA_MISMATCH, detail=too_large(limit))
        outcome, body, detail = interpret_result(res)
        return Exchange(outcome, body=body, detail=detail, retry=outcome in RETRY_OUTCOMES)

    async def _restart(self, tool: ToolSpec, dead: MCPSession) -> MCPSession:
        """A fresh session for the tool's server (one restart however many calls saw `dead` close)."""
        await self._drop(tool.source.locator, dead)
        return await self._session(tool)

    async def _drop(self, locator: str, session: MCPSession) -> None:
        if self._sessions.get(locator) is session:
            del self._sessions[locator]
            await session.close()

    async def _session(self, tool: ToolSpec) -> MCPSession:
        locator = tool.source.locator
        current = self._sessions.get(locator)
        if current is not None and current.alive:
            return current
        if current is not None:
            await self._drop(locator, current)
        if locator in self._errors:
            raise SourceError(self._errors[locator])
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if locator in self._sessions and self._sessions[locator].alive:
                return self._sessions[locator]
            src = self._sources.get(locator)
            session = MCPSession(
                locator,
                url=tool.source.base_url,
                env=src.env if src is not None else None,
                cwd=self.options.workdir,
                max_message_bytes=message_cap(self.cfg.max_response_bytes),
            )
            try:
                await session.start()
            except SourceError as e:
                self._errors[locator] = str(e)
                raise
            self._sessions[locator] = session
            return session
