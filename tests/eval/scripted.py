"""A scripted OpenAI-compatible chat server: a real FastAPI app served by uvicorn on loopback.

Each conversation is identified by its first user message (a script key equal to it, or
contained in it; the longest such key wins). The reply to a request is the script's entry at
the number of assistant messages already in the conversation; past the end the last entry
repeats, so a one-entry script is a model that never stops. Entries:

- a string: the assistant's text;
- {"tool_calls": [{"name", "arguments"}], "content"?}: structured calls (ids call_<turn>_<j>,
  arguments serialized to JSON unless already a string);
- {"status": 500}: an HTTP error; {"delay": seconds, ...}: answer late.
"""

import asyncio
import json
import threading
import time
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.conftest import free_port

Reply = str | dict[str, Any]


class ScriptedServer:
    def __init__(self, model: str = "scripted-model") -> None:
        self.model = model
        self.scripts: dict[str, list[Reply]] = {}
        self.requests: list[dict[str, Any]] = []
        self.port = free_port()
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self._chat)
        self.app.get("/v1/models")(self._models)
        self._server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False)
        )
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "ScriptedServer":
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("scripted server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def script(self, key: str, replies: list[Reply]) -> None:
        self.scripts[key] = list(replies)

    def requests_for(self, key: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if self._key(r["messages"]) == key]

    # ------------------------------------------------------------------ HTTP

    async def _models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": self.model, "object": "model"}]}

    def _key(self, messages: list[dict[str, Any]]) -> str | None:
        first = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        if first in self.scripts:
            return first
        hits = [k for k in self.scripts if k and k in first]
        return max(hits, key=len) if hits else None

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        key = self._key(body["messages"])
        if key is None:
            return JSONResponse({"error": {"message": "no script for this conversation"}}, status_code=400)
        turn = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        script = self.scripts[key]
        reply = script[min(turn, len(script) - 1)]
        if isinstance(reply, dict) and reply.get("delay"):
            await asyncio.sleep(float(reply["delay"]))
        if isinstance(reply, dict) and reply.get("status"):
            return JSONResponse({"error": {"message": "scripted failure"}}, status_code=int(reply["status"]))
        message: dict[str, Any] = {"role": "assistant", "content": reply if isinstance(reply, str) else None}
        if isinstance(reply, dict):
            message["content"] = reply.get("content")
            if reply.get("tool_calls"):
                message["tool_calls"] = [
                    {
                        "id": f"call_{turn}_{j}",
                        "type": "function",
                        "function": {
                            "name": c["name"],
                            "arguments": c["arguments"]
                            if isinstance(c.get("arguments"), str)
                            else json.dumps(c.get("arguments", {})),
                        },
                    }
                    for j, c in enumerate(reply["tool_calls"])
                ]
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", self.model),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )
