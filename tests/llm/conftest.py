"""Fixtures of the model-layer tests: a real llama.cpp server on a free loopback port."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from factory.llm.servers import ManagedServer, local_command
from factory.model_config import LocalBackendConfig, ModelsConfig
from tests.conftest import free_port


def completions_in_log(path: Path) -> int:
    """Chat-completion requests the server has logged (uvicorn access log)."""
    try:
        return path.read_text(errors="replace").count('"POST /v1/chat/completions')
    except OSError:
        return 0


def local_models(port: int, cache_path: Path | None, **roles: str) -> ModelsConfig:
    return ModelsConfig(
        backends={"local": LocalBackendConfig(port=port, max_tokens=96, max_connection_retries=0)},
        roles=roles,
        cache={"path": str(cache_path) if cache_path else "unused.sqlite", "enabled": cache_path is not None},
    )


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ManagedServer]:
    """One SmolLM2 server for the whole session (started like the factory starts it)."""
    cfg = LocalBackendConfig(port=free_port())
    server = ManagedServer(
        name="local",
        base_url=cfg.base_url,
        model=cfg.model,
        command=local_command(cfg),
        state_dir=tmp_path_factory.mktemp("servers"),
        startup_timeout_s=60,
    )
    assert server.ensure() == "started"
    yield server
    server.stop()
