"""MCP transport: calls over the process's live sessions (`mcp_pool`), one server start per run.

Sessions (``executor.mcp_sessions``):

- ``shared`` (default): a read-only call goes to the server's shared session in the process-wide
  pool (`factory.tools.transports.mcp_pool`), started on first use and reused by every executor
  of the run: probes, refinement, synthesis attempts, judging and replays. A state-changing call
  (`ToolSpec.state_changing`) never runs there: the first one of an episode (`ToolExecutor.in_episode`)
  starts a *private* server for that episode, and it and every later call of the episode to that
  server go there, so the shared session never changes and concurrent episodes never see each
  other's changes (as with the HTTP sessions of `ToolExecutor`); outside an episode the executor
  itself is the episode, and an episode that has not changed state reads its executor's private
  server when there is one. Private servers stop when their episode (or executor) ends.
- ``per_executor``: every executor starts its own servers and stops them when it closes (the
  behaviour before the pool; for servers whose state changes are not annotated).

A server that cannot be started is remembered: its calls are `NotSent` as
endpoint_unavailable without trying again within the executor.  Each attempt is bounded by
the executor timeout; timeouts and rate-limit answers are retryable, other errors are
classified by their text (`factory.tools.mcp.classify_error_text`), results by
`factory.tools.mcp.interpret_result`; a result larger than ``max_response_bytes`` is
schema_mismatch ("response too large"). Over stdio a message far over that cap
(`mcp_stdio.message_cap`) is not even read into memory: the client's line reader answers its
request with a "response too large" error, and the server's other calls go on.

A server whose connection closes during a call (it crashed) is restarted (once, however many
calls saw it die; counted in `mcp_pool().stats()`) and the call retried once. Which call killed
it is known only when it ran alone on that server (`SessionDied.died_with == 1`): such a call is
retried on the restarted server, and when that one dies under it alone too the crash is that
tool's (server_error; the dead session is dropped so that the next call of any tool starts the
server afresh). A call that died together with others (the shared session serves the concurrent
calls of every executor) is retried in a server of its own (a private session started for that
one attempt and stopped after it), so that a crash there is certainly its tool's and the tools
that merely shared the server are never blamed (nor their circuit breakers opened) for it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from factory.tools.bounds import too_large
from factory.tools.locators import SourceError, mcp_locator
from factory.tools.mcp import MCPSession, classify_error_text, flatten_exception, interpret_result, result_size
from factory.tools.mcp_stdio import TOO_LARGE_MARKER, message_cap
from factory.tools.observed import with_listing_paths
from factory.tools.outcomes import Outcome
from factory.tools.spec import ToolSpec
from factory.tools.transports.base import Exchange, NotSent, Transport, TransportOptions, short
from factory.tools.transports.mcp_pool import SessionDied, SessionKey, mcp_pool

logger = logging.getLogger(__name__)

RETRY_OUTCOMES = frozenset({Outcome.RATE_LIMIT, Outcome.TIMEOUT})


_Slot = tuple[int, str]  # (id of the episode, 0 for the executor itself; locator): a private session


class McpTransport(Transport):
    """Calls MCP tools over sessions keyed by the tool's source locator (env from the configured source)."""

    kind = "mcp"

    def __init__(self, options: TransportOptions) -> None:
        super().__init__(options)
        self._sources = {mcp_locator(s): s for s in options.sources if s.kind == "mcp"}
        self._pool = mcp_pool()
        self._shared = self.cfg.mcp_sessions == "shared"
        self._private: dict[_Slot, MCPSession] = {}
        self._scopes: dict[int, object] = {}  # id → episode, kept alive while its sessions are
        self._locks: dict[_Slot, asyncio.Lock] = {}
        self._errors: dict[str, str] = {}

    async def close(self) -> None:
        slots, self._private = list(self._private.values()), {}
        self._scopes.clear()
        for s in slots:
            await self._pool.close_private(s)

    async def end_scope(self, scope: object) -> None:
        """Stop the private servers of an episode that ended."""
        sid = id(scope)
        for slot in [k for k in self._private if k[0] == sid]:
            await self._pool.close_private(self._private.pop(slot))
            self._locks.pop(slot, None)
        self._scopes.pop(sid, None)

    async def prepare(self, tool: ToolSpec, args: dict[str, Any]) -> dict[str, Any]:
        try:
            await self._session(tool)
        except SourceError as e:
            raise NotSent(Outcome.ENDPOINT_UNAVAILABLE, str(e)) from e
        return args

    async def send(self, tool: ToolSpec, prepared: dict[str, Any]) -> Exchange:
        args = prepared
        try:
            session, slot = await self._session(tool)
        except SourceError as e:
            return Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=short(str(e)))
        ex = await self._attempt(session, tool, args)
        if not isinstance(ex, SessionDied):
            return ex
        alone = ex.died_with == 1
        logger.warning(
            "%s: connection closed during %s (%s); restarting it and retrying once%s",
            session.label,
            tool.name,
            "alone on the server" if alone else f"{ex.died_with} calls in flight",
            "" if alone else " in a server of its own",
        )
        try:
            session = await self._restart(tool, session, slot)
        except SourceError as e:
            return Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=short(f"server closed during the call: {e}"))
        if not alone:
            return await self._isolated(tool, args)
        ex = await self._attempt(session, tool, args)
        if not isinstance(ex, SessionDied):
            return ex
        await self._drop(tool, session, slot)  # the next call starts the server again
        if ex.died_with > 1:  # the retry died with other calls in flight: decide in a server of its own
            return await self._isolated(tool, args)
        return Exchange(
            Outcome.SERVER_ERROR,
            detail=f"{session.label} crashed on this tool twice (restarted and retried once)",
        )

    async def _isolated(self, tool: ToolSpec, args: dict[str, Any]) -> Exchange:
        """One attempt in a server started for it alone (stopped after): a crash there is this tool's."""
        key = self._key(tool)
        try:
            session = await self._pool.start_private(key)
        except SourceError as e:
            return Exchange(Outcome.ENDPOINT_UNAVAILABLE, detail=short(f"server closed during the call: {e}"))
        try:
            ex = await self._attempt(session, tool, args)
        finally:
            await self._pool.close_private(session)
        if not isinstance(ex, SessionDied):
            return ex
        return Exchange(
            Outcome.SERVER_ERROR,
            detail=f"{session.label} crashed on this tool, retried in a server of its own",
        )

    async def _attempt(self, session: MCPSession, tool: ToolSpec, args: dict[str, Any]) -> Exchange | SessionDied:
        """One call; `SessionDied` when the connection closed under it (the server died)."""
        timeout_s = self.cfg.timeout_s
        try:
            name = tool.original_name or tool.name  # the server's own name (ToolSpec.name may be sanitized)
            call = self._pool.call_tool(self._key(tool), session, name, args, timeout_s)
            res = await asyncio.wait_for(call, timeout_s + 1.0)
        except SessionDied as e:
            return e
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
                return SessionDied(text, 1)  # raised outside the pool's call: nothing else ran with it
            return Exchange(classify_error_text(text), detail=short(text))
        limit = self.cfg.max_response_bytes
        if result_size(res) > limit:
            return Exchange(Outcome.SCHEMA_MISMATCH, detail=too_large(limit))
        outcome, body, detail = interpret_result(res)
        body = with_listing_paths(body, args)  # entries of a listed directory get their full path
        return Exchange(outcome, body=body, detail=detail, retry=outcome in RETRY_OUTCOMES)

    # ------------------------------------------------------------------ sessions

    def _key(self, tool: ToolSpec) -> SessionKey:
        locator = tool.source.locator
        src = self._sources.get(locator)
        return SessionKey.of(
            locator,
            url=tool.source.base_url,
            env=src.env if src is not None else None,
            cwd=self.options.workdir,
            max_message_bytes=message_cap(self.cfg.max_response_bytes),
        )

    def _slot(self, tool: ToolSpec) -> _Slot | None:
        """The private session a call goes to (None: the shared one)."""
        locator = tool.source.locator
        if not self._shared:
            return (0, locator)  # per_executor: one session per server and executor, episodes or not
        scope = self.options.scope() if self.options.scope is not None else None
        slot = (0 if scope is None else id(scope), locator)
        if slot in self._private or tool.state_changing:
            if scope is not None:
                self._scopes[id(scope)] = scope
            return slot
        if (0, locator) in self._private:  # an episode reads what its executor changed (as HTTP sessions do)
            return (0, locator)
        return None

    async def _session(self, tool: ToolSpec, slot: _Slot | None | bool = True) -> tuple[MCPSession, _Slot | None]:
        """The live session for a call (started when needed) and its private slot (None: shared);
        `slot` True: the one `_slot` picks."""
        locator = tool.source.locator
        if locator in self._errors:
            raise SourceError(self._errors[locator])
        key = self._key(tool)
        if slot is True:
            slot = self._slot(tool)
        assert slot is None or isinstance(slot, tuple)
        try:
            if slot is None:
                return await self._pool.shared(key), None
            current = self._private.get(slot)
            if current is not None and current.alive:
                return current, slot
            lock = self._locks.setdefault(slot, asyncio.Lock())
            async with lock:
                current = self._private.get(slot)
                if current is not None and current.alive:
                    return current, slot
                if current is not None:
                    await self._pool.close_private(self._private.pop(slot))
                session = await self._pool.start_private(key)
                self._private[slot] = session
                return session, slot
        except SourceError as e:
            self._errors[locator] = str(e)
            raise

    async def _restart(self, tool: ToolSpec, dead: MCPSession, slot: _Slot | None) -> MCPSession:
        """A fresh session for the tool's server after `dead` closed during a call."""
        key = self._key(tool)
        if slot is None:
            return await self._pool.restart(key, dead)
        if self._private.get(slot) is dead:
            del self._private[slot]
            await self._pool.close_private(dead)
            self._pool.count_restart(key)
        session, _ = await self._session(tool, slot)  # the same episode's fresh server
        return session

    async def _drop(self, tool: ToolSpec, session: MCPSession, slot: _Slot | None) -> None:
        if slot is None:
            await self._pool.discard(self._key(tool), session)
        elif self._private.get(slot) is session:
            del self._private[slot]
            await self._pool.close_private(session)
