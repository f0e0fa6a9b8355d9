"""Platform machinery shared by every demo platform.

A platform is a FastAPI sub-application (one per schema version) mounted under
`/{platform}`. Each tool is registered through `Platform.rest_tool` / `Platform.kr_tool`,
which wire in, in order: request statistics, seeded faults, the API-key check, and (for
the data.go.kr-style Korean platforms) parameter validation and the result envelope. The
OpenAPI document of a platform is served at `/{platform}/openapi.json` with
`servers[0].url` set to the absolute platform base URL of the request.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import re
import secrets
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from fastapi import Depends, FastAPI, Request, Security
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi.security import APIKeyQuery
from pydantic import BaseModel, Field, create_model
from starlette.types import ASGIApp, Receive, Scope, Send

from factory.config import FaultProfile
from factory.demo import provenance

Style = Literal["rest", "kr"]

KR_MESSAGES = {
    "00": "NORMAL SERVICE.",
    "03": "NODATA_ERROR",
    "10": "INVALID_REQUEST_PARAMETER_ERROR",
    "11": "NO_MANDATORY_REQUEST_PARAMETERS_ERROR",
    "22": "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR",
    "30": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR",
    "99": "UNKNOWN_ERROR",
}
KR_ENVELOPE = {
    "code_path": "response.header.resultCode",
    "message_path": "response.header.resultMsg",
    "ok_codes": ["00"],
    "no_data_codes": ["03"],
}
REST_KEY = "api_key"
KR_KEY = "serviceKey"


class ApiError(Exception):
    """An error answer of a platform (rendered by the platform's exception handler)."""

    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(body)
        self.status = status
        self.body = body
        self.headers = headers or {}


def rest_error(status: int, message: str, headers: dict[str, str] | None = None) -> ApiError:
    return ApiError(status, {"error": message}, headers)


def kr_error(
    code: str, detail: str | None = None, status: int = 200, headers: dict[str, str] | None = None
) -> ApiError:
    header: dict[str, Any] = {"resultCode": code, "resultMsg": KR_MESSAGES[code]}
    if detail:
        header["resultDetail"] = detail
    return ApiError(status, {"response": {"header": header}}, headers)


# --------------------------------------------------------------------------- service state


@dataclass
class FaultDecision:
    kind: Literal["unavailable", "rate_limit", "server_error", "timeout", "slow", "auth_failure"] | None
    seconds: float = 0.0


@dataclass
class ServiceState:
    """Mutable state of the running service: versions, faults, key sessions, counters."""

    platforms: list[str]
    schema_versions: dict[str, str] = field(default_factory=dict)
    faults: dict[str, FaultProfile] = field(default_factory=dict)
    sessions: dict[str, dict[str, dict[str, Any]]] = field(default_factory=lambda: defaultdict(dict))
    occurrences: Counter[str] = field(default_factory=Counter)
    calls: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    fault_counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def version(self, platform: str) -> str:
        return self.schema_versions.get(platform, "v1")

    def issue_key(self, platform: str) -> str:
        key = f"{platform.split('-')[0][:4]}-{secrets.token_hex(12)}"
        with self.lock:
            self.sessions[platform][key] = {}
        return key

    def session(self, platform: str, key: str | None) -> dict[str, Any] | None:
        """The session state of a key (None when the key was not issued by this platform)."""
        return self.sessions[platform].get(key) if key else None

    def count_call(self, platform: str, tool: str) -> None:
        with self.lock:
            self.calls[platform][tool] += 1

    def draw_fault(self, platform: str, tool: str, signature: str, key: str | None = None) -> FaultDecision:
        """Decide the fault of one request, deterministically.

        The draw hashes (seed, platform, request signature, n-th occurrence of that
        signature in the caller's session, i.e. under its API key), so the same requests give
        the same faults whatever their interleaving with other sessions' requests, and a new
        session starts the sequence afresh: what an earlier run sent never shifts a later run's faults.
        """
        profile = self.faults.get(platform)
        if profile is None:
            return FaultDecision(None)
        counter = f"{platform}|{key or ''}|{signature}"
        with self.lock:
            n = self.occurrences[counter]
            self.occurrences[counter] += 1
        decision = _decide(profile, platform, tool, signature, n)
        if decision.kind:
            with self.lock:
                self.fault_counts[platform][decision.kind] += 1
        return decision

    def reset(self) -> None:
        with self.lock:
            self.sessions.clear()
            self.occurrences.clear()
            self.calls.clear()
            self.fault_counts.clear()

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "calls": {p: dict(c) for p, c in self.calls.items()},
                "faults": {p: dict(c) for p, c in self.fault_counts.items()},
                "sessions": {p: len(s) for p, s in self.sessions.items()},
            }


def _decide(profile: FaultProfile, platform: str, tool: str, signature: str, n: int) -> FaultDecision:
    if tool in profile.unavailable:
        return FaultDecision("unavailable")
    digest = hashlib.sha256(f"{profile.seed}|{platform}|{signature}|{n}".encode()).digest()
    draws = [int.from_bytes(digest[i * 4 : i * 4 + 4], "big") / 2**32 for i in range(5)]
    if draws[0] < profile.rate_limit:
        return FaultDecision("rate_limit", profile.retry_after_s)
    if draws[1] < profile.server_error:
        return FaultDecision("server_error")
    if draws[2] < profile.timeout:
        return FaultDecision("timeout", profile.timeout_seconds)
    if draws[3] < profile.auth_failure:
        return FaultDecision("auth_failure")
    if draws[4] < profile.slow:
        return FaultDecision("slow", profile.slow_seconds)
    return FaultDecision(None)


async def request_signature(request: Request, key_param: str) -> str:
    """Path + sorted query without the key (+ body digest): identifies 'the same request'."""
    query = sorted((k, v) for k, v in request.query_params.multi_items() if k != key_param)
    body = await request.body()
    digest = hashlib.sha256(body).hexdigest()[:16] if body else ""
    return f"{request.method} {request.url.path}?{json.dumps(query, ensure_ascii=False)}#{digest}"


# --------------------------------------------------------------------------- response models


class KrHeader(BaseModel):
    resultCode: str = Field(
        description="결과코드 (00: 정상, 03: 데이터 없음, 10/11: 요청 파라미터 오류, 30: 미등록 인증키)"
    )
    resultMsg: str = Field(description="결과메시지")
    resultDetail: str | None = Field(default=None, description="오류 상세 (오류일 때만)")


@cache
def page_model(item: type[BaseModel]) -> type[BaseModel]:
    """`{data: [item], page, per_page, total}` list response of a REST platform."""
    return create_model(
        f"{item.__name__}Page",
        data=(list[item], Field(description="Records of this page.")),  # type: ignore[valid-type]
        page=(int, Field(description="Page number (1-based).")),
        per_page=(int, Field(description="Records per page.")),
        total=(int, Field(description="Total number of matching records over all pages.")),
    )


@cache
def kr_envelope_model(item: type[BaseModel]) -> type[BaseModel]:
    """data.go.kr envelope `{response: {header, body: {items: {item: [...]}, numOfRows, pageNo, totalCount}}}`."""
    name = item.__name__
    items = create_model(f"{name}Items", item=(list[item], Field(description="레코드 목록")))  # type: ignore[valid-type]
    body = create_model(
        f"{name}Body",
        items=(items, Field(description="결과 항목")),
        numOfRows=(int, Field(description="한 페이지 결과 수")),
        pageNo=(int, Field(description="페이지 번호")),
        totalCount=(int, Field(description="전체 결과 수")),
    )
    resp = create_model(
        f"{name}Response",
        header=(KrHeader, Field(description="응답 헤더")),
        body=(body | None, Field(default=None, description="응답 본문 (오류일 때 생략)")),  # type: ignore[arg-type]
    )
    return create_model(f"{name}Envelope", response=(resp, Field(description="응답")))


def renamed_model(model: type[BaseModel], renames: dict[str, str], name: str) -> type[BaseModel]:
    """A copy of `model` whose fields in `renames` carry new names (schema drift in v2)."""
    fields: dict[str, Any] = {}
    for fname, info in model.model_fields.items():
        fields[renames.get(fname, fname)] = (info.annotation, info)
    return create_model(name, __doc__=model.__doc__, **fields)


def rename_keys(rows: list[dict[str, Any]], renames: dict[str, str]) -> list[dict[str, Any]]:
    return [{renames.get(k, k): v for k, v in r.items()} for r in rows]


class RestKey(BaseModel):
    api_key: str = Field(description="A fresh API key; pass it as the `api_key` query parameter of every other tool.")
    platform: str = Field(description="Platform the key is valid for.")


class KrKeyBody(BaseModel):
    serviceKey: str = Field(description="발급된 서비스키 (다른 모든 오퍼레이션의 serviceKey 파라미터로 전달)")


class KrKeyResponse(BaseModel):
    header: KrHeader
    body: KrKeyBody


class KrKeyEnvelope(BaseModel):
    response: KrKeyResponse


# --------------------------------------------------------------------------- Korean params


@dataclass(frozen=True)
class KrParam:
    """One query parameter of a Korean (data.go.kr-style) operation, validated by hand.

    Validation failures answer resultCode 11 (missing) or 10 (invalid) in a 200 body,
    as data.go.kr does, instead of FastAPI's 422; the OpenAPI doc still shows the type.
    """

    name: str
    description: str
    kind: Literal["string", "integer"] = "string"
    required: bool = False
    default: Any = None
    enum: Sequence[Any] | None = None
    minimum: int | None = None
    maximum: int | None = None
    pattern: str | None = None
    example: Any = None

    def openapi(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.kind}
        for k, v in (
            ("default", self.default),
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("pattern", self.pattern),
        ):
            if v is not None:
                schema[k] = f"^(?:{v})$" if k == "pattern" else v
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        out: dict[str, Any] = {
            "name": self.name,
            "in": "query",
            "required": self.required,
            "description": self.description,
            "schema": schema,
        }
        if self.example is not None:
            out["example"] = self.example
        return out

    def parse(self, raw: str | None) -> Any:
        if raw is None or raw == "":
            if self.required:
                raise kr_error("11", f"필수 파라미터 {self.name} 누락")
            return self.default
        value: Any = raw
        if self.kind == "integer":
            try:
                value = int(raw)
            except ValueError:
                raise kr_error("10", f"{self.name}: 정수가 아닙니다 ({raw!r})") from None
            if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum
            ):
                raise kr_error("10", f"{self.name}: 허용 범위 밖의 값 ({value})")
        if self.pattern is not None:
            if not re.fullmatch(self.pattern, raw):
                raise kr_error("10", f"{self.name}: 형식이 올바르지 않습니다 ({raw!r})")
        if self.enum is not None and value not in self.enum:
            raise kr_error("10", f"{self.name}: 허용되지 않는 값 ({raw!r})")
        return value


KR_SERVICE_KEY = KrParam(KR_KEY, "공공데이터포털에서 발급받은 인증키 (인증키 발급 오퍼레이션으로 발급)", required=True)
KR_PAGE = KrParam("pageNo", "페이지 번호", "integer", default=1, minimum=1, example=1)
KR_ROWS = KrParam(
    "numOfRows", "한 페이지 결과 수 (최대 1000)", "integer", default=10, minimum=1, maximum=1000, example=10
)
KR_TYPE = KrParam("_type", "응답 데이터 형식 (json만 지원)", enum=["json"], default="json")


@dataclass
class KrResult:
    """What a Korean tool handler returns: the page of items and the total count."""

    items: list[dict[str, Any]]
    total: int


def kr_page(rows: Any, page: int, size: int) -> tuple[Any, int]:
    """Slice one page of a sequence/DataFrame; returns (slice, total)."""
    total = len(rows)
    start = (page - 1) * size
    return (rows.iloc[start : start + size] if hasattr(rows, "iloc") else rows[start : start + size]), total


# --------------------------------------------------------------------------- platform


_rest_key_scheme = APIKeyQuery(
    name=REST_KEY,
    scheme_name="ApiKeyQuery",
    auto_error=False,
    description="API key from this platform's key-acquisition tool, as query parameter `api_key`.",
)


class Platform:
    """Builder of one platform's FastAPI application at one schema version."""

    def __init__(self, name: str, title: str, description: str, style: Style, version: str, state: ServiceState):
        self.name = name
        self.style = style
        self.version = version
        self.state = state
        self.key_param = REST_KEY if style == "rest" else KR_KEY
        self.app = FastAPI(
            title=title,
            description=description,
            version=version,
            openapi_url=None,
            docs_url=None,
            redoc_url=None,
        )
        self.app.add_exception_handler(ApiError, _render_api_error)  # type: ignore[arg-type]
        self.app.add_api_route("/openapi.json", self._openapi, methods=["GET"], include_in_schema=False)

    # ---- OpenAPI
    def _openapi(self, request: Request) -> JSONResponse:
        doc = copy.deepcopy(self.app.openapi())
        for route in self.app.routes:  # FastAPI drops null values of openapi_extra: restore the extensions verbatim
            if isinstance(route, APIRoute) and route.openapi_extra and route.include_in_schema:
                for method in route.methods or ():
                    op = doc["paths"][route.path_format][method.lower()]
                    op.update({k: v for k, v in route.openapi_extra.items() if k.startswith("x-")})
        base = str(request.url).split("?", 1)[0].removesuffix("/openapi.json")
        doc["servers"] = [{"url": base, "description": f"{self.name} ({self.version})"}]
        doc["info"]["x-platform"] = self.name
        doc["info"]["x-schema-version"] = self.version
        doc["info"].update(provenance.info(self.name))  # licence and data versions (DATA_LICENSES.md)
        return JSONResponse(doc)

    def _extensions(
        self, *, records_path: str | None, total_path: str | None, paged: bool, state_changing: bool, key_tool: bool
    ) -> dict[str, Any]:
        kr = self.style == "kr"
        ext: dict[str, Any] = {
            "x-generic-params": {
                "key": None if key_tool else self.key_param,
                "key_in": "query",
                "page": ("pageNo" if kr else "page") if paged else None,
                "page_size": ("numOfRows" if kr else "per_page") if paged else None,
                "format": ["_type"] if kr and not key_tool else [],
            },
            "x-realtime": False,
            "x-platform": self.name,
        }
        if records_path:
            ext["x-records-path"] = records_path
        if total_path:
            ext["x-total-count-path"] = total_path
        if kr:
            ext["x-result-envelope"] = KR_ENVELOPE
        if state_changing:  # the demo's creates are session-scoped: state-changing, not destructive
            ext["x-state-changing"] = True
            ext["x-destructive"] = False
        if key_tool:
            ext["x-key-acquisition"] = {"output_field": "api_key" if not kr else "response.body.serviceKey"}
        return ext

    # ---- gate: stats, faults, key
    def _gate(self, tool: str, keyed: bool) -> Callable[..., Any]:
        state, platform, kr = self.state, self.name, self.style == "kr"

        async def check(request: Request) -> dict[str, Any] | None:
            state.count_call(platform, tool)
            key = request.query_params.get(self.key_param)
            if not keyed:
                return None
            decision = state.draw_fault(platform, tool, await request_signature(request, self.key_param), key)
            if decision.kind == "unavailable":
                raise (
                    kr_error("99", f"{tool} 서비스 일시 중단", status=503)
                    if kr
                    else rest_error(503, f"endpoint {tool} is temporarily unavailable")
                )
            if decision.kind == "rate_limit":
                headers = {"Retry-After": f"{decision.seconds:g}"}
                raise (
                    kr_error("22", status=429, headers=headers)
                    if kr
                    else rest_error(429, "rate limit exceeded; retry later", headers)
                )
            if decision.kind == "server_error":
                raise kr_error("99", status=500) if kr else rest_error(500, "internal server error")
            if decision.kind == "timeout":
                await asyncio.sleep(decision.seconds)
                raise kr_error("99", "gateway timeout", status=504) if kr else rest_error(504, "gateway timeout")
            if decision.kind == "slow":
                await asyncio.sleep(decision.seconds)
            session = state.session(platform, key)
            if session is None or decision.kind == "auth_failure":
                if kr:
                    raise kr_error("30", "등록되지 않은 서비스키입니다" if session is None else "인증 실패")
                raise rest_error(401, "missing or invalid api_key" if session is None else "unauthorized")
            request.state.session = session
            return session

        if self.style == "rest" and keyed:

            async def rest_check(request: Request, api_key: str | None = Security(_rest_key_scheme)) -> Any:
                # `api_key` is declared only so the OpenAPI doc carries the apiKey security scheme
                return await check(request)

            return rest_check
        return check

    # ---- registration
    def rest_tool(
        self,
        method: str,
        path: str,
        *,
        name: str,
        summary: str,
        description: str,
        response_model: type[BaseModel],
        paged: bool = False,
        state_changing: bool = False,
        status_code: int = 200,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a REST tool guarded by the gate; handlers get the key's state via `Depends(session_of)`."""
        model = page_model(response_model) if paged else response_model
        if paged and "total count" not in description:
            # the reply carries `total`: a reader of the docs knows one page tells how many there are (blind read
            # s11 en2 #1, #18: list_routes' and list_airports_by_country's docs did not say so)
            description = f"{description.rstrip()} Paged; the reply carries the total count of matching records."
        ext = self._extensions(
            records_path="data" if paged else None,
            total_path="total" if paged else None,
            paged=paged,
            state_changing=state_changing,
            key_tool=False,
        )
        return self.app.api_route(
            path,
            methods=[method],
            operation_id=name,
            summary=summary,
            description=description,
            response_model=model,
            status_code=status_code,
            openapi_extra=ext,
            responses=_REST_ERRORS,
            tags=[self.name],
            dependencies=[Depends(self._gate(name, keyed=True))],
        )

    def key_tool(self, name: str, description: str) -> None:
        """The key-acquisition tool `POST /auth/key` (never faulted, no key needed)."""
        ext = self._extensions(records_path=None, total_path=None, paged=False, state_changing=False, key_tool=True)
        gate = self._gate(name, keyed=False)
        if self.style == "rest":

            def issue_rest(_: None = Depends(gate)) -> RestKey:
                return RestKey(api_key=self.state.issue_key(self.name), platform=self.name)

            endpoint: Callable[..., Any] = issue_rest
            model: type[BaseModel] = RestKey
        else:

            def issue_kr(_: None = Depends(gate)) -> dict[str, Any]:
                return {
                    "response": {
                        "header": {"resultCode": "00", "resultMsg": KR_MESSAGES["00"]},
                        "body": {"serviceKey": self.state.issue_key(self.name)},
                    }
                }

            endpoint, model = issue_kr, KrKeyEnvelope
        self.app.add_api_route(
            "/auth/key",
            endpoint,
            methods=["POST"],
            operation_id=name,
            summary="Issue an API key" if self.style == "rest" else "인증키 발급",
            description=description,
            response_model=model,
            openapi_extra=ext,
            tags=[self.name],
        )

    def kr_tool(
        self,
        path: str,
        *,
        name: str,
        summary: str,
        description: str,
        item_model: type[BaseModel],
        params: Sequence[KrParam],
        paged: bool = True,
    ) -> Callable[[Callable[[dict[str, Any]], KrResult]], Callable[[dict[str, Any]], KrResult]]:
        """Register a Korean GET tool; the handler gets validated params and returns a KrResult."""
        all_params = [KR_SERVICE_KEY, *params, *((KR_PAGE, KR_ROWS) if paged else ()), KR_TYPE]
        ext = self._extensions(
            records_path="response.body.items.item",
            total_path="response.body.totalCount",
            paged=paged,
            state_changing=False,
            key_tool=False,
        )
        ext["parameters"] = [p.openapi() for p in all_params]
        gate = self._gate(name, keyed=True)

        def register(handler: Callable[[dict[str, Any]], KrResult]) -> Callable[[dict[str, Any]], KrResult]:
            def endpoint(request: Request, session: dict[str, Any] = Depends(gate)) -> JSONResponse:
                values = {
                    p.name: p.parse(request.query_params.get(p.name)) for p in all_params if p is not KR_SERVICE_KEY
                }
                result = handler(values)
                page = values.get("pageNo") or 1
                rows = values.get("numOfRows") or len(result.items)
                code = "00" if result.total else "03"
                return JSONResponse(
                    {
                        "response": {
                            "header": {"resultCode": code, "resultMsg": KR_MESSAGES[code]},
                            "body": {
                                "items": {"item": result.items},
                                "numOfRows": rows,
                                "pageNo": page,
                                "totalCount": result.total,
                            },
                        }
                    }
                )

            self.app.add_api_route(
                path,
                endpoint,
                methods=["GET"],
                operation_id=name,
                summary=summary,
                description=description,
                response_model=kr_envelope_model(item_model),
                openapi_extra=ext,
                tags=[self.name],
            )
            return handler

        return register


def session_of(request: Request) -> dict[str, Any]:
    """Dependency: the session state of the request's key (set by the tool's gate)."""
    return request.state.session


class ErrorBody(BaseModel):
    error: str = Field(description="What went wrong.")


_REST_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "Missing or invalid api_key."},
    404: {"model": ErrorBody, "description": "Unknown identifier."},
    429: {"model": ErrorBody, "description": "Rate limited; see the Retry-After header."},
}


async def _render_api_error(_: Request, exc: ApiError) -> JSONResponse:
    return JSONResponse(exc.body, status_code=exc.status, headers=exc.headers)


class VersionDispatch:
    """ASGI app under `/{platform}` routing each request to the current schema version's app."""

    def __init__(self, platform: str, apps: Mapping[str, ASGIApp], state: ServiceState) -> None:
        self.platform = platform
        self.apps = apps
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self.apps.get(self.state.version(self.platform), self.apps["v1"])
        await app(scope, receive, send)
