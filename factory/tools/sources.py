"""Tool sources: load the tools of a configured source, and of a domain.

A domain declares its sources in `factory.yaml` (`SourceConfig`).  This module
dispatches each to its kind's loader (`LOADERS`: OpenAPI document, MCP server; a retrieval
source's loader reads the domain's published index) and
checks the domain-level invariants (tool names unique within a domain).  Every
failure surfaces as a `SourceError` whose message names the source.  Locators
(``demo://<platform>`` → the bundled demo service) and `SourceError` itself live in
`factory.tools.locators`, which imports no loader: this module depends on the
loaders, never the reverse.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from factory.tools.locators import SourceError, resolve_source
from factory.tools.mcp import load_mcp
from factory.tools.openapi import TOOL_NAME, fetch_spec, load_openapi, valid_tool_name
from factory.tools.retrieval import load_retrieval

if TYPE_CHECKING:
    from factory.config import DemoConfig, DomainConfig, ProjectConfig, SourceConfig
    from factory.tools.spec import ToolSpec

__all__ = ["LOADERS", "SourceError", "load_domain_tools", "load_source_tools", "resolve_source"]

logger = logging.getLogger(__name__)


def load_source_tools(
    src: SourceConfig, domain: str, demo: DemoConfig, base_dir: str | os.PathLike | None = None
) -> list[ToolSpec]:
    """Load the ToolSpecs of one source with its kind's loader (OpenAPI document or MCP server);
    relative spec files are taken relative to `base_dir` (the project folder)."""
    return LOADERS[src.kind](src, domain, demo, base_dir)


def _load_mcp_source(
    src: SourceConfig, domain: str, demo: DemoConfig, base_dir: str | os.PathLike | None = None
) -> list[ToolSpec]:
    return load_mcp(src, domain, base_dir)


def _load_retrieval_source(
    src: SourceConfig, domain: str, demo: DemoConfig, base_dir: str | os.PathLike | None = None
) -> list[ToolSpec]:
    raise SourceError(
        f"{src.locator}: a retrieval source reads its domain's published index, which needs the project config; "
        "load it with load_domain_tools"
    )


def _load_openapi_source(
    src: SourceConfig, domain: str, demo: DemoConfig, base_dir: str | os.PathLike | None = None
) -> list[ToolSpec]:
    spec_locator, base_url = resolve_source(src, demo, base_dir)
    doc = fetch_spec(spec_locator)
    return load_openapi(
        doc,
        domain=domain,
        platform=src.platform,
        spec_locator=spec_locator,
        base_url=base_url,
        realtime_tools=src.realtime_tools,
    )


# One loader per source kind (`SourceKind`): ``(source, domain, demo config, project folder) → ToolSpecs``.
LOADERS: dict[str, Callable[[SourceConfig, str, DemoConfig, str | os.PathLike | None], list[ToolSpec]]] = {
    "openapi": _load_openapi_source,
    "mcp": _load_mcp_source,
    "retrieval": _load_retrieval_source,  # load_domain_tools calls factory.tools.retrieval.load_retrieval
}


def function_names(tools: list[ToolSpec]) -> list[ToolSpec]:
    """The tools with valid function names (``^[a-zA-Z0-9_-]{1,64}$``, `valid_tool_name`): a tool
    whose name is not one gets a deterministic one, its own kept as `original_name` (MCP calls
    use it)."""
    taken = {t.name for t in tools if TOOL_NAME.match(t.name)}  # duplicates among these are reported as such
    out = []
    for t in tools:
        name = t.name if TOOL_NAME.match(t.name) else valid_tool_name(t.name, taken)
        taken.add(name)
        if name != t.name:
            logger.warning("tool %r of %s is named %r (a valid function name)", t.name, t.platform, name)
            t = t.model_copy(update={"name": name, "original_name": t.original_name or t.name})
        out.append(t)
    return out


def load_domain_tools(domain_cfg: DomainConfig, project_cfg: ProjectConfig) -> list[ToolSpec]:
    """All tools of a domain, in source order.

    Raises SourceError naming the source when one cannot be loaded, and when two
    tools of the domain share a name.
    """
    tools: list[ToolSpec] = []
    owner: dict[str, str] = {}
    for src in domain_cfg.sources:
        label = f"{src.kind} source {src.platform or ''} ({src.locator})".replace("  ", " ")
        try:
            if src.kind == "retrieval":  # the index is a project artifact: its loader needs the config
                loaded = load_retrieval(src, domain_cfg.name, project_cfg)
            else:
                loaded = load_source_tools(src, domain_cfg.name, project_cfg.demo, project_cfg.project_dir)
        except SourceError as e:
            msg = str(e)
            raise SourceError(msg if src.locator in msg else f"{label}: {msg}") from e
        except Exception as e:  # a loader bug or an unexpected library error: still name the source
            raise SourceError(f"{label}: {type(e).__name__}: {e}") from e
        loaded = function_names(loaded)
        if src.responses == "record":
            loaded = [t.model_copy(update={"source": t.source.model_copy(update={"recorded": True})}) for t in loaded]
        for t in loaded:
            if t.name in owner:
                raise SourceError(
                    f"domain {domain_cfg.name!r}: duplicate tool name {t.name!r} from {label}"
                    f" (already defined by {owner[t.name]})"
                )
            owner[t.name] = label
        logger.info("domain %s: %d tools from %s", domain_cfg.name, len(loaded), label)
        tools.extend(loaded)
    return tools
