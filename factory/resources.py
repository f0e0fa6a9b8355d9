"""Dagster resources and the IO manager: the only Dagster-aware part of `factory/`.

- `ProjectResource` loads the validated project config.
- `DemoServiceResource` starts the bundled demo service for a run when a
  domain uses `demo://` sources, reuses a healthy one, and stops what it started.
- `FactoryIOManager` stores asset values atomically under `data_dir` through the storage
  face `factory.io` (`write_artifact` / `read_artifact`: DataFrames as Parquet, everything
  else as JSON; one file per asset partition).
"""

import logging
from contextlib import contextmanager
from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from factory.config import DomainConfig, ProjectConfig, load_config
from factory.io import Store, artifact_exists, read_artifact, write_artifact

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
    def serving(self, cfg: ProjectConfig, domain: DomainConfig | None = None, *, stop: bool | None = None):
        """Ensure the demo service is up for the block; afterwards stop it if we started it and
        `stop` (default: not keep_alive)."""
        if not cfg.demo.enabled or (domain is not None and not uses_demo(domain)):
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
        path = write_artifact(self._store(), self._asset(context.asset_key), partition, obj)
        context.add_output_metadata({"path": dg.MetadataValue.path(path)})

    def _load_one(self, asset_key: dg.AssetKey, partition: str | None) -> Any:
        return read_artifact(self._store(), self._asset(asset_key), partition)

    def _exists(self, asset_key: dg.AssetKey, partition: str | None) -> bool:
        return artifact_exists(self._store(), self._asset(asset_key), partition)

    def load_input(self, context: dg.InputContext) -> Any:
        """One partition's value, or {partition: value} for inputs declared with ALL_PARTITIONS."""
        key = context.asset_key
        if not context.has_asset_partitions:
            return self._load_one(key, None)
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
        return self._load_one(key, keys[0])


ALL_PARTITIONS_KEY = "all_partitions"


def all_partitions_in() -> dg.AssetIn:
    """An input that receives every materialized partition of a per-domain asset as a dict."""
    return dg.AssetIn(partition_mapping=dg.AllPartitionMapping(), metadata={ALL_PARTITIONS_KEY: True})
