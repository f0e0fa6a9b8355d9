"""The agent runner: one tool-calling episode over the OpenAI chat API (pure core, no Dagster).

Part of the model layer: `LLM.aresolve` solves tasks with it for model backends, and the evaluation
harness (`factory.eval.harness`) runs its episodes with it.

`run_agent` drives a model through `ChatBackend.chat`, so every backend of the project works
(the local llama.cpp model, any OpenAI-compatible server, vLLM):

- a backend with ``tool_calls: true`` gets the tools as OpenAI tool definitions (``tools``,
  ``tool_choice="auto"``) and answers with structured ``tool_calls``; a backend without it gets
  the tools described in the system prompt. Either way the reply's content is also read for
  calls in any family's native format (`factory.llm.callformats`), so a model that writes
  ``<tool_call>`` tags or ``[TOOL_CALLS]`` is not scored as silent;
- every call is checked before it runs: the tool must be one offered (else ``unknown_tool``),
  the arguments must validate against the tool's input JSON Schema with no unexpected
  parameter (else ``bad_arguments``); a valid call runs through the `ToolRunner` (for tasks,
  a live `ToolExecutor` session) and a failed execution counts as ``tool_error``; the error
  goes back to the model, which may correct itself;
- caps end the episode: turns (``max_turns``), calls (``max_calls``: the call past the budget is
  recorded, not run), wall time (``time_limit``), the same call issued ``loop_repeats`` times
  (``loop``), ``max_format_failures`` consecutive unreadable turns (``malformed_tool_call``), and
  a backend that fails (``model_error``). Nothing a model writes crashes the runner.

The episode keeps a full trace: every turn's raw reply, parsed calls, format violations,
tool results as the model saw them (redacted by the executor, truncated) and timings.
Keys are never offered (the key parameter is hidden and injected by the executor), so a
trace holds no key string.
"""

import asyncio
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

import jsonschema

from factory import prompts
from factory.llm.callformats import FormatViolation, ParsedCall, ParsedReply, parse_openai_tool_calls, parse_reply
from factory.llm.schemas import AgentResult, AgentTaskInput, ToolCallRecord
from factory.tools.outcomes import CallResult
from factory.tools.spec import ToolSpec

FAILURE_KINDS: tuple[str, ...] = (
    "malformed_tool_call",
    "unknown_tool",
    "bad_arguments",
    "tool_error",
    "loop",
    "max_turns",
    "max_calls",
    "time_limit",
    "model_error",
)
STOP_REASONS: tuple[str, ...] = (
    "answer",
    "malformed_tool_call",
    "loop",
    "max_turns",
    "max_calls",
    "time_limit",
    "model_error",
)
# stops that fail an episode whatever its answer (kotraj card: truncation and repeated format
# failures are hard failures; a loop or a dead backend never completed the task either)
HARD_STOPS = frozenset(STOP_REASONS) - {"answer"}

SYSTEM_TEMPLATE = "agent_resolver/system.{lang}"
FEEDBACK_TEMPLATE = "agent_resolver/feedback.{lang}"


def template_names(language: str) -> list[str]:
    """The prompt templates an episode in `language` renders (for lineage and reports)."""
    lang = language if prompts.exists(SYSTEM_TEMPLATE.format(lang=language)) else "en"
    return [SYSTEM_TEMPLATE.format(lang=lang), FEEDBACK_TEMPLATE.format(lang=lang)]


@dataclass(frozen=True)
class Limits:
    """Caps of one episode."""

    max_turns: int = 12
    max_calls: int = 20
    time_limit_s: float = 300.0
    loop_repeats: int = 3
    max_format_failures: int = 3
    max_observation_chars: int = 3000


# --------------------------------------------------------------------------- offered tools


@dataclass
class OfferedTool:
    """A tool as the model sees it: name, description, argument schema (key and format params hidden)."""

    name: str
    description: str
    parameters: dict[str, Any]
    spec: ToolSpec | None = None
    _validator: Any = field(default=None, repr=False)

    def definition(self) -> dict[str, Any]:
        """The OpenAI tool definition."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def problems(self, args: dict[str, Any]) -> list[str]:
        """Why `args` are not valid for this tool (unexpected parameters, JSON Schema errors); [] if valid."""
        known = set((self.parameters.get("properties") or {}).keys())
        out = [f"unexpected parameter {k!r}" for k in args if known and k not in known]
        if not known and args and self.parameters.get("additionalProperties") is False:
            out.append(f"{self.name} takes no arguments")
        if self._validator is None:
            cls = jsonschema.validators.validator_for(self.parameters, default=jsonschema.Draft202012Validator)
            try:
                cls.check_schema(self.parameters)
                self._validator = cls(self.parameters)
            except jsonschema.SchemaError:
                self._validator = False  # an unusable schema validates nothing (the executor will judge)
        if self._validator:
            for err in sorted(self._validator.iter_errors(args), key=lambda e: list(e.absolute_path)):
                where = ".".join(str(p) for p in err.absolute_path) or "(arguments)"
                out.append(f"{where}: {err.message}"[:240])
        return out


_SCHEMA_DROP = {"title", "examples", "x-raw-body", "x-content-type"}


def _clean_schema(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _clean_schema(v) for k, v in node.items() if k not in _SCHEMA_DROP}
    if isinstance(node, list):
        return [_clean_schema(v) for v in node]
    return node


def hidden_params(spec: ToolSpec) -> set[str]:
    """Parameters the model never sees: the API key (injected by the executor) and format switches
    (filled by the executor with 'json')."""
    out = set(spec.generic_params.format)
    if spec.generic_params.key:
        out.add(spec.generic_params.key)
    return out


def offered_from_spec(spec: ToolSpec) -> OfferedTool:
    """An offered tool built from a ToolSpec's input schema, without hidden parameters."""
    hide = hidden_params(spec)
    schema = _clean_schema(spec.input_schema) or {}
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in hide}
    params: dict[str, Any] = {"type": "object", "properties": props}
    required = [r for r in schema.get("required") or [] if r not in hide]
    if required:
        params["required"] = required
    return OfferedTool(name=spec.name, description=spec.description, parameters=params, spec=spec)


def offered_from_definition(defn: dict[str, Any]) -> OfferedTool:
    """An offered tool from an OpenAI tool definition ({'type': 'function', 'function': {...}})."""
    fn = defn.get("function", defn)
    params = fn.get("parameters") or {"type": "object", "properties": {}}
    return OfferedTool(name=fn["name"], description=fn.get("description", ""), parameters=params)


# --------------------------------------------------------------------------- tool runners


@dataclass
class Observation:
    """What one executed call returned, as the model sees it and as the trace keeps it."""

    ok: bool
    content: str
    outcome: str | None = None
    error: str | None = None
    elapsed_ms: float = 0.0
    preview: Any = None
    result: CallResult | None = None


class ToolRunner(Protocol):
    async def __call__(self, tool: OfferedTool, args: dict[str, Any]) -> Observation: ...


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 14)] + "…(truncated)"


def observation_text(r: CallResult, limit: int) -> str:
    """A call result as JSON text for the model: outcome, counts and records, or the error."""
    if r.ok:
        payload: dict[str, Any] = {"outcome": r.outcome.value}
        if r.total_count is not None:
            payload["total_count"] = r.total_count
        if r.records or r.body is None:
            payload["record_count"] = r.record_count
            payload["records"] = r.records
        else:
            payload["body"] = r.body
    else:
        payload = {"error": r.detail or r.outcome.value, "outcome": r.outcome.value}
    return truncate(json.dumps(payload, ensure_ascii=False, default=str), limit)


class ExecutorRunner:
    """Runs offered tools through one live `ToolExecutor` session (keys injected, results redacted)."""

    def __init__(self, executor: Any, max_chars: int) -> None:
        self.executor = executor
        self.max_chars = max_chars

    async def __call__(self, tool: OfferedTool, args: dict[str, Any]) -> Observation:
        r: CallResult = await self.executor.call(tool.spec or tool.name, args)
        return Observation(
            ok=r.ok,
            content=observation_text(r, self.max_chars),
            outcome=r.outcome.value,
            error=None if r.ok else r.detail,
            elapsed_ms=r.elapsed_ms,
            preview={"record_count": r.record_count, "total_count": r.total_count},
            result=r,
        )


class CallableRunner:
    """Runs calls through a plain callable `(tool, args) -> result` (sync or async; raising = failure)."""

    def __init__(self, fn: Callable[[str, dict[str, Any]], Any | Awaitable[Any]], max_chars: int) -> None:
        self.fn = fn
        self.max_chars = max_chars

    async def __call__(self, tool: OfferedTool, args: dict[str, Any]) -> Observation:
        t0 = time.monotonic()
        try:
            out = self.fn(tool.name, dict(args))
            if inspect.isawaitable(out):
                out = await out
        except Exception as e:  # noqa: BLE001 - a failed call goes back to the model
            msg = f"{type(e).__name__}: {e}"
            return Observation(
                ok=False,
                content=truncate(json.dumps({"error": msg}, ensure_ascii=False), self.max_chars),
                error=msg,
                elapsed_ms=round((time.monotonic() - t0) * 1000, 1),
            )
        if isinstance(out, CallResult):
            return Observation(
                ok=out.ok,
                content=observation_text(out, self.max_chars),
                outcome=out.outcome.value,
                error=None if out.ok else out.detail,
                elapsed_ms=out.elapsed_ms,
                preview=out.model_dump(mode="json"),
                result=out,
            )
        return Observation(
            ok=True,
            content=truncate(json.dumps(out, ensure_ascii=False, default=str), self.max_chars),
            elapsed_ms=round((time.monotonic() - t0) * 1000, 1),
            preview=out,
        )


# --------------------------------------------------------------------------- the episode


@dataclass
class Episode:
    """The outcome and full trace of one episode."""

    final_answer: str | None = None
    stop_reason: str = "max_turns"
    error: str | None = None
    turns: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAILURE_KINDS, 0))
    format_violations: int = 0
    requests: int = 0
    cache_hits: int = 0
    elapsed_s: float = 0.0

    @property
    def hard_failure(self) -> bool:
        return self.stop_reason in HARD_STOPS

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def signature(tool: str, args: dict[str, Any]) -> str:
    """Canonical text of a call (tool + arguments) for duplicate and loop detection."""
    return tool + " " + json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


class _Stop(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


class _Loop:
    """State of one episode while it runs."""

    def __init__(
        self,
        backend: Any,
        tools: Sequence[OfferedTool],
        runner: ToolRunner,
        limits: Limits,
        native: bool,
        role_name: str,
        language: str,
        raise_model_errors: bool = False,
    ) -> None:
        self.backend = backend
        self.raise_model_errors = raise_model_errors
        self.tools = {t.name: t for t in tools}
        self.runner = runner
        self.limits = limits
        self.native = native
        self.role_name = role_name
        self.feedback = FEEDBACK_TEMPLATE.format(lang=language if language in ("en", "ko") else "en")
        self.ep = Episode()
        self.seen: dict[str, int] = {}
        self.format_streak = 0

    # ------------------------------------------------------------------ one call

    async def _call(self, turn: int, pc: ParsedCall) -> dict[str, Any]:
        """Check and run one parsed call; returns its trace record (with 'observation')."""
        ep, lim = self.ep, self.limits
        rec: dict[str, Any] = {
            "index": len(ep.calls),
            "turn": turn,
            "id": pc.id,
            "tool": pc.name,
            "args": pc.arguments,
            "format": pc.format,
            "status": "executed",
            "valid": False,
            "ok": False,
            "outcome": None,
            "error": None,
            "observation": "",
            "elapsed_ms": 0.0,
        }
        ep.calls.append(rec)
        tool = self.tools.get(pc.name)
        problems = tool.problems(pc.arguments) if tool is not None else []
        rec["valid"] = tool is not None and not problems
        if len(ep.calls) > lim.max_calls:
            rec["status"] = "over_budget"
            rec["error"] = f"call {len(ep.calls)} exceeds the budget of {lim.max_calls} calls"
            ep.failures["max_calls"] += 1
            raise _Stop("max_calls")
        if tool is None:
            rec["status"] = "unknown_tool"
            rec["error"] = f"unknown tool {pc.name!r}; available: {', '.join(sorted(self.tools)) or '(none)'}"
            ep.failures["unknown_tool"] += 1
        elif problems:
            rec["status"] = "bad_arguments"
            rec["error"] = f"invalid arguments for {pc.name}: " + "; ".join(problems[:5])
            ep.failures["bad_arguments"] += 1
        sig = signature(pc.name, pc.arguments)
        self.seen[sig] = self.seen.get(sig, 0) + 1
        if self.seen[sig] >= lim.loop_repeats:
            rec["status"] = "loop"
            rec["error"] = f"the same call was issued {self.seen[sig]} times"
            ep.failures["loop"] += 1
            raise _Stop("loop")
        if rec["status"] != "executed":
            rec["observation"] = truncate(
                json.dumps({"error": rec["error"]}, ensure_ascii=False), lim.max_observation_chars
            )
            return rec
        assert tool is not None
        try:
            obs = await self.runner(tool, pc.arguments)
        except Exception as e:  # noqa: BLE001 - a runner bug is the call's failure, not the harness's
            obs = Observation(ok=False, content=json.dumps({"error": f"{type(e).__name__}: {e}"}), error=str(e))
        rec.update(ok=obs.ok, outcome=obs.outcome, error=obs.error, observation=obs.content, elapsed_ms=obs.elapsed_ms)
        if obs.preview is not None:
            rec["result"] = obs.preview
        if not obs.ok:
            ep.failures["tool_error"] += 1
        return rec

    # ------------------------------------------------------------------ one turn

    async def turn(self, turn: int, messages: list[dict[str, Any]], tool_defs: list[dict[str, Any]] | None) -> None:
        """One model reply and its calls, appended to `messages`; raises `_Stop` when the episode ends."""
        ep = self.ep
        t0 = time.monotonic()
        try:
            message, hit = await self.backend.chat(
                self.role_name, messages, tools=tool_defs, tool_choice="auto" if tool_defs else None
            )
        except Exception as e:  # noqa: BLE001 - HTTP errors, unreachable servers, bad replies
            if self.raise_model_errors:
                raise
            ep.error = f"{type(e).__name__}: {e}"[:600]
            ep.failures["model_error"] += 1
            raise _Stop("model_error") from None
        ep.requests += not hit
        ep.cache_hits += bool(hit)
        content = message.get("content") or ""
        raw_calls = list(message.get("tool_calls") or [])
        reply = parse_reply(message)
        rec: dict[str, Any] = {
            "turn": turn,
            "model_ms": round((time.monotonic() - t0) * 1000, 1),
            "cache_hit": bool(hit),
            "content": content,
            "tool_calls": raw_calls or None,
            "formats": reply.formats,
            "calls": [],
            "violations": [v.as_dict() for v in reply.violations],
            "final": reply.is_final,
        }
        ep.turns.append(rec)
        ep.format_violations += len(reply.violations)
        ep.failures["malformed_tool_call"] += len(reply.violations)
        if reply.is_final:
            ep.final_answer = reply.text
            raise _Stop("answer")
        if raw_calls:
            await self._native_turn(turn, messages, content, raw_calls, rec)
        else:
            await self._text_turn(turn, messages, content, reply, rec)
        if reply.violations and not reply.calls:
            self.format_streak += 1
            if self.format_streak >= self.limits.max_format_failures:
                raise _Stop("malformed_tool_call")
        else:
            self.format_streak = 0

    async def _native_turn(
        self, turn: int, messages: list[dict[str, Any]], content: str, raw_calls: list[dict[str, Any]], rec: dict
    ) -> None:
        """Structured tool_calls: one `tool` message answers each call id."""
        fixed = []
        for j, tc in enumerate(raw_calls):
            tc = dict(tc) if isinstance(tc, dict) else {"function": {}}
            tc.setdefault("id", f"call_{turn}_{j}")
            tc["id"] = tc["id"] or f"call_{turn}_{j}"
            tc.setdefault("type", "function")
            fixed.append(tc)
        messages.append({"role": "assistant", "content": content or None, "tool_calls": fixed})
        answers: list[tuple[str, str]] = []
        try:
            for tc in fixed:
                item = parse_openai_tool_calls([tc])
                if item.calls:
                    pc = item.calls[0]
                    call = await self._call(turn, ParsedCall(pc.name, pc.arguments, pc.format, tc["id"], pc.raw))
                    rec["calls"].append(call["index"])
                    answers.append((tc["id"], call["observation"]))
                else:
                    problems = "; ".join(v.detail for v in item.violations)
                    answers.append((tc["id"], json.dumps({"error": f"tool call not readable: {problems}"})))
        finally:
            for call_id, text in answers:
                messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

    async def _text_turn(
        self, turn: int, messages: list[dict[str, Any]], content: str, reply: ParsedReply, rec: dict
    ) -> None:
        """Calls written in the content: the results come back as one user message."""
        messages.append({"role": "assistant", "content": content})
        results: list[dict[str, str]] = []
        try:
            for pc in reply.calls:
                call = await self._call(turn, pc)
                rec["calls"].append(call["index"])
                results.append({"name": pc.name, "content": call["observation"]})
        finally:
            parts = []
            if results:
                parts.append(prompts.render(self.feedback, kind="results", results=results, problems=[], native=False))
            if reply.violations:
                parts.append(
                    prompts.render(
                        self.feedback,
                        kind="format_error",
                        results=[],
                        problems=[_violation_text(v) for v in reply.violations],
                        native=self.native,
                    )
                )
            if parts:
                messages.append({"role": "user", "content": "\n\n".join(parts)})


def _violation_text(v: FormatViolation) -> str:
    return f"{v.kind} ({v.format}): {v.detail}"[:300]


async def run_agent(
    backend: Any,
    messages: list[dict[str, Any]],
    tools: Sequence[OfferedTool],
    runner: ToolRunner,
    limits: Limits,
    *,
    native: bool | None = None,
    role_name: str = "evaluation",
    language: str = "en",
    raise_model_errors: bool = False,
) -> tuple[Episode, list[dict[str, Any]]]:
    """Run one episode from `messages` (system + user) → (episode, final message list).

    `backend` is a `ChatBackend` (or anything with its `chat` coroutine); `native` (default: the
    backend's `tool_calls` setting) sends the tools as OpenAI definitions. A failing backend ends the
    episode as ``model_error``, or with `raise_model_errors` raises its exception (LLM.aresolve).
    """
    if native is None:
        native = bool(getattr(getattr(backend, "cfg", None), "tool_calls", True))
    loop = _Loop(backend, tools, runner, limits, native, role_name, language, raise_model_errors)
    msgs = list(messages)
    tool_defs = [t.definition() for t in tools] if native and tools else None
    t0 = time.monotonic()
    stop = "max_turns"
    try:
        async with asyncio.timeout(limits.time_limit_s):
            for turn in range(1, limits.max_turns + 1):
                await loop.turn(turn, msgs, tool_defs)
    except _Stop as s:
        stop = s.reason
    except TimeoutError:
        stop = "time_limit"
    if stop in ("max_turns", "time_limit"):
        loop.ep.failures[stop] += 1
    loop.ep.stop_reason = stop
    loop.ep.elapsed_s = round(time.monotonic() - t0, 3)
    return loop.ep, msgs


def system_prompt(
    language: str,
    max_calls: int,
    tools: Sequence[OfferedTool] | None,
    answer_type: str | None = None,
    context: dict[str, Any] | None = None,
) -> str:
    """The agent's system prompt: `tools` are described in it (text mode) when given."""
    name = template_names(language)[0]
    return prompts.render(
        name,
        max_calls=max_calls,
        tools=[t.definition()["function"] for t in tools] if tools else None,
        answer_type=answer_type,
        context=context or {},
    )


# --------------------------------------------------------------------------- LLM.aresolve


def _preview(result: Any, limit: int = 2000) -> Any:
    text = json.dumps(result, ensure_ascii=False, default=str)
    return result if len(text) <= limit else text[:limit] + "…"


async def resolve_task(
    backend: Any,
    task: AgentTaskInput,
    executor: Callable[[str, dict[str, Any]], Any | Awaitable[Any]],
    *,
    role_name: str = "agent_resolver",
    limits: Limits | None = None,
) -> tuple[AgentResult, Episode, list[str]]:
    """Solve an `AgentTaskInput` with this runner (what `LLM.aresolve` does for model backends).

    Returns (AgentResult, the episode, template names used). The final answer is the reply's
    text as written; the trace lists every call the model issued (failed ones with their error).
    A backend error (unreachable server, HTTP error) is raised, as from any other LLM call.
    """
    native = bool(getattr(backend.cfg, "tool_calls", True))
    offered = [offered_from_definition(d) for d in task.tools]
    messages = list(task.messages)
    if not any(m.get("role") == "system" for m in messages):
        messages.insert(
            0, {"role": "system", "content": system_prompt(task.language, task.max_calls, None if native else offered)}
        )
    lim = limits or Limits(max_turns=task.max_calls + 1, max_calls=task.max_calls)
    ep, _ = await run_agent(
        backend,
        messages,
        offered,
        CallableRunner(executor, lim.max_observation_chars),
        lim,
        native=native,
        role_name=role_name,
        language=task.language,
        raise_model_errors=True,  # as every LLM call: an unreachable backend raises (replies so far are cached)
    )
    trace = [
        ToolCallRecord(
            step=c["turn"],
            tool=c["tool"],
            args=c["args"],
            ok=bool(c["ok"]),
            result=_preview(c.get("result")) if c["status"] == "executed" and c["ok"] else None,
            error=c["error"],
        )
        for c in ep.calls
    ]
    stop: Literal["answer", "max_calls", "error"] = (
        "answer" if ep.stop_reason == "answer" else "max_calls" if ep.stop_reason == "max_calls" else "error"
    )
    out = AgentResult(final_answer=(ep.final_answer or "").strip(), trace=trace, stop_reason=stop)
    return out, ep, template_names(task.language)
