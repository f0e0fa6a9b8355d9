"""Structured replies, retries, recorded failures, caching and errors against a scripted endpoint.

The endpoint is an httpx MockTransport speaking the OpenAI chat API, so these
tests exercise the real `openai` client code path without a model.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from factory.llm.errors import BackendUnavailableError, LLMError
from factory.llm.schemas import JudgeVerdict
from factory.llm.service import LLM
from factory.model_config import LocalBackendConfig, ModelsConfig, OpenAIBackendConfig
from tests.conftest import free_port
from tests.llm.samples import fake_executor, sample_inputs


class ScriptedEndpoint:
    """Answers each chat request with the next scripted reply; records request bodies."""

    def __init__(self, replies: list[dict[str, Any] | str]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        message = {"role": "assistant", "content": reply} if isinstance(reply, str) else {"role": "assistant", **reply}
        return httpx.Response(
            200,
            json={
                "id": f"c{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    def factory(self) -> Callable[[], httpx.AsyncClient]:
        return lambda: httpx.AsyncClient(transport=httpx.MockTransport(self))


def _llm(
    endpoint: ScriptedEndpoint,
    tmp_path: Path,
    *,
    fallback: bool = True,
    kind: str = "openai",
    roles: dict[str, str] | None = None,
) -> LLM:
    backend = (
        OpenAIBackendConfig(model="m", base_url="http://mock/v1", api_key_env=None)
        if kind == "openai"
        else LocalBackendConfig(port=free_port())
    )
    cfg = ModelsConfig(
        backends={"b": backend},
        roles=roles or {"judge_answer_leakage": "b", "query_paraphrase.en": "b"},
        max_retries=2,
        fallback_to_rules=fallback,
        cache={"path": str(tmp_path / "cache.sqlite")},
    )
    return LLM(cfg, state_dir=tmp_path / "srv", http_client_factory=endpoint.factory())


GOOD = json.dumps({"verdict": False, "reason": "no leak"})


def test_valid_reply_and_json_schema_request(tmp_path: Path) -> None:
    ep = ScriptedEndpoint([GOOD])
    llm = _llm(ep, tmp_path)
    r = llm.call("judge_answer_leakage", sample_inputs()["judge_answer_leakage"])
    assert r.ok and r.implementation == "model" and r.backend == "b" and r.model == "m"
    assert r.output == JudgeVerdict(verdict=False, reason="no leak")
    fmt = ep.requests[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == JudgeVerdict.model_json_schema()
    assert ep.requests[0]["temperature"] == 0.0
    assert any(k.startswith("judge_answer_leakage/") for k in r.prompts)


def test_llamacpp_gets_json_object_with_schema(tmp_path: Path) -> None:
    ep = ScriptedEndpoint([GOOD])
    llm = _llm(ep, tmp_path, kind="local")
    llm.backends["b"]._started = True  # the scripted endpoint stands in for the server
    llm.call("judge_answer_leakage", sample_inputs()["judge_answer_leakage"])
    assert ep.requests[0]["response_format"] == {"type": "json_object", "schema": JudgeVerdict.model_json_schema()}


def test_invalid_reply_is_retried_then_recorded_with_raw_text(tmp_path: Path) -> None:
    raw = '{"verdict": "maybe", "reason": 3}'
    ep = ScriptedEndpoint([raw])
    llm = _llm(ep, tmp_path)
    with llm.track() as acct:
        r = llm.call("judge_answer_leakage", sample_inputs()["judge_answer_leakage"])
    assert len(ep.requests) == 3  # 1 + max_retries, each with the error fed back
    assert "could not be used" in ep.requests[1]["messages"][-1]["content"]
    assert r.failure is not None and r.failure.raw_text == raw and r.failure.attempts == 3
    assert r.fallback and r.implementation == "rules" and r.output is not None  # rules answered, failure kept
    assert r.provenance()["failure"]["raw_text"] == raw
    md = acct.metadata()
    assert md["llm/judge_answer_leakage/failures"] == 1 and md["llm/judge_answer_leakage/fallbacks"] == 1
    assert md["llm/invalid_replies"] == 3 and md["llm/requests"] == 3 and md["llm/prompt_tokens"] == 30
    logged = llm.cache.failures("judge_answer_leakage")
    assert logged and logged[0]["raw_text"] == raw and logged[0]["backend"] == "b"


def test_failure_without_fallback_keeps_output_none(tmp_path: Path) -> None:
    ep = ScriptedEndpoint(["not json at all"])
    r = _llm(ep, tmp_path, fallback=False).call("judge_answer_leakage", sample_inputs()["judge_answer_leakage"])
    assert r.output is None and r.failure.raw_text == "not json at all" and r.implementation == "model"


def test_guard_rejects_schema_valid_but_wrong_reply_then_accepts_repair(tmp_path: Path) -> None:
    inp = sample_inputs()["query_paraphrase"]
    bad = json.dumps({"query": "How many flights were there?", "answer": "912"})  # drops the seed values
    good = json.dumps({"query": "On 2013-01-05, how many flights did Delta Air Lines fly?", "answer": "wrong"})
    ep = ScriptedEndpoint([bad, good])
    r = _llm(ep, tmp_path).call("query_paraphrase", inp)
    assert r.ok and r.attempts == 2 and r.implementation == "model"
    assert r.output.answer == "912"  # the answer comes from the input, never from the model
    assert "must keep" in ep.requests[1]["messages"][-1]["content"]


def test_cache_hit_makes_no_request(tmp_path: Path) -> None:
    ep = ScriptedEndpoint([GOOD])
    inp = sample_inputs()["judge_answer_leakage"]
    _llm(ep, tmp_path).call("judge_answer_leakage", inp)
    r = _llm(ep, tmp_path).call("judge_answer_leakage", inp)  # a new process would see the same SQLite file
    assert len(ep.requests) == 1 and r.cache_hits == 1 and r.requests == 0
    changed = inp.model_copy(update={"query": inp.query + " (again)"})
    _llm(ep, tmp_path).call("judge_answer_leakage", changed)
    assert len(ep.requests) == 2


def test_map_keeps_order(tmp_path: Path) -> None:
    ep = ScriptedEndpoint([GOOD])
    base = sample_inputs()["judge_answer_leakage"]
    inputs = [base.model_copy(update={"query": f"{base.query} #{i}"}) for i in range(6)]
    out = _llm(ep, tmp_path).map("judge_answer_leakage", inputs)
    assert len(out) == 6 and all(r.ok for r in out) and len(ep.requests) == 6


def test_unreachable_backend_names_backend_and_url(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    cfg = ModelsConfig(
        backends={
            "remote": OpenAIBackendConfig(
                model="m",
                base_url=f"http://127.0.0.1:{port}/v1",
                api_key_env=None,
                max_connection_retries=0,
                timeout_s=5,
            )
        },
        roles={"judge_non_gradable": "remote"},
        cache={"path": str(tmp_path / "c.sqlite")},
    )
    with pytest.raises(BackendUnavailableError, match=rf"'remote' at http://127.0.0.1:{port}/v1 is not reachable"):
        LLM(cfg).call("judge_non_gradable", sample_inputs()["judge_non_gradable"])


def test_local_backend_with_launching_off_is_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from factory.llm import service

    monkeypatch.setattr(service, "launch_command", lambda cfg: None)
    ep = ScriptedEndpoint([GOOD])
    llm = _llm(ep, tmp_path, kind="local")
    with pytest.raises(BackendUnavailableError, match="'b' at http://127.0.0.1:"):
        llm.call("judge_answer_leakage", sample_inputs()["judge_answer_leakage"])


def test_missing_api_key_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACTORY_TEST_KEY", raising=False)
    cfg = ModelsConfig(
        backends={"gpt": OpenAIBackendConfig(model="m", base_url="http://mock/v1", api_key_env="FACTORY_TEST_KEY")},
        roles={"judge_non_gradable": "gpt"},
        cache={"enabled": False},
    )
    with pytest.raises(LLMError, match="FACTORY_TEST_KEY"):
        LLM(cfg).call("judge_non_gradable", sample_inputs()["judge_non_gradable"])


def test_agent_resolver_model_path_with_tool_calls(tmp_path: Path) -> None:
    call = {
        "content": None,
        "tool_calls": [
            {
                "id": "t1",
                "type": "function",
                "function": {"name": "find_airline", "arguments": json.dumps({"name": "Delta"})},
            }
        ],
    }
    ep = ScriptedEndpoint([call, "Delta is DL."])
    llm = _llm(ep, tmp_path, roles={"agent_resolver": "b"})
    task = sample_inputs()["agent_resolver"].model_copy(
        update={
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "find_airline",
                        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
                    },
                }
            ]
        }
    )
    r = llm.resolve(task, fake_executor)
    assert r.implementation == "model" and r.output.final_answer == "Delta is DL." and r.output.stop_reason == "answer"
    assert [t.tool for t in r.output.trace] == ["find_airline"] and r.output.trace[0].result["items"][0][
        "carrier"
    ] == "DL"
    assert ep.requests[1]["messages"][-1]["role"] == "tool" and ep.requests[0]["tools"]
    assert ep.requests[0]["messages"][0]["role"] == "system"
    again = llm.resolve(task, fake_executor)  # replayed from the cache
    assert len(ep.requests) == 2 and again.output == r.output
