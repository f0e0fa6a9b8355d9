"""`factory eval`: progress, the per-pattern / per-domain tables, report files, and clear errors."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from factory.cli import main
from factory.io import Store, write_artifact
from factory.tools.registry import ToolRegistry
from tests.conftest import free_port, write_config
from tests.eval.conftest import all_tasks, inventories, perfect_script, variant
from tests.eval.scripted import ScriptedServer


def _config(world: Any, tmp: Path, server: ScriptedServer, data_dir: Path | None = None) -> Path:
    base = world.cfg.model_dump(mode="json", exclude_none=True)
    backend = {"kind": "openai", "model": server.model, "base_url": server.base_url, "api_key_env": None}
    return write_config(
        tmp,
        port=world.cfg.demo.port,
        data_dir=str(data_dir or world.data_dir),
        graph=base["graph"],
        synthesis=base["synthesis"],
        models={"backends": {"scripted": backend}, "roles": {}, "cache": {"path": str(tmp / "llm.sqlite")}},
    )


def _task_file(world: Any, server: ScriptedServer, tmp: Path, split: str = "test") -> tuple[Path, list[dict]]:
    index = ToolRegistry.from_inventories(inventories(world))
    pool = all_tasks(world)
    picked = [next(t for t in pool if t["domain"] == d) for d in ("music", "korea")]
    tasks = [variant(t, "cli", split=split) for t in picked]
    server.script(tasks[0]["query"], perfect_script(tasks[0], index))
    server.script(tasks[1]["query"], ["<tool_call>{not json}</tool_call>"])  # a model that cannot call tools
    path = tmp / "tasks.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False))
    return path, tasks


def test_eval_command_prints_breakdowns_and_writes_reports(synth_world, scripted_server, tmp_path, capsys) -> None:
    cfg = _config(synth_world, tmp_path, scripted_server)
    tasks_file, tasks = _task_file(synth_world, scripted_server, tmp_path)
    out = tmp_path / "report"
    argv = ["--config", str(cfg), "eval", "--backend", "scripted", "--tasks", str(tasks_file), "--split", "test"]
    rc = main([*argv, "--runs", "2", "--k", "2", "--max-turns", "4", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "evaluating scripted-model (backend scripted) on 2 task(s) × 2 run(s)" in text
    assert len(re.findall(r"^\[\d/4\] ", text, re.MULTILINE)) == 4  # one progress line per episode
    assert re.search(r"^category\s+tasks\s+episodes\s+pass@1\s+pass@2\s+pass\^2", text, re.MULTILINE)
    assert re.search(r"^domain\s+tasks", text, re.MULTILINE)
    assert re.search(r"^music\s+1\s+2\s+1\.000", text, re.MULTILINE)
    assert re.search(r"^korea\s+1\s+2\s+0\.000", text, re.MULTILINE)
    assert "malformed_tool_call 6" in text  # 3 unreadable turns per korea episode, both runs
    report = json.loads((out / "report.json").read_text())
    assert report["overall"]["pass@1"] == 0.5 and report["overall"]["pass@2"] == 0.5
    assert report["selection"]["split_applied"] and report["settings"]["split"] == "test"
    assert (out / "report.md").read_text().startswith("# Evaluation ")
    assert len((out / "traces.jsonl").read_text().splitlines()) == 4


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--backend", "nope"], "unknown backend 'nope'; declared backends (models.backends): scripted"),
        (["--split", "dev"], "split 'dev' has no tasks; splits present: test (2)"),
        (["--runs", "1", "--k", "2"], "k (2) must be ≤ runs (1)"),
        (["--domains", "atlantis"], "no tasks of domain(s) atlantis"),
    ],
)
def test_eval_command_errors(synth_world, scripted_server, tmp_path, capsys, extra, message) -> None:
    cfg = _config(synth_world, tmp_path, scripted_server)
    tasks_file, _ = _task_file(synth_world, scripted_server, tmp_path)
    argv = ["--config", str(cfg), "eval", "--backend", "scripted", "--tasks", str(tasks_file), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err, err


def test_eval_command_bad_task_file(synth_world, scripted_server, tmp_path, capsys) -> None:
    cfg = _config(synth_world, tmp_path, scripted_server)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "x", "query": "q"}]))
    assert main(["--config", str(cfg), "eval", "--backend", "scripted", "--tasks", str(bad)]) == 2
    assert "task #0 (x) is not a valid Task" in capsys.readouterr().err
    assert main(["--config", str(cfg), "eval", "--backend", "scripted", "--tasks", str(tmp_path / "none")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_eval_command_demo_service_down(synth_world, scripted_server, tmp_path, capsys) -> None:
    """Tools whose service does not answer: one clear error before any episode, not a report of failures."""
    dead = free_port()
    data = tmp_path / "data"
    for d in ("music",):
        inv = json.dumps(synth_world.load("tool_inventory", d))
        inv = inv.replace(f"127.0.0.1:{synth_world.cfg.demo.port}", f"127.0.0.1:{dead}")
        write_artifact(Store(data), "tool_inventory", d, json.loads(inv))
    cfg = _config(synth_world, tmp_path, scripted_server, data_dir=data)
    tasks_file, _ = _task_file(synth_world, scripted_server, tmp_path)
    argv = ["--config", str(cfg), "eval", "--backend", "scripted", "--tasks", str(tasks_file), "--domains", "music"]
    before = len(scripted_server.requests)
    assert main([*argv, "--no-start-demo"]) == 2
    err = capsys.readouterr().err
    assert "does not answer" in err and "endpoint_unavailable" in err and "factory demo" in err
    assert len(scripted_server.requests) == before  # no episode ran
