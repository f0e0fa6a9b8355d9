"""schema_variants (pure core): a domain's variant catalogs, their validation, and its tasks rendered under
every published variant.

    value, meta = schema_variants(domain, judged_queries, tool_inventory, cfg, make_executor, embed)

Every registered variant that applies to the domain's native catalog is built; the validator replays
every kept task's a* through each of them against the live tools (`factory.variants.validate`); a
variant that fails any task is listed with why and not published. Published variants carry their
tools (OpenAI definitions), a one-sentence instruction, and per task the golden variant trace (each
call with its filled-in arguments, and what the adapter answered to protocol steps), so exports can
carry the variant id and a user can train on a mixture and hold variants out.
"""

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from factory.config import ProjectConfig
from factory.report import Markdown, bar_plot, md_table
from factory.tools.spec import ToolSpec
from factory.variants.actions import NativeAction, native_actions, native_catalog
from factory.variants.adapter import ExecutorWorld, state_specs
from factory.variants.registry import build_variants
from factory.variants.validate import TaskCheck, Validation, avalidate


def inventory_specs(tool_inventory: Mapping[str, Any]) -> list[ToolSpec]:
    """Every ToolSpec of a tool_inventory value (one domain's, or {domain: value} of every domain)."""
    values = [tool_inventory] if "tools" in tool_inventory else list(tool_inventory.values())
    return [t if isinstance(t, ToolSpec) else ToolSpec.model_validate(t) for v in values for t in v["tools"]]


def domain_tasks(
    judged_queries: Mapping[str, Any], specs: Sequence[ToolSpec], max_tasks: int | None = None
) -> list[tuple[str, list[NativeAction]]]:
    by = {(s.platform, s.name): s for s in specs}
    rows = list(judged_queries.get("kept") or [])
    rows = rows[:max_tasks] if max_tasks else rows
    return [(str(t["id"]), native_actions(t, by)) for t in rows]


def _step_row(step: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"name": step.call.name, "arguments": step.call.arguments}
    if step.kind == "reply":
        row["reply"] = step.payload
    elif step.kind == "executed":
        row["native"] = step.native.as_dict() if step.native else None
    return row


def _rendered(check: TaskCheck) -> list[dict[str, Any]]:
    """The golden variant trace as it ran: each call with its filled-in arguments, protocol replies, and
    the native action each executed call decoded to."""
    return [_step_row(s) for s in (check.run.steps if check.run else [])]


def checks_frame(value: Mapping[str, Any]) -> pd.DataFrame:
    """One row per published variant × task check (the schema_variants gate's frame)."""
    published = {v["id"] for v in value["variants"] if v["published"]}
    # the count applies only where there are tasks to validate on (None: not checked)
    count = len(published) if value["tasks"] else None
    rows = [{**c, "published_count": count} for c in value["checks"] if c["variant"] in published]
    cols = ["variant", "task", "passed", "failure", "detail", "calls", "published_count"]
    if not rows:  # nothing published: one row so that the count is still checked
        rows = [
            {
                "variant": None,
                "task": None,
                "passed": True,
                "failure": None,
                "detail": "",
                "calls": 0,
                "published_count": count,
            }
        ]
    return pd.DataFrame(rows, columns=cols)


def disabled(domain: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The value when variants.enabled is off: nothing built, nothing published."""
    value = {
        "domain": domain,
        "native_fingerprint": "",
        "variants": [],
        "skipped": {},
        "native_failures": {},
        "checks": [],
        "tasks": [],
    }
    return value, {"variants_built": 0, "variants_published": 0, "disabled": True}


def schema_variants(
    domain: str,
    judged_queries: Mapping[str, Any],
    tool_inventory: Mapping[str, Any],
    cfg: ProjectConfig,
    make_executor: Callable[[], Any],
    embed: Callable[[list[str]], Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    vc = cfg.variants
    specs = [s for s in inventory_specs(tool_inventory) if s.domain == domain]
    native = native_catalog(domain, specs)
    tasks = domain_tasks(judged_queries, specs, vc.max_tasks)
    variants, skipped = build_variants(native, embed if vc.semantic_grouping else None, vc.only)
    by_name = {s.name: s for s in specs}
    states = state_specs(specs)

    async def go() -> tuple[Validation, ExecutorWorld]:
        async with make_executor() as ex:
            world = ExecutorWorld(ex, by_name, states, reuse=vc.reuse_read_results)
            return await avalidate(world, native, variants, tasks, vc.concurrency), world

    val, world = asyncio.run(go())
    passed = {v.id for v in variants if val.passed(v.id)}
    rendered: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for c in val.checks:
        if c.variant in passed:
            rendered.setdefault(c.task, {})[c.variant] = _rendered(c)
    if progress:
        progress(
            f"{domain}: {len(variants)} variants × {len(tasks)} tasks checked; {world.sent} calls sent, "
            f"{world.reused} read-only results reused"
        )
    by_variant = val.by_variant()
    vrows = []
    for v in variants:
        checks = by_variant.get(v.id, [])
        failed = [c for c in checks if not c.passed]
        published = bool(checks) and not failed
        vrows.append(
            {
                **v.describe(),
                "published": published,
                "tasks_checked": len(checks),
                "tasks_passed": len(checks) - len(failed),
                "mean_calls": round(sum(c.calls for c in checks) / len(checks), 2) if checks else 0.0,
                "failure": f"{failed[0].failure}: {failed[0].task[:19]}: {failed[0].detail}" if failed else None,
                "tool_definitions": v.schema.definitions() if published else [],
            }
        )
    actions = dict(tasks)
    value = {
        "domain": domain,
        "native_fingerprint": native.fingerprint(),
        "variants": vrows,
        "skipped": skipped,
        "native_failures": val.native_failures,
        "checks": [c.row() for c in val.checks],
        "tasks": [
            {
                "task_id": tid,
                "target_actions": [a.as_dict() for a in actions[tid]],
                "variants": dict(sorted(rendered.get(tid, {}).items())),
            }
            for tid, _ in tasks
        ],
    }
    n_published = sum(1 for r in vrows if r["published"])
    meta: dict[str, Any] = {
        "variants_built": len(variants),
        "variants_published": n_published,
        "variants_failed": len(variants) - n_published,
        "variants_skipped": len(skipped),
        "tasks": len(tasks),
        "trace_checks": len(val.checks),
        "checks_passed": sum(c.passed for c in val.checks),
        "native_failures": len(val.native_failures),
        "calls_sent": world.sent,
        "calls_reused": world.reused,
        "preview": md_table(
            [
                {
                    k: r[k]
                    for k in ("id", "operator", "tools", "mean_calls", "tasks_passed", "tasks_checked", "published")
                }
                for r in vrows
            ],
            limit=60,
        ),
    }
    if skipped:
        meta["skipped"] = Markdown("\n".join(f"- `{k}`: {why}" for k, why in skipped.items()))
    failed_rows = [r for r in vrows if not r["published"]]
    if failed_rows:
        meta["not_published"] = md_table([{"id": r["id"], "failure": r["failure"]} for r in failed_rows], limit=40)
    if vrows:
        meta["tools_per_variant"] = bar_plot(
            {r["id"]: r["tools"] for r in vrows}, title=f"{domain}: tools per schema variant", ylabel="tools"
        )
    return value, meta
