"""Conversation exports read back (issue 19 item 7) and the creating-tool rule of terminal-state tasks."""

import asyncio
import json
from typing import Any

from factory.conversations.episode import OracleAgent, RulesSimulator, run_conversation
from factory.conversations.stateful import creation_param
from factory.conversations.tasks import conversation_tasks
from factory.export import conversations as ce
from factory.tools.spec import SourceRef, ToolSpec
from tests.conversations.helpers import FakeEnv, noun_of, source_task, trajectory

SIM = {"role": "user_simulator", "languages": {"en": {"backend": "rules"}}}


def _value() -> dict[str, Any]:
    tasks, _ = conversation_tasks(source_task(), {}, trajectory=trajectory(), noun_of=noun_of, no_call_every=1)
    for t in tasks:
        ep = asyncio.run(run_conversation(t, OracleAgent(), RulesSimulator(), FakeEnv(t["tools_subset"])))
        t["golden_messages"] = ep["messages"]
        t["tools"] = [
            {"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}}
            for n in t["tools_subset"]
        ]
    return {"tasks": tasks, "simulator": SIM}


def test_every_conversation_file_reads_back() -> None:
    value = _value()
    out = {fmt: (data, n) for fmt, _, data, n in ce.files(value, "train", "ds")}
    assert set(out) == set(ce.FORMATS)
    for fmt, (data, n) in out.items():
        assert ce.read_back(fmt, data, "train") == (n, []), fmt
    chat = [json.loads(line) for line in out["conversations_chat"][0].decode().splitlines()]
    multi = next(r for r in chat if r["metadata"]["case_pattern"] == "multi_turn")
    roles = [m["role"] for m in multi["messages"]]
    # the assistant asks, the user answers, then the calls and their results, then the answer
    assert roles[:4] == ["system", "user", "assistant", "user"] and "tool" in roles and roles[-1] == "user"
    bench = json.loads(out["conversations_benchmark"][0])
    assert bench["user_simulator"] == SIM and {t["case_pattern"] for t in bench["tasks"]} == {
        "sequential", "multi_turn", "no_call"
    }  # fmt: skip
    assert list(ce.files(value, "test", "ds"))[0][3] == 0  # no task of that split: empty files


def test_a_broken_conversation_row_is_reported() -> None:
    row = ce.chat_row({**_value()["tasks"][0]})
    tool_turn = next(i for i, m in enumerate(row["messages"]) if m["role"] == "tool")
    del row["messages"][tool_turn]  # a call left unanswered
    assert any("answered" in p for p in ce.validate_chat(row))
    row["tools"] = []
    assert any("not among the tools" in p for p in ce.validate_chat(row))


def _spec(name: str, props: dict[str, Any], required: list[str], state_changing: bool = True) -> ToolSpec:
    return ToolSpec(
        domain="music",
        platform="store",
        name=name,
        description=name,
        input_schema={"type": "object", "properties": props, "required": required},
        source=SourceRef(kind="openapi", locator="x"),
        state_changing=state_changing,
    )


def test_creating_tools_yield_terminal_state_tasks() -> None:
    name = {"type": "string", "examples": ["Road trip"]}
    assert creation_param(_spec("create_playlist", {"name": name}, ["name"])) == ("name", "Road trip")
    assert creation_param(_spec("create_playlist", {"name": name}, ["name"], state_changing=False)) is None
    ids = {"type": "integer", "examples": [1]}
    assert creation_param(_spec("create_invoice", {"customer_id": ids}, ["customer_id"])) is None
    assert creation_param(_spec("create_playlist", {"name": {"type": "string"}}, ["name"])) is None  # no example


def test_only_conversations_of_the_current_splits_are_exported() -> None:
    value = _value()
    src = source_task()
    assert len(ce.current_conversations(value, {"tasks": [src]})["tasks"]) == len(value["tasks"])
    moved = {"tasks": [{**src, "split": "test"}]}  # the source task changed split since: stale rows left out
    assert ce.current_conversations(value, moved)["tasks"] == []
    assert ce.current_conversations(None, {"tasks": [src]}) is None
