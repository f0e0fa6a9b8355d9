"""Pure tests of the cascade: the closed reason set, the stage-1 rules, answer comparison, the
two-judge agreement logic (with a scripted OpenAI-compatible endpoint), and the value contract.
Nothing here executes a tool."""

import json
import re
from pathlib import Path

import httpx
import pytest

from factory import quality
from factory.config import load_config
from factory.filters import reasons
from factory.filters.cascade import FilterInputError, judge_tasks, judged_frame
from factory.filters.compare import same_answer, text_matches
from factory.filters.stage_judges import Opinion, combine
from factory.filters.stage_rules import error_signal, query_problem
from factory.llm.service import LLM
from factory.model_config import ModelsConfig, OpenAIBackendConfig
from factory.records import Task
from tests.filters import samples

ROOT = Path(__file__).resolve().parents[2]


def _cfg(**filters):
    base = load_config()
    f = base.filters.model_copy(
        update={"replay": False, "perturb_intermediate": False, "agent_resolve": False, **filters}
    )
    return base.model_copy(update={"filters": f})


def _rules_llm() -> LLM:
    return LLM(load_config().models, cache_path=None)


def _judge(tasks, cfg=None, llm=None, inventories=None, trajectory=None):
    traj = {"trajectories": [trajectory or samples.trajectory()]}
    return judge_tasks(
        samples.DOMAIN,
        tasks,
        traj,
        inventories or samples.inventories(),
        cfg or _cfg(),
        llm or _rules_llm(),
        samples.NoExecutor(),
        progress=lambda m: None,
    )


def _rejected(value) -> dict[str, tuple[str, str]]:
    return {r["task"]["id"]: (r["stage"], r["reason"]) for r in value["rejected"]}


# --------------------------------------------------------------------------- the closed set


def test_reason_set_is_closed_documented_and_matches_the_suite():
    suite = json.loads((ROOT / "expectations" / "judged_queries.json").read_text())
    sets = {
        e["kwargs"]["column"]: e["kwargs"]["value_set"] for e in suite["expectations"] if "value_set" in e["kwargs"]
    }
    assert sets["reason"] == list(reasons.REASON_CODES)
    assert sets["stage"] == list(reasons.STAGES)
    for code, (stage, text) in reasons.REASONS.items():
        assert stage in reasons.STAGES and len(text) > 40, code
    assert reasons.reasons_of("rules") == [
        "non_reproducible", "error_ground_truth", "near_duplicate", "malformed_schema", "malformed_query",
        "benchmark_collision", "rag_answerable_by_api", "undocumented_field",
    ]  # fmt: skip
    assert reasons.reasons_of("judges") == ["answer_leakage", "non_gradable", "decorative_step"]
    assert reasons.reasons_of("resolve") == ["stale_label", "replay_failed"]
    with pytest.raises(KeyError, match="closed set"):
        reasons.stage_of("looks_odd")


# --------------------------------------------------------------------------- stage 1 rules


def test_sample_task_is_valid_and_kept_by_every_static_stage():
    t = samples.task()
    Task.model_validate(t)
    value, meta = _judge([t])
    assert [k["id"] for k in value["kept"]] == [t["id"]] and value["rejected"] == []
    verdicts = value["kept"][0]["lineage"]["verdicts"]
    assert {(v["stage"], v["check"]) for v in verdicts} >= {
        ("rules", "malformed_schema"), ("rules", "non_reproducible"), ("rules", "error_ground_truth"),
        ("rules", "malformed_query"), ("rules", "near_duplicate"), ("judges", "answer_leakage"),
        ("judges", "non_gradable"), ("judges", "decorative_step"),
    }  # fmt: skip
    assert all(v["passed"] and v["action"] == "none" for v in verdicts)
    assert meta["stages_run"] == ["rules", "judges"]  # replay and agent are off in these tests
    assert meta["agent_resolve"].startswith("off")


@pytest.mark.parametrize(
    ("query", "language", "allowed", "expect"),
    [
        ("How many albums did Queen release?", "en", ["Queen"], None),
        ("How many 앨범 did Queen release?", "en", ["Queen"], "mixed scripts: hangul"),
        ("How many albums did 퀸 release?", "en", ["퀸"], None),  # a cited Korean value is fine
        ("Which track of Axé Bahia lasts 5µs ª?", "en", [], None),  # Latin-1 letters are Latin
        ("What is the Привет count?", "en", [], "mixed scripts: cyrillic"),
        ("전월 대비人口 증감 수치를 알려줘", "ko", [], "mixed scripts: han"),
        ("먼저 확인한 뒤,そこに 포함된 영업소별로 알려줘", "ko", [], "mixed scripts: kana"),
        ("grdp 통계 유형 economy의 건수는?", "ko", ["grdp", "economy"], None),
        ("grdp 통계의 건수를 please 알려줘", "ko", ["grdp"], "Latin words"),
        ("<|im_start|>How many albums did Queen release?", "en", ["Queen"], "special/control token"),
        ("How many albums did {artist} release?", "en", [], "leftover brace"),
        ("How many albums did {{ seed }} release?", "en", [], "placeholder"),
        ("Which album is titled {Live}?", "en", ["{Live}"], None),  # braces inside a cited value
    ],
)
def test_malformed_query_rules(query, language, allowed, expect):
    problem = query_problem(query, language, allowed)
    if expect is None:
        assert problem is None, problem
    else:
        assert problem is not None and expect in problem, problem


@pytest.mark.parametrize(
    ("value", "bad"),
    [(14, False), ("Queen", False), (0, False), (None, True), ("", True), ("Error: HTTP 500", True),
     ("HTTP 404", True), ("Internal Server Error", True), ([3, None], True), ([], True), ("n/a", True),
     ("Not Found Blues", False), ("오류", True)],
)  # fmt: skip
def test_error_ground_truth_signal(value, bad):
    assert (error_signal(value) is not None) is bad


def test_stage1_plants_each_caught_with_its_code():
    good = samples.task()
    mixed = samples.task(query="How many 앨범 did Queen release in total?")
    error = samples.task(query="How many albums did Queen put out?")
    error["answer"] = {"type": "string", "value": "Error: HTTP 500", "text": "Error: HTTP 500", "fields": []}
    near = samples.task(query="How many albums did Queen release?!")  # same signature and near-identical text
    schema = samples.task(query="How many records did Queen release?")
    schema["golden_actions"][2]["args"]["artist_id"] = "fifty-one"  # not an integer
    schema["answer"] = dict(schema["answer"], type="number", value="many")
    unknown = samples.task(query="Count the albums of Queen.")
    unknown["golden_actions"][2]["tool"] = "list_records"
    broken = {"id": "sha256:broken", "query": "?", "golden_actions": "not a list"}
    value, meta = _judge([good, mixed, error, near, schema, unknown, broken])
    rej = _rejected(value)
    assert rej[mixed["id"]] == ("rules", "malformed_query")
    assert rej[error["id"]] == ("rules", "error_ground_truth")
    assert rej[near["id"]] == ("rules", "near_duplicate")
    assert rej[schema["id"]] == ("rules", "malformed_schema")
    assert rej[unknown["id"]] == ("rules", "malformed_schema")
    assert rej["sha256:broken"] == ("rules", "malformed_schema")
    assert [t["id"] for t in value["kept"]] == [good["id"]]
    assert value["counts"]["by_stage"] == {"rules": 6, "judges": 0, "resolve": 0}
    assert value["counts"]["by_reason"]["malformed_schema"] == 3 and sum(value["counts"]["by_reason"].values()) == 6
    # a rejected task carries exactly one rejecting verdict, and went no further than stage 1
    for r in value["rejected"]:
        vs = r["task"].get("lineage", {}).get("verdicts", [])
        if r["task"]["id"] != "sha256:broken":
            assert [v["check"] for v in vs if v["action"] == "reject"] == [r["reason"]]
            assert {v["stage"] for v in vs} == {"rules"}
    schema_detail = next(r["detail"] for r in value["rejected"] if r["task"]["id"] == schema["id"])
    assert "not a number" in schema_detail
    gate = quality.validate("judged_queries", judged_frame(value, [good, mixed, error, near, schema, unknown, broken]))
    assert gate.success, gate.summary()
    assert meta["rejected_rules"] == 6 and meta["by_reason"]["near_duplicate"] == 1


def test_a_field_the_tool_does_not_document_is_undocumented_field():
    """Blind read s10 (en2 #12): a golden path read an airport's province from a tool whose documentation lists no
    subdivision.  A junction or an answer reading a field outside the tool's output schema is rejected."""
    good = samples.task()
    bridged = samples.task(query="How many albums did the band Queen make?")
    bridged["junctions"] = [{**bridged["junctions"][0], "from": "find_artist.band_id"}]
    read = samples.task(query="Which label released Queen's albums?")
    read["answer"] = {"type": "string", "value": "EMI", "text": "EMI", "fields": ["label"]}
    read["answer_spec"] = {"kind": "value", "field": "label", "calls": [{"step": 3, "index": 0}]}
    value, _ = _judge([good, bridged, read])
    rej = _rejected(value)
    assert rej[bridged["id"]] == ("rules", "undocumented_field") and rej[read["id"]] == ("rules", "undocumented_field")
    details = {r["task"]["id"]: r["detail"] for r in value["rejected"]}
    assert "find_artist.band_id" in details[bridged["id"]] and "list_albums.label" in details[read["id"]]
    assert [t["id"] for t in value["kept"]] == [good["id"]]


def test_signature_duplicate_and_numeric_strings_on_the_wire():
    a = samples.task()
    b = samples.task(query="Tell me the total count of albums by Queen, please.")  # same calls + answer spec
    c = samples.task(query="List how many albums the band Queen has.")
    c["golden_actions"][2]["args"]["artist_id"] = "51"  # a numeric string in a query parameter: same bytes
    c["golden_actions"][2]["args"]["page"] = "1"
    value, _ = _judge([a, b, c])
    rej = _rejected(value)
    assert rej[b["id"]] == ("rules", "near_duplicate")
    det = next(r["detail"] for r in value["rejected"] if r["task"]["id"] == b["id"])
    assert "same golden actions" in det
    assert c["id"] not in rej or rej[c["id"]] != ("rules", "malformed_schema")


def test_non_reproducible_realtime_tool_without_reference_time():
    t = samples.task()
    value, _ = _judge([t], inventories=samples.inventories(realtime=True))
    assert _rejected(value)[t["id"]] == ("rules", "non_reproducible")
    pinned = samples.task(query="How many albums did Queen release by 2013-01-05?")
    pinned["golden_actions"][2]["args"]["date"] = "2013-01-05"
    inv = samples.inventories(realtime=True)
    inv[samples.DOMAIN]["tools"][2]["input_schema"]["properties"]["date"] = {"type": "string"}
    value, _ = _judge([pinned], inventories=inv)
    assert not value["rejected"], value["rejected"]
    no_date = samples.task(system_state={"api_key": {}})
    value, _ = _judge([no_date])
    assert _rejected(value)[no_date["id"]] == ("rules", "non_reproducible")


def test_bad_input_is_a_clear_error():
    with pytest.raises(FilterInputError, match="list of tasks"):
        _judge({"not_tasks": []})
    with pytest.raises(FilterInputError, match="task 0"):
        _judge(["a string"])


# --------------------------------------------------------------------------- stage 2 static judges


def test_answer_leakage_rules_judge_and_skippable_step():
    leak = samples.task(query="How many albums did Queen (artist 51) release?")
    said = samples.task(query="How many albums did the artist Queen release, and which has 14 tracks?")
    value, _ = _judge([leak])
    assert _rejected(value)[leak["id"]] == ("judges", "answer_leakage")
    vs = value["rejected"][0]["task"]["lineage"]["verdicts"]
    assert any(v["check"] == "answer_leakage" and v["action"] == "reject" and "51" in v["detail"] for v in vs)
    value, _ = _judge([said])
    assert _rejected(value)[said["id"]] == ("judges", "answer_leakage")
    # a step that only passes on what the query states is skippable (decorative, found without execution)
    echo = samples.task(query="How many albums does the artist with id 51 have?")
    traj = dict(samples.trajectory(), seeds=[{"value": 51}, {"value": "Queen"}])
    value, _ = _judge([echo], trajectory=traj)
    assert _rejected(value)[echo["id"]] == ("judges", "decorative_step")
    assert "already states" in value["rejected"][0]["detail"]


# --------------------------------------------------------------------------- comparison


def test_answer_comparison():
    assert same_answer({"value": 14}, {"value": 14.0}) and same_answer({"value": "1,234"}, {"value": 1234})
    assert same_answer({"value": " Rock "}, {"value": "rock"}) and not same_answer({"value": "Rock"}, {"value": "Jazz"})
    assert same_answer({"value": [7, "QC"]}, {"value": [7, "qc"]}) and not same_answer(
        {"value": [7]}, {"value": [7, 1]}
    )
    assert not same_answer({"value": 6, "branch": "then"}, {"value": 6, "branch": "else"})
    assert not same_answer({"value": "A", "counts": [2, 6]}, {"value": "A", "counts": [2, 5]})
    assert text_matches({"value": 912}, "There were 912 flights.")
    assert not text_matches({"value": 912}, "There were 9120 flights.")
    assert text_matches({"value": [7, "QC"]}, "7 invoices; the state is QC")
    assert not text_matches({"value": "UA"}, "It is UAL")
    assert text_matches({"value": "세종특별자치시"}, "정답은 세종특별자치시입니다")


# --------------------------------------------------------------------------- two judges


def test_combine_truth_table():
    rules_yes, rules_no = Opinion("rules", True, "leak"), Opinion("rules", False, "clean")
    model_yes, model_no = Opinion("model:b/m", True, "leak"), Opinion("model:b/m", False, "clean")
    abstain = Opinion("model:b/m", None, "no reply")
    assert combine("answer_leakage", [rules_yes], 2, False)[0] is True  # rules only: rules decide
    assert combine("answer_leakage", [rules_no], 2, False)[0] is False
    assert combine("answer_leakage", [rules_yes, model_yes], 2, True)[0] is True
    remove, vs = combine("answer_leakage", [rules_yes, model_no], 2, True)
    assert remove is False and [v.action for v in vs] == ["keep", "none"]
    assert "1 of 2 judges" in vs[0].detail and vs[0].reason == "answer_leakage" and not vs[0].passed
    remove, vs = combine("answer_leakage", [rules_no, model_yes], 2, True)
    assert remove is False and [v.action for v in vs] == ["none", "keep"]
    assert combine("answer_leakage", [rules_no, model_yes], 1, True)[0] is True  # one judge suffices when asked
    remove, vs = combine("answer_leakage", [rules_yes, abstain], 2, True)
    assert remove is True and vs[1].detail.startswith("abstained")


class VerdictEndpoint:
    """An OpenAI-compatible chat endpoint (httpx transport under the real `openai` client) whose judges
    answer by a rule on the prompt text; records every request."""

    def __init__(self, leak_when: str, decorative: bool = False):
        self.leak_when = leak_when
        self.decorative = decorative
        self.requests: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        text = " ".join(str(m.get("content")) for m in body["messages"])
        if "decorative" in text.lower():
            verdict = self.decorative
        elif "Starting values" in text:  # the answer-leakage prompt
            verdict = self.leak_when in text
        else:
            verdict = False
        content = json.dumps({"verdict": verdict, "reason": f"scripted verdict {verdict}"})
        return httpx.Response(
            200,
            json={
                "id": f"c{len(self.requests)}", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )  # fmt: skip


def _model_llm(endpoint: VerdictEndpoint, tmp_path: Path) -> LLM:
    roles = {"judge_answer_leakage": "b", "judge_non_gradable": "b", "judge_decorative_chain": "b"}
    cfg = ModelsConfig(
        backends={"b": OpenAIBackendConfig(model="judge-m", base_url="http://mock/v1", api_key_env=None)},
        roles=roles,
        cache={"path": str(tmp_path / "cache.sqlite")},
    )
    return LLM(cfg, state_dir=tmp_path / "srv", http_client_factory=lambda: httpx.AsyncClient(
        transport=httpx.MockTransport(endpoint)))  # fmt: skip


def test_two_judges_must_agree_where_a_model_judges(tmp_path: Path):
    leak = samples.task(query="How many albums did Queen (artist 51) release?")
    clean = samples.task(query="How many albums did the band ABBA release overall?", artist="ABBA", artist_id=7)
    # the model sees no leak anywhere: the rules judge alone cannot remove the leaking task
    ep = VerdictEndpoint(leak_when="nothing-leaks")
    value, meta = _judge([leak, clean], llm=_model_llm(ep, tmp_path / "a"))
    assert {t["id"] for t in value["kept"]} == {leak["id"], clean["id"]}
    vs = next(t for t in value["kept"] if t["id"] == leak["id"])["lineage"]["verdicts"]
    leak_vs = [v for v in vs if v["check"] == "answer_leakage"]
    assert {(v["judge"], v["passed"], v["action"]) for v in leak_vs} == {
        ("rules", False, "keep"), ("model:b/judge-m", True, "none")
    }  # fmt: skip
    assert meta["judge_disagreements"]["answer_leakage"] == 1 and meta["model_judges"]["answer_leakage"]
    assert len(ep.requests) == 6  # 2 tasks × (leakage, non-gradable, decorative), through the real client
    # the model agrees on the leak: removed, both verdicts say reject
    ep2 = VerdictEndpoint(leak_when="(artist 51)")
    value, _ = _judge([leak, clean], llm=_model_llm(ep2, tmp_path / "b"))
    assert _rejected(value) == {leak["id"]: ("judges", "answer_leakage")}
    vs = value["rejected"][0]["task"]["lineage"]["verdicts"]
    assert sorted(v["judge"] for v in vs if v["check"] == "answer_leakage" and v["action"] == "reject") == [
        "model:b/judge-m", "rules"
    ]  # fmt: skip
    # the model alone finds a 'decorative' chain the execution/rules judge does not: kept, recorded as keep
    ep3 = VerdictEndpoint(leak_when="nothing-leaks", decorative=True)
    value, meta = _judge([clean], llm=_model_llm(ep3, tmp_path / "c"))
    assert value["kept"] and not value["rejected"]
    dv = [v for v in value["kept"][0]["lineage"]["verdicts"] if v["check"] == "decorative_step"]
    assert {(v["judge"], v["action"]) for v in dv} == {("rules", "none"), ("model:b/judge-m", "keep")}
    # ... and with judges_to_remove=1 the model's finding is enough
    value, _ = _judge([clean], cfg=_cfg(judges_to_remove=1), llm=_model_llm(ep3, tmp_path / "d"))
    assert _rejected(value) == {clean["id"]: ("judges", "decorative_step")}


def test_unreachable_model_judge_abstains_and_is_reported(tmp_path: Path):
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    cfg = ModelsConfig(
        backends={"b": OpenAIBackendConfig(model="m", base_url="http://mock/v1", api_key_env=None,
                                           max_connection_retries=0)},
        roles={"judge_answer_leakage": "b"},
        cache={"path": str(tmp_path / "c.sqlite")},
    )  # fmt: skip
    llm = LLM(cfg, state_dir=tmp_path / "s", http_client_factory=lambda: httpx.AsyncClient(
        transport=httpx.MockTransport(down)))  # fmt: skip
    leak = samples.task(query="How many albums did Queen (artist 51) release?")
    value, meta = _judge([leak], llm=llm)
    assert _rejected(value) == {leak["id"]: ("judges", "answer_leakage")}  # the rules judge decides alone
    assert meta["model_judge_errors"] == 1 and "b" in meta["model_judge_error_examples"][0]
    vs = value["rejected"][0]["task"]["lineage"]["verdicts"]
    assert any(v["judge"].startswith("model:b") and v["detail"].startswith("abstained") for v in vs)


def test_frame_flags_contract_violations():
    t = samples.task()
    value, _ = _judge([t])
    frame = judged_frame(value, [t])
    assert quality.validate("judged_queries", frame).success
    # a kept row that is no candidate, an unknown reason, a kept row missing a stage's verdict
    bad = json.loads(json.dumps(value))
    stranger = samples.task(query="Which album of Queen is the longest one?")
    stranger["lineage"]["verdicts"] = [{"stage": "rules", "check": "x", "passed": True}]
    bad["kept"].append(stranger)
    bad["rejected"].append(
        {"task": samples.task(query="Odd one?"), "stage": "rules", "reason": "looks_odd", "detail": ""}
    )
    gate = quality.validate("judged_queries", judged_frame(bad, [t]))
    failed = {f["property"] for f in gate.failures}
    assert not gate.success
    assert any("kept ⊂ candidates" in p for p in failed)
    assert any("closed set" in p for p in failed)
    assert any("verdict per stage" in p for p in failed)


def test_no_secret_in_value_and_keys_are_placeholders():
    value, _ = _judge([samples.task()])
    blob = json.dumps(value)
    assert "<KEY>" in blob and not re.search(r"[a-z]{2,4}-[0-9a-f]{24}", blob)


def test_benchmark_reverse_filter_rejects_a_task_that_collides_with_a_benchmark(tmp_path):
    """New data must not drift into a benchmark: a light copy of a benchmark row is rejected at stage 1."""
    leaked = samples.task()
    clean = samples.task(query="Which genre has the most tracks on album 67 of the catalogue?")
    bench = tmp_path / "bench.jsonl"
    rows = [
        {"id": "b1", "query": leaked["query"].upper() + "  "},  # case and spacing differ only
        {"id": "b2", "query": "What is the population of Seoul in 2020?"},
    ]
    bench.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    base = _cfg()
    cfg = base.model_copy(update={"splits": base.splits.model_copy(update={"benchmarks": [str(bench)]})})
    value, meta = _judge([leaked, clean], cfg=cfg)
    rej = _rejected(value)
    assert rej == {leaked["id"]: ("rules", "benchmark_collision")}
    detail = value["rejected"][0]["detail"]
    assert "bench.jsonl:1" in detail and "id b1" in detail
    assert meta["benchmark_filter"].startswith("on (2 rows")
    kept_checks = {v["check"]: v["passed"] for v in value["kept"][0]["lineage"]["verdicts"]}
    assert kept_checks["benchmark_collision"] is True
    _, meta_off = _judge([clean])
    assert meta_off["benchmark_filter"].startswith("off")
