"""Shared fixtures: a project config pointing at a private demo service and data folder."""

import socket
from pathlib import Path

import yaml

from factory.config import load_config


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(tmp: Path, *, domains: list[dict] | None = None, **overrides) -> Path:
    """The project's factory.yaml with its own demo port, data folder and caches under `tmp`."""
    data = load_config().model_dump(mode="json", exclude_none=True)
    data["data_dir"] = str(tmp / "data")
    data["demo"]["port"] = overrides.pop("port", None) or free_port()
    data["models"]["cache"]["path"] = str(tmp / "cache" / "llm.sqlite")
    data["models"]["embeddings"]["cache_path"] = str(tmp / "cache" / "embeddings.sqlite")
    if domains is not None:
        data["domains"] = domains
    for k, v in overrides.items():
        data[k] = v
    path = tmp / "factory.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def pytest_configure(config):
    """Tests never touch the project's Dagster instance: DAGSTER_HOME is a fresh temp folder."""
    import os
    import tempfile

    home = tempfile.mkdtemp(prefix="dagster-home-")
    with open(os.path.join(home, "dagster.yaml"), "w") as f:
        f.write("telemetry:\n  enabled: false\n")
    os.environ["DAGSTER_HOME"] = home
