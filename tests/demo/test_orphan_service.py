"""A demo service started for a run does not outlive the runs that use it (issue 21, item 11).

`factory run` starts the demo service in its own process group, so a run killed with -9 used to
leave it running forever (and every later run reused it without ever stopping it). The service now
knows its owners: the process that started it and every one that reused it; once all are gone it
shuts itself down. A detached service (kept up on purpose) stays.
"""

import os
import signal
import subprocess
import sys
import time

import httpx

from factory.demo.app import Owners, pid_alive
from factory.paths import package_root
from tests.conftest import free_port

# a "run": ensures the service is up (starting or reusing it), says so, then waits to be killed
RUN = """
import sys, time
from factory.config import DemoConfig
from factory.demo.service import DemoService
svc = DemoService(DemoConfig(port=int(sys.argv[1])), log_dir=sys.argv[2])
health = svc.ensure_running()
if sys.argv[3] == "detach":
    svc.detach()
print(health["pid"], flush=True)
time.sleep(600)
"""


def _run(port: int, log_dir: str, mode: str = "own") -> tuple[subprocess.Popen[str], int]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(package_root()), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, str(port), log_dir, mode],
        stdout=subprocess.PIPE, text=True, env=env, cwd=package_root(),
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the service's pid once it answers
    assert line.strip().isdigit(), f"the run did not report the service: {line!r}"
    return proc, int(line)


def _kill9(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


def _answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def _gone_within(pid: int, port: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _answers(port) and not pid_alive(pid):
            return True
        time.sleep(0.2)
    return False


def test_owners_bookkeeping():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    owned = Owners(os.getpid())
    owned.add(dead.pid)
    assert not owned.orphaned() and owned.pids == {os.getpid()}  # the dead one is dropped, we remain
    gone = Owners(dead.pid)
    assert gone.orphaned()
    foreground = Owners(None)
    foreground.add(os.getpid())  # nobody owns it: reusing it does not make it run-owned
    assert foreground.pids == set() and not foreground.orphaned()
    detached = Owners(dead.pid)
    detached.detach()
    assert not detached.orphaned()


def test_service_stops_once_every_run_using_it_is_killed(tmp_path):
    port = free_port()
    first, pid = _run(port, str(tmp_path))
    second = None
    try:
        # the second run reuses the first run's service and "detaches" it as a Dagster run's resource does
        # (keep_alive): only a service it started would be kept up, so the first run still owns this one
        second, reused = _run(port, str(tmp_path), "detach")
        assert reused == pid
        _kill9(first)
        time.sleep(3)  # several owner polls
        assert _answers(port), "the service stopped while a run still used it"
        _kill9(second)
        assert _gone_within(pid, port, 20), "the service outlived every run that used it"
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                _kill9(p)
        if pid_alive(pid):
            os.killpg(pid, signal.SIGKILL)


def test_detached_service_stays_up(tmp_path):
    port = free_port()
    run, pid = _run(port, str(tmp_path), "detach")
    try:
        _kill9(run)
        time.sleep(3)
        assert _answers(port), "a detached service stopped with its starter"
    finally:
        if run.poll() is None:
            _kill9(run)
        os.killpg(pid, signal.SIGTERM)
