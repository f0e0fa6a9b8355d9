"""Dagster resources and the IO manager: the only Dagster-aware part of `factory/`.

- `ProjectResource` loads the validated project config.
- `DemoServiceResource` starts the bundled demo service for a run when a
  domain uses `demo://` sources, reuses a healthy one, and stops what it started.
- `FactoryIOManager` stores asset values atomically under `data_dir`:
  DataFrames as Parquet, everything else as JSON; one file per asset partition.
"""

import logging
from contextlib import contextmanager
from typing import Any

import dagster as dg
import pandas as pd
from pydantic import PrivateAttr

from factory.config import DomainConfig, ProjectConfig, load_config, project_root
from factory.io import Store

log = logging.getLogger(__name__)


class ProjectResource(dg.ConfigurableResource):
    """The project configuration (factory.yaml, or $FACTORY_CONFIG)."""

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

    log_dir: str = ""
    keep_alive: bool = True

    @contextmanager
    def serving(self, cfg: ProjectConfig, domain: DomainConfig | None = None, *, stop: bool | None = None):
        """Ensure the demo service is up for the block; afterwards stop it if we started it and
        `stop` (default: not keep_alive)."""
        if not cfg.demo.enabled or (domain is not None and not uses_demo(domain)):
            yield None
            return
        from factory.demo.service import DemoService

        log_dir = self.log_dir or str(project_root() / "logs")
        svc = DemoService(cfg.demo, log_dir=log_dir)
        svc.ensure_running()
        try:
            yield svc
        finally:
            if (not self.keep_alive) if stop is None else stop:
                svc.stop()
            else:
                svc.detach()


def _partition_name(key: str) -> str:
    return key.replace("/", "_")


class FactoryIOManager(dg.ConfigurableIOManager):
    """Atomic JSON/Parquet files under `base_dir/<asset>/<partition>.<ext>`."""

    base_dir: str

    def _store(self) -> Store:
        return Store(self.base_dir)

    def _rel(self, asset_key: dg.AssetKey, partition: str | None) -> str:
        return "/".join(asset_key.path) + "/" + (_partition_name(partition) if partition else "__all__")

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if obj is None:
            return
        # the asset's own partition, not the run's: a global asset may run inside a domain's run
        partition = context.asset_partition_key if context.has_asset_partitions else None
        rel = self._rel(context.asset_key, partition)
        store = self._store()
        if isinstance(obj, pd.DataFrame):
            path = store.write_parquet(rel + ".parquet", obj)
            store.delete(rel + ".json")
        else:
            path = store.write_json(rel + ".json", obj)
            store.delete(rel + ".parquet")
        context.add_output_metadata({"path": dg.MetadataValue.path(path)})

    def _load_one(self, asset_key: dg.AssetKey, partition: str | None) -> Any:
        store = self._store()
        rel = self._rel(asset_key, partition)
        if store.exists(rel + ".parquet"):
            return store.read_parquet(rel + ".parquet")
        return store.read_json(rel + ".json")

    def _exists(self, asset_key: dg.AssetKey, partition: str | None) -> bool:
        store = self._store()
        rel = self._rel(asset_key, partition)
        return store.exists(rel + ".parquet") or store.exists(rel + ".json")

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
