"""Fixtures: one real demo service (uvicorn subprocess on a free loopback port) for the demo tests."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from factory.config import DemoConfig
from factory.demo.service import DemoService


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoService]:
    cfg = DemoConfig(host="127.0.0.1", port=free_port(), startup_timeout_s=60)
    with DemoService(cfg, log_dir=tmp_path_factory.mktemp("demo-logs")) as service:
        yield service


@pytest.fixture()
def http(demo: DemoService) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=demo.url, timeout=30) as client:
        yield client


@pytest.fixture()
def clean(demo: DemoService) -> Iterator[DemoService]:
    """The service with no faults, v1 everywhere and fresh sessions, restored afterwards too."""

    def restore() -> None:
        for platform in demo.healthy()["platforms"]:  # type: ignore[index]
            demo.set_faults(platform, None)
            demo.set_schema_version(platform, "v1")
        demo.reset()

    restore()
    yield demo
    restore()


@pytest.fixture()
def key(http: httpx.Client) -> Callable[[str], str]:
    """Acquire a key of a platform through its key tool (located by its x-key-acquisition)."""

    def acquire(platform: str) -> str:
        doc = http.get(f"/{platform}/openapi.json").json()
        for path, ops in doc["paths"].items():
            for method, op in ops.items():
                if "x-key-acquisition" in op:
                    body: Any = http.request(method.upper(), f"/{platform}{path}").json()
                    for part in op["x-key-acquisition"]["output_field"].split("."):
                        body = body[part]
                    return str(body)
        raise AssertionError(f"{platform} has no key tool")

    return acquire
