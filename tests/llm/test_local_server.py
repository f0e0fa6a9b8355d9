"""The real embedded model: SmolLM2-135M-Instruct behind llama-cpp-python's server.

Counts the server's own requests (its access log) to show that a run killed
midway is resumed without repeating a single finished prompt.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest

from factory.llm.cache import ResponseCache
from factory.llm.errors import BackendUnavailableError
from factory.llm.schemas import JudgeVerdict
from factory.llm.servers import ManagedServer, local_command
from factory.llm.service import LLM
from factory.model_config import LocalBackendConfig, ModelsConfig
from tests.llm.conftest import completions_in_log, free_port, local_models
from tests.llm.samples import sample_inputs

ROOT = Path(__file__).resolve().parents[2]


def _port(server: ManagedServer) -> int:
    return int(server.base_url.rsplit(":", 1)[1].split("/")[0])


def test_schema_valid_structured_reply_via_openai_client(local_server: ManagedServer, tmp_path: Path) -> None:
    # the raw client call the backend makes: json_object + schema, answered by the real model
    client = openai.OpenAI(base_url=local_server.base_url, api_key="none")
    resp = client.chat.completions.create(
        model=local_server.model,
        messages=[{"role": "user", "content": "Is 'What is the latest news?' a checkable question? Reply in JSON."}],
        response_format={"type": "json_object", "schema": JudgeVerdict.model_json_schema()},  # type: ignore[typeddict-item]
        max_tokens=80,
        temperature=0,
    )
    JudgeVerdict.model_validate_json(resp.choices[0].message.content or "")

    # the same through the LLM interface, reusing the healthy server, with the model recorded
    llm = LLM(
        local_models(_port(local_server), tmp_path / "c.sqlite", judge_answer_leakage="local"),
        state_dir=tmp_path / "srv",
    )
    r = llm.call("judge_answer_leakage", sample_inputs()["judge_answer_leakage"])
    assert r.implementation == "model" and r.ok and isinstance(r.output, JudgeVerdict)
    assert r.backend == "local" and r.model == "SmolLM2-135M-Instruct"
    assert llm.backends["local"].server.reused is True
    assert r.requests >= 1 and llm.accounting.total().completion_tokens > 0
    llm.close()
    assert local_server.healthy()  # a reused server is not stopped by the run that reused it


def _wait_until_log_quiet(server: ManagedServer, quiet_s: float = 3.0, limit_s: float = 90.0) -> None:
    """Wait until the server's completion count has not moved for `quiet_s` (a fixed sleep flaked under load)."""
    last, since, deadline = completions_in_log(server.log_path), time.monotonic(), time.monotonic() + limit_s
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = completions_in_log(server.log_path)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return


def test_kill_midway_then_rerun_pays_only_for_unfinished(local_server: ManagedServer, tmp_path: Path) -> None:
    n = 8
    cache_path = tmp_path / "cache.sqlite"
    cmd = [sys.executable, "-m", "tests.llm.run_prompts", str(_port(local_server)), str(cache_path), str(n)]
    before = completions_in_log(local_server.log_path)
    child = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300  # generous: requests queue behind each other on a loaded machine
    cache = None
    while time.monotonic() < deadline:
        if cache_path.exists():
            cache = cache or ResponseCache(cache_path)
            if cache.count() >= 3:
                break
        assert child.poll() is None, child.stderr.read().decode()
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    _wait_until_log_quiet(local_server)  # a request that was in flight finishes on the server (slow under load)
    assert cache is not None
    finished = cache.count()
    first_run = completions_in_log(local_server.log_path) - before
    assert 3 <= finished < n and first_run >= finished

    mid = completions_in_log(local_server.log_path)
    rerun = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"done {n} requests={n - finished}" in rerun.stdout
    assert completions_in_log(local_server.log_path) - mid == n - finished  # the server's own count
    assert cache.count() == n

    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"done {n} requests=0" in again.stdout
    assert completions_in_log(local_server.log_path) - mid == n - finished


def test_server_lifecycle_and_crash_mid_run(tmp_path: Path) -> None:
    """The factory starts its own server, reports a crash by backend and URL, and keeps finished replies."""
    port = free_port()
    cfg = ModelsConfig(
        backends={"local": LocalBackendConfig(port=port, max_tokens=48, max_connection_retries=0)},
        roles={"judge_non_gradable": "local"},
        max_retries=0,
        cache={"path": str(tmp_path / "c.sqlite")},
    )
    llm = LLM(cfg, state_dir=tmp_path / "srv")
    base = sample_inputs()["judge_non_gradable"]
    first = llm.call("judge_non_gradable", base)
    server = llm.backends["local"].server
    assert first.implementation == "model" and server.reused is False and server.pid is not None
    os.killpg(server.pid, signal.SIGKILL)  # the server dies mid-run
    with pytest.raises(BackendUnavailableError, match=rf"'local' at http://127.0.0.1:{port}/v1"):
        llm.call("judge_non_gradable", base.model_copy(update={"query": "How many flights on 2013-02-01?"}))
    again = llm.call("judge_non_gradable", base)  # the finished part is cached
    assert again.cache_hits == 1 and again.requests == 0
    llm.close()


def test_bad_model_path_is_a_clear_start_error(tmp_path: Path) -> None:
    from factory.llm.errors import ServerStartError

    with pytest.raises(ServerStartError, match="does not exist"):
        local_command(LocalBackendConfig(model_path=str(tmp_path / "missing.gguf")))
