import json

import pandas as pd
import pytest

from factory import quality
from factory.tools.outcomes import OUTCOME_CLASSES


def _inventory_frame(**over):
    base = {
        "name": ["a", "b"],
        "platform": ["p", "p"],
        "description": ["look up a", "list b"],
        "input_schema_valid": [True, True],
        "output_schema_valid": [True, True],
        "fingerprint": ["sha256:" + "0" * 64] * 2,
    }
    base.update(over)
    return pd.DataFrame(base)


def test_every_suite_file_is_valid_gx():
    for p in quality.EXPECTATIONS_DIR.glob("*.json"):
        data = json.loads(p.read_text())
        assert data["name"] == p.stem
        for e in data["expectations"]:
            assert e["type"].startswith("expect_") and e["meta"]["property"]


def test_inventory_gate_passes_good_and_names_each_failure():
    assert quality.validate("tool_inventory", _inventory_frame()).success
    bad = quality.validate(
        "tool_inventory", _inventory_frame(name=["a", "a"], input_schema_valid=[True, False], fingerprint=[None, None])
    )
    assert not bad.success
    failed = {f["property"] for f in bad.failures}
    assert failed == {
        "no duplicate tool names in a domain",
        "every input schema is a valid JSON Schema object",
        "the surface fingerprint is present",
    }
    assert "no duplicate tool names" in bad.summary()


def test_probe_gate_rejects_unknown_outcome_and_leaked_secret():
    ok = pd.DataFrame(
        {
            "tool": ["t"] * 2,
            "platform": ["p"] * 2,
            "outcome": OUTCOME_CLASSES[:2],
            "call_digest": ["d1", "d2"],
            "secret_free": [True, True],
        }
    )
    assert quality.validate("tool_probes", ok).success
    bad = ok.assign(outcome=["semantic_success", "exploded"], secret_free=[True, False])
    res = quality.validate("tool_probes", bad)
    assert {f["property"] for f in res.failures} == {
        "every outcome is a class of the EDGE taxonomy",
        "no API key value appears in a probe row",
    }


def test_coverage_gate_threshold():
    frame = pd.DataFrame({"tool": list("abcde"), "has_success": [1, 1, 1, 0, 0]})
    assert quality.validate("tool_probes_by_tool", frame).success  # 60%
    assert not quality.validate("tool_probes_by_tool", frame.assign(has_success=[1, 1, 0, 0, 0])).success


def test_missing_suite_is_a_clear_error():
    with pytest.raises(quality.SuiteError, match="suite 'nope' not found"):
        quality.validate("nope", pd.DataFrame())
