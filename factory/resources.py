"""Dagster resources and the IO manager: the only Dagster-aware part of `factory/`.

- `ProjectResource` loads the validated project config.
- `DemoServiceResource` starts the bundled demo service for a run when a
  domain uses `demo://` sources, reuses a healthy one, and stops what it started.
- `FactoryIOManager` stores asset values atomically under `data_dir` through the storage
  face `factory.io` (`write_artifact` / `read_artifact`: DataFrames as Parquet, everything
  else as JSON; one file per asset partition).
- Gated publication: a value whose asset has blocking checks in the run is written to
  `<asset>/.staged/<run id>/<partition>.<ext>`; the checks read that staged value, and the last
  one to pass promotes it (`passed_gate`, called by `assets._meta.gate`). A failing gate leaves the
  published value as it was; downstream steps and later runs read only published values.
  A value that staged files beside it (`factory.io.staged_release`: dataset_splits, dataset_exports)
  has them published by `factory.io.publish_release` first, by the same last gate (or at once when
  the run executes none of its gates).
"""

import logging
from contextlib import contextmanager
from typing import Any

import dagster as dg
from dagster._core.errors import DagsterInvalidPropertyError
from pydantic import PrivateAttr

from factory.config import DomainConfig, ProjectConfig, load_config
from factory.io import (
    Store,
    artifact_exists,
    gates_passed,
    mark_gate_passed,
    promote_staged,
    publish_release,
    read_artifact,
    read_staged,
    remove_stale_staging,
    stage_artifact,
    staged_rel,
    staged_release,
    write_artifact,
)

log = logging.getLogger(__name__)


class ProjectResource(dg.ConfigurableResource):
    """The project configuration: the file at `config_path` (empty: found as `load_config` finds it)."""

    config_path: str = ""

    _cfg: ProjectConfig | None = PrivateAttr(default=None)

    def load(self) -> ProjectConfig:
        if self._cfg is None:
            self._cfg = load_config(self.config_path or None)
        return self._cfg


def uses_demo(domain: DomainConfig) -> bool:
    return any((s.spec or "").startswith("demo://") or (s.base_url or "").startswith("demo://") for s in domain.sources)


class DemoServiceResource(dg.ConfigurableResource):
    """Runs the bundled demo service while a step needs it.

    With `keep_alive` (the default for Dagster runs) a service this resource started stays up
    after the step, so concurrent runs of other domains never lose it mid-step; `factory run`
    stops what it started at the end of the whole pipeline.
    """

    log_dir: str = ""  # empty: the project's logs/ folder
    keep_alive: bool = True

    @contextmanager
    def serving(
        self,
        cfg: ProjectConfig,
        domain: DomainConfig | None = None,
        *,
        stop: bool | None = None,
        domains: list[DomainConfig] | None = None,
    ):
        """Ensure the demo service is up for the block when `domain` (else any of `domains`, else any
        configured domain) has a demo:// source; afterwards stop it if we started it and `stop`
        (default: not keep_alive). Without a demo:// source nothing is started."""
        scope = [domain] if domain is not None else (cfg.domains if domains is None else domains)
        if not cfg.demo.enabled or not any(uses_demo(d) for d in scope):
            yield None
            return
        from factory.demo.service import DemoService

        log_dir = self.log_dir or str(cfg.logs_dir)
        svc = DemoService(cfg.demo, log_dir=log_dir)
        svc.ensure_running()
        try:
            yield svc
        finally:
            if (not self.keep_alive) if stop is None else stop:
                svc.stop()
            else:
                svc.detach()


class FactoryIOManager(dg.ConfigurableIOManager):
    """Atomic JSON/Parquet files under `base_dir/<asset>/<partition>.<ext>` (layout: `factory.io`)."""

    base_dir: str

    def _store(self) -> Store:
        return Store(self.base_dir)

    @staticmethod
    def _asset(asset_key: dg.AssetKey) -> str:
        return "/".join(asset_key.path)

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if obj is None:
            return
        # the asset's own partition, not the run's: a global asset may run inside a domain's run
        partition = context.asset_partition_key if context.has_asset_partitions else None
        store, asset = self._store(), self._asset(context.asset_key)
        step = context.step_context
        remove_stale_staging(store, lambda rid: rid == context.run_id or run_is_live(step.instance, rid), [asset])
        if blocking_gates(step, context.asset_key):
            stage_artifact(store, asset, partition, context.run_id, obj)
            path = store.path(asset_file_rel(asset, partition, obj))  # where it goes once its gates pass
            context.add_output_metadata({"path": dg.MetadataValue.path(path), "staged": True})
            return
        obj = publish_release(store, obj)  # no gate in this run: its staged files are published now
        path = write_artifact(store, asset, partition, obj)
        context.add_output_metadata({"path": dg.MetadataValue.path(path)})

    def _load_one(self, asset_key: dg.AssetKey, partition: str | None) -> Any:
        return read_artifact(self._store(), self._asset(asset_key), partition)

    def _exists(self, asset_key: dg.AssetKey, partition: str | None) -> bool:
        return artifact_exists(self._store(), self._asset(asset_key), partition)

    def _load_for_check(self, context: dg.InputContext, partition: str | None) -> Any:
        """A check of this asset reads the value its run staged; everyone else the published one."""
        if _checks_asset(context.step_context, context.asset_key):
            staged = read_staged(
                self._store(), self._asset(context.asset_key), partition, context.step_context.run_id, default=None
            )
            if staged is not None:
                return staged
        return self._load_one(context.asset_key, partition)

    def load_input(self, context: dg.InputContext) -> Any:
        """One partition's value, or {partition: value} for inputs declared with ALL_PARTITIONS."""
        key = context.asset_key
        if not context.has_asset_partitions:
            return self._load_for_check(context, None)
        keys = list(context.asset_partition_keys)
        if (context.definition_metadata or {}).get(ALL_PARTITIONS_KEY):
            out = {}
            for pk in keys:
                if self._exists(key, pk):
                    out[pk] = self._load_one(key, pk)
                else:
                    context.log.warning(f"{key.to_user_string()} partition {pk!r} is not materialized; skipped")
            return out
        if len(keys) != 1:
            raise dg.DagsterInvariantViolationError(
                f"input {key.to_user_string()} spans {len(keys)} partitions; declare it with "
                f"metadata {{{ALL_PARTITIONS_KEY!r}: True}} to receive a dict of partitions"
            )
        return self._load_for_check(context, keys[0])


def asset_file_rel(asset: str, partition: str | None, obj: Any) -> str:
    import pandas as pd

    from factory.io import artifact_rel

    return artifact_rel(asset, partition) + (".parquet" if isinstance(obj, pd.DataFrame) else ".json")


def _step_entity_keys(step: Any, step_key: str) -> set:
    node = step.plan_data.execution_plan.get_step_by_key(step_key).node_handle
    return set(step.job_def.asset_layer.get_selected_entity_keys_for_node(node))


def _checks_asset(step: Any, asset_key: dg.AssetKey) -> bool:
    """Whether the step executing now is a check of `asset_key`."""
    keys = _step_entity_keys(step, step.step.key)
    return any(isinstance(k, dg.AssetCheckKey) and k.asset_key == asset_key for k in keys)


def blocking_gates(step: Any, asset_key: dg.AssetKey) -> set[str]:
    """Names of the blocking checks of `asset_key` that this run executes (they gate its publication)."""
    graph = step.job_def.asset_layer.asset_graph
    out = set()
    for step_key in step.plan_data.execution_plan.step_keys_to_execute:
        for k in _step_entity_keys(step, step_key):
            if isinstance(k, dg.AssetCheckKey) and k.asset_key == asset_key and graph.get_check_spec(k).blocking:
                out.add(k.name)
    return out


def passed_gate(context: dg.AssetCheckExecutionContext, check_key: dg.AssetCheckKey) -> str | None:
    """Record that a blocking check passed; the last of the run's gates of the asset publishes the
    staged value. Returns the published path when this call promoted it."""
    op_ctx = context.op_execution_context
    try:
        step = op_ctx.get_step_execution_context()
    except DagsterInvalidPropertyError:  # invoked directly (a test, a notebook): no run, nothing staged
        return None
    io = op_ctx.resources.io_manager
    if not isinstance(io, FactoryIOManager):
        return None
    asset_key = check_key.asset_key
    partitioned = step.job_def.asset_layer.asset_graph.get(asset_key).partitions_def is not None
    partition = op_ctx.partition_key if partitioned else None
    store, asset = io._store(), io._asset(asset_key)
    if read_staged(store, asset, partition, op_ctx.run_id, default=None) is None:
        return None  # nothing staged by this run (the check ran alone): nothing to publish
    mark_gate_passed(store, asset, partition, op_ctx.run_id, check_key.name)
    if not gates_passed(store, asset, partition, op_ctx.run_id, blocking_gates(step, asset_key)):
        return None
    if not _publish_staged_release(store, asset, partition, op_ctx.run_id):
        return None  # a concurrent check of the same run is publishing it
    path = promote_staged(store, asset, partition, op_ctx.run_id)
    if path:
        context.log.info(
            f"{asset_key.to_user_string()} {partition or ''}: every blocking check passed; published {path}"
        )
    return path


def _publish_staged_release(store: Store, asset: str, partition: str | None, run_id: str) -> bool:
    """Publish the files a staged value staged beside it (if any), then stage the value as published, so
    that promoting it is all that is left. The staged value is claimed by a rename first: of two checks
    passing at once, one publishes. False when another check took the claim; True otherwise (also when
    the value has no files beside it)."""
    rel = staged_rel(asset, partition, run_id) + ".json"
    if not store.exists(rel):
        return True  # a Parquet value, or already promoted: nothing to publish beside it
    value = read_staged(store, asset, partition, run_id, default=None)
    if staged_release(value) is None:
        return True
    claim = rel + ".publishing"
    try:
        store.move(rel, claim)
    except OSError:  # gone: another check claimed it
        return False
    try:
        value = publish_release(store, store.read_json(claim))
    except BaseException:
        store.move(claim, rel)  # unclaimed: the staged value and its files stay for a later look
        raise
    stage_artifact(store, asset, partition, run_id, value)
    store.delete(claim)
    return True


FINISHED_STATUSES = {"SUCCESS", "FAILURE", "CANCELED"}


def run_is_live(instance: Any, run_id: str) -> bool:
    """Whether a run may still write: known to the instance and not finished."""
    try:
        run = instance.get_run_by_id(run_id)
    except Exception:  # noqa: BLE001 - an unreadable instance: keep the folder
        return True
    return run is not None and run.status.value not in FINISHED_STATUSES


PID_TAG, HOST_TAG = "factory/pid", "factory/host"  # set by `factory run` on the runs it executes


def _process_alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _run_pid(instance: Any, run: Any) -> int | None:
    """The process executing a run: the `factory/pid` tag, else the pid of its RUN_START event."""
    if run.tags.get(PID_TAG, "").isdigit():
        return int(run.tags[PID_TAG])
    for rec in instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.RUN_START, limit=1).records:
        ev = rec.event_log_entry.dagster_event
        if ev is not None and ev.pid:
            return int(ev.pid)
    return None


def fail_orphan_runs(instance: Any) -> list[str]:
    """Mark FAILURE the runs of this machine still STARTING/STARTED whose process is gone (a run worker
    killed with -9 never reports its end); returns their ids. Runs of other hosts are left alone."""
    import socket

    host = socket.gethostname()
    orphans = []
    for run in instance.get_runs(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING])
    ):
        if run.tags.get(HOST_TAG, host) != host:
            continue
        pid = _run_pid(instance, run)
        if pid is None or _process_alive(pid):
            continue
        instance.report_run_failed(run, f"orphaned: its process {pid} is gone (killed?); marked failed on start")
        orphans.append(run.run_id)
    return orphans


def clean_on_start(instance: Any, cfg: ProjectConfig) -> dict[str, list[str]]:
    """Crash leftovers, before a run starts: orphan runs marked failed, then the staging folders of
    runs that are over (`<asset>/.staged/<run>/`) and stale export staging folders removed."""
    from factory.export.publish import EXPORTS_DIR, STAGING_PREFIX
    from factory.io import data_store

    orphans = fail_orphan_runs(instance)
    store = data_store(cfg)
    removed = remove_stale_staging(store, lambda rid: run_is_live(instance, rid))
    live = instance.get_runs(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING]), limit=1
    )
    if not live:  # no run can be exporting now: every export staging folder is a leftover
        for e in store.list_dir(EXPORTS_DIR):
            if e.is_dir and e.name.startswith(STAGING_PREFIX):
                store.remove_dir(f"{EXPORTS_DIR}/{e.name}")
                removed.append(f"{EXPORTS_DIR}/{e.name}")
    return {"orphan_runs": orphans, "removed": removed}


ALL_PARTITIONS_KEY = "all_partitions"


def all_partitions_in() -> dg.AssetIn:
    """An input that receives every materialized partition of a per-domain asset as a dict."""
    return dg.AssetIn(partition_mapping=dg.AllPartitionMapping(), metadata={ALL_PARTITIONS_KEY: True})
