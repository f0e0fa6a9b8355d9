"""Decontamination rule (b): a RAG-only task whose answer an executed API response states is dropped by the
judged_queries cascade with reason rag_answerable_by_api (planted), and the index waterfall counts it."""

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


def _cfg():
    from types import SimpleNamespace

    return SimpleNamespace(retrieval=RetrievalConfig())
