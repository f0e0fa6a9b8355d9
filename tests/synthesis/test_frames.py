"""Tool frames (issue 15, item 1): the nouns, relations and field kinds of the tool_lexicon's `nouns` section.

Built by rules from the value types of the real demo tool surfaces (in-process REST documents and the MCP server's
tools/list), with the reviewed lexicon/<domain>.yaml files laid over them.
"""

from pathlib import Path
from typing import Any

import pytest
import yaml

from factory import frames
from factory.semtypes import Overrides, infer_types
from tests.synthesis.test_phrasing import demo_inventories

LEXICON_DIR = Path(__file__).resolve().parents[2] / "lexicon"


@pytest.fixture(scope="module")
def specs():
    from factory.tools.registry import ToolRegistry

    return ToolRegistry.from_inventories(demo_inventories())


@pytest.fixture(scope="module")
def types(specs) -> dict[str, Any]:
    inf = infer_types(specs, {}, Overrides())
    return {t: inf.tool_types(t) for t in inf.entities}


def _by_name(fr: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in fr.values() if f["tool"] == name)


def test_rules_tell_display_names_keys_and_references(specs, types):
    fr = frames.build_frames(specs, types)
    album = _by_name(fr, "get_album")
    assert album["entity"] == "album" and album["noun"]["en"] == {"sing": "album", "plural": "albums"}
    kinds = {f: album["fields"][f]["kind"] for f in ("album_id", "title", "artist_id", "track_count")}
    assert kinds == {"album_id": "key", "title": "display", "artist_id": "reference", "track_count": "measure"}
    assert album["fields"]["artist_id"]["noun"]["en"] == "artist"  # an album's artist_id names its artist
    # the description "List an artist's albums" gives the noun without its owner; counters by entity
    albums = _by_name(fr, "list_artist_albums")
    assert albums["noun"]["en"]["plural"] == "albums" and albums["noun"]["ko"]["counter"] == "장"
    assert albums["params"]["artist_id"]["kind"] == "reference"  # the relation: the albums of an artist
    flight = _by_name(fr, "get_flight")
    nouns = {f: flight["fields"][f].get("noun", {}).get("en") for f in ("origin", "dest", "carrier", "tailnum")}
    assert nouns == {"origin": "origin airport", "dest": "destination airport", "carrier": "airline",
                     "tailnum": "aircraft"}  # fmt: skip
    assert flight["fields"]["flight_number"]["kind"] == "display" and flight["fields"]["flight_id"]["kind"] == "key"
    assert _by_name(fr, "get_airport_by_iata")["fields"]["iata"]["kind"] == "display"  # a public code
    # a state-changing tool names no records; a mass noun is counted in records
    assert _by_name(fr, "add_track_to_playlist")["action"] and not album["action"]
    assert _by_name(fr, "get_hourly_weather")["noun"]["en"]["sing"] == "weather record"
    assert all(f["source"] == "rules" for f in fr.values())


def test_korean_nouns_come_from_korean_descriptions(specs, types):
    fr = frames.build_frames(specs, types)
    emd = _by_name(fr, "list_admin_emd")
    assert emd["noun"]["ko"] == {"noun": "읍면동", "counter": "곳"}
    assert _by_name(fr, "list_census_sigungu")["fields"]["sidoNm"]["noun"]["ko"] == "시도"


def test_the_reviewed_file_wins_and_says_so(specs, types):
    korea = {t: s for t, s in specs.items() if s.domain == "korea"}
    ov = frames.load_lexicon_overrides(LEXICON_DIR / "korea.yaml")
    fr = frames.build_frames(korea, {t: v for t, v in types.items() if t in korea}, ov)
    items = _by_name(fr, "list_census_stat_types")
    assert items["noun"]["ko"]["noun"] == "통계 항목" and items["source"] == "override"
    assert "noun.ko" in items["overridden"] and items["values"]["housing"] == {"ko": "주택"}
    stats = _by_name(fr, "get_census_statistics")
    assert stats["noun"]["ko"] == {"noun": "센서스 통계", "counter": "건"}


def test_one_table_of_the_lexicon_gives_each_platform_its_codes_words(specs, types, tmp_path):
    """The 시도 that have 일반구 are listed once (lexicon/korea.yaml `tables.districts`, by name and by each platform's
    code): the two platforms' sigungu listings read their own codes from it (경기도 is 41 at 행정안전부, 31 at 통계청;
    31 at 행정안전부 is 울산광역시), and the census bulletins' passage lexicon reads the names."""
    korea = {t: s for t, s in specs.items() if s.domain == "korea"}
    ov = frames.load_lexicon_overrides(LEXICON_DIR / "korea.yaml")
    fr = frames.build_frames(korea, {t: v for t, v in types.items() if t in korea}, ov)
    admin, census = _by_name(fr, "list_admin_sigungu")["noun_by"], _by_name(fr, "list_census_sigungu")["noun_by"]
    assert admin["param"] == census["param"] == "sidoCd"
    assert admin["ko"]["41"] == census["ko"]["31"] == "시·군·구(일반구 단위)"
    assert admin["ko"]["31"] == "구·군" and admin["ko"]["11"] == census["ko"]["11"] == "구"
    assert admin["ko"]["46"] == census["ko"]["36"] == "시·군"  # 전라남도: no 일반구, no '(일반구 단위)'
    general = {k for k, w in admin["ko"].items() if "일반구" in w}
    assert general == {"41", "43", "44", "45", "52", "47", "48"}
    assert {k for k, w in census["ko"].items() if "일반구" in w} == {"31", "33", "34", "35", "37", "38"}
    assert frames.table_words(ov["tables"]["districts"], "ko")["전북특별자치도"] == "시·군·구(일반구 단위)"
    # a tool entry reading a table the file does not have is an error naming it
    bad = tmp_path / "korea.yaml"
    bad.write_text(yaml.safe_dump({"tools": {"list_admin_sigungu": {"noun_by": {"param": "sidoCd", "table": "x"}}}}))
    with pytest.raises(frames.LexiconFileError, match="reads table 'x', which is not given"):
        frames.load_lexicon_overrides(bad)


def test_a_lexicon_file_naming_what_does_not_exist_is_an_error(specs, tmp_path):
    music = {t: s for t, s in specs.items() if s.domain == "music"}
    bad = tmp_path / "music.yaml"
    bad.write_text(yaml.safe_dump({"tools": {"get_album": {"fields": {"artist": {"label": {"en": "x"}}}}}}))
    with pytest.raises(frames.LexiconFileError, match="get_album.*has no field 'artist'"):
        frames.check_lexicon_overrides(frames.load_lexicon_overrides(bad), music)
    bad.write_text(yaml.safe_dump({"tools": {"get_albums": {}}}))
    with pytest.raises(frames.LexiconFileError, match="no tool 'get_albums'"):
        frames.check_lexicon_overrides(frames.load_lexicon_overrides(bad), music)
    # not strict (the lexicon asset's default, lexicon.stale_entries: warn): every such entry is reported, and
    # pruning keeps the entries that exist
    bad.write_text(
        yaml.safe_dump(
            {"tools": {"get_albums": {}, "get_album": {"fields": {"artist": {}, "title": {"label": {"en": "name"}}}}}}
        )
    )
    ov = frames.load_lexicon_overrides(bad)
    problems = frames.check_lexicon_overrides(ov, music, strict=False)
    assert len(problems) == 2
    assert any("no tool 'get_albums'" in p for p in problems) and any("has no field 'artist'" in p for p in problems)
    pruned = frames.prune_lexicon_overrides(ov, music)
    assert pruned["tools"] == {"get_album": {"fields": {"title": {"label": {"en": "name"}}}}}
    assert frames.check_lexicon_overrides(pruned, music) == []
    bad.write_text(yaml.safe_dump({"nouns": {}}))
    with pytest.raises(frames.LexiconFileError, match="expected only the keys"):
        frames.load_lexicon_overrides(bad)


def test_tool_lexicon_nouns_section_and_preview(specs, types, tmp_path):
    """build_lexicon's `nouns`: the project's lexicon/<domain>.yaml read beside types/, every tool's frame, and a
    preview table per tool in the metadata."""
    from factory.config import load_config
    from factory.lexicon import lexicon_metadata, tool_nouns
    from tests.conftest import write_config

    cfg = load_config(write_config(tmp_path))
    aviation = {t: s for t, s in specs.items() if s.domain == "aviation"}
    nouns = tool_nouns(cfg, "aviation", aviation, {t: v for t, v in types.items() if t in aviation})
    assert nouns["files"] == [str(tmp_path / "lexicon" / "aviation.yaml")]
    near = _by_name(nouns["tools"], "airports_near")
    assert near["relation"]["en"].startswith("the {plural} within {radius_km} km of {owner}")
    assert nouns["sources"]["override"] >= 1 and nouns["sources"]["rules"] >= 1
    rows = frames.preview_rows(nouns["tools"])
    assert {r["tool"] for r in rows} == {s.name for t, s in aviation.items() if t in types}  # keyed tools have none
    value = {"value_types": {"tools": {}, "slots": [], "systems": [], "comparisons": [],
                             "overrides": {"applied": [], "files": []}}, "nouns": nouns}  # fmt: skip
    meta = lexicon_metadata(value)
    assert "airports_near" in str(meta["nouns_preview"]) and meta["lexicon_files"] == nouns["files"]
