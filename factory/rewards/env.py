"""The project's live tools as an RL environment (no Dagster): Python callables generated from the ToolSpecs,
executed by the project's `ToolExecutor` against the live services.

    env = ToolEnvironment.from_project("factory.yaml")          # tool_inventory values of the data folder
    GRPOTrainer(..., tools=env.tools())                          # stateless tools: one shared session
    GRPOTrainer(..., environment_factory=env.environment_factory(), reward_funcs=[outcome_reward])

Every function has a typed signature (JSON Schema types → Python annotations, optional parameters default to
None) and a docstring with the tool's description and an `Args:` section, which is what TRL (through
`transformers.utils.get_json_schema`) turns into the tool schema shown to the model. The API key is system
state, as in `factory eval` (EDGE App. B.1): never a parameter, never in a docstring; the episode's session
acquires it before the first turn and the executor injects it. Format switches are hidden the same way
(`factory.llm.agent.hidden_params`).

`environment_factory()` returns a class TRL instantiates once per rollout slot: `reset(**row)` opens a fresh
executor session (state changes of one episode stay in it: a stateful tool's episode sees only its own
writes) and acquires the keys of the row's platforms; its public methods are the tools. Reward functions get
the instances as `environments` (`factory.rewards.outcome_reward` reads the session's state hashes and calls).

verl: `factory.rewards.verl` writes the tool config beside the RL export (`rl/verl_tools.yaml`); `FactoryVerlTool`,
a duck-typed verl tool (create / execute / release per trajectory instance), runs over the same sessions.
"""

import asyncio
import inspect
import json
import keyword
import re
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from factory.config import ProjectConfig
from factory.llm.agent import OfferedTool, observation_text, offered_from_spec
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.spec import ToolSpec

__all__ = [
    "ToolBinding",
    "ToolEnvironment",
    "ToolEnvironmentError",
    "ToolSession",
    "bindings",
    "make_function",
    "session_of",
]

T = TypeVar("T")

_JSON_TYPES: dict[str, type] = {
    "integer": int,
    "number": float,
    "boolean": bool,
    "string": str,
    "array": list,
    "object": dict,
}
_IDENT = re.compile(r"[^0-9A-Za-z_]")


class ToolEnvironmentError(RuntimeError):
    """The environment cannot be built or a session cannot run (the message names the tool or the setting)."""


# --------------------------------------------------------------------------- callables from ToolSpecs


def python_name(name: str, taken: Iterable[str] = ()) -> str:
    """A Python identifier for a tool or parameter name (non-identifier characters → `_`; unique in `taken`)."""
    base = _IDENT.sub("_", name).strip("_") or "arg"
    if base[0].isdigit() or keyword.iskeyword(base):
        base = f"{base}_"
    out, n, used = base, 2, set(taken)
    while out in used:
        out, n = f"{base}_{n}", n + 1
    return out


def python_type(schema: Mapping[str, Any]) -> tuple[Any, bool]:
    """(the Python annotation of a JSON Schema, whether it admits null); unknown shapes are `str`."""
    nullable = False
    options: list[Mapping[str, Any]] = []
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            options = [o for o in schema[key] if isinstance(o, Mapping)]
    t = schema.get("type")
    if isinstance(t, list):
        nullable = "null" in t
        options = [{"type": x} for x in t if x != "null"]
    elif options:
        nullable = any(o.get("type") == "null" for o in options)
        options = [o for o in options if o.get("type") != "null"]
    else:
        options = [schema]
    if len(options) != 1:
        return str, nullable
    one = options[0]
    base = _JSON_TYPES.get(str(one.get("type")), str)
    if base is list and isinstance(one.get("items"), Mapping):
        item, _ = python_type(one["items"])
        return list[item], nullable  # type: ignore[valid-type]
    return base, nullable


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


@dataclass(frozen=True)
class ToolBinding:
    """One ToolSpec as a Python callable: its function name, the offered tool (hidden parameters left out) and
    the Python parameter name of each schema parameter."""

    name: str
    spec: ToolSpec
    offered: OfferedTool
    params: dict[str, str]  # python name → schema name

    def signature(self) -> tuple[inspect.Signature, dict[str, Any]]:
        props = self.offered.parameters.get("properties") or {}
        required = set(self.offered.parameters.get("required") or [])
        params, annotations = [], {}
        ordered = sorted(self.params.items(), key=lambda kv: kv[1] not in required)  # required ones first
        for py, name in ordered:
            annotation, nullable = python_type(props.get(name) or {})
            optional = name not in required
            if optional or nullable:
                annotation = annotation | None
            default = None if optional else inspect.Parameter.empty
            params.append(inspect.Parameter(py, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default))
            annotations[py] = annotation
        annotations["return"] = str
        return inspect.Signature(params, return_annotation=str), annotations

    def docstring(self) -> str:
        props = self.offered.parameters.get("properties") or {}
        lines = [_one_line(self.spec.description) or f"The {self.spec.name} tool of {self.spec.platform}."]
        if self.params:
            lines += ["", "Args:"]
            for py, name in self.params.items():
                p = props.get(name) or {}
                desc = _one_line(p.get("description") or p.get("title") or name.replace("_", " "))
                if name != py:
                    desc = f"{desc} (the tool's parameter {name!r})"
                lines.append(f"    {py}: {desc}")
        lines += [
            "",
            "Returns:",
            "    The result as JSON text: the outcome, the record count and the records, or the error.",
        ]
        return "\n".join(lines) + "\n"

    def arguments(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments under the schema's names (parameters left at None are not sent)."""
        unknown = sorted(set(kwargs) - set(self.params))
        if unknown:
            raise TypeError(f"{self.name}() got unexpected argument(s) {', '.join(unknown)}")
        return {self.params[k]: v for k, v in kwargs.items() if v is not None}


def bindings(specs: Iterable[ToolSpec]) -> list[ToolBinding]:
    """Bindings of the tools the model may call (key-acquisition tools are system state and left out), named
    like the export names them: the tool's name, or `<platform>__<name>` when two platforms share it."""
    offered = sorted((s for s in specs if s.key_acquisition is None), key=lambda s: (s.name, s.platform))
    counts: dict[str, int] = {}
    for s in offered:
        counts[s.name] = counts.get(s.name, 0) + 1
    out: list[ToolBinding] = []
    taken: set[str] = set()
    for s in offered:
        name = python_name(f"{s.platform}__{s.name}" if counts[s.name] > 1 else s.name, taken | {"reset"})
        taken.add(name)
        tool = offered_from_spec(s)
        py: dict[str, str] = {}
        for p in tool.parameters.get("properties") or {}:
            py[python_name(p, py)] = p
        out.append(ToolBinding(name=name, spec=s, offered=tool, params=py))
    return out


def make_function(binding: ToolBinding, call: Callable[[ToolBinding, dict[str, Any]], str]) -> Callable[..., str]:
    """A function for `binding` that sends its keyword arguments through `call(binding, arguments)`;
    signature, annotations and docstring from the ToolSpec."""
    sig, annotations = binding.signature()

    def tool(**kwargs: Any) -> str:
        return call(binding, binding.arguments(kwargs))

    tool.__name__ = tool.__qualname__ = binding.name
    tool.__doc__ = binding.docstring()
    tool.__signature__ = sig  # type: ignore[attr-defined]
    tool.__annotations__ = annotations
    return tool


# --------------------------------------------------------------------------- sessions


class _Loop:
    """An event loop in a daemon thread: synchronous callers (TRL calls tools synchronously) run the executor's
    coroutines on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="factory-tool-env", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


@dataclass
class ToolSession:
    """One episode's executor session: its own key(s) and server-side state, the calls it ran (in the trace
    shape `factory.eval.scoring` scores)."""

    env: "ToolEnvironment"
    calls: list[dict[str, Any]] = field(default_factory=list)
    _executor: Any = None

    def open(self, platforms: Iterable[str] = ()) -> None:
        """A fresh session (the previous one closed); keys of `platforms` acquired now, as system state."""
        self.close()
        self.calls = []
        ex = self.env.make_executor()
        self.env.run(ex.__aenter__())
        self._executor = ex
        for p in sorted(set(platforms)):
            key_tool = self.env.registry.key_tool(p)
            if key_tool is not None:
                self.env.run(ex.call(key_tool, {}))

    def close(self) -> None:
        if self._executor is not None:
            ex, self._executor = self._executor, None
            self.env.run(ex.aclose())

    def call(self, binding: ToolBinding, args: dict[str, Any]) -> str:
        """Run one call (schema-checked first, like `factory eval`'s runner) → the observation text."""
        if self._executor is None:
            self.open()
        rec: dict[str, Any] = {"tool": binding.spec.name, "platform": binding.spec.platform, "args": dict(args),
                               "status": "executed", "valid": False, "ok": False, "outcome": None}  # fmt: skip
        self.calls.append(rec)
        problems = binding.offered.problems(args)
        if problems:
            rec["status"] = "bad_arguments"
            return json.dumps({"error": f"invalid arguments for {binding.name}: " + "; ".join(problems[:5])})
        rec["valid"] = True
        r = self.env.run(self._executor.call(binding.spec, args))
        rec.update(ok=r.ok, outcome=r.outcome.value)
        return observation_text(r, self.env.max_chars)

    def state_hashes(self, platforms: Iterable[str]) -> dict[str, str | None]:
        """Each platform's state hash as this session sees it (its state-hash tool, same key, same state)."""
        if self._executor is None:
            self.open()
        out: dict[str, str | None] = {}
        for p in platforms:
            spec = next((s for s in sorted(self.env.registry.on_platform(p), key=lambda s: s.name)
                         if "state_hash" in s.output_fields), None)  # fmt: skip
            if spec is None:
                out[p] = None
                continue
            r = self.env.run(self._executor.call(spec, {}))
            out[p] = str(r.records[0].get("state_hash")) if r.ok and r.records else None
        return out

    def specs_by_platform_name(self) -> Mapping[tuple[str, str], ToolSpec]:
        return self.env.registry.by_platform_name


def _row_platforms(row: Mapping[str, Any]) -> set[str]:
    """Platforms of an RL row (its golden actions), for acquiring their keys at reset."""
    gt = row.get("ground_truth")
    if isinstance(gt, str):
        try:
            gt = json.loads(gt)
        except ValueError:
            gt = None
    if not isinstance(gt, Mapping):
        return set()
    return {str(a.get("platform")) for a in gt.get("golden_actions") or [] if a.get("platform")}


class ToolEnvironment:
    """The live tools of a project for RL: bindings over its ToolSpecs, sessions over its executors."""

    def __init__(
        self,
        cfg: ProjectConfig,
        registry: ToolRegistry,
        *,
        domains: Sequence[str] | None = None,
        max_chars: int = 4000,
        timeout_s: float = 120.0,
    ) -> None:
        self.cfg, self.registry, self.max_chars, self.timeout_s = cfg, registry, max_chars, timeout_s
        self.domains = list(domains) if domains is not None else sorted(set(registry.domains()) & set(cfg.domain_names))
        if not self.domains:
            raise ToolEnvironmentError(
                f"no tools: the registry's domains {registry.domains()} hold none of the project's {cfg.domain_names}"
            )
        self._make = executor_factory(cfg, self.domains, registry)
        self.bindings = bindings(registry.in_domains(self.domains))
        self._loop: _Loop | None = None
        self._shared: ToolSession | None = None

    @classmethod
    def from_project(
        cls, config: str | Path | None = None, domains: Sequence[str] | None = None, **kwargs: Any
    ) -> "ToolEnvironment":
        """From a project's config file (default: ./factory.yaml) and the tool_inventory values in its data folder."""
        from factory.config import load_config
        from factory.io import StoreError, data_store, read_artifact

        cfg = load_config(config)
        store = data_store(cfg)
        inventories = {}
        for d in domains or cfg.domain_names:
            try:
                inventories[d] = read_artifact(store, "tool_inventory", d)
            except StoreError:
                continue
        if not inventories:
            raise ToolEnvironmentError(
                f"no tool_inventory in {store.root}: run the pipeline first (`factory run`) so the tools are known"
            )
        from factory.tools.retrieval import served_inventories

        # search tools serve the published (decontaminated) retrieval_index
        return cls(
            cfg,
            ToolRegistry.from_inventories(served_inventories(inventories, cfg)),
            domains=sorted(inventories),
            **kwargs,
        )

    def make_executor(self) -> Any:
        return self._make()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            self._loop = _Loop()
        return self._loop.run(coro, self.timeout_s)

    def binding(self, name: str) -> ToolBinding:
        for b in self.bindings:
            if b.name == name:
                return b
        raise ToolEnvironmentError(f"no tool {name!r}; the environment has {', '.join(b.name for b in self.bindings)}")

    def session(self) -> ToolSession:
        """A new episode session (opened at its first call, or by `open(platforms)`)."""
        return ToolSession(self)

    def tools(self, session: ToolSession | None = None) -> list[Callable[..., str]]:
        """Plain functions for TRL's `tools=` (stateless tools), all running in `session` (default: one
        shared session of this environment)."""
        if session is None:
            self._shared = self._shared or self.session()
            session = self._shared
        call = session.call
        return [make_function(b, call) for b in self.bindings]

    def environment_factory(self) -> type:
        """A class for TRL's `environment_factory=`: one instance per rollout slot, `reset(**row)` opens a
        fresh session with the row's platform keys; the public methods are the tools."""
        env = self

        def __init__(self) -> None:  # noqa: N807 - a method of the generated class
            self._factory_session = env.session()

        def reset(self, **row: Any) -> None:
            self._factory_session.open(_row_platforms(row))

        members: dict[str, Any] = {"__init__": __init__, "reset": reset, "__doc__": "Live tools of one episode."}
        for b in self.bindings:
            members[b.name] = _session_method(b)
        return type("FactoryToolEnv", (), members)

    def close(self) -> None:
        if self._shared is not None:
            self._shared.close()
        if self._loop is not None:
            self._loop.loop.call_soon_threadsafe(self._loop.loop.stop)
            self._loop.thread.join(timeout=5)
            self._loop = None


def _session_method(binding: ToolBinding) -> Callable[..., str]:
    """A method of the environment-factory class calling `binding` in the instance's session."""
    sig, annotations = binding.signature()

    def tool(self, **kwargs: Any) -> str:
        return self._factory_session.call(binding, binding.arguments(kwargs))

    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    tool.__name__ = tool.__qualname__ = binding.name
    tool.__doc__ = binding.docstring()
    tool.__signature__ = sig.replace(parameters=[self_param, *sig.parameters.values()])  # type: ignore[attr-defined]
    tool.__annotations__ = annotations
    return tool


def session_of(environment: Any) -> ToolSession:
    """The `ToolSession` behind an environment-factory instance (what TRL passes as `environments`), or the
    session itself."""
    if isinstance(environment, ToolSession):
        return environment
    session = getattr(environment, "_factory_session", None)
    if not isinstance(session, ToolSession):
        raise ToolEnvironmentError(
            f"{type(environment).__name__} is not an environment of ToolEnvironment.environment_factory()"
        )
    return session
