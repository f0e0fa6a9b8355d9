"""Terminal-state conversation tasks from the domains' state-changing tools (issue 19 item 1).

A state-changing tool that creates a named thing (its name starts with `create`, its only required semantic
parameter is a string name or title, e.g. a playlist) yields a `single` task: the request names the thing,
the golden call is executed for real in a fresh executor session, and the session's state hash (the platform's
`state_hash` tool) becomes the task's terminal-state condition. The value comes from the parameter's schema
examples, so the task is replayable: a fresh session given the same call reaches the same hash.
"""

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

from factory import prompts
from factory.config import ProjectConfig
from factory.conversations.persona import draw_persona, korean_register
from factory.io import dumps
from factory.llm.simulator import opening
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.spec import ToolSpec

STATEFUL_TEMPLATE = "conversations/stateful.{lang}"
_NAME_PARAMS = ("name", "title")


def creation_param(spec: ToolSpec) -> tuple[str, str] | None:
    """(parameter, example value) of a tool that creates a named thing, or None."""
    if not spec.state_changing or not spec.name.lower().startswith("create"):
        return None
    generic = spec.generic_params.names()
    required = [p for p in spec.required_params if p not in generic]
    if len(required) != 1 or required[0].lower() not in _NAME_PARAMS:
        return None
    schema = spec.params.get(required[0]) or {}
    examples = [e for e in schema.get("examples") or [] if isinstance(e, str) and e.strip()]
    if schema.get("type") != "string" or not examples:
        return None
    return required[0], examples[0]


def _noun(spec: ToolSpec, noun_of: Any, language: str) -> str:
    n = noun_of(spec.tool_id, _NAME_PARAMS[0], language) if noun_of else None
    return n or spec.name.split("_", 1)[-1].replace("_", " ")


async def _execute(
    registry: ToolRegistry, cfg: ProjectConfig, spec: ToolSpec, args: Mapping[str, Any]
) -> tuple[str | None, str]:
    """The state hash after the call in a fresh session (None with the reason when it cannot be had)."""
    state = next((s for s in sorted(registry.on_platform(spec.platform), key=lambda s: s.name)
                  if "state_hash" in s.output_fields), None)  # fmt: skip
    if state is None:
        return None, f"platform {spec.platform} has no state_hash tool"
    async with executor_factory(cfg, [spec.domain], registry)() as ex:
        key = registry.key_tool(spec.platform) if spec.generic_params.key else None
        if key is not None:
            await ex.call(key, {})
        r = await ex.call(spec, dict(args))
        if not r.ok:
            return None, f"{spec.name} failed: {r.outcome.value} {r.detail or ''}".strip()
        s = await ex.call(state, {})
        if not (s.ok and s.records):
            return None, f"{state.name} failed: {s.outcome.value}"
        return str(s.records[0].get("state_hash")), ""


async def stateful_tasks(
    registry: ToolRegistry,
    cfg: ProjectConfig,
    languages: Mapping[str, str],
    splits_of: Mapping[str, Sequence[str]],
    noun_of: Any = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Single terminal-state tasks per creating tool of each domain (`languages`: domain → language;
    `splits_of`: domain → the splits of its published tasks, one picked by the task's hash)."""
    out: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for domain, lang in sorted(languages.items()):
        for spec in registry.in_domains([domain]):
            found = creation_param(spec)
            if found is None:
                continue
            param, value = found
            state_hash, why = await _execute(registry, cfg, spec, {param: value})
            if state_hash is None:
                skipped.append({"source_task_id": spec.tool_id, "case_pattern": "single", "reason": why})
                continue
            cid = "sha256:" + hashlib.sha256(dumps([spec.tool_id, param, value, "stateful"]).encode()).hexdigest()
            seed = int(cid[7:15], 16) ^ cfg.seed
            rng = random.Random(seed)
            noun = _noun(spec, noun_of, lang)
            words = {"noun": noun, "value": value, "variant": seed}
            request = " ".join(prompts.render(STATEFUL_TEMPLATE.format(lang=lang), part="request", **words).split())
            reply = " ".join(prompts.render(STATEFUL_TEMPLATE.format(lang=lang), part="reply", **words).split())
            persona = draw_persona(lang, rng)
            if lang == "ko":
                request, persona = korean_register(request, persona)
            choices = list(splits_of.get(domain) or ["train"])
            tools = [s.name for s in registry.on_platform(spec.platform) if s.key_acquisition is None]
            key = registry.key_tool(spec.platform)
            call = {"name": spec.name, "platform": spec.platform, "step": 1, "args_subset": {param: value},
                    "args": {param: value}}  # fmt: skip
            out.append(
                {
                    "id": cid,
                    "source_task_id": spec.tool_id,
                    "domain": domain,
                    "language": lang,
                    "split": choices[seed % len(choices)],
                    "case_pattern": "single",
                    "platforms": [spec.platform],
                    "tools_subset": tools,
                    "system_state": {"api_key": {"acquire_with": {spec.platform: key.name}}} if key else {},
                    "seed": seed,
                    "source_pattern": "STATE",
                    "golden_calls": [call],
                    "golden_actions": [
                        {"step": 1, "tool": spec.name, "platform": spec.platform, "args": {param: value}}
                    ],
                    "answer": {"text": reply, "values": []},  # the confirmation names what was made
                    "task": request,
                    "initial_message": opening(lang, persona, request, variant=seed),
                    "persona": persona,
                    "hidden_info": {},
                    "success_criteria": {
                        "required_calls": [{k: call[k] for k in ("name", "args_subset", "step")}],
                        "ordering": [],
                        "terminal_state": {spec.platform: state_hash},
                        "no_call": False,
                    },
                }
            )
    return out, skipped
