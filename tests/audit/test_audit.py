"""`factory audit` on small hand-made task files: correct, planted-wrong, not derivable, type mismatches.

The tasks have the published Task shape (golden_actions, answer_spec, answer, junctions); their
stored answers are what the raw data says (checked in tests/audit/test_reference.py), except
where a test plants a wrong one.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from factory.audit.run import audit, audit_task, format_report
from factory.cli import main
from tests.conftest import write_config

KEY = {"api_key": "<KEY>"}
KR = {"serviceKey": "<KEY>", "_type": "json", "pageNo": 1, "numOfRows": 500}


def act(step: int, platform: str, tool: str, total: int | None = None, records: int = 1, **args: Any) -> dict:
    return {"step": step, "platform": platform, "tool": tool, "args": args, "records": records, "total_count": total}


def task(tid: str, actions: list[dict], spec: dict, value: Any, junctions: list | None = None, **extra: Any) -> dict:
    return {
        "id": f"sha256:{tid}",
        "domain": extra.pop("domain", "aviation"),
        "category": extra.pop("category", "SEQ"),
        "query": "…",
        "golden_actions": actions,
        "answer_spec": spec,
        "answer": {"type": "number", "value": value, "text": str(value), **extra},
        "junctions": junctions or [],
    }


UNITED = task(
    "united",
    [
        act(1, "airline-registry", "get_airline_registry_key"),
        act(2, "airline-registry", "search_airlines", 1, name="United Air Lines Inc.", page=1, per_page=100, **KEY),
        act(3, "airline-registry", "get_airline", None, carrier="UA", **KEY),
    ],
    {"kind": "value", "calls": [2], "field": "fleet_size"},
    620,
    [{"from": "search_airlines.carrier", "to": "get_airline.carrier", "type": "SEQ", "n": 1, "width": 1}],
)
PLAYLIST_AS_TITLE = task(
    "playlist-as-title",
    [
        act(1, "chinook-store", "get_chinook_store_key"),
        act(1, "chinook-catalog", "get_chinook_catalog_key"),
        act(2, "chinook-store", "list_playlists", 18, 18, page=1, per_page=100, **KEY),
        act(3, "chinook-catalog", "search_tracks", 6, 6, name="Music", page=1, per_page=100, **KEY),
    ],
    {"kind": "count", "calls": [{"step": 3, "index": 0}]},
    6,
    [{"from": "list_playlists.name", "to": "search_tracks.name", "type": "DRV", "n": 14, "width": 1}],
    domain="music",
)
SEJONG_OR_GWANGJU = task(
    "sejong-or-gwangju",
    [
        act(1, "kostat-census", "get_kostat_census_key"),
        act(1, "krgc-admin", "get_krgc_admin_key"),
        act(2, "krgc-admin", "list_admin_sigungu", 5, 5, sidoCd="29", **KR),
        act(2, "kostat-census", "list_census_sigungu", 1, 1, sidoCd="29", **KR),
    ],
    {"kind": "sem", "parts": [{"kind": "count", "calls": [2]}, {"kind": "value", "calls": [3], "field": "sidoNm"}]},
    [5, "세종특별자치시"],
    domain="korea",
    category="SEM",
)
STATE_HASH = task(
    "state-hash",
    [act(1, "chinook-store", "get_chinook_store_key"), act(2, "chinook-store", "get_state_hash", **KEY)],
    {"kind": "value", "calls": [1], "field": "state_hash"},
    "sha256:abc",
    domain="music",
)
NO_REFERENCE = task(
    "no-reference",
    [act(1, "weather-api", "forecast", None, city="Seoul")],
    {"kind": "value", "calls": [0], "field": "temp"},
    3,
)


def test_correct_and_planted_wrong_answers() -> None:
    row = audit_task(UNITED)
    assert (row["status"], row["derived"], row["type_mismatch"]) == ("correct", 620, False)
    assert [b["status"] for b in row["bridges"]] == ["ok"] and row["bridges"][0]["value_in_upstream"] is True
    planted = copy.deepcopy(UNITED)
    planted["answer"]["value"] = 621  # what the demo answered while it read a missing tail number as "NA"
    row = audit_task(planted)
    assert row["status"] == "wrong" and "621" in row["reason"] and "620" in row["reason"]


def test_a_cond_with_the_wrong_branch_is_wrong() -> None:
    cond = copy.deepcopy(UNITED)
    cond["answer_spec"] = {
        "kind": "cond",
        "cond_call": 1,
        "threshold": 2,
        "then": {"kind": "count", "calls": [1]},
        "else": {"kind": "count", "calls": [1]},
    }
    cond["answer"].update(value=1, branch="then")
    row = audit_task(cond)
    assert (row["status"], row["derived_branch"]) == ("wrong", "else") and "branch" in row["reason"]


def test_not_derivable_tasks() -> None:
    assert audit_task(STATE_HASH)["status"] == "not_derivable"
    row = audit_task(NO_REFERENCE)
    assert row["status"] == "not_derivable" and row["calls"][0]["status"] == "no_reference"
    bad_args = copy.deepcopy(UNITED)
    bad_args["golden_actions"][2]["args"]["carrier"] = {"code": "UA"}  # an object, not a carrier code
    bad_args["golden_actions"][2]["args"]["colour"] = "blue"
    assert audit_task(bad_args)["status"] == "not_derivable"


def test_a_playlist_name_in_a_title_search_is_a_flagged_type_mismatch() -> None:
    row = audit_task(PLAYLIST_AS_TITLE)
    assert row["status"] == "correct" and row["type_mismatch"]
    (b,) = row["bridges"]
    assert (b["from_kind"], b["to_kinds"], b["effect"]) == ("playlist.name", ["track.title"], "no_conversion")
    assert b["value_in_upstream"] is True  # 'Music' is a playlist name


def test_a_derived_step_is_re_selected_from_the_raw_records() -> None:
    drv = copy.deepcopy(PLAYLIST_AS_TITLE)
    process = {"field": "track_count", "operator": "max", "threshold": 3290, "n_in": 14, "n_out": 1}
    drv["junctions"][0]["process"] = process
    row = audit_task(drv)
    (check,) = [b for b in row["bridges"] if b["kind"] == "drv"]
    assert (check["status"], check["derived_threshold"], check["scanned"]) == ("ok", 3290, 18)
    assert row["status"] == "correct"
    drv["junctions"][0]["process"] = {**process, "threshold": 3000}  # not the largest playlist
    row = audit_task(drv)
    assert row["status"] == "wrong" and "threshold_differs" in row["reason"]
    drv["junctions"][0]["process"] = process
    drv["golden_actions"][3]["args"]["name"] = "Classical"  # a playlist the operator does not keep
    drv["golden_actions"][3]["total_count"] = drv["answer"]["value"] = audit_task(drv)["derived"]
    row = audit_task(drv)
    assert row["status"] == "wrong" and "value_not_selected" in row["reason"]


def test_one_code_in_two_code_systems_makes_the_answer_wrong() -> None:
    row = audit_task(SEJONG_OR_GWANGJU)
    assert row["derived"] == [5, "세종특별자치시"]  # both calls replay...
    assert row["status"] == "wrong" and row["type_mismatch"]  # ...but 29 is 광주 in one system, 세종 in the other
    (b,) = [b for b in row["bridges"] if b["status"] == "type_mismatch"]
    assert (b["kind"], b["intended_value"], b["effect"]) == ("shared_seed", "24", "answer_differs")
    seoul = copy.deepcopy(SEJONG_OR_GWANGJU)  # 11 is 서울 in both systems: flagged, answer unchanged
    for a in seoul["golden_actions"][2:]:
        a["args"]["sidoCd"] = "11"
    seoul["answer"]["value"] = [25, "서울특별시"]
    row = audit_task(seoul)
    assert (row["status"], row["type_mismatch"]) == ("correct", True)
    assert [b["effect"] for b in row["bridges"]] == ["no_effect"]


def test_report_counts_and_table() -> None:
    planted = copy.deepcopy(UNITED)
    planted["id"] = "sha256:planted"
    planted["answer"]["value"] = 621
    report = audit([UNITED, planted, STATE_HASH, PLAYLIST_AS_TITLE])
    assert report["counts"] == {"correct": 2, "wrong": 1, "not_derivable": 1}
    assert report["type_mismatch"] == 1 and report["tasks"] == 4
    text = format_report(report)
    assert text.splitlines()[1].startswith("planted") and "4 tasks: correct 2 (50%), wrong 1" in text


def _publish(tmp: Path, tasks: list[dict]) -> Path:
    config = write_config(tmp)
    folder = tmp / "data" / "dataset_splits"
    folder.mkdir(parents=True)
    (folder / "__all__.json").write_text(json.dumps({"tasks": tasks}, ensure_ascii=False), encoding="utf-8")
    return config


def test_cli_flags_a_planted_wrong_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    planted = copy.deepcopy(SEJONG_OR_GWANGJU)
    planted["id"] = "sha256:planted"
    planted["answer"]["value"] = [7, "세종특별자치시"]
    config = _publish(tmp_path, [UNITED, planted])
    assert main(["--config", str(config), "audit"]) == 1
    out = capsys.readouterr().out
    assert "planted" in out and "wrong" in out and "2 tasks: correct 1 (50%), wrong 1" in out
    report = json.loads((tmp_path / "data" / "audit" / "report.json").read_text(encoding="utf-8"))
    assert {r["id"]: r["status"] for r in report["rows"]} == {"sha256:united": "correct", "sha256:planted": "wrong"}


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _publish(tmp_path, [UNITED, STATE_HASH])
    out = tmp_path / "elsewhere" / "audit.json"
    assert main(["--config", str(config), "audit", "--out", str(out)]) == 0  # not derivable is reported only
    assert json.loads(out.read_text(encoding="utf-8"))["counts"]["not_derivable"] == 1
    assert main(["--config", str(config), "audit", "--strict"]) == 1
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(UNITED) + "\n", encoding="utf-8")
    assert main(["audit", "--tasks", str(tasks), "--strict"]) == 0
    (tmp_path / "empty").mkdir()
    empty = write_config(tmp_path / "empty")
    assert main(["--config", str(empty), "audit"]) == 2
    assert "no published dataset" in capsys.readouterr().err
    tasks.write_text('{"rows": []}', encoding="utf-8")
    assert main(["audit", "--tasks", str(tasks)]) == 2


def test_the_audit_is_independent_of_demo_synthesis_and_tools() -> None:
    code = (
        "import sys; import factory.audit.cli, factory.audit.run; "
        "bad = sorted(m for m in sys.modules if m.split('.')[:2] in "
        "(['factory', 'demo'], ['factory', 'synthesis'], ['factory', 'tools'])); print(bad)"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root, env=env)
    assert out.stdout.strip() == "[]"


def test_a_name_found_by_search_in_one_arm_is_not_a_misselection_of_the_other_arms_pick() -> None:
    """A CMP of 성동구 (found by a name search) and 대전광역시 동구 (picked by name among Daejeon's 시군구): the
    search arm's code reaches list_admin_emd too, so the pick's junction did not 'fail to select' it; a code
    neither arm offers still is a misselection."""

    def emd(code: str, n: int) -> dict:
        return act(4, "krgc-admin", "list_admin_emd", n, n, sigunguCd=code, **KR)

    junctions = [
        {"from": "list_admin_sido.sidoCd", "to": "list_admin_sigungu.sidoCd", "type": "SEQ", "n": 1, "width": 1,
         "process": {"field": "sidoNm", "operator": "eq", "threshold": "대전광역시", "n_in": 17, "n_out": 1}},
        {"from": "search_admin_sigungu.sigunguCd", "to": "list_admin_emd.sigunguCd", "type": "SEQ", "n": 1,
         "width": 1},
        {"from": "list_admin_sigungu.sigunguCd", "to": "list_admin_emd.sigunguCd", "type": "SEQ", "n": 1, "width": 1,
         "process": {"field": "sigunguNm", "operator": "eq", "threshold": "동구", "n_in": 5, "n_out": 1}},
    ]  # fmt: skip
    spec = {"kind": "cmp", "ask": "winner", "order": "more", "labels": ["성동구", "동구"],
            "arms": [{"kind": "count", "calls": [{"step": 4, "index": 0}]},
                     {"kind": "count", "calls": [{"step": 4, "index": 1}]}]}  # fmt: skip
    actions = [
        act(1, "krgc-admin", "get_krgc_admin_key"),
        act(2, "krgc-admin", "list_admin_sido", 17, 17, **KR),
        act(3, "krgc-admin", "search_admin_sigungu", 1, 1, sigunguNm="성동구", **KR),
        act(3, "krgc-admin", "list_admin_sigungu", 5, 5, sidoCd="30", **KR),
        emd("11200", 17),
        emd("30110", 45),
    ]
    cmp = task("seongdong-or-daejeon-donggu", actions, spec, "동구", junctions, domain="korea", category="CMP")
    row = audit_task(cmp)
    assert row["status"] == "correct", row.get("reason")
    assert {b["status"] for b in row["bridges"] if b["kind"] == "drv"} == {"ok"}
    stray = copy.deepcopy(cmp)
    stray["golden_actions"][5] = emd("30140", 45)  # 대덕구: the pick keeps 동구, the search found 성동구
    row = audit_task(stray)
    assert "value_not_selected" in json.dumps(row["bridges"])
