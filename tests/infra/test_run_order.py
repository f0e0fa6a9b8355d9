"""`run_pipeline`'s order with parallel domains (the multiprocess / k8s_job executors): each domain goes through
the per-domain stages between two global ones on its own, a failed domain stops there, and a global stage waits
for every domain. A fake runner records what ran when; no Dagster run is made."""

import threading
import time
from types import SimpleNamespace

import dagster as dg

from sensors.jobs import PIPELINE_STAGES, run_pipeline

ASSETS = {name: [dg.AssetKey(f"{name}_value")] for name, _ in PIPELINE_STAGES}


class FakeDefs:
    def resolve_job_def(self, name: str):
        return SimpleNamespace(asset_layer=SimpleNamespace(executable_asset_keys=ASSETS[name]))


class FakeRunner:
    """Records (event, job, partition) in order; `fail` names the (job, partition) runs that fail; `hold` makes a
    run wait until another one has started (or give up after `patience_s`, recorded as a timeout)."""

    def __init__(self, fail=(), hold=None, patience_s: float = 20.0):
        self.fail, self.hold, self.patience_s = set(fail), hold or {}, patience_s
        self.events: list[tuple[str, str, str]] = []
        self.started: dict[tuple[str, str], threading.Event] = {}
        self.lock = threading.Lock()

    def _started(self, key):
        with self.lock:
            return self.started.setdefault(key, threading.Event())

    def __call__(self, defs, job_name, *, instance, partition_key, run_config, asset_selection, tags):
        key = (job_name, partition_key or "(global)")
        with self.lock:
            self.events.append(("start", *key))
        self._started(key).set()
        if key in self.hold and not self._started(self.hold[key]).wait(self.patience_s):
            with self.lock:
                self.events.append(("timeout", *key))
        time.sleep(0.01)
        with self.lock:
            self.events.append(("end", *key))
        return SimpleNamespace(
            success=key not in self.fail, run_id=f"{job_name}-{key[1]}", get_asset_check_evaluations=list
        )


def _run(runner, parallel, **kw):
    return run_pipeline(
        FakeDefs(),  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        ["music", "korea"],
        progress=lambda m: None,
        runner=runner,
        parallel_domains=parallel,
        **kw,
    )


def test_a_domain_does_not_wait_for_the_other_between_global_stages():
    # korea's corpus run lasts until music's ingestion has started: only possible without a stage barrier
    runner = FakeRunner(hold={("domain_corpus", "korea"): ("domain_ingestion", "music")})
    results = _run(runner, 2)
    assert ("timeout", "domain_corpus", "korea") not in runner.events, runner.events
    assert all(r.success for r in results.values())
    ev = runner.events
    # the global catalog starts after both domains' ingestion ended, the synthesis after the catalog
    catalog = ev.index(("start", "global_catalog", "(global)"))
    assert catalog > max(ev.index(("end", "domain_ingestion", d)) for d in ("music", "korea"))
    assert min(ev.index(("start", "domain_synthesis", d)) for d in ("music", "korea")) > catalog
    # results are listed stage by stage, domains in the order given (what `factory run` prints from)
    assert list(results)[:4] == [
        ("domain_corpus", "music"),
        ("domain_corpus", "korea"),
        ("domain_ingestion", "music"),
        ("domain_ingestion", "korea"),
    ]


def test_a_failed_domain_stops_and_the_global_stages_are_skipped():
    runner = FakeRunner(fail={("domain_corpus", "korea")})
    results = _run(runner, 2)
    ran = {(job, d) for kind, job, d in runner.events if kind == "start"}
    assert ("domain_ingestion", "music") in ran and ("domain_ingestion", "korea") not in ran
    assert not [k for k in ran if k[1] == "(global)"]  # an earlier stage failed, keep_going is off
    assert not results[("domain_corpus", "korea")].success

    going = FakeRunner(fail={("domain_corpus", "korea")})
    _run(going, 2, keep_going=True)
    ran = {(job, d) for kind, job, d in going.events if kind == "start"}
    assert ("global_catalog", "(global)") in ran and ("domain_synthesis", "korea") not in ran


def test_one_domain_at_a_time_keeps_the_stage_order():
    runner = FakeRunner()
    _run(runner, 1)
    starts = [(job, d) for kind, job, d in runner.events if kind == "start"]
    assert starts[:4] == [
        ("domain_corpus", "music"),
        ("domain_corpus", "korea"),
        ("domain_ingestion", "music"),
        ("domain_ingestion", "korea"),
    ]
