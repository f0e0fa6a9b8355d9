"""The golden oracle: evaluation_report without a model backend evaluates the golden calls, so a
materialization on an unchanged environment scores every task pass with ACTION 1; a stale label
(data changed after synthesis) shows up as a failing case."""

from pathlib import Path

from factory.eval.harness import EvalSettings
from factory.eval.oracle import ORACLE
from tests.eval.conftest import evaluated_tasks
from tests.eval.test_report_asset import _materialize, _meta, _project


def test_default_settings_fall_back_to_the_oracle(synth_world) -> None:
    assert synth_world.cfg.models.roles.get("agent_resolver", "rules") == "rules"
    assert EvalSettings.resolve(synth_world.cfg).backend == ORACLE


def test_oracle_report_passes_every_task_on_an_unchanged_environment(synth_world, tmp_path: Path) -> None:
    tasks, source = evaluated_tasks(synth_world)
    assert tasks, source
    path = _project(synth_world, tmp_path, {})
    result = _materialize(synth_world, path, {"split": "all", "runs": 1, "k": 1})
    assert result.success
    meta = _meta(result)
    report = synth_world.load("evaluation_report")
    assert report["model"]["backend"] == ORACLE and report["tasks"] == len(tasks)
    failing = [c for c in report["cases"] if c["pass@1"] < 1.0]
    assert report["overall"]["pass@1"] == 1.0 and not failing, failing[:3]
    assert report["overall"]["action_all"] == 1.0 and report["overall"]["tool_precision"] == 1.0
    assert {r["pattern"] for r in report["by_pattern"]} == {t["pattern"] for t in tasks}
    assert {r["domain"] for r in report["by_domain"]} == {t["domain"] for t in tasks}
    assert "by_pattern" in meta and "by_domain" in meta
