"""Decontamination verdicts (planted documents) and the LanceDB index: served ids, pinned versions, search, gate."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from factory import quality
from factory.config import RetrievalConfig, parse_config
from factory.retrieval import corpus, decontam, index

ALBUM_TASK = {
    "id": "sha256:album-task",
    "domain": "music",
    "split": "train",
    "query": "Which artist recorded the album Let There Be Rock?",
    "answer": {"value": "AC/DC", "type": "string"},
    "golden_actions": [
        {"tool": "search_albums", "args": {"title": "Let There Be Rock", "page": 1}},
        {"tool": "get_artist", "args": {"artist_id": 1}},
    ],
}
HELD_OUT = {
    "id": "sha256:held-out",
    "domain": "music",
    "split": "test",
    "query": "How many tracks are on the playlist Heavy Metal Classic?",
    "answer": {"value": 26},
    "golden_actions": [{"tool": "list_playlists", "args": {"name": "Heavy Metal Classic"}}],
}
FLIGHT_TASK = {
    "id": "sha256:flight-task",
    "domain": "aviation",
    "split": "train",
    "query": "Which airline flies the tail number N14228?",
    "answer": {"value": "United Air Lines Inc."},
    "golden_actions": [{"tool": "get_plane", "args": {"tailnum": "N14228"}}],
}


def _chunks(domain: str, texts: list[str]) -> list[dict]:
    docs = [corpus.Document(f"doc {i}", t, f"src/{i}") for i, t in enumerate(texts)]
    return corpus.chunk_documents(domain, docs, RetrievalConfig(), licence="CC0", language="en")


MUSIC_TEXTS = [
    "Let There Be Rock is a 1977 album by AC/DC. It was recorded in Sydney.",  # (a) states the answer
    "The Rolling Stones released many compilations. Let There Be Rock is not one of them.",  # anchor, no answer
    "Trivia corner: how many tracks are on the playlist Heavy Metal Classic? Find out below.",  # (c) held out
    "Jazz albums in the catalogue run longer than rock albums on average.",  # clean
    "Tail number N14228 is an aircraft flown by United Air Lines Inc. out of Newark.",  # (d) aviation answer
]


def test_planted_documents_get_their_reason_codes():
    chunks = _chunks("music", MUSIC_TEXTS)
    verdicts, stats = decontam.decontaminate(
        "music", chunks, [ALBUM_TASK, HELD_OUT, FLIGHT_TASK], {}, RetrievalConfig()
    )
    by_id = {v["id"]: v for v in verdicts}
    reasons = [by_id.get(c["id"], {}).get("reason") for c in chunks]
    assert reasons == ["api_answer_stated", None, "held_out_near_duplicate", None, "cross_domain_leak"]
    assert "ac/dc" in by_id[chunks[0]["id"]]["detail"]
    assert by_id[chunks[0]["id"]]["evidence"] == "sha256:album-task"
    assert stats["removed"]["api_answer_stated"] == 1 and stats["rag_only_tasks"] == 0


def test_a_document_holding_a_benchmark_question_is_removed(tmp_path):
    # issue 17 item 2 (c): near-duplicates of benchmark items, read from the configured splits.benchmarks files
    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        json.dumps({"id": "b7", "query": "Which jazz albums in the catalogue run longer than rock albums?"}) + "\n",
        encoding="utf-8",
    )
    cfg = notes_project(tmp_path)
    cfg = cfg.model_copy(update={"splits": cfg.splits.model_copy(update={"benchmarks": [str(bench)]})})
    questions = index.benchmark_questions(cfg)
    assert questions == [(f"{bench}:b7", "Which jazz albums in the catalogue run longer than rock albums?")]
    chunks = _chunks("music", MUSIC_TEXTS)
    verdicts, stats = decontam.decontaminate("music", chunks, [ALBUM_TASK], {}, RetrievalConfig(), questions)
    by_id = {v["id"]: v for v in verdicts}
    jazz = by_id[chunks[3]["id"]]
    assert jazz["reason"] == "benchmark_near_duplicate" and jazz["evidence"] == f"{bench}:b7"
    assert stats["removed"]["benchmark_near_duplicate"] == 1 and stats["benchmark_questions"] == 1
    # without the benchmark file the same document is served
    verdicts, _ = decontam.decontaminate("music", chunks, [ALBUM_TASK], {}, RetrievalConfig())
    assert chunks[3]["id"] not in {v["id"] for v in verdicts}


def test_bridge_value_and_cross_domain_duplicate():
    task = {
        **ALBUM_TASK,
        "answer": {"value": 1977},
        "golden_actions": [
            {"tool": "search_albums", "args": {"title": "Let There Be Rock"}},
            {"tool": "list_tracks", "args": {"artist_name": "AC/DC"}},  # a looked-up value: a bridge
        ],
    }
    text = "In the store, Let There Be Rock is credited to AC/DC and sells well."
    dup = "A sentence that two domains both carry word for word, which is a leak between their corpora."
    chunks = _chunks("music", [text, dup])
    others = {"aviation": _chunks("aviation", [dup])}
    verdicts, _ = decontam.decontaminate("music", chunks, [task], others, RetrievalConfig())
    assert [v["reason"] for v in verdicts] == ["api_bridge_stated", "cross_domain_leak"]
    assert "Jaccard 1.00" in verdicts[1]["detail"]


def test_short_and_numeric_id_values_decide_nothing():
    task = {**ALBUM_TASK, "answer": {"value": 7}, "golden_actions": [
        {"tool": "search_albums", "args": {"title": "Let There Be Rock"}}, {"tool": "t", "args": {"album_id": 12}}]}  # fmt: skip
    chunks = _chunks("music", ["Let There Be Rock has 7 songs and album number 12 in the list."])
    verdicts, _ = decontam.decontaminate("music", chunks, [task], {}, RetrievalConfig())
    assert verdicts == []
    # an hour named in the question is no anchor: "15" is in every "15:00"
    hourly = {"id": "h", "domain": "aviation", "split": "train", "query": "How many flights left EWR at hour 15?",
              "answer": {"value": 24}, "golden_actions": [{"tool": "t", "args": {"origin": "EWR", "hour": 15}}]}  # fmt: skip
    # (issue 17 gap 2: a two-digit count is stated only with what it counts; "24 departures" counts something the
    # question does not ask for, and is kept now; "24 flights" is removed as "24 departures" was before)
    chunks = _chunks(
        "aviation",
        ["Temperatures peaked at 15:00 over 24 hourly observations.", "EWR logged 24 flights.",
         "EWR logged 24 departures."],
    )  # fmt: skip
    verdicts, _ = decontam.decontaminate("aviation", chunks, [hourly], {}, RetrievalConfig())
    assert [v["id"] for v in verdicts] == [chunks[1]["id"]]


SEONGDONG = (
    "2020년 성동구의 인구는 28만 2,967명으로 서울특별시 인구의 3.0%를 차지하며, 도내 25개 시군구 가운데 21위이다."
)
# issue 17 gap 2: rule (a) read two-digit counts inside dates, ranks and times (89 of 91 demo removals)
ROUTES_TASK = {
    "id": "sha256:routes", "domain": "aviation", "split": "test",
    "query": "How many more routes flown by airline DL does EWR have than LGA?",
    "answer": {"value": 18, "type": "number", "text": "EWR has 18 more routes flown by DL than LGA."},
    "golden_actions": [{"tool": "list_routes", "args": {"airline": "DL", "origin": "EWR"}},
                       {"tool": "list_routes", "args": {"airline": "DL", "origin": "LGA"}}],
}  # fmt: skip
SALES_TASK = {
    "id": "sha256:invoices", "domain": "music", "split": "test",
    "query": "How many invoices do the customers from Germany have in total?",
    "answer": {"value": 28, "type": "number"},
    "golden_actions": [{"tool": "list_customers", "args": {"country": "Germany"}}],
}  # fmt: skip


def test_a_number_inside_a_date_a_rank_or_a_time_states_no_answer():
    aviation = _chunks("aviation", [
        "Daily weather bulletin for EWR (Newark Liberty Intl), January 18, 2013 (2013-01-18).",
        "By its highest temperature this was day 18 of 31 at EWR in January 2013 (1 = warmest).",
        "The strongest wind at EWR came at 18:00, the 18th day of the month; DL flew 18 Jan. 2013.",
        "At EWR the wind reached 18 mph.",  # a number about the airport, but not of what the task counts
    ])  # fmt: skip
    verdicts, _ = decontam.decontaminate("aviation", aviation, [ROUTES_TASK], {}, RetrievalConfig())
    assert verdicts == []
    music = _chunks("music", [
        "The store sold 1 track copies in 1 invoices, first on 2008-03-28 and last on 2008-03-28; buyers came "
        "from 1 countries (most units: Germany, 1).",
        "Germany's customers bought albums with 3 h 28 min 06 s of music.",
        "(Most units: Germany, 28).",  # a bare number: says nothing of invoices
    ])  # fmt: skip
    verdicts, _ = decontam.decontaminate("music", music, [SALES_TASK], {}, RetrievalConfig())
    assert verdicts == []
    korea = _chunks("korea", [SEONGDONG])
    gu = {"id": "sha256:gu", "domain": "korea", "split": "test", "query": "성동구의 인구 순위는 몇 위인가요?",
          "answer": {"value": 21}, "golden_actions": [{"tool": "t", "args": {"sigunguNm": "성동구"}}]}  # fmt: skip
    pop = {**gu, "id": "sha256:pop", "answer": {"value": 28}}
    verdicts, _ = decontam.decontaminate("korea", korea, [gu, pop], {}, RetrievalConfig())
    assert verdicts == []  # 21위 is a rank, 28만 is part of 282,967


def test_a_count_stated_of_the_tasks_subject_is_still_removed():
    aviation = _chunks("aviation", [
        "Daily weather bulletin for EWR, January 18, 2013. At EWR, DL flies 18 more routes than at LGA.",
    ])  # fmt: skip
    verdicts, _ = decontam.decontaminate("aviation", aviation, [ROUTES_TASK], {}, RetrievalConfig())
    assert [(v["reason"], v["evidence"]) for v in verdicts] == [("api_answer_stated", "sha256:routes")]
    assert "'18'" in verdicts[0]["detail"]
    albums = {**ALBUM_TASK, "query": "How many albums does AC/DC have?", "answer": {"value": 18},
              "golden_actions": [{"tool": "list_albums", "args": {"artist": "AC/DC"}}]}  # fmt: skip
    music = _chunks("music", ["Formed in Sydney, AC/DC has 18 albums in the catalogue (first on 1975-02-17).",
                              "Invoices from Germany: 28 in all, the customers there hold 28 invoices."])  # fmt: skip
    verdicts, _ = decontam.decontaminate("music", music, [albums, SALES_TASK], {}, RetrievalConfig())
    assert [v["evidence"] for v in verdicts] == ["sha256:album-task", "sha256:invoices"]
    korea = _chunks("korea", [SEONGDONG])
    gu = {"id": "sha256:gu", "domain": "korea", "split": "test", "query": "성동구가 속한 시도의 구 수는 어떻게 되나요?",
          "answer": {"value": 25}, "golden_actions": [{"tool": "t", "args": {"sigunguNm": "성동구"}}]}  # fmt: skip
    verdicts, _ = decontam.decontaminate("korea", korea, [gu], {}, RetrievalConfig())
    assert [v["evidence"] for v in verdicts] == ["sha256:gu"]  # a counter says it is a count: 25개


class FakeEmbedder:
    """Deterministic 8-d bag-of-letters vectors (no model load)."""

    model_id = "fake-letters"

    def encode(self, texts):
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if ch.isalpha():
                    out[i, ord(ch) % 8] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    encode_queries = encode

    def metadata(self, prefix):
        return {f"{prefix}/model": self.model_id}


def _project(tmp: Path):
    raw = {
        "data_dir": str(tmp / "data"),
        "domains": [
            {
                "name": "music",
                "sources": [{"kind": "openapi", "spec": "demo://x"}],
                "retrieval": {"collection": "notes", "sources": [{"path": "x", "licence": "CC0", "language": "en"}]},
            }
        ],
    }
    return parse_config(yaml.safe_dump(raw), project_dir=tmp)


def test_index_serves_kept_chunks_only_and_pins_its_version(tmp_path):
    cfg = _project(tmp_path)
    chunks = _chunks("music", MUSIC_TEXTS)
    value_corpus = {"domain": "music", "collection": "notes", "chunks": chunks}
    tasks = [ALBUM_TASK, HELD_OUT, FLIGHT_TASK]
    v1, meta = index.build_index("music", value_corpus, {"music": value_corpus}, tasks, cfg, embedder=FakeEmbedder())
    assert meta["served"] == 2 and meta["removed_total"] == 3
    ix = index.RetrievalIndex(v1["uri"], v1["table"], v1["version"], FakeEmbedder())
    removed = {r["id"] for r in v1["removed"]}
    assert set(ix.ids()) == {c["id"] for c in chunks} - removed
    hits = ix.search("jazz albums run longer", 2)
    assert hits[0]["id"] == chunks[3]["id"] and hits[0]["title"] == "doc 3"
    frame = index.index_frame(v1, cfg, value_corpus)
    assert quality.validate("retrieval_index", frame, cfg).success
    # a rebuild without tasks writes a new version; the old value still serves what it pinned
    v2, _ = index.build_index("music", value_corpus, {"music": value_corpus}, [], cfg, embedder=FakeEmbedder())
    assert v2["version"] > v1["version"] and v2["fingerprint"] != v1["fingerprint"]
    assert len(index.RetrievalIndex(v2["uri"], v2["table"], v2["version"], FakeEmbedder()).ids()) == 5
    assert len(index.RetrievalIndex(v1["uri"], v1["table"], v1["version"], FakeEmbedder()).ids()) == 2
    # the gate fails when a value claims a removal its table still serves
    bad = {**v2, "removed": v1["removed"]}
    result = quality.validate("retrieval_index", index.index_frame(bad, cfg, value_corpus), cfg)
    assert not result.success
    assert "no removed chunk id is served" in result.summary()


def test_missing_table_version_is_a_clear_error(tmp_path):
    with pytest.raises(index.RetrievalIndexError, match="cannot open retrieval index music__notes version 3"):
        index.RetrievalIndex(str(tmp_path / "nope"), "music__notes", 3, FakeEmbedder())


# --------------------------------------------------------------------------- retrieval as a tool


def notes_project(tmp: Path):
    """A project whose music domain's only source is a retrieval collection 'notes' (its config)."""
    raw = {
        "data_dir": str(tmp / "data"),
        "domains": [
            {
                "name": "music",
                "sources": [{"kind": "retrieval", "collection": "notes"}],
                "retrieval": {"collection": "notes", "sources": [{"path": "x", "licence": "CC0", "language": "en"}]},
            }
        ],
    }
    return parse_config(yaml.safe_dump(raw), project_dir=tmp)


def _published(tmp: Path):
    """A project whose music domain has a retrieval source, and its published index (fake embedder)."""
    from factory.io import data_store, write_artifact
    from factory.tools.transports import retrieval as transport

    cfg = notes_project(tmp)
    chunks = _chunks("music", MUSIC_TEXTS)
    vc = {"domain": "music", "collection": "notes", "chunks": chunks}
    value, _ = index.build_index("music", vc, {"music": vc}, [ALBUM_TASK], cfg, embedder=FakeEmbedder())
    write_artifact(data_store(cfg), "retrieval_synthesis_index", "music", value)  # the version the tool pins
    # the transport opens indices per process by (location, table, version, model): seed it with the fake model
    key = (value["uri"], value["table"], value["version"], value["model"])
    transport._OPEN[key] = index.RetrievalIndex(value["uri"], value["table"], value["version"], FakeEmbedder())
    return cfg, value, chunks


def test_search_tool_spec_and_executor_call(tmp_path):
    import asyncio

    from factory.tools.executor import ToolExecutor
    from factory.tools.fingerprint import surface_fingerprint
    from factory.tools.outcomes import Outcome
    from factory.tools.sources import load_domain_tools

    cfg, value, chunks = _published(tmp_path)
    (tool,) = load_domain_tools(cfg.domain("music"), cfg)
    assert tool.name == "search_notes" and tool.source.kind == "retrieval"
    assert tool.required_params == ["query"] and tool.output_schema["x-index"]["version"] == value["version"]

    async def go():
        async with ToolExecutor([tool], cfg.executor) as ex:
            return (
                await ex.call("search_notes", {"query": "jazz albums run longer", "k": 2}),
                await ex.call("search_notes", {"query": ""}),
                await ex.call("search_notes", {"query": "rock", "k": 0}),
            )

    ok, empty, bad_k = asyncio.run(go())
    assert ok.outcome is Outcome.SEMANTIC_SUCCESS, ok.detail
    served = {c["id"] for c in chunks} - {r["id"] for r in value["removed"]}
    passages = ok.records
    assert len(passages) == 2 and passages[0]["id"] == chunks[3]["id"]
    assert {p["id"] for p in passages} <= served  # a removed chunk is never returned
    assert empty.outcome is Outcome.MISSING_FIELD and empty.attempts == 0
    assert bad_k.outcome is Outcome.SCHEMA_MISMATCH
    # a rebuilt index is a new tool surface (drift), like a changed API
    v2, _ = index.build_index("music", {"domain": "music", "collection": "notes", "chunks": chunks}, {}, [], cfg,
                              embedder=FakeEmbedder())  # fmt: skip
    from factory.io import data_store, write_artifact

    write_artifact(data_store(cfg), "retrieval_synthesis_index", "music", v2)
    (tool2,) = load_domain_tools(cfg.domain("music"), cfg)
    assert surface_fingerprint([tool2]) != surface_fingerprint([tool])


def test_unbuilt_index_is_a_source_error(tmp_path):
    from factory.tools.sources import SourceError, load_domain_tools

    raw = {
        "data_dir": str(tmp_path / "data"),
        "domains": [
            {
                "name": "music",
                "sources": [{"kind": "retrieval", "collection": "notes"}],
                "retrieval": {"collection": "notes", "sources": [{"path": "x", "licence": "CC0", "language": "en"}]},
            }
        ],
    }
    cfg = parse_config(yaml.safe_dump(raw), project_dir=tmp_path)
    with pytest.raises(SourceError, match="retrieval://notes.*not built yet; materialize retrieval_synthesis_index"):
        load_domain_tools(cfg.domain("music"), cfg)


def test_date_tokens_join_the_ways_a_date_is_written():
    from factory.retrieval.index import date_tokens, search_text

    assert date_tokens("EWR weather on January 5, 2013") == ["date20130105"]
    assert date_tokens("2013-01-05, 5 Jan 2013 and 2013년 1월 5일") == ["date20130105"]
    assert date_tokens("first sale on 2009-01-11 00:00:00; day 13 of 31") == ["date20090111"]
    assert date_tokens("month 13: 2013-13-01") == []
    chunk = {"title": "EWR weather 2013-01-05", "text": "Temperatures ranged from 30.0 °F to 41.0 °F."}
    text = search_text(chunk)
    assert text.startswith("EWR weather 2013-01-05\nTemperatures") and text.endswith("date20130105")


@pytest.mark.slow  # two LanceDB builds: ~35 s on the shared cores
def test_served_index_keeps_gold_passages_of_api_rag_tasks_and_replays_their_searches(tmp_path):
    """The ordering design (issue 17): decontamination after the splits never removes a passage a published
    API+RAG task used; the rule that would have is recorded, and the task's search replays on the served version."""
    cfg = _project(tmp_path)
    chunks = _chunks("music", MUSIC_TEXTS)
    vc = {"domain": "music", "collection": "notes", "chunks": chunks}
    plain, _ = index.build_index("music", vc, {"music": vc}, [ALBUM_TASK], cfg, embedder=FakeEmbedder())
    gold = plain["removed"][0]["id"]  # without an API+RAG task citing it, rule (a) removes it for ALBUM_TASK
    rag_task = {
        "id": "sha256:rag-task",
        "domain": "music",
        "split": "test",
        "query": "Which compilations are not by the Rolling Stones?",
        "answer": {"value": 3},
        "hop_type": "RAG-API",
        "golden_actions": [
            {"step": 1, "tool": "search_notes", "args": {"query": "Rolling Stones compilations", "k": 5},
             "source_type": "retrieval", "passage_ids": [gold]},
        ],
    }  # fmt: skip
    value, meta = index.build_index("music", vc, {"music": vc}, [ALBUM_TASK, rag_task], cfg, embedder=FakeEmbedder())
    assert gold not in {v["id"] for v in value["removed"]}
    assert [(p["id"], p["tasks"]) for p in value["protected"]] == [(gold, ["sha256:rag-task"])]
    assert value["protected"][0]["reason"].startswith("api_")
    assert value["api_rag_replay"] == {"checked": 1, "replayed": 1, "failed_calls": 0, "failed": []}
    assert meta["protected_gold_passages"] == 1


def test_a_corpus_whose_every_chunk_is_removed_builds_an_empty_version_that_serves_nothing(tmp_path):
    """Slow drift test, session 11: after a re-synthesis every chunk of a 25-document corpus was removed and LanceDB
    refused the table ('FixedSizeList with dimension 0'). The empty version keeps the model's dimension."""
    cfg = _project(tmp_path)
    chunks = _chunks("music", MUSIC_TEXTS)
    tasks = [ALBUM_TASK, HELD_OUT, FLIGHT_TASK]
    full = {"domain": "music", "collection": "notes", "chunks": chunks}
    v1, _ = index.build_index("music", full, {"music": full}, tasks, cfg, embedder=FakeEmbedder())
    removed = {r["id"] for r in v1["removed"]}
    only_removed = {**full, "chunks": [c for c in chunks if c["id"] in removed]}
    v2, meta = index.build_index("music", only_removed, {"music": only_removed}, tasks, cfg, embedder=FakeEmbedder())
    assert meta["served"] == 0 and {r["id"] for r in v2["removed"]} == removed
    ix = index.RetrievalIndex(v2["uri"], v2["table"], v2["version"], FakeEmbedder())
    assert ix.ids() == []
    assert quality.validate("retrieval_index", index.index_frame(v2, cfg, only_removed), cfg).success


def test_the_waterfall_subtracts_only_what_is_removed_and_counts_api_rag_tasks_as_such(tmp_path):
    """Issue 17: the demo's waterfall showed 500 − 89 beside 413 served (2 protected gold passages were subtracted)
    and called the API+RAG tasks of every domain "RAG-only tasks"."""
    cfg = _project(tmp_path)
    chunks = _chunks("music", MUSIC_TEXTS)
    vc = {"domain": "music", "collection": "notes", "chunks": chunks}
    api_rag = {"id": "sha256:api-rag", "domain": "music", "split": "train", "hop_type": "API-RAG",
               "query": "How long is the album by the artist of Let There Be Rock?", "answer": {"value": 3},
               "golden_actions": [{"step": 1, "tool": "search_notes", "args": {"query": "Let There Be Rock", "k": 5},
                                   "source_type": "retrieval", "passage_ids": [chunks[0]["id"]]}]}  # fmt: skip
    other_domain = {**api_rag, "id": "sha256:elsewhere", "domain": "aviation"}
    tasks = [ALBUM_TASK, HELD_OUT, FLIGHT_TASK, api_rag, other_domain]
    value, meta = index.build_index("music", vc, {"music": vc}, tasks, cfg, embedder=FakeEmbedder())
    assert [p["id"] for p in value["protected"]] == [chunks[0]["id"]]  # rule (a) matched the gold passage: kept
    removed = {k: v for k, v in meta.items() if k.startswith("removed/")}
    assert removed["removed/api_answer_stated"] == 0 and sum(removed.values()) == meta["removed_total"] == 2
    assert meta["chunks"] - meta["removed_total"] == meta["served"] == 3
    assert value["decontamination"]["removed"]["api_answer_stated"] == 0
    assert value["decontamination"]["protected"] == {"api_answer_stated": 1}
    assert meta["api_rag_tasks"] == 1 and meta["rag_only_tasks"] == 0  # this domain's, and not called RAG-only
    rows = dict(
        (cells[1].strip(), int(cells[2])) for line in str(meta["decontamination_waterfall"]).splitlines()[2:]
        if len(cells := line.split("|")) > 3
    )  # fmt: skip
    assert (
        rows["corpus chunks"] + sum(n for step, n in rows.items() if step.startswith("removed:"))
        == rows["served chunks"]
    )
    assert rows["API+RAG tasks (published, this domain)"] == 1 and rows["RAG-only tasks (published, this domain)"] == 0
