"""The fluency_scorer role: mean token logprob from /v1/completions (echo + logprobs), against a scripted
endpoint and the real embedded model; the llama.cpp launcher's fast logprob sort."""

import json
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from factory.llm.llama_server import fast_sorted, with_known_logprobs
from factory.llm.schemas import FluencyInput
from factory.llm.servers import ManagedServer
from factory.llm.service import LLM, text_logprob
from factory.model_config import ModelsConfig, OpenAIBackendConfig
from tests.llm.conftest import local_models


class CompletionsEndpoint:
    """An OpenAI-compatible /v1/completions that echoes the prompt word by word; each word's logprob is
    -len(word) / 2, so shorter words read as 'more fluent'. `status` other than 200 answers every request."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append({"path": request.url.path, **body})
        if self.status != 200:
            return httpx.Response(self.status, json={"error": {"message": "logprobs are not supported"}})
        prompt = body["prompt"]
        words = [w if i == 0 else " " + w for i, w in enumerate(prompt.split(" "))]
        tokens = [*words, "\n"]  # the echoed prompt, then one generated token
        lps: list[float | None] = [None] + [-len(w.strip()) / 2 for w in words[1:]] + [-0.1]
        return httpx.Response(
            200,
            json={
                "id": "c1",
                "object": "text_completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "text": prompt + "\n",
                        "finish_reason": "length",
                        "logprobs": {"tokens": tokens, "token_logprobs": lps, "text_offset": [], "top_logprobs": []},
                    }
                ],
                "usage": {"prompt_tokens": len(words), "completion_tokens": 1, "total_tokens": len(words) + 1},
            },
        )


def _llm(ep: CompletionsEndpoint, tmp_path: Path) -> LLM:
    cfg = ModelsConfig(
        backends={"b": OpenAIBackendConfig(model="m", base_url="http://mock/v1", api_key_env=None, score_prefix="Q: ")},
        roles={"fluency_scorer.en": "b"},
        cache={"path": str(tmp_path / "cache.sqlite")},
    )
    return LLM(
        cfg,
        state_dir=tmp_path / "srv",
        http_client_factory=lambda: httpx.AsyncClient(transport=httpx.MockTransport(ep)),
    )


def test_scores_come_from_echoed_logprobs_of_the_text_only(tmp_path: Path) -> None:
    ep = CompletionsEndpoint()
    llm = _llm(ep, tmp_path)
    r = llm.call("fluency_scorer", FluencyInput(texts=["How many albums?", "Enumerate discographical entries"]))
    assert r.implementation == "model" and r.backend == "b" and r.ok
    # the prefix 'Q:' and the generated token are not scored: (3 + 4 + 7) / 2 / 3 words
    assert r.output.scores[0] == pytest.approx(-(3 + 4 + 7) / 6)
    assert r.output.scores[0] > r.output.scores[1]
    req = ep.requests[0]
    assert req["path"] == "/v1/completions" and req["prompt"] == "Q: How many albums?"
    assert req["echo"] is True and req["logprobs"] == 0 and req["max_tokens"] == 1
    # cached: the same texts cost no request
    again = llm.call("fluency_scorer", FluencyInput(texts=["How many albums?"]))
    assert again.output.scores[0] == r.output.scores[0] and again.cache_hits == 1 and len(ep.requests) == 2
    # Korean is never routed to a model that cannot read it: rules, no score
    ko = llm.call("fluency_scorer", FluencyInput(texts=["앨범은 몇 개인가요?"], language="ko"))
    assert ko.implementation == "rules" and ko.output.scores == [None]


def test_an_endpoint_without_logprobs_falls_back_once_and_is_recorded(tmp_path: Path) -> None:
    ep = CompletionsEndpoint(status=400)
    llm = _llm(ep, tmp_path)
    with llm.track() as acct:
        first = llm.call("fluency_scorer", FluencyInput(texts=["How many albums?"]))
        second = llm.call("fluency_scorer", FluencyInput(texts=["How many tracks?"]))
    for r in (first, second):
        assert r.fallback and r.implementation == "rules" and r.output.scores == [None]
        assert r.failure is not None and "HTTP 400" in r.failure.error and "logprobs" in r.failure.error
    assert len(ep.requests) == 1  # the second text is not sent to an endpoint known not to score
    assert acct.metadata()["llm/fluency_scorer/fallbacks"] == 2


def test_text_logprob_reads_the_trailing_tokens_of_the_text() -> None:
    tokens = ["user", "\n", "Which", " has", " more", "?", "\n"]
    lps = [None, -1.0, -2.0, -3.0, -4.0, -5.0, -9.0]
    assert text_logprob(tokens, lps, "Which has more?", 1) == pytest.approx(-3.5)
    assert text_logprob(tokens, lps, "more?", 1) == pytest.approx(-4.5)
    assert text_logprob([], [], "x", 0) is None


def test_fast_sorted_orders_a_vocabulary_row_like_sorted() -> None:
    rng = np.random.default_rng(3)
    row = np.round(rng.normal(size=3000), 1).astype(np.float32)  # many ties
    fast = fast_sorted(zip(row, range(len(row)), strict=True), reverse=True)
    slow = sorted(zip(row.tolist(), range(len(row)), strict=True), reverse=True)
    assert fast == slow
    assert fast_sorted(zip(row, range(len(row)), strict=True)) == sorted(
        zip(row.tolist(), range(len(row)), strict=True)
    )
    # inside a non-streamed completion that asks for k alternatives: exactly the first k of them
    with_known_logprobs(lambda self, **kw: None)(None, logprobs=3)  # resets the thread's k afterwards
    seen: list[Any] = []

    def create(self: Any, **kw: Any) -> None:
        seen.append(fast_sorted(zip(row, range(len(row)), strict=True), reverse=True))

    with_known_logprobs(create)(None, prompt="x", logprobs=3)
    with_known_logprobs(create)(None, prompt="x", logprobs=0)
    with_known_logprobs(create)(None, prompt="x", logprobs=3, stream=True)  # streamed: consumed later, all sorted
    assert [p[0] for p in seen[0]] == [p[0] for p in slow[:3]] and seen[1] == [] and seen[2] == slow
    # anything else is the builtin
    assert fast_sorted([3, 1, 2], reverse=True) == [3, 2, 1]
    assert fast_sorted(zip([2, 1], ["a", "b"], strict=True)) == [(1, "b"), (2, "a")]
    assert fast_sorted(["b", "a"], key=str.upper) == ["a", "b"]


def test_the_embedded_model_prefers_a_fluent_question(local_server: ManagedServer, tmp_path: Path) -> None:
    port = int(local_server.base_url.rsplit(":", 1)[1].split("/")[0])
    llm = LLM(local_models(port, tmp_path / "c.sqlite", **{"fluency_scorer.en": "local"}), state_dir=tmp_path / "s")
    texts = ["How many albums does AC/DC have?", "albums AC/DC how many have does?"]
    r = llm.call("fluency_scorer", FluencyInput(texts=texts))
    assert r.implementation == "model" and r.model == "SmolLM2-135M-Instruct" and r.ok
    s = r.output.scores
    assert all(isinstance(x, float) and -15 < x < 0 for x in s)
    assert s[0] > s[1] + 1.0  # word salad scores lower (measured: about -3 against -7.5)
    llm.close()
