"""A hostile MCP server over stdio (real SDK) for the executor (issue 21 items 2, 3, 7, 9).

One tool per failure mode: ``deep`` (a JSON text nested 100,000 levels), ``big`` (a 50 MB text
result), ``fail`` (an internal error every time), ``hang`` (never answers in time), ``slow``
(answers after a second: in flight when another call crashes the server), ``crash``
(the server process exits on every call), ``crash_once`` (exits on the first call of the
process tree, answers after a restart: a marker file in ``$HOSTILE_MCP_DIR``), ``ok``.

Every start of the process appends a line to ``$HOSTILE_MCP_DIR/starts`` and every call of a
tool a line to ``$HOSTILE_MCP_DIR/calls`` (what reached the server, for request counts).

Run as ``python -m tests.hostile.mcp_executor`` from the repository root.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

DEEP_LEVELS = 100_000

server = MCPServer(name="hostile-mcp")


def _dir() -> Path:
    return Path(os.environ.get("HOSTILE_MCP_DIR", "."))


def _log(what: str, line: str) -> None:
    with (_dir() / what).open("a", encoding="utf-8") as f:
        f.write(line + "\n")


@server.tool()
def ok(q: str = "x") -> dict[str, Any]:
    """A small, well-formed answer."""
    _log("calls", "ok")
    return {"items": [{"q": q, "n": 1}]}


@server.tool(structured_output=False)
def deep() -> str:
    """A JSON text nested 100,000 levels deep."""
    _log("calls", "deep")
    return "[" * DEEP_LEVELS + "]" * DEEP_LEVELS


@server.tool(structured_output=False)
def big(mb: int = 50) -> str:
    """A text result of `mb` MB (50 by default)."""
    _log("calls", "big")
    return '{"blob": "' + "x" * (mb * 1024 * 1024) + '"}'


@server.tool()
def fail() -> str:
    """Fails with an internal server error on every call."""
    _log("calls", "fail")
    raise ToolError("internal server error")


@server.tool()
async def hang() -> str:
    """Answers far later than any timeout (without blocking the server's other tools)."""
    _log("calls", "hang")
    await asyncio.sleep(30)
    return "late"


@server.tool()
async def slow(q: str = "x") -> dict[str, Any]:
    """A small answer after one second (without blocking the server's other tools)."""
    _log("calls", "slow")
    await asyncio.sleep(1.0)
    return {"items": [{"q": q, "n": 2}]}


@server.tool()
def crash() -> str:
    """Kills the server process on every call."""
    _log("calls", "crash")
    os._exit(3)


@server.tool()
def crash_once() -> dict[str, Any]:
    """Kills the server on its first call ever (marker file), answers after the restart."""
    _log("calls", "crash_once")
    marker = _dir() / "crashed_once"
    if not marker.exists():
        marker.write_text("1", encoding="utf-8")
        os._exit(3)
    return {"items": [{"recovered": True}]}


def main() -> None:
    _log("starts", str(os.getpid()))
    server.run("stdio")


if __name__ == "__main__":
    main()
