"""Asset jobs, and the order in which the main job runs them.

The graph alternates between per-domain and global work: every domain is
ingested, then the global catalog (cross-domain embeddings) is built, then
each domain's synthesis stages run, then the global dataset stages.
"""

from collections.abc import Callable, Collection
from typing import Any

import dagster as dg

from assets.partitions import domain_partitions

GLOBAL_CATALOG_ASSETS = ["tool_catalog"]
INGESTION_GROUP = "ingestion"
# per-domain groups that run after the catalog
SYNTHESIS_GROUPS = ["lexicon", "graph", "synthesis", "judging", "variants"]

domain_ingestion_job = dg.define_asset_job(
    name="domain_ingestion",
    selection=dg.AssetSelection.groups(INGESTION_GROUP) - dg.AssetSelection.assets(*GLOBAL_CATALOG_ASSETS),
    partitions_def=domain_partitions,
    description="Per-domain ingestion: tool_inventory and tool_probes.",
)

global_catalog_job = dg.define_asset_job(
    name="global_catalog",
    selection=dg.AssetSelection.assets(*GLOBAL_CATALOG_ASSETS),
    description="Global assets built from every domain's inventory (tool_catalog).",
)

domain_synthesis_job = dg.define_asset_job(
    name="domain_synthesis",
    selection=dg.AssetSelection.groups(*SYNTHESIS_GROUPS),
    partitions_def=domain_partitions,
    description="Per-domain synthesis stages that need the global catalog or every domain's inventory "
    "(lexicon, graph, ...).",
)

DATASET_GROUP = "dataset"  # global: dataset_splits
RELEASE_GROUP = "release"  # global, after domain_retrieval: conversations, dataset_exports
EVALUATION_GROUP = "evaluation"  # global, on demand: evaluation_report

global_dataset_job = dg.define_asset_job(
    name="global_dataset",
    selection=dg.AssetSelection.groups(DATASET_GROUP),
    description="Global dataset assets built from every domain's judged tasks (dataset_splits).",
)

global_release_job = dg.define_asset_job(
    name="global_release",
    selection=dg.AssetSelection.groups(RELEASE_GROUP),
    description="What agents are served from the published splits (conversations, dataset_exports): after every "
    "domain's decontaminated retrieval_index, whose version their search tools serve (issue 17).",
)

evaluation_job = dg.define_asset_job(
    name="evaluation",
    selection=dg.AssetSelection.groups(EVALUATION_GROUP),
    description="On demand: evaluate a model on a split (evaluation_report); not part of the main job.",
)

CORPUS_GROUP = "retrieval_corpus"  # per-domain: retrieval_corpus, retrieval_synthesis_index (before ingestion)
RETRIEVAL_GROUP = "retrieval"  # per-domain: retrieval_index (decontaminated against the published splits)

domain_corpus_job = dg.define_asset_job(
    name="domain_corpus",
    selection=dg.AssetSelection.groups(CORPUS_GROUP),
    partitions_def=domain_partitions,
    description="Per-domain document corpora (retrieval_corpus) and the pre-synthesis index version synthesis "
    "searches (retrieval_synthesis_index); first, since the search tool is a source of the domain's inventory.",
)

domain_retrieval_job = dg.define_asset_job(
    name="domain_retrieval",
    selection=dg.AssetSelection.groups(RETRIEVAL_GROUP),
    partitions_def=domain_partitions,
    description="Per-domain retrieval indices, decontaminated against the dataset splits (retrieval_index).",
)

JOBS = [
    domain_ingestion_job,
    global_catalog_job,
    domain_synthesis_job,
    global_dataset_job,
    domain_corpus_job,
    domain_retrieval_job,
    global_release_job,
    evaluation_job,
]

# (job name, per-domain?) in the order the main job (`factory run`) executes them
PIPELINE_STAGES: list[tuple[str, bool]] = [
    ("domain_corpus", True),  # first: the synthesis index is a tool source of domain_ingestion (issue 17)
    ("domain_ingestion", True),
    ("global_catalog", False),
    ("domain_synthesis", True),
    ("global_dataset", False),
    ("domain_retrieval", True),
    ("global_release", False),  # conversations and exports serve the decontaminated retrieval indices
]


def _process_tags() -> dict[str, str]:
    import os
    import socket

    from factory.resources import HOST_TAG, PID_TAG

    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


Runner = Callable[..., Any]


def in_process_runner(
    defs: dg.Definitions,
    job_name: str,
    *,
    instance: dg.DagsterInstance,
    partition_key: str | None,
    run_config: dict | None,
    asset_selection: list[dg.AssetKey] | None,
    tags: dict[str, str],
) -> Any:
    """One run of `job_name` in this process (the in-process executor; `factory run`'s default)."""
    return defs.resolve_job_def(job_name).execute_in_process(
        partition_key=partition_key,
        instance=instance,
        raise_on_error=False,
        run_config=run_config,
        asset_selection=asset_selection,
        tags=tags,
    )


class StoredRun:
    """The result of a run executed in another process, read back from the instance (run/event storage):
    what `factory run` reads of an `ExecuteInProcessResult`."""

    def __init__(self, instance: dg.DagsterInstance, run_id: str, error: str = ""):
        run = instance.get_run_by_id(run_id) if run_id else None
        self.run_id = run_id or "--------"
        self.error = error
        self.success = run is not None and run.status == dg.DagsterRunStatus.SUCCESS and not error
        self._events = [e.dagster_event for e in instance.all_logs(run_id)] if run_id else []

    def _of(self, kind: dg.DagsterEventType) -> list[Any]:
        return [e for e in self._events if e is not None and e.event_type == kind]

    def get_asset_materialization_events(self) -> list[Any]:
        return self._of(dg.DagsterEventType.ASSET_MATERIALIZATION)

    def get_asset_check_evaluations(self) -> list[Any]:
        return [e.event_specific_data for e in self._of(dg.DagsterEventType.ASSET_CHECK_EVALUATION)]


_FOLLOWING: list[int] = []  # the parent a worker already watches (a worker runs many stages)


def follow_parent(poll_s: float = 1.0, grace_s: float = 30.0) -> None:
    """End this worker when the `factory run` that started it is gone (killed): interrupt the run (Dagster
    stops its step processes; the next `factory run` marks the run failed as an orphan), then exit after
    `grace_s` whatever happens. A killed parent would otherwise leave the worker running its stage. Once per
    process: later calls return at once."""
    import os
    import signal
    import threading
    import time

    parent = os.getppid()
    if parent in _FOLLOWING:
        return
    _FOLLOWING.append(parent)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(grace_s)
        os._exit(1)

    threading.Thread(target=watch, name="follow-parent", daemon=True).start()


def warm_worker(config_path: str) -> None:
    """A run worker's start, before its first stage: watch the parent, start the executor's fork server (it
    imports the code location and the step libraries, `factory.executors.STEP_PRELOAD`, while this process
    imports the code location too), so neither import is paid again by any later stage. A failure here is left
    to the first run, which meets it again and reports it as that run's error."""
    follow_parent()
    try:
        import multiprocessing

        from factory.config import load_config
        from factory.executors import STEP_PRELOAD

        if load_config(config_path).orchestration.executor == "multiprocess":
            ctx = multiprocessing.get_context("forkserver")
            # the list Dagster's multiprocess executor sets (it puts its own module first); the server starts once
            ctx.set_forkserver_preload(["dagster._core.executor.multiprocess", *STEP_PRELOAD])
            from multiprocessing import forkserver

            forkserver.ensure_running()
        import factory.definitions  # noqa: F401
    except Exception:  # noqa: BLE001, S110  (the first run reports it)
        pass


def execute_run(
    config_path: str,
    job_name: str,
    partition_key: str | None,
    run_config: dict | None,
    assets: list[str] | None,
    tags: dict[str, str],
) -> str:
    """One run through `dg.execute_job` with the job's own executor, in this process (a spawned worker of
    `ReconstructableRunner`) against the instance of $DAGSTER_HOME; returns the run id."""
    follow_parent()
    recon = dg.build_reconstructable_job(  # its annotation says a 1-tuple; it takes the function's arguments
        "factory.definitions",
        "reconstruct_job",
        (config_path, job_name),  # type: ignore[arg-type]
    )
    run_tags = {**tags, **({"dagster/partition": partition_key} if partition_key else {})}
    with dg.DagsterInstance.get() as instance:
        res = dg.execute_job(
            recon,
            instance,
            run_config=run_config,
            tags=run_tags,
            asset_selection=[dg.AssetKey(a) for a in assets] if assets is not None else None,
            raise_on_error=False,
        )
        return res.run_id


class ReconstructableRunner:
    """Runs with the job's own executor (`orchestration.executor`: multiprocess or k8s_job): each run is
    orchestrated by a spawned worker process (runs of several domains proceed side by side without sharing an
    interpreter), and its steps run where the executor puts them (processes forked from a server that imported
    the code location and the step libraries, or Kubernetes Jobs). The run is recorded in the instance of
    $DAGSTER_HOME (e.g. PostgreSQL) and read back from there.

    The `workers` processes live as long as the runner (a context manager; `factory run`: the whole pipeline)
    and each runs stage after stage: the code location and the fork server's libraries are imported once per
    worker, not once per run (on 2 loaded cores each import is minutes of wall time). They start when the
    runner is entered, while the caller starts the demo service."""

    def __init__(self, config_path: str, workers: int = 1):
        import threading

        self.config_path, self.workers = config_path, max(1, workers)
        self._pool: Any = None
        self._lock = threading.Lock()

    def _executor(self) -> Any:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=warm_worker,
                    initargs=(self.config_path,),
                )
            return self._pool

    def __enter__(self) -> "ReconstructableRunner":
        pool = self._executor()
        for _ in range(self.workers):  # spawn every worker now (a pool starts them as work arrives)
            pool.submit(int)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def __call__(
        self,
        defs: dg.Definitions,
        job_name: str,
        *,
        instance: dg.DagsterInstance,
        partition_key: str | None,
        run_config: dict | None,
        asset_selection: list[dg.AssetKey] | None,
        tags: dict[str, str],
    ) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        assets = [k.to_user_string() for k in asset_selection] if asset_selection is not None else None
        pool = self._executor()
        try:
            fut = pool.submit(execute_run, self.config_path, job_name, partition_key, run_config, assets, tags)
            return StoredRun(instance, fut.result())
        except Exception as e:  # the worker died or could not start the run: a failed stage, named
            if isinstance(e, BrokenProcessPool):  # a dead worker breaks its pool: the next run gets a new one
                with self._lock:
                    if self._pool is pool:
                        self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            return StoredRun(instance, "", error=f"{type(e).__name__}: {e}")


def reconstructable_runner(config_path: str, workers: int = 1) -> ReconstructableRunner:
    """The runner of the multiprocess and k8s_job executors (`ReconstructableRunner`): use it as a context
    manager around `run_pipeline` with `workers` = `parallel_domains`."""
    return ReconstructableRunner(config_path, workers)


def run_pipeline(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    domains: list[str],
    *,
    run_config: dict | None = None,
    keep_going: bool = False,
    progress=print,
    only: Collection[str] | None = None,
    runner: Runner = in_process_runner,
    parallel_domains: int = 1,
) -> dict[tuple[str, str], Any]:
    """Run PIPELINE_STAGES in order; a domain whose stage fails is not run further.

    Returns {(job name, domain or "(global)"): result}. Global stages are skipped after a
    failure unless `keep_going`. `only`: run just these assets of each job (a stage left with
    none is skipped), e.g. everything up to the graph. `runner`: how one run executes (in process by
    default; `reconstructable_runner` for the multiprocess / k8s_job executors); `parallel_domains`:
    domains run side by side (threads waiting on the runner, whose runs execute in other processes; 1 with the
    in-process runner); each such domain then goes through the per-domain stages between two global ones on its
    own, without waiting for the other domains at each stage.
    """
    import time
    from concurrent.futures import ThreadPoolExecutor

    from factory.tools.transports.mcp_pool import mcp_pool

    results: dict[tuple[str, str], Any] = {}
    failed: set[str] = set()

    def one(job_name: str, d: str, per_domain: bool, assets: list[str]) -> Any:
        t = time.monotonic()
        progress(f"[{d}] {job_name}: {', '.join(assets)} ...")
        res = runner(
            defs,
            job_name,
            instance=instance,
            partition_key=d if per_domain else None,
            run_config=run_config,
            asset_selection=[dg.AssetKey(a) for a in assets] if only is not None else None,
            tags=_process_tags(),  # lets a later start tell an orphan (killed) run from a live one
        )
        fails = [
            f"{e.asset_check_key.asset_key.to_user_string()}:{e.asset_check_key.name}"
            + (f" ({e.description})" if e.description else "")  # the gate's headline names the rows
            for e in res.get_asset_check_evaluations()
            if not e.passed
        ]
        ok = res.success and not fails
        note = f"; failed checks: {', '.join(fails)}" if fails else ""
        if getattr(res, "error", ""):
            note += f"; {res.error}"
        progress(
            f"[{d}] {job_name}: {'ok' if ok else 'FAILED'} in {time.monotonic() - t:.1f}s (run {res.run_id[:8]}){note}"
        )
        if not ok:
            failed.add(d)
        return res

    stages: list[tuple[str, bool, list[str]]] = []
    for job_name, per_domain in PIPELINE_STAGES:
        job = defs.resolve_job_def(job_name)
        assets = sorted(k.to_user_string() for k in job.asset_layer.executable_asset_keys)
        if only is not None:
            assets = [a for a in assets if a in only]
        if assets:
            stages.append((job_name, per_domain, assets))

    def chain(segment: list[tuple[str, bool, list[str]]], d: str) -> dict[str, Any]:
        """One domain's consecutive per-domain stages, in order, until one fails."""
        out: dict[str, Any] = {}
        for job_name, _, assets in segment:
            if d in failed:
                progress(f"[{d}] {job_name}: skipped (an earlier stage failed)")
                continue
            out[job_name] = one(job_name, d, True, assets)
        return out

    with mcp_pool().hold():  # one start per MCP server for the whole run: no idle stop between stages
        i = 0
        while i < len(stages):
            job_name, per_domain, assets = stages[i]
            if not per_domain:
                i += 1
                if failed and not keep_going:
                    progress(f"[(global)] {job_name}: skipped (an earlier stage failed)")
                    continue
                results[(job_name, "(global)")] = one(job_name, "(global)", False, assets)
                continue
            # per-domain stages up to the next global one: with parallel domains each domain goes through them on
            # its own (no domain waits at a stage boundary for the slowest one: nothing global lies between them)
            j = i
            while j < len(stages) and stages[j][1]:
                j += 1
            segment = stages[i:j] if parallel_domains > 1 else stages[i : i + 1]
            i += len(segment)
            todo = []
            for d in domains:
                if d in failed:
                    for name, _, _ in segment:
                        progress(f"[{d}] {name}: skipped (an earlier stage failed)")
                    continue
                todo.append(d)
            if parallel_domains > 1 and len(todo) > 1:
                with ThreadPoolExecutor(max_workers=parallel_domains, thread_name_prefix="run-domain") as pool:
                    futures = {d: pool.submit(chain, segment, d) for d in todo}
                    done = {d: futures[d].result() for d in todo}
            else:
                done = {d: chain(segment, d) for d in todo}
            for name, _, _ in segment:  # stage by stage, domains in the order given
                for d in todo:
                    if name in done[d]:
                        results[(name, d)] = done[d][name]
    return results
