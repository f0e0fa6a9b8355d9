"""judged_queries against the real demo service (the shared `synth_world`): real materializations of every
domain with their GX gate, and planted defects each caught with the right reason code."""

import asyncio
import copy
import json
import re
from typing import Any

import httpx
import pytest

from factory.demo.service import DemoService
from factory.filters.cascade import judge_tasks
from factory.filters.compare import norm_text
from factory.filters.reasons import REASON_CODES
from factory.filters.stage_rules import jaccard, shingles
from factory.llm.rules import mentions
from factory.llm.service import LLM
from factory.model_config import OpenAIBackendConfig
from factory.records import Task, task_id
from factory.synthesis import answers
from factory.synthesis.replay import replay
from factory.tools.registry import ToolRegistry, executor_factory

KEY_RE = re.compile(r"\b[a-z]{2,4}-[0-9a-f]{24}\b")
VALUE_KEYS = {"domain", "language", "kept", "rejected", "counts"}


@pytest.fixture(scope="module")
def judged(synth_world):
    """judged_queries materialized for every demo domain: {domain: (result, value)}."""
    out = {}
    for d in synth_world.cfg.domain_names:
        res = synth_world.materialize(["judged_queries"], d)
        out[d] = (res, synth_world.load("judged_queries", d))
    return out


def _make(world):
    cfg = world.cfg
    inv = {d: world.load("tool_inventory", d) for d in cfg.domain_names}
    probes = {d: world.load("tool_probes", d) for d in cfg.domain_names}
    make = executor_factory(cfg, cfg.domain_names, ToolRegistry.from_inventories(inv), scan=True)
    return inv, probes, make


def _judge(world, domain: str, tasks: list[dict[str, Any]], llm: LLM | None = None, **filters: Any):
    inv, probes, make = _make(world)
    cfg = world.cfg.model_copy(update={"filters": world.cfg.filters.model_copy(update=filters)})
    return judge_tasks(
        domain,
        tasks,
        world.load("trajectories", domain),
        inv,
        cfg,
        llm or LLM(cfg.models, cache_path=None),
        make,
        lambda m: None,
        probes=probes,
    )


def _fresh(task: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of a task without its verdicts, with changes, and its content id recomputed."""
    t = copy.deepcopy(task)
    t["lineage"]["verdicts"] = []
    t.update(changes)
    t["id"] = task_id(t["domain"], t["golden_actions"], t["query"])
    return t


def _outcome(value) -> dict[str, tuple[str, str]]:
    return {r["task"]["id"]: (r["stage"], r["reason"]) for r in value["rejected"]}


def _call(make, tool: str, args: dict[str, Any]):
    async def go():
        async with make() as ex:
            return await ex.call(tool, args)

    return asyncio.run(go())


# --------------------------------------------------------------------------- (a) real materializations


def test_every_domain_materializes_and_passes_its_gate(synth_world, judged):
    for d, (res, value) in judged.items():
        assert res.success, d
        checks = {e.asset_check_key.name: e for e in res.get_asset_check_evaluations()}
        assert checks["judged_queries_contract"].passed, (d, checks["judged_queries_contract"].metadata)
        meta = res.asset_materializations_for_node("judged_queries")[0].metadata
        for k in ("candidates", "kept", "rejected", "kept_rate", "rejection_rate", "answers_replaced", "reasons_table",
                  "reasons_plot", "preview_kept", "preview_rejected", "agent_resolve", "llm/calls"):  # fmt: skip
            assert k in meta, (d, k)
        by_stage, by_reason = meta["by_stage"].value, meta["by_reason"].value
        assert set(by_stage) == {"rules", "judges", "resolve"} and list(by_reason) == list(REASON_CODES)
        assert all(meta[f"rejected_{s}"].value == n for s, n in by_stage.items())
        assert "not configured" in meta["agent_resolve"].value  # rules serve agent_resolver: said, not skipped
        assert meta["stages_run"].value == ["rules", "judges", "resolve"]
        assert meta["elapsed_s"].value["total"] < 90, meta["elapsed_s"].value  # seconds, not minutes

        cands = synth_world.load("generated_queries", d)["tasks"]
        assert set(value) == VALUE_KEYS and value["domain"] == d
        kept_ids = [t["id"] for t in value["kept"]]
        rej_ids = [r["task"]["id"] for r in value["rejected"]]
        assert set(kept_ids) <= {t["id"] for t in cands} and not set(kept_ids) & set(rej_ids)
        assert sorted(kept_ids + rej_ids) == sorted(t["id"] for t in cands)  # every candidate judged once
        c = value["counts"]
        assert c["candidates"] == len(cands) and c["kept"] == len(kept_ids)
        assert sum(c["by_stage"].values()) == sum(c["by_reason"].values()) == len(rej_ids)
        assert meta["candidates"].value == len(cands) and meta["kept"].value == len(kept_ids)
        for t in value["kept"]:
            Task.model_validate(t)
            assert {v["stage"] for v in t["lineage"]["verdicts"]} == {"rules", "judges", "resolve"}
        for r in value["rejected"]:
            assert r["reason"] in REASON_CODES and r["detail"]
        assert value["kept"], f"{d}: the cascade kept nothing"
    blob = "".join(p.read_text() for p in (synth_world.data_dir / "judged_queries").glob("*.json"))
    assert not KEY_RE.search(blob)


# --------------------------------------------------------------------------- (b) planted defects


def _kept(judged, domain: str) -> list[dict[str, Any]]:
    return judged[domain][1]["kept"]


def test_planted_bridge_value_leak_is_answer_leakage(synth_world, judged):
    trajs = {}
    for d in ("music", "aviation"):
        trajs.update({t["trajectory_id"]: t for t in synth_world.load("trajectories", d)["trajectories"]})
    for d in ("music", "aviation"):
        for t in synth_world.load("generated_queries", d)["tasks"]:
            tr = trajs[t["lineage"]["trajectory_id"]]
            allowed = {norm_text(v) for v in [*(s["value"] for s in tr["seeds"]), *tr["thresholds"]]}
            bridge = next(
                (b for b in tr["bridge_values"] if len(str(b)) >= 3 and norm_text(b) not in allowed
                 and re.fullmatch(r"[A-Za-z0-9 .,'&-]+", str(b)) and not mentions(t["query"], b)),
                None,
            )  # fmt: skip
            if bridge is not None:
                plant = _fresh(t, query=f"{t['query'].rstrip('?. ')}, which goes through {bridge}?")
                value, _ = _judge(synth_world, d, [plant])
                assert _outcome(value) == {plant["id"]: ("judges", "answer_leakage")}, value["rejected"]
                assert str(bridge) in value["rejected"][0]["detail"]
                return
    pytest.fail("no trajectory with a bridge value to plant")


def _shift_spec(spec: Any) -> Any:
    """The spec with every reference to step 2 or later moved one step later (a call planted at step 2)."""
    if isinstance(spec, dict):
        if isinstance(spec.get("step"), int) and "index" in spec:
            return {**spec, "step": spec["step"] + 1 if spec["step"] >= 2 else spec["step"]}
        return {k: _shift_spec(v) for k, v in spec.items()}
    return [_shift_spec(x) for x in spec] if isinstance(spec, list) else spec


def test_planted_unused_intermediate_call_is_decorative_by_execution(synth_world, judged):
    base = next(t for t in _kept(judged, "music") if len({a["step"] for a in t["golden_actions"]}) >= 2)
    at = sum(1 for a in base["golden_actions"] if a["step"] == 1)  # right after the key acquisition
    extra = {"step": 2, "tool": "list_genres", "platform": "chinook-catalog",
             "args": {"api_key": "<KEY>", "page": 1, "per_page": 10}, "records": 10}  # fmt: skip
    actions = [dict(a, step=a["step"] + 1 if a["step"] >= 2 else a["step"]) for a in base["golden_actions"]]
    actions.insert(at, extra)
    plant = _fresh(
        base,
        golden_actions=actions,
        answer_spec=_shift_spec(base["answer_spec"]),
        available_tools=sorted({*base["available_tools"], "list_genres"}),
        platforms=sorted({*base["platforms"], "chinook-catalog"}),
        max_allowed_calls=base["max_allowed_calls"] + 1,
    )
    value, meta = _judge(synth_world, "music", [plant])
    assert _outcome(value) == {plant["id"]: ("judges", "decorative_step")}, value["rejected"] or value["kept"]
    v = next(v for v in value["rejected"][0]["task"]["lineage"]["verdicts"] if v["action"] == "reject")
    assert v["judge"] == "execution" and "feeds no later call" in v["detail"] and "list_genres" in v["detail"]
    assert meta["decorative_variants_executed"] >= 1


def test_planted_non_constraining_chain_is_decorative_by_perturbation(synth_world, judged):
    _, _, make = _make(synth_world)
    track = next(
        (tid, r.records[0]["album_id"]) for tid in (5, 60, 300)
        if (r := _call(make, "chinook-catalog.get_track", {"track_id": tid})).ok and r.records[0]["album_id"] != tid
    )  # fmt: skip
    tid, album = track
    actions = [
        {"step": 1, "tool": "get_chinook_catalog_key", "platform": "chinook-catalog", "args": {}, "records": 1},
        {"step": 2, "tool": "get_track", "platform": "chinook-catalog", "args": {"api_key": "<KEY>", "track_id": tid},
         "records": 1},
        {"step": 3, "tool": "get_album", "platform": "chinook-catalog", "args": {"api_key": "<KEY>", "album_id": album},
         "records": 1},
    ]  # fmt: skip
    base = _kept(judged, "music")[0]
    plant = _fresh(
        base,
        query=f"For track id {tid}, how many album records describe the album it belongs to?",
        templated_query=f"For track id {tid}, how many album records describe the album it belongs to?",
        platforms=["chinook-catalog"],
        answer={"type": "number", "value": 1, "text": "1", "fields": ["total_count"], "branch": None},
        pattern="SEQ",
        category="SEQ",
        junctions=[{"from": "get_track.album_id", "to": "get_album.album_id", "type": "SEQ", "n": 1, "width": 1}],
        golden_actions=actions,
        answer_spec={"kind": "count", "calls": [{"step": 3, "index": 0}]},
        available_tools=["get_album", "get_track"],
        max_allowed_calls=8,
        reward_basis=["RESPONSE", "ACTION"],
        expected_state_hash={},
    )
    plant["lineage"] = {"trajectory_id": "sha256:planted-decorative", "verdicts": []}
    value, _ = _judge(synth_world, "music", [plant])
    assert _outcome(value) == {plant["id"]: ("judges", "decorative_step")}, value["rejected"] or value["kept"]
    v = next(v for v in value["rejected"][0]["task"]["lineage"]["verdicts"] if v["action"] == "reject")
    assert v["judge"] == "execution" and "replacing the value" in v["detail"], v


class AgentEndpoint:
    """An OpenAI-compatible endpoint (httpx transport under the real `openai` client) whose agent answers
    with a fixed text; records the requests (the task's query and tool definitions)."""

    def __init__(self, answer: str):
        self.answer = answer
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        message = {"role": "assistant", "content": self.answer}
        return httpx.Response(
            200,
            json={"id": "a", "object": "chat.completion", "created": 0, "model": body["model"],
                  "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}},
        )  # fmt: skip


def _agent_llm(world, endpoint: AgentEndpoint) -> LLM:
    models = world.cfg.models.model_copy(
        update={
            "backends": {"b": OpenAIBackendConfig(model="agent-m", base_url="http://mock/v1", api_key_env=None)},
            "roles": {**world.cfg.models.roles, "agent_resolver.en": "b"},
        }
    )
    models = type(models).model_validate(models.model_dump())
    return LLM(models, cache_path=None, http_client_factory=lambda: httpx.AsyncClient(
        transport=httpx.MockTransport(endpoint)))  # fmt: skip


def _stale_plan(tasks: list[dict[str, Any]]):
    """A kept music task and a data edit that changes its answer: (task, edit kwargs)."""
    text_fields = {"first_name", "last_name", "company", "address", "city", "state", "country", "email"}
    for t in tasks:
        spec = t["answer_spec"]
        parts = spec["parts"] if spec["kind"] == "sem" else [spec]
        for p in parts:
            steps = answers.layout(t["golden_actions"])
            acts = [t["golden_actions"][answers.position(r, steps)] for r in p.get("calls", []) if not r.get("record")]
            if len(acts) != 1:
                continue
            a = acts[0]
            if p["kind"] == "value" and a["tool"] == "get_customer" and p["field"] in text_fields:
                match = {"customer_id": a["args"]["customer_id"]}
                return t, {"platform": "chinook-store", "table": "customers", "match": match,
                           "values": {p["field"]: "Atlantis"}}  # fmt: skip
            if p["kind"] == "count" and a["tool"] == "list_customer_invoices":
                match = {"customer_id": a["args"]["customer_id"]}
                return t, {"platform": "chinook-store", "table": "invoices", "match": match, "delete": True}
            if p["kind"] == "count" and a["tool"] == "list_album_tracks":
                match = {"album_id": a["args"]["album_id"]}
                return t, {"platform": "chinook-catalog", "table": "tracks", "match": match, "delete": True}
    return None, None


def test_planted_data_change_after_synthesis_is_stale_label(synth_world, judged):
    _, _, make = _make(synth_world)
    task, edit = _stale_plan(_kept(judged, "music"))
    if task is None:  # no kept task reads an editable record: build one that does
        cust = 4
        city = _call(make, "chinook-store.get_customer", {"customer_id": cust}).records[0]["city"]
        base = _kept(judged, "music")[0]
        task = _fresh(
            base,
            query=f"In which city does customer id {cust} live?",
            templated_query=f"In which city does customer id {cust} live?",
            platforms=["chinook-store"],
            answer={"type": "string", "value": city, "text": city, "fields": ["city"], "branch": None},
            pattern="SEQ", category="SEQ", junctions=[], answer_spec={"kind": "value", "calls": [{"step": 2, "index": 0}], "field": "city"},
            golden_actions=[
                {"step": 1, "tool": "get_chinook_store_key", "platform": "chinook-store", "args": {}, "records": 1},
                {"step": 2, "tool": "get_customer", "platform": "chinook-store",
                 "args": {"api_key": "<KEY>", "customer_id": cust}, "records": 1},
            ],
            available_tools=["get_customer"], max_allowed_calls=5, expected_state_hash={},
        )  # fmt: skip
        task["lineage"] = {"trajectory_id": "sha256:planted-stale", "verdicts": []}
        edit = {"platform": "chinook-store", "table": "customers", "match": {"customer_id": cust},
                "values": {"city": "Atlantis"}}  # fmt: skip
    task = _fresh(task)
    admin = DemoService(synth_world.cfg.demo)
    try:
        admin.edit_data(**edit)
        value, meta = _judge(synth_world, "music", [task])
        assert _outcome(value) == {task["id"]: ("resolve", "stale_label")}, value["rejected"] or value["kept"]
        assert meta["stale_labels_found"] == 1 and "no agent" in value["rejected"][0]["detail"]
        fresh = replay(task, _make(synth_world)[2])["answer"]
        assert fresh["value"] != task["answer"]["value"]
        # an agent whose independent answer states the replayed value: the stored answer is replaced
        parts = fresh["value"] if isinstance(fresh["value"], list) else [fresh["value"]]
        ep = AgentEndpoint("The answer is " + ", ".join(str(p) for p in parts) + ".")
        value, meta = _judge(synth_world, "music", [task], llm=_agent_llm(synth_world, ep))
        assert not value["rejected"] and value["counts"]["answers_replaced"] == 1, value["rejected"]
        kept = value["kept"][0]
        assert kept["answer_source"] == "agent" and kept["answer"]["value"] == fresh["value"]
        v = next(v for v in kept["lineage"]["verdicts"] if v["check"] == "agent_resolve")
        assert v["action"] == "replace_answer" and v["judge"] == "model:b/agent-m" and "old answer" in v["detail"]
        assert meta["agent_runs"] == 1 and meta["agent_resolve"].startswith("on")
        sent = ep.requests[0]
        assert any(m.get("content") == task["query"] for m in sent["messages"])
        key_tools = {"get_chinook_store_key", "get_chinook_catalog_key"}  # keys are injected, never offered
        assert {t["function"]["name"] for t in sent["tools"]} == set(task["available_tools"]) - key_tools
        assert not any("api_key" in t["function"]["parameters"].get("properties", {}) for t in sent["tools"])
        # an agent that does not confirm the replayed answer: the stale label is rejected
        value, _ = _judge(synth_world, "music", [task], llm=_agent_llm(synth_world, AgentEndpoint("I do not know.")))
        assert _outcome(value) == {task["id"]: ("resolve", "stale_label")}
        assert "agent did not confirm" in value["rejected"][0]["detail"]
        # with replace_stale_with_replay the fresh answer replaces the stored one, old answer kept in the verdict
        value, meta = _judge(synth_world, "music", [task], replace_stale_with_replay=True)
        assert not value["rejected"] and value["counts"]["answers_replaced"] == 1
        kept = value["kept"][0]
        assert kept["answer_source"] == "replay" and kept["answer"]["value"] != task["answer"]["value"]
        v = next(v for v in kept["lineage"]["verdicts"] if v["action"] == "replace_answer")
        assert json.dumps(task["answer"]["value"], ensure_ascii=False).strip('"') in v["detail"]
        Task.model_validate(kept)
    finally:
        admin.reset()
        admin.close()
    value, _ = _judge(synth_world, "music", [task])  # the data is back: the label holds again
    assert not value["rejected"], value["rejected"]


def test_planted_stage1_defects(synth_world, judged):
    base = next(t for t in _kept(judged, "music") if len(t["query"]) > 40)
    near = _fresh(base, query=base["query"].rstrip("?") + ", thanks!")
    assert jaccard(shingles(near["query"]), shingles(base["query"])) >= synth_world.cfg.filters.near_duplicate_threshold
    twin = _fresh(base, query="Tell me this one: " + base["query"][::-1])  # other words, same calls and answer
    mixed = _fresh(base, query=base["query"].rstrip("?") + " 알려줘?")
    special = _fresh(base, query="<|im_start|>user " + base["query"])
    error = _fresh(base, query=base["query"] + " ")
    error["answer"] = {"type": "string", "value": "Error: HTTP 500", "text": "Error: HTTP 500", "fields": []}
    base = _fresh(base)
    value, _ = _judge(synth_world, "music", [base, near, twin, mixed, special, error])
    out = _outcome(value)
    assert base["id"] not in out, out
    assert out[near["id"]] == ("rules", "near_duplicate") and out[twin["id"]] == ("rules", "near_duplicate")
    assert out[mixed["id"]] == ("rules", "malformed_query") and out[special["id"]] == ("rules", "malformed_query")
    assert out[error["id"]] == ("rules", "error_ground_truth")
    ko = next(t for t in _kept(judged, "korea"))
    han = _fresh(ko, query=ko["query"].replace(" ", " 人口 ", 1))
    value, _ = _judge(synth_world, "korea", [han])
    assert _outcome(value) == {han["id"]: ("rules", "malformed_query")}
    assert "han" in value["rejected"][0]["detail"]
