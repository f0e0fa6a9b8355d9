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
