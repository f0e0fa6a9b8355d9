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


# --------------------------------------------------------------------------- gates that tell the truth (issue 13.5)


def _every_kwarg_value(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _every_kwarg_value(v)
    elif isinstance(value, list):
        for v in value:
            yield from _every_kwarg_value(v)
    else:
        yield value


def test_suites_hold_no_copy_of_a_config_threshold():
    """A gate setting of the config ("Gate: ..." in its description) is read by a suite through
    $CONFIG, and no suite carries its own default or a literal equal to it."""
    from factory.config import ProjectConfig

    gate_settings = {}
    for section, info in ProjectConfig.model_fields.items():
        for name, f in getattr(info.annotation, "model_fields", {}).items():
            if (f.description or "").startswith("Gate:"):
                gate_settings[f"{section}.{name}"] = f.get_default(call_default_factory=True)
    assert "probes.min_success_share" in gate_settings and "lexicon.max_unknown_share" in gate_settings
    referenced = set()
    for p in quality.EXPECTATIONS_DIR.glob("*.json"):
        data = json.loads(p.read_text())
        assert "parameters" not in (data.get("meta") or {}), f"{p.name} keeps its own threshold defaults"
        referenced |= set(quality.suite_settings(p.stem))
        literals = [v for e in data["expectations"] for v in _every_kwarg_value(e["kwargs"])]
        for setting, default in gate_settings.items():
            if isinstance(default, float) and default not in (0.0, 1.0):
                assert default not in literals, f"{p.name} hard-codes {default} (the default of {setting})"
    assert set(gate_settings) <= referenced


def test_thresholds_come_from_the_given_config():
    from factory.config import ProjectConfig

    cfg = ProjectConfig(domains=[{"name": "d", "sources": [{"kind": "openapi", "spec": "x.json"}]}])
    low = pd.DataFrame({"tool": list("abcde"), "has_success": [1, 0, 0, 0, 0], "why": ["", *["timeout ×3"] * 4]})
    assert not quality.validate("tool_probes_by_tool", low, cfg).success  # the default 0.6
    lenient = cfg.model_copy(update={"probes": cfg.probes.model_copy(update={"min_success_share": 0.1})})
    res = quality.validate("tool_probes_by_tool", low, lenient)
    assert res.success and res.results[1]["settings"] == {"probes.min_success_share": 0.1}


def test_a_failing_gate_names_the_tools_the_reason_and_the_setting():
    frame = pd.DataFrame(
        {"tool": list("abcde"), "has_success": [1, 0, 0, 1, 0], "why": ["", "auth_error ×3", "timeout ×2", "", ""]}
    )
    res = quality.validate("tool_probes_by_tool", frame)
    assert not res.success
    fail = res.failures[0]
    assert [r["tool"] for r in fail["failed_rows"]] == ["b", "c", "e"]
    assert fail["failed_rows"][0]["why"] == "auth_error ×3"
    assert "b (auth_error ×3); c (timeout ×2); e" in res.headline()
    assert "probes.min_success_share is 0.6 in the project config" in "\n".join(res.fixes())
    meta = res.metadata()
    assert meta["fix"] and meta["failed_rows"][fail["property"]][1] == {"tool": "c", "why": "timeout ×2"}


def test_an_invalid_schema_is_named_by_tool_and_keyword():
    from factory.ingest import inventory_frame

    tools = [
        {"name": "ok", "platform": "p", "description": "fine tool", "input_schema": {"type": "object"}},
        {
            "name": "get_ages",
            "platform": "p",
            "description": "ages",
            "input_schema": {"type": "object", "properties": {"age": {"type": "integer", "exclusiveMinimum": False}}},
        },
    ]
    res = quality.validate("tool_inventory", inventory_frame({"tools": tools, "fingerprint": "sha256:" + "0" * 64}))
    assert not res.success
    (fail,) = res.failures
    assert fail["failed_rows"] == [
        {
            "platform": "p",
            "name": "get_ages",
            "why": "at properties/age/exclusiveMinimum: False is not of type 'number'",
        }
    ]
    assert "get_ages" in res.headline() and "exclusiveMinimum" in res.summary()


def test_empty_judged_set_split_and_export_fail():
    judged = pd.DataFrame(
        {
            "id": ["t1"],
            "status": ["rejected"],
            "in_candidates": [True],
            "reason": ["near_duplicate"],
            "stage": ["rules"],
            "reason_matches_stage": [True],
            "verdict_reasons_known": [True],
            "verdicts_cover_stages": [True],
            "task_valid": [True],
        }
    )
    res = quality.validate("judged_queries", judged)
    assert not res.success
    assert [f["property"] for f in res.failures] == ["at least one candidate task is kept (an empty judged set fails)"]
    assert quality.validate("judged_queries", judged.assign(status=["kept"], reason=[None], stage=[None])).success
    split_cols = ["id", "split", "split_known", "in_split_file", "held_out_ok", "kept_near_duplicate"]
    split_cols += ["also_removed", "thresholds_ok", "files_consistent"]
    res = quality.validate("dataset_splits", pd.DataFrame(columns=split_cols))
    assert "the split dataset has at least one task (an empty dataset fails)" in {f["property"] for f in res.failures}
    export = pd.DataFrame(
        {
            "format": ["jsonl", "card"],
            "split": ["train", ""],
            "path": ["train.jsonl", "README.md"],
            "rows_written": [0, 0],
            "rows_read": [0, 0],
            "sha256_ok": [True, True],
            "parse_ok": [True, True],
            "invalid_rows": [0, 0],
            "key_free": [True, True],
            "rows_match": [True, True],
            "problem": ["", ""],
        }
    )
    res = quality.validate("dataset_exports", export)
    assert [f["property"] for f in res.failures] == ["at least one export file has rows (an empty export fails)"]
    assert quality.validate("dataset_exports", export.assign(rows_written=[3, 0], rows_read=[3, 0])).success


def test_unknown_setting_in_a_suite_is_a_clear_error():
    with pytest.raises(quality.SuiteError, match="'probes.nope', which the project config does not have"):
        quality.config_value(None, "probes.nope")
