"""`factory lineage <id>`'s retrieval section (issue 17, VAKRA multi-source) on a really materialized world: the
music domain with its search tool, from its document corpus through synthesis, judging, the splits and the
decontaminated retrieval_index. The CLI's text and JSON must show the hop type, the index table and version the
published retrieval_index pins (and the version synthesis searched), and per passage step the search tool and the passage ids the task's golden actions
cite, each served; an API-only task shows its hop type and no passage."""

import json
import os
import re
import subprocess
import sys

import pytest

from factory.cli import main
from factory.config import load_config
from factory.paths import package_root
from tests.conftest import SYNTH_ASSETS, SynthWorld, write_config

# the tests on rag_world are slow: one domain's whole chain with a real embedder, minutes on the shared 2 cores
SLOW = pytest.mark.slow


@pytest.fixture(scope="module")
def rag_world(tmp_path_factory):
    """The music domain with search_catalogue_notes, materialized up to retrieval_index (in the pipeline's order)."""
    import dagster as dg

    from factory.definitions import build_definitions
    from factory.demo.service import DemoService
    from sensors.partitions import sync_domain_partitions

    tmp = tmp_path_factory.mktemp("rag_world")
    base = load_config().model_dump(mode="json", exclude_none=True)
    music = next(d for d in base["domains"] if d["name"] == "music")
    graph = {**base["graph"], "iterations": 3, "paths_per_iteration": 20, "eval_trials_per_edge": 0}
    synthesis = {**base["synthesis"], "per_pattern": 2, "attempts": 100}
    path = write_config(tmp, domains=[music], search_tools=True, graph=graph, synthesis=synthesis)
    cfg = load_config(path)
    defs = build_definitions(str(path))
    with dg.instance_for_test() as instance, DemoService(cfg.demo, log_dir=tmp / "logs"):
        sync_domain_partitions(instance, ["music"])
        world = SynthWorld(cfg, path, tmp, defs, instance)
        steps = [
            (["retrieval_corpus", "retrieval_synthesis_index"], "music"),
            (["tool_inventory", "tool_probes"], "music"),
            (["tool_catalog"], None),
            ([*SYNTH_ASSETS, "judged_queries"], "music"),
            (["dataset_splits"], None),
            (["retrieval_index"], "music"),
        ]
        for assets, partition in steps:
            assert world.materialize(assets, partition).success, f"{assets} failed"
        yield world


def _lineage(world, *args: str, capsys) -> str:
    assert main(["--config", str(world.path), "lineage", *args]) == 0
    return capsys.readouterr().out


def _retrieval_lines(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("retrieval   hop type"))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
    return lines[start:end]


@SLOW
def test_an_api_rag_tasks_lineage_shows_its_hop_index_and_served_passages(rag_world, capsys):
    tasks = rag_world.load("dataset_splits")["tasks"]
    index = rag_world.load("retrieval_index", "music")
    multi = [t for t in tasks if (t.get("hop_type") or "API") != "API"]
    assert multi, f"no multi-source task published: {sorted({t.get('hop_type') for t in tasks}, key=str)}"
    hops_seen = set()
    for task in multi:
        if task["hop_type"] in hops_seen:
            continue  # one task per hop type keeps the test short
        hops_seen.add(task["hop_type"])
        section = _retrieval_lines(_lineage(rag_world, task["id"], capsys=capsys))
        policy = (task.get("policy") or {}).get("category") or "none"
        assert section[0].startswith(f"retrieval   hop type {task['hop_type']}   policy {policy}"), section
        ix = [line for line in section if line.startswith("  index  ")]
        assert len(ix) == 1 and ix[0].startswith(f"  index  {index['table']} v{index['version']}  "), section
        assert f"  {index['served']}/{index['chunks']} chunks served" in ix[0]
        assert index["table"] == "music__catalogue_notes" and index["served"] <= index["chunks"]
        # the version synthesis searched (every chunk, before decontamination) is named beside the served one
        synth = rag_world.load("retrieval_synthesis_index", "music")
        assert synth["version"] < index["version"]
        at = [line for line in section if line.startswith("  searched at synthesis  ")]
        assert at == [f"  searched at synthesis  {synth['table']} v{synth['version']}  {synth['fingerprint'][:23]}  "
                      f"{synth['served']} chunks (before decontamination)"], section  # fmt: skip
        shown = [
            m.groups() for line in section if (m := re.match(r"  passage step (\d+) (\S+) (\S+)  (\S+(?: \S+)?)", line))
        ]
        cited = [
            (str(a["step"]), a["tool"], pid, "served")
            for a in task["golden_actions"]
            if a.get("source_type") == "retrieval"
            for pid in a["passage_ids"]
        ]
        assert cited and shown == cited, (shown, cited)
        assert {t for _, t, _, _ in shown} == {"search_catalogue_notes"}
        # the published index serves every passage a published task cites: none is among its removals
        assert not {pid for _, _, pid, _ in shown} & {r["id"] for r in index["removed"]}
        # the JSON form carries the same facts
        c = json.loads(_lineage(rag_world, task["id"], "--json", capsys=capsys))["retrieval"]
        assert c["hop_type"] == task["hop_type"] and c["index"]["version"] == index["version"]
        assert c["synthesis_index"]["version"] == synth["version"]
        assert [(str(p["step"]), p["tool"], p["id"]) for p in c["passages"]] == [x[:3] for x in cited]
        assert all(p["served_now"] is True and p["removal"] is None for p in c["passages"])


@SLOW
def test_an_api_only_task_shows_no_passage_and_the_removals_it_caused(rag_world, capsys):
    tasks = rag_world.load("dataset_splits")["tasks"]
    index = rag_world.load("retrieval_index", "music")
    api = [t for t in tasks if (t.get("hop_type") or "API") == "API"]
    assert api
    # prefer an API-only task whose answer removed a chunk (rule (a)): its lineage lists that removal
    caused = {r.get("evidence") for r in index["removed"]}
    api.sort(key=lambda t: t["id"] not in caused)
    task = api[0]
    section = _retrieval_lines(_lineage(rag_world, task["id"], capsys=capsys))
    policy = (task.get("policy") or {}).get("category") or "none"
    assert section[0].startswith(f"retrieval   hop type API   policy {policy}"), section
    assert not [line for line in section if line.startswith(("  passage step", "  searched at synthesis"))], section
    mine = [r for r in index["removed"] if r.get("evidence") == task["id"]]
    listed = [line for line in section if line.startswith("  removed chunk ")]
    assert [line.split()[2] for line in listed] == [r["id"] for r in mine]
    assert all(f": {r['reason']} — " in line for r, line in zip(mine, listed, strict=True))


@SLOW
def test_the_cli_process_prints_the_same_section(rag_world):
    task = next(t for t in rag_world.load("dataset_splits")["tasks"] if (t.get("hop_type") or "API") != "API")
    env = {**os.environ, "DAGSTER_HOME": str(rag_world.instance.root_directory)}
    proc = subprocess.run(
        [sys.executable, "-m", "factory.cli", "--config", str(rag_world.path), "lineage", task["id"][7:27]],
        cwd=package_root(), env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    pids = [pid for a in task["golden_actions"] if a.get("source_type") == "retrieval" for pid in a["passage_ids"]]
    assert f"retrieval   hop type {task['hop_type']}" in proc.stdout
    assert all(re.search(rf"passage step \d+ search_catalogue_notes {re.escape(p)}  served", proc.stdout) for p in pids)


def test_a_passage_lists_the_removal_verdicts_of_the_other_chunks_of_its_document():
    """What the index took from around a passage (the same document's other chunks) is shown under it; chunks of
    other documents and the passage itself are not."""
    from factory.retrieval import index

    removed = [
        {"id": "music:a2", "reason": "api_answer_stated", "detail": "states 'AC/DC'", "evidence": "sha256:api"},
        {"id": "music:b1", "reason": "held_out_near_duplicate", "detail": "holds a test question", "evidence": "x"},
    ]
    value = {"table": "music__notes", "version": 3, "chunks": 4, "served": 2, "removed": removed}
    corpus_value = {"chunks": [{"id": "music:a1", "doc_id": "A"}, {"id": "music:a2", "doc_id": "A"},
                               {"id": "music:b1", "doc_id": "B"}, {"id": "music:b2", "doc_id": "B"}]}  # fmt: skip
    task = {"id": "sha256:rag", "hop_type": "API-RAG", "golden_actions": [
        {"step": 1, "tool": "search_albums", "source_type": "api"},
        {"step": 2, "tool": "search_notes", "source_type": "retrieval", "passage_ids": ["music:a1"]},
    ]}  # fmt: skip
    (p,) = index.task_lineage(task, value, corpus_value)["passages"]
    assert p["served_now"] is True and p["document"] == "A"
    assert [v["id"] for v in p["document_removals"]] == ["music:a2"]
    text = "\n".join(index.render_task_lineage(index.task_lineage(task, value, corpus_value)))
    assert "  passage step 2 search_notes music:a1  served\n" in text + "\n"
    assert "    same document: removed chunk music:a2: api_answer_stated — states 'AC/DC'" in text
    assert "music:b1" not in text
    # without a corpus value (an older run) nothing is claimed about the document
    (bare,) = index.task_lineage(task, value, None)["passages"]
    assert bare["served_now"] is None and bare["document_removals"] == []
