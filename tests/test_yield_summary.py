"""The run summary's yield table (issue 16 item 6): attempted → executed → kept, with the top reasons."""

from factory.report import yield_lines, yield_rows

SUMMARIES = {
    "music": {
        "trajectories": {
            "tasks": 24,
            "rejected": 216,
            "rejections_by_reason": {"response_too_large": 49, "no_seed": 10, "circular_hop": 26, "tie": 0},
        },
        "generated_queries": {"tasks": 22, "rejection_reasons": {"unphraseable": 2}},
        "judged_queries": {"candidates": 24, "kept": 15, "by_reason": {"decorative_step": 9, "near_duplicate": 0}},
    },
    "korea": {"tool_inventory": {"tools": 9}},  # ingestion only: no yield row
    "(global)": {"dataset_splits": {"tasks_by_domain": {"music": 13}}},
}


def test_yield_rows_follow_the_candidates_through_the_stages():
    (row,) = yield_rows(SUMMARIES, quota=28)
    assert row["domain"] == "music"
    assert (row["attempted"], row["executed"], row["kept"], row["quota"]) == (240, 230, 24, 28)
    assert (row["queries"], row["judged"], row["in_splits"]) == (22, 15, 13)
    # trajectory and judge reasons ranked together, zero counts left out
    assert row["top_reasons"] == "response_too_large 49, circular_hop 26, no_seed 10"


def test_yield_lines_render_one_line_per_domain():
    lines = yield_lines(yield_rows(SUMMARIES, quota=28, top=1))
    assert lines[0].startswith("yield (attempted → executed → kept")
    assert lines[-1].split() == ["music", "240", "230", "24/28", "22", "15", "13", "response_too_large", "49"]
    assert yield_lines([]) == []


def test_run_summary_prints_the_yield_table(capsys):
    from factory.cli import print_summary
    from factory.config import load_config

    cfg = load_config()
    print_summary(cfg, SUMMARIES, 1.0)
    out = capsys.readouterr().out
    assert "yield (attempted → executed → kept" in out
    assert f"synthesis.per_pattern ({cfg.synthesis.per_pattern})" in out and "Making more data" in out
