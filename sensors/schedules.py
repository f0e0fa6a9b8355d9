"""Periodic re-synthesis: one `domain_resynthesis` run per domain on `drift.schedule_cron`."""

import dagster as dg

from assets.partitions import DOMAIN_PARTITIONS_NAME
from sensors.drift import RESYNTHESIS_JOB
from sensors.partitions import ConfigSource, config_source


def schedule_run_requests(domains: list[str], partitions: list[str], tick: str) -> list[dg.RunRequest]:
    """One request per configured domain that is a partition; the run key names the tick, not the clock."""
    return [
        dg.RunRequest(
            run_key=f"schedule:{d}:{tick}",
            job_name=RESYNTHESIS_JOB,
            partition_key=d,
            tags={"factory/trigger": "schedule"},
        )
        for d in domains
        if d in partitions
    ]


def make_resynthesis_schedule(config: ConfigSource = None) -> dg.ScheduleDefinition:
    current = config_source(config)
    cfg0 = current()

    @dg.schedule(
        name="periodic_resynthesis",
        cron_schedule=cfg0.drift.schedule_cron,
        job_name=RESYNTHESIS_JOB,
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.RUNNING
        if cfg0.drift.schedule_enabled
        else dg.DefaultScheduleStatus.STOPPED,
        description=f"Re-synthesizes every domain on `{cfg0.drift.schedule_cron}` (UTC), drift or not.",
    )
    def periodic_resynthesis(context: dg.ScheduleEvaluationContext):
        cfg = current()
        partitions = list(context.instance.get_dynamic_partitions(DOMAIN_PARTITIONS_NAME))
        tick = context.scheduled_execution_time.strftime("%Y%m%dT%H%MZ")
        reqs = schedule_run_requests(cfg.domain_names, partitions, tick)
        return reqs or dg.SkipReason("no configured domain is a partition yet (the drift sensor adds them)")

    return periodic_resynthesis
