"""Structured model calls per second vs concurrency, for any OpenAI-compatible endpoint (issue 20 #5).

Sends N distinct structured `judge_non_gradable` calls (the JSON-schema reply every judge role
uses) through the factory's own `LLM` interface with the response cache off, at each concurrency
level in turn, and prints one table row per level: calls/s, the ratio against concurrency 1, the
share of valid structured replies.

    # the embedded llama.cpp model (started here on a free port, stopped afterwards)
    python benchmarks/llm_throughput.py --levels 1,2,4
    # a running vLLM (or any OpenAI-compatible) server
    python benchmarks/llm_throughput.py --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-0.5B-Instruct \\
        --levels 1,4,16,64 --n 128

llama.cpp's server answers one request at a time, so its ratios stay near 1.0; a server that
batches concurrent requests (vLLM) shows the batching gain as calls/s growing with the level.
`--json` prints the rows as JSON instead of a Markdown table.
"""

import argparse
import json
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from factory.llm.schemas import NonGradableInput  # noqa: E402
from factory.llm.service import LLM  # noqa: E402
from factory.model_config import LocalBackendConfig, ModelsConfig, OpenAIBackendConfig  # noqa: E402

ROLE = "judge_non_gradable"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _backend(a: argparse.Namespace, port: int, concurrency: int) -> Any:
    if a.base_url:
        return OpenAIBackendConfig(
            base_url=a.base_url,
            model=a.model,
            api_key_env=a.api_key_env,
            concurrency=concurrency,
            max_tokens=a.max_tokens,
            structured_mode=a.structured_mode,
        )
    return LocalBackendConfig(port=port, concurrency=concurrency, max_tokens=a.max_tokens, keep_alive=True)


def _inputs(level: int, n: int) -> list[NonGradableInput]:
    """Distinct questions per level, so no server-side prefix cache serves one level from another."""
    return [
        NonGradableInput(query=f"How many flights left airport #{level} on day {i + 1} of 2013?", answer=str(i))
        for i in range(n)
    ]


def _level(a: argparse.Namespace, port: int, state: Path, level: int, n: int) -> dict[str, Any]:
    cfg = ModelsConfig(
        backends={"bench": _backend(a, port, level)},
        roles={ROLE: "bench"},
        max_retries=0,
        fallback_to_rules=False,
        cache={"enabled": False},
    )
    llm = LLM(cfg, state_dir=state)
    llm.start([ROLE])
    inputs = _inputs(level, n)
    t0 = time.perf_counter()
    results = llm.map(ROLE, inputs)
    elapsed = time.perf_counter() - t0
    valid = sum(1 for r in results if r.implementation == "model" and r.ok)
    return {
        "concurrency": level,
        "calls": n,
        "seconds": round(elapsed, 2),
        "calls_per_s": round(n / elapsed, 3),
        "valid_share": round(valid / n, 3),
    }


def table(rows: list[dict[str, Any]]) -> str:
    base = rows[0]["calls_per_s"] if rows else 0.0
    out = [
        "| concurrency | calls | s | calls/s | × vs first level | valid structured replies |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        ratio = round(r["calls_per_s"] / base, 2) if base else None
        out.append(
            f"| {r['concurrency']} | {r['calls']} | {r['seconds']} | {r['calls_per_s']} | {ratio} "
            f"| {r['valid_share']} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", help="OpenAI-compatible endpoint root with /v1 (default: the embedded model)")
    ap.add_argument("--model", default="SmolLM2-135M-Instruct", help="model id sent with each request")
    ap.add_argument("--api-key-env", default=None, help="environment variable holding the endpoint's key")
    ap.add_argument("--structured-mode", default="json_schema", help="how structured replies are asked for")
    ap.add_argument("--levels", default="1,2,4", help="concurrency levels, comma-separated")
    ap.add_argument("--n", type=int, default=12, help="calls per level (use at least 4x the largest level)")
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--port", type=int, default=0, help="embedded model: reuse a server on this port")
    ap.add_argument("--json", action="store_true", help="print JSON rows instead of a Markdown table")
    a = ap.parse_args()
    levels = [int(x) for x in a.levels.split(",") if x.strip()]
    if not levels or min(levels) < 1:
        ap.error("--levels: positive integers, e.g. 1,4,16")
    port = a.port or _free_port()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        _level(a, port, state, levels[0], 1)  # warm-up (and start of the embedded server), not timed
        rows = [_level(a, port, state, lvl, a.n) for lvl in levels]
        if not a.base_url and not a.port:
            from factory.llm.servers import ManagedServer

            ManagedServer(
                name="bench",
                base_url=f"http://127.0.0.1:{port}/v1",
                model=a.model,
                command=None,
                state_dir=state,
                startup_timeout_s=1,
            ).stop_recorded()
    endpoint = a.base_url or f"embedded llama.cpp ({a.model}) on 127.0.0.1:{port}"
    if a.json:
        sys.stdout.write(json.dumps({"endpoint": endpoint, "rows": rows}) + "\n")
    else:
        sys.stdout.write(f"endpoint: {endpoint}, max_tokens {a.max_tokens}\n\n{table(rows)}\n")


if __name__ == "__main__":
    main()
