"""Variant rows for exports: one row per (task, published variant), carrying the variant id.

    rows = variant_rows(schema_variants_values, split_of={task_id: "train", ...})

A row has the task id, its split (when known), the variant id with its operator and instruction, the
variant's tools (OpenAI definitions) and the golden variant trace: each call with its filled-in
arguments, the adapter's reply to protocol steps, and the native action each executing call decodes
to (whose result is the native export's tool message for that action). Filtering rows by
`variant_id` gives a mixture to train on and variants to hold out.
"""

from collections.abc import Iterable, Mapping
from typing import Any


def variant_rows(
    values: Iterable[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]],
    split_of: Mapping[str, str | None] | None = None,
    include: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """Rows of every published variant (or those in `include`) for every task in `values` (schema_variants
    values, one per domain, or {domain: value}); tasks missing from a given `split_of` are left out."""
    vals = list(values.values()) if isinstance(values, Mapping) else list(values)
    wanted = set(include) if include is not None else None
    rows: list[dict[str, Any]] = []
    for value in vals:
        published = {v["id"]: v for v in value.get("variants") or [] if v.get("published")}
        for task in value.get("tasks") or []:
            tid = task["task_id"]
            if split_of is not None and tid not in split_of:
                continue
            for vid, trace in sorted((task.get("variants") or {}).items()):
                v = published.get(vid)
                if v is None or (wanted is not None and vid not in wanted):
                    continue
                rows.append(
                    {
                        "task_id": tid,
                        "domain": value.get("domain"),
                        "split": split_of.get(tid) if split_of is not None else None,
                        "variant_id": vid,
                        "operator": v.get("operator"),
                        "instruction": v.get("instruction", ""),
                        "tools": v.get("tool_definitions") or [],
                        "trace": trace,
                        "target_actions": task.get("target_actions") or [],
                    }
                )
    return rows
