"""The Dagster code location: `dagster dev -m factory.definitions` / workspace.yaml.

Built from one loaded project config (found as $FACTORY_CONFIG, else `factory.yaml` in the
working directory or a parent). Loading it writes nothing: the `domain` partitions are kept
equal to the config by `domain_partitions_sensor` and by `factory run` / `factory sync-partitions`.
"""

import os
from functools import lru_cache
from pathlib import Path

import dagster as dg

from assets import (
    conversations,
    datasets,
    evaluation,
    exports,
    graph,
    ingestion,
    judging,
    lexicon,
    retrieval,
    synthesis,
    variants,
)
from factory.config import ConfigError, find_config, load_config
from factory.executors import make_executor
from factory.io import data_store
from factory.llm.resource import EmbeddingsResource, LLMResource
from factory.redaction import install_log_redaction
from factory.resources import DemoServiceResource, FactoryIOManager, ProjectResource
from factory.tools.registry import env_api_keys
from sensors.drift import make_endpoint_drift_sensor, make_response_drift_sensor, make_resynthesis_job
from sensors.jobs import JOBS
from sensors.partitions import make_domain_partitions_sensor
from sensors.schedules import make_resynthesis_schedule


def build_definitions(config_path: str | os.PathLike | None = None) -> dg.Definitions:
    """The code location of one project: the config file (None: found as `load_config` finds it)
    is loaded once; sensors and schedules get the loaded config, resources the file's path (they
    run in the run worker, which must read the same file wherever it starts)."""
    path = find_config(config_path)
    cfg = load_config(path)
    config_file = str(path)
    # every process that loads the code location (webserver, daemon, run and step workers) redacts keys in logs
    install_log_redaction(env_api_keys(cfg, cfg.domain_names).values(), cfg.exports.secret_patterns)
    all_assets = [
        *ingestion.ASSETS,
        *lexicon.ASSETS,
        *graph.ASSETS,
        *synthesis.ASSETS,
        *judging.ASSETS,
        *datasets.ASSETS,
        *conversations.ASSETS,
        *exports.ASSETS,
        *evaluation.ASSETS,
        *variants.ASSETS,
        *retrieval.ASSETS,
    ]
    return dg.Definitions(
        assets=all_assets,
        asset_checks=[
            *ingestion.CHECKS,
            *lexicon.CHECKS,
            *graph.CHECKS,
            *synthesis.CHECKS,
            *judging.CHECKS,
            *datasets.CHECKS,
            *conversations.CHECKS,
            *exports.CHECKS,
            *evaluation.CHECKS,
            *variants.CHECKS,
            *retrieval.CHECKS,
        ],
        jobs=[*JOBS, make_resynthesis_job(all_assets)],
        sensors=[
            make_domain_partitions_sensor(cfg),
            make_endpoint_drift_sensor(cfg),
            make_response_drift_sensor(cfg),
        ],
        schedules=[make_resynthesis_schedule(cfg)],
        resources={
            "io_manager": FactoryIOManager(base_dir=data_store(cfg).base),
            "project": ProjectResource(config_path=config_file),
            "demo": DemoServiceResource(),
            "llm": LLMResource(config_file=config_file),
            "embeddings": EmbeddingsResource(config_file=config_file),
        },
        executor=make_executor(cfg),
    )


defs = build_definitions()


@lru_cache(maxsize=4)
def _definitions_for(config_path: str) -> dg.Definitions:
    try:
        same = find_config(None).resolve() == Path(config_path).resolve()
    except ConfigError:
        same = False
    return defs if same else build_definitions(config_path)


def reconstruct_job(config_path: str, job_name: str) -> dg.JobDefinition:
    """A job of the project `config_path`, rebuilt in every process that executes its steps (Dagster's
    multiprocess executor, `factory run` with `orchestration.executor: multiprocess`)."""
    return _definitions_for(config_path).resolve_job_def(job_name)
