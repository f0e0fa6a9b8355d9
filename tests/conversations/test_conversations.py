"""Conversation tasks, the rules simulator, episodes and their scoring (issue 19), against an in-memory env."""

import asyncio
import json
import re
from typing import Any

import pytest

from factory.conversations.episode import (
    OracleAgent,
    RulesSimulator,
    goal_success,
    run_conversation,
    score_episode,
    sim_faults,
)
from factory.conversations.persona import sentence_registers, to_banmal
from factory.conversations.tasks import conversation_tasks, mask_english, mask_korean
from factory.llm.schemas import SimulatorInput, SimulatorReply
from factory.llm.simulator import STOP, reply_problems, user_simulator
from tests.conversations.helpers import FakeEnv, noun_of, source_task, trajectory


def _tasks(language: str = "en") -> dict[str, dict[str, Any]]:
    out, _ = conversation_tasks(
        source_task(language), {}, trajectory=trajectory(language), noun_of=noun_of, no_call_every=1
    )
    return {t["case_pattern"]: t for t in out}


def _run(task: dict[str, Any], agent: Any = None, sim: Any = None) -> dict[str, Any]:
    env = FakeEnv(task["tools_subset"])
    ep = asyncio.run(run_conversation(task, agent or OracleAgent(), sim or RulesSimulator(), env))
    return ep


def test_case_kinds_from_a_verified_task() -> None:
    tasks = _tasks()
    assert set(tasks) == {"sequential", "multi_turn", "no_call"}
    seq = tasks["sequential"]
    # key acquisition is not required; the API key placeholder is not an argument to match
    assert [(c["name"], c["args_subset"]) for c in seq["success_criteria"]["required_calls"]] == [
        ("search", {"name": "Different World"}),
        ("count_items", {"parent_id": 90}),
    ]
    assert seq["success_criteria"]["ordering"] == [[0, 1]]
    mt = tasks["multi_turn"]
    assert mt["hidden_info"] == {"track": "Different World"}
    assert "Different World" not in mt["initial_message"]
    # the track is the user's own ('the song I'm listening to'), not 'a track I noted down' (blind read s11 r2 #11)
    # said in the request or as the scene it opens with ('There's a track playing. … its artist …': s17 r3 #8)
    own = r"of the (?:song|track) (?:I'm|that's|stuck)|I'm listening to a song\. |a track playing\. .*\bits |stuck in my head\. "
    assert re.search(own, mt["initial_message"]), mt["initial_message"]
    assert tasks["no_call"]["success_criteria"]["no_call"] and not tasks["no_call"]["golden_calls"]
    assert {t["split"] for t in tasks.values()} == {"train"}  # a derived task keeps its source's split


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_oracle_passes_every_case_with_no_sim_fault(language: str) -> None:
    for case, task in _tasks(language).items():
        ep = _run(task)
        s = score_episode(task, ep)
        assert s["goal_success"], (case, s["reason"], ep["transcript"])
        assert not s["sim_fault"], (case, s["sim_faults"])
        assert ep["stop_reason"] == "user_stop"
        if case == "multi_turn":  # the agent had to ask, and the simulator revealed the fact in reply
            assert ep["sim_turns"][0]["asked"] == list(task["hidden_info"]) and ep["revealed"] == list(
                task["hidden_info"]
            )


def test_a_simulator_that_leaks_hidden_info_is_flagged() -> None:
    task = _tasks()["multi_turn"]

    class Leaky:
        async def reply(self, inp: SimulatorInput) -> SimulatorReply:
            return SimulatorReply(message="By the way, it is the track Different World.")

    class Chatty:  # states something without asking for the fact
        async def respond(self, task: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
            return {"content": "Happy to help with music questions."}

    faults = sim_faults(task, _run(task, Chatty(), Leaky()))
    assert [f["fault"] for f in faults][:1] == ["leaked_hidden_info"] and faults[0]["facts"] == ["track"]
    # the rules simulator, asked nothing, does not reveal the fact (it nudges, then gives up)
    ep = _run(task, Chatty())
    assert sim_faults(task, ep) == [] and ep["revealed"] == []
    assert not goal_success(task, ep)["success"]
    # a model simulator's leaking reply fails the role's guard
    inp = SimulatorInput(
        persona=task["persona"], task=task["task"], hidden_info=task["hidden_info"],
        transcript=[{"role": "user", "content": task["initial_message"]}, {"role": "assistant", "content": "Hello."}],
    )  # fmt: skip
    assert reply_problems(inp, SimulatorReply(message="It's Different World.")) != []


def test_required_calls_out_of_order_fail_goal_success() -> None:
    task = _tasks()["sequential"]

    class Backwards:
        async def respond(self, task: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
            done = sum(1 for m in messages if m.get("role") == "assistant")
            calls = [("count_items", {"parent_id": 90}), ("search", {"name": "Different World"})]
            if done < 2:
                name, args = calls[done]
                fn = {"name": name, "arguments": json.dumps(args)}
                return {"content": None, "tool_calls": [{"id": f"c{done}", "type": "function", "function": fn}]}
            return {"content": "The artist has 21 albums."}

    ep = _run(task, Backwards())
    g = goal_success(task, ep)
    assert not g["success"] and "out of order" in g["reason"]
    assert sim_faults(task, ep) == []  # the agent's failure, not the simulator's


def test_a_lookup_of_the_way_may_be_taken_another_way() -> None:
    """The search only finds the id count_items sends, so it is optional: an agent that reaches id 90 by another
    way passes, one that sends another id fails (blind read s15 conversations #6, #14)."""
    task = _tasks()["sequential"]
    assert [c["optional"] for c in task["success_criteria"]["required_calls"]] == [True, False]

    def direct(parent_id: int) -> Any:
        class Direct:
            async def respond(self, task: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
                if not any(m.get("role") == "tool" for m in messages):
                    fn = {"name": "count_items", "arguments": json.dumps({"parent_id": parent_id})}
                    return {"content": None, "tool_calls": [{"id": "c0", "type": "function", "function": fn}]}
                return {"content": "The artist has 21 albums."}

        return Direct()

    assert goal_success(task, _run(task, direct(90)))["success"]
    g = goal_success(task, _run(task, direct(91)))
    assert not g["success"] and "count_items" in g["reason"]


def test_a_no_call_task_answered_with_a_tool_call_fails() -> None:
    task = _tasks()["no_call"]
    sequential = _tasks()["sequential"]

    class CallsAnyway(OracleAgent):
        async def respond(self, task: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
            return await super().respond(sequential, messages)  # makes the golden calls of another task

    g = goal_success(task, _run(task, CallsAnyway()))
    assert not g["success"] and "no_call" in g["reason"]


def test_terminal_state_and_truncation_are_required() -> None:
    task = _tasks()["sequential"]
    wrong_state = {**task, "success_criteria": {**task["success_criteria"], "terminal_state": {"store": "lists:1"}}}
    g = goal_success(wrong_state, _run(wrong_state))
    assert not g["success"] and "terminal state" in g["reason"]

    class Silent:
        async def respond(self, task: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
            fn = {"name": "search", "arguments": json.dumps({"name": "Different World"})}
            return {"content": None, "tool_calls": [{"id": "x", "type": "function", "function": fn}]}

    ep = _run(task, Silent())
    assert ep["stop_reason"] == "agent_step_cap" and not goal_success(task, ep)["success"]


def test_a_simulator_that_quits_when_asked_is_stopped_early() -> None:
    task = _tasks()["multi_turn"]

    class Quitter:
        async def reply(self, inp: SimulatorInput) -> SimulatorReply:
            return SimulatorReply(message=f"Bye {STOP}", stop=True)

    faults = {f["fault"] for f in sim_faults(task, _run(task, sim=Quitter()))}
    assert faults == {"stopped_early", "contradicted_hidden_info"}


def test_rules_simulator_register_and_confirmation() -> None:
    base = {"task": "x", "hidden_info": {"읍면동": "철마면"}}
    banmal = SimulatorInput(language="ko", persona={"격식": "반말"}, transcript=[
        {"role": "user", "content": "어느 읍면동의 수를 알려 줘."},
        {"role": "assistant", "content": "어느 읍면동인지 알려 주시겠어요?"}], **base)  # fmt: skip
    r = user_simulator(banmal)
    assert r.revealed == ["읍면동"] and "철마면" in r.message and sentence_registers(r.message) <= {"반말"}
    polite = banmal.model_copy(update={"persona": {"격식": "존댓말"}})
    assert sentence_registers(user_simulator(polite).message) <= {"존댓말"}
    # the reply's form varies with the task (at least six forms), the register does not
    forms = {user_simulator(banmal.model_copy(update={"task": f"t{i}"})).message for i in range(60)}
    polite_forms = {user_simulator(polite.model_copy(update={"task": f"t{i}"})).message for i in range(60)}
    assert len(forms) >= 6 and len(polite_forms) >= 6
    assert all("철마면" in m and sentence_registers(m) <= {"반말"} for m in forms)
    assert all("철마면" in m and sentence_registers(m) <= {"존댓말"} for m in polite_forms)
    assert any(sentence_registers(m) == {"반말"} for m in forms)
    assert any(sentence_registers(m) == {"존댓말"} for m in polite_forms)
    confirm = banmal.model_copy(update={"revealed": ["읍면동"], "transcript": [
        *banmal.transcript[:1], {"role": "assistant", "content": "철마면이 맞나요?"}]})  # fmt: skip
    out = user_simulator(confirm)
    assert not out.stop and not out.revealed and "그렇게" in out.message


def test_masking_and_banmal() -> None:
    assert mask_english("What is the time zone of airport ICN and of airport ICN?", "ICN") == (
        "What is the time zone of an airport and of that airport?",
        "airport",
    )
    assert mask_english("Between airline UA and ICN?", "ICN") is None  # a mention without its noun
    assert (
        mask_korean("서울특별시와 부산광역시 중 어디가 큰가요?", "서울특별시", "시도")
        == "어느 시도와 부산광역시 중 어디가 큰가요?"
    )
    assert mask_korean("철마면은 어디인가요?", "철마면", "읍면동") == "어느 읍면동은 어디인가요?"
    assert to_banmal("시군구 수 차이는 얼마인가요? 그 수를 알려 주세요.") == "시군구 수 차이는 얼마야? 그 수를 알려 줘."
    assert to_banmal("몇 곳인가요?") == "몇 곳이야?"
    assert to_banmal("이건 모르겠습니다.") is None


def test_case_breakdown_pass_hat_k_and_mcnemar() -> None:
    from factory.conversations.metrics import all_runs_pass, case_breakdown, mcnemar_exact

    rows = [
        *({"task_id": "a", "case_pattern": "single", "goal_success": ok, "sim_fault": False} for ok in (1, 1, 0)),
        *({"task_id": "b", "case_pattern": "single", "goal_success": True, "sim_fault": False} for _ in range(3)),
        *({"task_id": "n", "case_pattern": "no_call", "goal_success": True, "sim_fault": True} for _ in range(3)),
    ]
    out = case_breakdown(rows, k=3)
    assert out["by_case"]["single"]["pass@1"] == round(5 / 6, 4) and out["by_case"]["single"]["pass^3"] == 0.5
    assert (
        out["without_no_call"]["tasks"] == 2 and out["no_call"]["pass^3"] == 1.0 and out["no_call"]["sim_fault"] == 1.0
    )
    assert all_runs_pass(rows) == {"a": False, "b": True, "n": True}
    # 8 discordant tasks all favouring one model: p = 2 / 2^8
    a = {f"t{i}": True for i in range(10)}
    b = {f"t{i}": i >= 8 for i in range(10)}
    assert mcnemar_exact(a, b) == {"tasks": 10, "b01": 0, "b10": 8, "p": 2 / 256}
    assert mcnemar_exact(a, a)["p"] == 1.0
