"""Data-quality gates: great-expectations suites stored as JSON in `expectations/`.

A suite file is a GX 1.x ExpectationSuite (`name`, `expectations`: list of
`{type, kwargs, meta}`).  Each expectation's `meta.property` says in words
what property it guards; the failing ones are what a person sees in the UI.
GX is imported lazily (it costs seconds) and its progress bars are off.
"""

import json
import logging
import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from factory.paths import package_root

EXPECTATIONS_DIR = package_root() / "expectations"
_lock = threading.Lock()


class SuiteError(ValueError):
    """A suite file that is missing or not a valid suite."""


@dataclass
class GateResult:
    suite: str
    success: bool
    rows: int
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failures(self) -> list[dict[str, Any]]:
        return [r for r in self.results if not r["success"]]

    def summary(self) -> str:
        if self.success:
            return f"{self.suite}: {len(self.results)} expectations passed on {self.rows} rows"
        lines = [f"{self.suite}: {len(self.failures)} of {len(self.results)} expectations failed on {self.rows} rows"]
        for f in self.failures:
            lines.append(f"- {f['property'] or f['type']} ({f['type']} {f['kwargs']}): observed {f['observed']}")
        return "\n".join(lines)

    def metadata(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "rows_validated": self.rows,
            "expectations": len(self.results),
            "failed_expectations": len(self.failures),
            "result": self.summary(),
        }


def suite_path(name: str) -> Path:
    return EXPECTATIONS_DIR / f"{name}.json"


def load_suite_dict(name: str) -> dict[str, Any]:
    p = suite_path(name)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise SuiteError(f"expectation suite {name!r} not found at {p}") from e
    except json.JSONDecodeError as e:
        raise SuiteError(f"expectation suite {p} is not valid JSON: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("expectations"), list):
        raise SuiteError(f"expectation suite {p} must be an object with an 'expectations' list")
    return data


@cache
def _context() -> Any:
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    return ctx


def _observed(result: dict[str, Any]) -> Any:
    if result.get("observed_value") is not None:
        v = result["observed_value"]
        return v.item() if hasattr(v, "item") else v
    if result.get("unexpected_count"):
        return {
            "unexpected_count": result["unexpected_count"],
            "examples": [str(x) for x in (result.get("partial_unexpected_list") or [])[:5]],
        }
    return None


def _fill_parameters(value: Any, params: dict[str, Any], name: str) -> Any:
    """`{"$PARAMETER": p}` in a suite's kwargs replaced by `params[p]`."""
    if isinstance(value, dict) and set(value) == {"$PARAMETER"}:
        key = value["$PARAMETER"]
        if key not in params:
            raise SuiteError(
                f"expectation suite {suite_path(name)} needs parameter {key!r} (no default in meta.parameters)"
            )
        return params[key]
    if isinstance(value, dict):
        return {k: _fill_parameters(v, params, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_parameters(v, params, name) for v in value]
    return value


def validate(name: str, df: pd.DataFrame, params: dict[str, Any] | None = None) -> GateResult:
    """Validate `df` against the suite `expectations/<name>.json`.

    A kwarg written `{"$PARAMETER": "<p>"}` takes `params[p]` (a config value), else the
    suite's default `meta.parameters[p]`.
    """
    import great_expectations as gx

    data = load_suite_dict(name)
    defaults = dict((data.get("meta") or {}).get("parameters") or {})
    data["expectations"] = _fill_parameters(data["expectations"], {**defaults, **(params or {})}, name)
    try:
        suite = gx.ExpectationSuite(**{k: v for k, v in data.items() if k in ("name", "expectations", "meta")})
    except Exception as e:  # GX raises several types for a bad suite
        raise SuiteError(f"expectation suite {suite_path(name)} is invalid: {e}") from e
    with _lock:  # the ephemeral context is not thread-safe
        ctx = _context()
        ds_name = f"gate_{name}"
        try:
            ds = ctx.data_sources.get(ds_name)
        except Exception:
            ds = ctx.data_sources.add_pandas(ds_name)
        try:
            asset = ds.get_asset("frame")
        except Exception:
            asset = ds.add_dataframe_asset("frame")
        try:
            bd = asset.get_batch_definition("whole")
        except Exception:
            bd = asset.add_batch_definition_whole_dataframe("whole")
        batch = bd.get_batch(batch_parameters={"dataframe": df})
        res = batch.validate(suite)
    results = []
    for r, spec in zip(res.results, data["expectations"], strict=True):
        results.append(
            {
                "type": r.expectation_config.type,
                "kwargs": {k: v for k, v in r.expectation_config.kwargs.items() if k != "batch_id"},
                "property": (spec.get("meta") or {}).get("property", ""),
                "success": bool(r.success),
                "observed": _observed(r.result or {}),
            }
        )
    return GateResult(suite=name, success=bool(res.success), rows=len(df), results=results)
