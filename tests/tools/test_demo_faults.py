"""The executor against the demo service's own seeded faults: every fault kind → its outcome class."""

import pytest

from factory.config import DemoConfig, ExecutorConfig, FaultProfile
from factory.demo.service import DemoService
from factory.tools.executor import run_calls
from factory.tools.openapi import fetch_spec, load_openapi
from factory.tools.outcomes import Outcome
from tests.conftest import free_port

PLATFORM = "airline-registry"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    cfg = DemoConfig(port=free_port(), startup_timeout_s=60)
    with DemoService(cfg, log_dir=tmp_path_factory.mktemp("logs")) as svc:
        yield svc


@pytest.fixture(scope="module")
def tools(demo):
    doc = fetch_spec(demo.spec_url(PLATFORM))
    return load_openapi(doc, domain="aviation", platform=PLATFORM, spec_locator=demo.spec_url(PLATFORM))


CFG = ExecutorConfig(timeout_s=1.0, max_retries=1, backoff_base_s=0.01, max_backoff_s=0.05)


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        ({"rate_limit": 1.0, "retry_after_s": 0.01}, Outcome.RATE_LIMIT),
        ({"server_error": 1.0}, Outcome.SERVER_ERROR),
        ({"timeout": 1.0, "timeout_seconds": 3.0}, Outcome.TIMEOUT),
        ({"auth_failure": 1.0}, Outcome.AUTH_ERROR),
        ({"unavailable": ["get_airline"]}, Outcome.ENDPOINT_UNAVAILABLE),
        ({}, Outcome.SEMANTIC_SUCCESS),
    ],
)
def test_fault_kind_maps_to_outcome(demo, tools, profile, expected):
    demo.set_faults(PLATFORM, FaultProfile(seed=3, **profile))
    try:
        (res,) = run_calls(tools, [("get_airline", {"carrier": "DL"})], CFG)
    finally:
        demo.set_faults(PLATFORM, None)
    assert res.outcome == expected, res.detail
    if expected in (Outcome.RATE_LIMIT, Outcome.SERVER_ERROR):
        assert res.attempts == CFG.max_retries + 1  # retried, then classified
    assert res.args["api_key"] == "<KEY>"  # the acquired key was injected and redacted


def test_missing_key_is_rejected_by_the_service(demo, tools):
    (res,) = run_calls(tools, [("get_airline", {"carrier": "DL", "api_key": "not-a-key"})], CFG)
    assert res.outcome == Outcome.AUTH_ERROR and "not-a-key" not in res.model_dump_json()
