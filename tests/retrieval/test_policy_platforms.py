"""Platform-scoped tool-use policies (blind read s11, issue 17: every refusal banned all APIs, so refusing was right by
construction, and every no_effect policy banned a document search the task never needed): a policy that forbids one
API platform while another stays permitted, the per-language minimum per category, and stage 3 on such a policy."""

import yaml

from factory.config import parse_config
from factory.retrieval import evaluate, policy


def _tool(platform: str, name: str, fields: list[str], params: list[str] = (), key: bool = False, kind="openapi"):
    return {
        "name": name, "platform": platform, "source": {"kind": kind},
        "output_fields": {f: {"name": f} for f in fields},
        "input_schema": {"type": "object", "properties": {p: {"type": "string"} for p in params}},
        "key_acquisition": {"kind": "tool"} if key else None,
    }  # fmt: skip


KOREA_INVENTORY = {
    "tools": [
        _tool("kostat-census", "get_kostat_census_key", ["response.body.serviceKey"], key=True),
        _tool("kostat-census", "list_census_sido", ["sidoCd", "sidoNm", "sidoNmEn"], ["serviceKey"]),
        _tool("kostat-census", "list_census_sigungu", ["sidoCd", "sidoNm", "sigunguCd", "sigunguNm", "sigunguNmEn"],
              ["serviceKey", "sidoCd"]),
        _tool("kostat-census", "get_census_statistics", ["admCd", "class1", "class2", "statType", "value", "year"],
              ["serviceKey", "admCd", "statType", "year"]),
        _tool("krgc-admin", "get_krgc_admin_key", ["response.body.serviceKey"], key=True),
        _tool("krgc-admin", "list_admin_sigungu", ["sidoCd", "sidoNm", "sigunguCd", "sigunguNm"],
              ["serviceKey", "sidoCd"]),
        _tool("krgc-admin", "list_admin_emd", ["emdCd", "emdNm", "sidoNm", "sigunguCd", "sigunguNm"],
              ["serviceKey", "sigunguCd"]),
        {**_tool("krgc-admin", "rename_admin_emd", ["emdCd"], ["emdCd"]), "state_changing": True},
        _tool("korea-census-bulletins", "search_census_bulletins", ["id", "text", "title"], ["query", "k"],
              kind="retrieval"),
    ]
}  # fmt: skip


def _key(platform: str, tool: str) -> dict:
    return {"step": 1, "tool": tool, "platform": platform, "source_type": "api", "args": {}}


EMD_TASK = {  # 광주광역시의 법정 읍면동: only krgc-admin lists 읍면동
    "id": "sha256:emd", "domain": "korea", "language": "ko", "category": "FAN",
    "query": "광주광역시에 있는 법정 읍면동을 모두 합치면 몇 곳인지 알려 주세요.",
    "answer": {"type": "number", "value": 202},
    "golden_actions": [
        _key("krgc-admin", "get_krgc_admin_key"),
        {"step": 2, "tool": "list_admin_sigungu", "platform": "krgc-admin", "source_type": "api",
         "args": {"sidoCd": "29"}},
        *[{"step": 3, "tool": "list_admin_emd", "platform": "krgc-admin", "source_type": "api",
           "args": {"sigunguCd": c}} for c in ("29110", "29140", "29155", "29170", "29200")],
    ],
    "available_tools": ["list_admin_sigungu", "list_admin_emd"],
    "platforms": ["krgc-admin"],
}  # fmt: skip
SIGUNGU_TASK = {  # 시군구 수: the census lists 시군구 too, so banning krgc-admin alone would not make it unanswerable
    "id": "sha256:sgg", "domain": "korea", "language": "ko",
    "query": "인천광역시에는 시군구가 몇 곳 있나요?",
    "answer": {"type": "number", "value": 10},
    "golden_actions": [
        _key("krgc-admin", "get_krgc_admin_key"),
        {"step": 2, "tool": "list_admin_sigungu", "platform": "krgc-admin", "source_type": "api",
         "args": {"sidoCd": "28"}},
    ],
    "available_tools": ["list_admin_sigungu"],
    "platforms": ["krgc-admin"],
}  # fmt: skip
CENSUS_TASK = {  # a census statistic: krgc-admin is unused, and another path through it would be forbidden
    "id": "sha256:census", "domain": "korea", "language": "ko",
    "query": "2020년 서울특별시의 인구는?",
    "answer": {"type": "number", "value": 9586195},
    "golden_actions": [
        _key("kostat-census", "get_kostat_census_key"),
        {"step": 2, "tool": "get_census_statistics", "platform": "kostat-census", "source_type": "api",
         "args": {"admCd": "11", "year": "2020", "statType": "population"}},
    ],
    "alternative_paths": [{"actions": [
        _key("krgc-admin", "get_krgc_admin_key"),
        {"step": 2, "tool": "list_admin_sigungu", "platform": "krgc-admin", "source_type": "api", "args": {}},
        {"step": 3, "tool": "get_census_statistics", "platform": "kostat-census", "source_type": "api", "args": {}},
    ]}],
    "available_tools": ["get_census_statistics"],
    "platforms": ["kostat-census"],
}  # fmt: skip
CATALOG = policy.tool_catalog(KOREA_INVENTORY)


def _cfg(tmp_path, shares, minimum=None):
    raw = {
        "data_dir": str(tmp_path / "data"),
        "retrieval": {"policy_shares": shares, **({"policy_min_per_language": minimum} if minimum else {})},
        "domains": [
            {"name": "korea", "language": "ko", "description": "한국 행정구역 코드와 시군구별 센서스 통계 (통계청).",
             "sources": [{"kind": "openapi", "platform": "kostat-census", "spec": "demo://a"},
                         {"kind": "openapi", "platform": "krgc-admin", "spec": "demo://b"},
                         {"kind": "retrieval", "collection": "census_bulletins"}]},
            {"name": "aviation", "language": "en", "description": "Flights out of New York in 2013.",
             "sources": [{"kind": "openapi", "platform": "faa", "spec": "demo://c"}]},
        ],
    }  # fmt: skip
    return parse_config(yaml.safe_dump(raw), project_dir=tmp_path)


REFUSE = {"changes_answer": 1.0, "no_effect": 0.0, "none": 0.0}
NO_EFFECT = {"changes_answer": 0.0, "no_effect": 1.0, "none": 0.0}
NONE = {"changes_answer": 0.0, "no_effect": 0.0, "none": 1.0}


def test_a_refusal_forbids_the_platform_the_task_needs_while_a_permitted_platform_cannot_answer(tmp_path):
    cfg = _cfg(tmp_path, REFUSE)
    [task], stats = policy.assign_policies([EMD_TASK], cfg, inventories={"korea": KOREA_INVENTORY})
    pol = task["policy"]
    assert pol["category"] == "changes_answer" and pol["scope"] == "platform"
    assert pol["forbidden_platforms"] == ["krgc-admin"] and "api" not in pol["forbidden_sources"]
    # the permitted census tools are offered (a permitted tool exists) and the policy names only krgc-admin's tools
    assert {"list_census_sigungu", "get_census_statistics"} <= set(task["available_tools"])
    assert (
        "krgc-admin API" in pol["text"]
        and "list_admin_emd" in pol["text"]
        and "다른 도구는 사용해도 됩니다" in pol["text"]
    )
    assert "list_census_sigungu" not in pol["text"]
    assert "rename_admin_emd" not in task["available_tools"]  # a write tool is never offered to a read task
    assert task["golden_actions"] == [] and task["answer"]["value"] == pol["expected_answer"]
    assert policy.forbidden_calls(task) == [] and len(pol["unrestricted"]["golden_actions"]) == 7
    assert stats["by_scope"] == {"platform": 1}


def test_no_platform_refusal_where_a_permitted_platform_lists_the_same_records(tmp_path):
    """list_census_sigungu outputs what list_admin_sigungu lists (sigunguCd, sigunguNm): banning krgc-admin alone
    would publish a wrong refusal, so the refusal (if any) forbids every API."""
    assert policy.permitted_may_answer(SIGUNGU_TASK, ["krgc-admin"], CATALOG) is not None
    own = CATALOG["list_admin_sigungu"]["fields"] - CATALOG["list_admin_sigungu"]["params"]
    assert policy._covers(own, CATALOG["list_census_sigungu"]["fields"])
    assert policy.platform_refusal(SIGUNGU_TASK, CATALOG) is None
    assert policy.permitted_may_answer(EMD_TASK, ["krgc-admin"], CATALOG) is None
    [task], _ = policy.assign_policies([SIGUNGU_TASK], _cfg(tmp_path, REFUSE), inventories={"korea": KOREA_INVENTORY})
    assert task["policy"]["scope"] == "source" and task["policy"]["forbidden_sources"] == ["api"]


def test_only_what_the_answer_reads_decides_and_passage_chains_get_no_platform_refusal():
    """청운동's 시·도, then its 시군구 count: the first hop (search_admin_emd) has no same-field stand-in, but census
    finds the 시·도 another way and list_census_sigungu lists what the answer counts: no platform refusal. An
    API+RAG chain gets none either (a census statistic may stand in for the bulletin's number)."""
    emd_then_sgg = {
        **SIGUNGU_TASK,
        "golden_actions": [
            _key("krgc-admin", "get_krgc_admin_key"),
            {"step": 2, "tool": "search_admin_emd", "platform": "krgc-admin", "source_type": "api",
             "args": {"emdNm": "청운동"}},
            {"step": 3, "tool": "list_admin_sigungu", "platform": "krgc-admin", "source_type": "api",
             "args": {"sidoCd": "11"}},
        ],
    }  # fmt: skip
    inv = {"tools": [*KOREA_INVENTORY["tools"], _tool("krgc-admin", "search_admin_emd",
                     ["emdCd", "emdNm", "sidoNm", "sigunguCd", "sigunguNm"], ["emdNm"])]}  # fmt: skip
    assert policy.platform_refusal(emd_then_sgg, policy.tool_catalog(inv)) is None
    hybrid = {**EMD_TASK, "golden_actions": [*EMD_TASK["golden_actions"], {
        "step": 4, "tool": "search_census_bulletins", "platform": "korea-census-bulletins",
        "source_type": "retrieval", "args": {"query": "광주"}}]}  # fmt: skip
    assert policy.platform_refusal(hybrid, CATALOG) is None


def test_a_refusal_also_forbids_the_documents_when_one_may_state_the_answer():
    chunk = {"id": "korea:1", "text": "광주광역시의 법정 읍면동은 202곳이다."}
    assert policy.platform_refusal(EMD_TASK, CATALOG, [chunk]) == (["retrieval"], ["krgc-admin"])
    assert policy.platform_refusal(EMD_TASK, CATALOG, []) == ([], ["krgc-admin"])


def _adherence(task, calls):
    tools = {t["name"]: t for t in KOREA_INVENTORY["tools"]}
    source_of = lambda n: ("retrieval" if tools[n]["source"]["kind"] == "retrieval" else "api") if n in tools else None  # noqa: E731
    platform_of = lambda n: tools[n]["platform"] if n in tools else None  # noqa: E731
    return source_of, platform_of


def test_stage_3_fails_a_trajectory_through_the_forbidden_platform_even_with_the_right_answer(tmp_path):
    """A no_effect policy forbids krgc-admin, which the census task does not need: the census path passes all three
    stages; a trajectory that also calls list_admin_sigungu gets the same right answer and fails stage 3."""
    [task], _ = policy.assign_policies([CENSUS_TASK], _cfg(tmp_path, NO_EFFECT), inventories={"korea": KOREA_INVENTORY})
    pol = task["policy"]
    assert pol["category"] == "no_effect" and pol["forbidden_platforms"] == ["krgc-admin"]
    assert task["alternative_paths"] == []  # the other path went through krgc-admin: no way to the answer now
    assert "list_admin_sigungu" in task["available_tools"]  # the agent can break the policy
    source_of, platform_of = _adherence(task, [])
    record = {"admCd": "11", "year": "2020", "value": 9586195}
    good = [{"tool": "get_census_statistics", "status": "executed", "ok": True, "records": [record], "total_count": 1}]
    bad = [{"tool": "list_admin_sigungu", "status": "executed", "ok": True, "records": [{"sigunguCd": "11110"}],
            "total_count": 25}, *good]  # fmt: skip
    gt = [[{"tool": "get_census_statistics", "ok": True, "records": [record], "total_count": 1}]]
    for calls, passes in ((good, True), (bad, False)):
        out = evaluate.score(task, gt_paths=gt, predicted=calls, answer="9586195명입니다.",
                             response={"passed": True, "method": "exact"}, source_of=source_of, platform_of=platform_of)  # fmt: skip
        assert out["stages"]["policy"]["passed"] is passes
        assert out["stages"]["final_response"]["passed"]  # the answer is right either way
        assert out["passed"] is passes
    violation = policy.adherence(pol, bad, source_of, platform_of)["violations"]
    assert violation == [{"index": 0, "tool": "list_admin_sigungu", "source": "api"}]


def test_each_language_gets_its_minimum_of_each_category_from_a_stable_draw(tmp_path):
    """No task draws a policy (none = 1.0), yet each language gets one refusal and one no_effect task; the same
    tasks in another order get the same policies."""
    en = [{"id": f"sha256:en{i}", "domain": "aviation", "language": "en", "query": "Which airline flies N1?",
           "answer": {"type": "string", "value": "X"}, "available_tools": ["get_plane"],
           "golden_actions": [{"step": 1, "tool": "get_plane", "platform": "faa", "args": {"tailnum": f"N10{i}"}}]}
          for i in range(4)]  # fmt: skip
    ko = [{**t, "id": f"{t['id']}-{i}"} for i in range(2) for t in (EMD_TASK, CENSUS_TASK)]
    cfg = _cfg(tmp_path, NONE, {"changes_answer": 1, "no_effect": 1})
    tasks = en + ko
    # a no_effect ban of the documents needs a document about the task (else it is vacuous), a refusal none: one
    # document about N100 and N101
    corpora = {"aviation": {"chunks": [{"id": "c1", "text": "Planes N100 and N101 fly for ExpressJet."}]}}
    out, stats = policy.assign_policies(tasks, cfg, corpora, inventories={"korea": KOREA_INVENTORY})
    for lang in ("en", "ko"):
        assert stats["by_language"][lang]["changes_answer"] == 1 and stats["by_language"][lang]["no_effect"] == 1
    assert stats["topped_up"] == {
        "en": {"changes_answer": 1, "no_effect": 1},
        "ko": {"changes_answer": 1, "no_effect": 1},
    }
    again, _ = policy.assign_policies(list(reversed(tasks)), cfg, corpora, inventories={"korea": KOREA_INVENTORY})
    by_id = {t["id"]: t["policy"] for t in again}
    assert all(by_id[t["id"]] == t["policy"] for t in out)
    assert policy.assign_policies(tasks, _cfg(tmp_path, NONE), inventories={"korea": KOREA_INVENTORY})[1][
        "by_category"
    ]["none"] == len(tasks)  # no minimum: the draw alone


def test_a_top_up_leaves_most_tasks_of_a_small_run_without_a_policy(tmp_path):
    """CI, session 15: a Prism petstore run kept 3 tasks and a minimum of 3 refusals per language made every one
    of them 'No permitted tool can answer this question.' A top-up stops when half a language's tasks carry a
    policy."""
    en = [{"id": f"sha256:en{i}", "domain": "aviation", "language": "en", "query": "Which airline flies N1?",
           "answer": {"type": "string", "value": "X"}, "available_tools": ["get_plane"],
           "golden_actions": [{"step": 1, "tool": "get_plane", "platform": "faa", "args": {"tailnum": f"N10{i}"}}]}
          for i in range(3)]  # fmt: skip
    cfg = _cfg(tmp_path, NONE, {"changes_answer": 3, "no_effect": 3})
    corpora = {"aviation": {"chunks": [{"id": "c1", "text": "Planes N100, N101 and N102 fly for ExpressJet."}]}}
    out, stats = policy.assign_policies(en, cfg, corpora)
    assert sum(t["policy"] is not None for t in out) == 1
    assert stats["by_language"]["en"]["none"] == 2
    assert sum(stats["topped_up"]["en"].values()) == 1


def test_the_policy_scope_covers_what_the_korean_domain_asks():
    """Blind read s11 pol #8: a ban on '시군구별 인구·가구·주택 통계' was claimed for an economy question."""
    from factory.config import load_config

    desc = load_config().domain("korea").description
    topic = policy.topic_of(desc, "korea")
    assert "인구·가구·주택 통계" not in topic and topic.endswith("센서스 통계")


def test_rewording_a_question_keeps_its_policy(tmp_path):
    """The task id hashes the question's text; the draw hashes the trajectory, so another wording of the same path
    keeps the category (blind read s11: policies drawn per task id are redrawn by every rewording)."""
    cfg = _cfg(tmp_path, {"changes_answer": 0.3, "no_effect": 0.3, "none": 0.4})
    inv = {"korea": KOREA_INVENTORY}
    first = [{**CENSUS_TASK, "id": f"sha256:a{i}", "lineage": {"trajectory_id": f"sha256:t{i}"}} for i in range(12)]
    reworded = [{**t, "id": t["id"] + "-reworded", "query": "서울의 2020년 인구가 궁금해요."} for t in first]
    a, _ = policy.assign_policies(first, cfg, inventories=inv)
    b, _ = policy.assign_policies(reworded, cfg, inventories=inv)
    assert [policy.category_of(t) for t in a] == [policy.category_of(t) for t in b]
    assert len({policy.category_of(t) for t in a}) > 1  # the draw still varies between trajectories
    assert policy.draw_key({"id": "x"}) == "x"  # a row without lineage: its id


def test_a_no_effect_ban_prefers_a_platform_that_could_also_answer():
    """Forbidding a platform that could serve the task too tests the agent's choice of source: for a 시군구 count
    through krgc-admin, kostat-census (whose list_census_sigungu lists the same records) is preferred to a platform
    that could not."""
    inv = {"tools": [*KOREA_INVENTORY["tools"], _tool("weather", "list_weather", ["stn", "temp"], ["date"])]}
    catalog = policy.tool_catalog(inv)
    for i in range(8):  # whatever the tie-breaking hash
        task = {**SIGUNGU_TASK, "id": f"sha256:sgg{i}"}
        assert policy.platform_no_effect(task, catalog) == ([], ["kostat-census"])


def test_a_listing_with_a_field_more_still_has_its_stand_in():
    """list_census_sigungu also gives an English name krgc's list_admin_sigungu lacks: a 시군구 count through the
    census still has a permitted stand-in, so banning kostat-census makes no refusal."""
    census_sgg = {
        **SIGUNGU_TASK,
        "golden_actions": [
            _key("kostat-census", "get_kostat_census_key"),
            {"step": 2, "tool": "list_census_sigungu", "platform": "kostat-census", "source_type": "api",
             "args": {}},
        ],
    }  # fmt: skip
    assert str(policy.permitted_may_answer(census_sgg, ["kostat-census"], CATALOG)).startswith("list_census_sigungu: ")
    assert policy.platform_refusal(census_sgg, CATALOG) is None


def test_a_permitted_tool_sent_the_same_argument_may_answer():
    """Banning airline-registry for 'how many flights did UA fly in 2013' (get_airline(carrier)) leaves flight-ops'
    list_flights(carrier), which counts them: no platform refusal."""
    inv = {
        "tools": [
            _tool("airline-registry", "get_airline", ["carrier", "name", "flights_2013"], ["carrier"]),
            _tool(
                "flight-ops", "list_flights", ["flight_id", "dep_time", "arr_time", "carrier"], ["carrier", "origin"]
            ),
        ]
    }
    task = {
        "id": "sha256:ua", "domain": "aviation", "language": "en", "query": "How many flights did UA fly in 2013?",
        "answer": {"type": "number", "value": 58665},
        "golden_actions": [{"step": 1, "tool": "get_airline", "platform": "airline-registry", "source_type": "api",
                            "args": {"carrier": "UA"}}],
    }  # fmt: skip
    catalog = policy.tool_catalog(inv)
    assert policy.permitted_may_answer(task, ["airline-registry"], catalog) == "list_flights takes carrier too"
    assert policy.platform_refusal(task, catalog) is None
