"""Structured calls per second against the local llama.cpp server: concurrency 1 vs 4, in one run.

Starts (or reuses) the embedded SmolLM2 server on a free port, sends N distinct
structured `judge_non_gradable` calls through the LLM interface with the cache
off, first one at a time, then four in flight, and prints one JSON line:

    {"n": 12, "c1_calls_per_s": ..., "c4_calls_per_s": ..., "ratio_c4_over_c1": ...}

llama-cpp-python's server answers one request at a time, so expect a ratio
near 1.0; against vLLM (which batches) the same script shows the gain.

Usage: python benchmarks/llm_concurrency.py [--n 12] [--max-tokens 48] [--port PORT]
"""

import argparse
import json
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from factory.llm.schemas import NonGradableInput  # noqa: E402
from factory.llm.service import LLM  # noqa: E402
from factory.model_config import LocalBackendConfig, ModelsConfig  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(
    port: int, state: Path, concurrency: int, inputs: list[NonGradableInput], max_tokens: int
) -> tuple[float, int]:
    cfg = ModelsConfig(
        backends={
            "local": LocalBackendConfig(port=port, concurrency=concurrency, max_tokens=max_tokens, keep_alive=True)
        },
        roles={"judge_non_gradable": "local"},
        max_retries=0,
        cache={"enabled": False},
    )
    llm = LLM(cfg, state_dir=state)
    llm.start(["judge_non_gradable"])
    t0 = time.perf_counter()
    results = llm.map("judge_non_gradable", inputs)
    elapsed = time.perf_counter() - t0
    valid = sum(r.implementation == "model" and r.ok for r in results)
    return len(inputs) / elapsed, valid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=12, help="structured calls per concurrency level")
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--port", type=int, default=0, help="reuse a server on this port (default: start one)")
    a = ap.parse_args()
    port = a.port or _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        c1_inputs = [
            NonGradableInput(query=f"How many flights left EWR on 2013-03-{i + 1:02d}?", answer=str(i))
            for i in range(a.n)
        ]
        c4_inputs = [
            NonGradableInput(query=f"How many flights left LGA on 2013-04-{i + 1:02d}?", answer=str(i))
            for i in range(a.n)
        ]
        # warm-up (also starts the server), not timed
        _run(port, state, 1, c1_inputs[:1], a.max_tokens)
        c1, v1 = _run(port, state, 1, c1_inputs, a.max_tokens)
        c4, v4 = _run(port, state, 4, c4_inputs, a.max_tokens)
        # stop the server this script started
        from factory.llm.servers import ManagedServer

        server = ManagedServer(
            name="local",
            base_url=f"http://127.0.0.1:{port}/v1",
            model="SmolLM2-135M-Instruct",
            command=None,
            state_dir=state,
            startup_timeout_s=1,
        )
        if not a.port:
            server.stop_recorded()
    out = {
        "n": a.n,
        "max_tokens": a.max_tokens,
        "c1_calls_per_s": round(c1, 3),
        "c4_calls_per_s": round(c4, 3),
        "ratio_c4_over_c1": round(c4 / c1, 3),
        "valid_c1": v1,
        "valid_c4": v4,
    }
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
