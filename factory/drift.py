"""Drift detection (pure core, no Dagster): tool-surface readings, comparisons, response sampling.

- `read_surface` reads a domain's current tool surface the cheap way (OpenAPI documents and
  MCP tool lists; no tool executions) and classifies the outcome: ``ok`` (with the same
  fingerprint `tool_inventory` would compute), ``down`` (unreachable, 5xx, 429: retry next
  tick, never a run) or ``malformed`` (a document that arrived but cannot be turned into
  tools: a run is requested so that it fails loudly at the inventory gate).
- `changed_tools` / `dependent_domains` find the domains whose retained connectivity-graph
  edges point into tools that changed.
- `check_response_drift` re-executes a deterministic sample of cached probe calls and
  reports the share whose result changed.

The Dagster sensors in `sensors/drift.py` only unpack their context and call these.
"""

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from factory.config import DomainConfig, ProjectConfig
from factory.graph.edge import parse_edges
from factory.io import Store, StoreError, read_artifact
from factory.tools.fingerprint import canonical_json, sha256_digest, surface_fingerprint
from factory.tools.registry import ToolRegistry
from factory.tools.sources import SourceError, resolve_source
from factory.tools.spec import ToolSpec

log = logging.getLogger(__name__)

SurfaceStatus = Literal["ok", "down", "malformed"]
MALFORMED_PREFIX = "malformed:"
GRAPH_ASSET = "connectivity_graph"
INVENTORY_ASSET = "tool_inventory"
PROBES_ASSET = "tool_probes"


@dataclass(frozen=True)
class SurfaceReading:
    """What one tick saw of one domain's tool surface."""

    domain: str
    status: SurfaceStatus
    fingerprint: str | None = None  # ok: surface fingerprint; malformed: "malformed:sha256:..." of the error
    tools: dict[str, str] = field(default_factory=dict)  # tool name -> digest of its surface (ok only)
    platform_fingerprints: dict[str, str] = field(default_factory=dict)
    reason: str = ""

    def as_metadata(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "current_fingerprint": self.fingerprint or "",
            "tools": len(self.tools),
            "platform_fingerprints": self.platform_fingerprints,
            "reason": self.reason,
        }


class _Down(Exception):
    """A source that could not be reached this tick (transient)."""


def tool_digest(tool: ToolSpec) -> str:
    return sha256_digest(tool.surface())


# --------------------------------------------------------------------------- surface readings


def _fetch_openapi_text(locator: str, timeout_s: float) -> str:
    if locator.startswith(("http://", "https://")):
        try:
            resp = httpx.get(locator, timeout=timeout_s, follow_redirects=True)
        except httpx.HTTPError as e:
            raise _Down(f"spec {locator}: {type(e).__name__}: {e}") from e
        if resp.status_code >= 500 or resp.status_code in (408, 429):
            raise _Down(f"spec {locator}: HTTP {resp.status_code}")
        if resp.status_code >= 400:
            raise SourceError(f"spec {locator}: HTTP {resp.status_code} when fetching the document")
        return resp.text
    from factory.tools.openapi import fetch_spec

    return json.dumps(fetch_spec(locator))  # local files: read errors are configuration errors


def _load_source(src: Any, domain: DomainConfig, cfg: ProjectConfig, timeout_s: float) -> list[ToolSpec]:
    from factory.tools.mcp import load_mcp
    from factory.tools.openapi import load_openapi, parse_spec_text

    if src.kind == "retrieval":  # the published index: a rebuilt one has a new x-index fingerprint (drift)
        from factory.tools.retrieval import load_retrieval

        return load_retrieval(src, domain.name, cfg)
    if src.kind == "mcp":
        try:
            return load_mcp(src, domain.name)
        except SourceError as e:  # a server that does not start or answer is down, not drifted
            raise _Down(str(e)) from e
    spec_locator, base_url = resolve_source(src, cfg.demo, cfg.project_dir)
    text = _fetch_openapi_text(spec_locator, timeout_s)
    doc = parse_spec_text(text, spec_locator)
    return load_openapi(
        doc,
        domain=domain.name,
        platform=src.platform,
        spec_locator=spec_locator,
        base_url=base_url,
        realtime_tools=src.realtime_tools,
    )


def read_surface(domain: DomainConfig, cfg: ProjectConfig, *, timeout_s: float | None = None) -> SurfaceReading:
    """Read every source of `domain` (documents and tool lists only) and fingerprint the surface.

    The fingerprint equals `tool_inventory`'s for the same surface (same loaders, same
    `surface_fingerprint`). Never raises for remote problems: they become the reading's status.
    """
    from factory.tools.fingerprint import fingerprint_by_platform

    timeout_s = timeout_s or cfg.executor.timeout_s
    tools: list[ToolSpec] = []
    for src in domain.sources:
        label = f"{src.kind} source {src.platform or ''} ({src.locator})".replace("  ", " ")
        try:
            loaded = _load_source(src, domain, cfg, timeout_s)
        except _Down as e:
            return SurfaceReading(domain.name, "down", reason=f"{label}: {e}")
        except Exception as e:  # the document arrived but is not usable: the inventory gate will say why
            msg = f"{label}: {type(e).__name__}: {e}" if not isinstance(e, SourceError) else f"{label}: {e}"
            return SurfaceReading(domain.name, "malformed", fingerprint=malformed_fingerprint(msg), reason=msg)
        tools.extend(loaded)
    names = [t.name for t in tools]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        msg = f"domain {domain.name!r}: duplicate tool names {dupes}"
        return SurfaceReading(domain.name, "malformed", fingerprint=malformed_fingerprint(msg), reason=msg)
    return SurfaceReading(
        domain.name,
        "ok",
        fingerprint=surface_fingerprint(tools),
        tools={t.name: tool_digest(t) for t in tools},
        platform_fingerprints=fingerprint_by_platform(tools),
    )


def malformed_fingerprint(message: str) -> str:
    """A content-derived stand-in fingerprint: one request per distinct breakage, not one per tick."""
    return MALFORMED_PREFIX + sha256_digest(message)


# --------------------------------------------------------------------------- comparisons


def inventory_tool_digests(inventory: Mapping[str, Any]) -> dict[str, str]:
    return {t.name: tool_digest(t) for t in ToolRegistry.from_inventory(inventory).specs()}


def changed_tools(previous: Mapping[str, str] | None, current: Mapping[str, str]) -> set[str] | None:
    """Names of tools added, removed or changed; None when the previous surface is unknown (all)."""
    if previous is None:
        return None
    names = set(previous) | set(current)
    return {n for n in names if previous.get(n) != current.get(n)}


def dependent_domains(
    graphs: Mapping[str, Mapping[str, Any]], changed: Mapping[str, set[str] | None]
) -> dict[str, list[str]]:
    """{dependent domain: [drifted domains it depends on]} over retained edges into changed tools.

    `graphs` maps a domain to its `connectivity_graph` value (edges stored with their source
    tool's domain); `changed` maps each drifted domain to its changed tool names (None: all).
    A drifted domain is not its own dependent.
    """
    out: dict[str, set[str]] = {}
    for domain, graph in graphs.items():
        for edge in parse_edges(graph.get("edges") or []):
            if edge.status != "retained":
                continue
            target_domain = edge.target_domain
            if target_domain not in changed or target_domain == domain:
                continue
            names = changed[target_domain]
            if names is None or edge.target_tool in names:
                out.setdefault(domain, set()).add(target_domain)
    return {d: sorted(v) for d, v in sorted(out.items())}


def stored_value(store: Store, asset: str, partition: str) -> Any | None:
    """The latest stored value of an asset partition, or None when absent or unreadable."""
    try:
        return read_artifact(store, asset, partition, default=None)
    except StoreError as e:
        log.warning("ignoring unreadable %s/%s: %s", asset, partition, e)
        return None


def read_graphs(store: Store, domains: Iterable[str]) -> dict[str, Any]:
    graphs = {}
    for d in domains:
        g = stored_value(store, GRAPH_ASSET, d)
        if isinstance(g, dict):
            graphs[d] = g
    return graphs


# --------------------------------------------------------------------------- response drift


@dataclass(frozen=True)
class ResponseDrift:
    domain: str
    sampled: int
    compared: int  # re-executions that reached the service (environmental failures are not evidence)
    changed: list[dict[str, Any]]
    share: float
    threshold: float

    @property
    def stale(self) -> bool:
        return self.compared > 0 and self.share > self.threshold

    @property
    def digest(self) -> str:
        """Content hash of what changed (the run key of the re-synthesis request)."""
        return hashlib.sha256(canonical_json(self.changed).encode()).hexdigest()[:24]

    def as_metadata(self) -> dict[str, Any]:
        return {
            "sampled": self.sampled,
            "compared": self.compared,
            "changed": len(self.changed),
            "changed_share": round(self.share, 4),
            "threshold": self.threshold,
            "stale": self.stale,
            "changed_calls": self.changed[:10],
        }


def result_signature(outcome: str, record_count: int | None, first_record: Any) -> str:
    """What must stay equal for a re-executed call to count as unchanged."""
    return sha256_digest({"outcome": outcome, "records": record_count or 0, "first": first_record})


def sample_cached_calls(probes: Mapping[str, Any], inventory: Mapping[str, Any], n: int, seed: int) -> list[dict]:
    """A deterministic sample of successful, replayable probe rows (no key, state-changing or realtime tools)."""
    tools = {t["name"]: t for t in inventory.get("tools", [])}
    rows: dict[str, dict] = {}
    for r in probes.get("rows", []):
        t = tools.get(r.get("tool"))
        if t is None or r.get("outcome_group") != "success" or not r.get("call_digest"):
            continue
        if t.get("key_acquisition") or t.get("state_changing") or t.get("realtime"):
            continue
        rows.setdefault(r["call_digest"], r)
    order = sorted(rows, key=lambda d: hashlib.sha256(f"{seed}|{d}".encode()).hexdigest())
    return [rows[d] for d in order[:n]]


def check_response_drift(
    domain: DomainConfig,
    cfg: ProjectConfig,
    probes: Mapping[str, Any],
    inventory: Mapping[str, Any],
) -> ResponseDrift:
    """Re-execute a sample of cached probe calls and compare outcome, count and first record."""
    from factory.tools.executor import run_many
    from factory.tools.outcomes import Outcome
    from factory.tools.registry import executor_factory

    sample = sample_cached_calls(probes, inventory, cfg.drift.response_sample_size, cfg.seed)
    if not sample:
        return ResponseDrift(domain.name, 0, 0, [], 0.0, cfg.drift.response_change_share)
    registry = ToolRegistry.from_inventory(inventory)
    tools = {t.name: t for t in registry.specs()}
    calls = [(tools[r["tool"]], dict(r["args"])) for r in sample]
    results = run_many(executor_factory(cfg, [domain.name], registry), calls)
    compared = 0
    changed = []
    for row, res in zip(sample, results, strict=True):
        if Outcome(res.outcome).group == "environmental":
            continue
        compared += 1
        first = res.records[0] if res.records else None
        before = result_signature(row["outcome"], row.get("record_count"), row.get("first_record"))
        after = result_signature(res.outcome.value, res.record_count, first)
        if before != after:
            changed.append(
                {"tool": row["tool"], "call_digest": row["call_digest"], "before": before, "after": after,
                 "outcome": res.outcome.value, "records": res.record_count}
            )  # fmt: skip
    share = len(changed) / compared if compared else 0.0
    return ResponseDrift(domain.name, len(sample), compared, changed, share, cfg.drift.response_change_share)
