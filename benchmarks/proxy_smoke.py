"""End-to-end check of the real `factory proxy` command on a materialized project (issue 18, item 7).

    python benchmarks/proxy_smoke.py --config /path/to/factory.yaml [--domain music] [--tasks 5]
        [--variants native,merge_full_flat,transaction_all,schema_discovery,transaction_over_references,split_interval_2]

A scripted OpenAI-compatible upstream (tests/eval/scripted.py) runs in this process; `factory proxy` runs as
a subprocess over the project's tool_inventory (starting the demo service if the project uses it); the
`openai` client sends each of the first kept tasks of the domain under each variant. The scripted model
emits the task's golden trace encoded into the variant (protocol references filled with the ids the
proxy's decoder hands out), then answers. A turn passes when the proxy executed exactly the task's native
actions a*, every executed call succeeded, and the turn ended with the model's answer. Prints one row per
turn (variant, task, variant calls, native actions, passed, model calls, seconds) and the total; exit 1
when a turn fails. Run it from the repository root (it imports tests.eval.scripted).
"""

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
from typing import Any

DEFAULT_VARIANTS = (
    "native,merge_full_flat,transaction_all,schema_discovery,transaction_over_references,split_interval_2"
)


def main() -> int:
    import openai

    from factory.config import load_config
    from factory.io import read_artifact
    from factory.variants.actions import as_trace, native_actions, native_catalog
    from factory.variants.adapter import AdapterSession, run_trace
    from factory.variants.build import inventory_specs
    from factory.variants.registry import build_variants
    from tests.conftest import free_port
    from tests.eval.scripted import ScriptedServer

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--domain", default="music")
    ap.add_argument("--tasks", type=int, default=5)
    ap.add_argument("--variants", default=DEFAULT_VARIANTS)
    args = ap.parse_args()

    cfg = load_config(args.config)
    specs = [s for s in inventory_specs(read_artifact(cfg, "tool_inventory", args.domain)) if s.domain == args.domain]
    native = native_catalog(args.domain, specs)
    kept = read_artifact(cfg, "judged_queries", args.domain)["kept"][: args.tasks]
    by = {(s.platform, s.name): s for s in specs}
    vids = [v.strip() for v in args.variants.split(",") if v.strip()]
    variants = {v.id: v for v in build_variants(native, None, vids)[0]}
    missing = sorted(set(vids) - set(variants))
    if missing:
        print(f"not built here (unknown, needs the embedder, or not applicable): {', '.join(missing)}", file=sys.stderr)
        return 2

    async def protocol_only(_: Any) -> dict[str, Any]:
        return {}

    upstream = ScriptedServer().start()
    port = free_port()
    cmd = [sys.executable, "-m", "factory.cli", "proxy", "--config", args.config, "--domain", args.domain]
    cmd += ["--variant", vids[0], "--upstream", upstream.base_url, "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    t0 = time.monotonic()
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() - t0 > 300:
                proc.kill()
                print(proc.stdout.read() if proc.stdout else "", file=sys.stderr)
                upstream.stop()
                return 1
            time.sleep(0.5)
    print(f"factory proxy answering after {time.monotonic() - t0:.1f} s")
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-smoke-0123456789", max_retries=0)
    passed = total = 0
    try:
        for vid in vids:
            v = variants[vid]
            for task in kept:
                gold = native_actions(task, by)
                run = asyncio.run(run_trace(AdapterSession(v, native), v.encoder(as_trace(gold)), protocol_only))
                calls = [{"name": s.call.name, "arguments": s.call.arguments} for s in run.steps]
                query = f"[{vid}] {task['query']}"
                upstream.script(query, [{"tool_calls": calls}, "ANSWER: done"])
                t1 = time.monotonic()
                reply = client.chat.completions.create(
                    model="scripted",
                    messages=[{"role": "user", "content": query}],
                    extra_headers={"X-Factory-Variant": vid},
                )
                x = (reply.model_extra or {})["schema_proxy"]
                keys = [json.dumps([a["operation"], a["arguments"]], sort_keys=True) for a in x["native_actions"]]
                ok = (
                    keys == [a.key() for a in gold]
                    and all(s.get("ok") for s in x["steps"] if s["kind"] == "executed")
                    and x["stop"] == "answered"
                )
                total += 1
                passed += ok
                print(
                    vid, task["id"][7:15], len(calls), len(keys), ok, x["model_calls"], f"{time.monotonic() - t1:.2f}"
                )
    finally:
        proc.terminate()
        proc.wait(30)
        upstream.stop()
    print(f"{passed}/{total} turns: native actions == a*, every executed call ok, answered")
    return 0 if passed == total else 1


if __name__ == "__main__":
    sys.exit(main())
