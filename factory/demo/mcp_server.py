"""`geo-mcp`: a real MCP server (stdio) for the aviation domain.

Built on the `mcp` SDK's `MCPServer` and on real airport data shipped in the
`airportsdata` package (MIT; ~8k airports with an IATA code): coordinates,
time zones, great-circle distances and airports near a given one.

Run it as ``python -m factory.demo.mcp_server`` (stdio transport).  Every tool
returns structured content (a JSON object described by its output schema);
unknown codes and bad arguments are reported as tool errors (``isError``).
"""

from __future__ import annotations

import logging
import math
from functools import lru_cache
from typing import Annotated, Any

import airportsdata
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

logger = logging.getLogger(__name__)

EARTH_RADIUS_KM = 6371.0088
KM_PER_MILE = 1.609344
MAX_NEAR_RESULTS = 100

Iata = Annotated[str, Field(description="Three-letter IATA airport code, e.g. JFK or ICN.")]

server = MCPServer(
    name="geo-mcp",
    instructions="Geographic facts about airports that have an IATA code (~8k, airportsdata's IATA table; airfields "
    "without one are not covered): coordinates, subdivisions, time zones, distances, airports nearby.",
)


@lru_cache(maxsize=1)
def _airports() -> dict[str, Any]:
    """Airports keyed by IATA code (loaded once from `airportsdata`)."""
    return airportsdata.load("IATA")


def _get(iata: str) -> dict[str, Any]:
    code = (iata or "").strip().upper()
    if len(code) != 3 or not code.isalpha():
        raise ToolError(f"invalid IATA code {iata!r}: expected three letters such as 'JFK'")
    rec = _airports().get(code)
    if rec is None:
        raise ToolError(f"unknown IATA airport code {code!r}")
    return rec


def _haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


class AirportCoordinates(BaseModel):
    iata: str = Field(description="IATA airport code.")
    icao: str = Field(description="ICAO airport code.")
    name: str = Field(description="Airport name.")
    city: str = Field(description="City served.")
    subdivision: str = Field(description="State / province / region.")
    country: str = Field(description="ISO 3166-1 alpha-2 country code.")
    lat: float = Field(description="Latitude in decimal degrees.")
    lon: float = Field(description="Longitude in decimal degrees.")
    elevation_ft: float = Field(description="Elevation in feet.")
    tz: str = Field(description="IANA time zone, e.g. America/New_York.")


class Distance(BaseModel):
    origin: str = Field(description="IATA code of the origin airport.")
    dest: str = Field(description="IATA code of the destination airport.")
    km: float = Field(description="Great-circle distance in kilometres.")
    miles: float = Field(description="Great-circle distance in statute miles.")


class NearbyAirport(BaseModel):
    iata: str = Field(description="IATA airport code.")
    name: str = Field(description="Airport name.")
    city: str = Field(description="City served.")
    country: str = Field(description="ISO 3166-1 alpha-2 country code.")
    distance_km: float = Field(description="Great-circle distance from the reference airport in km.")


class AirportsNear(BaseModel):
    origin: str = Field(description="IATA code of the reference airport.")
    radius_km: float = Field(description="Search radius in kilometres.")
    count: int = Field(description="Number of airports returned.")
    airports: list[NearbyAirport] = Field(description="Airports within the radius, nearest first.")


class AirportTimezone(BaseModel):
    iata: str = Field(description="IATA airport code.")
    tz: str = Field(description="IANA time zone name.")
    country: str = Field(description="ISO 3166-1 alpha-2 country code.")


def _coords(rec: dict[str, Any]) -> AirportCoordinates:
    return AirportCoordinates(
        iata=rec["iata"],
        icao=rec.get("icao") or "",
        name=rec.get("name") or "",
        city=rec.get("city") or "",
        subdivision=rec.get("subd") or "",
        country=rec.get("country") or "",
        lat=float(rec["lat"]),
        lon=float(rec["lon"]),
        elevation_ft=float(rec.get("elevation") or 0.0),
        tz=rec.get("tz") or "",
    )


@server.tool()
def airport_coordinates(iata: Iata) -> AirportCoordinates:
    """Location facts of an airport by IATA code: IATA and ICAO codes, name, city served, subdivision (state,
    province or region), country, latitude, longitude, elevation, time zone."""
    return _coords(_get(iata))


@server.tool()
def great_circle_distance(
    origin_iata: Annotated[str, Field(description="IATA code of the origin airport.")],
    dest_iata: Annotated[str, Field(description="IATA code of the destination airport.")],
) -> Distance:
    """Great-circle distance between two airports given by IATA codes, in kilometres and miles."""
    a, b = _get(origin_iata), _get(dest_iata)
    km = _haversine_km(float(a["lat"]), float(a["lon"]), float(b["lat"]), float(b["lon"]))
    return Distance(origin=a["iata"], dest=b["iata"], km=round(km, 1), miles=round(km / KM_PER_MILE, 1))


@server.tool()
def airports_near(
    iata: Annotated[str, Field(description="IATA code of the reference airport, e.g. JFK or ICN.")],
    radius_km: Annotated[
        float, Field(description="Search radius in kilometres (0-5000]; 100 km when not given.")
    ] = 100.0,
    limit: Annotated[
        int,
        Field(
            ge=1,
            le=MAX_NEAR_RESULTS,
            description="Maximum number of airports returned (1-100); 10 when not given, so only the 10 nearest "
            "are returned unless a larger limit is sent.",
        ),
    ] = 10,
) -> AirportsNear:
    """Nearby airports: those within radius_km (100 km when not given) of the reference airport (IATA code),
    nearest first, at most `limit` of them (10 when not given; 1-100). Only airports with an IATA code are
    counted: airfields without one (many military and private strips) are not."""
    if radius_km <= 0 or radius_km > 5000:
        raise ToolError(f"radius_km must be in (0, 5000], got {radius_km}")
    if limit < 1 or limit > MAX_NEAR_RESULTS:
        raise ToolError(f"limit must be in [1, {MAX_NEAR_RESULTS}], got {limit}")
    ref = _get(iata)
    lat, lon = float(ref["lat"]), float(ref["lon"])
    found: list[NearbyAirport] = []
    for code, rec in _airports().items():
        if code == ref["iata"]:
            continue
        d = _haversine_km(lat, lon, float(rec["lat"]), float(rec["lon"]))
        if d <= radius_km:
            found.append(
                NearbyAirport(
                    iata=code,
                    name=rec.get("name") or "",
                    city=rec.get("city") or "",
                    country=rec.get("country") or "",
                    distance_km=round(d, 1),
                )
            )
    found.sort(key=lambda n: (n.distance_km, n.iata))
    found = found[:limit]
    return AirportsNear(origin=ref["iata"], radius_km=radius_km, count=len(found), airports=found)


@server.tool()
def airport_timezone(iata: Iata) -> AirportTimezone:
    """IANA time zone of an airport given by IATA code."""
    rec = _get(iata)
    return AirportTimezone(iata=rec["iata"], tz=rec.get("tz") or "", country=rec.get("country") or "")


def main() -> None:
    """Serve over stdio until the client closes stdin."""
    _airports()  # load before accepting requests
    server.run("stdio")


if __name__ == "__main__":
    main()
