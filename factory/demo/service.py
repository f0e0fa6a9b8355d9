"""Lifecycle of the demo service: reuse a running instance or start one as a subprocess."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from factory.config import DemoConfig, FaultProfile
from factory.paths import package_root

log = logging.getLogger(__name__)


class DemoServiceError(RuntimeError):
    """The demo service could not be reached or started."""


def stale_reason(health: dict[str, Any]) -> str | None:
    """Why a running service (its /health body) is not the one this process would start; None: reusable."""
    from factory.demo.identity import data_digest, implementation_digest

    for field, mine in (("implementation", implementation_digest()), ("data", data_digest())):
        theirs = health.get(field)
        if theirs != mine:
            return f"its {field} digest {str(theirs)[:19]} differs from this code's {mine[:19]}"
    return None


def _signal_group(pid: int, sig: int) -> None:
    """Signal the process group `pid` leads (a service we start leads its own), else the process."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


class DemoService:
    """Context manager around the demo service at `demo_cfg.host:port`.

    `ensure_running()` reuses a healthy instance (applying the configured schema versions
    and faults through the admin endpoints), replaces a stale one (its /health reports another
    code or data digest than this process's: left running by an older version) or starts `python -m factory.demo` in its own
    process group, logging to `log_dir/demo-service-<port>.log` (default: `./logs`; runs pass
    the project's `ProjectConfig.logs_dir`). `stop()` ends the process
    only if this object started it.
    """

    def __init__(
        self,
        demo_cfg: DemoConfig,
        log_dir: str | os.PathLike[str] | None = None,
        config_path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.cfg = demo_cfg
        self.log_dir = Path(log_dir) if log_dir is not None else Path.cwd() / "logs"
        self.config_path = config_path
        self.process: subprocess.Popen[bytes] | None = None
        self._client = httpx.Client(base_url=demo_cfg.base_url, timeout=10.0)

    # ---- URLs
    @property
    def url(self) -> str:
        return self.cfg.base_url

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"demo-service-{self.cfg.port}.log"

    def base_url(self, platform: str) -> str:
        return f"{self.url}/{platform}"

    def spec_url(self, platform: str) -> str:
        return f"{self.url}/{platform}/openapi.json"

    # ---- lifecycle
    def healthy(self) -> dict[str, Any] | None:
        """The /health body when the service answers OK, else None."""
        try:
            r = self._client.get("/health", timeout=2.0)
        except httpx.HTTPError:
            return None
        if r.status_code == 200 and r.json().get("status") == "ok":
            return r.json()
        return None

    def ensure_running(self) -> dict[str, Any]:
        """Reuse or start the service; returns its /health body."""
        health = self.healthy()
        if health is not None and (why := stale_reason(health)):
            self._replace_stale(health, why)
            health = None
        if health is None:
            self._start()
            health = self._wait_healthy()
        else:
            log.info("reusing demo service at %s", self.url)
            self._own()
        self._apply_config(health["platforms"])
        return self.healthy() or health

    def _replace_stale(self, health: dict[str, Any], why: str) -> None:
        """Stop a stale service answering at our address (it runs in its own process group)."""
        pid = health.get("pid")
        if not isinstance(pid, int) or pid <= 0:
            raise DemoServiceError(
                f"the demo service at {self.url} is stale ({why}) and does not report its pid: stop it "
                "(or choose another demo.port) and run again"
            )
        log.warning(
            "demo service at %s (pid %d) is stale: %s; stopping it and starting a fresh one", self.url, pid, why
        )
        _signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.healthy() is not None:
            time.sleep(0.1)
        if self.healthy() is not None:
            _signal_group(pid, signal.SIGKILL)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and self.healthy() is not None:
                time.sleep(0.1)
        if self.healthy() is not None:
            raise DemoServiceError(f"could not stop the stale demo service at {self.url} (pid {pid}; {why})")

    def _start(self) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "factory.demo",
            "--host",
            self.cfg.host,
            "--port",
            str(self.cfg.port),
            "--log-level",
            "warning",
            "--owner-pid",  # a run killed with -9 leaves no service behind (it stops once we are gone)
            str(os.getpid()),
        ]
        if self.config_path is not None:
            cmd += ["--config", str(self.config_path)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_root()), env.get("PYTHONPATH")]))
        log.info("starting demo service: %s (log: %s)", " ".join(cmd), self.log_path)
        with open(self.log_path, "ab") as logf:
            self.process = subprocess.Popen(
                cmd,
                stdout=logf,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=package_root(),
                env=env,
                start_new_session=True,
            )

    def _own(self, detach: bool = False) -> None:
        """Tell the service that this process uses it too (a run-owned service stays up while we live),
        or with `detach` that it stays up whatever happens to its owners."""
        body: dict[str, Any] = {"detach": True} if detach else {"pid": os.getpid()}
        try:
            self._client.post("/_admin/owner", json=body, timeout=5.0)
        except httpx.HTTPError as e:
            log.warning("demo service at %s: could not register as its user: %s", self.url, e)

    def _wait_healthy(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.cfg.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                health = self.healthy()
                if health is not None:  # another run won the race for the port: share its service
                    log.info("demo service at %s was started concurrently by another process; reusing it", self.url)
                    self.process = None
                    self._own()
                    return health
                raise DemoServiceError(
                    f"demo service at {self.url} exited with code {self.process.returncode} during startup; "
                    f"last lines of {self.log_path}:\n{self._log_tail()}"
                )
            health = self.healthy()
            if health is not None:
                log.info("demo service up at %s", self.url)
                return health
            time.sleep(0.1)
        self.stop()
        raise DemoServiceError(
            f"demo service at {self.url} did not answer /health within {self.cfg.startup_timeout_s:g}s; "
            f"last lines of {self.log_path}:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _apply_config(self, platforms: list[str]) -> None:
        """Make the service's versions and faults those of this object's config (v1 / none by default)."""
        for platform in platforms:
            self.set_schema_version(platform, self.cfg.schema_versions.get(platform, "v1"))
            self.set_faults(platform, self.cfg.faults.get(platform))

    def stop(self) -> None:
        """Terminate the service if this object started it (its whole process group)."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        log.info("stopping demo service at %s (pid %d)", self.url, proc.pid)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        self.stop()
        self._client.close()

    def shutdown(self) -> int | None:
        """Stop whatever demo service answers at this address (also one another process started).

        Returns the pid that was signalled, or None when nothing answered.
        """
        health = self.healthy()
        if health is None or not health.get("pid"):
            return None
        pid = int(health["pid"])
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and self.healthy() is not None:
            time.sleep(0.1)
        return pid

    def detach(self) -> None:
        """Leave a service this object started running (it outlives us and its other owners); release
        the client. A service it only reused keeps its owners (e.g. the `factory run` around a Dagster
        run whose resource reused it): it still stops once they are all gone."""
        if self.process is not None:
            log.info("leaving demo service at %s running (pid %d)", self.url, self.process.pid)
            self._own(detach=True)
        self.process = None
        self._client.close()

    def __enter__(self) -> DemoService:
        self.ensure_running()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ---- admin helpers
    def _admin(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        r = self._client.request(method, path, **kwargs)
        if r.status_code != 200:
            raise DemoServiceError(f"{method} {self.url}{path} answered {r.status_code}: {r.text[:300]}")
        return r.json()

    def set_schema_version(self, platform: str, version: str) -> dict[str, Any]:
        return self._admin("POST", "/_admin/schema_version", json={"platform": platform, "version": version})

    def set_faults(self, platform: str, profile: FaultProfile | dict[str, Any] | None) -> dict[str, Any]:
        body = profile.model_dump() if isinstance(profile, FaultProfile) else profile
        return self._admin("POST", "/_admin/faults", json={"platform": platform, "profile": body})

    def reset(self) -> dict[str, Any]:
        return self._admin("POST", "/_admin/reset")

    def edit_data(
        self,
        platform: str,
        table: str,
        match: dict[str, Any],
        values: dict[str, Any] | None = None,
        delete: bool = False,
    ) -> dict[str, Any]:
        """Overwrite (`values`: column → new value) or delete the rows of a platform's table matching `match`;
        undone by reset()."""
        body = {"platform": platform, "table": table, "match": match, "set": values, "delete": delete}
        return self._admin("POST", "/_admin/data", json=body)

    def stats(self) -> dict[str, Any]:
        return self._admin("GET", "/_admin/stats")
