"""The evaluation report: JSON value, markdown, Dagster-ready metadata, console tables, files (pure).

Report shape (the `evaluation_report` asset value)::

    {"evaluation_id", "model": {backend, kind, model, tool_calls, url}, "settings": {...},
     "selection": {input_tasks, split_counts, split_applied, selected}, "prompts": {template: sha256},
     "k": k, "tasks": n, "episodes": n,
     "overall": {pass@1, pass@k, pass^k, pass_any, response_acc, env_acc, action_solved, action_all,
                 correctness, efficiency, tool_precision, format_violations, format_violation_rate,
                 mean_turns, mean_calls, failures{kind: n}, stop_reasons{reason: n},
                 waterfall{stage: share}, ci{metric: {mean, half_width, low, high, n, df}}},
     "by_category": [...], "by_pattern": [...], "by_domain": [...],    # same metrics per group
     "waterfall": {"stages": [...], "survival": {stage: share}, "first_failure": {stage: n}},
     "cases": [one row per task], "episode_rows": [one row per task × run],
     "files": {"report_json", "report_md", "traces"}}

Never a single aggregate alone: the markdown and the console output always show the case
pattern and domain tables next to the overall line (kotraj card: "Read no_call separately").
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from factory.eval.metrics import aggregate, case_rows, group_tables
from factory.eval.scoring import WATERFALL_STAGES
from factory.llm.agent import FAILURE_KINDS
from factory.report import Markdown, md_table, plot
from factory.retrieval.evaluate import summarize as stages_summary

if TYPE_CHECKING:
    from factory.io import Store


def build_report(
    rows: Sequence[Mapping[str, Any]],
    *,
    settings: Mapping[str, Any],
    model: Mapping[str, Any],
    selection: Mapping[str, Any],
    prompts: Mapping[str, str],
    evaluation_id: str,
    platforms: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    k = int(settings["k"])
    overall = aggregate(rows, k)
    first: dict[str, int] = {s: 0 for s in WATERFALL_STAGES}
    for r in rows:
        f = r["waterfall"].get("first_failure")
        if f:
            first[f] += 1
    return {
        "evaluation_id": evaluation_id,
        "model": dict(model),
        "settings": dict(settings),
        "selection": dict(selection),
        "prompts": dict(prompts),
        "platforms_checked": dict(platforms or {}),
        "k": k,
        "tasks": overall["tasks"],
        "episodes": overall["episodes"],
        "overall": overall,
        **group_tables(rows, k),
        "waterfall": {
            "stages": list(WATERFALL_STAGES),
            "survival": overall["waterfall"],
            "first_failure": first,
        },
        "cases": case_rows(rows, k),
        "stages": stages_summary([r["vakra"] for r in rows if r.get("vakra")]),
        "episode_rows": [dict(r) for r in rows],
        "files": {},
    }


def _f(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _ci(ci: Mapping[str, Any] | None) -> str:
    if not ci or ci.get("mean") is None:
        return "-"
    if ci.get("half_width") is None:
        return f"{ci['mean']:.3f} (1 run: no interval)"
    return f"{ci['mean']:.3f} ± {ci['half_width']:.3f} [{ci['low']:.3f}, {ci['high']:.3f}] (t, df={ci['df']})"


def metric_columns(k: int) -> list[str]:
    return [
        "tasks",
        "episodes",
        "pass@1",
        *([f"pass@{k}"] if k > 1 else []),
        f"pass^{k}",
        "pass_any",
        "response_acc",
        "action_solved",
        "action_all",
        "tool_precision",
        "format_violations",
        "mean_turns",
        "hard_failures",
    ]


def group_table(report: Mapping[str, Any], by: str, limit: int = 50) -> Markdown:
    """A markdown table of one breakdown (by_category, by_pattern or by_domain)."""
    k = report["k"]
    key = by.removeprefix("by_")
    rows = [{key: g[key], **{c: _f(g.get(c)) for c in metric_columns(k)}} for g in report[by]]
    return md_table(rows, [key, *metric_columns(k)], limit=limit)


def overall_table(report: Mapping[str, Any]) -> Markdown:
    o, k = report["overall"], report["k"]
    rows = [{"metric": c, "value": _f(o.get(c))} for c in metric_columns(k)]
    rows += [
        {"metric": "correctness", "value": _f(o.get("correctness"))},
        {"metric": "efficiency (Eq. 3)", "value": _f(o.get("efficiency"))},
        {"metric": "env_acc", "value": _f(o.get("env_acc"))},
        {"metric": "format_violation_rate", "value": _f(o.get("format_violation_rate"))},
        {"metric": "pass@1, 95% t-interval over runs", "value": _ci(o["ci"]["pass@1"])},
        {"metric": "ACTION (all), 95% t-interval", "value": _ci(o["ci"]["action_all"])},
    ]
    return md_table(rows, ["metric", "value"], limit=len(rows))


def failure_table(report: Mapping[str, Any]) -> Markdown:
    o = report["overall"]
    rows = [{"failure kind": k, "count": o["failures"].get(k, 0)} for k in FAILURE_KINDS]
    rows += [{"failure kind": f"(stop) {s}", "count": n} for s, n in o["stop_reasons"].items() if n]
    return md_table(rows, ["failure kind", "count"], limit=len(rows))


def waterfall_table(report: Mapping[str, Any]) -> Markdown:
    w = report["waterfall"]
    rows = [
        {"stage": s, "surviving": _f(w["survival"].get(s)), "first failure here": w["first_failure"].get(s, 0)}
        for s in w["stages"]
    ]
    return md_table(rows, ["stage", "surviving", "first failure here"], limit=len(rows))


def stages_markdown(report: Mapping[str, Any]) -> list[str]:
    """The VAKRA stage tables: overall (with the multi-source weighted score), by hop type, by policy category."""
    st = report.get("stages") or {}
    if not st.get("episodes"):
        return ["(not scored: evaluation.stages is off)"]
    cols = ["episodes", "tool_responses_pass", "final_response_pass", "policy_pass", "policy_adherence", "passed"]
    return [
        f"- passed {_f(st['passed'])}; weighted score {_f(st['weighted_score'])} (multi-source hop types count "
        f"double); first failure: {', '.join(f'{k} {v}' for k, v in st['first_failure'].items())}; policy "
        f"violations {st['policy_violations']}; inconclusive stage-1 containment {st['inconclusive_stage1']}",
        "",
        str(md_table(st["by_hop_type"], ["hop_type", *cols], limit=20)),
        "",
        str(md_table(st["by_policy"], ["policy_category", *cols], limit=10)),
    ]


def case_table(report: Mapping[str, Any], limit: int = 30) -> Markdown:
    k = report["k"]
    cols = ["domain", "pattern", "task_id", "runs", "successes", f"pass@{k}", f"pass^{k}", "action", "stop_reasons"]
    rows = [{**c, "task_id": c["task_id"][7:19], **{x: _f(c.get(x)) for x in (f"pass@{k}", f"pass^{k}", "action")}}
            for c in report["cases"]]  # fmt: skip
    return md_table(rows, cols, limit=limit)


def markdown(report: Mapping[str, Any]) -> str:
    m, s = report["model"], report["settings"]
    split = s.get("split") if report["selection"].get("split_applied") else "(all tasks: no split labels)"
    head = [
        f"# Evaluation {report['evaluation_id']}: {m['model']} ({m['backend']}, {m['kind']})",
        "",
        f"- split: {split}; tasks: {report['tasks']}; runs per task: {s['runs']} (seeds {s['seed']}…"
        f"{s['seed'] + s['runs'] - 1}); k = {report['k']}; temperature {s['temperature']}"
        + (f"; hop types {', '.join(s['hop_types'])}" if s.get("hop_types") else ""),
        f"- tool calls: {'OpenAI tool_calls' if m['tool_calls'] else 'described in the system prompt, parsed from text'}; "
        f"caps: {s['max_turns']} turns, task budget of calls, {s['time_limit_s']:.0f} s per episode",
        "- pass@1 counts an episode as solved when every outcome check of its reward basis passes "
        "(RESPONSE, ENVIRONMENT) and it was not cut off (truncation, loop, repeated format failures, "
        "model error). ACTION = (correctness + efficiency) / 2, efficiency per EDGE Eq. 3; "
        "'action_solved' averages it over solved episodes (App. B.4).",
        "",
        "## By case pattern (category)",
        str(group_table(report, "by_category")),
        "",
        "## By domain",
        str(group_table(report, "by_domain")),
        "",
        "## By pattern (junction types)",
        str(group_table(report, "by_pattern")),
        "",
        "## Overall (read with the breakdowns above)",
        str(overall_table(report)),
        "",
        "## Waterfall (VAKRA §4): tool names → argument names → argument values → verified outcome",
        str(waterfall_table(report)),
        "",
        "## VAKRA stages (§4): tool responses → final response → policy adherence",
        *stages_markdown(report),
        "",
        "## Failure kinds",
        str(failure_table(report)),
        "",
        "## Cases",
        str(case_table(report, limit=200)),
    ]
    return "\n".join(head) + "\n"


def pass_plot(report: Mapping[str, Any]) -> Markdown:
    """pass@1 per case category and per domain (with t-interval half-widths where runs ≥ 2)."""
    groups = [("cat", g["category"], g) for g in report["by_category"]] + [
        ("dom", g["domain"], g) for g in report["by_domain"]
    ]

    def draw(ax: Any) -> None:
        xs = list(range(len(groups)))
        vals = [g["pass@1"] or 0.0 for _, _, g in groups]
        errs = [(g["ci"]["pass@1"].get("half_width") or 0.0) for _, _, g in groups]
        colors = ["#4477aa" if kind == "cat" else "#ee6677" for kind, _, _ in groups]
        ax.bar(xs, vals, yerr=errs, color=colors, capsize=3)
        ax.set_xticks(xs, [name for _, name, _ in groups], rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_ylabel("pass@1")

    return plot(draw, title=f"pass@1 by case pattern (blue) and domain (red) — {report['model']['model']}")


def metadata(report: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata for the asset: overall numbers with CIs, per-pattern / per-domain tables, failures, a plot."""
    o, k = report["overall"], report["k"]
    ci = o["ci"]["pass@1"]
    meta: dict[str, Any] = {
        "model": f"{report['model']['model']} ({report['model']['backend']})",
        "evaluation_id": report["evaluation_id"],
        "tasks": report["tasks"],
        "episodes": report["episodes"],
        "pass@1": o["pass@1"],
        f"pass@{k}": o.get(f"pass@{k}"),
        f"pass^{k}": o.get(f"pass^{k}"),
        "pass@1_ci_half_width": ci.get("half_width"),
        "action_solved": o.get("action_solved"),
        "action_all": o.get("action_all"),
        "tool_precision": o.get("tool_precision"),
        "format_violations": o["format_violations"],
        "mean_turns": o["mean_turns"],
        "by_category": group_table(report, "by_category"),
        "by_domain": group_table(report, "by_domain"),
        "by_pattern": group_table(report, "by_pattern"),
        "overall": overall_table(report),
        "failure_kinds": failure_table(report),
        "waterfall": waterfall_table(report),
        "cases": case_table(report),
        "pass_plot": pass_plot(report),
    }
    for kind in FAILURE_KINDS:
        meta[f"failures/{kind}"] = o["failures"].get(kind, 0)
    st = report.get("stages") or {}
    if st.get("episodes"):  # VAKRA stages (factory/retrieval/evaluate.py)
        meta["stages/passed"] = st["passed"]
        meta["stages/weighted_score"] = st["weighted_score"]
        meta["stages/policy_violations"] = st["policy_violations"]
        meta["stages_by_hop_type"] = md_table(st["by_hop_type"], limit=20)
        meta["stages_by_policy"] = md_table(st["by_policy"], limit=10)
    for key, path in report.get("files", {}).items():
        meta[f"file/{key}"] = path
    return {key: v for key, v in meta.items() if v is not None}


def console(report: Mapping[str, Any]) -> str:
    """Plain-text tables for the terminal: by category, by domain, then the overall line."""
    k = report["k"]
    cols = ["tasks", "episodes", "pass@1", f"pass@{k}", f"pass^{k}", "action_solved", "tool_precision", "mean_turns"]
    widths = [5, 8, 7, 7, 7, 13, 14, 10]
    if k == 1:
        cols, widths = cols[:3] + cols[4:], widths[:3] + widths[4:]

    def table(by: str) -> list[str]:
        key = by.removeprefix("by_")
        name_w = max([len(key), *(len(str(g[key])) for g in report[by])]) + 1
        lines = [f"{key:<{name_w}}" + " ".join(f"{c:>{w}}" for c, w in zip(cols, widths, strict=True))]
        for g in report[by]:
            lines.append(
                f"{str(g[key]):<{name_w}}" + " ".join(f"{_f(g.get(c)):>{w}}" for c, w in zip(cols, widths, strict=True))
            )
        return lines

    o = report["overall"]
    failures = ", ".join(f"{kd} {n}" for kd, n in o["failures"].items() if n) or "none"
    out = [*table("by_category"), "", *table("by_domain"), ""]
    at_k = f"pass@{k} {_f(o.get(f'pass@{k}'))}; " if k > 1 else ""
    out.append(
        f"overall: pass@1 {_ci(o['ci']['pass@1'])}; {at_k}pass^{k} "
        f"{_f(o.get(f'pass^{k}'))}; ACTION solved {_f(o.get('action_solved'))} / all {_f(o.get('action_all'))}; "
        f"tool precision {_f(o.get('tool_precision'))}; format violations {o['format_violations']}"
    )
    out.append(f"failure kinds: {failures}")
    st = report.get("stages") or {}
    if st.get("episodes"):
        out.append(
            f"VAKRA stages: passed {_f(st['passed'])}, weighted {_f(st['weighted_score'])}; by hop type "
            + ", ".join(f"{g['hop_type']} {_f(g['passed'])} ({g['episodes']})" for g in st["by_hop_type"])
            + "; by policy "
            + ", ".join(f"{g['policy_category']} {_f(g['passed'])} ({g['episodes']})" for g in st["by_policy"])
        )
    return "\n".join(out)


def write_files(
    report: dict[str, Any], traces: Sequence[Mapping[str, Any]], base: "str | Store", folder: str
) -> dict[str, str]:
    """report.json, report.md and traces.jsonl under `base` (a folder or a Store, e.g. the project's
    `factory.io.data_store`) / `folder` (atomic writes); paths recorded in the report."""
    from factory.io import Store

    store = base if isinstance(base, Store) else Store(base)

    def rel(name: str) -> str:
        return f"{folder.strip('/')}/{name}" if folder.strip("/") else name

    files = {
        "report_md": store.path(rel("report.md")),
        "traces": store.path(rel("traces.jsonl")),
        "report_json": store.path(rel("report.json")),
    }
    report["files"] = files
    store.write_jsonl(rel("traces.jsonl"), list(traces))
    store.write_bytes(rel("report.md"), markdown(report).encode("utf-8"))
    store.write_json(rel("report.json"), report)
    return files
