"""Conversation episodes: agent ↔ user simulator ↔ tools, with caps (issue 19 item 3).

`run_conversation` drives one episode of a conversation task; `goal_success` scores it the kotraj way (every
required call made with matching argument subsets, in the required order, the terminal state reached, no
call at all for `no_call`; truncation is a hard failure); `sim_faults` classifies what the simulator did
wrong from the transcript alone (leaked hidden info unasked, stopped early, contradicted or withheld a fact it
was asked for, empty turn), with the same reading of an agent turn as the rules simulator
(`factory.llm.simulator`), so a model simulator is held to the rules one's standard.

The agent, the simulator and the tools are small protocols: the golden `OracleAgent` and the rules
simulator run in-process; a model simulator goes through `ModelClient` (`ModelSimulator`).
"""

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from factory import prompts
from factory.eval.scoring import values_equal
from factory.llm.client import ModelClient
from factory.llm.schemas import SimulatorInput, SimulatorReply
from factory.llm.simulator import STOP, asked_facts, is_question, leaked_facts, mentions_value, user_simulator

ORACLE_TEMPLATE = "conversations/oracle.{lang}"
TRUNCATIONS = ("turn_cap", "call_cap", "agent_step_cap")
SIM_FAULTS = ("leaked_hidden_info", "stopped_early", "contradicted_hidden_info", "empty_turn")


@dataclass(frozen=True)
class Caps:
    max_user_turns: int = 6  # simulator replies per episode
    max_calls: int = 24  # tool calls per episode
    max_agent_steps: int = 10  # agent messages between two user turns


class Agent(Protocol):
    async def respond(self, task: Mapping[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The next assistant message (OpenAI shape: content and/or tool_calls)."""
        ...


class Simulator(Protocol):
    async def reply(self, inp: SimulatorInput) -> SimulatorReply: ...


class ToolEnv(Protocol):
    async def call(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        """(ok, observation text) of one executed call."""
        ...

    async def state(self) -> dict[str, str | None]:
        """Platform → state hash after the episode (only the platforms the task's terminal state names)."""
        ...


class RulesSimulator:
    """The deterministic rules user, in-process."""

    implementation = "rules"

    async def reply(self, inp: SimulatorInput) -> SimulatorReply:
        return user_simulator(inp)


class ModelSimulator:
    """The `user_simulator` role through the model layer (rules or a pinned model, as configured)."""

    def __init__(self, llm: ModelClient) -> None:
        self.llm = llm

    async def reply(self, inp: SimulatorInput) -> SimulatorReply:
        out = (await self.llm.acall("user_simulator", inp)).output
        assert isinstance(out, SimulatorReply)
        return out


def simulator_input(
    task: Mapping[str, Any], transcript: Sequence[Mapping[str, str]], revealed: Sequence[str]
) -> SimulatorInput:
    return SimulatorInput(
        language=task["language"],
        persona=dict(task["persona"]),
        task=task["task"],
        hidden_info=dict(task["hidden_info"]),
        revealed=list(revealed),
        answer_values=list(task["answer"]["values"]),
        transcript=[dict(m) for m in transcript],
    )


async def run_conversation(
    task: Mapping[str, Any], agent: Agent, simulator: Simulator, env: ToolEnv, caps: Caps = Caps()
) -> dict[str, Any]:
    """One episode: the simulator's opening message, then agent turns (tool calls executed in `env`) and
    simulator replies until the simulator stops or a cap is reached."""
    hidden = dict(task["hidden_info"])
    lang = task["language"]
    messages: list[dict[str, Any]] = [{"role": "user", "content": task["initial_message"]}]
    transcript: list[dict[str, str]] = [{"role": "user", "content": task["initial_message"]}]
    calls: list[dict[str, Any]] = []
    sim_turns: list[dict[str, Any]] = []
    revealed: list[str] = [n for n, v in hidden.items() if mentions_value(task["initial_message"], v)]
    stop_reason = "turn_cap"
    for user_turn in range(caps.max_user_turns):
        said: str | None = None
        for _ in range(caps.max_agent_steps):
            msg = await agent.respond(task, messages)
            messages.append({"role": "assistant", **msg})
            tool_calls = msg.get("tool_calls") or []
            if not tool_calls:
                said = str(msg.get("content") or "")
                break
            for tc in tool_calls:
                if len(calls) >= caps.max_calls:
                    stop_reason = "call_cap"
                    break
                fn = tc.get("function") or {}
                name = str(fn.get("name") or "")
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                    ok, content = await env.call(name, args) if isinstance(args, dict) else (False, "bad arguments")
                except json.JSONDecodeError:
                    args, ok, content = {}, False, "the arguments are not JSON"
                calls.append(
                    {
                        "index": len(calls),
                        "turn": user_turn,
                        "tool": name,
                        "args": args,
                        "ok": ok,
                        "call_id": tc.get("id"),
                    }
                )
                messages.append({"role": "tool", "tool_call_id": tc.get("id"), "content": content})
            if stop_reason == "call_cap":
                break
        else:
            stop_reason = "agent_step_cap"
        if said is None:
            if stop_reason == "turn_cap":
                stop_reason = "agent_step_cap"
            break
        transcript.append({"role": "assistant", "content": said})
        asked = asked_facts(said, hidden, revealed, lang)
        rep = await simulator.reply(simulator_input(task, transcript, revealed))
        text = rep.message.replace(STOP, "").strip()
        stop = rep.stop or STOP in rep.message
        sim_turns.append(
            {
                "after": said,
                "asked": asked,
                "revealed_before": list(revealed),
                "message": text,
                "stop": stop,
                "reported_revealed": list(rep.revealed),
            }
        )
        revealed.extend(n for n, v in hidden.items() if n not in revealed and mentions_value(text, v))
        if text:
            messages.append({"role": "user", "content": text})
            transcript.append({"role": "user", "content": text})
        if stop:
            stop_reason = "user_stop"
            break
    return {
        "task_id": task["id"],
        "messages": messages,
        "transcript": transcript,
        "calls": calls,
        "sim_turns": sim_turns,
        "revealed": revealed,
        "stop_reason": stop_reason,
        "state": await env.state(),
    }


# --------------------------------------------------------------------------- scoring


def _matches(required: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    if not call.get("ok") or call.get("tool") != required["name"]:
        return False
    args = call.get("args") or {}
    return all(k in args and values_equal(args[k], v) for k, v in required["args_subset"].items())


def goal_success(task: Mapping[str, Any], episode: Mapping[str, Any]) -> dict[str, Any]:
    """kotraj goal_success: required calls in order with matching argument subsets, the terminal state, no
    call for no_call; a truncated episode fails whatever it did. An `optional` required call (one that only finds
    arguments a later call sends) may be left out or replaced by another way to them; made, it keeps its order."""
    crit = task["success_criteria"]
    calls = list(episode["calls"])
    if episode["stop_reason"] in TRUNCATIONS:
        return {"success": False, "reason": f"truncated ({episode['stop_reason']})"}
    if crit.get("no_call"):
        if calls:
            return {"success": False, "reason": f"a no_call task answered with {len(calls)} tool call(s)"}
        return {"success": True, "reason": "answered without calling a tool"}
    required = crit["required_calls"]
    before: dict[int, list[int]] = {}
    for i, j in crit.get("ordering") or []:
        before.setdefault(j, []).append(i)
    position: dict[int, int] = {}
    used: set[int] = set()
    order = sorted(range(len(required)), key=lambda i: (required[i].get("step", 0), i))
    for i in order:
        earliest = max((position[p] for p in before.get(i, []) if p in position), default=-1)
        hits = [c["index"] for c in calls if c["index"] not in used and _matches(required[i], c)]
        after = [h for h in hits if h > earliest]
        if not after and required[i].get("optional"):
            continue  # a lookup of the way: the later calls' arguments show it was found another way
        if not after:
            name = required[i]["name"]
            if hits:
                return {"success": False, "reason": f"required call {name} made out of order"}
            return {"success": False, "reason": f"required call {name} {required[i]['args_subset']} not made"}
        position[i] = after[0]
        used.add(after[0])
    for platform, expected in (crit.get("terminal_state") or {}).items():
        got = (episode.get("state") or {}).get(platform)
        if got != expected:
            return {"success": False, "reason": f"terminal state of {platform} is {got}, expected {expected}"}
    return {"success": True, "reason": "every required call made in order; terminal state reached"}


def sim_faults(task: Mapping[str, Any], episode: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Simulator faults read off the transcript: the harness noise floor (kotraj sim_fault)."""
    hidden = dict(task["hidden_info"])
    lang = task["language"]
    out: list[dict[str, Any]] = []
    leaked0 = [n for n, v in hidden.items() if mentions_value(task["initial_message"], v)]
    if leaked0:
        out.append({"turn": 0, "fault": "leaked_hidden_info", "facts": leaked0, "detail": "in the opening message"})
    met = False
    for k, t in enumerate(episode["sim_turns"], start=1):
        if not t["message"] and not t["stop"]:
            out.append({"turn": k, "fault": "empty_turn", "facts": [], "detail": "an empty user message"})
        leaked = leaked_facts(t["message"], t["asked"], hidden, t["revealed_before"])
        if leaked:
            out.append({"turn": k, "fault": "leaked_hidden_info", "facts": leaked, "detail": t["message"][:200]})
        withheld = [n for n in t["asked"] if not mentions_value(t["message"], hidden[n])]
        if withheld and t["message"]:
            out.append(
                {"turn": k, "fault": "contradicted_hidden_info", "facts": withheld, "detail": t["message"][:200]}
            )
        met = met or all(mentions_value(t["after"], v) for v in task["answer"]["values"])
        if t["stop"] and not met and (t["asked"] or is_question(t["after"], lang)):
            out.append({"turn": k, "fault": "stopped_early", "facts": t["asked"], "detail": t["after"][:200]})
    return out


def score_episode(task: Mapping[str, Any], episode: Mapping[str, Any]) -> dict[str, Any]:
    g = goal_success(task, episode)
    faults = sim_faults(task, episode)
    return {
        "task_id": task["id"],
        "case_pattern": task["case_pattern"],
        "language": task["language"],
        "domain": task["domain"],
        "goal_success": g["success"],
        "reason": g["reason"],
        "sim_fault": bool(faults),
        "sim_faults": faults,
        "stop_reason": episode["stop_reason"],
        "tool_calls": len(episode["calls"]),
        "turns": len(episode["sim_turns"]),
    }


# --------------------------------------------------------------------------- the golden agent


class OracleAgent:
    """The golden agent: asks for every hidden fact not yet given, then makes the golden calls step by step,
    then states the gold answer; for a no_call task it gives the task's written reply without any call."""

    name = "oracle"

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def _say(self, task: Mapping[str, Any], kind: str, **ctx: Any) -> dict[str, Any]:
        variant = int(task.get("seed") or 0)
        text = prompts.render(ORACLE_TEMPLATE.format(lang=task["language"]), kind=kind, variant=variant, **ctx)
        return {"content": " ".join(text.split())}

    async def respond(self, task: Mapping[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        if task["success_criteria"].get("no_call"):  # the written reply: a short decline, or the direct answer
            return {"content": task["answer"]["text"]}
        users = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
        missing = [n for n, v in task["hidden_info"].items() if not mentions_value(users, v)]
        if missing:
            return self._say(task, "ask", facts=missing)
        done = sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))
        steps: dict[int, list[dict[str, Any]]] = {}
        for c in task["golden_calls"]:
            steps.setdefault(c["step"], []).append(c)
        ordered = [steps[s] for s in sorted(steps)]
        recovery = task.get("recovery")
        if recovery:  # an error-recovery conversation: the wrong call alone, just before its step
            failed = recovery["failed_call"]
            at = task["golden_calls"][recovery["call_index"]]["step"]
            k = 0 if recovery.get("first") else sorted(steps).index(at)  # 'first': tried before the lookup
            ordered = [*ordered[:k], [{"name": failed["name"], "args": failed["args"]}], *ordered[k:]]
        if done < len(ordered):
            return {
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{next(self._ids)}",
                        "type": "function",
                        "function": {"name": c["name"], "arguments": json.dumps(c["args"], ensure_ascii=False)},
                    }
                    for c in ordered[done]
                ],
            }
        return {"content": task["answer"]["text"] or self._say(task, "done")["content"]}
