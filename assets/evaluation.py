"""evaluation_report (global, group "evaluation", on demand): a model on a split, n runs per task.

Materialize it with the `evaluation` job (not part of the main pipeline), choosing the model and
the split in the run config, e.g.::

    ops:
      evaluation_report:
        config: {backend: local, split: test, runs: 3, k: 3, max_tasks: 10}

Inputs: `dataset_splits` (every task with its split) and every domain's `tool_inventory` (the
ToolSpecs the agent's calls run through).
"""

import dagster as dg

from assets._meta import to_metadata
from factory.eval import report as reporting
from factory.eval.harness import EvalError, EvalSettings, evaluate, load_tasks, select_tasks
from factory.io import data_store
from factory.llm.resource import LLMResource
from factory.report import Markdown
from factory.resources import DemoServiceResource, ProjectResource, all_partitions_in
from factory.versions import code_version

GROUP = "evaluation"
SPLITS = dg.AssetKey("dataset_splits")


class EvaluationRunConfig(dg.Config):
    """Run config of evaluation_report; every unset field takes its value from `evaluation` in factory.yaml."""

    backend: str | None = None
    split: str | None = None
    runs: int | None = None
    k: int | None = None
    max_tasks: int | None = None
    max_turns: int | None = None
    time_limit_s: float | None = None
    temperature: float | None = None
    domains: list[str] | None = None
    hop_types: list[str] | None = None
    judge_fallback: bool | None = None
    cache: bool | None = None


@dg.asset(
    name="evaluation_report",
    group_name=GROUP,
    code_version=code_version(evaluate, reporting, resources=["prompts/agent_resolver"]),
    kinds={"python"},
    ins={"tasks": dg.AssetIn(key=SPLITS), "tool_inventory": all_partitions_in()},
    description="A model's pass@1, pass@k, pass^k, tool precision, format violations, turns and ACTION "
    "(correctness + Eq. 3 efficiency) with Student-t intervals over seeds, broken down by case pattern and "
    "domain, per-case rows and full traces (EDGE App. B, kotraj-bench card, VAKRA waterfall). On demand.",
)
def evaluation_report(
    context: dg.AssetExecutionContext,
    config: EvaluationRunConfig,
    project: ProjectResource,
    demo: DemoServiceResource,
    llm: LLMResource,
    tasks: dict,
    tool_inventory: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    model = llm.get()
    try:
        settings = EvalSettings.resolve(cfg, **config.model_dump())
        selected, selection = select_tasks(load_tasks(tasks), settings)
    except EvalError as e:
        raise dg.Failure(description=str(e)) from None
    context.log.info(
        f"evaluating backend {settings.backend} on {len(selected)} task(s) × {settings.runs} run(s) "
        f"(split {settings.split if selection['split_applied'] else 'all'})"
    )
    domains = sorted({t.domain for t in selected})
    with model.track() as acct, demo.serving(cfg):
        try:
            result = evaluate(
                selected,
                tool_inventory,
                cfg,
                model,
                settings,
                progress=context.log.info,
                selection={**selection, "source": "dataset_splits"},
            )
        except EvalError as e:
            raise dg.Failure(description=str(e)) from None
    reporting.write_files(
        result.report, result.traces, data_store(cfg), f"evaluations/{result.report['evaluation_id']}"
    )
    meta = reporting.metadata(result.report)
    meta["domains"] = ", ".join(domains)
    meta["model_requests"] = sum(s.requests for s in acct.by_role.values())
    meta["model_cache_hits"] = sum(s.cache_hits for s in acct.by_role.values())
    meta["report"] = Markdown(reporting.markdown(result.report))
    return dg.Output(result.report, metadata=to_metadata(meta))


ASSETS = [evaluation_report]
CHECKS: list = []
