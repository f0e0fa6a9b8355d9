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


MAX_NAMED_ROWS = 20  # failing rows named per expectation in a gate's summary and metadata


@dataclass
class GateResult:
    suite: str
    success: bool
    rows: int
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failures(self) -> list[dict[str, Any]]:
        return [r for r in self.results if not r["success"]]

    def fixes(self) -> list[str]:
        """What to change, one line per failed expectation that says so (its `meta.fix`, and the
        setting a config-bound threshold comes from)."""
        out = []
        for f in self.failures:
            hints = [f"{path} is {value!r} in the project config" for path, value in f.get("settings", {}).items()]
            if f.get("fix"):
                hints.insert(0, f["fix"])
            if hints:
                out.append(f"{f['property'] or f['type']}: " + "; ".join(hints))
        return out

    def headline(self) -> str:
        """One line for a run's failure message: the suite, the first failed property and the rows it names."""
        if self.success:
            return f"{self.suite}: {len(self.results)} expectations passed on {self.rows} rows"
        first = self.failures[0]
        named = _rows_text(first.get("failed_rows") or [], limit=5)
        more = f" (+{len(self.failures) - 1} more failed)" if len(self.failures) > 1 else ""
        return f"{self.suite}: {first['property'] or first['type']} failed{': ' + named if named else ''}{more}"

    def summary(self) -> str:
        if self.success:
            return self.headline()
        lines = [f"{self.suite}: {len(self.failures)} of {len(self.results)} expectations failed on {self.rows} rows"]
        for f in self.failures:
            lines.append(f"- {f['property'] or f['type']} ({f['type']} {f['kwargs']}): observed {f['observed']}")
            if f.get("failed_rows"):
                lines.append(f"  failing rows: {_rows_text(f['failed_rows'], limit=MAX_NAMED_ROWS)}")
        lines += [f"  to change: {fix}" for fix in self.fixes()]
        return "\n".join(lines)

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "suite": self.suite,
            "rows_validated": self.rows,
            "expectations": len(self.results),
            "failed_expectations": len(self.failures),
            "result": self.summary(),
        }
        if not self.success:
            meta["failed_rows"] = {
                f["property"] or f["type"]: f.get("failed_rows", [])[:MAX_NAMED_ROWS] for f in self.failures
            }
            meta["fix"] = self.fixes()
        return meta


def _rows_text(rows: list[dict[str, Any]], *, limit: int) -> str:
    def one(r: dict[str, Any]) -> str:
        key = ", ".join(f"{v}" for k, v in r.items() if k != "why")
        return f"{key} ({r['why']})" if r.get("why") else key

    text = "; ".join(one(r) for r in rows[:limit])
    return text + (f"; … {len(rows) - limit} more" if len(rows) > limit else "")


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


def config_value(cfg: Any, path: str) -> Any:
    """The value of the dotted config setting `path` (`probes.min_success_share`): from `cfg`, or the
    setting's default when `cfg` is None. An unknown setting is a SuiteError."""
    from pydantic import BaseModel

    from factory.config import ProjectConfig

    obj: Any = cfg
    cls: Any = ProjectConfig
    parts = path.split(".")
    for i, part in enumerate(parts):
        fields = getattr(cls, "model_fields", {})
        if part not in fields:
            raise SuiteError(f"expectation suites name the setting {path!r}, which the project config does not have")
        info = fields[part]
        if obj is not None:
            obj = getattr(obj, part)
        elif i == len(parts) - 1:
            return info.get_default(call_default_factory=True)
        cls = info.annotation
        if i < len(parts) - 1 and not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            raise SuiteError(f"expectation suites name the setting {path!r}, but {part!r} is not a section")
    return obj


def _fill_settings(value: Any, cfg: Any, overrides: dict[str, Any], used: dict[str, Any]) -> Any:
    """`{"$CONFIG": "<section.setting>"}` in a suite's kwargs replaced by that setting's value
    (`overrides`, else `cfg`, else the config default); each one used is recorded in `used`."""
    if isinstance(value, dict) and set(value) == {"$CONFIG"}:
        path = value["$CONFIG"]
        used[path] = overrides[path] if path in overrides else config_value(cfg, path)
        return used[path]
    if isinstance(value, dict):
        return {k: _fill_settings(v, cfg, overrides, used) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_settings(v, cfg, overrides, used) for v in value]
    return value


def suite_settings(name: str) -> list[str]:
    """The config settings (dotted paths) the suite's thresholds come from."""
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict) and set(v) == {"$CONFIG"}:
            found.append(v["$CONFIG"])
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(load_suite_dict(name)["expectations"])
    return found


def _failed_rows(df: pd.DataFrame, kwargs: dict[str, Any], result: dict[str, Any], key: list[str], why: str | None):
    """The rows an expectation names as failing: `key` columns (and the `why` column) of each."""
    cols = [c for c in key if c in df.columns]
    if why and why in df.columns:
        cols.append(why)
    if not cols:
        return []

    def pick(r: dict[str, Any]) -> dict[str, Any]:
        out = {c: _plain(r.get(c)) for c in cols if c != why}
        if why and r.get(why) not in (None, ""):
            out["why"] = _plain(r[why])
        return out

    if result.get("unexpected_index_list"):
        return [pick(r) for r in result["unexpected_index_list"] if isinstance(r, dict)]
    column = kwargs.get("column")
    if column in df.columns and ("min_value" in kwargs or "max_value" in kwargs):
        # an aggregate (mean, share) out of range: the rows pulling it there
        values = pd.to_numeric(df[column], errors="coerce")
        lo, hi = kwargs.get("min_value"), kwargs.get("max_value")
        mask = pd.Series(False, index=df.index)
        if lo is not None and not result.get("_above_min", True):
            mask |= values < lo
        if hi is not None and not result.get("_below_max", True):
            mask |= values > hi
        return [pick(r) for r in df[mask].to_dict("records")]
    return []


def _plain(v: Any) -> Any:
    import numpy as np

    if isinstance(v, np.generic):
        return v.item()
    return v if isinstance(v, str | int | float | bool | type(None)) else str(v)


def validate(name: str, df: pd.DataFrame, cfg: Any = None, *, settings: dict[str, Any] | None = None) -> GateResult:
    """Validate `df` against the suite `expectations/<name>.json`.

    A kwarg written `{"$CONFIG": "<section.setting>"}` takes that setting of `cfg` (the project
    config; `settings` overrides by dotted path; without either, the setting's default), so every
    threshold a gate applies is the one in factory.yaml. The suite's `meta.key` names the columns
    that identify a row (a tool, a task): failing rows are named by them, with the expectation's
    `meta.why` column as the reason, and `meta.fix` says what to change.
    """
    import great_expectations as gx

    data = load_suite_dict(name)
    key = list((data.get("meta") or {}).get("key") or [])
    specs = data["expectations"]
    used_per: list[dict[str, Any]] = []
    filled = []
    for e in specs:
        used: dict[str, Any] = {}
        filled.append(_fill_settings(e, cfg, settings or {}, used))
        used_per.append(used)
    data["expectations"] = filled
    try:
        suite = gx.ExpectationSuite(**{k: v for k, v in data.items() if k in ("name", "expectations", "meta")})
    except Exception as e:  # GX raises several types for a bad suite
        raise SuiteError(f"expectation suite {suite_path(name)} is invalid: {e}") from e
    index_cols = [c for c in key if c in df.columns]
    index_cols += sorted(
        {w for e in specs if (w := (e.get("meta") or {}).get("why")) and w in df.columns} - set(index_cols)
    )
    fmt: dict[str, Any] = {"result_format": "SUMMARY"}
    if index_cols and len(df):
        fmt = {"result_format": "COMPLETE", "unexpected_index_column_names": index_cols, "partial_unexpected_count": 20}
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
        res = batch.validate(suite, result_format=fmt)
    results = []
    for r, spec, used in zip(res.results, specs, used_per, strict=True):
        meta = spec.get("meta") or {}
        kwargs = {k: v for k, v in r.expectation_config.kwargs.items() if k not in ("batch_id", "result_format")}
        raw = dict(r.result or {})
        observed = _observed(raw)
        entry: dict[str, Any] = {
            "type": r.expectation_config.type,
            "kwargs": kwargs,
            "property": meta.get("property", ""),
            "success": bool(r.success),
            "observed": observed,
            "settings": used,
        }
        if meta.get("fix"):
            entry["fix"] = meta["fix"]
        if not r.success:
            if isinstance(observed, int | float) and not isinstance(observed, bool):
                raw["_above_min"] = kwargs.get("min_value") is None or observed >= kwargs["min_value"]
                raw["_below_max"] = kwargs.get("max_value") is None or observed <= kwargs["max_value"]
            entry["failed_rows"] = _failed_rows(df, kwargs, raw, key, meta.get("why"))
        results.append(entry)
    return GateResult(suite=name, success=bool(res.success), rows=len(df), results=results)
