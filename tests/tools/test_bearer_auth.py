"""Bearer/basic security schemes (http bearer/basic, oauth2, openIdConnect): the loader makes the
Authorization header the key parameter, the executor fills it from the source's `api_key_env`, and
the credential never shows in results, probe values, metadata or log lines."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from factory.config import SourceConfig, load_config
from factory.ingest import build_inventory, run_probes
from factory.redaction import install_log_redaction, redact_text
from factory.tools.executor import KEY_PLACEHOLDER, ToolExecutor
from factory.tools.mcp import run_sync
from factory.tools.openapi import load_openapi
from factory.tools.outcomes import Outcome
from factory.tools.spec import ToolSpec
from factory.tools.transports.http import ACCEPT, authorization_value, build_request
from tests.conftest import write_config
from tests.serving import serve_asgi

TOKEN = "tok-Bearer-4471-secret"
USER_PASS = "alice:s3cret-pass"
BASIC = base64.b64encode(USER_PASS.encode()).decode()
API_KEY = "apikey-9931-secret"
ENV = "BEARER_TEST_TOKEN"

_OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
_PETS = {
    "200": {
        "description": "pets",
        "content": {
            "application/json": {
                "schema": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer"},
                            "name": {"type": "string"},
                            "status": {"type": "string"},
                            "seen": {"type": "string"},
                        },
                    },
                }
            }
        },
    }
}
_STATUS = {"name": "status", "in": "query", "required": True, "schema": {"type": "string", "enum": ["available"]}}


def _doc(base_url: str = "http://127.0.0.1:9") -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Auth", "version": "1"},
        "servers": [{"url": base_url}],
        "components": {
            "securitySchemes": {
                "oauth": {"type": "oauth2", "flows": {"implicit": {"authorizationUrl": "http://x/a", "scopes": {}}}},
                "oidc": {"type": "openIdConnect", "openIdConnectUrl": "http://x/.well-known/openid-configuration"},
                "bearer": {"type": "http", "scheme": "Bearer"},
                "basic": {"type": "http", "scheme": "basic"},
                "digest": {"type": "http", "scheme": "digest"},
                "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
            }
        },
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "findPets",
                    "parameters": [_STATUS],
                    "security": [{"oauth": ["read"]}],
                    "responses": _PETS,
                }  # fmt: skip
            },
            "/me": {"get": {"operationId": "getMe", "security": [{"basic": []}], "responses": _OK}},
            "/public": {"get": {"operationId": "getPublic", "security": [{}, {"bearer": []}], "responses": _OK}},
            "/keyed": {"get": {"operationId": "getKeyed", "security": [{"key": []}], "responses": _OK}},
            "/oidc": {"get": {"operationId": "getOidc", "security": [{"oidc": []}], "responses": _OK}},
            "/digest": {"get": {"operationId": "getDigest", "security": [{"digest": []}], "responses": _OK}},
            "/either": {
                "get": {"operationId": "getEither", "security": [{"oauth": []}, {"key": []}], "responses": _OK}
            },
        },
    }


def _app(seen: list[str | None]) -> FastAPI:
    app = FastAPI()

    def deny() -> JSONResponse:
        return JSONResponse({"detail": "unauthorized"}, status_code=401)

    @app.get("/pets")
    def pets(request: Request, status: str) -> Any:
        auth = request.headers.get("authorization")
        seen.append(auth)
        if auth != f"Bearer {TOKEN}":
            return deny()
        return [{"id": 1, "name": "Rex", "status": status, "seen": auth}, {"id": 2, "name": "Tom", "status": status}]

    @app.get("/me")
    def me(request: Request) -> Any:
        auth = request.headers.get("authorization")
        seen.append(auth)
        if auth != f"Basic {BASIC}":
            return deny()
        return {"user": "alice", "echo": f"you sent {auth} and {USER_PASS}"}

    @app.get("/public")
    def public(request: Request) -> Any:
        seen.append(request.headers.get("authorization"))
        return {"ok": True}

    @app.get("/keyed")
    def keyed(request: Request) -> Any:
        seen.append(request.headers.get("x-key"))
        return {"ok": True} if request.headers.get("x-key") == API_KEY else deny()

    return app


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, list[str | None]]]:
    seen: list[str | None] = []
    with serve_asgi(_app(seen), name="bearer-server") as url:
        yield url, seen


def _tools(base_url: str = "http://127.0.0.1:9") -> dict[str, ToolSpec]:
    specs = load_openapi(_doc(base_url), domain="d", platform="auth", spec_locator="mem://auth")
    return {t.name: t for t in specs}


def _call(
    url: str, name: str, args: dict[str, Any], keys: dict[str, str] | None, sources: tuple[SourceConfig, ...] = ()
):
    tools = _tools(url)

    async def go():
        async with ToolExecutor(tools.values(), api_keys=keys, sources=sources) as ex:
            return await ex.call(name, args)

    return run_sync(go())


# --------------------------------------------------------------------------- loader


def test_schemes_become_the_authorization_key_parameter() -> None:
    tools = _tools()
    got = {n: (t.generic_params.key, t.generic_params.key_in, t.generic_params.key_scheme) for n, t in tools.items()}
    assert got == {
        "find_pets": ("Authorization", "header", "bearer"),  # oauth2
        "get_oidc": ("Authorization", "header", "bearer"),  # openIdConnect
        "get_public": ("Authorization", "header", "bearer"),  # http bearer (scheme names are case-insensitive)
        "get_me": ("Authorization", "header", "basic"),  # http basic
        "get_keyed": ("X-Key", "header", None),  # apiKey: the key as it is, as before
        "get_either": ("X-Key", "header", None),  # an apiKey alternative is preferred, as before
        "get_digest": (None, "query", None),  # a scheme the executor cannot fill: no key parameter
    }
    pets = tools["find_pets"]
    assert pets.param_locations["Authorization"] == "header" and "Authorization" in pets.required_params
    assert "Authorization" not in tools["get_public"].required_params  # `{}` among the alternatives: optional
    assert "Authorization" not in tools["get_digest"].params


def test_swagger2_basic_scheme() -> None:
    doc = {
        "swagger": "2.0",
        "info": {"title": "S", "version": "1"},
        "host": "example.test",
        "securityDefinitions": {"b": {"type": "basic"}, "o": {"type": "oauth2", "flow": "implicit"}},
        "paths": {
            "/a": {"get": {"operationId": "a", "security": [{"b": []}], "responses": {"200": {"description": "ok"}}}},
            "/b": {"get": {"operationId": "b", "security": [{"o": []}], "responses": {"200": {"description": "ok"}}}},
        },
    }
    tools = {t.name: t for t in load_openapi(doc, domain="d", platform="s", spec_locator="mem://s")}
    assert tools["a"].generic_params.key_scheme == "basic" and tools["b"].generic_params.key_scheme == "bearer"


def test_authorization_header_value() -> None:
    assert authorization_value("bearer", "abc") == "Bearer abc"
    assert authorization_value("basic", "u:p") == "Basic " + base64.b64encode(b"u:p").decode()
    assert authorization_value("bearer", "Bearer abc") == "Bearer abc"  # already a header value: as it is
    url, kwargs = build_request(_tools()["find_pets"], {"status": "available", "Authorization": "xyz"})
    assert url == "http://127.0.0.1:9/pets" and kwargs["headers"] == {"Authorization": "Bearer xyz", "Accept": ACCEPT}


def test_requests_ask_for_json_unless_the_call_sets_accept() -> None:
    """A service offering XML first (the Petstore's Prism mock) answers JSON; an Accept argument is kept."""
    tool = _tools()["find_pets"].model_copy(
        update={"param_locations": {**_tools()["find_pets"].param_locations, "accept": "header"}}
    )
    _, kwargs = build_request(tool, {"status": "available", "accept": "application/xml"})
    assert kwargs["headers"] == {"accept": "application/xml"}


# --------------------------------------------------------------------------- executor against a live server


def test_bearer_token_is_sent_and_redacted(server) -> None:
    url, seen = server
    seen.clear()
    res = _call(url, "find_pets", {"status": "available"}, {"auth": TOKEN})
    assert res.outcome is Outcome.SEMANTIC_SUCCESS and res.record_count == 2
    assert seen == [f"Bearer {TOKEN}"]
    assert res.args == {"status": "available", "Authorization": KEY_PLACEHOLDER}
    assert TOKEN not in res.model_dump_json()
    assert res.records[0]["seen"] == f"Bearer {KEY_PLACEHOLDER}"  # the server's echo of the header


def test_placeholder_argument_gets_the_token(server) -> None:
    url, seen = server
    seen.clear()
    res = _call(url, "find_pets", {"status": "available", "Authorization": KEY_PLACEHOLDER}, {"auth": TOKEN})
    assert res.ok and seen == [f"Bearer {TOKEN}"]


def test_basic_credentials_are_sent_and_both_forms_redacted(server) -> None:
    url, seen = server
    seen.clear()
    res = _call(url, "get_me", {}, {"auth": USER_PASS})
    assert res.ok and seen == [f"Basic {BASIC}"]
    text = res.model_dump_json()
    assert BASIC not in text and USER_PASS not in text
    assert f"you sent Basic {KEY_PLACEHOLDER} and {KEY_PLACEHOLDER}" in text


def test_without_a_token_the_call_is_not_sent_and_names_the_env_var(server) -> None:
    url, seen = server
    seen.clear()
    src = SourceConfig(kind="openapi", platform="auth", spec="mem://auth", api_key_env=ENV)
    res = _call(url, "find_pets", {"status": "available"}, None, (src,))
    assert seen == []  # a required bearer credential is missing: nothing goes to the service
    assert res.outcome is Outcome.AUTH_ERROR and res.attempts == 0
    assert (
        res.detail
        == f"no bearer token for platform auth: set the environment variable {ENV} (its source's api_key_env)"
    )
    res = _call(url, "get_me", {}, None)  # no source names an env var
    assert res.outcome is Outcome.AUTH_ERROR and seen == []
    assert res.detail == (
        "no user:password for HTTP basic auth for platform auth: name an environment variable in its source's"
        " api_key_env (with platform: auth) and set it"
    )


def test_optional_bearer_is_sent_without_a_header(server) -> None:
    url, seen = server
    seen.clear()
    res = _call(url, "get_public", {}, None)
    assert res.ok and seen == [None]


def test_api_key_auth_error_names_the_env_var(server) -> None:
    url, seen = server
    seen.clear()
    src = SourceConfig(kind="openapi", platform="auth", spec="mem://auth", api_key_env=ENV)
    res = _call(url, "get_keyed", {}, None, (src,))
    assert seen == [None]  # apiKey tools are still sent without a key (some services answer anonymously)
    assert res.outcome is Outcome.AUTH_ERROR
    assert res.detail.startswith(f"no API key for platform auth: set the environment variable {ENV}")
    assert res.detail.endswith('(HTTP 401: "unauthorized")')
    assert _call(url, "get_keyed", {}, {"auth": API_KEY}).ok


def test_log_lines_never_show_the_credential(caplog: pytest.LogCaptureFixture) -> None:
    install_log_redaction()
    assert redact_text("Authorization: Bearer abc.def-123") == f"Authorization: Bearer {KEY_PLACEHOLDER}"
    assert redact_text("{'authorization': 'Basic dXNlcjpw'}") == f"{{'authorization': 'Basic {KEY_PLACEHOLDER}'}}"
    assert redact_text("Bearer tokens are accepted") == "Bearer tokens are accepted"  # prose stays
    tools = _tools()
    with caplog.at_level(logging.INFO):

        async def go():
            async with ToolExecutor(tools.values(), api_keys={"auth": USER_PASS}) as ex:
                # the base64 form is registered when the key is used (the call fails: nothing listens)
                await ex.call("get_me", {})

        run_sync(go())
        logging.getLogger("factory.test").warning("sent Basic %s for %s", BASIC, USER_PASS)
    assert caplog.records and all(
        BASIC not in r.getMessage() and USER_PASS not in r.getMessage() for r in caplog.records
    )


# --------------------------------------------------------------------------- probes


def _project(tmp_path: Path, url: str) -> Any:
    spec = tmp_path / "auth.json"
    spec.write_text(json.dumps(_doc(url)), encoding="utf-8")
    domain = {
        "name": "auth",
        "language": "en",
        "description": "Pets behind OAuth2.",
        "sources": [{"kind": "openapi", "platform": "auth", "spec": str(spec), "base_url": url, "api_key_env": ENV}],
    }
    cfg = load_config(write_config(tmp_path, domains=[domain]))
    inventory, _ = build_inventory(cfg.domain("auth"), cfg)
    return cfg, inventory


def test_probes_send_the_token_and_keep_it_out(server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = server
    monkeypatch.setenv(ENV, TOKEN)
    cfg, inventory = _project(tmp_path, url)
    value, meta = run_probes(inventory, cfg, progress=lambda m: None)
    pets = [r for r in value["rows"] if r["tool"] == "find_pets"]
    assert pets and all(r["outcome"] == Outcome.SEMANTIC_SUCCESS.value for r in pets)
    assert pets[0]["args"]["Authorization"] == KEY_PLACEHOLDER
    assert TOKEN not in json.dumps(value, default=str) and TOKEN not in json.dumps(meta, default=str)


def test_probe_reason_names_the_env_var(server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = server
    monkeypatch.delenv(ENV, raising=False)
    cfg, inventory = _project(tmp_path, url)
    value, _ = run_probes(inventory, cfg, progress=lambda m: None)
    why = {r["tool"]: r for r in value["no_success"]}
    assert why["find_pets"]["reason"] == Outcome.AUTH_ERROR.value
    assert f"set the environment variable {ENV}" in why["find_pets"]["detail"]
