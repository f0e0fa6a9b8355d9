"""Session 14's blind reads (benchmarks/results/blind_audit_s14b_*): each defect planted, then shown rejected."""

import pytest

from factory.synthesis import phrasing
from factory.synthesis.phrasing import Unphraseable
from tests.synthesis.test_phrasing import _action, _chain, _query, _tid, _traj, demo_frames, shared_specs


@pytest.fixture(scope="module")
def specs():
    return shared_specs()


def test_a_key_is_never_said_as_a_condition(specs):
    # en1 #6 #20 (Nat 1): '… the tracks of the album 'The Cream Of Clapton' whose length is at most 191320 with track
    # id Bell Bottom Blues …'
    frame = next(f for f in demo_frames(specs).values() if f["tool"] == "get_track")
    assert "track_id" in frame["params"]
    with pytest.raises(Unphraseable) as e:
        phrasing._filters(frame, [("track_id", "Bell Bottom Blues")], "en")
    assert e.value.code == "label" and "track id" in str(e.value)
    # a key cited as itself stays sayable here (a third-party server's 'ID of the text resource to fetch 1': the
    # everything MCP server's resources have no name; tests/realtools)
    assert "track id 5" in phrasing._filters(frame, [("track_id", 5)], "en")
    # a plain attribute is still a condition
    flights = next(f for f in demo_frames(specs).values() if f["tool"] == "list_flights")
    assert phrasing._filters(flights, [("date", "2013-01-05")], "en") == " on 2013-01-05"


def test_a_hop_to_a_place_the_question_names_is_circular(specs):
    # ko #10: '서울특별시 종로구 궁정동이 속한 시군구의 법정 읍면동은 몇 곳인가요?' (the 시군구 is 종로구, named already)
    t = _chain(
        specs, ["search_admin_emd", "list_admin_emd"], [("sigunguCd", "sigunguCd")],
        [("search_admin_emd", "sidoNm", "서울특별시"), ("search_admin_emd", "sigunguNm", "종로구"),
         ("search_admin_emd", "emdNm", "궁정동")],
        {"ask": "count"}, {"type": "number", "value": 87, "fields": []},
    )  # fmt: skip
    with pytest.raises(Unphraseable) as e:
        _query(t, specs, "ko")
    assert e.value.code == "circular" and "종로구" in str(e.value)
    # named by the 동 alone, the 시군구 it lies in is what the question asks for
    t2 = _chain(
        specs, ["search_admin_emd", "list_admin_emd"], [("sigunguCd", "sigunguCd")],
        [("search_admin_emd", "emdNm", "궁정동")], {"ask": "count"}, {"type": "number", "value": 87, "fields": []},
    )  # fmt: skip
    assert "궁정동이 속한" in _query(t2, specs, "ko")


def test_a_record_looked_up_again_by_its_names_keeps_its_name_when_the_lookup_was_pruned(specs):
    # ko #4 (Nat 1): '대구광역시 수성구와 시도와 시군구명이 같은 시군구의 법정 읍면동' — the search by 시도 and 시군구 name
    # (one record: 수성구 itself) was pruned from the golden path, so its one record was not known
    j = [{"from": "list_admin_sigungu.sidoNm+sigunguNm", "to": "search_admin_sigungu.sidoNm+sigunguNm", "type": "DRV",
          "n": 8, "width": 1,
          "process": {"field": "sigunguNm", "operator": "eq", "threshold": "수성구", "n_in": 8, "n_out": 1}},
         {"from": "search_admin_sigungu.sigunguCd", "to": "list_admin_emd.sigunguCd", "type": "SEQ", "n": 1, "width": 1,
          "process": None}]  # fmt: skip
    acts = [{**_action(specs, "list_admin_sigungu", {"sidoCd": "27"}, 1), "records": 8},
            {**_action(specs, "list_admin_emd", {"sigunguCd": "27260"}, 2), "records": 26}]  # fmt: skip
    t = _traj(
        specs, "chain", ["list_admin_sigungu", "search_admin_sigungu", "list_admin_emd"], j,
        [("list_admin_sigungu", "sidoCd", "27")], acts, {"ask": "count", "tool_id": _tid(specs, "list_admin_emd")},
        {"type": "number", "value": 26, "fields": []}, thresholds=["수성구"],
    )  # fmt: skip
    q = _query(t, specs, "ko")
    assert "수성구의 법정동" in q and "같은" not in q, q
