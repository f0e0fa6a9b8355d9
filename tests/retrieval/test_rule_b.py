"""Decontamination rule (b): a RAG-only task whose answer an executed API response states is dropped by the
judged_queries cascade with reason rag_answerable_by_api (planted), and the index waterfall counts it."""

import pytest

from factory.config import RetrievalConfig
from factory.filters import cascade, reasons
from factory.retrieval import decontam

RAG_TASK = {
    "id": "sha256:rag-only",
    "domain": "music",
    "hop_type": "RAG",
    "query": "Which artist recorded the album Let There Be Rock, according to the liner notes?",
    "answer": {"type": "string", "value": "AC/DC", "text": "AC/DC recorded it."},
    "golden_actions": [
        {
            "step": 1,
            "tool": "search_music_catalogue",
            "platform": "retrieval",
            "source_type": "retrieval",
            "args": {"query": "Let There Be Rock liner notes", "k": 5},
            "passage_ids": ["music:abc"],
        },
    ],  # fmt: skip
}
PROBES = [
    {"tool": "search_albums", "platform": "chinook-catalog", "call_digest": "sha256:probe1", "record_count": 1,
     "first_record": {"AlbumId": 4, "Title": "Let There Be Rock", "ArtistName": "AC/DC"}},
    {"tool": "list_genres", "platform": "chinook-catalog", "call_digest": "sha256:probe2", "record_count": 1,
     "first_record": {"GenreId": 1, "Name": "Rock"}},
]  # fmt: skip
TRAJECTORIES = [
    {"golden_actions": [
        {"tool": "search_music_catalogue", "platform": "retrieval", "source_type": "retrieval", "call_digest": "sha256:r",
         "sample": [{"id": "music:abc", "text": "Let There Be Rock by AC/DC"}]},
        {"tool": "get_artist", "platform": "chinook-catalog", "call_digest": "sha256:t1",
         "sample": [{"ArtistId": 1, "Name": "AC/DC"}]},
    ]}
]  # fmt: skip


def test_a_rag_only_question_the_api_answers_is_dropped_with_its_reason():
    evidence = decontam.api_records(PROBES, TRAJECTORIES)
    assert [r.call_digest for r in evidence] == ["sha256:probe1", "sha256:probe2", "sha256:t1"]  # no retrieval record
    v = cascade._rag_verdict(RAG_TASK, evidence, _cfg())
    assert not v.passed and v.reason == "rag_answerable_by_api" and v.stage == "rules"
    assert "search_albums" in v.detail and "let there be rock" in v.detail
    assert reasons.stage_of("rag_answerable_by_api") == "rules"


def test_the_answer_alone_or_a_task_that_needs_the_documents_is_kept():
    # the artist record holds the answer, but nothing of it is named in the question: no statement about the album
    only_answer = decontam.api_records([], TRAJECTORIES)
    assert decontam.rag_answerable(RAG_TASK, only_answer, 2) is None
    other = {**RAG_TASK, "answer": {"type": "number", "value": 1977, "text": "In 1977."}}
    assert decontam.rag_answerable(other, decontam.api_records(PROBES, TRAJECTORIES), 2) is None
    mixed = {**RAG_TASK, "hop_type": "RAG-API"}  # only RAG-only tasks: a mixed chain needs both sources anyway
    assert decontam.rag_answerable(mixed, decontam.api_records(PROBES, TRAJECTORIES), 2) is None
    v = cascade._rag_verdict(other, decontam.api_records(PROBES, TRAJECTORIES), _cfg())
    assert v.passed and v.reason is None


def test_older_rows_without_hop_type_are_rag_only_by_their_calls():
    row = {k: v for k, v in RAG_TASK.items() if k != "hop_type"}
    assert decontam.is_rag_only(row)
    assert not decontam.is_rag_only({**row, "golden_actions": [{"tool": "get_artist"}]})


def test_lineage_names_the_passages_the_index_version_and_the_removal_verdicts():
    from factory.retrieval import index

    value = {"table": "music__notes", "version": 7, "fingerprint": "sha256:f", "model": "m", "chunks": 3, "served": 2,
             "removed": [{"id": "music:a", "reason": "api_answer_stated", "detail": "states AC/DC",
                          "evidence": "sha256:api"}]}  # fmt: skip
    corpus_value = {"chunks": [{"id": "music:a"}, {"id": "music:b"}, {"id": "music:c"}]}
    task = {
        **RAG_TASK,
        "policy": {"category": "no_effect", "forbidden_sources": ["api"], "text": "Do not use the APIs."},
    }
    task["golden_actions"] = [{**RAG_TASK["golden_actions"][0], "passage_ids": ["music:a", "music:b"]}]
    task["lineage"] = {"verdicts": [{"check": "rag_answerable_by_api", "passed": True, "detail": "no API record"}]}
    lin = index.task_lineage(task, value, corpus_value)
    assert lin["index"]["version"] == 7 and lin["index"]["fingerprint"] == "sha256:f"
    removed, kept = lin["passages"]
    assert removed["served_now"] is False and removed["removal"]["reason"] == "api_answer_stated"
    assert kept["served_now"] is True and kept["removal"] is None and lin["rule_b"][0]["passed"]
    assert [v["id"] for v in index.task_lineage({"id": "sha256:api"}, value, None)["removals_caused"]] == ["music:a"]
    text = "\n".join(index.render_task_lineage(lin))
    assert "NOT SERVED" in text and "policy no_effect (forbids api)" in text and "music__notes v7" in text


def _cfg():
    from types import SimpleNamespace

    return SimpleNamespace(retrieval=RetrievalConfig())


@pytest.mark.slow  # a LanceDB build with its BM25 index (about a minute on a loaded 2-core machine)
def test_index_waterfall_counts_rule_b_and_lineage_names_passages_version_and_verdicts(tmp_path):
    import yaml

    from factory.config import parse_config
    from factory.retrieval import corpus, index
    from tests.retrieval.test_index import FakeEmbedder

    raw = {
        "data_dir": str(tmp_path / "data"),
        "domains": [{"name": "music", "sources": [{"kind": "openapi", "spec": "demo://x"}],
                     "retrieval": {"collection": "notes", "sources": [{"path": "x", "licence": "CC0", "language": "en"}]}}],
    }  # fmt: skip
    cfg = parse_config(yaml.safe_dump(raw), project_dir=tmp_path)
    docs = [
        corpus.Document("d0", "Let There Be Rock was recorded by AC/DC in Sydney in 1977.", "s/0"),
        corpus.Document("d1", "Jazz albums in the catalogue run longer than rock albums on average.", "s/1"),
    ]
    chunks = corpus.chunk_documents("music", docs, RetrievalConfig(), licence="CC0", language="en")
    api_task = {"id": "sha256:api", "domain": "music", "split": "train", "query": "Which artist recorded Let There Be Rock?",
                "answer": {"value": "AC/DC"}, "golden_actions": [{"tool": "search_albums", "args": {"title": "Let There Be Rock"}}]}  # fmt: skip
    rag = {
        **RAG_TASK,
        "policy": {"category": "no_effect", "forbidden_sources": ["api"], "text": "Do not use the APIs."},
    }
    rag["golden_actions"] = [{**RAG_TASK["golden_actions"][0], "passage_ids": [chunks[0]["id"], chunks[1]["id"]]}]
    drop = {
        "task": {"id": "sha256:dropped"},
        "stage": "rules",
        "reason": "rag_answerable_by_api",
        "detail": "API says so",
    }
    vc = {"domain": "music", "collection": "notes", "chunks": chunks}
    # the published task cites only the passage that stays (a gold passage is protected from removal:
    # tests/retrieval for that); the lineage below reads a task citing both, one of them removed
    cites_kept = {**rag, "golden_actions": [{**rag["golden_actions"][0], "passage_ids": [chunks[1]["id"]]}]}
    value, meta = index.build_index("music", vc, {"music": vc}, [api_task, cites_kept], cfg, embedder=FakeEmbedder(),
                                    rag_drops=[drop, {"task": {"id": "x"}, "reason": "near_duplicate"}])  # fmt: skip
    assert meta["rag_only_dropped"] == 1 and value["rag_tasks_dropped"][0]["id"] == "sha256:dropped"
    assert meta["removed_total"] == 1 and meta["hop_types"] == {"API": 1, "RAG": 1}
    assert meta["policy_by_category"] == {"changes_answer": 0, "no_effect": 1, "none": 1}
    assert meta["index_bytes"] > 0 and "rag_answerable_by_api (b)" in str(meta["decontamination_waterfall"])
    lin = index.task_lineage(rag, value, vc)
    assert lin["index"]["version"] == value["version"] and lin["index"]["fingerprint"] == value["fingerprint"]
    removed, kept = lin["passages"]
    assert removed["served_now"] is False and removed["removal"]["reason"] == "api_answer_stated"
    assert kept["served_now"] is True and kept["removal"] is None
    caused = index.task_lineage(api_task, value, vc)["removals_caused"]
    assert [v["id"] for v in caused] == [chunks[0]["id"]]  # the chunk removed because of the API task
    text = "\n".join(index.render_task_lineage(lin))
    assert "NOT SERVED" in text and "policy no_effect (forbids api)" in text
