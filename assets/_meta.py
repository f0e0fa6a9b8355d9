"""Conversion of core metadata (plain values + factory.report markers) to Dagster metadata."""

from typing import Any

import dagster as dg

from factory.quality import GateResult
from factory.report import Markdown


def to_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in meta.items():
        if isinstance(v, Markdown):
            out[k] = dg.MetadataValue.md(str(v))
        elif isinstance(v, bool):
            out[k] = dg.MetadataValue.bool(v)
        elif isinstance(v, int):
            out[k] = dg.MetadataValue.int(v)
        elif isinstance(v, float):
            out[k] = dg.MetadataValue.float(v)
        elif isinstance(v, dict | list):
            out[k] = dg.MetadataValue.json(v)
        elif v is None:
            out[k] = dg.MetadataValue.text("")
        else:
            out[k] = dg.MetadataValue.text(str(v))
    return out


def gate_result(gate: GateResult, extra: dict[str, Any] | None = None) -> dg.AssetCheckResult:
    """An AssetCheckResult for a great-expectations gate (ERROR severity: blocks downstream)."""
    meta = gate.metadata()
    meta["result"] = Markdown(gate.summary().replace("\n", "\n\n"))
    if extra:
        meta.update(extra)
    return dg.AssetCheckResult(
        passed=gate.success, metadata=to_metadata(meta), description=gate.summary().splitlines()[0]
    )
