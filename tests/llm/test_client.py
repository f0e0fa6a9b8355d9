"""`ModelClient`: the service satisfies it, and the public methods the stages use instead of its internals."""

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from factory.llm.client import ModelClient
from factory.llm.errors import LLMError
from factory.llm.service import LLM
from factory.model_config import ModelsConfig, OpenAIBackendConfig
from tests.conftest import free_port
from tests.llm.samples import sample_inputs
from tests.llm.test_structured import GOOD, ScriptedEndpoint


def _llm(endpoint: ScriptedEndpoint, tmp_path: Path, roles: dict[str, str]) -> LLM:
    cfg = ModelsConfig(
        backends={"b": OpenAIBackendConfig(model="m", base_url="http://mock/v1", api_key_env=None)},
        roles=roles,
        cache={"path": str(tmp_path / "cache.sqlite")},
    )
    return LLM(cfg, state_dir=tmp_path / "srv", http_client_factory=endpoint.factory())


def test_llm_is_a_model_client(tmp_path: Path) -> None:
    llm = LLM(ModelsConfig(), cache_path=None)
    assert isinstance(llm, ModelClient)

    class OnlyRoles:  # a stand-in that lacks most of the face is not one
        def call(self, role_name: str, inp: Any) -> Any: ...

        async def acall(self, role_name: str, inp: Any) -> Any: ...

    assert not isinstance(OnlyRoles(), ModelClient)


def test_uses_model_follows_the_role_map(tmp_path: Path) -> None:
    llm = _llm(ScriptedEndpoint([GOOD]), tmp_path, {"judge_answer_leakage": "b", "query_writer.ko": "b"})
    assert llm.uses_model("judge_answer_leakage")
    assert not llm.uses_model("judge_non_gradable")  # unlisted: rules
    assert llm.uses_model("query_writer", "ko") and not llm.uses_model("query_writer", "en")
    with pytest.raises(KeyError, match="unknown role 'no_such_role'"):
        llm.uses_model("no_such_role")


def test_chat_backends_by_name(tmp_path: Path) -> None:
    llm = _llm(ScriptedEndpoint([GOOD]), tmp_path, {})
    assert llm.backend_names() == ["b"]
    b = llm.chat_backend("b")
    assert (b.name, b.model, b.url) == ("b", "m", "http://mock/v1")
    with pytest.raises(LLMError, match="unknown backend 'nope'; declared backends: b"):
        llm.chat_backend("nope")


def _ask(backend: Any, llm: LLM) -> tuple[dict[str, Any], bool]:
    async def main() -> tuple[dict[str, Any], bool]:
        try:
            return await backend.chat("judge_answer_leakage", [{"role": "user", "content": "hi"}])
        finally:
            await backend.aclose_loop()
            await llm.aclose_loop()

    return asyncio.run(main())


def test_backend_variant_sends_its_sampling_counts_and_caches(tmp_path: Path) -> None:
    ep = ScriptedEndpoint([GOOD])
    llm = _llm(ep, tmp_path, {})
    base = llm.chat_backend("b")
    v = llm.backend_variant("b", temperature=0.7, seed=5, max_tokens=33)
    assert v.server is base.server and v.name == "b" and v.model == "m"
    assert base.cfg.temperature == 0.0  # the original is untouched
    with llm.track() as acct:
        _, hit1 = _ask(v, llm)
        _, hit2 = _ask(v, llm)
    assert (hit1, hit2) == (False, True)  # the LLM's response cache answers the repeat
    assert len(ep.requests) == 1
    sent = ep.requests[0]
    assert (sent["temperature"], sent["seed"], sent["max_tokens"]) == (0.7, 5, 33)
    md = acct.metadata()  # the variant counts in the service's accounting
    assert md["llm/requests"] == 1 and md["llm/cache_hits"] == 1

    other = llm.backend_variant("b", temperature=0.7, seed=6)  # another seed: another cache key
    assert _ask(other, llm)[1] is False and len(ep.requests) == 2
    uncached = llm.backend_variant("b", temperature=0.7, seed=5, cache=False)
    assert _ask(uncached, llm)[1] is False and len(ep.requests) == 3


def test_unreachable_says_why_only_when_nothing_answers(tmp_path: Path) -> None:
    seen: list[str] = []

    def not_found(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(404)

    answering = LLM(
        ModelsConfig(
            backends={"b": OpenAIBackendConfig(model="m", base_url="http://mock/v1", api_key_env=None)},
            roles={},
            cache={"enabled": False},
        ),
        http_client_factory=lambda: httpx.AsyncClient(transport=httpx.MockTransport(not_found)),
    ).chat_backend("b")
    assert asyncio.run(answering.unreachable()) is None  # an error status is still an answer
    assert seen == ["http://mock/v1/models"]
    cfg = ModelsConfig(
        backends={
            "dead": OpenAIBackendConfig(model="m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key_env=None)
        },
        roles={},
        cache={"enabled": False},
    )
    why = asyncio.run(LLM(cfg).chat_backend("dead").unreachable(timeout_s=5))
    assert why  # connection refused, in words


def test_call_goes_through_the_client_face(tmp_path: Path) -> None:
    ep = ScriptedEndpoint([GOOD])
    client: ModelClient = _llm(ep, tmp_path, {"judge_answer_leakage": "b"})
    r = client.call("judge_answer_leakage", sample_inputs()["judge_answer_leakage"])
    assert r.implementation == "model"
    assert client.implementation("judge_answer_leakage") == {"backend": "b", "model": "m"}
    assert client.metadata()["llm/requests"] == 1


def test_a_context_overflow_names_the_setting_to_change(tmp_path: Path) -> None:
    body = {"error": {"code": "context_length_exceeded", "message": "request (5120 tokens) exceeds the context"}}

    def overflow(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json=body)

    cfg = ModelsConfig(
        backends={"b": OpenAIBackendConfig(model="m", base_url="http://mock/v1", api_key_env=None)},
        roles={},
        cache={"enabled": False},
    )
    llm = LLM(cfg, http_client_factory=lambda: httpx.AsyncClient(transport=httpx.MockTransport(overflow)))
    with pytest.raises(LLMError) as e:
        _ask(llm.chat_backend("b"), llm)
    assert "HTTP 400" in str(e.value) and "does not fit the model's context" in str(e.value)
    assert "context_length_exceeded" in str(e.value)  # the server's own words are kept
