"""Drift sensors and the per-domain re-synthesis job.

`endpoint_drift_sensor` (every `drift.endpoint_interval_s`): reads each configured domain's
tool surface (documents / tool lists, no executions), compares its fingerprint with the
`fingerprint` metadata of the latest `tool_inventory` materialization of that partition, and
requests a `domain_resynthesis` run for every drifted domain (run key
``drift:<domain>:<fingerprint>``) followed by one for every domain whose retained
connectivity-graph edges point into a changed tool (``drift:<dependent>:via:<domain>:<fingerprint>``).
It keeps the `domain` dynamic partitions equal to the config and records what it saw as
`AssetObservation`s of `tool_inventory` (the drift history in the UI).

`response_drift_sensor` (every `drift.response_interval_s`): re-executes a small sample of
cached probe calls per domain; above `drift.response_change_share` it observes the domain's
`tool_probes` as stale and requests a re-synthesis (``response-drift:<domain>:<digest>``).

The cursor (JSON) keeps, per domain, the last fingerprint seen, why an endpoint is down, and
the fingerprints already requested, so a flapping endpoint yields at most one request per
fingerprint even before the daemon's own run-key de-duplication.

Ordering: the drifted domain's request comes first and carries a higher `dagster/priority`;
all requests of one drift share the tag `factory/drift_event`. With the production
QueuedRunCoordinator limit of one run per `factory/drift_event` value (README, Production
storage) the dependents' graphs are rebuilt after the drifted domain's inventory and the
global catalog were refreshed. Each run includes `tool_catalog` (the global catalog is
rebuilt inside the domain run, from every domain's stored inventory).
"""

import json
from collections.abc import Callable, Sequence
from typing import Any

import dagster as dg

from assets.partitions import DOMAIN_PARTITIONS_NAME, domain_partitions
from factory import drift
from factory.config import ConfigError, DomainConfig, ProjectConfig
from factory.io import data_store
from sensors.partitions import ConfigSource, config_source, partition_sync_requests

RESYNTHESIS_JOB = "domain_resynthesis"
INVENTORY_KEY = dg.AssetKey(drift.INVENTORY_ASSET)
PROBES_KEY = dg.AssetKey(drift.PROBES_ASSET)
MAX_REMEMBERED = 20  # requested fingerprints kept per domain in the cursor

Reader = Callable[[DomainConfig, ProjectConfig], drift.SurfaceReading]


# --------------------------------------------------------------------------- job


def resynthesis_selection(assets: Sequence[dg.AssetsDefinition]) -> dg.AssetSelection:
    """Every per-domain asset downstream of tool_inventory, plus the global assets they need.

    (tool_inventory and its descendants) ∩ (per-domain assets and their ancestors), plus the
    inventory itself. Keeps `tool_catalog` (skeleton graphs read it, and it must reflect the new
    surface) and drops global sinks such as dataset_splits and exports (they read every domain;
    the main job or a manual run rebuilds them).
    """
    per_domain = [k for a in assets if a.partitions_def is not None for k in a.keys]
    inventory = dg.AssetSelection.assets(INVENTORY_KEY)
    return inventory.downstream() & dg.AssetSelection.assets(*per_domain).upstream()


def make_resynthesis_job(assets: Sequence[dg.AssetsDefinition]):
    return dg.define_asset_job(
        name=RESYNTHESIS_JOB,
        selection=resynthesis_selection(assets),
        partitions_def=domain_partitions,
        description="Re-materialize one domain after drift: its inventory, probes, the global catalog, "
        "and every per-domain stage downstream (graph, ...). Requested by the drift sensors and the schedule.",
    )


# --------------------------------------------------------------------------- cursor


def load_cursor(raw: str | None) -> dict[str, Any]:
    try:
        cur = json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        cur = {}
    return {
        "seen": dict(cur.get("seen", {})),
        "down": dict(cur.get("down", {})),
        "requested": dict(cur.get("requested", {})),
    }


def _remember(cursor: dict[str, Any], domain: str, key: str) -> None:
    keys = [k for k in cursor["requested"].get(domain, []) if k != key] + [key]
    cursor["requested"][domain] = keys[-MAX_REMEMBERED:]


def latest_inventory_fingerprint(instance: dg.DagsterInstance, domain: str) -> str | None:
    """The `fingerprint` metadata of the latest tool_inventory materialization of `domain`."""
    res = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=INVENTORY_KEY, asset_partitions=[domain]), limit=1
    )
    if not res.records:
        return None
    mat = res.records[0].asset_materialization
    value = (mat.metadata or {}).get("fingerprint") if mat else None
    return str(getattr(value, "value", value)) if value is not None else None


# --------------------------------------------------------------------------- endpoint drift


def _default_reader(domain: DomainConfig, cfg: ProjectConfig) -> drift.SurfaceReading:
    return drift.read_surface(domain, cfg)


def evaluate_endpoint_drift(
    instance: dg.DagsterInstance, cfg: ProjectConfig, cursor_raw: str | None, reader: Reader = _default_reader
) -> dg.SensorResult:
    """One tick of the endpoint-drift sensor (see the module docstring)."""
    cursor = load_cursor(cursor_raw)
    existing = list(instance.get_dynamic_partitions(DOMAIN_PARTITIONS_NAME))
    add, delete = partition_sync_requests(cfg.domain_names, existing)
    partition_requests: list[Any] = []
    if add:
        partition_requests.append(dg.AddDynamicPartitionsRequest(DOMAIN_PARTITIONS_NAME, add))
    if delete:
        partition_requests.append(dg.DeleteDynamicPartitionsRequest(DOMAIN_PARTITIONS_NAME, delete))
    for d in delete:
        for part in ("seen", "down", "requested"):
            cursor[part].pop(d, None)

    store = data_store(cfg)
    readings: dict[str, drift.SurfaceReading] = {}
    materialized: dict[str, str | None] = {}
    drifted: dict[str, drift.SurfaceReading] = {}
    notes: list[str] = []
    for domain in cfg.domains:
        d = domain.name
        r = readings[d] = reader(domain, cfg)
        if r.status == "down":
            notes.append(f"{d}: endpoint down, retry next tick ({r.reason})")
            continue
        assert r.fingerprint is not None  # only a "down" reading has no fingerprint
        materialized[d] = latest_inventory_fingerprint(instance, d) if d not in add else None
        if r.fingerprint == materialized[d]:
            continue
        if r.fingerprint in cursor["requested"].get(d, []):
            notes.append(f"{d}: drift to {r.fingerprint[:19]} already requested")
            continue
        drifted[d] = r

    changed: dict[str, set[str] | None] = {}
    for d, r in drifted.items():
        if r.status != "ok":
            changed[d] = None if r.status == "malformed" else set()
            continue
        previous = drift.stored_value(store, drift.INVENTORY_ASSET, d)
        prev_digests = drift.inventory_tool_digests(previous) if isinstance(previous, dict) else None
        changed[d] = drift.changed_tools(prev_digests, r.tools)
    graphs = drift.read_graphs(store, [d for d in cfg.domain_names if d not in drifted])
    dependents = drift.dependent_domains(graphs, changed)

    run_requests: list[dg.RunRequest] = []
    for d, r in drifted.items():
        event = f"{d}:{(r.fingerprint or '').removeprefix('sha256:')[:16]}"
        run_requests.append(
            dg.RunRequest(
                run_key=f"drift:{d}:{r.fingerprint}",
                job_name=RESYNTHESIS_JOB,
                partition_key=d,
                tags={"factory/trigger": "endpoint-drift", "factory/drift_event": event, "dagster/priority": "1"},
            )
        )
        assert r.fingerprint is not None  # drifted readings are never "down"
        _remember(cursor, d, r.fingerprint)
    for dep, sources in dependents.items():
        if readings.get(dep) is not None and readings[dep].status == "down":
            notes.append(f"{dep}: depends on {sources} but is down; not requested")
            continue
        src = sources[0]
        fp = drifted[src].fingerprint
        run_requests.append(
            dg.RunRequest(
                run_key=f"drift:{dep}:via:{'+'.join(sources)}:{fp}",
                job_name=RESYNTHESIS_JOB,
                partition_key=dep,
                tags={
                    "factory/trigger": "endpoint-drift-dependent",
                    "factory/drift_event": f"{src}:{(fp or '').removeprefix('sha256:')[:16]}",
                    "factory/depends_on": ",".join(sources),
                    "dagster/priority": "0",
                },
            )
        )

    observations = []
    for d, r in readings.items():
        state = r.fingerprint if r.status != "down" else "down"
        if d in add or (cursor["seen"].get(d) == state and d not in drifted):
            continue  # record changes only; a new partition exists only after this tick
        tools = changed.get(d)  # None: all tools changed (when d in changed)
        meta = {
            **r.as_metadata(),
            "materialized_fingerprint": materialized.get(d) or "",
            "drift": d in drifted,
            "changed_tools": [] if d not in changed else (["(all)"] if tools is None else sorted(tools)),
            "dependents": [dep for dep, srcs in dependents.items() if d in srcs],
        }
        observations.append(dg.AssetObservation(asset_key=INVENTORY_KEY, partition=d, metadata=meta))
    for d, r in readings.items():
        if r.status == "down":
            cursor["down"][d] = r.reason
            cursor["seen"][d] = "down"
        else:
            cursor["down"].pop(d, None)
            cursor["seen"][d] = r.fingerprint

    skip = None
    if not run_requests:
        skip = f"no drift in {len(readings) - len(notes)} of {len(readings)} domains" + (
            "; " + "; ".join(notes) if notes else ""
        )
    return dg.SensorResult(
        run_requests=run_requests,
        skip_reason=skip,
        cursor=json.dumps(cursor, sort_keys=True),
        dynamic_partitions_requests=partition_requests or None,
        asset_events=observations or None,
    )


def make_endpoint_drift_sensor(
    config: ConfigSource = None, *, reader: Reader | None = None, interval_s: int | None = None
) -> dg.SensorDefinition:
    current = config_source(config)
    cfg0 = current()

    @dg.sensor(
        name="endpoint_drift_sensor",
        job_name=RESYNTHESIS_JOB,
        minimum_interval_seconds=interval_s or cfg0.drift.endpoint_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING if cfg0.drift.sensors_enabled else dg.DefaultSensorStatus.STOPPED,
        description="Fingerprints every domain's tool surface (no executions) and re-synthesizes drifted domains "
        "and the domains whose retained edges point into changed tools; keeps `domain` partitions in sync.",
    )
    def endpoint_drift_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        try:
            cfg = current()
        except ConfigError as e:
            return dg.SkipReason(f"config invalid, nothing checked: {e}")
        res = evaluate_endpoint_drift(context.instance, cfg, context.cursor, reader or _default_reader)
        for rr in res.run_requests or []:
            context.log.info(f"requesting {rr.partition_key}: {rr.run_key}")
        return res

    return endpoint_drift_sensor


# --------------------------------------------------------------------------- response drift


def evaluate_response_drift(
    instance: dg.DagsterInstance,
    cfg: ProjectConfig,
    cursor_raw: str | None,
    check: Callable[[DomainConfig, ProjectConfig, dict, dict], drift.ResponseDrift] = drift.check_response_drift,
) -> dg.SensorResult:
    cursor = load_cursor(cursor_raw)
    store = data_store(cfg)
    partitions = set(instance.get_dynamic_partitions(DOMAIN_PARTITIONS_NAME))
    run_requests, observations, notes = [], [], []
    for domain in cfg.domains:
        d = domain.name
        probes = drift.stored_value(store, drift.PROBES_ASSET, d)
        inventory = drift.stored_value(store, drift.INVENTORY_ASSET, d)
        if d not in partitions or not isinstance(probes, dict) or not isinstance(inventory, dict):
            notes.append(f"{d}: no cached calls yet")
            continue
        if probes.get("fingerprint") != inventory.get("fingerprint"):
            notes.append(f"{d}: probes predate the inventory (endpoint drift pending)")
            continue
        result = check(domain, cfg, probes, inventory)
        key = f"response-drift:{d}:{result.digest}"
        if result.stale and key not in cursor["requested"].get(d, []):
            observations.append(
                dg.AssetObservation(
                    asset_key=PROBES_KEY, partition=d, metadata={**result.as_metadata(), "run_key": key}
                )
            )
            run_requests.append(
                dg.RunRequest(
                    run_key=key,
                    job_name=RESYNTHESIS_JOB,
                    partition_key=d,
                    tags={"factory/trigger": "response-drift", "factory/stale": "true"},
                )
            )
            _remember(cursor, d, key)
        else:
            notes.append(f"{d}: {len(result.changed)}/{result.compared} re-executed calls changed")
    skip = None if run_requests else "; ".join(notes) or "no domains"
    return dg.SensorResult(
        run_requests=run_requests,
        skip_reason=skip,
        cursor=json.dumps(cursor, sort_keys=True),
        asset_events=observations or None,
    )


def make_response_drift_sensor(config: ConfigSource = None, *, interval_s: int | None = None) -> dg.SensorDefinition:
    current = config_source(config)
    cfg0 = current()

    @dg.sensor(
        name="response_drift_sensor",
        job_name=RESYNTHESIS_JOB,
        minimum_interval_seconds=interval_s or cfg0.drift.response_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING if cfg0.drift.sensors_enabled else dg.DefaultSensorStatus.STOPPED,
        description="Re-executes a sample of cached calls per domain; when more than `drift.response_change_share` "
        "changed, observes the domain's probes as stale and requests a re-synthesis.",
    )
    def response_drift_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        try:
            cfg = current()
        except ConfigError as e:
            return dg.SkipReason(f"config invalid, nothing checked: {e}")
        return evaluate_response_drift(context.instance, cfg, context.cursor)

    return response_drift_sensor
