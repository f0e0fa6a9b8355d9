"""Tools: contracts (ToolSpec, outcomes), loaders (OpenAPI, MCP), executor, fingerprints.

Public API::

    from factory.tools import (
        ToolSpec, CallResult, Outcome,            # contracts
        load_openapi, fetch_spec,                 # OpenAPI 3.x / Swagger 2.0
        load_mcp, load_mcp_async,                 # MCP servers (stdio / streamable HTTP)
        SourceError, resolve_source, load_source_tools, load_domain_tools,
        surface_fingerprint, fingerprint_by_platform,
        ToolExecutor, run_calls,
    )
"""

from factory.tools.executor import ToolExecutor, classify_http_error, run_calls
from factory.tools.fingerprint import fingerprint_by_platform, surface_fingerprint
from factory.tools.mcp import classify_error_text, interpret_result, load_mcp, load_mcp_async
from factory.tools.openapi import fetch_spec, load_openapi
from factory.tools.outcomes import OUTCOME_CLASSES, CallResult, Outcome
from factory.tools.sources import SourceError, load_domain_tools, load_source_tools, resolve_source
from factory.tools.spec import (
    GenericParams,
    KeyAcquisition,
    OutputField,
    ResultEnvelope,
    SourceRef,
    ToolSpec,
)

__all__ = [
    "OUTCOME_CLASSES",
    "CallResult",
    "GenericParams",
    "KeyAcquisition",
    "Outcome",
    "OutputField",
    "ResultEnvelope",
    "SourceError",
    "SourceRef",
    "ToolExecutor",
    "ToolSpec",
    "classify_error_text",
    "classify_http_error",
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
]
