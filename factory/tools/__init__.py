"""Tools: contracts (ToolSpec, outcomes), loaders (OpenAPI, MCP), executor, registry, fingerprints.

Public API (imported lazily, so ``factory.tools.spec`` stays cheap to import)::

    from factory.tools import (
        ToolSpec, CallResult, Outcome, tool_id,   # contracts
        load_openapi, fetch_spec,                 # OpenAPI 3.x / Swagger 2.0
        load_mcp, load_mcp_async,                 # MCP servers (stdio / streamable HTTP)
        SourceError, resolve_source, load_source_tools, load_domain_tools,
        surface_fingerprint, fingerprint_by_platform,
        ToolExecutor, run_calls,                  # execution (transports in factory.tools.transports)
        ToolRegistry, ToolResolutionError, executor_factory,
    )

Module layering (no module imports one that imports it back): ``spec``, ``outcomes``,
``locators`` (SourceError, locators) → ``schema`` (JSON-Schema helpers) → loaders
``openapi``, ``mcp`` → ``sources``; ``transports`` → ``executor`` → ``registry``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factory.tools.executor import ToolExecutor, run_calls
    from factory.tools.fingerprint import fingerprint_by_platform, surface_fingerprint
    from factory.tools.locators import SourceError, resolve_source
    from factory.tools.mcp import classify_error_text, interpret_result, load_mcp, load_mcp_async
    from factory.tools.openapi import fetch_spec, load_openapi
    from factory.tools.outcomes import OUTCOME_CLASSES, CallResult, Outcome
    from factory.tools.registry import ToolRegistry, ToolResolutionError, executor_factory
    from factory.tools.sources import load_domain_tools, load_source_tools
    from factory.tools.spec import (
        GenericParams,
        KeyAcquisition,
        OutputField,
        ResultEnvelope,
        SourceRef,
        ToolSpec,
        tool_id,
    )
    from factory.tools.transports.http import classify_http_error

_EXPORTS: dict[str, str] = {
    "ToolExecutor": "executor",
    "classify_http_error": "transports.http",
    "run_calls": "executor",
    "fingerprint_by_platform": "fingerprint",
    "surface_fingerprint": "fingerprint",
    "classify_error_text": "mcp",
    "interpret_result": "mcp",
    "load_mcp": "mcp",
    "load_mcp_async": "mcp",
    "fetch_spec": "openapi",
    "load_openapi": "openapi",
    "OUTCOME_CLASSES": "outcomes",
    "CallResult": "outcomes",
    "Outcome": "outcomes",
    "SourceError": "locators",
    "load_domain_tools": "sources",
    "load_source_tools": "sources",
    "resolve_source": "locators",
    "ToolRegistry": "registry",
    "ToolResolutionError": "registry",
    "executor_factory": "registry",
    "GenericParams": "spec",
    "KeyAcquisition": "spec",
    "OutputField": "spec",
    "ResultEnvelope": "spec",
    "SourceRef": "spec",
    "ToolSpec": "spec",
    "tool_id": "spec",
}

__all__ = [
    "CallResult",
    "GenericParams",
    "KeyAcquisition",
    "OUTCOME_CLASSES",
    "Outcome",
    "OutputField",
    "ResultEnvelope",
    "SourceError",
    "SourceRef",
    "ToolExecutor",
    "ToolRegistry",
    "ToolResolutionError",
    "ToolSpec",
    "classify_error_text",
    "classify_http_error",
    "executor_factory",
    "fetch_spec",
    "fingerprint_by_platform",
    "interpret_result",
    "load_domain_tools",
    "load_mcp",
    "load_mcp_async",
    "load_openapi",
    "load_source_tools",
    "resolve_source",
    "run_calls",
    "surface_fingerprint",
    "tool_id",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'factory.tools' has no attribute {name!r}")
    return getattr(importlib.import_module(f"factory.tools.{module}"), name)
