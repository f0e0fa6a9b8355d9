"""Metadata values the core hands to the asset layer, without importing Dagster.

The core returns plain numbers, strings, dicts and these two markers; the
asset layer turns `Markdown` into `MetadataValue.md` and `Plot` into a
markdown image, so the Dagster UI shows tables and pictures.
"""

import base64
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any


class Markdown(str):
    """Markdown text for the Dagster UI."""


class Plot(Markdown):
    """A PNG rendered into a markdown image (data URI)."""


def md_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None, limit: int = 10) -> Markdown:
    """A markdown table of the first `limit` rows (cells truncated, pipes escaped)."""
    if not rows:
        return Markdown("_(no rows)_")
    cols = list(columns or rows[0].keys())

    def cell(v: Any) -> str:
        s = str(v) if v is not None else ""
        s = s.replace("|", "\\|").replace("\n", " ")
        return s if len(s) <= 80 else s[:77] + "..."

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in list(rows)[:limit]:
        lines.append("| " + " | ".join(cell(r.get(c)) for c in cols) + " |")
    if len(rows) > limit:
        lines.append(f"\n_{len(rows) - limit} more rows_")
    return Markdown("\n".join(lines))


def plot(draw: Callable[[Any], None], *, title: str, size: tuple[float, float] = (6.0, 3.5)) -> Plot:
    """Render `draw(ax)` with matplotlib (Agg) into a markdown PNG image."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size, dpi=90)
    try:
        draw(ax)
        ax.set_title(title)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return Plot(f"![{title}](data:image/png;base64,{data})")


def bar_plot(counts: Mapping[str, float], *, title: str, xlabel: str = "", ylabel: str = "count") -> Plot:
    keys = list(counts)

    def draw(ax: Any) -> None:
        ax.bar(range(len(keys)), [counts[k] for k in keys], color="#4477aa")
        ax.set_xticks(range(len(keys)), keys, rotation=30, ha="right", fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)

    return plot(draw, title=title)


def rate(num: float, den: float) -> float:
    return round(num / den, 4) if den else 0.0


def counts(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


# --------------------------------------------------------------------------- yield (issue 16 item 6)

NOT_EXECUTED = ("no_seed",)  # trajectory rejections decided before any call of the attempt ran


def _num(v: Any) -> int:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0


def yield_rows(
    summaries: Mapping[str, Mapping[str, Mapping[str, Any]]], *, quota: int, top: int = 3
) -> list[dict[str, Any]]:
    """Per domain, where the candidates went: trajectories attempted (kept + rejected) → executed (calls ran)
    → trajectories kept (quota: per_pattern × patterns) → tasks with queries → kept by the judges → in the
    splits (after dedup), with the `top` rejection reasons of the trajectory, query and judge stages together."""
    in_splits = (summaries.get("(global)") or {}).get("dataset_splits", {}).get("tasks_by_domain") or {}
    rows = []
    for d, assets in summaries.items():
        if d == "(global)" or "trajectories" not in assets:
            continue
        tr, gq, jq = assets["trajectories"], assets.get("generated_queries", {}), assets.get("judged_queries", {})
        kept = _num(tr.get("tasks"))
        by_reason: dict[str, int] = {}
        for source in (tr.get("rejections_by_reason"), gq.get("rejection_reasons"), jq.get("by_reason")):
            for r, n in (source or {}).items():
                if _num(n):
                    by_reason[r] = by_reason.get(r, 0) + _num(n)
        attempted = kept + _num(tr.get("rejected"))
        not_run = sum(_num((tr.get("rejections_by_reason") or {}).get(r)) for r in NOT_EXECUTED)
        ranked = sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        rows.append(
            {
                "domain": d,
                "attempted": attempted,
                "executed": attempted - not_run,
                "kept": kept,
                "quota": quota,
                "queries": gq.get("tasks"),
                "judged": jq.get("kept"),
                "in_splits": in_splits.get(d) if isinstance(in_splits, Mapping) else None,
                "top_reasons": ", ".join(f"{r} {n}" for r, n in ranked),
            }
        )
    return rows


def yield_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The run summary's `yield` table (plain text, one line per domain)."""
    if not rows:
        return []

    def f(v: Any) -> str:
        return "-" if v is None or v == "" else str(v)

    out = [
        "yield (attempted → executed → kept of quota → queries → judged → in splits; top rejection reasons)",
        f"{'domain':<10} {'attempted':>9} {'executed':>8} {'kept/quota':>10} {'queries':>7} {'judged':>6} "
        f"{'splits':>6}  top reasons",
    ]
    for r in rows:
        kq = f"{f(r['kept'])}/{f(r['quota'])}"
        out.append(
            f"{r['domain']:<10} {f(r['attempted']):>9} {f(r['executed']):>8} {kq:>10} {f(r['queries']):>7} "
            f"{f(r['judged']):>6} {f(r['in_splits']):>6}  {r['top_reasons'] or '-'}"
        )
    return out
