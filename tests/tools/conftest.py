"""A real local HTTP service with injectable faults, for executor and loader tests.

The FastAPI app below runs under uvicorn in a background thread on a free
loopback port; tests load its OpenAPI 3.1 document through `load_openapi` and
call it through `ToolExecutor`.  `hits` counts requests per (endpoint, tag) so
tests can assert retries.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse

from tests.serving import serve_asgi

FIXTURES = Path(__file__).parent / "fixtures"
SECRET_KEY = "Zq9-SECRET-KEY-7781"

FLIGHTS = [
    {"flight": 1545, "carrier": "UA", "origin": "EWR", "dest": "IAH", "dep_delay": 2},
    {"flight": 1714, "carrier": "UA", "origin": "LGA", "dest": "IAH", "dep_delay": 4},
    {"flight": 1141, "carrier": "AA", "origin": "JFK", "dest": "MIA", "dep_delay": 2},
    {"flight": 461, "carrier": "DL", "origin": "LGA", "dest": "ATL", "dep_delay": -6},
]


@dataclass
class FaultState:
    hits: Counter[tuple[str, str]] = field(default_factory=Counter)
    hit_times: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    inflight: int = 0
    max_inflight: int = 0
    peers: set[str] = field(default_factory=set)  # client address:port of /concurrent calls (connection reuse)

    def hit(self, name: str, tag: str) -> int:
        self.hits[(name, tag)] += 1
        self.hit_times.setdefault((name, tag), []).append(time.monotonic())
        return self.hits[(name, tag)]


def build_app(state: FaultState) -> FastAPI:
    app = FastAPI(title="Fault Lab", version="1.0")

    @app.post(
        "/auth/key",
        operation_id="get_api_key",
        summary="Issue an API key",
        openapi_extra={"x-key-acquisition": {"output_field": "data.serviceKey"}},
    )
    def get_api_key() -> dict[str, Any]:
        state.hit("key", "")
        return {"data": {"serviceKey": SECRET_KEY, "note": f"your key is {SECRET_KEY}"}}

    @app.get(
        "/flights",
        operation_id="list_flights",
        summary="Flights, optionally by carrier",
        openapi_extra={"x-records-path": "data", "x-total-count-path": "total"},
    )
    def list_flights(serviceKey: str, carrier: str | None = None, page: int = 1, per_page: int = 10) -> Any:
        state.hit("flights", carrier or "")
        if serviceKey != SECRET_KEY:
            raise HTTPException(401, f"invalid serviceKey {serviceKey}")
        rows = [f for f in FLIGHTS if carrier is None or f["carrier"] == carrier]
        start = (page - 1) * per_page
        return {"data": rows[start : start + per_page], "total": len(rows), "echo": f"served for {serviceKey}"}

    @app.get(
        "/flaky/{mode}",
        operation_id="flaky",
        summary="Fails in the requested way",
        openapi_extra={"x-records-path": "data"},
    )
    async def flaky(mode: str, tag: str = "", serviceKey: str | None = None) -> Any:
        n = state.hit(mode, tag)
        ok = {"data": [{"mode": mode, "hit": n}]}
        if mode == "r429":
            if n <= 2:
                return JSONResponse({"detail": "slow down"}, status_code=429, headers={"Retry-After": "0.3"})
            return ok
        if mode == "r429int":
            if n == 1:
                return JSONResponse({"detail": "slow down"}, status_code=429, headers={"Retry-After": "1"})
            return ok
        if mode == "r429big":
            return JSONResponse({"detail": "quota"}, status_code=429, headers={"Retry-After": "3600"})
        if mode == "e500":
            return JSONResponse({"detail": f"boom (key {serviceKey})"}, status_code=500)
        if mode == "e502then":
            return JSONResponse({"detail": "bad gateway"}, status_code=502) if n == 1 else ok
        if mode == "slow":
            await asyncio.sleep(1.5)
            return ok
        if mode == "e401":
            raise HTTPException(401, f"key {serviceKey} is not registered")
        if mode == "e403":
            raise HTTPException(403, "forbidden")
        if mode == "e503":
            raise HTTPException(503, "maintenance")
        if mode == "notjson":
            return PlainTextResponse("<xml>not json</xml>")
        if mode == "gone":
            raise HTTPException(404, f"flight {tag} not found")
        if mode == "empty":
            return {"other": 1}
        return ok

    @app.get("/strict", operation_id="strict", openapi_extra={"x-records-path": "data"})
    def strict(carrier: str, year: int) -> Any:
        return {"data": [{"carrier": carrier, "year": year}]}

    @app.get(
        "/kr/getStats",
        operation_id="get_stats",
        summary="data.go.kr style statistics",
        openapi_extra={
            "x-records-path": "response.body.items.item",
            "x-total-count-path": "response.body.totalCount",
            "x-result-envelope": {
                "code_path": "response.header.resultCode",
                "message_path": "response.header.resultMsg",
                "ok_codes": ["00"],
                "no_data_codes": ["03"],
            },
            "x-generic-params": {"key": "serviceKey", "page": "pageNo", "page_size": "numOfRows", "format": "_type"},
        },
    )
    def get_stats(
        serviceKey: str,
        code: str = "00",
        sido: str | None = None,
        pageNo: int = 1,
        numOfRows: int = 10,
        _type: Literal["json", "xml"] = "xml",
    ) -> Any:
        state.hit("kr", code)
        msgs = {"00": "NORMAL SERVICE.", "03": "NODATA_ERROR", "30": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR"}
        header = {"resultCode": code, "resultMsg": msgs.get(code, f"ERROR {code} for key {serviceKey}")}
        if code == "00":
            items: Any = {
                "item": [{"sido": sido or "서울특별시", "pop": 9_386_034}, {"sido": "부산광역시", "pop": 3_293_362}]
            }
            return {"response": {"header": header, "body": {"items": items, "totalCount": 2, "pageNo": pageNo}}}
        if code == "03":
            return {"response": {"header": header, "body": {"items": "", "totalCount": 0}}}
        if code == "single":
            header["resultCode"] = "00"
            return {
                "response": {"header": header, "body": {"items": {"item": {"sido": "세종", "pop": 1}}, "totalCount": 1}}
            }
        return {"response": {"header": header}}

    @app.get("/concurrent", operation_id="concurrent", openapi_extra={"x-records-path": "data"})
    async def concurrent(i: int, request: Request) -> Any:
        if request.client is not None:
            state.peers.add(f"{request.client.host}:{request.client.port}")
        state.inflight += 1
        state.max_inflight = max(state.max_inflight, state.inflight)
        try:
            await asyncio.sleep(0.15)
        finally:
            state.inflight -= 1
        return {"data": [{"i": i}]}

    @app.post("/playlists", operation_id="create_playlist", status_code=201)
    def create_playlist(body: dict[str, Any]) -> Any:
        return {"playlist_id": 7, "received": body}

    @app.delete("/playlists/{playlist_id}", operation_id="delete_playlist", status_code=204)
    def delete_playlist(playlist_id: int) -> Response:
        return Response(status_code=204)

    return app


@dataclass
class LiveServer:
    url: str
    state: FaultState


@pytest.fixture(scope="session")
def fault_server() -> Iterator[LiveServer]:
    state = FaultState()
    with serve_asgi(build_app(state), name="fault-server") as url:
        yield LiveServer(url=url, state=state)
