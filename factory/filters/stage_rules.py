"""Stage 1 of the cascade: deterministic rules on the task record (EDGE App. F, stage 1; pure).

Checks, in order (each returns a `Verdict`; the first failing one is the rejection reason):
malformed_schema, non_reproducible, error_ground_truth, malformed_query; then near_duplicate
across the domain's tasks that passed the others (an earlier kept task wins).
"""

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import jsonschema
from pydantic import ValidationError

from factory.filters.compare import as_number, norm_text
from factory.filters.context import TaskContext
from factory.records import Stage, Task, Verdict
from factory.synthesis import answers
from factory.tools.outcomes import is_success_outcome
from factory.tools.spec import ToolSpec

STAGE: Stage = "rules"
ORDER = ("malformed_schema", "undocumented_field", "non_reproducible", "error_ground_truth", "malformed_query")


def _verdict(check: str, problem: str | None, ok_detail: str) -> Verdict:
    if problem is None:
        return Verdict(stage=STAGE, check=check, passed=True, judge="rules", detail=ok_detail)
    return Verdict(stage=STAGE, check=check, passed=False, reason=check, judge="rules", detail=problem[:500])


# --------------------------------------------------------------------------- malformed_schema


def _types(schema: Mapping[str, Any]) -> set[str]:
    out: set[str] = set()
    t = schema.get("type")
    if isinstance(t, str):
        out.add(t)
    elif isinstance(t, list):
        out.update(x for x in t if isinstance(x, str))
    for k in ("anyOf", "oneOf"):
        for sub in schema.get(k) or []:
            if isinstance(sub, Mapping):
                out |= _types(sub)
    return out


def wire_args(spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments as the tool receives them: a numeric string in a query/path/header parameter is the same
    bytes on the wire as the number, so it is read as the number its schema declares."""
    out = dict(args)
    for name, value in args.items():
        schema = spec.params.get(name)
        if not isinstance(value, str) or schema is None:
            continue
        if spec.param_locations.get(name, "query") not in ("query", "path", "header"):
            continue
        types = _types(schema)
        n = as_number(value)
        if n is None or "string" in types:
            continue
        if "integer" in types and float(n).is_integer():
            out[name] = int(n)
        elif "number" in types:
            out[name] = n
    return out


def _answer_shape(answer: Mapping[str, Any]) -> str | None:
    t, v = answer.get("type"), answer.get("value")
    if t == "number" and as_number(v) is None:
        return f"answer type 'number' but value {v!r} is not a number"
    if t == "string" and isinstance(v, list | dict):
        return f"answer type 'string' but value is a {type(v).__name__}"
    if t == "judge" and isinstance(v, dict):
        return "answer type 'judge' but value is an object"
    if not str(answer.get("text", "")).strip():
        return "answer text is empty"
    return None


def check_schema(ctx: TaskContext, validated: bool, error: str | None) -> Verdict:
    check = "malformed_schema"
    if not validated:
        return _verdict(check, f"Task validation failed: {error}", "")
    t = ctx.task
    problem = _answer_shape(t["answer"])
    if problem is None:
        for i, (a, spec) in enumerate(zip(t["golden_actions"], ctx.specs, strict=True)):
            if spec is None:
                problem = f"action {i} (step {a['step']}): unknown tool {a.get('platform')}.{a.get('tool')}"
                break
            errors = sorted(
                jsonschema.Draft202012Validator(spec.input_schema).iter_errors(wire_args(spec, a["args"])),
                key=lambda e: list(e.path),
            )
            if errors:
                e = errors[0]
                where = ".".join(str(p) for p in e.path) or "(arguments)"
                problem = f"action {i} {a['tool']}: {where}: {e.message}"[:300]
                break
    if problem is None:
        problem = _spec_problem(t)
    if problem is None:
        missing = sorted(
            {a["tool"] for i, a in enumerate(t["golden_actions"]) if i not in ctx.key_actions}
            - set(t["available_tools"])
        )
        if missing:
            problem = f"golden tools missing from available_tools: {', '.join(missing)}"
        elif t["max_allowed_calls"] < len(t["golden_actions"]):
            problem = f"max_allowed_calls {t['max_allowed_calls']} < {len(t['golden_actions'])} golden calls"
    return _verdict(check, problem, "valid Task; answer fits its type; arguments validate against the tools")


def _spec_problem(t: Mapping[str, Any]) -> str | None:
    """An answer spec (of the golden path or of a recorded alternative) whose references name no call."""
    paths = [("answer_spec", t["golden_actions"], t["answer_spec"])]
    paths += [
        (f"alternative path {k}", p["actions"], p["answer_spec"])
        for k, p in enumerate(t.get("alternative_paths") or [])
    ]
    for name, actions, spec in paths:
        try:
            answers.positions(spec, actions)
        except answers.SpecError as e:
            return f"{name}: {e}"
    return None


def validate_task(task: Mapping[str, Any]) -> tuple[bool, str | None]:
    try:
        Task.model_validate(task)
    except ValidationError as e:
        errs = "; ".join(f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors()[:3])
        return False, errs
    return True, None


# --------------------------------------------------------------------------- non_reproducible

_TIME_VALUE = re.compile(
    r"^(\d{4}-\d{2}(-\d{2})?([T ]\d{2}:\d{2}(:\d{2})?\S*)?|\d{8}(\d{4}(\d{2})?)?|\d{4}(0[1-9]|1[0-2]))$"
)
_TIME_PARAM = re.compile(r"(date|time|ymd|dt$|year|month|day|hour)", re.IGNORECASE)


def fixed_time(args: Mapping[str, Any]) -> str | None:
    """The argument that pins a realtime call to a reference time, if any."""
    for k, v in args.items():
        if v in (None, "", "<KEY>") or isinstance(v, dict | list):
            continue
        if _TIME_VALUE.match(str(v).strip()) or _TIME_PARAM.search(k):
            return f"{k}={v}"
    return None


def check_reproducible(ctx: TaskContext) -> Verdict:
    check = "non_reproducible"
    state = ctx.task.get("system_state") or {}
    if not str(state.get("current_date") or "").strip():
        return _verdict(check, "system_state has no current_date: no fixed reference time", "")
    for i in ctx.realtime_actions():
        a = ctx.actions[i]
        if fixed_time(a["args"]) is None:
            return _verdict(
                check,
                f"action {i} calls realtime tool {a['tool']} without a fixed reference time in its arguments",
                "",
            )
    rt = len(ctx.realtime_actions())
    return _verdict(check, None, f"{rt} realtime call(s), each pinned to a time" if rt else "no realtime tool")


# --------------------------------------------------------------------------- error_ground_truth

_EMPTY = {
    "",
    "none",
    "null",
    "nil",
    "n/a",
    "na",
    "nan",
    "undefined",
    "unknown",
    "error",
    "[]",
    "{}",
    "없음",
    "오류",
    "에러",
}
_ERROR_TEXT = re.compile(
    r"^(error\b|exception\b|traceback\b|http\s*[45]\d\d\b|[45]\d\d\s+(not found|bad request|unauthorized|forbidden|"
    r"internal server error|service unavailable|too many requests)\b|(not found|internal server error|bad request|"
    r"service unavailable|too many requests|rate limit(ed)?|timed? ?out|invalid (api )?key|"
    r"service_key_is_not_registered_error|no data|nodata_error)$|오류|에러)",
    re.IGNORECASE,
)


def error_signal(value: Any) -> str | None:
    """Why a gold answer value is empty or an error signal, or None."""
    if value is None:
        return "the answer is empty (None)"
    if isinstance(value, list | tuple):
        if not value:
            return "the answer is an empty list"
        for v in value:
            why = error_signal(v)
            if why:
                return f"a part of the answer: {why}"
        return None
    if isinstance(value, dict):
        return "the answer is an object, not a value" if not value else None
    if isinstance(value, float) and (value != value):
        return "the answer is NaN"
    s = norm_text(value)
    if s in _EMPTY:
        return f"the answer {value!r} is an empty/error marker"
    if _ERROR_TEXT.search(s):
        return f"the answer {str(value)[:80]!r} reads as an error message"
    return None


def check_ground_truth(ctx: TaskContext) -> Verdict:
    check = "error_ground_truth"
    ans = ctx.task["answer"]
    why = error_signal(ans.get("value"))
    if why is None and ans.get("type") != "judge":
        why = error_signal(ans.get("text")) if ans.get("value") is not None else None
    if why is None and ctx.trajectory is not None:
        for i, a in enumerate(ctx.trajectory.get("golden_actions") or []):
            if a.get("outcome") and not is_success_outcome(a["outcome"]):
                why = f"golden action {i} ({a.get('tool')}) returned {a['outcome']} at synthesis"
                break
    if why is None:
        for i in sorted(ctx.answer_actions):
            if 0 <= i < len(ctx.actions) and ctx.task["answer_spec"].get("kind") == "value":
                if not ctx.actions[i].get("records"):
                    why = f"the answer is read from action {i}, which returned no record"
                    break
    return _verdict(check, why, "a non-empty answer from successful calls")


# --------------------------------------------------------------------------- malformed_query

_SPECIAL = re.compile(
    r"<\|[^|<>]{0,40}\|>|</?s>|\[/?INST\]|<<SYS>>|<unk>|<pad>|<eos>|<bos>|<mask>|\ufffd|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
)
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}|\$\{[^}]*\}|<(?:[A-Z][A-Z_]{1,30})>|[{}]")


def script_of(ch: str) -> str:
    if ord(ch) < 0x2B0:  # Basic Latin, Latin-1 (ª º µ), Latin Extended-A/B, IPA
        return "latin"
    try:
        name = unicodedata.name(ch)
    except ValueError:
        return "unknown"
    if name.startswith(("LATIN", "FULLWIDTH LATIN")):
        return "latin"
    if name.startswith(("HANGUL", "HALFWIDTH HANGUL")):
        return "hangul"
    if name.startswith(("CJK", "IDEOGRAPHIC")):
        return "han"
    if name.startswith(("HIRAGANA", "KATAKANA", "HALFWIDTH KATAKANA")):
        return "kana"
    return name.split(" ", 1)[0].lower()


def _strip_values(query: str, values: Iterable[Any]) -> str:
    """The query with every allowed value removed (longest first, case-insensitive)."""
    out = unicodedata.normalize("NFC", query)  # NFC: NFKC would turn µ into Greek μ
    texts = sorted({str(v).strip() for v in values if v is not None and str(v).strip()}, key=len, reverse=True)
    for t in texts:
        out = re.sub(re.escape(unicodedata.normalize("NFC", t)), " ", out, flags=re.IGNORECASE)
    return out


def query_problem(query: str, language: str, allowed: Sequence[Any]) -> str | None:
    """Why a query is malformed (special tokens, placeholders, mixed scripts), or None."""
    if not query.strip():
        return "the query is empty"
    m = _SPECIAL.search(query)
    if m:
        return f"special/control token {m.group(0)!r}"
    rest = _strip_values(query, allowed)
    m = _PLACEHOLDER.search(rest)
    if m:
        return f"template placeholder or leftover brace {m.group(0)!r}"
    letters = [ch for ch in rest if ch.isalpha()]
    scripts: dict[str, list[str]] = {}
    for ch in letters:
        scripts.setdefault(script_of(ch), []).append(ch)
    allowed_scripts = {"latin"} if language == "en" else {"hangul", "latin"}
    foreign = {s: chs for s, chs in scripts.items() if s not in allowed_scripts}
    if foreign:
        s, chs = next(iter(foreign.items()))
        return f"mixed scripts: {s} {''.join(chs[:12])!r} in a {language} query"
    if language == "ko":
        if "hangul" not in scripts:
            return "a Korean query without Hangul"
        words = re.findall(r"[A-Za-z][A-Za-z'\-]*", rest)
        if words:
            return f"Latin words that are no cited value in a Korean query: {', '.join(words[:6])}"
    return None


def check_query(ctx: TaskContext) -> Verdict:
    problem = query_problem(ctx.task.get("query", ""), ctx.language, ctx.allowed_values)
    return _verdict("malformed_query", problem, f"clean {ctx.language} text, no special tokens or placeholders")


# --------------------------------------------------------------------------- near_duplicate


def normalize_query(q: str) -> str:
    q = unicodedata.normalize("NFKC", q).casefold()
    return " ".join(re.sub(r"[^\w]+", " ", q).split())


def shingles(q: str, n: int = 5) -> set[str]:
    q = normalize_query(q)
    return {q[i : i + n] for i in range(max(1, len(q) - n + 1))} if q else set()


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def signature(task: Mapping[str, Any]) -> str:
    """Golden calls (tool and arguments, pages included) and what the answer reads from them."""
    from factory.io import dumps

    calls = [[a["step"], a["tool"], a["args"]] for a in task.get("golden_actions") or []]
    return dumps([calls, task.get("answer_spec")])


class NearDuplicates:
    """Greedy near-duplicate filter: each task is compared with the tasks kept before it."""

    def __init__(self, threshold: float):
        self.threshold = threshold
        self.kept: list[tuple[str, set[str], str, str]] = []  # id, shingles, signature, query

    def check(self, task: Mapping[str, Any]) -> Verdict:
        sh = shingles(task.get("query", ""))
        sig = signature(task)
        best: tuple[float, str, str] = (0.0, "", "")
        for tid, other, osig, oq in self.kept:
            if osig == sig:
                return _verdict(
                    "near_duplicate", f"same golden actions and answer spec as kept task {tid[:19]}… ({oq[:60]!r})", ""
                )
            s = jaccard(sh, other)
            if s > best[0]:
                best = (s, tid, oq)
        if best[0] >= self.threshold:
            return _verdict(
                "near_duplicate",
                f"char 5-gram Jaccard {best[0]:.3f} ≥ {self.threshold} with kept task {best[1][:19]}… ({best[2][:60]!r})",
                "",
            )
        self.kept.append((str(task.get("id", "")), sh, sig, str(task.get("query", ""))))
        return _verdict("near_duplicate", None, f"max char 5-gram Jaccard with kept tasks {best[0]:.3f}")


# --------------------------------------------------------------------------- undocumented_field


def _answer_reads(spec: Any, actions: Sequence[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """(golden-action position, field) of every record field an answer spec reads: a value's field, a count read
    from a record's field, the fields a reference selects its record by."""
    out: list[tuple[int, str]] = []
    try:
        steps = answers.layout(actions)
    except answers.SpecError:
        return out

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            refs = [r for r in node.get("calls") or [] if isinstance(r, Mapping)]
            if isinstance(node.get("cond_call"), Mapping):
                refs.append(node["cond_call"])
            for r in refs:
                try:
                    pos = answers.position(r, steps)
                except answers.SpecError:
                    continue
                names = [node["field"]] if isinstance(node.get("field"), str) and node.get("kind") != "count" else []
                names += [r["field"]] if isinstance(r.get("field"), str) else []
                names += [str(k) for k in r.get("record") or {}] if isinstance(r.get("record"), Mapping) else []
                out.extend((pos, n) for n in names)
            for k, v in node.items():
                if k not in ("calls", "cond_call"):
                    walk(v)
        elif isinstance(node, list):
            for x in node:
                walk(x)

    walk(spec)
    return out


def _documented(spec: ToolSpec, name: str) -> bool:
    """Whether the tool's documented output lists the field (a tool that documents no record fields: unknown, so
    yes; a dotted field is documented with its top-level object)."""
    fields = spec.output_fields
    if not fields or spec.source.kind == "retrieval" or name in ("total_count", "record_count"):
        return True
    return name in fields or name.split(".", 1)[0] in fields or any(f.startswith(f"{name}.") for f in fields)


def check_documented_fields(ctx: TaskContext) -> Verdict:
    """undocumented_field: a junction or the answer reads a record field the tool's documented output schema does
    not list (blind read s10: a golden path read an airport's province from a tool whose documentation named no
    subdivision): an agent reading the tools' documentation could not know the call gives it."""
    check = "undocumented_field"
    t = ctx.task
    by_tool = {a["tool"]: s for a, s in zip(t["golden_actions"], ctx.specs, strict=False) if s is not None}
    problem = None
    for lk in ctx.links:
        spec = by_tool.get(lk.up_tool)
        bad = [f for f in lk.fields if spec is not None and not _documented(spec, f)]
        if bad:
            problem = f"{lk.up_tool}.{bad[0]} feeds {lk.down_tool} but {lk.up_tool}'s output schema does not list it"
            break
    if problem is None:
        for pos, name in _answer_reads(t["answer_spec"], t["golden_actions"]):
            spec = ctx.specs[pos] if pos < len(ctx.specs) else None
            if spec is not None and not _documented(spec, name):
                problem = f"the answer reads {spec.name}.{name}, which {spec.name}'s output schema does not list"
                break
    return _verdict(check, problem, "every field a junction or the answer reads is in its tool's output schema")


def run_rules(ctx: TaskContext) -> list[Verdict]:
    """The per-task rules (not near_duplicate); every check runs unless the record is not a valid Task."""
    ok, err = validate_task(ctx.task)
    out = [check_schema(ctx, ok, err)]
    if not ok:
        return out
    out += [check_documented_fields(ctx), check_reproducible(ctx), check_ground_truth(ctx), check_query(ctx)]
    return out
