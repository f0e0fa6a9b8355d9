"""`python -m factory.demo --host 127.0.0.1 --port 8765 [--config factory.yaml]`: run the demo service."""

from __future__ import annotations

import argparse
import logging

import uvicorn

from factory.config import ConfigError, DemoConfig, load_config
from factory.demo.app import create_app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factory.demo", description="Run the bundled demo API service.")
    parser.add_argument(
        "--config",
        default=None,
        help="Project config file (default: $FACTORY_CONFIG or the nearest factory.yaml; none: demo defaults).",
    )
    parser.add_argument("--host", default=None, help="Bind address (default: demo.host of the config).")
    parser.add_argument("--port", type=int, default=None, help="Port (default: demo.port of the config).")
    parser.add_argument(
        "--owner-pid",
        type=int,
        default=None,
        help="Shut down once this process (and every process that reused the service since) is gone.",
    )
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        demo = load_config(args.config).demo
    except ConfigError:
        if args.config is not None:
            raise
        demo = DemoConfig()  # no project here (an installed package): whoever starts it applies its settings
    demo = demo.model_copy(update={k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None})
    uvicorn.run(
        create_app(demo, owner_pid=args.owner_pid),
        host=demo.host,
        port=demo.port,
        log_level=args.log_level,
        access_log=False,
    )


if __name__ == "__main__":
    main()
