"""Issue 17 gap 1: the search tool an agent is served after `retrieval_index` is published returns no chunk that
decontamination removed. The inventory's tool pins the synthesis version (every chunk); evaluation, conversations,
exports and the RL environment read the inventories through `served_inventories`, which re-pins it to the published
(decontaminated) version of the same table."""

import asyncio
import json
from pathlib import Path

from factory.io import data_store, write_artifact
from factory.retrieval import index
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.retrieval import parse_index_path, served_inventories, serves_after
from tests.retrieval.test_index import (
    ALBUM_TASK,
    FLIGHT_TASK,
    HELD_OUT,
    MUSIC_TEXTS,
    FakeEmbedder,
    _chunks,
    notes_project,
)

QUERY = "Let There Be Rock AC/DC album"


def _world(tmp: Path):
    """A music domain whose only source is its retrieval index: the synthesis version (5 chunks), the tool inventory
    that pins it, and the published retrieval_index decontaminated against three API-only tasks (3 removed)."""
    from factory.ingest import build_inventory
    from factory.tools.transports import retrieval as transport

    cfg = notes_project(tmp)
    store = data_store(cfg)
    chunks = _chunks("music", MUSIC_TEXTS)
    vc = {"domain": "music", "collection": "notes", "chunks": chunks}
    synthesis, _ = index.build_index("music", vc, {}, [], cfg, embedder=FakeEmbedder(), stage="synthesis")
    write_artifact(store, "retrieval_synthesis_index", "music", synthesis)
    inventory, _ = build_inventory(cfg.domain("music"), cfg)
    write_artifact(store, "tool_inventory", "music", inventory)
    served, _ = index.build_index(
        "music", vc, {"music": vc}, [ALBUM_TASK, HELD_OUT, FLIGHT_TASK], cfg, embedder=FakeEmbedder()
    )
    write_artifact(store, "retrieval_index", "music", served)
    for v in (synthesis, served):  # the transport opens indices per (location, table, version, model)
        key = (v["uri"], v["table"], v["version"], v["model"])
        transport._OPEN[key] = index.RetrievalIndex(v["uri"], v["table"], v["version"], FakeEmbedder())
    removed = {r["id"] for r in served["removed"]}
    assert chunks[0]["id"] in removed and len(removed) == 3  # "Let There Be Rock is a 1977 album by AC/DC": (a)
    return cfg, inventory, synthesis, served, chunks, removed


def _search(cfg, registry: ToolRegistry) -> list[str]:
    async def go():
        async with executor_factory(cfg, ["music"], registry)() as ex:
            return await ex.call("search_notes", {"query": QUERY, "k": 5})

    r = asyncio.run(go())
    assert r.ok, r.detail
    return [p["id"] for p in r.records]


def test_the_inventory_pins_the_synthesis_version_which_serves_removed_chunks(tmp_path):
    cfg, inventory, synthesis, served, chunks, removed = _world(tmp_path)
    assert served["version"] > synthesis["version"]
    (spec,) = ToolRegistry.from_inventories({"music": inventory}).specs()
    assert parse_index_path(spec.path)[1] == synthesis["version"]
    assert removed <= set(_search(cfg, ToolRegistry.from_inventories({"music": inventory})))  # the leak


def test_a_removed_chunk_is_not_returned_by_the_search_tool_the_evaluation_harness_serves(tmp_path):
    from factory.eval.harness import EvalSettings, evaluate, load_inventories, load_tasks
    from factory.eval.oracle import ORACLE
    from factory.llm.service import LLM

    cfg, inventory, synthesis, served, chunks, removed = _world(tmp_path)
    # the CLIs (factory eval, conversations eval, eval --variants) load the inventories so
    loaded = load_inventories(cfg)
    (spec,) = ToolRegistry.from_inventories(loaded).specs()
    assert parse_index_path(spec.path)[1] == served["version"] and spec.output_schema["x-index"] == {
        "table": served["table"], "version": served["version"], "fingerprint": served["fingerprint"]
    }  # fmt: skip
    assert loaded["music"]["retrieval_served"] == {
        "search_notes": {"table": served["table"], "version": served["version"], "pinned_version": synthesis["version"]}
    }
    assert loaded["music"]["fingerprint"] != inventory["fingerprint"]
    got = _search(cfg, ToolRegistry.from_inventories(loaded))
    assert got and not set(got) & removed
    # an oracle episode of the harness (evaluation_report gets the raw inventory as its input) searches the
    # served version: no removed id in its trace
    gold = chunks[1]["id"]  # "... Let There Be Rock is not one of them.": kept
    task = {
        "id": "sha256:rag", "domain": "music", "platforms": ["music-notes"], "language": "en",
        "query": "Which band's compilations is Let There Be Rock not one of?", "templated_query": "q",
        "answer": {"type": "string", "value": "The Rolling Stones", "text": "The Rolling Stones."},
        "pattern": "SEQ", "category": "SEQ", "hop_type": "RAG",
        "golden_actions": [{"step": 1, "tool": "search_notes", "platform": "music-notes", "source_type": "retrieval",
                            "args": {"query": QUERY, "k": 5}, "passage_ids": [gold]}],
        "answer_spec": {"kind": "passage_value", "passage_id": gold, "calls": [{"step": 1, "index": 0}]},
        "available_tools": ["search_notes"], "system_state": {}, "max_allowed_calls": 2,
        "reward_basis": ["RESPONSE"], "split": "test", "lineage": {"trajectory_id": "t"},
    }  # fmt: skip
    settings = EvalSettings.resolve(cfg, backend=ORACLE, split="all", runs=1, k=1, temperature=0.0)
    llm = LLM(cfg.models)
    try:
        result = evaluate(load_tasks([task]), {"music": inventory}, cfg, llm, settings)
    finally:
        llm.close()
    trace = json.dumps(result.traces)
    assert gold in trace  # the search ran and returned the gold passage
    assert not [i for i in removed if i in trace], "a removed chunk reached the agent"


def test_a_stale_or_missing_published_index_leaves_the_pinned_version(tmp_path):
    cfg, inventory, synthesis, served, chunks, removed = _world(tmp_path)
    (spec,) = ToolRegistry.from_inventories({"music": inventory}).specs()
    assert serves_after(spec, served)
    older = {**served, "version": synthesis["version"] - 1}  # an earlier run's index: the corpus may differ
    assert not serves_after(spec, older)
    assert not serves_after(spec, {**served, "table": "music__other"})
    assert not serves_after(spec, {**served, "uri": str(tmp_path / "elsewhere")})
    assert not serves_after(spec, {**served, "stage": "synthesis"})
    assert not serves_after(spec, None) and not serves_after(spec, {"table": None})
    write_artifact(data_store(cfg), "retrieval_index", "music", older)
    assert served_inventories({"music": inventory}, cfg) == {"music": inventory}
    data_store(cfg).delete("retrieval_index/music.json")
    assert served_inventories({"music": inventory}, cfg) == {"music": inventory}


def test_an_exported_search_replayed_on_the_served_index_passes_when_its_passages_are_still_returned():
    """Exports replay golden calls and compare result digests: a search's other passages may differ on the served
    version (a removed chunk is gone), which is no mismatch while the passages its task used are returned."""
    from types import SimpleNamespace

    from factory.export.results import _verify
    from factory.tools.outcomes import Outcome

    action = {"step": 1, "tool": "search_notes", "platform": "music-notes", "source_type": "retrieval",
              "args": {"query": QUERY, "k": 5}, "passage_ids": ["music:kept"], "result_digest": "sha256:synthesis"}  # fmt: skip
    task = {"golden_actions": [action], "answer_spec": {"kind": "passage_value", "passage_id": "music:kept",
            "calls": [{"step": 1, "index": 0}]}, "answer": {"value": None}, "answer_source": "replay"}  # fmt: skip

    def result(ids):
        records = [{"id": i, "text": "t"} for i in ids]
        return SimpleNamespace(records=records, total_count=None, record_count=len(records), ok=True,
                               outcome=Outcome.SEMANTIC_SUCCESS, call_digest="", detail="")  # fmt: skip

    ok = _verify(task, [result(["music:kept", "music:other"])])
    assert not [p for p in ok.problems if p.reason == "result_digest_mismatch"]
    assert "search_results_from_served_index: step 1 search_notes" in ok.flags
    gone = _verify(task, [result(["music:other"])])  # the task's own passage is not served: a real mismatch
    assert [p.reason for p in gone.problems] == ["result_digest_mismatch"]
