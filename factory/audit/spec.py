"""The audit's own evaluator of answer specs (the contract of a task's `answer_spec`, read anew).

A spec reads the results of golden calls. A call reference is either a 0-based position in the
golden actions (older tasks) or ``{"step": s, "index": i}`` (the i-th call, in golden order, of
the calls sharing 1-based step s), optionally with ``"record": {field: value}`` (read the first
record with those values instead of the first record) and, in a count, ``"field"`` (read that count
field of the record instead of the call's total). Kinds:

- ``count``: the sum over its calls of the total count (the records of a call without a total);
- ``value``: ``field`` of the first (or selected) record of each call; one value, or a list;
- ``cmp``: two count arms; the label of the larger one (``order: more``) or of the smaller one
  (any other order) wins; with ``ask: difference`` the answer is the absolute difference of the
  two counts; equal counts give no answer (None);
- ``cond``: the count of ``cond_call`` ≥ ``threshold`` answers ``then``, otherwise ``else``;
- ``sem``: the list of its parts' answers.

`evaluate` raises `Underivable` when a call it reads has no reference result or a value it reads is
unknown to the reference, and `SpecUnreadable` when the spec itself cannot be read.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class SpecUnreadable(ValueError):
    """An answer spec that names no call, an unknown kind or a missing field."""


class Underivable(Exception):
    """A value the spec reads that the reference results cannot give."""


class _Unknown:
    """A field value the tool's documentation does not determine (e.g. a fresh API key)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


@dataclass
class CallResult:
    """What a reference computed for one golden call."""

    records: list[dict[str, Any]] = field(default_factory=list)  # the records of the page the call asked for
    total: int | None = None  # the total count the tool reports (None for single-object answers)
    error: str | None = None  # the call would fail (e.g. "404: album 9999 not found")

    @property
    def count(self) -> int:
        return self.total if self.total is not None else len(self.records)


def number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def same(a: Any, b: Any) -> bool:
    """Two answer values agree: numbers numerically (3 == 3.0 == "3"), text NFC-normalized and
    stripped, lists element by element, None only with None."""
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    na, nb = number(a), number(b)
    if na is not None and nb is not None:
        return math.isclose(na, nb, rel_tol=1e-9, abs_tol=1e-9)
    return unicodedata.normalize("NFC", str(a)).strip() == unicodedata.normalize("NFC", str(b)).strip()


def steps_of(actions: Sequence[Mapping[str, Any]]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for pos, a in enumerate(actions):
        out.setdefault(int(a["step"]), []).append(pos)
    return out


def position(ref: Any, steps: Mapping[int, Sequence[int]], n: int) -> int:
    if isinstance(ref, int) and not isinstance(ref, bool):
        if not 0 <= ref < n:
            raise SpecUnreadable(f"call position {ref} is outside the {n} golden actions")
        return ref
    if isinstance(ref, Mapping):
        s, i = ref.get("step"), ref.get("index", 0)
        if isinstance(s, int) and isinstance(i, int) and s in steps and 0 <= i < len(steps[s]):
            return steps[s][i]
    raise SpecUnreadable(f"call reference {ref!r} names no golden action (steps {sorted(steps)})")


def references(spec: Any) -> list[Any]:
    """Every call reference in a spec."""
    if isinstance(spec, Mapping):
        out: list[Any] = []
        for k, v in spec.items():
            if k == "calls" and isinstance(v, list):
                out += v
            elif k == "cond_call":
                out.append(v)
            elif isinstance(v, Mapping | list):
                out += references(v)
        return out
    if isinstance(spec, list):
        return [r for x in spec for r in references(x)]
    return []


def read_positions(spec: Mapping[str, Any], actions: Sequence[Mapping[str, Any]]) -> set[int]:
    steps = steps_of(actions)
    return {position(r, steps, len(actions)) for r in references(spec)}


def evaluate(
    spec: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], results: Sequence[CallResult | None]
) -> dict[str, Any]:
    """The answer a spec gives over `results` (aligned with `actions`): {value, branch?, counts?}."""
    steps = steps_of(actions)

    def result(ref: Any) -> CallResult:
        pos = position(ref, steps, len(actions))
        r = results[pos]
        if r is None:
            raise Underivable(f"call {pos} ({actions[pos]['tool']}) has no reference result")
        if r.error:
            raise Underivable(f"call {pos} ({actions[pos]['tool']}) fails under the reference: {r.error}")
        return r

    def record(ref: Any) -> Mapping[str, Any]:
        r = result(ref)
        match = ref.get("record") if isinstance(ref, Mapping) else None
        for rec in r.records:
            if not match or all(same(rec.get(k), v) for k, v in match.items()):
                return rec
        raise Underivable(f"no record of {ref!r} {'matches ' + repr(match) if match else 'at all'}")

    def count(ref: Any) -> int:
        fld = ref.get("field") if isinstance(ref, Mapping) else None
        if not fld:
            return result(ref).count
        v = record(ref).get(fld)
        if v is UNKNOWN:
            raise Underivable(f"{fld} of {ref!r} is not determined by the documentation")
        n = number(v)
        if n is None or not n.is_integer():
            raise Underivable(f"{fld} of {ref!r} is no count: {v!r}")
        return int(n)

    def go(s: Mapping[str, Any]) -> dict[str, Any]:
        kind = s.get("kind")
        if kind == "count":
            return {"value": sum(count(r) for r in s.get("calls", []))}
        if kind == "value":
            if "field" not in s:
                raise SpecUnreadable("a value spec without a field")
            vals = [record(r).get(s["field"]) for r in s.get("calls", [])]
            if any(v is UNKNOWN for v in vals):
                raise Underivable(f"{s['field']} is not determined by the documentation")
            return {"value": vals[0] if len(vals) == 1 else vals}
        if kind == "cmp":
            a, b = (go(arm)["value"] for arm in s["arms"])
            if a == b:
                return {"value": None, "counts": [a, b]}
            if s.get("ask") == "difference":
                return {"value": abs(a - b), "counts": [a, b]}
            first = (a > b) == (s.get("order", "more") == "more")
            return {"value": s["labels"][0] if first else s["labels"][1], "counts": [a, b]}
        if kind == "cond":
            c = count(s["cond_call"])
            holds = c >= s["threshold"]
            return {**go(s["then"] if holds else s["else"]), "branch": "then" if holds else "else", "condition": c}
        if kind == "sem":
            return {"value": [go(p)["value"] for p in s["parts"]]}
        raise SpecUnreadable(f"unknown answer kind {kind!r}")

    return go(spec)
