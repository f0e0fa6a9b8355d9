"""Tool results for the exported conversations.

Golden actions keep only digests and counts, so the results a model reads in an exported
conversation are obtained again:

- `replay` (default): every exported task's golden actions are re-executed once, step by step
  (calls of one step concurrently), in a fresh executor session per task - exactly as
  `factory.synthesis.replay` does - with the executor configured as at synthesis time (same
  record bound), so each call's digest must equal the stored `call_digest` and
  `sha256([records, total_count])` the stored `result_digest` (a search replayed on the published,
  decontaminated retrieval_index passes when it still returns the passages its task used: its other
  passages may differ from the synthesis version's; the row is flagged `search_results_from_served_index`);
  a mismatch, a replayed answer that
  differs from the stored one, or a failed call is a `Problem` (the row is dropped or flagged);
  a task whose calls failed is replayed again up to `replay_attempts` times (transient faults).
  State-changing calls issued in parallel race for ids and state (two `create_playlist` calls of one
  step get ids in arrival order), so when their results mismatch, the task is replayed with that
  step's calls one at a time in each order of its state-changing calls (up to
  `replay_order_attempts` orders) until the recorded results are reproduced; the row is flagged
  `parallel_state_changes_serialized` with the order found.
- `recorded`: the trajectories asset's stored `sample` records (the first records of each call),
  marked as truncated; digests cannot be checked.

Every result is redacted by the executor (keys → `<KEY>`); the keys the sessions handed out are
collected (in memory only) so that the written files can be scanned for them.

`render_result` turns one result into the `tool` message content: compact JSON
`{"total_count", "records", "truncated"?}` with at most `max_result_records` records, string
values cut at `max_string_chars` and the whole text under `max_result_chars`; what was cut is
said in a `truncated` marker, e.g. `{"shown": 20, "omitted": 892, "reason": "record cap 20"}`.

Truncation never loses what the conversation uses: `needed_records` finds, per call, the records a
later call's argument is read from (the first record of an earlier call holding that value) and the
records the answer is read from (`answer_spec` value references and counts read from a record
field); `render_result` keeps those records beyond every cap (in their original order, their used
fields uncut) and the marker counts them (`"kept": n, "reason": "...; n record(s) a later call or the
answer uses kept"`).
"""

import asyncio
import itertools
import json
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factory.synthesis import answers
from factory.tools.executor import ToolExecutor
from factory.tools.fingerprint import sha256_digest
from factory.tools.outcomes import is_success_outcome

STRING_MARK = "…[cut]"


@dataclass
class CallView:
    """What a model sees of one executed call."""

    records: list[dict[str, Any]]
    total_count: int | None
    record_count: int
    outcome: str
    result_digest: str = ""
    sampled: bool = False  # recorded mode: `records` are the first ones only


@dataclass
class Problem:
    reason: (
        str  # replay_call_failed | call_digest_mismatch | result_digest_mismatch | trajectory_missing | answer_changed
    )
    detail: str


@dataclass
class TaskResults:
    calls: list[CallView] = field(default_factory=list)  # aligned with golden_actions
    problems: list[Problem] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    attempts: int = 0
    answer: dict[str, Any] | None = None
    mismatched: list[int] = field(default_factory=list)  # golden actions whose result digest differed


def _transient(outcome: str) -> bool:
    return outcome in ("rate_limit", "timeout", "server_error", "endpoint_unavailable")


async def _replay_once(
    task: Mapping[str, Any],
    make_executor: Callable[[], ToolExecutor],
    secrets: set[str],
    orders: Mapping[int, Sequence[int]] | None = None,
) -> tuple[list[Any], list[bool]]:
    """(results aligned with the golden actions, which calls change state). Calls of one step run
    concurrently, except state-changing steps (one at a time in golden order, as synthesis ran them)
    and the steps of `orders`, whose calls run one at a time in the given order."""
    actions = list(task["golden_actions"])
    out: list[Any] = [None] * len(actions)
    changing = [False] * len(actions)
    async with make_executor() as ex:
        for i, a in enumerate(actions):
            changing[i] = ex.tool(f"{a['platform']}.{a['tool']}").state_changing
        for step in sorted({a["step"] for a in actions}):
            idx = [i for i, a in enumerate(actions) if a["step"] == step]
            if (orders and step in orders) or any(changing[i] for i in idx):
                # an explicit order, or state changes: one at a time (golden order unless told otherwise)
                for i in orders[step] if orders and step in orders else idx:
                    out[i] = await ex.call(f"{actions[i]['platform']}.{actions[i]['tool']}", actions[i]["args"])
                continue
            results = await ex.call_many(
                [(f"{actions[i]['platform']}.{actions[i]['tool']}", actions[i]["args"]) for i in idx]
            )
            for i, r in zip(idx, results, strict=True):
                out[i] = r
        secrets.update(ex.known_secrets())
    return out, changing


def _search_still_serves(action: Mapping[str, Any], records: Sequence[Any]) -> bool:
    """A golden retrieval call whose passages (`passage_ids`) are all among the replayed results."""
    if action.get("source_type") != "retrieval" or not action.get("passage_ids"):
        return False
    got = {r.get("id") for r in records if isinstance(r, Mapping)}
    return set(action["passage_ids"]) <= got


def _verify(task: Mapping[str, Any], results: Sequence[Any]) -> TaskResults:
    tr = TaskResults()
    for i, (a, r) in enumerate(zip(task["golden_actions"], results, strict=True)):
        digest = sha256_digest([r.records, r.total_count])
        tr.calls.append(
            CallView(
                records=list(r.records),
                total_count=r.total_count,
                record_count=r.record_count,
                outcome=r.outcome.value,
                result_digest=digest,
            )
        )
        where = f"step {a['step']} {a['platform']}.{a['tool']}"
        if not r.ok:
            tr.problems.append(Problem("replay_call_failed", f"{where}: {r.outcome.value} {r.detail}"[:300]))
        elif a.get("call_digest") and r.call_digest != a["call_digest"]:
            tr.problems.append(Problem("call_digest_mismatch", f"{where}: the call sent differs from the recorded one"))
        elif a.get("result_digest") and digest != a["result_digest"] and _search_still_serves(a, r.records):
            # a search replayed on the published (decontaminated) retrieval_index: the passages its task used are
            # returned, others may differ from the synthesis version's (a removed chunk is no longer among them)
            tr.flags.append(f"search_results_from_served_index: step {a['step']} {a['tool']}")
        elif a.get("result_digest") and digest != a["result_digest"]:
            tr.mismatched.append(i)
            tr.problems.append(
                Problem(
                    "result_digest_mismatch",
                    f"{where}: stored {a['result_digest'][:19]}… replayed {digest[:19]}… "
                    f"({r.record_count} records, total {r.total_count})",
                )
            )
    if not tr.problems and not task["golden_actions"] and (task.get("answer_spec") or {}).get("kind") == "unanswerable":
        return tr  # a changes_answer policy: no permitted call, the answer is the unanswerable sentence
    if not tr.problems:
        rows = [{"records": c.record_count, "total_count": c.total_count, "records_list": c.records} for c in tr.calls]
        try:
            tr.answer = answers.compute(task["answer_spec"], rows, task["golden_actions"])
        except (KeyError, IndexError, TypeError, ValueError) as e:
            tr.flags.append(f"answer_not_recomputed: {type(e).__name__}")
        else:
            if task.get("answer_source", "synthesis") == "synthesis" and tr.answer["value"] != task["answer"]["value"]:
                tr.problems.append(
                    Problem(
                        "answer_changed", f"replayed answer {tr.answer['value']!r} ≠ stored {task['answer']['value']!r}"
                    )
                )
    return tr


def _serial_orders(task: Mapping[str, Any], tr: TaskResults, changing: Sequence[bool], limit: int):
    """Orders to try for steps where parallel state-changing calls mismatched (they race for ids and state):
    each such step run one call at a time, read-only calls first, the state-changing ones permuted."""
    actions = task["golden_actions"]
    steps = sorted({actions[i]["step"] for i in tr.mismatched})
    per_step = {}
    for step in steps:
        idx = [i for i, a in enumerate(actions) if a["step"] == step]
        moving = [i for i in idx if changing[i]]
        if len(moving) < 2:
            return []
        per_step[step] = ([i for i in idx if not changing[i]], moving)
    combos = itertools.product(*(itertools.permutations(m) for _, m in per_step.values()))
    return [
        {step: [*fixed, *perm] for (step, (fixed, _)), perm in zip(per_step.items(), combo, strict=True)}
        for combo in itertools.islice(combos, limit)
    ]


async def _replay_task(
    task, make_executor, attempts: int, order_attempts: int, secrets: set[str], sem: asyncio.Semaphore
) -> TaskResults:
    async with sem:
        tr = TaskResults()
        changing: list[bool] = []
        for n in range(1, attempts + 1):
            results, changing = await _replay_once(task, make_executor, secrets)
            tr = _verify(task, results)
            tr.attempts = n
            if not any(p.reason == "replay_call_failed" for p in tr.problems):
                break
            if not all(_transient(c.outcome) for c in tr.calls if not is_success_outcome(c.outcome)):
                break
        if tr.mismatched and all(p.reason in ("result_digest_mismatch", "answer_changed") for p in tr.problems):
            for orders in _serial_orders(task, tr, changing, order_attempts):
                results, _ = await _replay_once(task, make_executor, secrets, orders)
                again = _verify(task, results)
                if not again.problems:
                    again.attempts = tr.attempts + 1
                    again.flags.append(
                        "parallel_state_changes_serialized: "
                        + "; ".join(
                            f"step {s} order {[task['golden_actions'][i]['tool'] for i in o]}"
                            for s, o in orders.items()
                        )  # fmt: skip
                    )
                    return again
        return tr


def replay_all(
    tasks: Sequence[Mapping[str, Any]],
    make_executor: Callable[[], ToolExecutor],
    *,
    attempts: int = 2,
    order_attempts: int = 6,
    concurrency: int = 4,
) -> tuple[list[TaskResults], set[str]]:
    """Replay every task (fresh session each); returns per-task results and the keys handed out."""
    secrets: set[str] = set()

    async def go() -> list[TaskResults]:
        sem = asyncio.Semaphore(concurrency)
        return list(
            await asyncio.gather(
                *(_replay_task(t, make_executor, attempts, order_attempts, secrets, sem) for t in tasks)
            )
        )

    return asyncio.run(go()), secrets


def recorded_all(
    tasks: Sequence[Mapping[str, Any]], trajectories: Mapping[str, Mapping[str, Any]]
) -> list[TaskResults]:
    """Results from the trajectories' stored samples (first records only; digests not checkable)."""
    by_id = {t["trajectory_id"]: t for value in trajectories.values() for t in (value or {}).get("trajectories") or []}
    out = []
    for task in tasks:
        tr = TaskResults(flags=["results_recorded_sample"])
        traj = by_id.get(task["lineage"]["trajectory_id"])
        if traj is None:
            tr.problems.append(Problem("trajectory_missing", f"trajectory {task['lineage']['trajectory_id'][:19]}…"))
            out.append(tr)
            continue
        stored = {a["call_digest"]: a for a in traj["golden_actions"]}
        for a in task["golden_actions"]:
            s = stored.get(a.get("call_digest", ""))
            if s is None:
                tr.problems.append(Problem("trajectory_missing", f"step {a['step']} {a['tool']}: call not recorded"))
                break
            sample = list(s.get("sample") or [])
            tr.calls.append(
                CallView(
                    records=sample,
                    total_count=s.get("total_count"),
                    record_count=int(s.get("records") or 0),
                    outcome=s.get("outcome", "semantic_success"),
                    result_digest=s.get("result_digest", ""),
                    sampled=len(sample) < int(s.get("records") or 0),
                )
            )
        out.append(tr)
    return out


# --------------------------------------------------------------------------- rendering


def _cut_strings(obj: Any, limit: int) -> tuple[Any, int]:
    """Strings longer than `limit` cut with a marker; returns (value, strings cut)."""
    if isinstance(obj, str):
        return (obj[:limit] + STRING_MARK, 1) if len(obj) > limit else (obj, 0)
    if isinstance(obj, dict):
        n = 0
        out = {}
        for k, v in obj.items():
            out[k], c = _cut_strings(v, limit)
            n += c
        return out, n
    if isinstance(obj, list):
        n = 0
        items = []
        for v in obj:
            x, c = _cut_strings(v, limit)
            items.append(x)
            n += c
        return items, n
    return obj, 0


Needed = dict[int, dict[int, set[str]]]  # call position → record index → fields read from it


def _scalars(v: Any) -> list[Any]:
    if isinstance(v, list):
        return [x for item in v for x in _scalars(item)]
    if isinstance(v, dict) or v is None or isinstance(v, bool):
        return []
    if isinstance(v, str) and (not v.strip() or v == "<KEY>"):
        return []
    return [v]


def _answer_reads(spec: Any) -> list[tuple[Mapping[str, Any], str | None]]:
    """(call reference, field) of every record an answer spec reads: each reference of a `value` spec
    (its field), and each count reference that reads a record (`field` or `record`)."""
    out: list[tuple[Mapping[str, Any], str | None]] = []
    if isinstance(spec, list):
        for x in spec:
            out += _answer_reads(x)
    elif isinstance(spec, Mapping):
        for k, v in spec.items():
            if k == "calls" and isinstance(v, list):
                for r in v:
                    if not isinstance(r, Mapping):
                        continue
                    if spec.get("kind") == "value":
                        out.append((r, spec.get("field")))
                    elif r.get("field") or r.get("record"):
                        out.append((r, r.get("field")))
            elif k == "cond_call" and isinstance(v, Mapping):
                if v.get("field") or v.get("record"):
                    out.append((v, v.get("field")))
            else:
                out += _answer_reads(v)
    return out


def _value_key(v: Any) -> tuple[str, Any]:
    """The key under which two values are `answers.same_scalar`: numbers by value, text NFC-normalized."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return ("n", float(v))
    text = unicodedata.normalize("NFC", str(v)).strip()
    try:
        return ("n", float(text))
    except ValueError:
        return ("s", text)


def _value_index(records: Sequence[Any]) -> dict[tuple[str, Any], tuple[int, str]]:
    out: dict[tuple[str, Any], tuple[int, str]] = {}
    for r, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            continue
        for f, x in rec.items():
            if x is None or isinstance(x, bool | dict | list):
                continue
            out.setdefault(_value_key(x), (r, str(f)))
    return out


def needed_records(task: Mapping[str, Any], calls: Sequence[CallView]) -> Needed:
    """The records of each call that the conversation uses later: for every argument value of a later
    call, the first record of each earlier-step call holding it (in any field); for the answer, the record
    each reference of `answer_spec` reads. `calls` are aligned with the golden actions."""
    actions = task["golden_actions"]
    need: Needed = {}

    def add(pos: int, rec: int, fld: str | None) -> None:
        fields = need.setdefault(pos, {}).setdefault(rec, set())
        if fld:
            fields.add(fld)

    index: dict[int, dict[tuple[str, Any], tuple[int, str]]] = {}  # call → value key → (first record, field)
    for later in actions:
        values = [x for v in (later.get("args") or {}).values() for x in _scalars(v)]
        if not values:
            continue
        for pos, earlier in enumerate(actions):
            if earlier["step"] >= later["step"] or pos >= len(calls):
                continue
            if pos not in index:
                index[pos] = _value_index(calls[pos].records)
            for value in values:
                hit = index[pos].get(_value_key(value))
                if hit is not None:
                    add(pos, *hit)
    try:
        steps = answers.layout(actions)
        for ref, fld in _answer_reads(task.get("answer_spec") or {}):
            pos = answers.position(ref, steps)
            if pos >= len(calls):
                continue
            recs = calls[pos].records
            chosen = answers.select(recs, ref.get("record"))
            r = next((k for k, x in enumerate(recs) if x is chosen), None)
            if r is not None:
                add(pos, r, fld)
    except answers.SpecError:
        pass  # an unreadable spec is reported by the replay check (answer_not_recomputed), not here
    return need


def _compact(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False)


def render_result(
    view: CallView,
    *,
    max_records: int,
    max_chars: int,
    max_string: int,
    keep: Mapping[int, set[str]] | None = None,
) -> tuple[str, bool]:
    """(tool message content, truncated?) for one call. `keep` (record index → fields; `needed_records`)
    names records shown whatever the caps, with those fields never cut."""
    if not is_success_outcome(view.outcome):
        return _compact({"error": view.outcome}), False
    keep = {r: f for r, f in (keep or {}).items() if 0 <= r < len(view.records)}
    total = view.total_count if view.total_count is not None else view.record_count
    records: list[Any] = []
    cut_strings = 0
    for r, rec in enumerate(view.records):
        if r in keep and isinstance(rec, dict):
            kept_rec: dict[str, Any] = {}
            for k, v in rec.items():
                kept_rec[k], c = (v, 0) if k in keep[r] else _cut_strings(v, max_string)
                cut_strings += c
            records.append(kept_rec)
        else:
            x, c = _cut_strings(rec, max_string)
            records.append(x)
            cut_strings += c
    available = view.record_count if view.sampled else len(records)
    beyond = sorted(r for r in keep if r >= max_records)
    shown = sorted(set(range(min(max_records, len(records)))) | set(beyond))
    reasons = []
    if view.sampled:
        reasons.append("recorded sample")
    if len(records) > max_records:
        reasons.append(f"record cap {max_records}")
    if cut_strings:
        reasons.append(f"{cut_strings} long string(s) cut at {max_string} chars")

    def text(idx: list[int], extra: list[str]) -> str:
        body: dict[str, Any] = {"total_count": total, "records": [records[i] for i in idx]}
        omitted = max(available - len(idx), 0)
        kept = sum(1 for r in beyond if r in idx)
        why = reasons + extra + ([f"{kept} record(s) a later call or the answer uses kept"] if kept else [])
        if omitted or reasons or extra:
            body["truncated"] = {"shown": len(idx), "omitted": omitted, "reason": "; ".join(why) or "record cap"}
            if kept:
                body["truncated"]["kept"] = kept
        return _compact(body)

    out = text(shown, [])
    while len(out) > max_chars:
        droppable = [i for i in shown if i not in keep]
        if not droppable or len(shown) <= 1:
            break
        shown.remove(droppable[-1])
        out = text(shown, [f"message cap {max_chars} chars"])
    truncated = "truncated" in json.loads(out)
    return out, truncated
