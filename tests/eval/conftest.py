"""Fixtures of the evaluation tests: a scripted OpenAI-compatible server and scripts built from real tasks."""

import copy
import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from factory.eval.oracle import final_answer, golden_model_calls
from factory.io import artifact_exists
from factory.model_config import ModelsConfig, OpenAIBackendConfig
from factory.tools.registry import ToolRegistry
from tests.eval.scripted import ScriptedServer

DOMAINS = ("aviation", "music", "korea")


@pytest.fixture(scope="session")
def scripted_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer().start()
    yield server
    server.stop()


def scripted_models(server: ScriptedServer, cache_path: str, **extra_backends: Any) -> ModelsConfig:
    """'scripted' (OpenAI tool_calls) and 'scripted_text' (tools in the prompt) backends on the server."""
    common = {"model": server.model, "base_url": server.base_url, "api_key_env": None, "max_connection_retries": 0}
    return ModelsConfig(
        backends={
            "scripted": OpenAIBackendConfig(**common),
            "scripted_text": OpenAIBackendConfig(**common, tool_calls=False),
            **extra_backends,
        },
        roles={},
        cache={"path": cache_path},
    )


def scripted_config(world: Any, server: ScriptedServer, tmp_path: Any, **evaluation: Any) -> Any:
    """The synth_world config with the scripted backends and evaluation overrides."""
    ev = world.cfg.evaluation.model_copy(update=evaluation)
    return world.cfg.model_copy(
        update={"models": scripted_models(server, str(tmp_path / "llm.sqlite")), "evaluation": ev}
    )


def inventories(world: Any) -> dict[str, Any]:
    return {d: world.load("tool_inventory", d) for d in DOMAINS}


def all_tasks(world: Any) -> list[dict[str, Any]]:
    return [t for d in DOMAINS for t in world.load("generated_queries", d)["tasks"]]


def evaluated_tasks(world: Any) -> tuple[list[dict[str, Any]], str]:
    """(the tasks evaluation_report reads, their source): dataset_splits where that asset is defined
    (materialized on the shared world when missing, after judged_queries), else every generated_queries."""
    import dagster as dg

    if world.defs.resolve_asset_graph().has(dg.AssetKey("dataset_splits")):
        if not artifact_exists(world.cfg, "dataset_splits"):
            for d in world.cfg.domain_names:
                if not artifact_exists(world.cfg, "judged_queries", d):
                    assert world.materialize(["judged_queries"], d).success, f"judged_queries {d} failed"
            assert world.materialize(["dataset_splits"]).success, "dataset_splits failed"
        return world.load("dataset_splits")["tasks"], "dataset_splits"
    return all_tasks(world), "generated_queries"


def model_calls(task: dict[str, Any], index: ToolRegistry) -> list[list[dict[str, Any]]]:
    """The golden actions as the model must issue them (the oracle's calls): per step, no key tools."""
    return golden_model_calls(task, index.by_platform_name)


def perfect_script(task: dict[str, Any], index: ToolRegistry, *, native: bool = True) -> list[Any]:
    """A model that issues exactly the golden calls, step by step, then states the gold answer."""
    replies: list[Any] = []
    for calls in model_calls(task, index):
        if native:
            replies.append({"tool_calls": calls})
        else:
            replies.append("\n".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls))
    replies.append(final_answer(task))
    return replies


def variant(task: dict[str, Any], label: str, **update: Any) -> dict[str, Any]:
    """A copy of a real task with its own query (the script key) and id."""
    t = copy.deepcopy(task)
    t["query"] = f"[{label}] {task['query']}"
    t["id"] = "sha256:" + hashlib.sha256(t["query"].encode()).hexdigest()
    t.update(update)
    return t
