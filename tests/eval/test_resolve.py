"""LLM.aresolve on a model backend delegates to the evaluation runner (real HTTP server, no fixture world)."""

from pathlib import Path
from typing import Any

import pytest

from factory.llm.errors import LLMError
from factory.llm.schemas import AgentTaskInput
from factory.llm.service import LLM
from tests.eval.conftest import scripted_models
from tests.eval.scripted import ScriptedServer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "find_airline",
            "description": "Airline by name.",
            "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        },
    }
]


def executor(tool: str, args: dict[str, Any]) -> Any:
    if tool == "find_airline" and args.get("name") == "Delta":
        return {"items": [{"carrier": "DL"}]}
    raise LookupError(f"{tool}: nothing for {args}")


def _task(query: str) -> AgentTaskInput:
    return AgentTaskInput(messages=[{"role": "user", "content": query}], tools=TOOLS, max_calls=3)


def test_resolve_reads_text_calls_and_reports_failures(scripted_server: ScriptedServer, tmp_path: Path) -> None:
    models = scripted_models(scripted_server, str(tmp_path / "c.sqlite"))
    llm = LLM(models.model_copy(update={"roles": {"agent_resolver": "scripted"}}))
    q1 = "resolve: which code has Delta?"
    scripted_server.script(
        q1, ['<tool_call>{"name": "find_airline", "arguments": {"name": "Delta"}}</tool_call>', "DL"]
    )
    r = llm.resolve(_task(q1), executor)
    assert r.implementation == "model" and r.backend == "scripted" and r.requests == 2
    assert r.output.final_answer == "DL" and r.output.stop_reason == "answer"
    assert [(t.tool, t.ok, t.result) for t in r.output.trace] == [
        ("find_airline", True, {"items": [{"carrier": "DL"}]})
    ]
    assert set(r.prompts) == {"agent_resolver/system.en", "agent_resolver/feedback.en"}
    first = scripted_server.requests_for(q1)[0]
    assert first["tools"][0]["function"]["name"] == "find_airline" and first["messages"][0]["role"] == "system"

    q2 = "resolve: a model that fails in every way"
    scripted_server.script(
        q2,
        [
            {"tool_calls": [{"name": "delete_everything", "arguments": {}}]},
            {"tool_calls": [{"name": "find_airline", "arguments": {"name": "Nowhere"}}]},
            {"tool_calls": [{"name": "find_airline", "arguments": {"name": 7}}]},
            {"tool_calls": [{"name": "find_airline", "arguments": {"name": "Delta"}}]},
        ],
    )
    r = llm.resolve(_task(q2), executor)
    assert r.output.stop_reason == "max_calls" and r.output.final_answer == ""
    trace = [(t.tool, t.ok, t.error or "") for t in r.output.trace]
    assert trace[0][:2] == ("delete_everything", False) and trace[0][2].startswith("unknown tool 'delete_everything'")
    assert trace[1][:2] == ("find_airline", False) and "LookupError" in trace[1][2]
    assert trace[2][:2] == ("find_airline", False) and "invalid arguments" in trace[2][2]
    assert len(trace) == 4 and "exceeds the budget" in (r.output.trace[3].error or "")
    llm.close()


def test_resolve_raises_backend_errors_like_every_llm_call(scripted_server: ScriptedServer, tmp_path: Path) -> None:
    models = scripted_models(scripted_server, str(tmp_path / "c.sqlite"))
    llm = LLM(models.model_copy(update={"roles": {"agent_resolver": "scripted"}}))
    q = "resolve: the server fails"
    scripted_server.script(q, [{"status": 500}])
    with pytest.raises(LLMError, match="HTTP 500"):
        llm.resolve(_task(q), executor)
    llm.close()
