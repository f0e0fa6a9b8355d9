"""API+RAG chains longer than one API call before the search (issue 17 item 4: 2-5 hops): an API→API edge the
connectivity graph retained extends the first hop (`multisource._api_api_heads`), giving API-API-RAG (3 hops) and
API-API-RAG-API (4 hops); hop counts beyond VAKRA's 1/2/3 weights get `retrieval.long_hop_share`."""

import asyncio
from types import SimpleNamespace as NS

import pytest

from factory.config import RetrievalConfig
from factory.synthesis import multisource
from tests.synthesis.test_phrasing import LEXICON_DIR, demo_frames, shared_specs

OK = NS(is_success=True, value="semantic_success", group="success")


def _res(args, records):
    return NS(outcome=OK, records=records, args=dict(args), total_count=len(records), call_digest="d")


def test_longer_chains_get_a_small_configurable_share_beside_vakras_weights():
    assert multisource.HOPS["API-API-RAG"] == 3 and multisource.HOPS["API-API-RAG-API"] == 4
    assert multisource.HOPS["API-RAG-API"] == 3 and multisource.HOPS[multisource.RAG_ONLY] == 1
    assert [multisource.HOPS[h] for h in multisource.TAIL_HOP_TYPES] == [3, 4, 5]
    assert RetrievalConfig().long_hop_share == pytest.approx(0.10)
    counts = multisource.hop_count_weights(0.1)
    assert counts == pytest.approx({2: 0.6, 3: 0.3, 4: 0.05, 5: 0.05})  # 4 and 5 hops share the long share
    assert multisource.hop_count_weights(0.0)[4] == 0
    # after an API→API edge: the 3-hop type takes VAKRA's 3-hop weight, the 4-hop type its part of the long share
    assert multisource.hop_weights(0.1, multisource.LONG_HOP_TYPES) == pytest.approx(
        {"API-API-RAG": 0.3 / 0.35, "API-API-RAG-API": 0.05 / 0.35}
    )
    assert multisource.hop_weights(0.0, multisource.LONG_HOP_TYPES) == {"API-API-RAG": 1.0}  # 0: no 4-hop chains
    # a 4-hop type keeps long_share of the base types' quotas, at least one chain
    assert multisource.long_quota(10, 0.1) == 3 and multisource.long_quota(1, 0.01) == 1
    assert multisource.long_quota(10, 0.0) == 0
    assert multisource.base_kind("API-API-RAG-API") == "API-RAG-API" and multisource.base_kind("RAG-API") == "RAG-API"
    assert multisource.head_kinds(1) == multisource.BASE_HOP_TYPES
    assert multisource.head_kinds(2) == multisource.LONG_HOP_TYPES
    w = multisource.hop_weights(0.1, multisource.LONG_HOP_TYPES)
    assert multisource.kind_order("API-API-RAG", {"API-API-RAG": 1}, w)[0] == "API-API-RAG-API"


def _music_ctx(edges, base_args=None):
    specs = shared_specs()
    music = {s.name: s for s in specs.values() if s.domain == "music"}
    tids = {s.name: t for t, s in specs.items() if s.domain == "music"}
    return NS(api_edges=edges, apis=music, base_args=base_args or {}, frames=demo_frames(specs),
              tid=lambda n: tids[n], language="en")  # fmt: skip


class _Ex:
    """Planted lookups: get_album returns the album of `albums` the id names (one record, or `albums[id]` as given);
    any other tool returns nothing."""

    def __init__(self, albums):
        self.albums, self.sent = albums, []

    async def call(self, spec, args):
        self.sent.append((spec.name, dict(args)))
        recs = self.albums.get(args.get("album_id"), []) if spec.name == "get_album" else []
        return _res(args, recs)


def test_a_retained_graph_edge_into_a_lookup_extends_the_first_hop_and_names_the_record_it_references():
    """A track found by its name whose record holds only the album's id (a leaner API than the demo's: its track
    records carry the album title, so every demo API→API head is `api_hop_unneeded`): the graph's retained edge
    search_tracks.album_id → get_album.album_id is executed, its one record is 'the album containing …', and the
    junction and lineage carry the graph's edge id. A listing the same id leads to (list_album_tracks) is no head:
    'the track on the album …' would presuppose what only the data say."""
    ctx = _music_ctx(
        [("search_tracks", "album_id", "get_album", "album_id", "sha256:e1"),
         ("search_tracks", "album_id", "list_album_tracks", "album_id", "sha256:e2")],
        {"get_album": {"api_key": "<KEY>", "album_id": 1}},
    )  # fmt: skip
    album = {"album_id": 4, "title": "Let There Be Rock", "artist_id": 1, "artist_name": "AC/DC", "track_count": 8}
    ex, rejected = _Ex({4: [album]}), []
    res0 = _res({"api_key": "<KEY>", "name": "Go Down"}, [{"track_id": 15, "name": "Go Down", "album_id": 4}])
    edges = multisource._Edges()
    heads = asyncio.run(multisource._api_api_heads(ctx, ex, edges, ctx.apis["search_tracks"], res0,
                                                   lambda *a: rejected.append(a)))  # fmt: skip
    assert ex.sent == [("get_album", {"api_key": "<KEY>", "album_id": 4})]  # the listing is never called
    assert len(heads) == 1 and [s.name for s, _ in heads[0].calls] == ["search_tracks", "get_album"]
    head = heads[0]
    assert head.ref is not None and head.ref.one
    assert head.ref.text == "the album containing 'Go Down'", head.ref.text  # the lexicon's reviewed hop
    assert head.junctions == [{"from": "search_tracks.album_id", "to": "get_album.album_id", "type": "SEQ", "n": 1,
                               "width": 1, "edge_id": "sha256:e1"}]  # fmt: skip
    assert head.edges == ["sha256:e1"]
    assert [a["step"] for a in head.actions()] == [1, 2] and head.actions()[1]["args"]["album_id"] == 4
    (row,) = edges.rows()
    assert row["hop"] == "API→API" and row["successes"] == 1 and row["binding"]["transform"] == "upstream_value"
    # an entity the first record already holds needs no second call (the demo's track records: album_title)
    assert "let there be rock" not in head.upstream_values() and "go down" in head.upstream_values()
    demo_like = multisource._Head([(ctx.apis["search_tracks"], NS(args={}, records=[{**res0.records[0],
                                   "album_title": "Let There Be Rock"}])), head.calls[1]])  # fmt: skip
    assert "let there be rock" in demo_like.upstream_values()
    assert rejected == []


def test_a_lookup_that_returns_no_single_record_or_a_first_record_no_question_names_gives_no_head():
    edge = [("search_tracks", "album_id", "get_album", "album_id", "sha256:e1")]
    ctx = _music_ctx(edge)
    album = {"album_id": 4, "title": "Let There Be Rock", "artist_id": 1, "artist_name": "AC/DC", "track_count": 8}
    ex, rejected = _Ex({4: [album, {**album, "album_id": 5}]}), []  # two records: no single album
    res0 = _res({"name": "Go Down"}, [{"track_id": 15, "name": "Go Down", "album_id": 4}])
    heads = asyncio.run(multisource._api_api_heads(ctx, ex, multisource._Edges(), ctx.apis["search_tracks"], res0,
                                                   lambda *a: rejected.append(a)))  # fmt: skip
    assert heads == [] and rejected[0][:2] == ("API-API-RAG", "api_call_failed")
    # found by its composer only: the question cannot name the first record, so nothing is called
    ex2, rejected2 = _Ex({4: [album]}), []
    res_c = _res({"composer": "AC/DC"}, [{"track_id": 15, "name": "Go Down", "album_id": 4}])
    heads2 = asyncio.run(multisource._api_api_heads(ctx, ex2, multisource._Edges(), ctx.apis["search_tracks"], res_c,
                                                    lambda *a: rejected2.append(a)))  # fmt: skip
    assert heads2 == [] and ex2.sent == [] and rejected2[0][1] == "unphraseable" and rejected2[0][-1] == "reference"


def test_one_more_api_call_after_the_passages_names_the_record_the_looked_up_one_references():
    """RAG-API-API: the track a passage names (looked up by search_tracks) → a retained edge into get_album: one
    record, 'the album containing the longest track on …'; a lookup that finds nothing is rejected and scored."""
    from factory.synthesis import phrasing

    ctx = _music_ctx([("search_tracks", "album_id", "get_album", "album_id", "sha256:e1"),
                      ("search_tracks", "track_id", "get_track", "track_id", "sha256:e3")])  # fmt: skip
    album = {"album_id": 4, "title": "Let There Be Rock", "artist_id": 1, "artist_name": "AC/DC", "track_count": 8}
    ex, rejected = _Ex({4: [album]}), []
    res2 = _res({"name": "Whole Lotta Rosie"}, [{"track_id": 22, "name": "Whole Lotta Rosie", "album_id": 4}])
    up = phrasing.Ref("the longest track on the album 'Let There Be Rock'", True, "track", "tracks")
    edges = multisource._Edges()
    out = asyncio.run(multisource._api_api_tail(ctx, ex, edges, ctx.apis["search_tracks"], res2, up,
                                                lambda *a: rejected.append(a), "RAG-API-API"))  # fmt: skip
    assert [(s.name, f, p, e) for s, f, p, _, e, _ in out] == [("get_album", "album_id", "album_id", "sha256:e1")]
    ref = out[0][5]
    assert ref.one and ref.text == "the album containing the longest track on the album 'Let There Be Rock'", ref.text
    # get_track(22) found nothing here: rejected with its reason, scored as a failed API→API trial
    assert rejected and rejected[0][:2] == ("RAG-API-API", "api_call_failed")
    by_id = {r["edge_id"]: r for r in edges.rows()}
    assert by_id["API→API:search_tracks.track_id->get_track.track_id"]["successes"] == 0
    assert by_id["API→API:search_tracks.album_id->get_album.album_id"]["successes"] == 1


@pytest.mark.slow  # the demo service and a LanceDB table: ~80 s on the shared 2 cores
def test_four_and_five_hop_chains_replay_to_their_stored_answers_with_every_call_in_order(tmp_path):
    """Planted 4-hop chain, every hop executed against the demo API and a LanceDB index: the track 'Go Down' → its
    album (an API→API head through a retained graph edge) → the search for the album's title citing the planted
    note → the track the note names, looked up (RAG→API) → its file size (chinook-catalog serves no composer). The golden actions hold the key call and
    the four source calls in order, the task row keeps them, and the chain replays to the stored answer; an album
    id the first record does not give fails the replay. The 5-hop chain (API-API-RAG-API-API) adds the looked-up
    track's full record by its id (`_api_api_tail`) and replays the same way."""
    from factory.demo.service import DemoService
    from factory.frames import frames_for
    from factory.synthesis import phrasing
    from factory.tools.executor import ToolExecutor
    from tests.synthesis.test_multisource import _project, _world

    cfg = _project(tmp_path)

    async def go(tools, chunks):
        by_name = {t.name: t for t in tools}
        tids = {t.name: f"{t.domain}/{t.platform}/{t.name}" for t in tools}
        frames = frames_for({tids[t.name]: t for t in tools}, LEXICON_DIR)
        ctx = NS(api_edges=[("search_tracks", "album_id", "get_album", "album_id", "sha256:planted")],
                 apis={n: t for n, t in by_name.items() if t.source.kind != "retrieval"}, base_args={},
                 frames=frames, tid=lambda n: tids[n], language="en")  # fmt: skip
        gold = chunks[0]["id"]
        async with ToolExecutor(tools, cfg.executor) as ex:
            res0 = await ex.call("search_tracks", {"name": "Go Down"})
            assert res0.outcome.is_success and len(res0.records) == 1, res0.detail
            rejected: list = []
            (head,) = await multisource._api_api_heads(ctx, ex, multisource._Edges(), by_name["search_tracks"], res0,
                                                       lambda *a: rejected.append(a))  # fmt: skip
            album = head.last[1].records[0]
            assert album["title"] == "Let There Be Rock", album
            search = by_name["search_catalogue_notes"]
            sres = await ex.call(search, {"query": album["title"], "k": 2})
            assert gold in {p["id"] for p in sres.records}
            named = "Whole Lotta Rosie"  # the note's longest track
            assert multisource.states(next(p["text"] for p in sres.records if p["id"] == gold), named)
            res3 = await ex.call(by_name["search_tracks"], {"name": named})
            assert res3.outcome.is_success and len(res3.records) == 1
            stored = res3.records[0]["bytes"]
            actions, junctions, chain = multisource.chain_parts(head, search, sres, gold, "title",
                                                                (by_name["search_tracks"], "name", res3))  # fmt: skip
            answer_spec = {"kind": "value", "field": "bytes", "calls": [{"step": 4, "index": 0}]}
            key = await ex.call("get_chinook_catalog_key", {})
            krow = multisource._action(1, by_name["get_chinook_catalog_key"], key)
            actions, answer_spec = multisource.with_key_calls(actions, answer_spec, {key.platform: krow},
                                                              {"search_tracks", "get_album"})  # fmt: skip
            task = {"hop_type": "API-API-RAG-API", "golden_actions": actions, "junctions": junctions,
                    "answer_spec": answer_spec, "answer": {"value": stored}}  # fmt: skip
            good = await multisource.replay(task, ex)
            wrong = [{**a, "args": {**a["args"], "album_id": 1}} if a["tool"] == "get_album" else a for a in actions]
            bad = await multisource.replay({**task, "golden_actions": wrong}, ex)
            # five hops: one more API call after the passage's (the track's full record by its id), the tail
            ctx.api_edges = [("search_tracks", "track_id", "get_track", "track_id", "sha256:tail")]
            up = phrasing.Ref("the longest track on the album 'Let There Be Rock'", True, "track", "tracks")
            (after,) = await multisource._api_api_tail(ctx, ex, multisource._Edges(), by_name["search_tracks"], res3,
                                                       up, lambda *a: rejected.append(a), "API-API-RAG-API-API")  # fmt: skip
            spec4, fld, p4, res4, eid, _ = after
            five, j5, chain5 = multisource.chain_parts(head, search, sres, gold, "title",
                                                       (by_name["search_tracks"], "name", res3),
                                                       (spec4, fld, p4, res4, eid))  # fmt: skip
            spec5 = {"kind": "value", "field": "media_type_name", "calls": [{"step": 5, "index": 0}]}
            five, spec5 = multisource.with_key_calls(five, spec5, {key.platform: krow},
                                                     {"search_tracks", "get_album", "get_track"})  # fmt: skip
            task5 = {"hop_type": "API-API-RAG-API-API", "golden_actions": five, "junctions": j5, "answer_spec": spec5,
                     "answer": {"value": res4.records[0]["media_type_name"]}}  # fmt: skip
            good5 = await multisource.replay(task5, ex)
            wrong5 = [{**a, "args": {**a["args"], "track_id": 1}} if a["tool"] == "get_track" else a for a in five]
            bad5 = await multisource.replay({**task5, "golden_actions": wrong5}, ex)
            traj = {"trajectory_id": "sha256:planted5", "hop_type": "API-API-RAG-API-API", "domain": "music",
                    "language": "en", "query": "What is the media type of the longest track on the album containing "
                    "'Go Down'?", "golden_actions": five, "answer": {"type": "string", "value":
                    task5["answer"]["value"], "fields": ["media_type_name"]}, "answer_spec": spec5, "junctions": j5,
                    "edges": chain5, "answer_text": "It is MPEG audio file."}  # fmt: skip
            inventory = {"tools": [t.model_dump(mode="json") for t in tools]}
            (row,) = multisource.task_records({"trajectories": [traj]}, inventory, cfg, None)
            task5["row"] = row
            return stored, task, chain, good, bad, (task5, chain5, good5, bad5)

    with DemoService(cfg.demo, log_dir=tmp_path / "logs"):
        _, chunks, tools = _world(cfg)
        stored, task, chain, good, bad, (task5, chain5, good5, bad5) = asyncio.run(go(tools, chunks))
    actions = task["golden_actions"]
    assert [a["tool"] for a in actions] == [
        "get_chinook_catalog_key", "search_tracks", "get_album", "search_catalogue_notes", "search_tracks",
    ]  # fmt: skip
    assert [a["step"] for a in actions] == [1, 2, 3, 4, 5] and task["answer_spec"]["calls"] == [{"step": 5, "index": 0}]
    # four hops: the source calls after the key call, API, API, RAG, API
    sources = ["RAG" if a["source_type"] == "retrieval" else "API" for a in actions[1:]]
    assert "-".join(sources) == "API-API-RAG-API" and multisource.HOPS["API-API-RAG-API"] == len(sources)
    assert actions[3]["passage_ids"] and actions[3]["source_type"] == "retrieval"
    assert chain == ["sha256:planted", "API→RAG:get_album.title->search_catalogue_notes.query",
                     "RAG→API:search_catalogue_notes.text->search_tracks.name"]  # fmt: skip
    assert [j["from"] for j in task["junctions"]] == ["search_tracks.album_id", "get_album.title",
                                                      "search_catalogue_notes.text"]  # fmt: skip
    assert good == {"ok": True, "answer": stored, "problems": []}, good
    assert not bad["ok"] and any("is not search_tracks.album_id upstream" in p for p in bad["problems"]), bad
    # five hops: API, API, RAG, API, API; the track's id from the RAG→API record binds get_track
    five = task5["golden_actions"]
    assert [a["tool"] for a in five] == [
        "get_chinook_catalog_key", "search_tracks", "get_album", "search_catalogue_notes", "search_tracks", "get_track",
    ]  # fmt: skip
    assert "-".join("RAG" if a["source_type"] == "retrieval" else "API" for a in five[1:]) == "API-API-RAG-API-API"
    assert multisource.HOPS["API-API-RAG-API-API"] == 5 and [a["step"] for a in five] == [1, 2, 3, 4, 5, 6]
    assert chain5[-1] == "sha256:tail" and task5["junctions"][-1]["from"] == "search_tracks.track_id"
    assert good5 == {"ok": True, "answer": task5["answer"]["value"], "problems": []}, good5
    assert not bad5["ok"] and any("is not search_tracks.track_id upstream" in p for p in bad5["problems"]), bad5
    # the task row keeps the hop type, every call in order and their digests in its lineage
    row = task5["row"]
    assert row["hop_type"] == "API-API-RAG-API-API" and [a["tool"] for a in row["golden_actions"]] == [
        a["tool"] for a in five
    ]
    assert row["lineage"]["call_digests"] == [a["call_digest"] for a in five]
    assert [e["edge_id"] for e in row["lineage"]["edges"]] == chain5


def test_replay_reads_a_tail_argument_from_the_upstream_record_not_from_the_passages():
    """The API→API call after a RAG→API hop is bound by the looked-up record (a code no passage states), so the replay
    checks it against that record, and the passage check stays on the parameter the passage binds."""
    records = {
        "search_notes": [{"id": "p1", "title": "JFK weather", "text": "The busiest airport was Kennedy."}],
        "search_airports": [{"name": "Kennedy", "icao": "KJFK"}],
        "get_airport_by_icao": [{"icao": "KJFK", "elevation_ft": 13}],
    }

    class Ex:
        async def call(self, tool, args):
            return NS(outcome=NS(is_success=True), records=records[tool])

    actions = [
        {"step": 1, "tool": "search_notes", "args": {"query": "JFK weather"}, "source_type": "retrieval",
         "passage_ids": ["p1"]},
        {"step": 2, "tool": "search_airports", "args": {"name": "Kennedy"}, "source_type": "api"},
        {"step": 3, "tool": "get_airport_by_icao", "args": {"icao": "KJFK"}, "source_type": "api"},
    ]  # fmt: skip
    junctions = [{"from": "search_notes.text", "to": "search_airports.name"},
                 {"from": "search_airports.icao", "to": "get_airport_by_icao.icao"}]  # fmt: skip
    task = {"golden_actions": actions, "junctions": junctions, "answer": {"value": 13},
            "answer_spec": {"kind": "value", "field": "elevation_ft", "calls": [{"step": 3, "index": 0}]}}  # fmt: skip
    assert asyncio.run(multisource.replay(task, Ex())) == {"ok": True, "answer": 13, "problems": []}
    wrong = {**task, "golden_actions": [*actions[:2], {**actions[2], "args": {"icao": "KLGA"}}]}
    out = asyncio.run(multisource.replay(wrong, Ex()))
    assert not out["ok"] and out["problems"] == [
        "step 3 get_airport_by_icao: icao='KLGA' is not search_airports.icao upstream"
    ]
    unbound = {**task, "golden_actions": [actions[0], {**actions[1], "args": {"name": "Laguardia"}}, actions[2]]}
    assert any("no argument is stated" in p for p in asyncio.run(multisource.replay(unbound, Ex()))["problems"])
