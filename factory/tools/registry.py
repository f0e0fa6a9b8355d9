"""The one view of every ToolSpec of the inventories, the one name rule, the one executor factory.

- `ToolRegistry`: the ToolSpecs of `tool_inventory` values (per domain, as the stages receive
  them) as a read-only mapping ``tool id → ToolSpec`` (`tool_id`: ``<domain>/<platform>/<name>``;
  domains in sorted order, tools in inventory order), with lookups by qualified name
  (``<platform>.<name>``), by (platform, name), by name, by domain and by platform.
- `ToolRegistry.resolve`: the rule for a bare tool name used in a task (``available_tools``).
  The candidates named so are searched in pools from the most specific to the least: on one of
  the task's platforms AND in its domain → on one of its platforms → in its domain → anywhere.
  The first non-empty pool decides; two different tools there (different qualified names) are
  an ambiguity, a `ToolResolutionError` naming the candidates; none anywhere is one too.
- `executor_factory`: the one place a `ToolExecutor` is built for a stage: the tools of the
  involved domains, their configured sources, the API keys from the environment, and the
  executor config (`executor_config`, with the ``scan`` profile that synthesis, judging and
  export replay share so that their result digests agree).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from factory.redaction import register_secret
from factory.tools.spec import ToolSpec, tool_id

if TYPE_CHECKING:
    from factory.config import ExecutorConfig, ProjectConfig
    from factory.tools.executor import ToolExecutor

__all__ = [
    "ToolRegistry",
    "ToolResolutionError",
    "env_api_keys",
    "executor_config",
    "executor_factory",
    "tool_id",
]

MakeExecutor = Callable[[], "ToolExecutor"]


def _with_path_kinds(spec: ToolSpec, kinds: Mapping[str, str] | None) -> ToolSpec:
    """`spec` with the kinds of path its inputs take (the probes' `path_kinds`), when there are any."""
    return spec.model_copy(update={"path_kinds": dict(kinds)}) if kinds else spec


class ToolResolutionError(ValueError):
    """A tool name that names no tool of the inventories, or more than one."""


class ToolRegistry(Mapping[str, ToolSpec]):
    """Every ToolSpec of the inventories, keyed by tool id (a read-only mapping)."""

    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        self._by_id: dict[str, ToolSpec] = {}
        for s in specs:
            self._by_id[s.tool_id] = s
        self._by_platform_name: dict[tuple[str, str], ToolSpec] = {}
        self._by_qualified: dict[str, ToolSpec] = {}
        self._by_name: dict[str, list[ToolSpec]] = defaultdict(list)
        self._by_domain: dict[str, list[ToolSpec]] = defaultdict(list)
        self._by_platform: dict[str, list[ToolSpec]] = defaultdict(list)
        for s in self._by_id.values():
            # a platform served in two domains: (platform, name) names the first domain's tool
            self._by_platform_name.setdefault((s.platform, s.name), s)
            self._by_qualified.setdefault(s.qualified_name, s)
            self._by_name[s.name].append(s)
            self._by_domain[s.domain].append(s)
            self._by_platform[s.platform].append(s)

    @classmethod
    def from_inventories(
        cls, inventories: Mapping[str, Mapping[str, Any]], probes: Mapping[str, Mapping[str, Any]] | None = None
    ) -> ToolRegistry:
        """The tools of `tool_inventory` values keyed by domain (domains sorted, tools in inventory order).

        With `probes` (`tool_probes` values keyed by domain), a tool without declared output fields
        gets the fields observed in its probe results (`factory.tools.observed`), so that every stage
        lists declared and inferred fields alike."""
        from factory.tools.observed import observed_in, with_observed

        seen = observed_in(probes)
        kinds = {d: (v or {}).get("path_kinds") or {} for d, v in (probes or {}).items()}
        return cls(
            _with_path_kinds(with_observed(spec, seen.get((domain, spec.name))), kinds.get(domain, {}).get(spec.name))
            for domain in sorted(inventories)
            for spec in (ToolSpec.model_validate(t) for t in inventories[domain].get("tools") or [])
        )

    @classmethod
    def from_inventory(cls, inventory: Mapping[str, Any]) -> ToolRegistry:
        """The tools of one domain's `tool_inventory` value."""
        return cls(ToolSpec.model_validate(t) for t in inventory.get("tools") or [])

    # ------------------------------------------------------------------ mapping: tool id → spec

    def __getitem__(self, tid: str) -> ToolSpec:
        return self._by_id[tid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_id)

    def __len__(self) -> int:
        return len(self._by_id)

    def __repr__(self) -> str:
        return f"ToolRegistry({len(self)} tools, domains {self.domains()})"

    def specs(self) -> list[ToolSpec]:
        """Every spec, in registry order (domains sorted, tools in inventory order)."""
        return list(self._by_id.values())

    # ------------------------------------------------------------------ lookups

    def domains(self) -> list[str]:
        return sorted(self._by_domain)

    def platforms(self) -> list[str]:
        return sorted(self._by_platform)

    def in_domain(self, domain: str) -> list[ToolSpec]:
        return list(self._by_domain.get(domain, []))

    def in_domains(self, domains: Iterable[str]) -> list[ToolSpec]:
        """The specs of `domains`, in registry order."""
        wanted = set(domains)
        return [s for s in self._by_id.values() if s.domain in wanted]

    def on_platform(self, platform: str) -> list[ToolSpec]:
        return list(self._by_platform.get(platform, []))

    def named(self, name: str) -> list[ToolSpec]:
        """Every spec with this bare name (any domain, any platform), in registry order."""
        return list(self._by_name.get(name, []))

    @property
    def by_platform_name(self) -> Mapping[tuple[str, str], ToolSpec]:
        """``(platform, name) → spec`` (the first domain's when a platform serves several)."""
        return self._by_platform_name

    def lookup(self, platform: str, name: str) -> ToolSpec | None:
        """The spec `name` of `platform`, or None."""
        return self._by_platform_name.get((platform, name))

    def get_qualified(self, qualified_name: str) -> ToolSpec:
        """The spec with this ``<platform>.<name>``; ToolResolutionError when none."""
        try:
            return self._by_qualified[qualified_name]
        except KeyError:
            raise ToolResolutionError(f"tool {qualified_name} is in no tool_inventory") from None

    def platform_tool(self, platform: str, name: str) -> ToolSpec:
        """The spec `name` of `platform`; ToolResolutionError when none."""
        spec = self.lookup(platform, name)
        if spec is None:
            raise ToolResolutionError(f"tool {platform}.{name} is in no tool_inventory")
        return spec

    def key_tool(self, platform: str) -> ToolSpec | None:
        """The key-acquisition tool of `platform` (the first by name), or None."""
        return next(
            (s for s in sorted(self.on_platform(platform), key=lambda s: s.name) if s.key_acquisition is not None),
            None,
        )

    # ------------------------------------------------------------------ the name rule

    def resolve(self, name: str, *, platforms: Iterable[str] = (), domain: str | None = None) -> ToolSpec:
        """The tool a task means by the bare `name` (see the module docstring for the rule).

        Raises ToolResolutionError when no inventory holds the name, and when the most
        specific pool holding it holds two different tools (the message names them).
        """
        cands = self._by_name.get(name) or []
        plats = set(platforms)
        pools: list[tuple[str, Callable[[ToolSpec], bool]]] = [
            (f"the task's platforms in domain {domain!r}", lambda s: s.platform in plats and s.domain == domain),
            (f"the task's platforms ({', '.join(sorted(plats))})", lambda s: s.platform in plats),
            (f"domain {domain!r}", lambda s: s.domain == domain),
            ("the inventories", lambda s: True),
        ]
        for where, ok in pools:
            pool = [s for s in cands if ok(s)]
            if not pool:
                continue
            tools = sorted({s.qualified_name for s in pool})
            if len(tools) > 1:
                raise ToolResolutionError(
                    f"tool {name!r} is ambiguous: {len(tools)} tools of {where} are named so"
                    f" ({', '.join(sorted(s.tool_id for s in pool))}); name its platform"
                )
            return min(pool, key=lambda s: (s.domain, s.platform))
        raise ToolResolutionError(
            f"tool {name!r} is in no tool_inventory (domains: {', '.join(self.domains()) or 'none'})"
        )


# --------------------------------------------------------------------------- executors


def env_api_keys(cfg: ProjectConfig, domains: Iterable[str]) -> dict[str, str]:
    """``{platform: key}`` from the environment variables the domains' sources name (``api_key_env``).

    Domains the config does not declare contribute nothing.  Never log the result.
    """
    keys: dict[str, str] = {}
    for d in domains:
        if d not in cfg.domain_names:
            continue
        for s in cfg.domain(d).sources:
            if s.api_key_env and s.platform and os.environ.get(s.api_key_env):
                keys[s.platform] = os.environ[s.api_key_env]
                register_secret(keys[s.platform])  # never in a log line (factory.redaction)
    return keys


def executor_config(cfg: ProjectConfig, *, scan: bool = False) -> ExecutorConfig:
    """The project's executor config; ``scan=True``: keep ``synthesis.max_scan_records`` records per call.

    The scan profile is how synthesis executes (it scans result pages for seeds and answers);
    judging and export replay re-execute golden actions with the same profile, so that the
    records kept — and the result digests computed from them — agree with synthesis.
    """
    if not scan:
        return cfg.executor
    return cfg.executor.model_copy(update={"max_records_kept": cfg.synthesis.max_scan_records})


def executor_factory(
    cfg: ProjectConfig,
    domains: Iterable[str] | None,
    tools: ToolRegistry,
    *,
    scan: bool = False,
) -> MakeExecutor:
    """A zero-argument factory of `ToolExecutor`s over the tools of `domains` (cross-domain edges included).

    `domains` None means every domain of `tools` that the config declares.  The executors get
    the tools of those domains, the configured sources of the declared ones (MCP server
    environments), their API keys from the environment (`env_api_keys`) and
    `executor_config(cfg, scan=scan)`; destructive tools the project did not opt into
    (`factory.tools.safety.refusal`) are refused by the executor, never sent.
    """
    from factory.tools.executor import ToolExecutor
    from factory.tools.safety import refusal

    involved = sorted(set(tools.domains()) & set(cfg.domain_names)) if domains is None else list(domains)
    specs = tools.in_domains(involved)
    declared = [d for d in involved if d in cfg.domain_names]
    sources = [src for d in declared for src in cfg.domain(d).sources]
    keys = env_api_keys(cfg, declared)
    ex_cfg = executor_config(cfg, scan=scan)
    workdir = cfg.project_dir
    refuse = {s.qualified_name: why for s in specs if (why := refusal(s, cfg))}
    patterns = tuple(cfg.exports.secret_patterns)  # key-like values are redacted where they enter
    recordings = None
    if any(s.source.recorded for s in specs):  # a source with `responses: record`
        from factory.io import data_store
        from factory.tools.transports.recorded import Recordings

        recordings = Recordings(data_store(cfg))
    return lambda: ToolExecutor(
        specs,
        ex_cfg,
        api_keys=keys,
        sources=sources,
        workdir=workdir,
        refuse=refuse,
        key_patterns=patterns,
        recordings=recordings,
    )
