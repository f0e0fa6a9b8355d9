"""`factory audit` on API+RAG and policy tasks: passage values re-derived from the raw Chinook data.

The passages are the demo catalogue notes of album 1 and artist 1 as the index serves them; what they
state is checked by the audit against the raw fixture (`factory.audit.corpora`), never against the
factory's renderer. Planted defects: a wrong passage value, a cited id the index does not hold, a passage
that misstates the raw data, a query that names another document, an API argument no passage states,
unknown kinds, and policies that do not fit the task's path.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from factory.audit import corpora
from factory.audit.passages import LanceIndex, MemoryIndex
from factory.audit.run import audit, audit_task
from factory.cli import main
from tests.conftest import write_config

KEY = {"api_key": "<KEY>", "page": 1, "per_page": 10}
ALBUM_1 = {
    "id": "music:de9689237f1b3d52579854d4",
    "title": "For Those About To Rock We Salute You (AC/DC)",
    "source": "demo://music-catalogue/album/1",
    "position": 0,
    "text": "Album note: For Those About To Rock We Salute You by AC/DC.\n\nThe album has 10 tracks with a total "
    "running time of 40 min 00 s; the longest track is For Those About To Rock (We Salute You) (5 min 44 s). Its "
    "files take 78.3 MB (MPEG audio file). Genres: Rock. Its tracks credit 3 composers: Angus Young, Brian Johnson, "
    "Malcolm Young; 10 of its 10 tracks name a composer.\n\nThe store sold 10 track copies for 9.90 USD in 4 invoices, first on 2007-01-02 and last on "
    "2010-11-01; buyers came from 4 countries (most units: Norway, 4).\n\nIts tracks appear in these playlists: "
    "Heavy Metal Classic, Music.",
}
ARTIST_1 = {
    "id": "music:4881fa287152ca34c5c473b3",
    "title": "AC/DC (artist)",
    "source": "demo://music-catalogue/artist/1",
    "position": 0,
    "text": "Artist profile: AC/DC.\n\nThe catalogue holds 2 albums by AC/DC (For Those About To Rock We Salute You, "
    "Let There Be Rock) with 18 tracks in all, 1 h 20 min 54 s of music. Genres: Rock. Its tracks credit 4 composers: "
    "AC/DC, Angus Young, Brian Johnson, Malcolm Young; 18 of its 18 tracks name a composer.\n\nThe store sold 16 track "
    "copies for 15.84 USD in 6 invoices, first on 2007-01-02 and last on 2010-11-01; buyers came from 6 countries "
    "(most units: Norway, 4).",
}
INDEX = MemoryIndex({("music", "catalogue_notes"): [ALBUM_1, ARTIST_1]})
SALES = "The store sold ___ track copies for 9.90 USD in 4 invoices, first on 2007-01-02 and last on 2010-11-01; " \
        "buyers came from 4 countries (most units: Norway, 4)."  # fmt: skip


def act(step: int, platform: str, tool: str, source_type: str = "api", passage_ids: tuple[str, ...] = (),
        **args: Any) -> dict:  # fmt: skip
    return {"step": step, "platform": platform, "tool": tool, "args": args, "records": 1, "total_count": 1,
            "source_type": source_type, "passage_ids": list(passage_ids)}  # fmt: skip


def search(step: int, query: str, pid: str) -> dict:
    return act(step, "music-catalogue-notes", "search_catalogue_notes", "retrieval", (pid,), query=query, k=5)


API_RAG = {
    "id": "sha256:api-rag",
    "domain": "music",
    "hop_type": "API-RAG",
    "query": "…",
    "golden_actions": [
        act(1, "chinook-catalog", "search_tracks", name="For Those About To Rock (We Salute You)", **KEY),
        search(2, "For Those About To Rock We Salute You", ALBUM_1["id"]),
    ],
    "answer_spec": {
        "kind": "passage_value",
        "calls": [{"step": 2, "index": 0, "record": {"id": ALBUM_1["id"]}}],
        "passage_id": ALBUM_1["id"],
        "value": 10,
        "statement": SALES,
    },  # fmt: skip
    "answer": {"type": "number", "value": 10},
    "junctions": [{"from": "search_tracks.album_title", "to": "search_catalogue_notes.query", "type": "SEQ"}],
}
RAG_API = {
    "id": "sha256:rag-api",
    "domain": "music",
    "hop_type": "RAG-API",
    "query": "…",
    "golden_actions": [
        search(1, "AC/DC (artist)", ARTIST_1["id"]),
        act(2, "chinook-store", "search_customers", country="Norway", **KEY),
    ],
    "answer_spec": {"kind": "value", "field": "address", "calls": [{"step": 2, "index": 0}]},
    "answer": {"type": "string", "value": "Ullevålsveien 14"},
    "junctions": [{"from": "search_catalogue_notes.text", "to": "search_customers.country", "type": "SEQ"}],
}


def test_a_passage_value_is_re_derived_from_the_raw_data() -> None:
    row = audit_task(API_RAG, INDEX)
    assert (row["status"], row["audit_kind"], row["derived"]) == ("correct", "passage_value", 10), row["reason"]
    assert [c["status"] for c in row["calls"]] == ["same", "search_ok"]
    assert [(b["kind"], b["status"]) for b in row["bridges"]] == [("passage_query", "ok")]


def test_a_wrong_passage_value_fails() -> None:
    planted = copy.deepcopy(API_RAG)
    planted["answer"]["value"] = planted["answer_spec"]["value"] = 11
    row = audit_task(planted, INDEX)
    assert row["status"] == "wrong" and "raw data 10" in row["reason"]


def test_a_passage_id_not_in_the_index_fails() -> None:
    planted = copy.deepcopy(API_RAG)
    gone = "music:000000000000000000000000"
    planted["golden_actions"][1]["passage_ids"] = [gone]
    planted["answer_spec"]["passage_id"] = gone
    row = audit_task(planted, INDEX)
    assert row["status"] == "wrong" and gone in row["reason"]
    assert row["calls"][1]["status"] == "search_passage_missing"


def test_a_passage_that_misstates_the_raw_data_fails_even_when_the_answer_reads_it_faithfully() -> None:
    lying = {**ALBUM_1, "text": ALBUM_1["text"].replace("sold 10 track", "sold 11 track")}
    planted = copy.deepcopy(API_RAG)
    planted["answer"]["value"] = planted["answer_spec"]["value"] = 11
    row = audit_task(planted, MemoryIndex({("music", "catalogue_notes"): [lying]}))
    assert row["status"] == "wrong" and "states 11 for units, raw 10" in row["reason"]
    assert row["calls"][1]["status"] == "search_misstates" and "units '11', raw data 10" in row["calls"][1]["detail"]


def test_a_query_that_names_another_document_fails() -> None:
    """A search for the genre 'Rock' that cites the note of an album with 'Rock' in its title."""
    planted = copy.deepcopy(API_RAG)
    planted["golden_actions"][1]["args"]["query"] = "Rock"
    planted["junctions"][0]["from"] = "search_tracks.genre_name"
    row = audit_task(planted, INDEX)
    assert row["status"] == "wrong" and "does not name the document" in row["reason"]


def test_a_passage_value_bound_into_an_api_call_continues_the_chain() -> None:
    row = audit_task(RAG_API, INDEX)
    assert (row["status"], row["audit_kind"]) == ("correct", "passage_bridge"), row["reason"]
    bridge = row["bridges"][0]
    assert (bridge["kind"], bridge["status"], bridge["slot"], bridge["from_kind"]) == (
        "passage_bridge", "ok", "top_country", "country.name")  # fmt: skip
    planted = copy.deepcopy(RAG_API)
    planted["golden_actions"][1]["args"]["country"] = "Brazil"  # a country no cited passage states
    planted["answer"]["value"] = audit_task(planted, INDEX)["derived"]
    row = audit_task(planted, INDEX)
    assert row["status"] == "wrong" and "not_stated" in row["reason"]


def test_an_album_title_bound_as_a_track_title_is_a_type_mismatch() -> None:
    task = copy.deepcopy(RAG_API)
    task["golden_actions"][1] = act(2, "chinook-catalog", "search_tracks", name="Let There Be Rock", **KEY)
    task["answer_spec"]["field"] = "bytes"
    task["junctions"][0]["to"] = "search_tracks.name"
    task["answer"]["value"] = audit_task(task, INDEX)["derived"]
    row = audit_task(task, INDEX)
    assert row["type_mismatch"] and row["bridges"][0]["from_kind"] == "album.title"


def test_unknown_kinds_fail_with_a_reason() -> None:
    spec = copy.deepcopy(API_RAG)
    spec["answer_spec"]["kind"] = "passage_sum"
    row = audit_task(spec, INDEX)
    assert row["status"] == "wrong" and "unknown answer kind 'passage_sum'" in row["reason"]
    call = copy.deepcopy(API_RAG)
    call["golden_actions"][1]["source_type"] = "graph"
    row = audit_task(call, INDEX)
    assert row["status"] == "wrong" and "unknown call kind" in row["reason"]
    pol = {**copy.deepcopy(API_RAG), "policy": {"category": "maybe", "forbidden_sources": ["api"]}}
    row = audit_task(pol, INDEX)
    assert row["status"] == "wrong" and "unknown policy category 'maybe'" in row["reason"]


def test_policies_must_fit_the_path() -> None:
    from factory.retrieval.policy import restrict

    refusal = "No permitted tool can answer this question."
    pol = {"category": "changes_answer", "forbidden_sources": ["retrieval"], "expected_answer": refusal}
    # published: no golden call of the forbidden source, the unrestricted path kept in the policy and audited
    ok = restrict({**copy.deepcopy(API_RAG), "policy": pol})
    assert ok["golden_actions"] == [] and ok["policy"]["unrestricted"]["golden_actions"] == API_RAG["golden_actions"]
    row = audit_task(ok, INDEX)
    assert (row["status"], row["audit_kind"]) == ("correct", "policy_unanswerable"), row["reason"]
    assert row["stored"] == API_RAG["answer"]["value"]  # the answer the forbidden tools give, re-derived
    # the old form (blind read s10: the forbidden calls kept as golden calls) is wrong
    kept = audit_task({**copy.deepcopy(API_RAG), "policy": pol}, INDEX)
    assert kept["status"] == "wrong" and "search_catalogue_notes use a source the policy forbids" in kept["reason"]
    api_only = copy.deepcopy(API_RAG)
    api_only["golden_actions"] = api_only["golden_actions"][:1]
    api_only["answer_spec"] = {"kind": "value", "field": "bytes", "calls": [0]}
    api_only["answer"]["value"] = 11170334
    api_only["junctions"] = []
    row = audit_task(restrict({**api_only, "policy": pol}), INDEX)
    assert row["status"] == "wrong" and "uses none of the forbidden sources" in row["reason"]
    answered = restrict({**copy.deepcopy(API_RAG), "policy": {**pol, "expected_answer": "10"}})
    assert "does not say no permitted tool" in audit_task(answered, INDEX)["reason"]
    no_effect = {**API_RAG, "policy": {"category": "no_effect", "forbidden_sources": ["retrieval"]}}
    assert "which the golden path uses" in audit_task(no_effect, INDEX)["reason"]


def test_without_an_index_search_tasks_are_not_derivable_and_counted_by_kind() -> None:
    report = audit([API_RAG, RAG_API])
    assert report["counts"]["not_derivable"] == 2 and report["calls"]["search_no_index"] == 2
    assert (
        report["by_kind"]["passage_value"]["not_derivable"] == report["by_kind"]["passage_bridge"]["not_derivable"] == 1
    )


def test_the_audit_reads_the_pinned_version_of_the_projects_served_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lancedb = pytest.importorskip("lancedb")
    config = write_config(tmp_path)
    uri = tmp_path / "data" / "retrieval_index" / "lancedb"
    table = lancedb.connect(str(uri)).create_table("music__catalogue_notes", data=[ALBUM_1, ARTIST_1])
    pinned = table.version
    table.delete(f"id = '{ALBUM_1['id']}'")  # a later version without the album note
    assert LanceIndex({"music__catalogue_notes": (str(uri), table.version)}).rows("music", "catalogue_notes") == {
        ARTIST_1["id"]: ARTIST_1
    }
    value = {"uri": str(uri), "table": "music__catalogue_notes", "version": pinned}
    (tmp_path / "data" / "retrieval_index").joinpath("music.json").write_text(json.dumps(value), encoding="utf-8")
    splits = tmp_path / "data" / "dataset_splits"
    splits.mkdir(parents=True)
    (splits / "__all__.json").write_text(json.dumps({"tasks": [API_RAG, RAG_API]}), encoding="utf-8")
    assert main(["--config", str(config), "audit"]) == 0
    report = json.loads((tmp_path / "data" / "audit" / "report.json").read_text(encoding="utf-8"))
    assert report["by_kind"]["passage_value"]["correct"] == report["by_kind"]["passage_bridge"]["correct"] == 1
    value["version"] = table.version
    (tmp_path / "data" / "retrieval_index").joinpath("music.json").write_text(json.dumps(value), encoding="utf-8")
    assert main(["--config", str(config), "audit"]) == 1
    assert "search_passage_missing 1" in capsys.readouterr().out


def test_the_corpus_reading_agrees_with_its_own_raw_facts() -> None:
    """Every statement of the two notes is read, and each agrees with the raw fixture."""
    # the composer credits: count, names, tracks naming one, tracks (both notes)
    for row, keys in ((ALBUM_1, 22), (ARTIST_1, 19)):
        doc = corpora.document(row["source"])
        read = corpora.slots(row["text"], doc)
        assert len(read) == keys and all(s.agrees for s in read), [s for s in read if not s.agrees]


def test_an_api_only_task_the_documents_answer_is_not_unanswerable_without_the_apis() -> None:
    """'Do not use the APIs' claims the documents cannot answer; AC/DC's note states its 2 albums."""
    albums = {
        "id": "sha256:albums",
        "domain": "music",
        "query": "…",
        "golden_actions": [
            act(1, "chinook-catalog", "search_artists", name="AC/DC", **KEY),
            act(2, "chinook-catalog", "list_artist_albums", artist_id=1, **KEY),
        ],
        "answer_spec": {"kind": "count", "calls": [{"step": 2, "index": 0}]},
        "answer": {"type": "number", "value": 2},
        "junctions": [{"from": "search_artists.artist_id", "to": "list_artist_albums.artist_id", "type": "SEQ"}],
        "policy": {"category": "changes_answer", "forbidden_sources": ["api"],
                   "expected_answer": "No permitted tool can answer this question."},
    }  # fmt: skip
    from factory.retrieval.policy import restrict

    albums = restrict(albums)  # as published: no forbidden golden call
    decontaminated = MemoryIndex({("music", "catalogue_notes"): [ALBUM_1]})
    assert audit_task(albums, decontaminated)["status"] == "correct"
    row = audit_task(albums, INDEX)
    assert (
        row["status"] == "wrong"
        and f"{ARTIST_1['id']} (demo://music-catalogue/artist/1) states albums" in row["reason"]
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("corpus", "limit"), [("aviation-weather", 120), ("music-catalogue", None), ("korea-census", None)]
)
def test_every_statement_of_the_rendered_demo_corpora_agrees_with_the_raw_data(corpus: str, limit: int | None) -> None:
    """The renderer (`factory.retrieval.demo_corpora`) and the audit's own reading of the raw data agree on every
    statement of every document (aviation: the first 120 bulletins); a renderer change that states another value,
    or a sentence the audit no longer reads, fails here before it fails a published task."""
    from factory.retrieval.demo_corpora import render

    docs = render(corpus, limit)
    read = {d.source: corpora.slots(d.text, corpora.document(d.source)) for d in docs}
    wrong = [(src, s.key, s.stated, s.raw) for src, slots in read.items() for s in slots if not s.agrees]
    assert not wrong, wrong[:5]
    per_doc = min(len(s) for s in read.values())
    assert per_doc >= {"aviation-weather": 20, "music-catalogue": 8, "korea-census": 7}[corpus]


def test_the_synthesis_replay_reads_a_whole_float_as_the_passage_writes_it() -> None:
    """The resolve stage replays a passage_value with `factory.synthesis.answers.compute`: 42.0 written '42.0 °F'
    (an aviation bulletin's dew point) is stated, not a stale label."""
    from factory.synthesis.answers import compute

    passage = {"id": "aviation:x", "text": "The dew point averaged 42.0 °F and relative humidity 64.9 %."}
    spec = {"kind": "passage_value", "calls": [{"step": 1, "index": 0, "record": {"id": "aviation:x"}}], "value": 42.0}
    results = [{"step": 1, "sample": [passage], "records": [passage], "total_count": None}]
    assert compute(spec, results)["value"] == 42.0
    assert compute({**spec, "value": 42.5}, results)["value"] is None


def test_a_search_query_built_around_the_upstream_value_counts_as_using_it():
    from factory.audit import run

    assert run._contains_name("Accept (artist)", "Accept")
    assert run._contains_name("2015년 서울특별시 인구주택총조사 결과", "서울특별시")
    assert run._contains_name("JFK weather 2013-05-08", "jfk")
    assert not run._contains_name("Acceptance (artist)", "Accept")  # a longer word is another name
    assert not run._contains_name("AC/DC (artist)", "Accept")
