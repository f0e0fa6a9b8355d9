"""The evaluation stages of VAKRA §4 (issue 17 item 6), on top of an episode of `factory eval`.

A waterfall: each stage gates the next and a failure is attributed to the earliest stage that fails.

1. ``tool_responses`` — the agent's calls were executed live; their responses are compared with the
   ground-truth responses, obtained by re-executing every sufficient path of the task now (the golden
   path and its alternatives: any one recovered passes, so multiple valid paths pass). Containment
   first: a path is recovered when every value of its responses (scalar values of the records, counts)
   is among the values of the agent's responses. A path of which at least `partial` of the values are
   recovered is inconclusive (VAKRA sends those to an LLM judge; here a judge callable can decide them,
   without one they fail with `inconclusive: true` so the report can count them). A task a policy makes
   unanswerable has no ground-truth calls: stage 1 passes.
2. ``final_response`` — (i) groundedness: every number the answer states is one the agent's tool
   responses hold, one the question states, or the gold value read from recovered responses (a stage-1
   pass makes the gold answer grounded by construction: the answer spec computes it from those
   responses); (ii) correctness: the RESPONSE score of `factory.eval.scoring`, or, for a task whose policy
   changes the answer, that the reply says no permitted tool can answer and does not state the answer the
   forbidden source would give.
3. ``policy`` — `factory.retrieval.policy.adherence`: no call of a forbidden source type (or of a forbidden API
   platform, a platform-scoped policy), independent of
   the answer (a right answer through a forbidden source fails here).

Scores: a task passes when all three stages pass; the weighted score gives multi-source tasks
(hop types mixing API and RAG) double weight relative to single-source ones (VAKRA §4, Scoring).
Results are reported by hop type and by policy category.
"""

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from factory.records import unrestricted
from factory.retrieval.policy import CATEGORIES, adherence, category_of, expected_answer, hop_type, states_unanswerable

STAGES = ("tool_responses", "final_response", "policy")
SINGLE_SOURCE = ("API", "RAG")
MULTI_SOURCE_WEIGHT = 2.0
_NUM = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")
_SKIP_FIELDS = {"api_key", "key", "serviceKey", "score"}  # a search score is ranking noise, not information


def weight(task: Mapping[str, Any]) -> float:
    """VAKRA scoring: multi-source queries count double relative to single-source ones."""
    return 1.0 if hop_type(task) in SINGLE_SOURCE else MULTI_SOURCE_WEIGHT


def _norm(v: Any) -> str | None:
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        f = float(v)
        return str(int(f)) if f.is_integer() else f"{f:.6g}"
    s = " ".join(str(v).split()).casefold()
    return s or None


def response_values(records: Iterable[Any], *, total_count: Any = None) -> set[str]:
    """The information of one response: every scalar value of its records (nested ones too), normalized,
    plus its total count."""
    out: set[str] = set()

    def walk(x: Any, field: str | None) -> None:
        if field in _SKIP_FIELDS:
            return
        if isinstance(x, Mapping):
            for k, v in x.items():
                walk(v, str(k))
        elif isinstance(x, list | tuple):
            for v in x:
                walk(v, field)
        else:
            n = _norm(x)
            if n is not None:
                out.add(n)

    walk(list(records), None)
    if total_count is not None:
        n = _norm(total_count)
        if n is not None:
            out.add(n)
    return out


def tool_responses(
    gt_paths: Sequence[Sequence[Mapping[str, Any]]],
    predicted: Sequence[Mapping[str, Any]],
    *,
    partial: float = 0.8,
    judge: Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]], bool | None] | None = None,
) -> dict[str, Any]:
    """Stage 1. `gt_paths`: per sufficient path, its re-executed calls ({"tool", "records", "total_count",
    "ok"}); `predicted`: the agent's executed calls with their responses (same keys). Passes when every value
    of one path's responses is among the predicted responses' values."""
    if not gt_paths or all(not p for p in gt_paths):
        return {
            "passed": True,
            "method": "no_ground_truth_calls",
            "path": None,
            "recovered": 1.0,
            "inconclusive": False,
        }
    got: set[str] = set()
    for c in predicted:
        if c.get("ok", True):
            got |= response_values(c.get("records") or [], total_count=c.get("total_count"))
    best: dict[str, Any] = {"passed": False, "method": "containment", "path": None, "recovered": 0.0}
    for i, path in enumerate(gt_paths):
        if any(not c.get("ok", True) for c in path):
            continue  # a path that fails now is no ground truth (drift; the report's replay shows it)
        want: set[str] = set()
        for c in path:
            want |= response_values(c.get("records") or [], total_count=c.get("total_count"))
        share = len(want & got) / len(want) if want else 1.0
        if share == 1.0:
            return {"passed": True, "method": "containment", "path": i, "recovered": 1.0, "inconclusive": False,
                    "missing": []}  # fmt: skip
        if share > best["recovered"]:
            best = {"passed": False, "method": "containment", "path": i, "recovered": round(share, 4),
                    "missing": sorted(want - got)[:10]}  # fmt: skip
    inconclusive = best["recovered"] >= partial
    if inconclusive and judge is not None and best["path"] is not None:
        verdict = judge(gt_paths[best["path"]], predicted)
        if verdict is not None:
            return {**best, "passed": bool(verdict), "method": "judge", "inconclusive": False}
    return {**best, "inconclusive": inconclusive}


def _numbers(text: str) -> set[str]:
    out = set()
    for m in _NUM.findall(text or ""):
        try:
            n = _norm(float(m.replace(",", "")))
        except ValueError:
            continue
        if n is not None:
            out.add(n)
    return out


def _states_value(text: str, gold: Any) -> bool:
    """Whether the reply states the gold value (a number among its numbers, or a string inside it, normalized;
    every scalar of a list or mapping counts): the answer the forbidden source would have given."""
    vals = (
        [gold] if not isinstance(gold, list | tuple | dict) else list(gold.values() if isinstance(gold, dict) else gold)
    )
    nums, low = _numbers(text), " ".join(text.split()).casefold()
    for v in vals:
        n = _norm(v)
        if n is None:
            continue
        if isinstance(v, int | float) or _NUM.fullmatch(str(v).strip()):
            if n in nums or _numbers(str(v)) & nums:
                return True
        elif len(n) >= 2 and n in low:
            return True
    return False


def final_response(
    task: Mapping[str, Any],
    answer: str | None,
    predicted: Sequence[Mapping[str, Any]],
    response: Mapping[str, Any] | None,
    stage1_passed: bool,
) -> dict[str, Any]:
    """Stage 2: groundedness of the answer in the tool responses, and its correctness (`response` is the
    RESPONSE score of factory.eval.scoring for the task's own answer; ignored for an unanswerable task)."""
    text = answer or ""
    refusal = expected_answer(task)
    if refusal is not None:
        # the answer the forbidden source would give: the unrestricted task's (the published answer is the refusal)
        gold = (unrestricted(task).get("answer") or {}).get("value")
        leaks = _states_value(text, gold) and not states_unanswerable(str(gold))
        correct = states_unanswerable(text) and not leaks
        return {
            "passed": correct,
            "grounded": True,  # a statement that the permitted tools cannot answer claims nothing from them
            "correct": correct,
            "method": "policy_unanswerable",
            "states_unanswerable": states_unanswerable(text),
            "states_forbidden_answer": bool(leaks),
        }
    allowed: set[str] = set()
    for c in predicted:
        if c.get("ok", True):
            values = response_values(c.get("records") or [], total_count=c.get("total_count"))
            # a number a text field states counts too: a passage's "5.4% 감소", a note's "sold 12 copies"
            allowed |= values | {n for v in values if not _NUM.fullmatch(v) for n in _numbers(v)}
            allowed.add(str(len(c.get("records") or [])))
    allowed |= _numbers(str(task.get("query") or ""))
    if stage1_passed:
        # every response the answer needs was recovered: the numbers the published answer states are derived from
        # them (its value, and what its sentence writes of it: '6290521 bytes (6.3 MB)', a fall's size '5.4% 감소')
        gold = task.get("answer") or {}
        allowed |= _numbers(json.dumps(gold.get("value"), default=str)) | _numbers(str(gold.get("text") or ""))
    claims = _numbers(text)
    ungrounded = sorted(c for c in claims if c not in allowed)
    grounded = not ungrounded
    correct = bool(response and response.get("passed"))
    return {
        "passed": grounded and correct,
        "grounded": grounded,
        "ungrounded_numbers": ungrounded[:10],
        "correct": correct,
        "method": (response or {}).get("method") or "none",
    }


def score(
    task: Mapping[str, Any],
    *,
    gt_paths: Sequence[Sequence[Mapping[str, Any]]],
    predicted: Sequence[Mapping[str, Any]],
    answer: str | None,
    response: Mapping[str, Any] | None,
    source_of: Callable[[str], str | None],
    partial: float = 0.8,
    platform_of: Callable[[str], str | None] | None = None,
) -> dict[str, Any]:
    """All three stages of one episode, the waterfall and the task's weight.

    `predicted` are the agent's calls in order ({"tool", "status", "ok", "records", "total_count"}); every
    attempted call counts for stage 3, executed ones for stage 1."""
    ran = [c for c in predicted if c.get("status", "executed") == "executed"]
    s1 = tool_responses(gt_paths if expected_answer(task) is None else [], ran, partial=partial)
    s2 = final_response(task, answer, ran, response, s1["passed"])
    s3 = adherence(task.get("policy"), predicted, source_of, platform_of)
    stages = {"tool_responses": s1, "final_response": s2, "policy": s3}
    alive, first, waterfall = True, None, {}
    for st in STAGES:
        alive = alive and bool(stages[st]["passed"])
        waterfall[st] = alive
        if not stages[st]["passed"] and first is None:
            first = st
    return {
        "passed": alive,
        "first_failure": first,
        "waterfall": waterfall,
        "stages": stages,
        "hop_type": hop_type(task),
        "policy_category": category_of(task),
        "weight": weight(task),
    }


def _group(rows: Sequence[Mapping[str, Any]], key: str, order: Sequence[str] | None = None) -> list[dict[str, Any]]:
    keys = list(order or []) + sorted({str(r[key]) for r in rows} - set(order or []))
    out = []
    for k in keys:
        sub = [r for r in rows if str(r[key]) == k]
        n = len(sub)
        if not n:
            continue
        out.append(
            {
                key: k,
                "episodes": n,
                **{f"{st}_pass": round(sum(1 for r in sub if r["waterfall"][st]) / n, 4) for st in STAGES},
                "policy_adherence": round(sum(1 for r in sub if r["stages"]["policy"]["passed"]) / n, 4),
                "passed": round(sum(1 for r in sub if r["passed"]) / n, 4),
            }
        )
    return out


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The report of the stages over episodes (rows of `score`): overall and weighted pass rates, the first
    failing stage, and the same by hop type and by policy category."""
    n = len(rows)
    if not n:
        return {"episodes": 0, "passed": None, "weighted_score": None, "by_hop_type": [], "by_policy": []}
    w = sum(r["weight"] for r in rows)
    first: dict[str, int] = {st: 0 for st in STAGES}
    for r in rows:
        if r["first_failure"]:
            first[r["first_failure"]] += 1
    return {
        "episodes": n,
        "passed": round(sum(1 for r in rows if r["passed"]) / n, 4),
        "weighted_score": round(sum(r["weight"] for r in rows if r["passed"]) / w, 4),
        "stage_pass": {st: round(sum(1 for r in rows if r["waterfall"][st]) / n, 4) for st in STAGES},
        "first_failure": first,
        "policy_violations": sum(1 for r in rows if not r["stages"]["policy"]["passed"]),
        "inconclusive_stage1": sum(1 for r in rows if r["stages"]["tool_responses"].get("inconclusive")),
        "by_hop_type": _group(rows, "hop_type"),
        "by_policy": _group(rows, "policy_category", CATEGORIES),
    }
