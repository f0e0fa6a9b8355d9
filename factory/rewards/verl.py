"""verl multi-turn tools over the project's live tools (no Dagster; verl itself is not needed to import this).

`verl_tool_config(bindings)` is the `tools:` file verl's rollout reads
(`actor_rollout_ref.rollout.multi_turn.tool_config_path`), written beside the RL export as
`rl/verl_tools.yaml`: one entry per tool the export's tasks use, each naming `FactoryVerlTool` with the
tool's OpenAI schema (key and format parameters hidden: the key is system state, acquired per trajectory).

`FactoryVerlTool` follows verl's `BaseTool` protocol (`create` / `execute` / `calc_reward` / `release`, keyed
by the trajectory's instance id). verl creates every tool of a trajectory with the same instance id, so the
tools of one trajectory share one `ToolSession` (one executor session: its key, its own state changes); the
session closes when the last of them is released. The project is found from the entry's `config.project`
(a config file or folder), else `$FACTORY_CONFIG`, else ./factory.yaml of the working directory.
"""

import asyncio
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from uuid import uuid4

from factory.rewards.env import ToolBinding, ToolEnvironment, ToolSession

__all__ = ["TOOL_CLASS", "FactoryVerlTool", "verl_tool_config"]

TOOL_CLASS = "factory.rewards.verl.FactoryVerlTool"


def verl_tool_config(bindings: Iterable[ToolBinding], *, project: str | None = None) -> dict[str, Any]:
    """verl's tool config ({"tools": [{class_name, config, tool_schema}]}) for `bindings`."""
    tools = []
    for b in bindings:
        schema = b.offered.definition()
        schema["function"]["name"] = b.name
        schema["function"]["description"] = " ".join(str(b.spec.description).split())
        tools.append(
            {
                "class_name": TOOL_CLASS,
                "config": {"type": "native", "project": project, "platform": b.spec.platform, "tool": b.spec.name},
                "tool_schema": schema,
            }
        )
    return {"tools": tools}


_LOCK = threading.Lock()
_ENVS: dict[str, ToolEnvironment] = {}
_SESSIONS: dict[str, tuple[ToolSession, int]] = {}  # instance id → (session, tools holding it)


def _environment(project: str | None) -> ToolEnvironment:
    where = project or os.environ.get("FACTORY_CONFIG") or ""
    with _LOCK:
        if where not in _ENVS:
            _ENVS[where] = ToolEnvironment.from_project(where or None)
        return _ENVS[where]


def _response(text: str) -> Any:
    """verl's ToolResponse where verl has one, else the dict its older BaseTool returns."""
    try:
        from verl.tools.schemas import ToolResponse

        return ToolResponse(text=text)
    except ImportError:
        return {"text": text}


class FactoryVerlTool:
    """One project tool as a verl tool (duck-typed `verl.tools.base_tool.BaseTool`)."""

    def __init__(self, config: Mapping[str, Any], tool_schema: Any) -> None:
        self.config = dict(config)
        self.tool_schema = tool_schema
        fn = tool_schema["function"] if isinstance(tool_schema, Mapping) else tool_schema.function
        self.name = fn["name"] if isinstance(fn, Mapping) else fn.name
        self.env = _environment(self.config.get("project"))
        self.binding = self.env.binding(self.name)

    def get_openai_tool_schema(self) -> Any:
        return self.tool_schema

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> str:
        iid = instance_id or str(uuid4())
        with _LOCK:
            session, holders = _SESSIONS.get(iid, (None, 0))
            if session is None:
                session = self.env.session()
            _SESSIONS[iid] = (session, holders + 1)
        return iid

    def _session(self, instance_id: str) -> ToolSession:
        with _LOCK:
            entry = _SESSIONS.get(instance_id)
        if entry is None:
            raise KeyError(f"{self.name}: no trajectory {instance_id!r} (create() was not called)")
        return entry[0]

    async def execute(self, instance_id: str, parameters: Mapping[str, Any], **kwargs: Any) -> tuple[Any, float, dict]:
        session = self._session(instance_id)
        args = {k: v for k, v in dict(parameters or {}).items() if v is not None}
        text = await asyncio.to_thread(session.call, self.binding, args)
        rec = session.calls[-1] if session.calls else {}
        return _response(text), 0.0, {"ok": bool(rec.get("ok")), "status": rec.get("status")}

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        return 0.0

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        with _LOCK:
            session, holders = _SESSIONS.get(instance_id, (None, 0))
            if session is None:
                return
            if holders > 1:
                _SESSIONS[instance_id] = (session, holders - 1)
                return
            del _SESSIONS[instance_id]
        await asyncio.to_thread(session.close)
