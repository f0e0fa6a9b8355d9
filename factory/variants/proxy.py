"""The schema proxy (Action-Space Shaping, App. D.4): an OpenAI-compatible server that puts a schema variant
between any chat harness and an upstream OpenAI-compatible model endpoint.

    factory proxy --domain music --variant transaction_all --upstream http://127.0.0.1:8080/v1 --port 8790

A ``POST /v1/chat/completions`` request is one *turn*:

1. the request's ``tools`` are replaced by the variant's schema (the client's own tools, if any, are
   ignored: the proxy serves the domain's tools in the variant's form);
2. the conversation goes to the upstream model; every tool call it makes is decoded by the execution
   adapter (`factory.variants.adapter.AdapterSession`): a protocol step (begin/set/commit a transaction,
   resolve a reference, list a service's methods) is answered by the proxy itself, a call that decodes
   to a native action is executed through the real executor (the demo service, MCP servers, any
   configured source), an off-schema call is rejected (mode ``normal``) or executed when it is itself a
   valid native call (mode ``schema_form``, App. E.1); each answer goes back to the model as a tool
   message;
3. this repeats until the model answers without a tool call, or after `max_model_calls` (8) model
   calls in the turn.

The reply is a standard ``chat.completion`` whose message is the model's final answer
(``finish_reason`` ``stop``; ``length`` when the cap ended the turn), plus a ``schema_proxy`` object:
the turn's transcript in the variant's shape (assistant messages with the *variant* tool calls, tool
messages with what each returned: append them to the history to continue the conversation, so the
model sees its own variant calls), one step per call (what it decoded to, or why it was rejected), the
native actions executed, the model-call count, why the turn stopped, and the final state hash of every
stateful platform.

Each request is one executor episode: a state change made in a turn does not carry into the next
request. Protocol state does: the decoder is rebuilt by replaying the variant calls in the request's
history (handles and transaction ids are numbered per session, so the replay gives the same ones);
nothing in the history is executed again.

Selecting the variant: the server's ``--variant`` (and ``--mode``) are the defaults; a request may name
another with the ``X-Factory-Variant`` (``X-Factory-Mode``) header. Errors are OpenAI-style
``{"error": {message, type, param, code}}`` bodies: 404 ``unknown_variant``, 400 for a malformed
request, 502 ``upstream_unreachable`` / ``upstream_error`` / ``upstream_malformed_reply``, 504
``upstream_timeout``; an upstream 4xx (a wrong key, an unknown model) keeps its status. The upstream key
(the configured one, or the client's ``Authorization`` header, forwarded) is registered with the log
redaction and never logged.
"""

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import httpx

from factory.redaction import register_secret
from factory.variants.adapter import MODES, AdapterSession, ExecuteFn, ExecutorWorld, Mode, World, state_specs
from factory.variants.core import Call, Catalog, NotApplicable, Reject, Reply, Variant, VariantError
from factory.variants.grid import observation

log = logging.getLogger(__name__)

MAX_MODEL_CALLS = 8
VARIANT_HEADER = "x-factory-variant"
MODE_HEADER = "x-factory-mode"
EXTENSION = "schema_proxy"
#: request fields forwarded to the upstream as they are (tools and tool_choice are the proxy's)
FORWARDED = (
    "model",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "parallel_tool_calls",
    "user",
)


class ProxyError(Exception):
    """An error the proxy answers with an OpenAI-style error body and an HTTP status."""

    def __init__(
        self, status: int, message: str, code: str, *, param: str | None = None, kind: str | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param
        self.kind = kind or ("invalid_request_error" if status < 500 else "upstream_error")

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class ProxySettings:
    upstream: str  # the upstream's base URL as an OpenAI client takes it (…/v1)
    variant: str = "native"  # the default variant (a request's X-Factory-Variant header overrides it)
    mode: Mode = "normal"
    max_model_calls: int = MAX_MODEL_CALLS
    instruction: bool = False  # append the variant's one-sentence instruction to the system message
    upstream_key: str | None = None  # None: forward the client's Authorization header
    timeout_s: float = 120.0
    max_observation_chars: int = 3000

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"proxy mode must be one of {MODES}, got {self.mode!r}")
        if self.max_model_calls < 1:
            raise ValueError("max_model_calls must be at least 1")
        if not self.upstream.startswith(("http://", "https://")):
            raise ValueError(
                f"upstream must be an http(s) base URL such as http://127.0.0.1:8080/v1, got {self.upstream!r}"
            )


class VariantBook:
    """The variants of one domain's native catalog, built on first use and kept."""

    def __init__(self, native: Catalog, embed: Callable[[list[str]], Any] | None = None) -> None:
        self.native, self.embed = native, embed
        self._built: dict[str, Variant] = {}

    def known(self) -> list[str]:
        from factory.variants.registry import VARIANT_IDS

        return ["native", *VARIANT_IDS]

    def get(self, vid: str) -> Variant:
        if vid in self._built:
            return self._built[vid]
        from factory.variants.registry import build_variants, recipe

        if vid != "native":
            try:
                rec = recipe(vid)
            except KeyError:
                raise ProxyError(
                    404,
                    f"unknown schema variant {vid!r}; known: {', '.join(self.known())}",
                    "unknown_variant",
                    param=VARIANT_HEADER,
                ) from None
            if rec.needs_embedder and self.embed is None:
                raise ProxyError(
                    404,
                    f"schema variant {vid!r} needs the embedding model, which this proxy was started without",
                    "unknown_variant",
                    param=VARIANT_HEADER,
                )
        try:
            built, skipped = build_variants(self.native, self.embed, [vid])
        except (NotApplicable, VariantError) as e:
            raise ProxyError(404, f"schema variant {vid!r}: {e}", "unknown_variant", param=VARIANT_HEADER) from None
        found = next((v for v in built if v.id == vid), None)
        if found is None:
            why = skipped.get(vid, "it does not apply")
            raise ProxyError(
                404,
                f"schema variant {vid!r} does not apply to domain {self.native.domain!r}: {why}",
                "unknown_variant",
                param=VARIANT_HEADER,
            )
        self._built[vid] = found
        return found


# --------------------------------------------------------------------------- one turn


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """A tool call's arguments as an object (None when they are not a JSON object)."""
    if isinstance(raw, dict):
        return raw
    try:
        args = json.loads(raw or "{}")
    except (json.JSONDecodeError, TypeError):
        return None
    return args if isinstance(args, dict) else None


def upstream_message(reply: Any) -> tuple[dict[str, Any], dict[str, int], str]:
    """(assistant message, usage, model) of an upstream chat.completion; ProxyError 502 when it is not one."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProxyError(502, "the upstream's reply has no choices[0]", "upstream_malformed_reply")
    msg = choices[0].get("message")
    if not isinstance(msg, dict):
        raise ProxyError(502, "the upstream's reply has no choices[0].message object", "upstream_malformed_reply")
    calls = msg.get("tool_calls") or []
    if not isinstance(calls, list) or any(
        not isinstance(c, dict) or not isinstance(c.get("function"), dict) for c in calls
    ):
        raise ProxyError(502, "the upstream's tool_calls are not a list of function calls", "upstream_malformed_reply")
    usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
    counts = {k: int(v) for k, v in usage.items() if k.endswith("_tokens") and isinstance(v, int)}
    return msg, counts, str(reply.get("model") or "")


def _tool_calls(history: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    return [
        (str((tc.get("function") or {}).get("name") or ""), (tc.get("function") or {}).get("arguments"))
        for m in history
        if m.get("role") == "assistant"
        for tc in (m.get("tool_calls") or [])
        if isinstance(tc, dict)
    ]


def replay_history(session: AdapterSession, history: Sequence[Mapping[str, Any]]) -> int:
    """Bring the session's protocol state up to the history's variant calls (nothing executed); the count."""
    n = 0
    for name, raw in _tool_calls(history):
        args = parse_arguments(raw)
        if args is not None:
            session.decode(Call(name, args))
            n += 1
    return n


def _with_instruction(messages: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    if not instruction:
        return messages
    if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
        return [{**messages[0], "content": f"{messages[0]['content']} {instruction}"}, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]


@dataclass
class Turn:
    """What one proxied turn did."""

    messages: list[dict[str, Any]] = field(default_factory=list)  # the variant-shaped transcript
    steps: list[dict[str, Any]] = field(default_factory=list)
    native_actions: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)
    model_calls: int = 0
    stop: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    model: str = ""


class SchemaProxy:
    """The proxy's logic, independent of the HTTP framework: `complete(body, headers)` → chat.completion."""

    def __init__(self, settings: ProxySettings, variants: VariantBook) -> None:
        self.settings, self.variants = settings, variants
        self.world: World | None = None
        self.http: httpx.AsyncClient | None = None
        if settings.upstream_key:
            register_secret(settings.upstream_key)

    @property
    def domain(self) -> str:
        return self.variants.native.domain

    # ------------------------------------------------------------------ upstream

    def _headers(self, client_headers: Mapping[str, str]) -> dict[str, str]:
        if self.settings.upstream_key:
            return {"Authorization": f"Bearer {self.settings.upstream_key}"}
        auth = client_headers.get("authorization")
        if auth:
            register_secret(auth.split(" ", 1)[-1])
            register_secret(auth)
            return {"Authorization": auth}
        return {}

    async def _upstream(self, method: str, path: str, headers: Mapping[str, str], body: Any = None) -> Any:
        if self.http is None:
            raise RuntimeError("SchemaProxy is not open (serve it with create_app)")
        url = self.settings.upstream.rstrip("/") + path
        try:
            r = await self.http.request(method, url, json=body, headers=dict(headers))
        except httpx.TimeoutException as e:
            raise ProxyError(
                504,
                f"the upstream model endpoint {self.settings.upstream} timed out ({type(e).__name__})",
                "upstream_timeout",
            ) from None
        except httpx.HTTPError as e:
            raise ProxyError(
                502,
                f"the upstream model endpoint {self.settings.upstream} is unreachable ({type(e).__name__})",
                "upstream_unreachable",
            ) from None
        try:
            data = r.json()
        except ValueError:
            data = None
        if r.status_code >= 400:
            detail = ""
            if isinstance(data, dict):
                err = data.get("error")
                detail = str(err.get("message") if isinstance(err, dict) else err or data.get("detail") or "")
            detail = detail or r.text[:200]
            status = r.status_code if r.status_code < 500 else 502
            raise ProxyError(
                status,
                f"the upstream answered {r.status_code}: {detail}"[:500],
                "upstream_error",
                kind="invalid_request_error" if status < 500 else "upstream_error",
            )
        if data is None:
            raise ProxyError(502, f"the upstream's reply to {path} is not JSON", "upstream_malformed_reply")
        return data

    async def models(self, client_headers: Mapping[str, str]) -> Any:
        return await self._upstream("GET", "/models", self._headers(client_headers))

    # ------------------------------------------------------------------ a turn

    def _request(self, body: Any, headers: Mapping[str, str]) -> tuple[Variant, Mode, list[dict[str, Any]]]:
        if not isinstance(body, dict):
            raise ProxyError(400, "the request body must be a JSON object", "invalid_request")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            raise ProxyError(
                400, "messages must be a non-empty list of message objects", "invalid_request", param="messages"
            )
        if body.get("stream"):
            raise ProxyError(400, "the schema proxy does not stream: send stream=false", "unsupported", param="stream")
        if body.get("n") not in (None, 1):
            raise ProxyError(400, "the schema proxy answers one choice per request (n=1)", "unsupported", param="n")
        mode = headers.get(MODE_HEADER) or self.settings.mode
        if mode not in MODES:
            raise ProxyError(
                400, f"{MODE_HEADER} must be one of {', '.join(MODES)}, got {mode!r}", "invalid_mode", param=MODE_HEADER
            )
        variant = self.variants.get(headers.get(VARIANT_HEADER) or self.settings.variant)
        return variant, cast(Mode, mode), [dict(m) for m in messages]

    def _tool_choice(self, body: Mapping[str, Any], variant: Variant) -> Any:
        choice = body.get("tool_choice")
        if choice is None or choice in ("auto", "none", "required"):
            return choice
        name = (choice.get("function") or {}).get("name") if isinstance(choice, dict) else None
        if name and variant.schema.get(str(name)) is not None:
            return choice
        raise ProxyError(
            400,
            f"tool_choice must be auto, none, required or a function of variant {variant.id!r}",
            "invalid_tool_choice",
            param="tool_choice",
        )

    async def complete(self, body: Any, headers: Mapping[str, str]) -> dict[str, Any]:
        """One turn (module doc) → the chat.completion with the `schema_proxy` extension."""
        if self.world is None:
            raise RuntimeError("SchemaProxy is not open (serve it with create_app)")
        headers = {k.lower(): v for k, v in headers.items()}
        variant, mode, history = self._request(body, headers)
        first_choice = self._tool_choice(body, variant)
        session = AdapterSession(variant, self.variants.native, mode)
        replayed = replay_history(session, history)
        instruction = variant.instruction if self.settings.instruction else ""
        base = {k: body[k] for k in FORWARDED if k in body}
        base["tools"] = variant.schema.definitions()
        auth = self._headers(headers)
        s = self.settings

        async def run(execute: ExecuteFn) -> Turn:
            turn = Turn(stop="max_model_calls")
            convo = _with_instruction(history, instruction)
            for n in range(s.max_model_calls):
                request = {**base, "messages": convo + turn.messages}
                if n == 0 and first_choice is not None:
                    request["tool_choice"] = first_choice
                msg, usage, model = upstream_message(await self._upstream("POST", "/chat/completions", auth, request))
                turn.model_calls += 1
                turn.model = model or turn.model
                for k, v in usage.items():
                    turn.usage[k] = turn.usage.get(k, 0) + v
                calls = msg.get("tool_calls") or []
                if not calls:
                    turn.final, turn.stop = {"role": "assistant", "content": msg.get("content")}, "answered"
                    break
                sent = [
                    {
                        "id": str(tc.get("id") or f"call_{n}_{j}"),
                        "type": "function",
                        "function": {
                            "name": str(tc["function"].get("name") or ""),
                            "arguments": tc["function"].get("arguments")
                            if isinstance(tc["function"].get("arguments"), str)
                            else json.dumps(tc["function"].get("arguments") or {}, ensure_ascii=False),
                        },
                    }
                    for j, tc in enumerate(calls)
                ]
                turn.messages.append({"role": "assistant", "content": msg.get("content"), "tool_calls": sent})
                for tc in sent:
                    content = await self._one_call(session, tc, execute, turn)
                    turn.messages.append({"role": "tool", "tool_call_id": tc["id"], "content": content})
            if not turn.final:
                turn.final = {"role": "assistant", "content": None}
            return turn

        turn, state = await self.world.episode(run)
        log.info(
            "schema proxy: %s variant %s (%s): %d model call(s), %d native action(s), stop %s",
            self.domain,
            variant.id,
            mode,
            turn.model_calls,
            len(turn.native_actions),
            turn.stop,
        )
        return {
            "id": f"chatcmpl-proxy-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": turn.model or str(body.get("model") or ""),
            "choices": [
                {"index": 0, "message": turn.final, "finish_reason": "stop" if turn.stop == "answered" else "length"}
            ],
            "usage": {k: turn.usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")},
            EXTENSION: {
                "domain": self.domain,
                "variant": variant.id,
                "mode": mode,
                "model_calls": turn.model_calls,
                "max_model_calls": s.max_model_calls,
                "stop": turn.stop,
                "history_calls_replayed": replayed,
                "messages": turn.messages,
                "steps": turn.steps,
                "native_actions": turn.native_actions,
                "state": state,
            },
        }

    async def _one_call(self, session: AdapterSession, tc: dict[str, Any], execute: ExecuteFn, turn: Turn) -> str:
        """Decode one variant call, answer or execute it; the tool message's content."""
        fn = tc["function"]
        args = parse_arguments(fn["arguments"])
        step: dict[str, Any] = {
            "id": tc["id"],
            "name": fn["name"],
            "arguments": args if args is not None else fn["arguments"],
        }
        turn.steps.append(step)
        if args is None:
            out: Any = Reject("arguments are not a JSON object", "schema")
            off = False
        else:
            out, off = session.decode(Call(fn["name"], args))
        if isinstance(out, Reject):
            step.update(kind="rejected", reason=out.reason, reject_kind=out.kind)
            return json.dumps({"error": out.reason}, ensure_ascii=False)
        if isinstance(out, Reply):
            step.update(kind="reply", reply=out.payload)
            return json.dumps(out.payload, ensure_ascii=False, default=str)
        result = await execute(out.call)
        native = {"operation": out.call.name, "arguments": out.call.arguments}
        turn.native_actions.append(native)
        step.update(kind="executed", native=native, off_schema=off, ok=result.get("ok"), outcome=result.get("outcome"))
        return observation(result, self.settings.max_observation_chars)


# --------------------------------------------------------------------------- serving

OpenWorld = Callable[[], AbstractAsyncContextManager[World]]


def executor_world(make_executor: Callable[[], Any], specs: Sequence[Any]) -> OpenWorld:
    """A world over a live `ToolExecutor` (from `executor_factory`), opened for the server's life."""

    @asynccontextmanager
    async def open_world() -> AsyncIterator[World]:
        async with make_executor() as ex:
            yield ExecutorWorld(ex, {s.name: s for s in specs}, state_specs(specs))

    return open_world


def create_app(proxy: SchemaProxy, open_world: OpenWorld) -> Any:
    """The FastAPI app: `/v1/chat/completions`, `/v1/models`, and `/health`."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with open_world() as world, httpx.AsyncClient(timeout=proxy.settings.timeout_s) as http:
            proxy.world, proxy.http = world, http
            try:
                yield
            finally:
                proxy.world, proxy.http = None, None

    app = FastAPI(title="toolcall-factory schema proxy", lifespan=lifespan, docs_url=None, redoc_url=None)

    @app.exception_handler(ProxyError)
    async def _proxy_error(_: Request, e: ProxyError) -> JSONResponse:
        return JSONResponse(e.body(), status_code=e.status)

    @app.exception_handler(Exception)
    async def _internal(_: Request, e: Exception) -> JSONResponse:  # logged by the server, with secrets redacted
        err = ProxyError(
            500, f"schema proxy internal error ({type(e).__name__})", "internal_error", kind="server_error"
        )
        return JSONResponse(err.body(), status_code=500)

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            raise ProxyError(400, "the request body is not valid JSON", "invalid_json") from None
        return JSONResponse(await proxy.complete(body, dict(request.headers)))

    @app.get("/v1/models")
    async def models(request: Request) -> JSONResponse:
        return JSONResponse(await proxy.models(dict(request.headers)))

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {
            "domain": proxy.domain,
            "variant": proxy.settings.variant,
            "mode": proxy.settings.mode,
            "max_model_calls": proxy.settings.max_model_calls,
        }

    return app
