"""The golden oracle: a reference "model" that issues a task's golden calls and states its gold answer.

Evaluating the oracle (`--backend oracle`, and the default when no model backend is configured)
runs the same harness, executor sessions and scorers as a real model, so its report checks the
environment and the scorers rather than a model: on an unchanged environment every task passes
with ACTION 1; a failure points at drift in the live tools, a stale label or a scorer problem.
It answers in-process (no server) through the `ChatBackend.chat` interface the runner uses.
"""

import itertools
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from factory.eval.scoring import is_key_action, key_tool_names
from factory.llm.agent import hidden_params
from factory.records import Task
from factory.retrieval.policy import expected_answer
from factory.tools.executor import KEY_PLACEHOLDER
from factory.tools.spec import ToolSpec

ORACLE = "oracle"
ORACLE_MODEL = "golden-oracle"


def _types(schema: Mapping[str, Any]) -> set[str]:
    out = {schema["type"]} if isinstance(schema.get("type"), str) else set(schema.get("type") or [])
    for alt in (*(schema.get("anyOf") or []), *(schema.get("oneOf") or [])):
        out |= _types(alt)
    return out


def coerce(value: Any, schema: Mapping[str, Any]) -> Any:
    """A golden value as a model reading the schema sends it (a recorded "1" where the schema says integer)."""
    types = _types(schema)
    if isinstance(value, str) and "string" not in types:
        for t, cast in (("integer", int), ("number", float)):
            if t in types:
                try:
                    return cast(value)
                except ValueError:
                    pass
    if isinstance(value, int | float) and not isinstance(value, bool) and types == {"string"}:
        return str(value)
    return value


def golden_model_calls(
    task: Mapping[str, Any], specs: Mapping[tuple[str, str], ToolSpec]
) -> list[list[dict[str, Any]]]:
    """The golden actions as a model must issue them: per step, without key tools and hidden parameters."""
    keys = key_tool_names(task["system_state"])
    steps: dict[int, list[dict[str, Any]]] = {}
    for a in task["golden_actions"]:
        if is_key_action(a, specs, keys):
            continue
        spec = specs[(a["platform"], a["tool"])]
        hide = hidden_params(spec)
        props = spec.input_schema.get("properties") or {}
        args = {
            k: coerce(v, props.get(k) or {}) for k, v in a["args"].items() if k not in hide and v != KEY_PLACEHOLDER
        }
        steps.setdefault(a["step"], []).append({"name": a["tool"], "arguments": args})
    return [steps[s] for s in sorted(steps)]


def final_answer(task: Mapping[str, Any]) -> str:
    """The gold answer as the exported conversations end: the golden answer sentence (the answer convention,
    `factory.eval.scoring.ANSWER_CONVENTION`; the scorer reads it as it reads a model's sentence), or the
    unanswerable sentence when the task's tool-use policy forbids a source every path needs."""
    refusal = expected_answer(task)
    return refusal if refusal is not None else str(task["answer"]["text"])


class OracleBackend:
    """`chat()` replies with the golden calls of the task whose query is the conversation's user message."""

    kind = ORACLE
    name = ORACLE
    model = ORACLE_MODEL
    url = "in-process"
    server = None

    def __init__(self, tasks: Sequence[Task], specs: Mapping[tuple[str, str], ToolSpec]):
        self.cfg = SimpleNamespace(tool_calls=True, temperature=0.0, max_tokens=0, model=ORACLE_MODEL)
        self._by_query: dict[str, dict[str, Any]] = {}
        for t in tasks:
            d = t.model_dump(mode="json", by_alias=True)
            self._by_query.setdefault(d["query"], d)
        self._specs = specs
        self._ids = itertools.count(1)

    def start(self) -> None:
        """Nothing to start (in-process)."""

    async def aclose_loop(self) -> None:
        """Nothing to close."""

    async def chat(self, role_name: str, messages: list[dict[str, Any]], **_: Any) -> tuple[dict[str, Any], bool]:
        user = next((m.get("content") for m in messages if m.get("role") == "user"), None)
        task = self._by_query.get(user or "")
        if task is None:
            return {"content": "ANSWER: (the oracle does not know this query)"}, False
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        calls = [] if expected_answer(task) is not None else golden_model_calls(task, self._specs)
        if turn >= len(calls):
            return {"content": final_answer(task)}, False
        import json

        return {
            "content": None,
            "tool_calls": [
                {
                    "id": f"oracle_{next(self._ids)}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)},
                }
                for c in calls[turn]
            ],
        }, False
