"""The schema proxy (factory/variants/proxy.py) between the real `openai` client and a scripted
OpenAI-compatible upstream (tests/eval/scripted.py): variant calls in, native actions executed against
the real demo app (served in-process on a loopback port), the variant-shaped reply out; the 8-call cap;
off-schema calls rejected in normal mode and decoded in schema-form mode; OpenAI-style errors."""

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest
import uvicorn
from fastapi import Request
from fastapi.responses import JSONResponse

from factory.config import DemoConfig, ExecutorConfig
from factory.tools.executor import ToolExecutor
from factory.tools.openapi import fetch_spec, load_openapi
from factory.tools.spec import ToolSpec
from factory.variants.actions import as_trace, native_actions, native_catalog
from factory.variants.adapter import AdapterSession, run_trace
from factory.variants.core import Call, Variant, canonical
from factory.variants.proxy import (
    MAX_MODEL_CALLS,
    ProxyError,
    ProxySettings,
    SchemaProxy,
    VariantBook,
    create_app,
    executor_world,
    upstream_message,
)
from tests.conftest import free_port
from tests.eval.scripted import ScriptedServer

MUSIC = ("chinook-catalog", "chinook-store")
EXECUTOR = ExecutorConfig(timeout_s=20.0, max_retries=0)
KEY = "sk-proxy-test-7f3a9c1e5b2d4a68"


class Served:
    """An ASGI app served by uvicorn in a thread on a free loopback port (its lifespan run or not)."""

    def __init__(self, app: Any, lifespan: str = "on") -> None:
        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan=lifespan)
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.02)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


class Upstream(ScriptedServer):
    """The scripted model server, also recording each request's Authorization header."""

    def __init__(self) -> None:
        super().__init__()
        self.auth: list[str | None] = []

    async def _chat(self, request: Request) -> JSONResponse:
        self.auth.append(request.headers.get("authorization"))
        return await super()._chat(request)


class World:
    def __init__(self) -> None:
        from factory.demo.app import create_app as demo_app

        # the real demo app; no lifespan: its data loads on the first request instead of in a warm-up thread
        self.demo = Served(demo_app(DemoConfig()), lifespan="off")
        self.specs: list[ToolSpec] = []
        for p in MUSIC:
            doc = fetch_spec(f"{self.demo.url}/{p}/openapi.json")
            self.specs += load_openapi(
                doc,
                domain="music",
                platform=p,
                spec_locator=f"{self.demo.url}/{p}/openapi.json",
                base_url=f"{self.demo.url}/{p}",
            )
        self.native = native_catalog("music", self.specs)
        self.book = VariantBook(self.native)
        self.upstream = Upstream().start()
        self.proxies: list[Served] = []

    def proxy(self, upstream: str | None = None, **settings: Any) -> str:
        """A proxy served on its own port; its OpenAI base URL."""
        s = ProxySettings(upstream=upstream or self.upstream.base_url, **settings)
        make = lambda: ToolExecutor(self.specs, EXECUTOR)  # noqa: E731
        served = Served(create_app(SchemaProxy(s, self.book), executor_world(make, self.specs)))
        self.proxies.append(served)
        return f"{served.url}/v1"

    def stop(self) -> None:
        for p in self.proxies:
            p.stop()
        self.upstream.stop()
        self.demo.stop()


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    w = World()
    try:
        yield w
    finally:
        w.stop()


@pytest.fixture(scope="module")
def proxy_url(world: World) -> str:
    return world.proxy(variant="transaction_over_references")


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key=KEY, max_retries=0, timeout=60)


def filled_trace(variant: Variant, world: World, gold: list[Any]) -> list[Call]:
    """The task's golden trace encoded into `variant`, references filled with what the protocol steps answer
    (handles and transaction ids are numbered per session: the proxy's session answers the same)."""

    async def fake(_: Call) -> dict[str, Any]:
        return {}

    run = asyncio.run(run_trace(AdapterSession(variant, world.native), variant.encoder(as_trace(gold)), fake))
    assert not run.rejected
    return [s.call for s in run.steps]


def script_calls(calls: list[Call]) -> dict[str, Any]:
    return {"tool_calls": [{"name": c.name, "arguments": c.arguments} for c in calls]}


def ext(resp: Any) -> dict[str, Any]:
    return dict(resp.model_extra["schema_proxy"])


def test_variant_calls_in_native_execution_against_the_demo_variant_shaped_reply_out(
    world: World, proxy_url: str, demo_data: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    task = demo_data["tasks"]["music"][1]  # search_tracks, then the albums of the track's artist
    gold = native_actions(task, {(s.platform, s.name): s for s in world.specs})
    variant = world.book.get("transaction_over_references")
    trace = filled_trace(variant, world, gold)
    assert {c.name for c in trace} >= {"begin_transaction", "set_argument", "commit_transaction"}
    query = "Which albums does the artist of the track Different World have?"
    world.upstream.script(query, [script_calls(trace), "ANSWER: done"])

    resp = client(proxy_url).chat.completions.create(
        model="scripted-model",
        messages=[{"role": "user", "content": query}],
        tools=[t.definition() for t in world.native.tools],  # the client's own tools: replaced by the variant's
    )
    assert resp.choices[0].message.content == "ANSWER: done" and resp.choices[0].finish_reason == "stop"
    x = ext(resp)
    assert x["variant"] == "transaction_over_references" and x["model_calls"] == 2 and x["stop"] == "answered"
    # native actions: exactly the task's a*, decoded from the protocol calls
    assert [canonical(a["operation"], a["arguments"]) for a in x["native_actions"]] == [a.key() for a in gold]
    kinds = [s["kind"] for s in x["steps"]]
    assert kinds.count("executed") == len(gold) and kinds.count("reply") == len(trace) - len(gold)
    assert "rejected" not in kinds
    # executed against the real demo: the results are what the demo answers to the native calls directly
    direct = asyncio.run(_direct(world, gold))
    tool_msgs = {m["tool_call_id"]: json.loads(m["content"]) for m in x["messages"] if m["role"] == "tool"}
    executed = [s for s in x["steps"] if s["kind"] == "executed"]
    assert [tool_msgs[s["id"]]["records"] for s in executed] == direct
    assert all(direct) and all(s["ok"] for s in executed)
    # the reply is variant-shaped: the assistant message carries the variant's calls, one tool message each
    assistant = [m for m in x["messages"] if m["role"] == "assistant"]
    assert len(assistant) == 1 and [c["function"]["name"] for c in assistant[0]["tool_calls"]] == [
        c.name for c in trace
    ]
    assert len(tool_msgs) == len(trace)
    assert x["state"].get("chinook-store")  # the stateful platform's final state hash, read in the episode
    # the upstream saw the variant's tools, never the native ones, and its own variant calls in its history
    reqs = world.upstream.requests_for(query)
    assert len(reqs) == 2
    assert sorted(t["function"]["name"] for t in reqs[0]["tools"]) == sorted(variant.schema.names)
    assert not {"search_tracks", "list_artist_albums"} & {t["function"]["name"] for t in reqs[0]["tools"]}
    assert reqs[1]["messages"][1]["tool_calls"][0]["function"]["name"] == trace[0].name
    # the client's key went upstream as the bearer credential and into no log line
    assert world.upstream.auth[-1] == f"Bearer {KEY}"
    assert KEY not in caplog.text


async def _direct(world: World, gold: list[Any]) -> list[Any]:
    async with ToolExecutor(world.specs, EXECUTOR) as ex:
        return [(await ex.call(a.operation, a.arguments)).records for a in gold]


def test_at_most_eight_model_calls_per_turn(world: World, proxy_url: str) -> None:
    service = world.book.get("schema_discovery").schema.tool("list_methods").properties["service"]["enum"][0]
    query = "a model that lists methods forever"
    world.upstream.script(query, [{"tool_calls": [{"name": "list_methods", "arguments": {"service": service}}]}])
    resp = client(proxy_url).chat.completions.create(
        model="scripted-model",
        messages=[{"role": "user", "content": query}],
        extra_headers={"X-Factory-Variant": "schema_discovery"},
    )
    x = ext(resp)
    assert len(world.upstream.requests_for(query)) == MAX_MODEL_CALLS == x["model_calls"] == 8
    assert x["stop"] == "max_model_calls" and resp.choices[0].finish_reason == "length"
    assert [s["kind"] for s in x["steps"]] == ["reply"] * MAX_MODEL_CALLS and x["native_actions"] == []


def test_off_schema_call_rejected_in_normal_mode_decoded_in_schema_form(world: World, proxy_url: str) -> None:
    native_call = {"name": "search_tracks", "arguments": {"name": "Different World", "page": 1, "per_page": 100}}
    query = "a model that writes a native call under a fully merged schema"
    world.upstream.script(query, [{"tool_calls": [native_call]}, "ANSWER: x"])
    ask = dict(model="scripted-model", messages=[{"role": "user", "content": query}])
    normal = ext(
        client(proxy_url).chat.completions.create(**ask, extra_headers={"X-Factory-Variant": "merge_full_flat"})
    )
    [step] = normal["steps"]
    assert step["kind"] == "rejected" and step["reject_kind"] == "routing" and normal["native_actions"] == []
    assert "error" in json.loads(normal["messages"][1]["content"])
    decoded = ext(
        client(proxy_url).chat.completions.create(
            **ask, extra_headers={"X-Factory-Variant": "merge_full_flat", "X-Factory-Mode": "schema_form"}
        )
    )
    [step] = decoded["steps"]
    assert step["kind"] == "executed" and step["off_schema"] and step["ok"]
    assert decoded["native_actions"] == [{"operation": "search_tracks", "arguments": native_call["arguments"]}]


def test_protocol_state_carries_over_turns_and_state_changes_run_in_the_turns_episode(
    world: World, proxy_url: str
) -> None:
    v = world.book.get("transaction_all")
    first = "create a playlist, then say so"
    begin = {"name": "begin_transaction", "arguments": {"operation": "create_playlist"}}
    write = {"name": "set_argument", "arguments": {"transaction_id": "txn_1", "name": "name", "value": "Proxy mix"}}
    commit = {"name": "commit_transaction", "arguments": {"transaction_id": "txn_1"}}
    # turn 1 opens the transaction and writes the name; turn 2 commits the transaction turn 1 opened
    world.upstream.script(
        first, [{"tool_calls": [begin, write]}, "ANSWER: ready", {"tool_calls": [commit]}, "ANSWER: made"]
    )
    c = client(proxy_url)
    hdr = {"X-Factory-Variant": v.id}
    t1 = c.chat.completions.create(model="m", messages=[{"role": "user", "content": first}], extra_headers=hdr)
    x1 = ext(t1)
    assert [s["kind"] for s in x1["steps"]] == ["reply", "reply"] and x1["native_actions"] == []
    history = [{"role": "user", "content": first}, *x1["messages"], {"role": "assistant", "content": "ANSWER: ready"}]
    t2 = c.chat.completions.create(
        model="m", messages=[*history, {"role": "user", "content": "commit it"}], extra_headers=hdr
    )
    x2 = ext(t2)
    assert x2["history_calls_replayed"] == 2
    assert x2["native_actions"] == [{"operation": "create_playlist", "arguments": {"name": "Proxy mix"}}]
    assert x2["steps"][0]["ok"] and t2.choices[0].message.content == "ANSWER: made"
    # the state change shows in this turn's final state, not in a turn that changed nothing
    assert x2["state"]["chinook-store"] != x1["state"]["chinook-store"]
    # without the history the same commit names no open transaction: a protocol rejection
    alone = "commit without history"
    world.upstream.script(alone, [{"tool_calls": [commit]}, "ANSWER: no"])
    x3 = ext(c.chat.completions.create(model="m", messages=[{"role": "user", "content": alone}], extra_headers=hdr))
    assert x3["steps"][0]["kind"] == "rejected" and x3["steps"][0]["reject_kind"] == "protocol"


def test_errors_are_openai_style(world: World, proxy_url: str) -> None:
    c = client(proxy_url)
    ask = dict(model="m", messages=[{"role": "user", "content": "unscripted conversation"}])
    before = len(world.upstream.requests)
    with pytest.raises(openai.NotFoundError) as unknown:
        c.chat.completions.create(**ask, extra_headers={"X-Factory-Variant": "no_such_variant"})
    assert unknown.value.status_code == 404 and unknown.value.code == "unknown_variant"
    assert "no_such_variant" in unknown.value.message and "merge_full_flat" in unknown.value.message
    assert len(world.upstream.requests) == before  # nothing was sent upstream
    with pytest.raises(openai.BadRequestError) as upstream_400:  # the upstream's own 4xx keeps its status
        c.chat.completions.create(**ask)
    assert upstream_400.value.code == "upstream_error" and "no script" in upstream_400.value.message
    with pytest.raises(openai.BadRequestError) as bad_mode:
        c.chat.completions.create(**ask, extra_headers={"X-Factory-Mode": "sideways"})
    assert bad_mode.value.code == "invalid_mode"
    with pytest.raises(openai.BadRequestError) as streaming:
        c.chat.completions.create(**ask, stream=True)
    assert streaming.value.code == "unsupported"
    dead = world.proxy(upstream=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(openai.APIStatusError) as unreachable:
        client(dead).chat.completions.create(**ask)
    assert unreachable.value.status_code == 502 and unreachable.value.code == "upstream_unreachable"


def test_a_malformed_upstream_reply_is_a_502() -> None:
    for bad in (
        {},
        {"choices": []},
        {"choices": [{"message": "text"}]},
        {"choices": [{"message": {"tool_calls": [1]}}]},
    ):
        with pytest.raises(ProxyError) as e:
            upstream_message(bad)
        assert e.value.status == 502 and e.value.code == "upstream_malformed_reply"
    msg, usage, model = upstream_message(
        {"model": "m", "choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": 3, "total_tokens": 5}}
    )
    assert msg["content"] == "hi" and usage == {"prompt_tokens": 3, "total_tokens": 5} and model == "m"
    with pytest.raises(ValueError, match="mode"):
        ProxySettings(upstream="http://127.0.0.1:1/v1", mode="sideways")  # type: ignore[arg-type]


def test_proxy_cli_names_what_is_wrong(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from factory.cli import main
    from tests.conftest import write_config

    cfg = write_config(tmp_path)
    base = ["proxy", "--config", str(cfg), "--upstream", "http://127.0.0.1:1/v1"]
    cases = [
        (["--variant", "no_such_variant"], ["no_such_variant", "merge_full_flat"]),
        (["--variant", "native", "--upstream", "ftp://x"], ["http(s) base URL"]),
        (["--variant", "native", "--upstream-key-env", "FACTORY_TEST_UNSET_KEY_9"], ["not set"]),
        (["--variant", "merge_full_flat"], ["--domain", "3 domains", "music"]),
        (["--variant", "merge_full_flat", "--domain", "nowhere"], ["no domain 'nowhere'"]),
        (["--variant", "native", "--domain", "music"], ["no tool_inventory", "factory run"]),
    ]
    for extra, words in cases:
        assert main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err
        assert all(w in err for w in words), (extra, err)


def test_models_are_the_upstreams_and_the_instruction_joins_the_system_message(world: World) -> None:
    url = world.proxy(variant="transaction_all", instruction=True)
    assert [m.id for m in client(url).models.list()] == ["scripted-model"]
    query = "say hello under the transaction schema"
    world.upstream.script(query, ["ANSWER: hello"])
    system = "You answer questions."
    resp = client(url).chat.completions.create(
        model="m", messages=[{"role": "system", "content": system}, {"role": "user", "content": query}]
    )
    assert resp.choices[0].message.content == "ANSWER: hello"
    sent = world.upstream.requests_for(query)[0]["messages"][0]["content"]
    instruction = world.book.get("transaction_all").instruction
    assert instruction and sent == f"{system} {instruction}"
