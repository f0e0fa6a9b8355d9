"""The model path of generated_queries against a scripted OpenAI-compatible endpoint: a model-written
question goes out only when it passes every check (`query_source` model), a leaking, ungrounded or malformed
one falls back to the template (`fallback`); rules write `template`; candidates are ranked by the scorer;
SEM/CMP/COND questions are composed in two stages; the prompt carries the self-check."""

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from factory.config import load_config
from factory.llm.schemas import AnswerMaterial, QueryWriterInput, TrajectoryStep
from factory.llm.service import LLM
from factory.model_config import ModelsConfig, OpenAIBackendConfig
from factory.synthesis.queries import _model_queries, build_queries
from tests.conftest import write_config
from tests.synthesis.test_phrasing import demo_inventories, demo_specs, osn_chain

GOOD = "How many airports are there in the same state or province as the airport with IATA code OSN?"


class Endpoint:
    """Chat completions answered by `write(request body)`; /completions scored by `score(text)` per word."""

    def __init__(self, write: Callable[[dict[str, Any]], str], score: Callable[[str], float] | None = None) -> None:
        self.write, self.score = write, score
        self.chats: list[dict[str, Any]] = []
        self.scored: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path.endswith("/completions") and "prompt" in body:
            text = body["prompt"]
            self.scored.append(text)
            assert self.score is not None
            tokens, lps = [text, "\n"], [self.score(text), 0.0]
            choice = {"index": 0, "text": text, "finish_reason": "length",
                      "logprobs": {"tokens": tokens, "token_logprobs": lps, "text_offset": [], "top_logprobs": []}}  # fmt: skip
            return httpx.Response(200, json={"id": "s", "object": "text_completion", "created": 0, "model": "m",
                                             "choices": [choice], "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                                            "total_tokens": 2}})  # fmt: skip
        self.chats.append(body)
        content = self.write(body)
        return httpx.Response(
            200,
            json={
                "id": "c", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )  # fmt: skip


def _llm(ep: Endpoint, roles: dict[str, str]) -> LLM:
    cfg = ModelsConfig(
        backends={"b": OpenAIBackendConfig(model="m", base_url="http://mock/v1", api_key_env=None)},
        roles=roles,
        max_retries=1,
        cache={"path": "unused.sqlite", "enabled": False},
    )
    return LLM(cfg, cache_path=None, http_client_factory=lambda: httpx.AsyncClient(transport=httpx.MockTransport(ep)))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    specs = demo_specs()
    cfg = load_config(write_config(tmp_path_factory.mktemp("mp")))
    t = osn_chain(specs, bridge_values=["KR", "Gyeonggi-do"])
    return cfg, {"trajectories": [t]}, demo_inventories()


def _run(world, ep: Endpoint, roles: dict[str, str]):
    cfg, trajectories, inventories = world
    return build_queries("aviation", trajectories, inventories, cfg, _llm(ep, roles))


def _reply(query: str) -> Callable[[dict[str, Any]], str]:
    return lambda body: json.dumps({"query": query, "answer": "x"})


def test_rules_write_template_queries(world):
    value, meta = _run(world, Endpoint(_reply(GOOD)), {})
    (task,) = value["tasks"]
    assert task["query_source"] == "template" and task["query"] == task["templated_query"]
    assert meta["query_sources"] == {"template": 1} and meta["fluency_scorer"].startswith("rules")
    assert task["answer"]["text"].endswith(".") and "9" in task["answer"]["text"] and task["answer"]["value"] == 9


def test_a_grounded_model_question_goes_out_as_model(world):
    ep = Endpoint(_reply(GOOD))
    value, meta = _run(world, ep, {"query_writer.en": "b"})
    (task,) = value["tasks"]
    assert task["query"] == GOOD and task["query_source"] == "model" and task["templated_query"] != GOOD
    assert task["lineage"]["models"]["query_writer"]["implementation"] == "model"
    system, user = ep.chats[0]["messages"][0]["content"], ep.chats[0]["messages"][1]["content"]
    # the prompt carries the frame, the verified answer and the self-check
    assert "Self-check" in system and "tie-breaking" in system and "30 characters" in system
    assert "OSN" in user and "Verified answer" in user and "9" in user


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("There are 9 airports in the province of the airport OSN, right?", "leak"),  # states the answer
        ("How many airports are in KR's province of the airport with code OSN?", "bridge"),  # a bridge value
        ("How many airports share a province with OSN, sorted by name?", "meta"),  # meta wording
        ("not json at all", "malformed"),
    ],
)
def test_a_bad_model_question_falls_back_to_the_template(world, reply, why):
    ep = Endpoint(lambda body: reply if why == "malformed" else json.dumps({"query": reply, "answer": "x"}))
    value, meta = _run(world, ep, {"query_writer.en": "b"})
    (task,) = value["tasks"]
    assert task["query_source"] == "fallback" and task["query"] == task["templated_query"], why
    assert meta["query_sources"] == {"fallback": 1} and meta["fallback_reasons"], why
    if why == "malformed":  # the role's guard rejects it (retried, then recorded with the raw text)
        assert len(ep.chats) == 2 and task["lineage"]["models"]["query_writer"]["failure"]["raw_text"] == reply
    else:  # the stage's grounding check rejects it (a one-digit answer is no leak to the role's guard)
        key = {"leak": "uncited_value", "bridge": "bridge_value", "meta": "meta_wording"}[why]
        assert key in meta["fallback_reasons"], meta["fallback_reasons"]


def test_candidates_are_ranked_by_the_scorer_and_the_best_kept(world):
    # the scorer prefers short questions; every variant is grounded
    ep = Endpoint(_reply(GOOD), score=lambda text: -len(text) / 50)
    value, meta = _run(world, ep, {"fluency_scorer.en": "b"})
    (task,) = value["tasks"]
    # the variants of the question (three written, the distinct ones scored: one request each)
    assert 2 <= len(ep.scored) == len(set(ep.scored)) <= 3
    best = min(ep.scored, key=len)
    assert task["query"] == best and task["fluency"] == pytest.approx(-len(best) / 50)
    assert task["lineage"]["models"]["fluency_scorer"]["implementation"] == "model"
    assert meta["query_metrics"]["en"]["fluency"]["scored"] == 1
    # every candidate below the threshold: the question is dropped with its reason
    low = Endpoint(_reply(GOOD), score=lambda text: -9.0)
    value, meta = _run(world, low, {"fluency_scorer.en": "b"})
    assert value["tasks"] == [] and value["rejected"][0]["reason"] == "disfluent"
    assert meta["rejection_reasons"] == {"disfluent": 1} and meta["fluency_dropped"] == 1


def _cmp_input() -> QueryWriterInput:
    return QueryWriterInput(
        pattern="CMP",
        steps=[TrajectoryStep(step=1, tool="count_customers", summary="customers of a country")],
        seed_values={"country": "Canada", "country (2)": "Norway"},
        qualifier="more",
        answer=AnswerMaterial(value="Canada", description="customers", options=["Canada", "Norway"]),
    )


def test_cmp_is_composed_in_two_stages():
    subs = {"customers for Canada": "How many customers are in Canada?",
            "customers for Norway": "How many customers are in Norway?"}  # fmt: skip

    def write(body: dict[str, Any]) -> str:
        user = body["messages"][1]["content"]
        for part, q in subs.items():
            if f"asks for: {part}" in user:
                assert "one step of a larger question" in user
                return json.dumps({"query": q, "answer": "x"})
        assert "Sub-questions, one per step" in user and all(q in user for q in subs.values())
        return json.dumps({"query": "Which country has more customers, Canada or Norway?", "answer": "x"})

    ep = Endpoint(write)
    ((query, res),) = _model_queries(_llm(ep, {"query_writer.en": "b"}), [_cmp_input()])
    assert query == "Which country has more customers, Canada or Norway?" and res.implementation == "model"
    assert len(ep.chats) == 3  # two sub-questions, then the composition
    # a failed sub-question fails the question (the stage falls back to the template)
    bad = Endpoint(lambda body: "no json")
    ((query, _),) = _model_queries(_llm(bad, {"query_writer.en": "b"}), [_cmp_input()])
    assert query == ""
