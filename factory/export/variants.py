"""Schema-variant rows in the exports (issue 18 item 5): every split task under every published variant.

- `variants/<split>.jsonl`: one row per (task, published variant) with `variant_id`, `operator`, the golden
  variant trace (each call with its arguments, the adapter's replies to protocol steps, the native action it
  decodes to) and the task's target native actions; filtering rows by `variant_id` gives a mixture to
  train on and variants to hold out;
- `variants/catalog.json`: per domain and variant id, the operator, the one-sentence instruction and the
  variant's tool definitions (kept once here rather than on every row).
Read from the stored `schema_variants` values (one per domain); domains without one contribute nothing.
"""

import json
from collections.abc import Iterator, Mapping
from typing import Any

from factory.io import dumps
from factory.variants.export import variant_rows

FORMATS = ("variants", "variants_catalog")
ROW_KEYS = ("task_id", "domain", "split", "variant_id", "operator", "trace", "target_actions")


def current_variants(
    values: Mapping[str, Mapping[str, Any] | None], splits_value: Mapping[str, Any]
) -> dict[str, Mapping[str, Any]] | None:
    """The stored schema_variants values (by domain) that hold at least one task of the current splits."""
    ids = {t["id"] for t in splits_value.get("tasks") or []}
    kept = {d: v for d, v in values.items() if v and any(t.get("task_id") in ids for t in v.get("tasks") or [])}
    return kept or None


def catalog(values: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for domain, value in sorted((values or {}).items()):
        out[domain] = {
            v["id"]: {"operator": v.get("operator"), "instruction": v.get("instruction", ""),
                      "tools": v.get("tool_definitions") or []}
            for v in value.get("variants") or [] if v.get("published")
        }  # fmt: skip
    return out


def files(
    values: Mapping[str, Mapping[str, Any]] | None, split: str, split_of: Mapping[str, str | None]
) -> Iterator[tuple[str, str, bytes, int]]:
    """(format, relative path, bytes, rows) of the split's variant rows (none without values)."""
    if not values:
        return
    mine = {tid: s for tid, s in split_of.items() if s == split}
    rows = [{k: r[k] for k in ROW_KEYS} for r in variant_rows(values, split_of=mine)]
    data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode("utf-8")
    yield "variants", f"variants/{split}.jsonl", data, len(rows)


def catalog_file(values: Mapping[str, Mapping[str, Any]] | None) -> tuple[str, bytes, int] | None:
    if not values:
        return None
    cat = catalog(values)
    return "variants/catalog.json", dumps(cat, indent=1).encode("utf-8"), sum(len(v) for v in cat.values())


def read_back(fmt: str, data: bytes, split: str) -> tuple[int, list[str]]:
    """(rows read, problems) of one variant file."""
    if fmt == "variants_catalog":
        cat = json.loads(data)
        errs = [f"{d}/{vid}: no tools" for d, vs in cat.items() for vid, v in vs.items() if not v.get("tools")]
        return sum(len(v) for v in cat.values()), errs
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    errs = [f"row {i}: missing {k}" for i, r in enumerate(rows, 1) for k in ROW_KEYS if k not in r]
    errs += [f"row {i}: split {r.get('split')}" for i, r in enumerate(rows, 1) if r.get("split") != split]
    return len(rows), errs
