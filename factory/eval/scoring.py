"""RESPONSE, ENVIRONMENT and ACTION scores of one episode (EDGE Appendix B) (pure).

RESPONSE (App. B.2) — the final answer against the task's gold answer:
- ``number``: the content of the last ``\\boxed{}`` (else an ``ANSWER:`` line, else the whole
  reply), commas removed, converted to a float or evaluated symbolically with sympy (only
  arithmetic is admitted), compared under approximate equality (integer gold values must
  match exactly; others within ``number_rel_tol``);
- ``string``: the ``ANSWER:`` line (else ``\\boxed{}``, else the whole reply) normalized
  (NFKC, case-folded, whitespace and special characters removed) and compared with every
  acceptable value (the gold value and the gold answer text);
- ``judge`` (several values, e.g. SEM): an LLM judge when one is configured; otherwise a
  deterministic containment check (every gold value appears in the reply), recorded as
  method ``containment``. Number and string mismatches go to the judge too when
  ``judge_fallback`` is on (the harness does that; these functions are deterministic).

ENVIRONMENT (App. B.3) — each platform's state hash, fetched at the end of the episode in the
same executor session (same API key, so the same server-side state), against
``task.expected_state_hash``.

ACTION (App. B.4) — correctness and efficiency of the executed calls:
- correctness: for each golden action, the whole trajectory is searched (any order) for a
  call with the same tool, that was valid for the tool's schema (required parameters present,
  no unexpected parameter, JSON-Schema types — checked by the runner before the call ran) and
  whose values equal the golden ones for the ``value_compare_args``: here the golden action's
  semantic arguments (every argument except the API key, paging and format parameters, which
  carry no task meaning). Corr = matched golden actions / golden actions, against the sufficient
  path the trajectory covers best: the golden path (the minimal one, every call needed) or any of
  the task's ``alternative_paths`` (the original longer path among them);
- efficiency: Eq. 3 (`efficiency`), zero above the call budget; N_opt is the golden (minimal)
  path's length, so a model taking the minimal path scores full and a longer sufficient path less;
- ACTION = (Corr + Eff) / 2.

Key acquisition. Per App. B.1 an API key is *system state* resolved at the start of each episode
(``ActionSystemState``): the harness calls the platform's key tool before the model's first
turn, the key tools are never offered to the model and the key parameter is hidden (the
executor injects the key). Key-acquisition golden actions are therefore counted on neither
side: they are left out of the golden set (Corr's denominator) and of N_opt, the model's calls
are the only ones in N_total, and the call budget is ``max_allowed_calls`` minus the number of
key-acquisition golden actions (the calls the harness made on the model's behalf).
"""

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from factory.llm.agent import signature
from factory.tools.spec import ToolSpec

# --------------------------------------------------------------------------- RESPONSE

_ANSWER = re.compile(r"ANSWER\s*[:：]\s*(.*)", re.IGNORECASE)
# a number standing on its own: not glued to a Latin letter or digit on either side ("N11206", "100km" and
# "3rd" are not numbers; "6곡" is), thousands separators only in groups of three
_NUMBER_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![A-Za-z0-9_])"
)
_ARITH = re.compile(r"^[0-9eE+\-*/().\s]*$")
# a word of a question that may name an entity: Latin letters and digits (identifiers, codes, names)
# a fall said in words after its size: the typed value of a change is signed ('5.4% 감소' is -5.4, rag_phrasing's
# `negative`), the sentence writes the size and the direction ('인구는 5.4% 감소했습니다', 'fell by 5.4%')
_FALL = re.compile(r"감소|줄었|줄어|하락|\b(?:decrease[sd]?|declined?|fell|fall(?:en|s)?|dropped|down|lower)\b", re.I)
_RISE = re.compile(r"증가|늘었|늘어|상승|\b(?:increase[sd]?|rose|risen|rises?|grew|grown|up|higher)\b", re.I)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'&.-]*[A-Za-z0-9]|[A-Za-z0-9]")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n)\s*$")
# capitalized function words of titles ("The Who", "Lord of the Rings") name no rival answer
_FUNCTION_WORDS = frozenset("a an and at by for from in of on or the to with".split())

ANSWER_CONVENTION = (
    'The final reply states the answer in a sentence, answer first ("The answer is 6.", "6곡입니다."); '
    "an `ANSWER:` line or \\boxed{} is read when present."
)
"""The one answer convention of the exported system prompt, the SFT final turn, `factory eval` and the RL
rewards (`factory.rewards`): see `score_response`."""


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (nested braces balanced), or None."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    i = start + len("\\boxed{")
    depth = 1
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i:j].strip()
    return None


def extract_answer_line(text: str) -> str | None:
    """What follows the last ``ANSWER:`` up to the end of its line, or None."""
    found = _ANSWER.findall(text)
    if not found:
        return None
    return found[-1].strip().splitlines()[0].strip() if found[-1].strip() else ""


def normalize_text(value: Any) -> str:
    """NFKC, case-folded, with whitespace and special characters removed (letters of any script kept)."""
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def _latex_to_arith(s: str) -> str:
    s = re.sub(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)", s)
    s = s.replace("\\times", "*").replace("\\cdot", "*").replace("\\left", "").replace("\\right", "")
    s = s.replace("\\,", "").replace("\\!", "").replace("{", "(").replace("}", ")").replace("^", "**")
    return s


def parse_number(text: str | None) -> float | None:
    """A number from a reply fragment: plain (commas, $, % and units-free), or arithmetic evaluated with sympy."""
    if text is None:
        return None
    s = text.strip().strip("$").strip()
    s = re.sub(r"\\text\{[^{}]*\}", "", s)
    s = s.replace(",", "").replace("%", "").replace("\\%", "").strip().rstrip(".")
    if not s:
        return None
    try:
        v = float(s)
        return v if math.isfinite(v) else None
    except ValueError:
        pass
    s = _latex_to_arith(s)
    if not _ARITH.match(s) or len(s) > 200:
        return None  # only arithmetic reaches sympy (its parser evaluates code)
    try:
        import sympy

        v = float(sympy.sympify(s, rational=False).evalf())
    except (Exception, RecursionError):  # noqa: BLE001 - sympy raises many types for bad input
        return None
    return v if math.isfinite(v) else None


def numbers_equal(pred: float, gold: float, rel_tol: float) -> bool:
    """Approximate equality: integer gold values exactly, others within `rel_tol`."""
    if float(gold).is_integer():
        return abs(pred - gold) < 1e-9
    return math.isclose(pred, gold, rel_tol=rel_tol, abs_tol=1e-12)


def _gold_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return parse_number(str(value)) if value is not None else None


def numbers_in(text: str) -> list[float]:
    """The numbers a text states, in order (standalone tokens: see `_NUMBER_TOKEN`)."""
    out = []
    for tok in _NUMBER_TOKEN.findall(unicodedata.normalize("NFKC", text)):
        v = parse_number(tok)
        if v is not None:
            out.append(v)
    return out


def lead_number(text: str, question: str | None = None, gold: float | None = None) -> float | None:
    """The answer number of a sentence (answer first): the first number it states, skipping the numbers the
    question states (context: "within 100 km", "at most 17") unless the gold is one of them (a choice between
    given values: "album id 271 or 254?" → "271 (14 vs 1)"); when every number of the sentence is the
    question's, the first of them."""
    stated = numbers_in(text)
    given = numbers_in(question or "")
    if gold is not None and any(numbers_equal(gold, g, 0.0) for g in given):
        given = []
    for v in stated:
        if not any(numbers_equal(v, g, 0.0) for g in given):
            return v
    return stated[0] if stated else None


def mention(text: str, value: Any) -> int | None:
    """Where `text` first mentions `value` (NFKC, case-folded; the value's words in order, separated by anything
    that is not a letter or digit; not inside a longer Latin word or number: "N1120" is not in "N11206", "서울"
    is in "서울에서"), or None."""
    words = re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", str(value)).casefold())
    if not words:
        return None
    pattern = r"(?<![^\W_])" + r"[\W_]*".join(map(re.escape, words)) + r"(?![A-Za-z0-9])"
    m = re.search(pattern, unicodedata.normalize("NFKC", text).casefold())
    return m.start() if m else None


def _shape(word: str) -> str:
    """A word's character-class shape with runs collapsed: "N11206" → "A9", "LGA" → "A", "Oslo" → "Aa"."""
    classes = ["9" if c.isdigit() else "A" if c.isupper() else "a" if c.islower() else c for c in word]
    return "".join(c for i, c in enumerate(classes) if i == 0 or c != classes[i - 1])


def rivals(question: str | None, gold: str) -> list[str]:
    """Words of the question that could be another answer of the same kind as `gold` (a string answer): Latin
    words shaped like one of the gold's words (an aircraft's registration against another, an airport code
    against another, a capitalized name against another), neither among the gold's words, nor a function word,
    nor the first word of a sentence."""
    if not question:
        return []
    gold_words = _WORD.findall(unicodedata.normalize("NFKC", gold))
    shapes = {_shape(w) for w in gold_words if any(c.isupper() or c.isdigit() for c in w)}
    own = {w.casefold() for w in gold_words}
    q = unicodedata.normalize("NFKC", question)
    out = []
    for m in _WORD.finditer(q):
        w = m.group(0)
        if w.casefold() in own | _FUNCTION_WORDS or _shape(w) not in shapes or _SENTENCE_START.search(q[: m.start()]):
            continue
        out.append(w)
    return out


def _states_string(text: str, values: Sequence[Any], question: str | None) -> bool:
    """A sentence states a string answer: it mentions one of the acceptable values before any rival."""
    for value in values:
        at = mention(text, value)
        if at is None:
            continue
        if all((r := mention(text, w)) is None or r > at for w in rivals(question, str(value))):
            return True
    return False


def _contains_value(text: str, value: Any, rel_tol: float) -> bool:
    gold = _gold_number(value)
    if gold is not None:
        return any(numbers_equal(v, gold, rel_tol) for v in numbers_in(text))
    return mention(text, value) is not None


def _says_fall(text: str) -> bool:
    """A sentence that states a change by its size says it fell: a word of falling ('5.4% 감소했습니다', 'fell by
    5.4%') and none of rising."""
    t = unicodedata.normalize("NFKC", text)
    return bool(_FALL.search(t)) and not _RISE.search(t)


def score_response(
    answer: Mapping[str, Any], final: str | None, *, rel_tol: float = 1e-4, question: str | None = None
) -> dict[str, Any]:
    """{'passed', 'method', 'extracted', 'decided'}: deterministic RESPONSE check (App. B.2) under the answer
    convention (`ANSWER_CONVENTION`), given the task's `question` (its numbers and rival names are context).

    The explicit forms come first: the last ``\\boxed{}`` for a number (else an ``ANSWER:`` line), the
    ``ANSWER:`` line for a string (else ``\\boxed{}``). Else the whole reply is read. A fragment that is the
    value itself (method ``boxed``/``answer_line``/``bare``) is compared as a whole; a sentence
    (method ``sentence``: "The answer is 6.", "6곡입니다.", "Aircraft N11206 has more flights: 111 against 49.")
    passes when its answer is the gold: for a number the first number it states that the question does not
    (`lead_number`), for a string a mention of the gold value (or the gold answer text) before any rival the
    question names (`rivals`). `decided` is False where the paper falls back to a judge (a mismatch, or a
    'judge' answer).
    """
    kind = answer.get("type")
    gold = answer.get("value")
    if final is None:
        return {"passed": False, "method": "no_answer", "extracted": None, "decided": True}
    if gold is None or (isinstance(gold, list) and not gold):
        return {"passed": False, "method": "no_gold", "extracted": None, "decided": True}
    boxed, line = extract_boxed(final), extract_answer_line(final)
    if kind == "number":
        cand = boxed if boxed is not None else line if line is not None else final.strip()
        method = "boxed" if boxed is not None else "answer_line" if line is not None else "bare"
        pred, g = parse_number(cand), _gold_number(gold)
        if pred is None and boxed is None:  # a boxed value is the value; a line or a reply may be a sentence
            pred, method = lead_number(cand, question, g), "sentence"
        if pred is None or g is None:
            return {"passed": False, "method": method, "extracted": cand[:200], "decided": False}
        ok = numbers_equal(pred, g, rel_tol)
        if not ok and method == "sentence" and g < 0 and numbers_equal(pred, -g, rel_tol):
            ok = _says_fall(cand)
        return {"passed": ok, "method": method, "extracted": cand[:200], "decided": ok}
    if kind == "string":
        cand = line if line is not None else boxed if boxed is not None else final.strip()
        method = "answer_line" if line is not None else "boxed" if boxed is not None else "bare"
        values = [v for v in (gold, answer.get("text")) if v is not None and normalize_text(v)]
        ok = normalize_text(cand) in {normalize_text(v) for v in values}
        if not ok:
            ok, method = _states_string(cand, values[:1], question), "sentence"
        margin = (answer.get("frame") or {}).get("margin")
        if ok and margin is not None and not _contains_value(final, margin, rel_tol):
            # 'Which has fewer routes, and by how many?': the side without the margin is half the answer
            return {"passed": False, "method": "no_margin", "extracted": cand[:200], "decided": True}
        return {"passed": ok, "method": method, "extracted": cand[:200], "decided": ok}
    # judge answers: no pattern extraction (App. B.2); containment until a judge decides
    values = gold if isinstance(gold, list) else [gold]
    body = line if line is not None else final
    ok = all(_contains_value(body, v, rel_tol) for v in values)
    return {"passed": ok, "method": "containment", "extracted": body.strip()[:200], "decided": False}


# --------------------------------------------------------------------------- ENVIRONMENT


def score_environment(expected: Mapping[str, str], observed: Mapping[str, str | None]) -> dict[str, Any]:
    """Every platform's final state hash equals the golden one (App. B.3, SHA-256 comparison)."""
    mismatched = sorted(p for p, h in expected.items() if observed.get(p) != h)
    return {
        "passed": bool(expected) and not mismatched,
        "expected": dict(expected),
        "observed": dict(observed),
        "mismatched": mismatched,
    }


# --------------------------------------------------------------------------- ACTION


def spec_of(specs: Mapping[tuple[str, str], ToolSpec], action: Mapping[str, Any]) -> ToolSpec | None:
    return specs.get((action.get("platform", ""), action["tool"]))


def is_key_action(action: Mapping[str, Any], specs: Mapping[tuple[str, str], ToolSpec], key_tools: set[str]) -> bool:
    spec = spec_of(specs, action)
    return (spec is not None and spec.key_acquisition is not None) or action["tool"] in key_tools


def key_tool_names(system_state: Mapping[str, Any]) -> set[str]:
    """Key tools named by a task's system_state ({'api_key': {'acquire_with': {platform: tool}}})."""
    acq = (system_state.get("api_key") or {}).get("acquire_with") if isinstance(system_state, Mapping) else None
    if isinstance(acq, Mapping):
        return {str(v) for v in acq.values()}
    if isinstance(acq, str):
        return {acq}
    return set()


def scored_golden(
    task: Mapping[str, Any], specs: Mapping[tuple[str, str], ToolSpec]
) -> tuple[list[dict[str, Any]], int]:
    """(golden actions the model must make, number of key-acquisition actions left out)."""
    keys = key_tool_names(task.get("system_state") or {})
    golden = [dict(a) for a in task["golden_actions"] if not is_key_action(a, specs, keys)]
    return golden, len(task["golden_actions"]) - len(golden)


def sufficient_paths(
    task: Mapping[str, Any], specs: Mapping[tuple[str, str], ToolSpec]
) -> list[tuple[str, list[dict[str, Any]]]]:
    """(name, actions the model must make) of every sufficient path: the golden (minimal) path first, then
    the task's alternative paths (key acquisitions left out of each)."""
    keys = key_tool_names(task.get("system_state") or {})
    out = [("golden", scored_golden(task, specs)[0])]
    for k, p in enumerate(task.get("alternative_paths") or []):
        name = f"alternative {k}: {p.get('note', '')}".rstrip(": ")
        out.append((name, [dict(a) for a in p["actions"] if not is_key_action(a, specs, keys)]))
    return out


def call_budget(task: Mapping[str, Any], n_key_actions: int, default: int) -> int:
    """The model's call budget: max_allowed_calls less the key acquisitions the harness made."""
    allowed = task.get("max_allowed_calls") or default
    return max(1, int(allowed) - n_key_actions)


def value_compare_args(action: Mapping[str, Any], spec: ToolSpec | None) -> dict[str, Any]:
    """The golden arguments whose values must match: all but key, paging and format parameters."""
    generic = spec.generic_params.names() if spec is not None else set()
    return {k: v for k, v in (action.get("args") or {}).items() if k not in generic and v != "<KEY>"}


def _as_number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def values_equal(pred: Any, gold: Any) -> bool:
    """Equal values: numbers numerically (a numeric string equals its number: golden arguments recorded from
    query strings may carry "1" where the schema says integer), bools apart, strings normalized for case and
    outer space, lists itemwise."""
    if isinstance(gold, bool) or isinstance(pred, bool):
        return pred is gold
    if isinstance(gold, int | float) or isinstance(pred, int | float):
        a, b = _as_number(pred), _as_number(gold)
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(gold, str) and isinstance(pred, str):
        return (
            unicodedata.normalize("NFKC", pred).strip().casefold()
            == unicodedata.normalize("NFKC", gold).strip().casefold()
        )
    if isinstance(gold, list) and isinstance(pred, list):
        return len(gold) == len(pred) and all(values_equal(p, g) for p, g in zip(pred, gold, strict=True))
    if isinstance(gold, dict) and isinstance(pred, dict):
        return gold.keys() == pred.keys() and all(values_equal(pred[k], gold[k]) for k in gold)
    return pred == gold


def call_matches(golden: Mapping[str, Any], call: Mapping[str, Any], spec: ToolSpec | None) -> bool:
    """A predicted call matches a golden action (App. B.4): same tool, schema-valid, compared values equal."""
    if call.get("status") != "executed" or not call.get("valid") or call.get("tool") != golden["tool"]:
        return False
    args = call.get("args") or {}
    return all(k in args and values_equal(args[k], v) for k, v in value_compare_args(golden, spec).items())


def correctness(
    golden: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]], specs: Mapping[tuple[str, str], ToolSpec]
) -> tuple[float, list[bool]]:
    """Corr: the fraction of golden actions matched by some call anywhere in the trajectory."""
    matched = [any(call_matches(g, c, spec_of(specs, g)) for c in calls) for g in golden]
    return (sum(matched) / len(matched) if matched else 1.0), matched


def best_path(
    paths: Sequence[tuple[str, list[dict[str, Any]]]],
    calls: Sequence[Mapping[str, Any]],
    specs: Mapping[tuple[str, str], ToolSpec],
) -> tuple[str, list[dict[str, Any]], float, list[bool]]:
    """The sufficient path the trajectory covers best: (name, its actions, Corr against it, matched); the
    earlier path (the golden one first) wins a tie."""
    best: tuple[str, list[dict[str, Any]], float, list[bool]] | None = None
    for name, golden in paths:
        corr, matched = correctness(golden, calls, specs)
        if best is None or corr > best[2]:
            best = (name, golden, corr, matched)
    assert best is not None  # the golden path is always there
    return best


def duplicate_calls(calls: Sequence[Mapping[str, Any]]) -> int:
    """N_dup: calls identical (tool and arguments) to an earlier call whose result had already come back
    successfully; a retry of a failed call is not redundant."""
    done: set[str] = set()
    n = 0
    for c in calls:
        sig = signature(str(c.get("tool")), c.get("args") or {})
        if sig in done:
            n += 1
        if c.get("status") == "executed" and c.get("ok"):
            done.add(sig)
    return n


def efficiency(n_total: int, n_dup: int, n_opt: int, max_allowed: int) -> dict[str, float]:
    """Tool-call efficiency, EDGE Eq. 3 (App. B.4):

        CR  = 1 − N_dup / N_total      (duplicate-call ratio)
        MPC = N_opt / N_total          (minimal-path coverage)
        Eff = (CR + MPC) / 2,  and Eff = 0 when N_total > max_allowed_calls.

    N_total counts every call the model issued (unknown tools, invalid arguments and the call
    past the budget included), N_dup the redundant duplicates, N_opt the annotated optimal count
    (the golden actions). Conventions the paper leaves implicit: MPC is capped at 1 (a
    trajectory shorter than the annotated optimum earns no bonus, so Eff stays in [0, 1]); with
    no call at all Eff is 1 when the golden trajectory is empty too, else 0.
    """
    if n_total > max_allowed:
        return {"cr": 0.0, "mpc": 0.0, "efficiency": 0.0}
    if n_total == 0:
        v = 1.0 if n_opt == 0 else 0.0
        return {"cr": v, "mpc": v, "efficiency": v}
    cr = 1.0 - n_dup / n_total
    mpc = min(1.0, n_opt / n_total)
    return {"cr": cr, "mpc": mpc, "efficiency": (cr + mpc) / 2.0}


def score_action(
    task: Mapping[str, Any],
    calls: Sequence[Mapping[str, Any]],
    specs: Mapping[tuple[str, str], ToolSpec],
    *,
    default_budget: int = 20,
) -> dict[str, Any]:
    """ACTION = (Corr + Eff) / 2 with its parts (App. B.4; key acquisition as in the module docstring).

    Corr is taken against the sufficient path the trajectory covers best (the golden path or one of the
    task's `alternative_paths`); N_opt in Eff is the golden (minimal) path's length whichever path was taken."""
    golden, n_keys = scored_golden(task, specs)
    budget = call_budget(task, n_keys, default_budget)
    path, _, corr, matched = best_path(sufficient_paths(task, specs), calls, specs)
    n_total, n_dup = len(calls), duplicate_calls(calls)
    eff = efficiency(n_total, n_dup, len(golden), budget)
    return {
        "correctness": corr,
        **eff,
        "score": (corr + eff["efficiency"]) / 2.0,
        "matched": matched,
        "path": path,
        "n_total": n_total,
        "n_dup": n_dup,
        "n_opt": len(golden),
        "budget": budget,
        "key_actions": n_keys,
        "over_budget": n_total > budget,
    }


WATERFALL_STAGES = ("tool_names", "arg_names", "arg_values", "outcome")


def waterfall(
    golden: Sequence[Mapping[str, Any]],
    calls: Sequence[Mapping[str, Any]],
    specs: Mapping[tuple[str, str], ToolSpec],
    passed: bool,
) -> dict[str, Any]:
    """Cumulative sieve (VAKRA §4, Table 4): correct tool names → argument names → argument values →
    verified outcome; each stage gates the next and a failure is attributed to the earliest stage."""
    ran = [c for c in calls if c.get("status") == "executed" and c.get("valid")]
    tools_called = {c["tool"] for c in ran}

    def names_ok(g: Mapping[str, Any]) -> bool:
        want = set(value_compare_args(g, spec_of(specs, g)))
        return any(c["tool"] == g["tool"] and want <= set(c.get("args") or {}) for c in ran)

    checks = {
        "tool_names": all(g["tool"] in tools_called for g in golden),
        "arg_names": all(names_ok(g) for g in golden),
        "arg_values": correctness(golden, calls, specs)[0] == 1.0,
        "outcome": passed,
    }
    out: dict[str, Any] = {}
    alive, first = True, None
    for stage in WATERFALL_STAGES:
        alive = alive and checks[stage]
        out[stage] = alive
        if not alive and first is None:
            first = stage
    out["first_failure"] = first
    return out


def score_episode(
    task: Mapping[str, Any],
    episode: Mapping[str, Any],
    specs: Mapping[tuple[str, str], ToolSpec],
    *,
    response: Mapping[str, Any] | None,
    environment: Mapping[str, Any] | None,
    hard_failure: bool,
    default_budget: int = 20,
) -> dict[str, Any]:
    """Every score of one episode. `passed` (the success a pass@k counts): no hard stop, and every
    outcome check of the task's reward_basis passes (RESPONSE, ENVIRONMENT); a task whose basis has
    neither passes on full ACTION correctness. ACTION is a quality measure gated by the outcome:
    reports average it over passed episodes (App. B.4) and over all of them."""
    calls = list(episode.get("calls") or [])
    basis = set(task.get("reward_basis") or [])
    action = score_action(task, calls, specs, default_budget=default_budget)
    checks = []
    if "RESPONSE" in basis:
        checks.append(bool(response and response.get("passed")))
    if "ENVIRONMENT" in basis:
        checks.append(bool(environment and environment.get("passed")))
    outcome = all(checks) if checks else action["correctness"] == 1.0
    passed = outcome and not hard_failure
    _, golden, _, _ = best_path(sufficient_paths(task, specs), calls, specs)
    return {
        "passed": passed,
        "outcome": outcome,
        "hard_failure": hard_failure,
        "response": dict(response) if response is not None else None,
        "environment": dict(environment) if environment is not None else None,
        "action": action,
        "tool_calls": len(calls),
        "tool_calls_ok": sum(1 for c in calls if c.get("status") == "executed" and c.get("ok")),
        "waterfall": waterfall(golden, calls, specs, passed),
    }
