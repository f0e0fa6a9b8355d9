"""schema_variants materialized in-process against the real demo service (slow: needs the synthesized world)."""

import pytest

from factory.io import artifact_exists


@pytest.mark.slow
def test_schema_variants_publishes_validated_variants(synth_world) -> None:
    d = "music"
    if not artifact_exists(synth_world.cfg, "judged_queries", d):
        assert synth_world.materialize(["judged_queries"], d).success
    res = synth_world.materialize(["schema_variants"], d)
    assert res.success
    checks = [e for e in res.get_asset_check_evaluations() if e.asset_check_key.name == "schema_variants_validated"]
    assert checks and all(e.passed for e in checks)
    value = synth_world.load("schema_variants", d)
    published = [v for v in value["variants"] if v["published"]]
    kept = synth_world.load("judged_queries", d)["kept"]
    assert len(value["tasks"]) == len(kept)
    if kept:
        assert len(published) >= synth_world.cfg.variants.min_published
        assert all(v["tasks_passed"] == v["tasks_checked"] == len(kept) for v in published)
        row = value["tasks"][0]
        # every published variant renders the task: its golden variant trace decodes to a*
        assert set(row["variants"]) == {v["id"] for v in published}
        native = [s["native"] for s in row["variants"]["transaction_all"] if "native" in s]
        assert [(a["name"], a["arguments"]) for a in native] == [
            (a["operation"], a["arguments"]) for a in row["target_actions"]
        ]
        assert any("reply" in s for s in row["variants"]["transaction_all"])
