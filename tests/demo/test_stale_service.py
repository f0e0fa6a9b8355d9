"""A demo service left by an older code version is replaced, not reused (issue 21, item 11)."""

import logging
import subprocess
import sys
import time

import httpx

from factory.config import DemoConfig
from factory.demo.identity import data_digest, implementation_digest
from factory.demo.service import DemoService, stale_reason
from factory.paths import package_root
from tests.conftest import free_port


def _wait_health(url: str, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return httpx.get(f"{url}/health", timeout=1.0).json()
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError(f"nothing answered at {url}")


def test_stale_reason():
    assert stale_reason({"implementation": implementation_digest(), "data": data_digest()}) is None
    assert "implementation" in stale_reason({"implementation": "sha256:0", "data": data_digest()})
    assert "data" in stale_reason({"implementation": implementation_digest(), "data": "sha256:0"})
    assert stale_reason({"status": "ok"})  # an older service reporting no digests is stale


def test_stale_service_is_stopped_and_replaced(tmp_path, caplog):
    port = free_port()
    old = subprocess.Popen(
        [sys.executable, "-m", "tests.hostile.http_stale_demo", str(port)],
        cwd=package_root(), start_new_session=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        cfg = DemoConfig(port=port)
        assert _wait_health(cfg.base_url)["pid"] == old.pid
        svc = DemoService(cfg, log_dir=tmp_path)
        with caplog.at_level(logging.WARNING, logger="factory.demo.service"):
            health = svc.ensure_running()
        try:
            assert old.wait(timeout=15) is not None  # the stale one was stopped
            assert health["implementation"] == implementation_digest() and health["data"] == data_digest()
            assert health["pid"] != old.pid and svc.process is not None and health["pid"] == svc.process.pid
            assert any("stale" in r.getMessage() and str(old.pid) in r.getMessage() for r in caplog.records)
        finally:
            svc.close()
    finally:
        if old.poll() is None:
            old.kill()
            old.wait()
