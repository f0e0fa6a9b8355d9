"""A failing gate's check result and `factory run`'s report name the rows, the reason and what to change."""

import dagster as dg

from factory.cli import print_failed_gates

GOOD = """name: t
domains:
  - name: aviation
    sources:
      - {kind: openapi, spec: "demo://flight-ops"}
"""


def test_coverage_check_result_names_tools_reasons_and_the_setting(tmp_path):
    from assets.ingestion import tool_probes_coverage
    from factory.resources import ProjectResource

    cfg = tmp_path / "factory.yaml"
    cfg.write_text(GOOD)
    inventory = {"tools": [{"name": n} for n in ("list_a", "get_b", "get_c")]}
    probes = {
        "rows": [
            {"tool": "list_a", "outcome": "semantic_success"},
            {"tool": "get_b", "outcome": "auth_error"},
            {"tool": "get_b", "outcome": "auth_error"},
        ]
    }
    res = tool_probes_coverage(
        dg.build_asset_check_context(),
        project=ProjectResource(config_path=str(cfg)),
        tool_probes=probes,
        tool_inventory=inventory,
    )
    assert not res.passed
    assert res.description.startswith("tool_probes_by_tool: enough tools")
    assert "get_b (auth_error ×2); get_c (not probed)" in res.description
    fix = res.metadata["fix"].value
    assert any("probes.min_success_share is 0.6 in the project config" in f for f in fix)
    prop = "enough tools (share >= probes.min_success_share) have at least one successful probe"
    assert res.metadata["failed_rows"].value[prop] == [
        {"tool": "get_b", "why": "auth_error ×2"},
        {"tool": "get_c", "why": "not probed"},
    ]


def test_run_report_prints_each_failed_gate_with_what_to_change(capsys):
    print_failed_gates(
        [
            (
                "clock",
                {
                    "check": "tool_probes:tool_probes_coverage",
                    "partition": "clock",
                    "description": "tool_probes_by_tool: enough tools ... failed: get_b (auth_error ×2)",
                    "fix": ["probes.min_success_share is 0.6 in the project config"],
                },
            ),
            ("(global)", {"check": "dataset_splits:x", "partition": None, "description": "empty", "fix": []}),
        ]
    )
    out = capsys.readouterr().out
    assert "2 gate(s) failed" in out
    assert "- tool_probes:tool_probes_coverage [clock]: tool_probes_by_tool: enough tools" in out
    assert "    to change: probes.min_success_share is 0.6 in the project config" in out
    assert "- dataset_splits:x [(global)]: empty\n    to change: see the check's metadata" in out
