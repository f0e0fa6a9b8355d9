"""Keep the `domain` dynamic partitions in sync with the config's domains."""

import os
from collections.abc import Callable

import dagster as dg

from assets.partitions import DOMAIN_PARTITIONS_NAME
from factory.config import ConfigError, ProjectConfig, load_config

ConfigSource = ProjectConfig | str | os.PathLike | None


def config_source(config: ConfigSource) -> Callable[[], ProjectConfig]:
    """What a sensor or schedule reads its config from at each tick: a loaded config as it is (the
    code location's, see `factory.definitions`), or a config file (None: found as `load_config`
    finds it) read afresh each tick, so that edits show without reloading the code location."""
    if isinstance(config, ProjectConfig):
        return lambda: config
    return lambda: load_config(config)


def partition_sync_requests(configured: list[str], existing: list[str]) -> tuple[list[str], list[str]]:
    """(to_add, to_delete) so that the partitions equal the configured domains."""
    add = [d for d in configured if d not in existing]
    delete = [d for d in existing if d not in configured]
    return add, delete


def sync_domain_partitions(instance: dg.DagsterInstance, configured: list[str]) -> tuple[list[str], list[str]]:
    existing = list(instance.get_dynamic_partitions(DOMAIN_PARTITIONS_NAME))
    add, delete = partition_sync_requests(configured, existing)
    if add:
        instance.add_dynamic_partitions(DOMAIN_PARTITIONS_NAME, add)
    for d in delete:
        instance.delete_dynamic_partition(DOMAIN_PARTITIONS_NAME, d)
    return add, delete


def make_domain_partitions_sensor(config: ConfigSource = None) -> dg.SensorDefinition:
    current = config_source(config)

    @dg.sensor(
        name="domain_partitions_sensor",
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Adds a `domain` partition for each domain in the config and removes dropped ones.",
    )
    def domain_partitions_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        try:
            cfg = current()
        except ConfigError as e:
            return dg.SkipReason(f"config invalid, partitions left as they are: {e}")
        existing = list(context.instance.get_dynamic_partitions(DOMAIN_PARTITIONS_NAME))
        add, delete = partition_sync_requests(cfg.domain_names, existing)
        if not add and not delete:
            return dg.SkipReason(f"partitions match the config ({len(existing)} domains)")
        reqs: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
        if add:
            reqs.append(dg.AddDynamicPartitionsRequest(DOMAIN_PARTITIONS_NAME, add))
        if delete:
            reqs.append(dg.DeleteDynamicPartitionsRequest(DOMAIN_PARTITIONS_NAME, delete))
        return dg.SensorResult(dynamic_partitions_requests=reqs)

    return domain_partitions_sensor
