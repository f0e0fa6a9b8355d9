"""Where a source's data comes from and under which licence, for the dataset card (issue 16 item 5).

- configured (`license` / `data` of the source in factory.yaml): stated as configured;
- openapi: the document's `info.license` ({name, identifier (SPDX), url}) and `info.version`; the bundled
  demo service also publishes `info.x-data-sources` (package, installed version, licence, data);
- mcp and other kinds: servers publish no licence, so 'unknown' unless configured.

Never raises: a document that cannot be read gives 'unknown' with the reason (ingestion fails on it anyway).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from factory.tools.locators import SourceError, resolve_source
from factory.tools.openapi import fetch_spec

if TYPE_CHECKING:
    from factory.config import DemoConfig, SourceConfig

UNKNOWN = "unknown"


def from_openapi_info(info: Any) -> dict[str, Any]:
    """{license, license_id, license_url, api_version, data} from an OpenAPI `info` object."""
    info = info if isinstance(info, dict) else {}
    lic = info.get("license") if isinstance(info.get("license"), dict) else {}
    data = [
        {k: str(d.get(k) or "") for k in ("package", "version", "license", "data")}
        for d in info.get("x-data-sources") or []
        if isinstance(d, dict)
    ]
    return {
        "license": str(lic.get("name") or lic.get("identifier") or UNKNOWN),
        "license_id": str(lic.get("identifier") or "") or None,
        "license_url": str(lic.get("url") or "") or None,
        "api_version": str(info.get("version") or "") or None,
        "data": data,
        "from": "info.license" if lic else "none stated",
    }


def source_provenance(src: SourceConfig, demo: DemoConfig, base_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """The licence and data of one source (see module doc)."""
    out: dict[str, Any] = {
        "license": UNKNOWN,
        "license_id": None,
        "license_url": None,
        "api_version": None,
        "data": [],
        "from": "none stated" if src.kind != "mcp" else "MCP publishes no licence",
    }
    if src.kind == "openapi":
        try:
            locator, _ = resolve_source(src, demo, base_dir)
            out = from_openapi_info(fetch_spec(locator).get("info"))
        except (SourceError, OSError, ValueError) as e:
            out["from"] = f"spec not readable: {str(e)[:200]}"
    if src.license:
        out.update({"license": src.license, "license_id": None, "from": "configured"})
        if _spdx_like(src.license):
            out["license_id"] = src.license
    if src.data:
        out["data"] = [{"package": "", "version": "", "license": out["license"], "data": src.data}]
    return out


def _spdx_like(text: str) -> bool:
    return bool(text) and " " not in text.strip() and text.strip().lower() not in (UNKNOWN, "other")
