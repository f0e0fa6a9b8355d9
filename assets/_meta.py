"""Conversion of core metadata (plain values + factory.report markers) to Dagster metadata."""

import functools
import inspect
from typing import Any

import dagster as dg

from factory.quality import GateResult
from factory.report import Markdown
from factory.resources import passed_gate


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
    return dg.AssetCheckResult(passed=gate.success, metadata=to_metadata(meta), description=gate.headline())


def gate(**kwargs: Any):
    """`dg.asset_check(blocking=True, ...)` that publishes the asset's staged value once every blocking
    check of the run has passed (`factory.resources.passed_gate`); a failing gate leaves the last good
    value published. The checked function keeps its own signature (`context` first is optional)."""

    def decorate(fn):
        params = list(inspect.signature(fn).parameters.values())
        wants_context = bool(params) and params[0].name == "context"

        @functools.wraps(fn)
        def check(context: dg.AssetCheckExecutionContext, **inputs):
            result = fn(context, **inputs) if wants_context else fn(**inputs)
            if result.passed:
                passed_gate(context, context.check_specs[0].key)
            return result

        ctx = inspect.Parameter(
            "context", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=dg.AssetCheckExecutionContext
        )
        check.__signature__ = inspect.Signature([ctx, *(params[1:] if wants_context else params)])
        check.__annotations__ = {**fn.__annotations__, "context": dg.AssetCheckExecutionContext}
        return dg.asset_check(blocking=True, **kwargs)(check)

    return decorate
