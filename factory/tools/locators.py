"""Where a tool source is and what its platform is called; the `SourceError` every loader raises.

This module imports no loader: the loaders (`factory.tools.openapi`, `factory.tools.mcp`)
and the transports depend on it, `factory.tools.sources` dispatches to the loaders, and
nothing here depends back on any of them.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from typing import TYPE_CHECKING

from factory.paths import is_uri, resolve_path

if TYPE_CHECKING:
    from factory.config import DemoConfig, SourceConfig

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
    if src.kind == "retrieval":
        return src.locator, None
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


def slugify(text: str) -> str:
    """Lowercase slug of a title (letters of any script kept, other runs become ``-``): a platform name."""
    s = re.sub(r"[\W_]+", "-", text.lower()).strip("-")
    return s or "api"
