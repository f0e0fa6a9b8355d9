"""A hostile loopback HTTP service for the executor (issue 21 items 2, 3, 7): one endpoint per failure mode.

- ``/deep``: a 2xx JSON body nested 100,000 levels deep;
- ``/big``: a 2xx JSON body of 50 MB, streamed in 1 MB chunks (bytes actually sent are counted);
- ``/retry_after``: 429 with ``Retry-After: 3600``;
- ``/fail``: 500 forever;
- ``/hang``: never answers within any sane timeout;
- ``/ok``: a small JSON answer.

`hostile_http()` starts it on a free loopback port in a thread; `HostileState.hits` counts the
requests that reached each endpoint (what the executor really sent).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response, StreamingResponse

from tests.serving import serve_asgi

DEEP_LEVELS = 100_000
BIG_BYTES = 50 * 1024 * 1024
CHUNK = 1024 * 1024


@dataclass
class HostileState:
    hits: Counter[str] = field(default_factory=Counter)
    big_bytes_sent: int = 0


def build_app(state: HostileState) -> FastAPI:
    app = FastAPI(title="hostile", version="1")

    @app.get("/deep", operation_id="deep")
    def deep() -> Response:
        state.hits["deep"] += 1
        body = '{"items": ' + "[" * DEEP_LEVELS + "]" * DEEP_LEVELS + "}"
        return Response(body, media_type="application/json")

    @app.get("/big", operation_id="big")
    def big() -> StreamingResponse:
        state.hits["big"] += 1

        async def chunks() -> AsyncIterator[bytes]:
            yield b'{"items": [{"blob": "'
            sent = 0
            while sent < BIG_BYTES:
                yield b"x" * CHUNK
                sent += CHUNK
                state.big_bytes_sent = sent
                await asyncio.sleep(0)
            yield b'"}]}'

        return StreamingResponse(chunks(), media_type="application/json")

    @app.get("/retry_after", operation_id="retry_after")
    def retry_after() -> Response:
        state.hits["retry_after"] += 1
        return JSONResponse({"detail": "slow down"}, status_code=429, headers={"Retry-After": "3600"})

    @app.get("/fail", operation_id="fail")
    def fail() -> Response:
        state.hits["fail"] += 1
        return JSONResponse({"detail": "boom"}, status_code=500)

    @app.get("/hang", operation_id="hang")
    async def hang() -> Any:
        state.hits["hang"] += 1
        await asyncio.sleep(30)
        return {"late": True}

    @app.get("/ok", operation_id="ok")
    def ok(q: str = "x") -> Any:
        state.hits["ok"] += 1
        return {"items": [{"q": q, "n": 1}]}

    return app


@dataclass
class HostileHttp:
    url: str
    state: HostileState


@contextmanager
def hostile_http() -> Iterator[HostileHttp]:
    """Serve the hostile app on a free loopback port for the duration of the block."""
    state = HostileState()
    with serve_asgi(build_app(state), name="hostile-http") as url:
        yield HostileHttp(url=url, state=state)
