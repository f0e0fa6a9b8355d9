"""Seeded faults, schema versions and the DemoService lifecycle."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from factory.config import DemoConfig, FaultProfile
from factory.demo.service import DemoService, DemoServiceError

KeyFn = Callable[[str], str]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def statuses(http: httpx.Client, k: str, n: int = 12) -> list[int]:
    return [
        http.get("/airline-registry/airlines", params={"api_key": k, "page": i % 3 + 1}).status_code for i in range(n)
    ]


def test_rate_limit_server_error_unavailable(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    k = key("airline-registry")
    clean.set_faults("airline-registry", FaultProfile(rate_limit=1.0, retry_after_s=2))
    r = http.get("/airline-registry/airlines", params={"api_key": k})
    assert r.status_code == 429 and r.headers["Retry-After"] == "2" and "error" in r.json()
    assert key("airline-registry")  # key acquisition is never faulted
    clean.set_faults("airline-registry", FaultProfile(server_error=1.0))
    assert http.get("/airline-registry/airlines", params={"api_key": k}).status_code == 500
    clean.set_faults("airline-registry", FaultProfile(unavailable=["get_plane"]))
    assert http.get("/airline-registry/planes/N14228", params={"api_key": k}).status_code == 503
    assert http.get("/airline-registry/airlines", params={"api_key": k}).status_code == 200
    clean.set_faults("airline-registry", FaultProfile(auth_failure=1.0))
    assert http.get("/airline-registry/airlines", params={"api_key": k}).status_code == 401
    # other platforms are unaffected; Korean platforms answer rate limits with 429 too
    assert http.get("/flight-ops/routes", params={"api_key": key("flight-ops")}).status_code == 200
    ck = key("kostat-census")
    clean.set_faults("kostat-census", FaultProfile(rate_limit=1.0))
    r = http.get("/kostat-census/getYearList", params={"serviceKey": ck})
    assert r.status_code == 429 and "Retry-After" in r.headers
    clean.set_faults("kostat-census", FaultProfile(auth_failure=1.0))
    assert (
        http.get("/kostat-census/getYearList", params={"serviceKey": ck}).json()["response"]["header"]["resultCode"]
        == "30"
    )


def test_slow_and_timeout(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    k = key("airline-registry")
    clean.set_faults("airline-registry", FaultProfile(slow=1.0, slow_seconds=0.3))
    t0 = time.monotonic()
    assert http.get("/airline-registry/airlines", params={"api_key": k}).status_code == 200
    assert time.monotonic() - t0 >= 0.3
    clean.set_faults("airline-registry", FaultProfile(timeout=1.0, timeout_seconds=2))
    with pytest.raises(httpx.ReadTimeout):
        http.get("/airline-registry/airlines", params={"api_key": k}, timeout=0.5)


def test_faults_are_deterministic(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    profile = FaultProfile(seed=7, rate_limit=0.3, server_error=0.2)
    clean.set_faults("airline-registry", profile)
    first = statuses(http, key("airline-registry"))
    assert {429, 500, 200} <= set(first)
    clean.reset()
    assert statuses(http, key("airline-registry")) == first  # same seed + requests, other key → same faults
    # interleaving other requests does not shift a request signature's own sequence
    clean.set_faults("airline-registry", profile)
    k = key("airline-registry")
    mixed = []
    for i in range(12):
        http.get("/airline-registry/airlines/search", params={"api_key": k, "name": "air"})
        mixed.append(http.get("/airline-registry/airlines", params={"api_key": k, "page": i % 3 + 1}).status_code)
    assert mixed == first
    clean.set_faults("airline-registry", profile.model_copy(update={"seed": 8}))
    assert statuses(http, k) != first  # another seed, another (fixed) pattern


def test_v2_changes_only_that_platform(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    before = {p: http.get(f"/{p}/openapi.json").json() for p in ("flight-ops", "airline-registry", "kostat-census")}
    clean.set_schema_version("flight-ops", "v2")
    after = {p: http.get(f"/{p}/openapi.json").json() for p in before}
    assert after["airline-registry"] == before["airline-registry"]
    assert after["kostat-census"] == before["kostat-census"]
    doc = after["flight-ops"]
    assert doc["info"]["version"] == "v2"
    props = doc["components"]["schemas"]["FlightV2"]["properties"]
    assert "departure_delay_min" in props and "dep_delay" not in props
    year = next(p for p in doc["paths"]["/flights"]["get"]["parameters"] if p["name"] == "year")
    assert year["required"] is True
    assert not any(p["name"] == "year" for p in before["flight-ops"]["paths"]["/flights"]["get"]["parameters"])
    k = key("flight-ops")
    assert http.get("/flight-ops/flights", params={"api_key": k, "carrier": "UA"}).status_code == 422
    row = http.get("/flight-ops/flights", params={"api_key": k, "carrier": "UA", "year": 2013}).json()["data"][0]
    assert "departure_delay_min" in row and "dep_delay" not in row
    assert clean.healthy()["schema_versions"]["flight-ops"] == "v2"  # type: ignore[index]


def test_v2_korean_and_music(http: httpx.Client, key: KeyFn, clean: DemoService) -> None:
    clean.set_schema_version("kostat-census", "v2")
    clean.set_schema_version("chinook-catalog", "v2")
    doc = http.get("/kostat-census/openapi.json").json()
    params = {p["name"]: p for p in doc["paths"]["/getCensusStatistics"]["get"]["parameters"]}
    assert params["admLevel"]["required"] is True
    assert "statValue" in doc["components"]["schemas"]["CensusStatV2"]["properties"]
    ck = key("kostat-census")
    missing = http.get("/kostat-census/getCensusStatistics", params={"serviceKey": ck, "year": 2020}).json()
    assert missing["response"]["header"]["resultCode"] == "11"
    ok = http.get(
        "/kostat-census/getCensusStatistics", params={"serviceKey": ck, "year": 2020, "admLevel": 3, "admCd": "11010"}
    ).json()["response"]
    assert ok["header"]["resultCode"] == "00"
    assert all(i["admLevel"] == 3 and "statValue" in i for i in ok["body"]["items"]["item"])
    cat = http.get("/chinook-catalog/openapi.json").json()
    sort = next(p for p in cat["paths"]["/tracks"]["get"]["parameters"] if p["name"] == "sort")
    assert sort["required"] is True and "duration_ms" in cat["components"]["schemas"]["TrackV2"]["properties"]


def test_service_reuse_and_startup_failure(demo: DemoService, tmp_path: Path) -> None:
    with DemoService(demo.cfg, log_dir=tmp_path) as again:
        assert again.process is None  # reused, not started
    assert demo.healthy() is not None  # leaving the reusing context did not stop the service
    broken = DemoService(
        DemoConfig(port=free_port(), startup_timeout_s=20), log_dir=tmp_path, config_path=tmp_path / "missing.yaml"
    )
    with pytest.raises(DemoServiceError) as err:
        broken.ensure_running()
    assert broken.url in str(err.value) and "missing.yaml" in str(err.value)
    broken.close()
