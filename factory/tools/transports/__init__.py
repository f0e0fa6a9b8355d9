"""Transports: one module per source kind, and the one table the executor dispatches on.

A new source kind is a module with a `Transport` subclass plus one line in `TRANSPORTS`.
"""

from factory.tools.transports.base import Exchange, NotSent, Transport, TransportOptions
from factory.tools.transports.http import HttpTransport
from factory.tools.transports.mcp import McpTransport
from factory.tools.transports.retrieval import RetrievalTransport

# SourceRef.kind → the transport executing tools of that kind.
TRANSPORTS: dict[str, type[Transport]] = {
    "openapi": HttpTransport,
    "mcp": McpTransport,
    "retrieval": RetrievalTransport,
}

__all__ = [
    "TRANSPORTS",
    "Exchange",
    "HttpTransport",
    "McpTransport",
    "NotSent",
    "RetrievalTransport",
    "Transport",
    "TransportOptions",
]
