"""Episodes of a scripted model (a real OpenAI-compatible HTTP server) against the live demo tools.

The tasks are the real demo tasks of the shared `synth_world` fixture (or copies of them with
their own query); every tool call runs against the demo service through a fresh executor
session per episode.
"""

import asyncio
import json
import re
from typing import Any

import pytest

from factory.eval.harness import EvalSettings, evaluate, load_tasks
from factory.llm.agent import FAILURE_KINDS
from factory.llm.service import LLM
from factory.tools.registry import ToolRegistry, executor_factory
from tests.eval.conftest import (
    DOMAINS,
    all_tasks,
    final_answer,
    inventories,
    model_calls,
    perfect_script,
    scripted_config,
    variant,
)

KEY_LIKE = re.compile(r"\b[a-z]{2,4}-[0-9a-f]{24}\b")  # the demo service's key format


def _run(world, server, tmp_path, tasks: list[dict[str, Any]], backend: str = "scripted", **evaluation: Any):
    cfg = scripted_config(world, server, tmp_path, **evaluation)
    settings = EvalSettings.resolve(cfg, backend=backend, split="all", runs=1, k=1, temperature=0.0)
    llm = LLM(cfg.models)
    try:
        return evaluate(load_tasks(tasks), inventories(world), cfg, llm, settings)
    finally:
        llm.close()


def _rows(result) -> dict[str, dict[str, Any]]:
    return {r["query"]: r for r in result.report["episode_rows"]}


def _traces(result) -> dict[str, dict[str, Any]]:
    return {t["query"]: t for t in result.traces}


# --------------------------------------------------------------------------- (a) perfect trajectories


def test_perfect_trajectories_pass_with_full_action(synth_world, scripted_server, tmp_path) -> None:
    index = ToolRegistry.from_inventories(inventories(synth_world))
    tasks = [variant(t, "perfect") for t in all_tasks(synth_world)]
    assert {t["domain"] for t in tasks} == set(DOMAINS) and len(tasks) >= 6
    for t in tasks:
        scripted_server.script(t["query"], perfect_script(t, index))
    result = _run(synth_world, scripted_server, tmp_path, tasks, concurrency=4)
    report = result.report
    assert report["episodes"] == len(tasks)
    for row in report["episode_rows"]:
        assert row["stop_reason"] == "answer", row
        assert row["response_pass"] is True, (row["gold"], row["final_answer"], row["response_method"])
        assert row["action_correctness"] == 1.0 and row["action_efficiency"] == 1.0, row
        assert row["action_score"] == 1.0 and row["n_dup"] == 0 and row["passed"], row
        assert all(v == 0 for k, v in row["failures"].items() if k != "tool_error"), row["failures"]
    o = report["overall"]
    assert o["pass@1"] == 1.0 and o["action_solved"] == 1.0 and o["format_violations"] == 0
    assert o["waterfall"] == {"tool_names": 1.0, "arg_names": 1.0, "arg_values": 1.0, "outcome": 1.0}
    # never a single aggregate alone: every case pattern and domain has its own row
    assert {g["domain"] for g in report["by_domain"]} == set(DOMAINS)
    assert {g["category"] for g in report["by_category"]} == {t["category"] for t in tasks}
    assert {g["pattern"] for g in report["by_pattern"]} == {t["pattern"] for t in tasks}
    # keys were acquired by the harness, injected by the executor and never shown
    offered = {d["function"]["name"] for r in scripted_server.requests for d in r.get("tools") or []}
    assert offered and not any(n.startswith("get_") and n.endswith("_key") for n in offered)
    for r in scripted_server.requests:
        for d in r.get("tools") or []:
            assert not {"api_key", "serviceKey", "_type"} & set(d["function"]["parameters"]["properties"])
    dumped = json.dumps(result.traces, ensure_ascii=False) + json.dumps(report, ensure_ascii=False)
    assert not KEY_LIKE.search(dumped)
    assert any(t["system_calls"] for t in result.traces)
    for t in result.traces:
        assert all(c["outcome"] in ("semantic_success", "generic_only_success") for c in t["system_calls"])


def test_text_mode_native_formats_against_live_tools(synth_world, scripted_server, tmp_path) -> None:
    """A backend without tool_calls: tools in the system prompt, calls parsed from several families' formats."""
    index = ToolRegistry.from_inventories(inventories(synth_world))
    base = next(t for t in all_tasks(synth_world) if t["domain"] == "music" and len(model_calls(t, index)) >= 2)
    steps = model_calls(base, index)
    hermes = variant(base, "text-hermes")
    scripted_server.script(hermes["query"], perfect_script(hermes, index, native=False))
    first, second = steps[0][0], steps[1][0]
    mixed = variant(base, "text-mixed-formats")
    scripted_server.script(
        mixed["query"],
        [
            "[TOOL_CALLS]" + json.dumps([{"name": c["name"], "arguments": c["arguments"]} for c in steps[0]]),
            "<|python_tag|>" + "; ".join(json.dumps({"name": c["name"], "parameters": c["arguments"]}) for c in steps[1]),
            *(["```json\n" + json.dumps([{"name": c["name"], "arguments": c["arguments"]} for c in s]) + "\n```"
               for s in steps[2:]]),
            final_answer(base),
        ],
    )  # fmt: skip
    result = _run(synth_world, scripted_server, tmp_path, [hermes, mixed], backend="scripted_text")
    rows = _rows(result)
    for q in (hermes["query"], mixed["query"]):
        assert rows[q]["passed"] and rows[q]["action_score"] == 1.0 and rows[q]["format_violations"] == 0, rows[q]
    assert rows[hermes["query"]]["formats"] == ["hermes"]
    assert {"mistral", "llama_python_tag"} <= set(rows[mixed["query"]]["formats"])
    reqs = scripted_server.requests_for(mixed["query"])
    assert all("tools" not in r for r in reqs)  # text mode sends no tool definitions
    assert first["name"] in reqs[0]["messages"][0]["content"] and second["name"] in reqs[0]["messages"][0]["content"]
    assert "<tool_response" in reqs[1]["messages"][-1]["content"] and reqs[1]["messages"][-1]["role"] == "user"


# --------------------------------------------------------------------------- (b)/(c) efficiency, Eq. 3


def _chain_task(world, index: ToolRegistry) -> dict[str, Any]:
    """A real music task with at least one model call and room in its budget for one more."""
    for t in all_tasks(world):
        n = sum(len(s) for s in model_calls(t, index))
        n_keys = len(t["golden_actions"]) - n
        if t["domain"] == "music" and n >= 1 and t["max_allowed_calls"] - n_keys >= n + 1:
            return t
    raise AssertionError("no music task with room for a duplicate call")


def test_one_duplicate_call_costs_exactly_eq3(synth_world, scripted_server, tmp_path) -> None:
    index = ToolRegistry.from_inventories(inventories(synth_world))
    base = _chain_task(synth_world, index)
    task = variant(base, "duplicate")
    script = perfect_script(task, index)
    dup = script[-2]["tool_calls"][0]  # repeat one call of the last tool step once more
    script.insert(len(script) - 1, {"tool_calls": [dup]})
    scripted_server.script(task["query"], script)
    row = _rows(_run(synth_world, scripted_server, tmp_path, [task]))[task["query"]]
    n = row["n_opt"]
    # Eq. 3: N_total = n + 1, N_dup = 1 → CR = 1 − 1/(n+1), MPC = n/(n+1), Eff = (CR + MPC)/2 = n/(n+1)
    assert row["tool_calls"] == n + 1 and row["n_dup"] == 1
    assert row["action_cr"] == pytest.approx(1 - 1 / (n + 1), abs=1e-12)
    assert row["action_mpc"] == pytest.approx(n / (n + 1), abs=1e-12)
    assert row["action_efficiency"] == pytest.approx(n / (n + 1), abs=1e-12)
    assert row["action_correctness"] == 1.0
    assert row["action_score"] == pytest.approx((1 + n / (n + 1)) / 2, abs=1e-12)
    assert row["passed"]  # a redundant call lowers ACTION, not the outcome


def test_exceeding_max_allowed_calls_zeroes_efficiency(synth_world, scripted_server, tmp_path) -> None:
    index = ToolRegistry.from_inventories(inventories(synth_world))
    base = _chain_task(synth_world, index)
    n = sum(len(s) for s in model_calls(base, index))
    n_keys = len(base["golden_actions"]) - n
    task = variant(base, "over-budget", max_allowed_calls=n_keys + n)  # budget: exactly the golden calls
    script = perfect_script(task, index)
    script.insert(len(script) - 1, {"tool_calls": [script[0]["tool_calls"][0]]})  # one call too many
    scripted_server.script(task["query"], script)
    result = _run(synth_world, scripted_server, tmp_path, [task])
    row = _rows(result)[task["query"]]
    assert row["budget"] == n and row["tool_calls"] == n + 1
    assert row["stop_reason"] == "max_calls" and row["failures"]["max_calls"] == 1
    assert row["action_efficiency"] == 0.0 and row["action_correctness"] == 1.0 and row["action_score"] == 0.5
    assert not row["passed"] and row["hard_failure"]  # truncation is a hard failure
    over = _traces(result)[task["query"]]["calls"][-1]
    assert over["status"] == "over_budget" and over["observation"] == ""  # recorded, never run


# --------------------------------------------------------------------------- (d) bad input


def _store_task(world, label: str, **update: Any) -> dict[str, Any]:
    """A real music task offered the chinook-store tools (get_customer, create_playlist, get_state_hash)."""
    base = next(t for t in all_tasks(world) if t["domain"] == "music")
    tools = ["get_chinook_store_key", "get_customer", "create_playlist", "get_state_hash", "list_customer_invoices"]
    return variant(base, label, available_tools=tools, platforms=sorted({*base["platforms"], "chinook-store"}),
                   **update)  # fmt: skip


def _calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


def test_bad_model_output_is_counted_never_crashes(synth_world, scripted_server, tmp_path) -> None:
    scenarios: dict[str, list[Any]] = {
        "malformed": ['<tool_call>{"name": "get_customer", "arguments": {customer_id: 3}}</tool_call>'],
        "unknown": [_calls(("drop_all_tables", {})), "ANSWER: nothing"],
        "wrong-type": [_calls(("get_customer", {"customer_id": "three"})), "ANSWER: nothing"],
        "key-param": [_calls(("get_customer", {"customer_id": 3, "api_key": "stolen"})), "ANSWER: nothing"],
        "loop": [_calls(("get_customer", {"customer_id": 3}))],
        "tool-error": [_calls(("get_customer", {"customer_id": 999999})), "ANSWER: nothing"],
        "model-error": [{"status": 500}],
        "max-turns": [_calls(("get_customer", {"customer_id": i})) for i in range(1, 8)],
        "bad-native-json": [{"tool_calls": [{"name": "get_customer", "arguments": "{customer_id: 3"}]}, "ANSWER: x"],
    }
    tasks = {}
    for label, script in scenarios.items():
        t = _store_task(synth_world, label)
        scripted_server.script(t["query"], script)
        tasks[label] = t
    result = _run(synth_world, scripted_server, tmp_path, list(tasks.values()), max_turns=4)
    rows = {label: _rows(result)[t["query"]] for label, t in tasks.items()}
    traces = {label: _traces(result)[t["query"]] for label, t in tasks.items()}

    def only(label: str, **want: int) -> None:
        got = {k: v for k, v in rows[label]["failures"].items() if v}
        assert got == want, (label, got)

    only("malformed", malformed_tool_call=3)
    assert rows["malformed"]["stop_reason"] == "malformed_tool_call" and rows["malformed"]["tool_calls"] == 0
    assert rows["malformed"]["format_violations"] == 3 and not rows["malformed"]["passed"]
    only("unknown", unknown_tool=1)
    assert rows["unknown"]["stop_reason"] == "answer" and traces["unknown"]["calls"][0]["status"] == "unknown_tool"
    fed_back = scripted_server.requests_for(tasks["unknown"]["query"])[1]["messages"][-1]
    assert fed_back["role"] == "tool" and "unknown tool 'drop_all_tables'" in fed_back["content"]
    only("wrong-type", bad_arguments=1)
    assert traces["wrong-type"]["calls"][0]["status"] == "bad_arguments"
    assert "customer_id" in traces["wrong-type"]["calls"][0]["error"]
    only("key-param", bad_arguments=1)
    assert "unexpected parameter 'api_key'" in traces["key-param"]["calls"][0]["error"]
    only("loop", loop=1)
    assert rows["loop"]["stop_reason"] == "loop" and [c["status"] for c in traces["loop"]["calls"]] == [
        "executed", "executed", "loop"
    ]  # fmt: skip
    assert rows["loop"]["n_dup"] == 2  # the 2nd and 3rd repeat a call that had succeeded
    only("tool-error", tool_error=1)
    assert traces["tool-error"]["calls"][0]["outcome"] not in ("semantic_success", "generic_only_success")
    only("model-error", model_error=1)
    assert rows["model-error"]["stop_reason"] == "model_error" and "500" in rows["model-error"]["error"]
    only("max-turns", max_turns=1)
    assert rows["max-turns"]["turns"] == 4 and rows["max-turns"]["tool_calls"] == 4
    only("bad-native-json", malformed_tool_call=1)
    tool_msg = scripted_server.requests_for(tasks["bad-native-json"]["query"])[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and "not readable" in tool_msg["content"]
    for label in scenarios:
        assert not rows[label]["passed"], label
    totals = result.report["overall"]["failures"]
    assert set(totals) == set(FAILURE_KINDS)
    assert totals["malformed_tool_call"] == 4 and totals["bad_arguments"] == 2 and totals["loop"] == 1


def test_time_limit_stops_a_slow_model(synth_world, scripted_server, tmp_path) -> None:
    task = _store_task(synth_world, "slow")
    scripted_server.script(task["query"], [{"delay": 3, "content": "ANSWER: late"}])
    row = _rows(_run(synth_world, scripted_server, tmp_path, [task], time_limit_s=0.8))[task["query"]]
    assert row["stop_reason"] == "time_limit" and row["failures"]["time_limit"] == 1 and row["elapsed_s"] < 2.5


# --------------------------------------------------------------------------- ENVIRONMENT


def test_environment_state_hash_in_the_same_session(synth_world, scripted_server, tmp_path) -> None:
    index = ToolRegistry.from_inventories(inventories(synth_world))
    store = lambda name: index.by_platform_name[("chinook-store", name)]  # noqa: E731

    async def golden_hash() -> str:
        async with executor_factory(synth_world.cfg, ["music"], index)() as ex:
            await ex.call(store("get_chinook_store_key"), {})
            assert (await ex.call(store("create_playlist"), {"name": "Eval mix"})).ok
            r = await ex.call(store("get_state_hash"), {})
            return r.records[0]["state_hash"]

    expected = asyncio.run(golden_hash())
    golden = [
        {"step": 1, "tool": "get_chinook_store_key", "platform": "chinook-store", "args": {}},
        {"step": 2, "tool": "create_playlist", "platform": "chinook-store", "args": {"name": "Eval mix", "api_key": "<KEY>"}},
    ]  # fmt: skip
    env = {
        "reward_basis": ["ENVIRONMENT", "ACTION"],
        "expected_state_hash": {"chinook-store": expected},
        "golden_actions": golden,
        "max_allowed_calls": 4,
    }
    ok = _store_task(synth_world, "env-ok", **env)
    wrong = _store_task(synth_world, "env-wrong", **env)
    idle = _store_task(synth_world, "env-idle", **env)
    scripted_server.script(ok["query"], [_calls(("create_playlist", {"name": "Eval mix"})), "Done."])
    scripted_server.script(wrong["query"], [_calls(("create_playlist", {"name": "Other mix"})), "Done."])
    scripted_server.script(idle["query"], ["Done."])
    result = _run(synth_world, scripted_server, tmp_path, [ok, wrong, idle])
    rows = _rows(result)
    assert rows[ok["query"]]["env_pass"] and rows[ok["query"]]["passed"] and rows[ok["query"]]["action_score"] == 1.0
    assert rows[wrong["query"]]["env_pass"] is False and not rows[wrong["query"]]["passed"]
    assert rows[wrong["query"]]["action_correctness"] == 0.0  # the name differs from the golden value
    assert rows[idle["query"]]["env_pass"] is False and rows[idle["query"]]["response_pass"] is None
    assert _traces(result)[ok["query"]]["state"] == {"chinook-store": expected}


# --------------------------------------------------------------------------- RESPONSE judge


def test_judge_decides_judge_answers_when_configured(synth_world, scripted_server, tmp_path) -> None:
    from factory import prompts
    from factory.eval.harness import JUDGE_TEMPLATE

    index = ToolRegistry.from_inventories(inventories(synth_world))
    base = next(t for t in all_tasks(synth_world) if t["answer"]["type"] == "judge")
    said = "ANSWER: the first one and the other one"  # no gold value verbatim: containment fails
    right, wrong = variant(base, "judge-yes"), variant(base, "judge-no")
    for t, verdict in ((right, True), (wrong, False)):
        scripted_server.script(t["query"], [*perfect_script(t, index)[:-1], said])
        judge_prompt = prompts.render(JUDGE_TEMPLATE, query=t["query"], gold=t["answer"]["text"], answer=said)
        scripted_server.script(judge_prompt, [json.dumps({"correct": verdict, "reason": "scripted"})])
    plain = _rows(_run(synth_world, scripted_server, tmp_path / "a", [right]))
    assert plain[right["query"]]["response_method"] == "containment" and not plain[right["query"]]["passed"]
    judged = _rows(_run(synth_world, scripted_server, tmp_path / "b", [right, wrong], judge_backend="scripted"))
    assert judged[right["query"]]["response_method"] == "judge" and judged[right["query"]]["passed"]
    assert judged[wrong["query"]]["response_method"] == "judge" and not judged[wrong["query"]]["passed"]
