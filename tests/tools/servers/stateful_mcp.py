"""A small stateful MCP server over stdio (real SDK) for the session tests of the MCP transport.

``add_item`` changes the server's state (annotated ``readOnlyHint: false``, not destructive),
``list_items`` reads it (``readOnlyHint: true``), ``crash_once`` kills the process on its first call
of the whole test (a marker file), ``die`` kills it on every call. Every start appends the pid to
``$STATEFUL_MCP_DIR/starts``.

Run as ``python -m tests.tools.servers.stateful_mcp`` from the repository root.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer(name="stateful-mcp")
ITEMS: list[str] = []


def _dir() -> Path:
    return Path(os.environ.get("STATEFUL_MCP_DIR", "."))


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def add_item(name: str) -> dict[str, Any]:
    """Add an item to this server's list."""
    ITEMS.append(name)
    return {"items": list(ITEMS), "pid": os.getpid()}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_items() -> dict[str, Any]:
    """The items added so far, and the server's process id."""
    return {"items": list(ITEMS), "pid": os.getpid()}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def crash_once() -> dict[str, Any]:
    """Kills the server on its first call ever (marker file), answers after the restart."""
    marker = _dir() / "crashed_once"
    if not marker.exists():
        marker.write_text("1", encoding="utf-8")
        os._exit(3)
    return {"recovered": True, "pid": os.getpid()}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def die() -> str:
    """Kills the server process on every call."""
    os._exit(3)


def main() -> None:
    with (_dir() / "starts").open("a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
    server.run("stdio")


if __name__ == "__main__":
    main()
