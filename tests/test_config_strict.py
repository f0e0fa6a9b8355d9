"""Issue 21 #10: strict config validation (coerced bools, duplicate keys, fields of the other
source kind), the configured probe-coverage threshold, and `factory run --domains nosuch`."""

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from factory import quality
from factory.config import ConfigError, parse_config

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

GOOD = """name: t
domains:
  - name: aviation
    sources:
      - {kind: openapi, spec: "demo://flight-ops"}
"""


def _err(text: str) -> str:
    with pytest.raises(ConfigError) as e:
        parse_config(text, source="f.yaml")
    return str(e.value)


def test_bool_is_not_coerced_to_a_number():
    msg = _err(GOOD + "seed: true\n")
    assert "f.yaml:6" in msg and "seed" in msg
    msg = _err(GOOD + "probes:\n  per_tool: true\n")
    assert "f.yaml:7" in msg and "probes.per_tool" in msg
    msg = _err(GOOD + "executor:\n  timeout_s: false\n")
    assert "f.yaml:7" in msg and "executor.timeout_s" in msg
    msg = _err(GOOD + 'probes:\n  per_tool: "3"\n')  # a quoted number is a string, not a count
    assert "f.yaml:7" in msg
    # the forms a YAML file writes stay valid: ints for floats, plain bools for bools
    cfg = parse_config(GOOD + "executor: {timeout_s: 5}\ndemo: {enabled: false}\n")
    assert cfg.executor.timeout_s == 5.0 and cfg.demo.enabled is False


def test_duplicate_keys_are_rejected_with_both_lines():
    msg = _err(GOOD + "seed: 1\nseed: 2\n")
    assert "f.yaml:7" in msg and "duplicate key 'seed'" in msg and "line 6" in msg
    nested = GOOD + "probes:\n  per_tool: 3\n  min_success_share: 0.5\n  per_tool: 4\n"
    msg = _err(nested)
    assert "f.yaml:9" in msg and "duplicate key 'per_tool'" in msg and "line 7" in msg
    msg = _err(GOOD.replace('spec: "demo://flight-ops"', 'spec: "demo://a", spec: "demo://b"'))
    assert "f.yaml:5" in msg and "duplicate key 'spec'" in msg


@pytest.mark.parametrize(
    ("source", "field"),
    [
        ('{kind: openapi, spec: "demo://flight-ops", command: [python, -m, x]}', "command"),
        ('{kind: openapi, spec: "demo://flight-ops", url: "http://x/mcp"}', "url"),
        ('{kind: openapi, spec: "demo://flight-ops", env: {A: b}}', "env"),
        ("{kind: mcp, command: [python, -m, x], spec: demo://flight-ops}", "spec"),
        ("{kind: mcp, command: [python, -m, x], base_url: http://x}", "base_url"),
    ],
)
def test_field_of_the_other_source_kind_is_rejected(source, field):
    text = GOOD.replace('{kind: openapi, spec: "demo://flight-ops"}', source)
    msg = _err(text)
    assert "f.yaml:5" in msg and f"'{field}'" in msg and "domains[0].sources[0]" in msg


def test_coverage_gate_uses_the_configured_share():
    frame = pd.DataFrame({"tool": list("abcde"), "has_success": [1, 1, 1, 0, 0]})  # 60%
    assert quality.validate("tool_probes_by_tool", frame).success  # default 0.6
    assert not quality.validate("tool_probes_by_tool", frame, settings={"probes.min_success_share": 0.8}).success
    low = frame.assign(has_success=[1, 0, 0, 0, 0])  # 20%
    assert quality.validate("tool_probes_by_tool", low, settings={"probes.min_success_share": 0.2}).success
    res = quality.validate("tool_probes_by_tool", low, settings={"probes.min_success_share": 0.5})
    assert not res.success and res.failures[0]["kwargs"]["min_value"] == 0.5


def test_coverage_check_reads_probes_min_success_share(tmp_path):
    from assets.ingestion import tool_probes_coverage
    from factory.resources import ProjectResource

    cfg = tmp_path / "factory.yaml"
    inventory = {"tools": [{"name": n} for n in "abcde"]}
    probes = {"rows": [{"tool": "a", "outcome": "semantic_success"}]}  # 20% of the tools
    for share, passed in ((0.2, True), (0.6, False)):
        cfg.write_text(GOOD + f"probes: {{min_success_share: {share}}}\n")
        res = tool_probes_coverage(
            dg.build_asset_check_context(),
            project=ProjectResource(config_path=str(cfg)),
            tool_probes=probes,
            tool_inventory=inventory,
        )
        assert res.passed is passed, share


def test_run_with_unknown_domain_is_a_clear_error(tmp_path):
    cfg = tmp_path / "factory.yaml"
    cfg.write_text(GOOD.replace("demo://flight-ops", "spec.json"))
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    res = subprocess.run(
        [BIN / "factory", "--config", str(cfg), "run", "--domains", "aviation,nosuch"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert res.returncode == 2, res.stderr[-2000:]
    assert "Traceback" not in res.stderr and "KeyError" not in res.stderr
    assert "unknown domain(s) 'nosuch'" in res.stderr and "configured: aviation" in res.stderr


def test_a_dumped_config_loads_again():
    import yaml

    from factory.config import load_config

    cfg = load_config()
    for dumped in (cfg.model_dump(mode="json"), cfg.model_dump(mode="json", exclude_none=True)):
        assert parse_config(yaml.safe_dump(dumped)).digest() == cfg.digest()
