"""evaluation_report as a real Dagster materialization on the synth_world instance, and the local model.

The asset reads dataset_splits (materialized on the shared world first; every domain's
generated_queries where dataset_splits is not defined), runs the model through the harness
against the live demo service, and reports per-pattern and per-domain tables, failure kinds and
a plot.
"""

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from factory.definitions import build_definitions
from factory.llm.agent import STOP_REASONS
from factory.llm.servers import default_gguf
from tests.conftest import free_port, write_config
from tests.eval.conftest import all_tasks, evaluated_tasks, perfect_script, variant
from tests.eval.scripted import ScriptedServer


def _project(world: Any, tmp: Path, backends: dict[str, Any], **evaluation: Any) -> Path:
    """A config file over the shared world's data and demo service, with these backends."""
    base = world.cfg.model_dump(mode="json", exclude_none=True)
    models = {"backends": backends, "roles": {}, "cache": {"path": str(tmp / "llm.sqlite")}}
    return write_config(
        tmp,
        port=world.cfg.demo.port,
        data_dir=str(world.data_dir),
        graph=base["graph"],
        synthesis=base["synthesis"],
        models=models,
        evaluation={**base["evaluation"], **evaluation},
    )


def _materialize(world: Any, path: Path, op_config: dict[str, Any]) -> dg.ExecuteInProcessResult:
    defs = build_definitions(str(path))
    return defs.resolve_job_def("evaluation").execute_in_process(
        instance=world.instance,
        run_config={"ops": {"evaluation_report": {"config": op_config}}},
        raise_on_error=False,
    )


def _meta(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    mats = result.asset_materializations_for_node("evaluation_report")
    assert len(mats) == 1
    return {k: getattr(v, "value", v) for k, v in mats[0].metadata.items()}


def test_asset_with_scripted_model(synth_world, scripted_server: ScriptedServer, tmp_path: Path) -> None:
    from factory.tools.registry import ToolRegistry
    from tests.eval.conftest import inventories

    index = ToolRegistry.from_inventories(inventories(synth_world))
    tasks, source = evaluated_tasks(synth_world)
    # the asset evaluates the world's own tasks: perfect on music, silent elsewhere
    for t in tasks:
        scripted_server.script(t["query"], perfect_script(t, index) if t["domain"] == "music" else ["I don't know."])
    common = {"model": scripted_server.model, "base_url": scripted_server.base_url, "api_key_env": None}
    path = _project(synth_world, tmp_path, {"scripted": {"kind": "openai", **common}}, backend="scripted")
    res = _materialize(synth_world, path, {"runs": 2, "k": 2, "split": "all", "temperature": 0.0})
    assert res.success
    value = synth_world.load("evaluation_report")
    n = len(tasks)
    assert value["tasks"] == n and value["episodes"] == 2 * n
    assert value["selection"]["source"] == source
    by_domain = {g["domain"]: g for g in value["by_domain"]}
    assert by_domain["music"]["pass@1"] == 1.0 and by_domain["music"]["pass^2"] == 1.0
    assert all(g["pass@2"] == 0.0 for d, g in by_domain.items() if d != "music")
    assert by_domain["music"]["ci"]["pass@1"]["half_width"] == 0.0  # two identical runs
    meta = _meta(res)
    assert meta["tasks"] == n and meta["model"] == "scripted-model (scripted)"
    for cat in {t["category"] for t in tasks}:
        assert f"| {cat} |" in meta["by_category"]
    assert all(f"| {d} |" in meta["by_domain"] for d in by_domain)
    assert meta["pass_plot"].startswith("![") and "failure kind" in meta["failure_kinds"]
    assert meta["model_requests"] > 0
    md = Path(meta["file/report_md"]).read_text()
    assert "## By case pattern" in md and "## By domain" in md
    traces = [json.loads(line) for line in Path(meta["file/traces"]).read_text().splitlines()]
    assert len(traces) == 2 * n and {t["run"] for t in traces} == {0, 1}


def test_asset_fails_clearly_on_an_unknown_backend(synth_world, tmp_path: Path) -> None:
    evaluated_tasks(synth_world)
    path = _project(synth_world, tmp_path, {"other": {"kind": "openai", "model": "m", "api_key_env": None}})
    res = _materialize(synth_world, path, {"backend": "nope"})
    assert not res.success
    failure = res.get_step_failure_events()[0].step_failure_data.user_failure_data
    assert "unknown backend 'nope'" in failure.description and "other" in failure.description


@pytest.mark.slow  # ~70 s on 2 cores; CI runs the slow marker too (make test-slow)
def test_local_model_end_to_end(synth_world, tmp_path: Path) -> None:
    """SmolLM2-135M (llama.cpp, tools described in the prompt) on three demo tasks: mostly wrong, never a crash."""
    assert default_gguf().is_file()
    evaluated_tasks(synth_world)
    local = {
        "kind": "local",
        "port": free_port(),
        "n_ctx": 8192,
        "max_tokens": 48,
        "max_connection_retries": 0,
        "timeout_s": 600,
    }  # a loaded 2-core machine took over 120 s for one 6k-token prompt (s18)
    path = _project(synth_world, tmp_path, {"local": local}, backend="local", max_observation_chars=600)
    res = _materialize(
        synth_world,
        path,
        {
            "runs": 1,
            "k": 1,
            "max_tasks": 3,
            "max_turns": 2,
            "domains": ["aviation", "music"],
            "split": "all",
            "temperature": 0.0,
        },
    )
    assert res.success
    value = synth_world.load("evaluation_report")
    assert value["model"]["model"] == "SmolLM2-135M-Instruct" and value["model"]["tool_calls"] is False
    assert value["episodes"] == 3 and {g["domain"] for g in value["by_domain"]} == {"aviation", "music"}
    assert value["by_category"] and all(g["episodes"] >= 1 for g in value["by_category"])
    for row in value["episode_rows"]:
        assert row["stop_reason"] in STOP_REASONS and row["turns"] >= 1, (row["task_id"], row.get("error"))
    meta = _meta(res)
    assert meta["model_requests"] >= 3
    assert "| aviation |" in meta["by_domain"] and "pass@1" in meta["by_category"]
    assert "## By case pattern" in Path(meta["file/report_md"]).read_text()


def test_variant_helper_keeps_tasks_valid(synth_world) -> None:
    from factory.records import Task

    t = variant(all_tasks(synth_world)[0], "x", split="test")
    assert Task.model_validate(t).split == "test"
