"""Tool sources: resolve a configured source to a spec/server and load its tools.

A domain declares its sources in `factory.yaml` (`SourceConfig`).  This module
maps them to concrete locators (``demo://<platform>`` → the bundled demo
service), dispatches to the OpenAPI or MCP loader, and checks the domain-level
invariants (tool names unique within a domain).  Every failure surfaces as a
`SourceError` whose message names the source.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
from typing import TYPE_CHECKING

from factory.paths import is_uri, resolve_path

if TYPE_CHECKING:
    from factory.config import DemoConfig, DomainConfig, ProjectConfig, SourceConfig
    from factory.tools.spec import ToolSpec

logger = logging.getLogger(__name__)

DEMO_SCHEME = "demo://"


class SourceError(RuntimeError):
    """A tool source that cannot be read or used; the message names the source and the problem."""


def resolve_source(
    src: SourceConfig, demo: DemoConfig, base_dir: str | os.PathLike | None = None
) -> tuple[str, str | None]:
    """Return ``(spec_locator, base_url)`` for a source.

    - openapi ``demo://<platform>``: spec ``{demo.base_url}/{platform}/openapi.json``,
      base URL ``{demo.base_url}/{platform}`` (an explicit ``base_url`` wins);
    - other openapi sources: ``(spec, base_url)`` as configured (``base_url`` may be
      None: the loader then takes it from the spec); a relative spec file path is taken
      relative to `base_dir` (the project folder) when given;
    - mcp: ``(command line or URL, url)``.
    """
    if src.kind == "mcp":
        return mcp_locator(src), src.url
    spec = str(src.spec)
    if spec.startswith(DEMO_SCHEME):
        platform = spec[len(DEMO_SCHEME) :].strip("/")
        if not platform:
            raise SourceError(f"source {spec!r}: demo:// needs a platform name, e.g. demo://flight-ops")
        root = demo.base_url.rstrip("/")
        return f"{root}/{platform}/openapi.json", src.base_url or f"{root}/{platform}"
    if base_dir is not None and not is_uri(spec):
        spec = str(resolve_path(spec, base_dir))
    return spec, src.base_url


def mcp_locator(src: SourceConfig) -> str:
    """The locator recorded in ToolSpec.source for an MCP source: a shell-quoted command line or the URL."""
    if src.command:
        return shlex.join(src.command)
    return str(src.url)


def mcp_command(locator_or_command: str | list[str]) -> list[str]:
    """The argv to start an MCP server; a bare ``python``/``python3`` means this interpreter."""
    argv = shlex.split(locator_or_command) if isinstance(locator_or_command, str) else list(locator_or_command)
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


def load_source_tools(
    src: SourceConfig, domain: str, demo: DemoConfig, base_dir: str | os.PathLike | None = None
) -> list[ToolSpec]:
    """Load the ToolSpecs of one source (OpenAPI document or MCP server)."""
    from factory.tools.mcp import load_mcp
    from factory.tools.openapi import fetch_spec, load_openapi

    if src.kind == "mcp":
        return load_mcp(src, domain)
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
            loaded = load_source_tools(src, domain_cfg.name, project_cfg.demo, project_cfg.project_dir)
        except SourceError as e:
            msg = str(e)
            raise SourceError(msg if src.locator in msg else f"{label}: {msg}") from e
        except Exception as e:  # a loader bug or an unexpected library error: still name the source
            raise SourceError(f"{label}: {type(e).__name__}: {e}") from e
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
