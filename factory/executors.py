"""The Dagster executor of a project (`orchestration` in factory.yaml; README, Running on your infrastructure).

Dagster-facing (tests/test_layering.py): used by the code location (`factory.definitions`) and checked
against deploy/ by tests/infra without loading the code location.
"""

import dagster as dg

from factory.config import ConfigError, ProjectConfig

# What the multiprocess executor's fork server imports once, so that no step process imports it again: the
# code location, and the libraries steps import lazily that cost seconds each (measured on 2 cores: Great
# Expectations ~3 s CPU in every gate step, sentence-transformers with torch ~8 s in every step that embeds).
# Only modules whose import starts no thread: a forked child gets none of its parent's threads (lancedb starts
# its event loop thread on import, so it is left to the steps that write an index).
STEP_PRELOAD: tuple[str, ...] = ("factory.definitions", "great_expectations", "sentence_transformers")


def make_executor(cfg: ProjectConfig) -> dg.ExecutorDefinition:
    """The executor of `orchestration.executor`. in_process (default): steps of one run share a process
    (re-importing per step costs ~4x on small machines); domain partitions run as separate runs, concurrently
    under the run coordinator. multiprocess: a process per step, forked from a server that imported this
    code location (factory.definitions) and STEP_PRELOAD once. k8s_job: a Kubernetes Job per step (dagster-k8s, deploy/)."""
    orch = cfg.orchestration
    limit = {"max_concurrent": orch.max_concurrent} if orch.max_concurrent else {}
    if orch.executor == "multiprocess":
        preload = {"forkserver": {"preload_modules": list(STEP_PRELOAD)}}
        return dg.multiprocess_executor.configured({**limit, "start_method": preload}, name="multiprocess")
    if orch.executor == "k8s_job":
        try:
            from dagster_k8s import k8s_job_executor
        except ImportError as e:
            raise ConfigError(
                "orchestration.executor k8s_job needs dagster-k8s (pip install dagster-k8s==0.29.27, the release "
                "of this dagster; deploy/Dockerfile installs it)"
            ) from e
        return k8s_job_executor.configured({**orch.k8s, **limit}, name="k8s_job")
    return dg.in_process_executor
