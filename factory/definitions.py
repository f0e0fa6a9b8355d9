"""The Dagster code location: `dagster dev -m factory.definitions` / workspace.yaml."""

import logging
import os

import dagster as dg

from assets import datasets, evaluation, exports, graph, ingestion, judging, synthesis
from assets.partitions import DOMAIN_PARTITIONS_NAME
from factory.config import load_config, project_root
from factory.llm.resource import EmbeddingsResource, LLMResource
from factory.resources import DemoServiceResource, FactoryIOManager, ProjectResource
from sensors.drift import make_endpoint_drift_sensor, make_response_drift_sensor, make_resynthesis_job
from sensors.jobs import JOBS
from sensors.partitions import make_domain_partitions_sensor
from sensors.schedules import make_resynthesis_schedule

log = logging.getLogger(__name__)


def build_definitions(config_path: str | None = None) -> dg.Definitions:
    cfg = load_config(config_path)
    data_dir = cfg.data_dir if "://" in cfg.data_dir else str((project_root() / cfg.data_dir).resolve())
    all_assets = [
        *ingestion.ASSETS,
        *graph.ASSETS,
        *synthesis.ASSETS,
        *judging.ASSETS,
        *datasets.ASSETS,
        *exports.ASSETS,
        *evaluation.ASSETS,
    ]
    return dg.Definitions(
        assets=all_assets,
        asset_checks=[
            *ingestion.CHECKS,
            *graph.CHECKS,
            *synthesis.CHECKS,
            *judging.CHECKS,
            *datasets.CHECKS,
            *exports.CHECKS,
            *evaluation.CHECKS,
        ],
        jobs=[*JOBS, make_resynthesis_job(all_assets)],
        sensors=[
            make_domain_partitions_sensor(config_path),
            make_endpoint_drift_sensor(config_path),
            make_response_drift_sensor(config_path),
        ],
        schedules=[make_resynthesis_schedule(config_path)],
        resources={
            "io_manager": FactoryIOManager(base_dir=data_dir),
            "project": ProjectResource(config_path=config_path or ""),
            "demo": DemoServiceResource(),
            "llm": LLMResource(config_file=config_path),
            "embeddings": EmbeddingsResource(config_file=config_path),
        },
        # steps of one run share a process (re-importing per step costs ~4x on small machines);
        # domain partitions run as separate runs, concurrently under the run coordinator.
        executor=dg.in_process_executor,
    )


def register_configured_partitions(domains: list[str]) -> None:
    """Add the config's domains as `domain` partitions of the current instance, if there is one.

    Lets `dagster asset materialize --partition <domain> -m factory.definitions` work on a fresh
    DAGSTER_HOME without waiting for the sensor. Removal of dropped domains is left to the
    sensor and `factory sync-partitions`. Never fails the code location load.
    """
    home = os.environ.get("DAGSTER_HOME")
    if not home or not os.path.isdir(home):
        return
    try:
        with dg.DagsterInstance.get() as instance:
            existing = set(instance.get_dynamic_partitions(DOMAIN_PARTITIONS_NAME))
            missing = [d for d in domains if d not in existing]
            if missing:
                instance.add_dynamic_partitions(DOMAIN_PARTITIONS_NAME, missing)
    except Exception as e:  # an unreachable instance must not break loading the definitions
        log.warning("could not register domain partitions in %s: %s", home, e)


defs = build_definitions()
register_configured_partitions(load_config().domain_names)
