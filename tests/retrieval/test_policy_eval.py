"""Tool-use policies (assignment, text, adherence) and the VAKRA evaluation stages on synthetic task rows
(the API+RAG rows follow the shared contract of ragtasks: golden actions carry `source_type`, tasks `hop_type`)."""

from collections import Counter

import pytest

from factory.config import RetrievalConfig
from factory.retrieval import evaluate, policy

API_TASK = {
    "id": "sha256:api-task",
    "domain": "aviation",
    "language": "en",
    "query": "Which airline flies the tail number N14228?",
    "answer": {"type": "string", "value": "United Air Lines Inc.", "text": "United Air Lines Inc. flies it."},
    "golden_actions": [
        {"step": 1, "tool": "get_plane", "platform": "faa", "args": {"tailnum": "N14228"}},
        {"step": 2, "tool": "get_airline", "platform": "carriers", "args": {"carrier": "UA"}},
    ],
    "available_tools": ["get_plane", "get_airline", "search_aviation_weather"],
}
RAG_API_TASK = {
    "id": "sha256:rag-api-task",
    "domain": "aviation",
    "language": "en",
    "hop_type": "RAG-API",
    "query": "Which airport reported the strongest gust on 2013-01-05, and how many flights left it that day?",
    "answer": {"type": "number", "value": 312, "text": "312 flights left EWR that day."},
    "golden_actions": [
        {
            "step": 1,
            "tool": "search_aviation_weather",
            "platform": "retrieval",
            "source_type": "retrieval",
            "args": {"query": "strongest gust 2013-01-05", "k": 5},
            "passage_ids": ["aviation:abc"],
        },
        {
            "step": 2,
            "tool": "count_flights",
            "platform": "flights",
            "source_type": "api",
            "args": {"origin": "EWR", "date": "2013-01-05"},
        },
    ],  # fmt: skip
    "available_tools": ["search_aviation_weather", "count_flights"],
}
KO_RAG_TASK = {
    "id": "sha256:ko-rag",
    "domain": "korea",
    "language": "ko",
    "hop_type": "RAG",
    "query": "군포시의 2020년 인구 증가율은?",
    "answer": {"type": "number", "value": 1.2, "text": "1.2%입니다."},
    "golden_actions": [
        {
            "step": 1,
            "tool": "search_korea_census",
            "platform": "retrieval",
            "source_type": "retrieval",
            "args": {"query": "군포시 2020 인구", "k": 5},
        },
    ],  # fmt: skip
    "available_tools": ["search_korea_census", "get_population"],
}
SOURCES = {"get_plane": "api", "get_airline": "api", "count_flights": "api", "search_aviation_weather": "retrieval"}


def test_categories_follow_the_golden_path_and_both_languages():
    unans = policy.build_policy(RAG_API_TASK, "changes_answer", "flights out of New York")
    assert unans is not None
    assert unans["forbidden_sources"] == ["retrieval"]  # VAKRA's example forbids the documents first
    assert "search_aviation_weather" in unans["text"] and "flights out of New York" in unans["text"]
    assert unans["expected_answer"] == "No permitted tool can answer this question."
    api_unans = policy.build_policy(API_TASK, "changes_answer", "flights")
    assert api_unans is not None and api_unans["forbidden_sources"] == ["api"]
    assert "carriers" in api_unans["text"] and "faa" in api_unans["text"]
    no_effect = policy.build_policy(API_TASK, "no_effect", "flights")
    assert no_effect is not None and no_effect["forbidden_sources"] == ["retrieval"]
    assert no_effect["expected_answer"] is None
    with pytest.raises(policy.PolicyError, match="cannot apply"):  # both sources used: nothing to forbid freely
        policy.build_policy(RAG_API_TASK, "no_effect", "flights")
    ko = policy.build_policy(KO_RAG_TASK, "changes_answer", "한국 인구 통계")
    assert ko is not None and "문서 검색을 사용하지 마십시오" in ko["text"]
    assert ko["expected_answer"] == "허용된 도구로는 이 질문에 답할 수 없습니다."
    assert policy.topic_of("US domestic flights out of New York in 2013, airlines and airports.", "x") == (
        "US domestic flights out of New York in 2013, airlines and airports"
    )
    assert policy.topic_of("The Chinook digital music store - catalogue.", "x") == "the Chinook digital music store"
    # forbidding the APIs names every API platform of the domain, not only the golden path's
    every = policy.build_policy(API_TASK, "changes_answer", "flights", api_platforms=["airports", "carriers"])
    assert every is not None and "airports, carriers, faa" in every["text"]


def test_an_alternative_path_without_the_source_keeps_the_task_answerable():
    task = {**API_TASK, "alternative_paths": [
        {"note": "documents", "actions": [{"tool": "search_aviation_weather", "source_type": "retrieval"}]}
    ]}  # fmt: skip
    assert policy.forbidden_for(task, "changes_answer") is None  # neither type is on every path


def test_assignment_is_deterministic_and_follows_the_shares():
    settings = RetrievalConfig(policy_shares={"changes_answer": 0.5, "no_effect": 0.3, "none": 0.2})
    drawn = Counter(policy.draw_category(f"sha256:{i}", settings) for i in range(2000))
    assert abs(drawn["changes_answer"] / 2000 - 0.5) < 0.04 and abs(drawn["no_effect"] / 2000 - 0.3) < 0.04
    assert [policy.assign(API_TASK, settings, "t") for _ in range(2)][0] == policy.assign(API_TASK, settings, "t")
    with pytest.raises(ValueError, match="sum to 1"):
        RetrievalConfig(policy_shares={"changes_answer": 0.5, "no_effect": 0.3, "none": 0.3})


def test_no_api_forbidding_policy_where_a_document_may_state_the_answer():
    """A changes_answer policy forbidding the APIs says the documents cannot answer: a corpus chunk naming what
    the API calls name and writing the answer (an artist's note: 'holds 2 albums by Accept') rules it out."""
    task = {
        "id": "sha256:accept",
        "domain": "music",
        "language": "en",
        "answer": {"type": "number", "value": 2, "text": "Accept has 2 albums."},
        "golden_actions": [{"step": 1, "tool": "search_artists", "platform": "chinook-catalog",
                            "args": {"name": "Accept"}}],
        "available_tools": ["search_artists", "search_catalogue_notes"],
    }  # fmt: skip
    note = {"id": "music:n1", "text": "Artist note: Accept. The catalogue holds 2 albums by Accept."}
    other = {"id": "music:n2", "text": "Artist note: AC/DC. The catalogue holds 2 albums by AC/DC."}
    album = {"id": "music:n3", "text": "Album note: Restless and Wild by Acceptance."}  # a longer name
    assert policy.documents_may_answer(task, [other, note]) == "music:n1"
    assert policy.documents_may_answer(task, [other, album]) is None  # the value, but about other artists
    # a document about the entity may answer whatever the value (a comparison of two notes, a count it states)
    assert policy.documents_may_answer({**task, "answer": {"value": 3}}, [note]) == "music:n1"
    # a string answer the documents are about: 'Which album has more tracks?' → an album with a note
    which = {**task, "golden_actions": [], "answer": {"value": "Restless and Wild"}}
    assert policy.documents_may_answer(which, [other, album]) == "music:n3"
    settings = RetrievalConfig(policy_shares={"changes_answer": 1.0, "no_effect": 0.0, "none": 0.0})
    assert policy.assign(task, settings, "music", chunks=[other])["forbidden_sources"] == ["api"]
    assert policy.assign(task, settings, "music", chunks=[other, note]) is None


def test_no_document_forbidding_refusal_where_the_apis_may_compute_the_passage_fact():
    """A changes_answer policy forbidding the documents says the APIs cannot answer: a task whose passage fact the
    reviewed lexicon marks derivable (album sales: the store's invoice lines count them) keeps no such policy, while
    one whose fact only the documents hold still gets it."""
    settings = RetrievalConfig(policy_shares={"changes_answer": 1.0, "no_effect": 0.0, "none": 0.0})
    only_docs = {**RAG_API_TASK, "answer_spec": {"kind": "value", "field": "n", "calls": [{"step": 2, "index": 0}]}}
    pol = policy.assign(only_docs, settings, "flights")
    assert pol is not None and pol["forbidden_sources"] == ["retrieval"] and pol["expected_answer"]
    derivable = {**only_docs, "answer_spec": {**only_docs["answer_spec"], "apis_may_answer": True}}
    assert policy.apis_may_answer(derivable) and not policy.apis_may_answer(only_docs)
    assert policy.assign(derivable, settings, "flights") is None


def test_adherence_tags_every_call_with_its_source():
    pol = policy.build_policy(RAG_API_TASK, "changes_answer", "flights")
    calls = [{"tool": "count_flights", "status": "executed"}, {"tool": "search_aviation_weather", "status": "executed"}]
    out = policy.adherence(pol, calls, SOURCES.get)
    assert not out["passed"] and out["violations"] == [
        {"index": 1, "tool": "search_aviation_weather", "source": "retrieval"}
    ]
    assert out["sources"] == {"api": 1, "retrieval": 1}
    assert policy.adherence(None, calls, SOURCES.get)["passed"]  # no policy: nothing forbidden
    rejected = [{"tool": "search_aviation_weather", "status": "invalid"}]  # never sent: consulted nothing
    assert policy.adherence(pol, rejected, SOURCES.get)["passed"]


def _resp(tool, records, total=None):
    return {"tool": tool, "status": "executed", "ok": True, "records": records, "total_count": total}


GT_RAG_API = [
    [
        {"tool": "search_aviation_weather", "ok": True, "records": [{"id": "aviation:abc", "title": "EWR weather",
                                                                     "text": "Gusts of 41 mph at EWR.", "score": 0.03}]},
        {"tool": "count_flights", "ok": True, "records": [{"origin": "EWR", "flights": 312}], "total_count": 1},
    ]
]  # fmt: skip


def test_policy_violating_trajectory_fails_stage_3_while_its_answer_is_right():
    """Planted (issue 17): the no_effect policy forbids the APIs on a RAG-only task; the agent answers right
    but used the API too."""
    task = {**RAG_API_TASK, "hop_type": "RAG", "golden_actions": RAG_API_TASK["golden_actions"][:1],
            "answer": {"type": "string", "value": "EWR", "text": "EWR."}}  # fmt: skip
    task["policy"] = policy.build_policy(task, "no_effect", "flights")
    assert task["policy"]["forbidden_sources"] == ["api"]
    predicted = [GT_RAG_API[0][0] | {"status": "executed"}, _resp("count_flights", [{"origin": "EWR", "flights": 312}])]
    out = evaluate.score(task, gt_paths=[GT_RAG_API[0][:1]], predicted=predicted, answer="The answer is EWR.",
                         response={"passed": True, "method": "exact"}, source_of=SOURCES.get)  # fmt: skip
    assert out["stages"]["tool_responses"]["passed"] and out["stages"]["final_response"]["passed"]
    assert not out["stages"]["policy"]["passed"] and out["first_failure"] == "policy" and not out["passed"]
    obeying = evaluate.score(task, gt_paths=[GT_RAG_API[0][:1]], predicted=predicted[:1], answer="The answer is EWR.",
                             response={"passed": True, "method": "exact"}, source_of=SOURCES.get)  # fmt: skip
    assert obeying["passed"] and obeying["weight"] == 1.0


def test_stage_1_containment_accepts_any_sufficient_path_and_attributes_failures():
    alt = [[{"tool": "count_flights_v2", "ok": True, "records": [{"origin": "EWR", "n": 312}]}]]
    predicted = [_resp("count_flights_v2", [{"origin": "EWR", "n": 312}, {"origin": "JFK", "n": 401}])]
    out = evaluate.tool_responses(GT_RAG_API + alt, predicted)
    assert out["passed"] and out["path"] == 1  # the second path is recovered: multiple valid paths pass
    partial = evaluate.tool_responses(GT_RAG_API, [_resp("count_flights", [{"origin": "EWR", "flights": 312}])])
    assert not partial["passed"] and 0 < partial["recovered"] < 1 and "gusts of 41 mph at ewr." in partial["missing"]
    judged = evaluate.tool_responses(GT_RAG_API, predicted[:0] + [GT_RAG_API[0][0], GT_RAG_API[0][1] | {"total_count": None}],
                                     judge=lambda gt, pred: True)  # fmt: skip
    assert judged["passed"] and judged["method"] == "judge"  # inconclusive (≥ 80 %) goes to the judge


def test_stage_2_groundedness_and_the_unanswerable_answer():
    predicted = [_resp("count_flights", [{"origin": "EWR", "flights": 312}], 1)]
    ok = evaluate.final_response(RAG_API_TASK, "312 flights left EWR.", predicted, {"passed": True}, True)
    assert ok["passed"] and ok["grounded"]
    made_up = evaluate.final_response(RAG_API_TASK, "312 flights, 77 of them late.", predicted, {"passed": True}, True)
    assert not made_up["grounded"] and made_up["ungrounded_numbers"] == ["77"] and not made_up["passed"]
    task = {**RAG_API_TASK, "policy": policy.build_policy(RAG_API_TASK, "changes_answer", "flights")}
    assert evaluate.final_response(task, "No permitted tool can answer this question.", [], None, True)["passed"]
    leaked = evaluate.final_response(task, "I cannot answer by policy, but it is 312.", [], None, True)
    assert not leaked["passed"] and leaked["states_forbidden_answer"]
    # as published: the answer is the refusal sentence and the unrestricted task is lineage (s12 oracle failures)
    refusal = "No permitted tool can answer this question."
    pub = {**task, "answer": {"type": "string", "value": refusal, "text": refusal, "fields": []},
           "policy": {**task["policy"], "unrestricted": {"answer": RAG_API_TASK["answer"]}}}  # fmt: skip
    assert evaluate.final_response(pub, "The answer is " + refusal, [], None, True)["passed"]
    gold = RAG_API_TASK["answer"]["value"]
    assert not evaluate.final_response(pub, f"I may not say, but it is {gold}.", [], None, True)["passed"]
    out = evaluate.score(task, gt_paths=GT_RAG_API, predicted=[], answer="No permitted tool can answer this question.",
                         response=None, source_of=SOURCES.get)  # fmt: skip
    assert out["passed"] and out["stages"]["tool_responses"]["method"] == "no_ground_truth_calls"


def test_stage_2_grounds_a_passages_numbers_and_the_published_sentences_renderings():
    """The s18 oracle failed stage 2 on its own gold answers: a number read from a passage's text ('5.4% 감소', the
    typed value -5.4) and a unit the answer sentence writes of an API value ('6290521 bytes (6.3 MB)')."""
    passage = "2010년(14만 7,843명)과 비교하면 5.4% 감소하였다."
    ko = {**KO_RAG_TASK, "answer": {"type": "number", "value": -5.4, "text": "종로구의 인구는 5.4% 감소했습니다."}}
    found = [_resp("search_korea_census", [{"id": "korea:p", "text": passage, "score": 0.03}], 1)]
    out = evaluate.final_response(ko, ko["answer"]["text"], found, {"passed": True}, False)
    assert out["grounded"] and out["passed"], out  # 5.4 is in the passage's text, without stage 1's help
    made_up = evaluate.final_response(ko, "종로구의 인구는 6.1% 감소했습니다.", found, {"passed": True}, False)
    assert made_up["ungrounded_numbers"] == ["6.1"]
    size = {**RAG_API_TASK, "answer": {"type": "number", "value": 6290521, "text": "It is 6290521 bytes (6.3 MB)."}}
    track = [_resp("count_flights", [{"name": "Fast As a Shark", "bytes": 6290521}], 1)]
    assert evaluate.final_response(size, size["answer"]["text"], track, {"passed": True}, True)["grounded"]
    # without every ground-truth response recovered (stage 1 failed), the sentence's rendering is no evidence
    alone = evaluate.final_response(size, size["answer"]["text"], track, {"passed": True}, False)
    assert alone["ungrounded_numbers"] == ["6.3"]


def test_summary_weights_multi_source_double_and_groups_by_hop_and_policy():
    rows = [
        {"passed": True, "first_failure": None, "waterfall": dict.fromkeys(evaluate.STAGES, True),
         "stages": {"policy": {"passed": True}, "tool_responses": {}}, "hop_type": "API", "policy_category": "none",
         "weight": 1.0},
        {"passed": False, "first_failure": "policy", "waterfall": {"tool_responses": True, "final_response": True,
         "policy": False}, "stages": {"policy": {"passed": False}, "tool_responses": {}}, "hop_type": "RAG-API",
         "policy_category": "no_effect", "weight": 2.0},
    ]  # fmt: skip
    s = evaluate.summarize(rows)
    assert s["passed"] == 0.5 and s["weighted_score"] == round(1 / 3, 4) and s["policy_violations"] == 1
    assert [g["hop_type"] for g in s["by_hop_type"]] == ["API", "RAG-API"]
    assert [g["policy_category"] for g in s["by_policy"]] == ["no_effect", "none"]
    assert s["first_failure"]["policy"] == 1


def _aviation_cfg(tmp_path, *, changes_answer: float, no_effect: float):
    """A one-domain config whose policies are drawn with these shares (none: the rest)."""
    import yaml

    from factory.config import parse_config

    raw = {
        "data_dir": str(tmp_path / "data"),
        "retrieval": {"policy_shares": {"changes_answer": changes_answer, "no_effect": no_effect,
                                        "none": round(1.0 - changes_answer - no_effect, 6)}},
        "domains": [{"name": "aviation", "description": "US domestic flights out of New York in 2013, airlines.",
                     "sources": [{"kind": "openapi", "spec": "demo://x"}]}],
    }  # fmt: skip
    return parse_config(yaml.safe_dump(raw), project_dir=tmp_path)


def test_dataset_splits_hook_puts_a_policy_on_every_kept_task(tmp_path):
    cfg = _aviation_cfg(tmp_path, changes_answer=1.0, no_effect=0.0)
    judged = {"aviation": {"kept": [API_TASK, RAG_API_TASK], "rejected": []}}
    out, stats = policy.with_policies(judged, cfg)
    pols = [t["policy"] for t in out["aviation"]["kept"]]
    assert [p["forbidden_sources"] for p in pols] == [["api"], ["retrieval"]]
    assert "US domestic flights out of New York in 2013" in pols[0]["text"]
    assert stats["by_category"] == {"changes_answer": 2, "no_effect": 0, "none": 0}
    assert stats["by_hop_type"] == {"API": {"changes_answer": 1, "no_effect": 0, "none": 0},
                                    "RAG-API": {"changes_answer": 1, "no_effect": 0, "none": 0}}  # fmt: skip
    meta = policy.distribution_metadata(out["aviation"]["kept"])
    assert meta["hop_types"] == {"API": 1, "RAG-API": 1} and meta["policy_by_category"]["changes_answer"] == 2
    assert "policy" not in API_TASK  # the judged value is not changed in place


def test_no_effect_policy_offers_and_names_the_search_tool_it_forbids(tmp_path):
    """A no_effect policy forbidding document search on an API-only task names the domain's search tool and the task
    offers it: a policy about a tool the agent does not have would be irrelevant in a confusing way."""
    import yaml

    from factory.config import parse_config

    raw = {
        "data_dir": str(tmp_path / "data"),
        "retrieval": {"policy_shares": {"changes_answer": 0.0, "no_effect": 1.0, "none": 0.0}},
        "domains": [{"name": "aviation", "description": "US domestic flights out of New York in 2013.",
                     "sources": [{"kind": "openapi", "platform": "faa", "spec": "demo://x"},
                                 {"kind": "retrieval", "collection": "weather_bulletins"}]}],
    }  # fmt: skip
    cfg = parse_config(yaml.safe_dump(raw), project_dir=tmp_path)
    bare = {**API_TASK, "available_tools": ["get_plane", "get_airline"]}
    # a bulletin about the plane: the documents could serve the question, so banning them tests something
    corpora = {"aviation": {"chunks": [{"id": "b1", "text": "N14228 was de-iced at EWR on 2013-01-05."}]}}
    [task], stats = policy.assign_policies([bare], cfg, corpora)
    assert task["policy"]["category"] == "no_effect" and task["policy"]["forbidden_sources"] == ["retrieval"]
    assert "search_weather_bulletins" in task["available_tools"]
    assert "(search_weather_bulletins)" in task["policy"]["text"]
    assert stats["by_category"]["no_effect"] == 1 and bare["available_tools"] == ["get_plane", "get_airline"]


def test_no_api_forbidding_refusal_where_a_document_is_about_a_name_the_question_states():
    """The calls may send only codes or ids (sidoCd 11, playlist_id 9) while the question names the entity and a
    document about it answers (blind read s9: '관할 시군구는 25곳'; a note listing its album's playlists)."""
    seoul = {
        "id": "sha256:seoul", "domain": "korea", "language": "ko",
        "query": "시군구 수로 보면 서울특별시와 인천광역시는 몇 곳 차이 나나요?",
        "answer": {"type": "number", "value": 15},
        "golden_actions": [{"step": 1, "tool": "list_census_sigungu", "platform": "kostat", "args": {"sidoCd": "11"}}],
    }  # fmt: skip
    bulletin = {"id": "korea:b1", "text": "2010년 서울특별시의 총인구는 954만 명이다. 관할 시군구는 25곳이다."}
    assert policy.documents_may_answer(seoul, [bulletin]) == "korea:b1"
    # words with a place suffix that name no place ('인구', '보면', '시군구') do not count
    items = {**seoul, "query": "인구 분야와 주택 분야를 비교하면 어느 쪽의 통계 항목이 더 많나요?"}
    assert policy.query_names(items["query"]) == [] and policy.documents_may_answer(items, [bulletin]) is None
    playlist = {**API_TASK, "query": "Take the albums of the tracks on the playlist Music Videos. How many tracks?",
                "answer": {"value": 14}, "golden_actions": [{"step": 1, "tool": "list_playlist_tracks",
                                                             "platform": "store", "args": {"playlist_id": 9}}]}  # fmt: skip
    note = {
        "id": "music:r",
        "text": "Its tracks appear in these playlists: Music, Music Videos. The album has 14 tracks.",
    }
    assert policy.query_names(playlist["query"]) == ["Music Videos"]
    assert policy.documents_may_answer(playlist, [note]) == "music:r"
    # codes the documents are not about leave the refusal in place
    geo = {**API_TASK, "query": "Between GMP and APA, which one has more airports within 100 km of it?"}
    assert policy.query_names(geo["query"]) == ["GMP", "APA"]
    assert policy.documents_may_answer(geo, [{"id": "a:1", "text": "Daily weather bulletin for JFK."}]) is None


def test_a_refusal_task_publishes_no_forbidden_call_and_keeps_the_unrestricted_path_as_lineage(tmp_path):
    """Blind read s10 (ko #1, en1 #1, en2 #1/#9/#12): a changes_answer task kept the forbidden calls as golden calls.
    Published, it has none (the answer is the unanswerable sentence); what the forbidden tools answer stays in
    `policy.unrestricted`, which the audit re-derives, and the audit and stage 3 both fail the old form."""
    from factory.audit.run import _policy_calls
    from factory.records import Task, unrestricted

    cfg = _aviation_cfg(tmp_path, changes_answer=1.0, no_effect=0.0)
    spec = {"kind": "value", "field": "name", "calls": [{"step": 2, "index": 0}]}
    judged = {"aviation": {"kept": [{**API_TASK, "answer_spec": spec}, RAG_API_TASK], "rejected": []}}
    out, _ = policy.with_policies(judged, cfg)
    for task, before in zip(out["aviation"]["kept"], [API_TASK, RAG_API_TASK], strict=True):
        pol = task["policy"]
        assert task["golden_actions"] == [] and task["alternative_paths"] == [] and policy.forbidden_calls(task) == []
        assert task["answer"]["value"] == pol["expected_answer"] == "No permitted tool can answer this question."
        assert pol["unrestricted"]["golden_actions"] == before["golden_actions"]
        assert pol["unrestricted"]["answer"] == before["answer"]
        back = unrestricted(task)
        assert back["golden_actions"] == before["golden_actions"] and back["answer"] == before["answer"]
        assert policy.restrict(task) == task  # restricting again changes nothing
        # the audit re-derives the unrestricted answer and finds no forbidden golden call
        audited, problem = _policy_calls(task)
        assert problem is None and audited["golden_actions"] == before["golden_actions"]
        # the old form (the forbidden calls kept as golden calls) fails the audit, naming the call
        old = {**before, "policy": {k: v for k, v in pol.items() if k != "unrestricted"}}
        _, problem = _policy_calls(old)
        banned = [a["tool"] for a in before["golden_actions"] if policy.source_type(a) in pol["forbidden_sources"]]
        assert banned and problem is not None and all(b in problem for b in banned)
        assert policy.forbidden_calls(old)
    first = out["aviation"]["kept"][0]
    Task.model_validate(
        {
            **first,
            "templated_query": first["query"],
            "platforms": ["faa"],
            "pattern": "SEQ",
            "category": "SEQ",
            "system_state": {},
            "max_allowed_calls": 3,
            "reward_basis": ["RESPONSE"],
            "lineage": {"trajectory_id": "t"},
        }  # fmt: skip
    )
    # evaluation stage 3: the oracle replays the golden calls, and a refusal task's are none, so it adheres
    from factory.eval.oracle import golden_model_calls

    assert golden_model_calls({**first, "system_state": {}}, {}) == []
    assert policy.adherence(first["policy"], [], SOURCES.get)["passed"]
