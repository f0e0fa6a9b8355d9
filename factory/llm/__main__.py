"""Start, stop or check a managed model server: `python -m factory.llm {start,stop,status} [--backend local]`.

`start` leaves the server running (keep_alive) so later runs reuse it; `stop` ends the one recorded.
"""

import argparse
import sys

from factory.config import load_config
from factory.llm.service import launch_command, server_for


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m factory.llm", description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["start", "stop", "status"])
    ap.add_argument("--config", default=None, help="factory.yaml (default: $FACTORY_CONFIG or the nearest)")
    ap.add_argument("--backend", default="local")
    a = ap.parse_args(argv)
    models = load_config(a.config).resolved_models()
    if a.backend not in models.backends:
        ap.error(f"unknown backend {a.backend!r}; declared: {', '.join(models.backends)}")
    server = server_for(a.backend, models.backends[a.backend], models)
    if server is None:
        sys.stderr.write(f"backend {a.backend!r} is not a managed server\n")
        return 2
    if a.action == "start":
        server.keep_alive = True
        server.command = launch_command(models.backends[a.backend])
        outcome = server.ensure()
        sys.stdout.write(f"{a.backend}: {outcome} at {server.base_url} (log {server.log_path})\n")
    elif a.action == "stop":
        sys.stdout.write(f"{a.backend}: {'stopped' if server.stop_recorded() else 'nothing recorded to stop'}\n")
    else:
        sys.stdout.write(f"{a.backend}: {'healthy' if server.healthy() else 'not answering'} at {server.base_url}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
