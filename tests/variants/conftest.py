"""Fixtures of the schema-variant tests: the demo's tool inventories and kept tasks (a snapshot), a
deterministic stand-in embedder, and an in-memory world that executes native calls.

demo_snapshot.json holds, per demo domain, the tool_inventory tools (output schemas cut to the state
field) and the kept judged_queries tasks (id, system_state, golden actions) of a `make demo` run.
"""

import hashlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from factory.tools.spec import ToolSpec
from factory.variants.actions import NativeAction, native_actions, native_catalog
from factory.variants.core import Call, Catalog, Variant
from factory.variants.registry import build_variants

SNAPSHOT = Path(__file__).with_name("demo_snapshot.json")
DOMAINS = ("music", "aviation", "korea")


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A deterministic embedder: hashed word counts (texts sharing words are similar)."""
    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for w in t.lower().replace("_", " ").replace(".", " ").split():
            out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1
    return out


class Demo:
    def __init__(self, domain: str, data: dict[str, Any]) -> None:
        self.domain = domain
        self.specs = [ToolSpec.model_validate(t) for t in data["inventories"][domain]["tools"]]
        self.by = {(s.platform, s.name): s for s in self.specs}
        self.catalog: Catalog = native_catalog(domain, self.specs)
        self.task_rows = data["tasks"][domain]
        self.tasks: list[tuple[str, list[NativeAction]]] = [
            (t["id"], native_actions(t, self.by)) for t in self.task_rows
        ]
        self.state_changing = {s.name for s in self.specs if s.state_changing}
        self._variants: list[Variant] | None = None

    @property
    def variants(self) -> list[Variant]:
        """Every registered variant that applies (built once per domain and session)."""
        if self._variants is None:
            self._variants = build_variants(self.catalog, bag_of_words)[0]
        return self._variants


@pytest.fixture(scope="session")
def demo_data() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


@pytest.fixture(scope="session", params=DOMAINS)
def demo(request: pytest.FixtureRequest, demo_data: dict[str, Any]) -> Demo:
    return Demo(request.param, demo_data)


@pytest.fixture(scope="session")
def music(demo_data: dict[str, Any]) -> Demo:
    return Demo("music", demo_data)


class FakeWorld:
    """Executes native calls in memory: a result is a digest of the call; state-changing calls append to
    the episode's state, whose hash is the final state."""

    def __init__(self, state_changing: set[str]) -> None:
        self.state_changing = state_changing
        self.executed: list[Call] = []

    async def episode(self, body: Callable[[Any], Awaitable[Any]]) -> tuple[Any, dict[str, str | None]]:
        state: list[str] = []

        async def execute(call: Call) -> dict[str, Any]:
            self.executed.append(call)
            if call.name in self.state_changing:
                state.append(call.key())
            return {"ok": True, "digest": hashlib.sha256(call.key().encode()).hexdigest()}

        value = await body(execute)
        return value, {"store": hashlib.sha256(json.dumps(state).encode()).hexdigest()}
