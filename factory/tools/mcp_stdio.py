"""The stdio stream plumbing under the MCP SDK's client session, with a cap per message.

The SDK's `stdio_client` joins and re-splits its whole text buffer on every chunk it reads, so a
single 50 MB line costs quadratic time while every other answer of that server waits behind it.
`bounded_stdio_client` starts the server the same way (own process group, stdin/stdout pipes,
stderr to `errlog`) and yields the same pair of streams for `mcp.Client`, but reads stdout as raw
bytes with `LineSplitter`: newlines are searched only in the new chunk (linear time), and a line
longer than `max_message_bytes` is not kept: only its head and tail are, to find the JSON-RPC id of
the request it answers. That request gets a JSON-RPC error ("response too large", `TOO_LARGE_CODE`)
instead, so one call fails and the session with its other calls goes on. An oversized message whose
id cannot be found (a notification, or an id in the middle of the line) is dropped with a warning.

Everything above the streams (handshake, requests, results) stays the SDK's `ClientSession`.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import anyio.lowlevel

logger = logging.getLogger(__name__)

TOO_LARGE_CODE = -32099  # JSON-RPC "server error" range: a message over the cap, discarded by the client
TOO_LARGE_MARKER = "response too large"
HEAD_BYTES = 4096  # of an oversized line: enough for the envelope before `"result"` / `"error"`
TAIL_BYTES = 1024  # ... and after it (an id written last)
READ_CHUNK = 1 << 16
STOP_GRACE_S = 2.0  # the server exits on its own once stdin closes (MCP lifecycle), else is terminated
KILL_WAIT_S = 2.0
WRITER_FLUSH_S = 0.5
DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024  # a session opened without an executor (listing tools)

_ID = rb'(-?\d+|"(?:[^"\\]|\\.){0,256}")'
_HEAD_ID = re.compile(rb'"id"\s*:\s*' + _ID)
_BODY_KEY = re.compile(rb'"(?:result|error|params)"\s*:')
_TAIL_ID = re.compile(rb'[,{]\s*"id"\s*:\s*' + _ID + rb"\s*}\s*$")


@dataclass(frozen=True)
class Oversized:
    """A line over the cap: its size and the bytes kept from its start and end."""

    size: int
    head: bytes
    tail: bytes

    def request_id(self) -> int | str | None:
        """The top-level JSON-RPC id: in the envelope before the body, or as the last member."""
        body = _BODY_KEY.search(self.head)
        envelope = self.head[: body.start()] if body else b""
        m = _HEAD_ID.search(envelope) or _TAIL_ID.search(self.tail)
        if m is None:
            return None
        value = json.loads(m.group(1))
        return value if isinstance(value, int | str) else None


class LineSplitter:
    """Newline-delimited messages from a byte stream, each at most `cap` bytes (linear in the input).

    `feed(chunk)` returns the lines completed by the chunk: `bytes` for a line within the cap (without
    its newline), `Oversized` for a longer one, whose bytes are discarded as they arrive.
    """

    def __init__(self, cap: int) -> None:
        if cap < 1:
            raise ValueError(f"message cap must be positive, got {cap}")
        self.cap = cap
        self._buf = bytearray()
        self._size = 0  # bytes of the current line so far (also past the cap)
        self._head = b""
        self._tail = b""

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        self._size += len(piece)
        if not self._head:
            self._buf += piece
            if len(self._buf) <= self.cap:
                return
            self._head, self._tail = bytes(self._buf[:HEAD_BYTES]), bytes(self._buf[-TAIL_BYTES:])
            self._buf = bytearray()
            return
        self._tail = (self._tail + piece[-TAIL_BYTES:])[-TAIL_BYTES:]

    def _end(self) -> bytes | Oversized:
        line: bytes | Oversized
        if self._head:
            line = Oversized(self._size, self._head, self._tail)
        else:
            line = bytes(self._buf)
        self._buf, self._size, self._head, self._tail = bytearray(), 0, b"", b""
        return line

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            i = chunk.find(b"\n", start)
            if i < 0:
                self._add(chunk[start:])
                return out
            self._add(chunk[start:i])
            out.append(self._end())
            start = i + 1

    @property
    def pending(self) -> int:
        """Bytes of the unfinished line."""
        return self._size


def message_cap(max_response_bytes: int) -> int:
    """The cap per message for a result cap: a result's text can travel twice (text content and
    structured content), JSON-escaped, inside an envelope; beyond this the result is too large anyway."""
    return 4 * max_response_bytes + 64 * 1024


def too_large_error(request_id: int | str, size: int, cap: int) -> dict[str, Any]:
    """The JSON-RPC error that answers a request whose response was over the cap."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": TOO_LARGE_CODE,
            "message": f"{TOO_LARGE_MARKER}: a message of {size} bytes exceeds the client's cap of {cap} bytes",
        },
    }


def _message(line: bytes | Oversized, cap: int, label: str) -> Any:
    """The SessionMessage (or parse error, as the SDK passes it on) of one line; None to skip it."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    if isinstance(line, Oversized):
        rid = line.request_id()
        if rid is None:
            logger.warning("%s: dropped a %d-byte message over the %d-byte cap (no request id)", label, line.size, cap)
            return None
        logger.warning("%s: answer to request %r is %d bytes, over the %d-byte cap", label, rid, line.size, cap)
        data = json.dumps(too_large_error(rid, line.size, cap)).encode()
    else:
        if not line.strip():
            return None
        data = line
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(data, by_name=False))
    except ValueError as e:
        logger.warning("%s: unparsable JSON-RPC message (%d bytes): %s", label, len(data), str(e)[:200])
        return e


@asynccontextmanager
async def bounded_stdio_client(
    params: Any, *, max_message_bytes: int, errlog: TextIO = sys.stderr, label: str = "MCP server"
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the stdio server of `params` (`mcp.StdioServerParameters`) and yield the SDK's
    (read stream, write stream) pair; every message from the server is at most `max_message_bytes`."""
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    if max_message_bytes < 1:
        raise ValueError(f"max_message_bytes must be positive, got {max_message_bytes}")
    process = await anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        stderr=errlog,
        cwd=params.cwd,
        start_new_session=True,  # its own process group: stopping it stops what it started
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    shutting_down = False

    async def stdout_reader() -> None:
        assert process.stdout is not None
        splitter = LineSplitter(max_message_bytes)
        try:
            async with read_writer:
                while True:
                    try:
                        chunk = await process.stdout.receive(READ_CHUNK)
                    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return
                    for line in splitter.feed(chunk):
                        msg = _message(line, max_message_bytes, label)
                        if msg is None:
                            continue
                        try:
                            await read_writer.send(msg)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return  # the session is gone
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as e:
            if not shutting_down:
                logger.warning("%s: reading its stdout failed: %s", label, e)
        finally:
            await _drain(process)

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((text + "\n").encode(params.encoding))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the connection end instead of waiting forever
        finally:
            writer_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(WRITER_FLUSH_S):
                    await writer_done.wait()
                await _stop(process, label)
                for s in (read_stream, write_stream, read_writer, write_reader):
                    await s.aclose()
            tg.cancel_scope.cancel()


async def _drain(process: Any) -> None:
    """Discard what the server still writes, so that it never blocks on a full pipe while stopping."""
    with anyio.CancelScope(shield=True), suppress(Exception):
        while True:
            await process.stdout.receive(READ_CHUNK)


async def _exited(process: Any, within_s: float) -> bool:
    with anyio.move_on_after(within_s):
        while process.returncode is None:
            await anyio.sleep(0.01)
        return True
    return False


async def _stop(process: Any, label: str) -> None:
    """Close stdin, give the server STOP_GRACE_S to exit, then terminate (and kill) its process group."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited(process, STOP_GRACE_S):
        if sys.platform != "win32":
            from mcp.os.posix.utilities import terminate_posix_process_tree

            await terminate_posix_process_tree(process, KILL_WAIT_S)
        else:  # pragma: no cover - the factory runs on POSIX
            with suppress(ProcessLookupError):
                process.kill()
        if not await _exited(process, KILL_WAIT_S):
            logger.warning("%s (pid %d) is still alive after the kill; abandoning it", label, process.pid)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
    await anyio.lowlevel.checkpoint()
