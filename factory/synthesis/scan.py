"""High-cardinality junctions without reading everything (issue 20 #3).

`fetch` (factory.synthesis.execute) reads a logical call whole and rejects one whose total is above
`max_scan_records`.  A junction needs less: its type (SEQ n = 1, FAN 2 ≤ n ≤ φ, DRV n > φ) and,
for DRV, a process node whose filtered set is small.  `scan_junction` gets both with memory bounded
by `max_scan_records` whatever the size of the response:

- the reported total (`totalCount`, page metadata) says how many records there are; pages are read
  one at a time and dropped after use, keeping only the distinct junction keys (at most φ + 1 of
  them: one more decides DRV) and a seeded reservoir sample of at most `memory_bound` records;
- the type is decided as soon as it is certain: DRV at the (φ+1)-th distinct key, SEQ/FAN only when
  every record was read (a partial read with ≤ φ keys proves nothing); `max_pages` bounds the time,
  and a scan that runs out of it undecided is a Rejection('response_too_large');
- a DRV pivot comes from the sample: a sampled record (seeded draw) anchors equality filters on its
  fields that the tool also takes as parameters of the same name, added one at a time until the
  filtered call is within the bound (the record itself guarantees it is not empty); it is accepted
  only when the filtered call itself (read whole, within the bound) has 1..φ distinct keys.  The
  guarantee is the server's, not the sample's.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from factory.synthesis.execute import Fetched, fetch, page_args, typed_args
from factory.synthesis.junctions import DRV, FAN, SEQ, Rejection, distinct_keys, key_of
from factory.tools.executor import ToolExecutor
from factory.tools.spec import ToolSpec


@dataclass
class Scan:
    """What a bounded scan of one logical call learnt."""

    tool_id: str
    args: dict[str, Any]
    total: int  # reported by the tool (or counted, when every record was read)
    records_read: int
    pages_read: int
    keys: list[tuple]  # distinct junction keys seen, in order of appearance (at most φ + 1)
    sample: list[dict[str, Any]]  # seeded reservoir sample, at most `memory_bound` records
    jtype: str
    exact: bool  # every record was read
    node: dict[str, Any] | None = None  # DRV: the verified equality filters
    kept: Fetched | None = None  # DRV: the filtered call, read whole
    tried: list[dict[str, Any]] = field(default_factory=list)  # pivots tried: value, total, distinct keys


async def scan_junction(
    ex: ToolExecutor,
    spec: ToolSpec,
    tid: str,
    args: Mapping[str, Any],
    fields: Sequence[str],
    phi: int,
    memory_bound: int,
    rng: np.random.Generator,
    max_pages: int = 50,
    pivot_tries: int = 8,
) -> Scan:
    """Type the junction on `fields` of the logical call `spec(args)` with at most `memory_bound`
    records held; for DRV, find and verify a filtered call with 1..φ keys (Rejection('no_valid_pivot')
    when none of `pivot_tries` candidates passes)."""
    sent = page_args(spec, typed_args(spec, args), memory_bound)
    g = spec.generic_params
    res = await ex.call(spec, sent)
    if not res.ok:
        raise Rejection("call_failed", f"{spec.name}: {res.outcome.value} {res.detail}"[:200])
    total = res.total_count if res.total_count is not None else res.record_count
    page_size = res.record_count
    keys: dict[tuple, None] = {}
    sample: list[dict[str, Any]] = []
    seen = 0
    pages = 1

    def take(records: Sequence[Mapping[str, Any]]) -> None:
        nonlocal seen
        for r in records:
            seen += 1
            k = key_of(r, fields)
            if k is not None and len(keys) <= phi:
                keys.setdefault(k, None)
            if len(sample) < memory_bound:  # reservoir sampling (Algorithm R), seeded
                sample.append(dict(r))
            else:
                j = int(rng.integers(seen))
                if j < memory_bound:
                    sample[j] = dict(r)

    take(res.records)
    while len(keys) <= phi and seen < total:
        if not (g.page and g.page in spec.params and page_size):
            raise Rejection("response_too_large", f"{spec.name}: {total} records and no way to page")
        if pages >= max_pages:
            raise Rejection(
                "response_too_large",
                f"{spec.name}: {len(keys)} distinct {', '.join(fields)} in {seen} of {total} records "
                f"({pages} pages): not yet above φ={phi}, and not all read",
            )
        pages += 1
        more = await ex.call(spec, {**sent, g.page: pages})
        if not more.ok:
            raise Rejection("call_failed", f"{spec.name} page {pages}: {more.outcome.value} {more.detail}"[:200])
        if not more.records:
            break
        take(more.records)
    exact = seen >= total
    n = len(keys)
    if n == 0:
        raise Rejection("junction_field_missing", f"no record of {spec.name} has {', '.join(fields)}")
    jtype = SEQ if n == 1 else FAN if n <= phi else DRV
    scan = Scan(
        tool_id=tid,
        args=dict(res.args),
        total=total if not exact else max(total, seen),
        records_read=seen,
        pages_read=pages,
        keys=list(keys),
        sample=sample,
        jtype=jtype,
        exact=exact,
    )
    if jtype == DRV:
        await _verified_pivot(ex, spec, tid, dict(args), fields, phi, memory_bound, rng, scan, pivot_tries)
    return scan


async def _verified_pivot(
    ex: ToolExecutor,
    spec: ToolSpec,
    tid: str,
    args: dict[str, Any],
    fields: Sequence[str],
    phi: int,
    bound: int,
    rng: np.random.Generator,
    scan: Scan,
    tries: int,
) -> None:
    """Equality pivots from the sample on fields the tool also filters by; the first whose filtered call
    (read whole) holds 1..φ distinct keys becomes the process node."""
    generic = set(spec.generic_params.names())
    filters = sorted(
        f for f in spec.params if f not in generic and f not in args and f not in fields and f in _fields(scan.sample)
    )
    usable = [r for r in scan.sample if key_of(r, fields) is not None]
    picks = rng.permutation(len(usable))[:tries]  # seeded: which sampled records anchor a filter
    for i in picks:
        r = usable[int(i)]
        own = [f for f in filters if isinstance(r.get(f), str | int) and not isinstance(r.get(f), bool) and r[f] != ""]
        filt: dict[str, Any] = {}
        for j in rng.permutation(len(own)):  # narrow one equality at a time until the filtered call is small
            filt[own[int(j)]] = r[own[int(j)]]
            try:
                got = await fetch(ex, spec, tid, {**args, **filt}, bound)
            except Rejection as e:
                scan.tried.append({"filters": dict(filt), "rejected": e.reason})
                if e.reason == "response_too_large":
                    continue  # still too many records: add the next equality
                break
            m = len(distinct_keys(got.records, fields))
            scan.tried.append({"filters": dict(filt), "total": got.total, "distinct": m})
            if 1 <= m <= phi and got.total == len(got.records):
                scan.node = {"operator": "eq", "filters": dict(filt), "n_in": scan.total, "n_out": m, "verified": True}
                scan.kept = got
                return
    raise Rejection(
        "no_valid_pivot",
        f"{spec.name}: no equality filter anchored on {min(tries, len(usable))} sampled records narrows "
        f"{', '.join(fields)} down to 1..{phi} values (tried: {scan.tried[:4]})"[:600],
    )


def _fields(records: Sequence[Mapping[str, Any]]) -> set[str]:
    return {k for r in records[:50] for k in r}
