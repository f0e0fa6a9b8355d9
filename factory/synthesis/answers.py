"""Answer material, derived deterministically from executed results (pure).

An answer *spec* names golden actions by index and says what to read from them; the same
function computes the stored answer at synthesis time and recomputes it from a replay:

- ``count``: the sum of the reported total counts of the named logical calls (never rows counted);
- ``value``: `field` of the first record of each named call (one value, or a list);
- ``cmp``: two arms, each a count spec; the label of the larger one wins (a tie is no answer), or with
  ``ask: difference`` the absolute difference of the two counts;
- ``cond``: the condition call's total ≥ threshold selects `then` or `else`, both specs;
- ``sem``: several specs answered together.
"""

from collections.abc import Mapping, Sequence
from typing import Any


def _total(r: Mapping[str, Any]) -> int:
    t = r.get("total_count")
    return int(t) if t is not None else int(r.get("records", r.get("record_count", 0)) or 0)


def _first(r: Mapping[str, Any]) -> Mapping[str, Any]:
    recs = r.get("records_list") if "records_list" in r else r.get("sample") or []
    return recs[0] if recs else {}


def compute(spec: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """{'type': number|string|judge, 'value': ..., 'fields': [...], 'branch'?: then|else}."""
    kind = spec["kind"]
    if kind == "count":
        return {"type": "number", "value": sum(_total(results[i]) for i in spec["calls"]), "fields": ["total_count"]}
    if kind == "value":
        vals = [_first(results[i]).get(spec["field"]) for i in spec["calls"]]
        if len(vals) == 1:
            v = vals[0]
            typ = "number" if isinstance(v, int | float) and not isinstance(v, bool) else "string"
            return {"type": typ, "value": v, "fields": [spec["field"]]}
        return {"type": "judge", "value": vals, "fields": [spec["field"]]}
    if kind == "cmp":
        a, b = (compute(arm, results)["value"] for arm in spec["arms"])
        if a == b:
            return {"type": "string", "value": None, "fields": ["total_count"], "counts": [a, b]}
        win = spec["labels"][0] if (a > b) == (spec.get("order", "more") == "more") else spec["labels"][1]
        if spec.get("ask") == "difference":
            return {"type": "number", "value": abs(a - b), "fields": ["total_count"], "counts": [a, b]}
        typ = "number" if isinstance(win, int | float) and not isinstance(win, bool) else "string"
        return {"type": typ, "value": win, "fields": ["total_count"], "counts": [a, b]}
    if kind == "cond":
        c = _total(results[spec["cond_call"]])
        holds = c >= spec["threshold"]
        branch = spec["then"] if holds else spec["else"]
        out = compute(branch, results)
        return {**out, "branch": "then" if holds else "else", "condition_value": c}
    if kind == "sem":
        parts = [compute(p, results) for p in spec["parts"]]
        return {
            "type": "judge",
            "value": [p["value"] for p in parts],
            "fields": [f for p in parts for f in p["fields"]],
        }
    raise ValueError(f"unknown answer kind {kind!r}")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else f"{v:g}"
    if isinstance(v, list):
        return ", ".join(_fmt(x) for x in v)
    return str(v)


def answer_text(ans: Mapping[str, Any], language: str, cond_label: str = "") -> str:
    """The gold answer as text (COND: the branch sentence first, then the result)."""
    v = ans["value"]
    body = _fmt(v)
    if "counts" in ans and ans.get("value") is not None:
        a, b = ans["counts"]
        body = f"{body} ({_fmt(a)} vs {_fmt(b)})"
    if "branch" in ans:
        if language == "ko":
            head = "조건이 성립합니다." if ans["branch"] == "then" else "조건이 성립하지 않습니다."
        else:
            head = "The condition holds." if ans["branch"] == "then" else "The condition does not hold."
        return f"{head} {body}"
    return body
