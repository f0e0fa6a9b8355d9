"""The Dagster code location: `dagster dev -m factory.definitions` / workspace.yaml."""

import dagster as dg

from assets import ingestion
from factory.config import load_config, project_root
from factory.llm.resource import EmbeddingsResource, LLMResource
from factory.resources import DemoServiceResource, FactoryIOManager, ProjectResource
from sensors.jobs import JOBS
from sensors.partitions import make_domain_partitions_sensor


def build_definitions(config_path: str | None = None) -> dg.Definitions:
    cfg = load_config(config_path)
    data_dir = cfg.data_dir if "://" in cfg.data_dir else str((project_root() / cfg.data_dir).resolve())
    return dg.Definitions(
        assets=[*ingestion.ASSETS],
        asset_checks=[*ingestion.CHECKS],
        jobs=JOBS,
        sensors=[make_domain_partitions_sensor(config_path)],
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


defs = build_definitions()
