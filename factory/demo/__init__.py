"""The bundled demo service: real public data behind open-API-style platforms.

`create_app(demo_cfg)` builds the FastAPI application; `DemoService` starts or reuses a
running instance; `python -m factory.demo` runs it. Imports are lazy so that sibling
modules (e.g. the MCP server) do not pay for FastAPI and the data stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factory.demo.app import PLATFORMS, create_app
    from factory.demo.service import DemoService, DemoServiceError

__all__ = ["PLATFORMS", "DemoService", "DemoServiceError", "create_app"]


def __getattr__(name: str) -> Any:
    if name in ("PLATFORMS", "create_app"):
        from factory.demo import app

        return getattr(app, name)
    if name in ("DemoService", "DemoServiceError"):
        from factory.demo import service

        return getattr(service, name)
    raise AttributeError(f"module 'factory.demo' has no attribute {name!r}")
