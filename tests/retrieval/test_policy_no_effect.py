"""no_effect policies that test something (blind read s12 pol: 7 of 10 no_effect policies banned a platform the question
would never touch, "do not use the store API" on an albums-by-artist question; VAKRA's no-effect policy bans a source
that could serve the question while a permitted source still answers), and platform bans that read the same in every
task (the chinook-store ban listed its key tool and create_playlist in one task and not in five others)."""

import yaml

from factory.config import parse_config
from factory.retrieval import policy


def _tool(platform, name, fields, params=(), required=(), key=False, state=False, kind="openapi"):
    return {
        "name": name, "platform": platform, "source": {"kind": kind},
        "output_fields": {f: {"name": f} for f in fields},
        "input_schema": {"type": "object", "properties": {p: {"type": "string"} for p in params},
                         "required": list(required)},
        "key_acquisition": {"kind": "tool"} if key else None,
        "state_changing": state,
    }  # fmt: skip


MUSIC = policy.tool_catalog(
    {
        "tools": [
            _tool("chinook-catalog", "get_chinook_catalog_key", ["api_key"], key=True),
            _tool("chinook-catalog", "search_artists", ["artist_id", "name"], ["api_key", "name"], ["name"]),
            _tool("chinook-catalog", "list_artist_albums", ["album_id", "artist_id", "artist_name", "title",
                  "track_count"], ["api_key", "artist_id"], ["artist_id"]),
            _tool("chinook-store", "get_chinook_store_key", ["api_key"], key=True),
            _tool("chinook-store", "list_playlist_tracks", ["album_id", "artist_id", "artist_name", "name",
                  "milliseconds"], ["api_key", "playlist_id"], ["playlist_id"]),
            _tool("chinook-store", "list_customer_invoices", ["invoice_id", "total", "customer_id"],
                  ["api_key", "customer_id"], ["customer_id"]),
            _tool("chinook-store", "create_playlist", ["playlist_id", "name"], ["api_key", "name"], state=True),
            _tool("music-catalogue-notes", "search_catalogue_notes", ["id", "text"], ["query", "k"],
                  kind="retrieval"),
        ]
    }
)  # fmt: skip


def _act(step, platform, tool, **args):
    return {"step": step, "platform": platform, "tool": tool, "source_type": "api", "args": args}


KEY = _act(1, "chinook-catalog", "get_chinook_catalog_key")
JOBIM = {  # blind read s12 pol #3: 'do not use the chinook-store API' on an albums-by-artist question
    "id": "sha256:jobim", "domain": "music", "language": "en", "category": "CMP",
    "query": "How many albums does Antônio Carlos Jobim have?",
    "answer": {"type": "number", "value": 2},
    "golden_actions": [KEY, _act(2, "chinook-catalog", "search_artists", name="Antônio Carlos Jobim"),
                       _act(3, "chinook-catalog", "list_artist_albums", artist_id=6)],
    # the 'original' path also fetched the store's key and never called the store: no use of the store
    "alternative_paths": [{"actions": [KEY, _act(1, "chinook-store", "get_chinook_store_key"),
                                       _act(2, "chinook-catalog", "search_artists", name="Antônio Carlos Jobim"),
                                       _act(3, "chinook-catalog", "list_artist_albums", artist_id=6)]}],
    "available_tools": ["get_chinook_catalog_key", "search_artists", "list_artist_albums"],
    "platforms": ["chinook-catalog"],
}  # fmt: skip
NOTE = {"id": "music:n1", "text": "Antônio Carlos Jobim: the catalogue holds 2 albums by him, Warner 25 Anos and "
        "Chill: Brazil (Disc 2)."}  # fmt: skip


def _cfg(tmp_path, shares):
    raw = {
        "data_dir": str(tmp_path / "data"),
        "retrieval": {"policy_shares": shares, "policy_min_per_language": {}},
        "domains": [{"name": "music", "description": "The Chinook music store.",
                     "sources": [{"kind": "openapi", "platform": "chinook-catalog", "spec": "demo://a"},
                                 {"kind": "openapi", "platform": "chinook-store", "spec": "demo://b"},
                                 {"kind": "retrieval", "collection": "catalogue_notes"}]}],
    }  # fmt: skip
    return parse_config(yaml.safe_dump(raw), project_dir=tmp_path)


NO_EFFECT = {"changes_answer": 0.0, "no_effect": 1.0, "none": 0.0}


def test_a_platform_that_could_not_serve_the_task_is_not_banned_and_a_key_call_is_no_use():
    """Planted: the store's tools hold no album records an artist's albums could be read from, and the alternative
    path only fetched the store's key. The old rule banned the store anyway (the only unused platform)."""
    assert policy.platform_serves(JOBIM, "chinook-store", MUSIC) is None
    assert policy.platform_no_effect(JOBIM, MUSIC) is None
    # a path that really calls the store makes the ban one an agent might break
    real = {
        **JOBIM,
        "alternative_paths": [{"actions": [_act(1, "chinook-store", "list_playlist_tracks", playlist_id=1)]}],
    }
    assert policy.platform_serves(real, "chinook-store", MUSIC) == "an alternative path uses chinook-store"


def test_a_vacuous_no_effect_falls_back_to_the_documents_about_the_task_else_to_no_policy(tmp_path):
    cfg = _cfg(tmp_path, NO_EFFECT)
    inv = {"music": {"tools": []}}  # the catalog comes from the inventory below
    inv["music"]["tools"] = [
        {**_tool(c["platform"], n, sorted(c["fields"]), sorted(c["params"]), sorted(c["required"]), c["key"],
                 c["state"], "retrieval" if c["kind"] == "retrieval" else "openapi")}
        for n, c in MUSIC.items()
    ]  # fmt: skip
    # a note about Jobim: banning the documents tests something (the note states the count)
    [task], stats = policy.assign_policies([JOBIM], cfg, {"music": {"chunks": [NOTE]}}, inv)
    pol = task["policy"]
    assert pol["category"] == "no_effect" and pol["forbidden_sources"] == ["retrieval"]
    assert pol["forbidden_platforms"] == [] and "chinook-store" not in pol["text"]
    assert policy.no_effect_tests(JOBIM, pol, MUSIC, [NOTE]) == "document music:n1 is about the task"
    assert stats["no_effect_vacuous"] == 0
    # no document about the task either: no policy rather than a vacuous ban, and the draw is recorded
    other = {"id": "music:n2", "text": "Iron Maiden: the catalogue holds 21 albums."}
    [task], stats = policy.assign_policies([JOBIM], cfg, {"music": {"chunks": [other]}}, inv)
    assert task.get("policy") is None and stats["no_effect_vacuous"] == 1
    vacuous = {"category": "no_effect", "forbidden_sources": [], "forbidden_platforms": ["chinook-store"]}
    assert policy.no_effect_tests(JOBIM, vacuous, MUSIC, [other]) is None


AVIATION = policy.tool_catalog(
    {
        "tools": [
            _tool("airport-directory", "search_airports", ["iata", "icao", "name", "city", "tz", "lat", "lon"],
                  ["query"], ["query"]),
            _tool("airport-directory", "get_airport_by_iata", ["iata", "icao", "name", "city", "tz", "lat", "lon"],
                  ["iata"], ["iata"]),
            _tool("geo-mcp", "airport_coordinates", ["iata", "icao", "name", "city", "tz", "lat", "lon"], ["iata"],
                  ["iata"]),
            _tool("flight-ops", "get_hourly_weather", ["origin", "temp", "date"], ["origin", "date"],
                  ["origin", "date"]),
        ]
    }
)  # fmt: skip


def test_a_stand_in_must_be_callable_with_what_the_path_knows():
    """airport_coordinates(iata) holds every field search_airports outputs, but cannot turn 'LaGuardia' into a code:
    on a weather question that starts from the airport's name, geo-mcp could not serve (blind read s12 pol #16);
    where the golden call is sent the code itself, it could."""
    lga = {
        "id": "sha256:lga", "query": "What was the highest temperature at LaGuardia on 8 May 2013?",
        "golden_actions": [_act(1, "airport-directory", "search_airports", query="LaGuardia"),
                           _act(2, "flight-ops", "get_hourly_weather", origin="LGA", date="2013-05-08")],
    }  # fmt: skip
    assert policy.platform_serves(lga, "geo-mcp", AVIATION) is None
    by_code = {**lga, "golden_actions": [_act(1, "airport-directory", "get_airport_by_iata", iata="LGA")]}
    assert (
        policy.platform_serves(by_code, "geo-mcp", AVIATION) == "airport_coordinates stands in for get_airport_by_iata"
    )


def test_a_platform_ban_names_every_tool_of_the_platform_the_same_way_in_every_task(tmp_path):
    """The ban lists the platform's key and write tools too, whatever the task offered; the task offers every read
    tool of the domain and the key tools they need, no write tool."""
    counts = {**JOBIM, "alternative_paths": [{"actions": [_act(1, "chinook-store", "list_playlist_tracks",
                                                                playlist_id=1)]}]}  # fmt: skip
    other = {**counts, "id": "sha256:other", "available_tools": ["search_artists", "list_artist_albums"]}
    texts = []
    for t in (counts, other):
        sources, platforms = policy.platform_no_effect(t, MUSIC)
        assert platforms == ["chinook-store"]
        offered = policy.offer(t, MUSIC)
        pol = policy.build_policy(offered, "no_effect", "music", scoped=(sources, platforms), catalog=MUSIC)
        texts.append(pol["text"])
        assert {"get_chinook_store_key", "get_chinook_catalog_key", "list_playlist_tracks"} <= set(
            offered["available_tools"]
        )
        assert "create_playlist" not in offered["available_tools"]
    assert texts[0] == texts[1]
    assert ("chinook-store API (create_playlist, get_chinook_store_key, list_customer_invoices, list_playlist_tracks)"
            in texts[0])  # fmt: skip


def test_a_refusal_is_built_only_on_a_task_the_cascade_kept(tmp_path):
    """Blind read s12 pol #1, #11: refusals read as degenerate questions. A policy is drawn only for tasks the judged
    cascade kept (the degenerate, naturalness and duplicate checks of any published task): a rejected task never gets a
    refusal, and its question is not published under one."""
    cfg = _cfg(tmp_path, {"changes_answer": 1.0, "no_effect": 0.0, "none": 0.0})
    fast = {**JOBIM, "id": "sha256:fast", "query": "How many albums does the artist of 'Fast As a Shark' have?"}
    judged = {"music": {"kept": [fast], "rejected": [{**JOBIM, "reason": "degenerate"}]}}
    out, stats = policy.with_policies(judged, cfg, {"music": {"chunks": []}}, {"music": {"tools": []}})
    assert [t["id"] for t in out["music"]["kept"]] == ["sha256:fast"]
    assert out["music"]["rejected"][0].get("policy") is None
    assert stats["by_category"]["changes_answer"] == 1
    refusal = out["music"]["kept"][0]["policy"]
    assert refusal["unrestricted"]["answer"] == JOBIM["answer"] and out["music"]["kept"][0]["golden_actions"] == []


def test_a_document_banned_by_a_no_effect_policy_is_one_headed_by_a_name_the_task_reaches():
    """Planted (s12 demo data): 'most units: Germany' inside an album's note made a ban of the notes look relevant to
    'how many invoices do Germany's customers have'; a bulletin on 서울특별시 mentioning its 중구 to a question on
    부산광역시 중구. Only a document whose heading names what the task reaches counts."""
    germany = {"query": "If there are at least 3 customers from Germany, how many invoices do they have in total?",
               "golden_actions": [_act(1, "chinook-store", "search_customers", country="Germany")]}  # fmt: skip
    sabbath = {"id": "music:bs", "text": "Album note: Black Sabbath Vol. 4 by Black Sabbath.\n\nBuyers came from 4 "
               "countries (most units: Germany, 3)."}  # fmt: skip
    assert policy.documents_may_answer(germany, [sabbath]) == "music:bs"  # the refusal's loose check still fires
    assert policy.documents_about(germany, [sabbath]) is None
    busan = {"query": "부산광역시 중구의 법정동 수를 알려 주세요.", "golden_actions": []}
    seoul = {
        "id": "korea:s",
        "text": "[보도자료] 2010년 인구주택총조사 서울특별시 결과\n\n중구가 11만 5,387명으로 가장 적었다.",
    }
    assert policy.documents_about(busan, [seoul]) is None
    assert policy.documents_about(busan, [{"id": "korea:b", "text": "[보도자료] 부산광역시 결과\n\n..."}]) == "korea:b"
    assert policy.documents_about(JOBIM, [NOTE]) == "music:n1"
