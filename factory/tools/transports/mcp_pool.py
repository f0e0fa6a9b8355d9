"""Live MCP sessions shared by every executor of a process: one server start per server and run.

Stages build a `ToolExecutor` per job (a probe round, a synthesis attempt, a judge variant, an
export replay); before this pool each of them started its own copy of every MCP server it called
(120 synthesis attempts, 120 starts). The pool keeps one *shared* session per server
(`SessionKey`: command line or URL, environment, working folder, message cap) for the whole
process, which is one `factory run` or one Dagster run:

- every session runs on the pool's own event loop, in a daemon thread, so that executors on any
  loop (`asyncio.run` per stage, `run_sync` threads) use the same live connection; a call is
  handed over with `asyncio.run_coroutine_threadsafe` and cancelled with its caller;
- a shared session is started on first use, reused by every later call, and restarted once when
  its server died (`restart`: however many calls saw the same dead session, one start; counted in
  `stats()`);
- a call whose connection closed under it raises `SessionDied` carrying how many calls were in
  flight on that session when it died (`died_with`): 1 means the crash is that call's, more means
  it cannot be told from this death alone which call killed the server (the transport then retries
  it in a server of its own, see `McpTransport`);
- *private* sessions (`start_private`) are fresh servers that the pool does not share: the
  transport opens one for an episode's first state-changing call (and for the executor's own
  calls when the source is not shared, see `McpTransport`) and closes it when the episode or
  executor ends;
- a run holds the pool (`hold()`, taken by `sensors.jobs.run_pipeline` for the whole pipeline, i.e.
  `factory run` and the in-process tests): while any hold is taken no shared session is stopped
  for idleness, however long a stage goes without calling a server (a loaded machine, a long
  synthesis stage), so a run starts each server once; when the last hold is released every
  shared session's idle clock starts afresh. Outside a run a shared session unused for
  `idle_close_s` is stopped (a long-lived process such as the sensor daemon keeps no idle
  servers between runs); `close_all` stops every session and the loop thread (the clean stop at
  the end of a run), and runs at interpreter exit (`atexit`); a forked child starts with an
  empty pool.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
from collections.abc import Coroutine, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from factory.tools.mcp import MCPSession, flatten_exception
from factory.tools.mcp_stdio import TOO_LARGE_MARKER

logger = logging.getLogger(__name__)

T = TypeVar("T")
IDLE_CLOSE_S = 300.0  # a shared session unused this long is stopped
REAP_EVERY_S = 5.0
CLOSE_ALL_TIMEOUT_S = 30.0


class SessionDied(ConnectionError):
    """The connection of a session closed during a call (its server died).

    `died_with`: the calls that were in flight on that session when the first of them saw it
    close (this one included); 1 means this call was alone, so the crash is its tool's."""

    def __init__(self, message: str, died_with: int) -> None:
        super().__init__(message)
        self.died_with = died_with


def connection_closed(e: BaseException) -> bool:
    """Whether a call's exception means the connection closed under it (not a timeout, not an answer
    over the message cap, not an error the server sent)."""
    low = flatten_exception(e).lower()
    if TOO_LARGE_MARKER in low or "timed out" in low or "timeout" in low:
        return False
    return "closed" in low or isinstance(e, ConnectionError)


@dataclass(frozen=True)
class SessionKey:
    """What makes two sessions interchangeable: the same server, environment, folder and cap."""

    locator: str
    url: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    max_message_bytes: int = 0

    @classmethod
    def of(
        cls,
        locator: str,
        *,
        url: str | None,
        env: Mapping[str, str] | None,
        cwd: str | None,
        max_message_bytes: int,
    ) -> SessionKey:
        return cls(locator, url, tuple(sorted((env or {}).items())), cwd, max_message_bytes)

    def session(self) -> MCPSession:
        """A new (not yet started) session for this key."""
        return MCPSession(
            self.locator,
            url=self.url,
            env=dict(self.env),
            cwd=self.cwd,
            max_message_bytes=self.max_message_bytes,
        )


@dataclass
class _Slot:
    """The shared session of one key and its bookkeeping (touched on the pool's loop only)."""

    session: MCPSession | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    in_use: int = 0
    last_used: float = field(default_factory=time.monotonic)


@dataclass
class ServerStats:
    """Per server (locator): starts of shared and private sessions, restarts after a crash, idle stops."""

    shared_starts: int = 0
    private_starts: int = 0
    restarts: int = 0
    idle_stops: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "shared_starts": self.shared_starts,
            "private_starts": self.private_starts,
            "restarts": self.restarts,
            "idle_stops": self.idle_stops,
        }


class McpSessionPool:
    """The process's live MCP sessions (see the module docstring)."""

    def __init__(self, idle_close_s: float = IDLE_CLOSE_S) -> None:
        self.idle_close_s = idle_close_s
        self._guard = threading.Lock()  # start/stop of the loop thread, the hold count
        self._holds = 0  # runs in progress (`hold`): no idle stop while any is
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._slots: dict[SessionKey, _Slot] = {}
        self._private: set[MCPSession] = set()
        self._stats: dict[str, ServerStats] = {}
        self._inflight: WeakKeyDictionary[MCPSession, int] = WeakKeyDictionary()  # calls running per session
        self._died_with: WeakKeyDictionary[MCPSession, int] = WeakKeyDictionary()  # in flight when it died

    # ------------------------------------------------------------------ loop thread

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is not None and self._thread is not None and self._thread.is_alive():
                return self._loop
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.create_task(self._reaper())
                try:
                    loop.run_forever()
                finally:
                    loop.close()

            thread = threading.Thread(target=run, name="mcp-session-pool", daemon=True)
            thread.start()
            ready.wait()
            self._loop, self._thread = loop, thread
            return loop

    def _submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())

    async def _on_pool(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the pool's loop and await it from the caller's loop (cancelled with the caller)."""
        return await asyncio.wrap_future(self._submit(coro))

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------ public API (any loop)

    async def shared(self, key: SessionKey) -> MCPSession:
        """The live shared session of `key`, started on first use (SourceError when it cannot start)."""
        return await self._on_pool(self._shared(key))

    async def restart(self, key: SessionKey, dead: MCPSession) -> MCPSession:
        """A fresh shared session after `dead` lost its server: one start however many callers saw it die."""
        return await self._on_pool(self._restart(key, dead))

    async def discard(self, key: SessionKey, session: MCPSession) -> None:
        """Stop the shared session of `key` if it is still `session` (the next `shared` starts anew)."""
        await self._on_pool(self._discard(key, session))

    async def start_private(self, key: SessionKey) -> MCPSession:
        """A fresh session of its own (not shared); the caller closes it with `close_private`."""
        return await self._on_pool(self._start_private(key))

    async def close_private(self, session: MCPSession) -> None:
        await self._on_pool(self._close_private(session))

    async def call_tool(
        self, key: SessionKey, session: MCPSession, name: str, args: dict[str, Any], timeout_s: float | None
    ) -> Any:
        """`session.call_tool` on the pool's loop; a shared session is not idle-stopped while it runs.
        `SessionDied` when the connection closed during the call."""
        return await self._on_pool(self._call(key, session, name, args, timeout_s))

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Keep every shared session through a run: no idle stop until the last hold is released
        (holds nest and may be taken from any thread); on release the idle clocks start afresh."""
        with self._guard:
            self._holds += 1
        try:
            yield
        finally:
            with self._guard:
                self._holds -= 1
                released = self._holds == 0
            if released:
                now = time.monotonic()
                for slot in list(self._slots.values()):
                    slot.last_used = max(slot.last_used, now)

    @property
    def held(self) -> bool:
        """Whether a run holds the pool (its shared sessions are never stopped for idleness)."""
        return self._holds > 0

    def reap_idle(self, now: float | None = None) -> int:
        """Stop the shared sessions idle at `now` (monotonic seconds; the reaper's clock by default),
        as the reaper does every few seconds; returns how many it stopped (none while `held`)."""
        if not self.running:
            return 0
        at = time.monotonic() if now is None else now
        return self._submit(self._reap_idle(at)).result(CLOSE_ALL_TIMEOUT_S)

    def count_restart(self, key: SessionKey) -> None:
        """Count a restart of a private session (its transport replaced it after a crash)."""
        self._stat(key).restarts += 1

    def stats(self) -> dict[str, dict[str, int]]:
        """Per locator: ``shared_starts``, ``private_starts``, ``restarts``, ``idle_stops`` so far."""
        return {loc: s.as_dict() for loc, s in sorted(self._stats.items())}

    def live(self) -> int:
        """Sessions (shared and private) currently connected."""
        shared = sum(1 for s in self._slots.values() if s.session is not None and s.session.alive)
        return shared + sum(1 for s in self._private if s.alive)

    def close_all(self, timeout_s: float = CLOSE_ALL_TIMEOUT_S) -> dict[str, dict[str, int]]:
        """Stop every session (shared and private) and the loop thread; returns the `stats` of the
        sessions it ends and starts counting afresh (the pool can be used again after)."""
        with self._guard:
            loop, thread = self._loop, self._thread
            self._loop, self._thread = None, None
        final, self._stats = self.stats(), {}
        if loop is None or thread is None or not thread.is_alive():
            self._slots.clear()
            self._private.clear()
            return final
        if thread is threading.current_thread():  # pragma: no cover - never called from a pool task
            raise RuntimeError("close_all cannot run on the pool's own thread")
        fut = asyncio.run_coroutine_threadsafe(self._close_everything(), loop)
        try:
            fut.result(timeout_s)
        except Exception as e:  # noqa: BLE001 - a server that would not stop is logged, never raised at exit
            logger.warning("MCP session pool: stopping the servers failed: %s", e)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout_s)
        return final

    def reset_after_fork(self) -> None:
        """In a forked child the loop thread does not exist: forget everything (the parent owns those servers)."""
        self._guard = threading.Lock()
        self._holds = 0
        self._loop, self._thread = None, None
        self._slots = {}
        self._private = set()
        self._inflight = WeakKeyDictionary()
        self._died_with = WeakKeyDictionary()

    # ------------------------------------------------------------------ on the pool's loop

    def _stat(self, key: SessionKey) -> ServerStats:
        return self._stats.setdefault(key.locator, ServerStats())

    async def _shared(self, key: SessionKey) -> MCPSession:
        slot = self._slots.setdefault(key, _Slot())
        slot.last_used = time.monotonic()
        if slot.session is not None and slot.session.alive:
            return slot.session
        async with slot.lock:
            if slot.session is not None and slot.session.alive:
                return slot.session
            if slot.session is not None:  # died between calls: stopped and replaced
                old, slot.session = slot.session, None
                await old.close()
            session = key.session()
            await session.start()  # SourceError propagates to the caller; nothing is kept
            self._stat(key).shared_starts += 1
            slot.session = session
            slot.last_used = time.monotonic()
            return session

    async def _restart(self, key: SessionKey, dead: MCPSession) -> MCPSession:
        slot = self._slots.setdefault(key, _Slot())
        async with slot.lock:
            if slot.session is dead:
                slot.session = None
                await dead.close()
                self._stat(key).restarts += 1
                logger.warning("%s: server died; restarting it", dead.label)
        return await self._shared(key)

    async def _discard(self, key: SessionKey, session: MCPSession) -> None:
        slot = self._slots.get(key)
        if slot is None:
            return
        async with slot.lock:
            if slot.session is session:
                slot.session = None
                await session.close()

    async def _start_private(self, key: SessionKey) -> MCPSession:
        session = key.session()
        await session.start()
        self._stat(key).private_starts += 1
        self._private.add(session)
        return session

    async def _close_private(self, session: MCPSession) -> None:
        async def stop() -> None:
            await session.close()
            self._private.discard(session)

        await asyncio.shield(asyncio.ensure_future(stop()))  # a cancelled caller still stops the server

    async def _call(
        self, key: SessionKey, session: MCPSession, name: str, args: dict[str, Any], timeout_s: float | None
    ) -> Any:
        slot = self._slots.get(key)
        shared = slot is not None and slot.session is session
        if shared:
            assert slot is not None
            slot.in_use += 1
        self._inflight[session] = self._inflight.get(session, 0) + 1
        try:
            return await session.call_tool(name, args, timeout_s)
        except Exception as e:
            if not connection_closed(e):
                raise
            # the first call to see the connection close counts the calls in flight with it (itself
            # included); every later one of that session's calls reports the same count
            died_with = self._died_with.setdefault(session, self._inflight[session])
            raise SessionDied(
                f"{session.label}: connection closed during {name}: {flatten_exception(e)}", died_with
            ) from e
        finally:
            self._inflight[session] -= 1
            if shared:
                assert slot is not None
                slot.in_use -= 1
                slot.last_used = time.monotonic()

    async def _reaper(self) -> None:
        """Every few seconds, stop the shared sessions idle longer than `idle_close_s` (`_reap_idle`)."""
        while True:
            await asyncio.sleep(min(REAP_EVERY_S, self.idle_close_s))
            await self._reap_idle(time.monotonic())

    async def _reap_idle(self, now: float) -> int:
        """Stop the shared sessions unused since `now - idle_close_s`: none while a run holds the pool,
        none in use or being (re)started at that moment."""
        stopped = 0
        for key, slot in list(self._slots.items()):
            if self.held:  # checked per session: a run may take its hold while this loop awaits a close
                break
            s = slot.session
            if s is None or slot.in_use or slot.lock.locked() or now - slot.last_used < self.idle_close_s:
                continue
            slot.session = None
            self._stat(key).idle_stops += 1
            stopped += 1
            logger.info("%s: idle for %.0fs; stopped (the next call starts it again)", s.label, now - slot.last_used)
            await s.close()
        return stopped

    async def _close_everything(self) -> None:
        sessions = [s.session for s in self._slots.values() if s.session is not None] + list(self._private)
        self._slots.clear()
        self._private.clear()
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()


_POOL = McpSessionPool()


def mcp_pool() -> McpSessionPool:
    """The process's MCP session pool."""
    return _POOL


def close_mcp_sessions() -> dict[str, dict[str, int]]:
    """Stop every MCP server the process started (end of a run; also at interpreter exit); returns
    per server the starts, restarts and idle stops counted since the last close."""
    return _POOL.close_all()


atexit.register(close_mcp_sessions)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POOL.reset_after_fork)
