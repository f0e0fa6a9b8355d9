"""Small helpers shared by the REST (English, `api_key`) platforms."""

from __future__ import annotations

from typing import Annotated, Any

import pandas as pd
from fastapi import Query

from factory.demo.data import records
from factory.demo.framework import rest_error

PageNo = Annotated[int, Query(ge=1, description="Page number, 1-based.", examples=[1])]
PerPage = Annotated[int, Query(ge=1, le=100, description="Records per page (1-100).", examples=[20])]


def paginate(rows: pd.DataFrame | list[dict[str, Any]], page: int, per_page: int) -> dict[str, Any]:
    """One page of `rows` in the REST list shape `{data, page, per_page, total}`."""
    start = (page - 1) * per_page
    if isinstance(rows, pd.DataFrame):
        data = records(rows.iloc[start : start + per_page])
    else:
        data = rows[start : start + per_page]
    return {"data": data, "page": page, "per_page": per_page, "total": len(rows)}


def one(df: pd.DataFrame, what: str) -> dict[str, Any]:
    """The single record of `df`, or a 404 naming `what`."""
    if df.empty:
        raise rest_error(404, f"{what} not found")
    return records(df.iloc[:1])[0]
