"""Fluency of candidate questions (pure core; issue 15 item 4).

A question has several surface forms (the query writer's variants). They are ranked by their mean token
log-likelihood under the `fluency_scorer` role (the embedded SmolLM2 behind llama.cpp's
`/v1/completions` with echoed logprobs, or any OpenAI-compatible endpoint that returns them): the best
is kept, one below `synthesis.fluency.min_score` is dropped with a reason. SmolLM2 cannot read Korean,
so Korean candidates pass a rule check instead:

- no mixed scripts: a Latin word in a Korean question must be a name or code the question cites ('AC/DC',
  'N200AA') — an English enum value ('economy', cited or not) or field word left over is not Korean;
- no dangling particles: a particle standing alone, after a space, or both forms of a pair left in
  ("을(를)", "이/가");
- no copied description text: three or more consecutive words (10+ characters) of a tool, parameter or
  field description.
English candidates are held to grounding's limit instead (no run over 30 characters copied from a description):
English labels are made from description words ('number of airports'), Korean ones are not.

Where no model is mapped to `fluency_scorer` (or its endpoint cannot score) nothing is scored: the first
candidate that passes the rule check is kept and the metadata says how the role was served.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factory.llm.client import ModelClient
from factory.llm.schemas import FluencyInput

_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’\-]*")
# standing alone these are particles left without their noun ('이' alone is the demonstrative 'this': not listed)
_PARTICLES = "은|는|가|을|를|과|와|의|로|으로|에|에서|에게|도|보다|까지|부터"
_DANGLING = re.compile(rf"(?:^|\s)({_PARTICLES})(?=[\s?.!,]|$)")
_BOTH_FORMS = re.compile(r"(을\s*[/(]\s*를|를\s*[/(]\s*을|은\s*[/(]\s*는|는\s*[/(]\s*은|이\s*[/(]\s*가|가\s*[/(]\s*이|"
                         r"과\s*[/(]\s*와|와\s*[/(]\s*과|\(으\)로)")  # fmt: skip
_EOJEOL = re.compile(r"\S+")
_ENUM_WORD = re.compile(r"[a-z]{2,}(?:[-'][a-z]+)*")
_COPY_WORDS, _COPY_CHARS = 3, 10


def _tokens(values: Iterable[Any]) -> set[str]:
    out: set[str] = set()
    for v in values:
        out.update(w.casefold() for w in _LATIN_WORD.findall(str(v)))
    return out


def copied_description(text: str, descriptions: Iterable[str]) -> str | None:
    """The first run of 3+ consecutive words (10+ characters) of `text` found verbatim in a description."""
    words = _EOJEOL.findall(text)
    folded = [" ".join(d.split()).casefold() for d in descriptions if d]
    for i in range(len(words) - _COPY_WORDS + 1):
        for j in range(len(words), i + _COPY_WORDS - 1, -1):
            piece = " ".join(words[i:j]).strip("?.!,").casefold()
            if len(piece) < _COPY_CHARS:
                break
            if any(f" {piece} " in f" {d} " or d.startswith(piece + " ") or d == piece for d in folded):
                return piece
    return None


def rule_problems(
    text: str, language: str, *, allowed: Iterable[Any] = (), descriptions: Iterable[str] = ()
) -> list[str]:
    """Reason codes of the rule check ("mixed_script:housing", "dangling_particle:를", "copied_description:…")."""
    problems: list[str] = []
    if language == "ko":
        ok = _tokens(allowed)
        # an English word is left over unless it is a cited name or code; a lower-case word ('economy', 'housing')
        # is an enum value or field word even where it is cited: Korean questions name it in Korean
        stray = [w for w in _LATIN_WORD.findall(text) if w.casefold() not in ok or _ENUM_WORD.fullmatch(w)]
        if stray:
            problems.append(f"mixed_script:{stray[0]}")
        m = _DANGLING.search(text) or _BOTH_FORMS.search(text)
        if m:
            problems.append(f"dangling_particle:{m.group(1)}")
        copied = copied_description(text, descriptions)
        if copied:
            problems.append(f"copied_description:{copied[:40]}")
    return problems


@dataclass
class Choice:
    """The candidate kept for one question (or why none was)."""

    index: int | None
    score: float | None
    scores: list[float | None]
    problems: list[list[str]]
    reason: str = ""
    detail: str = ""
    scorer: dict[str, Any] = field(default_factory=dict)


def opening(text: str) -> str:
    """The first three words of a question, lower-cased (the opening the variety check counts)."""
    return " ".join(text.lower().split()[:3])


def choose(
    candidates: Sequence[str], scores: Sequence[float | None], problems: Sequence[Sequence[str]], min_score: float,
    used: Mapping[str, int] | None = None, margin: float = 0.0,
) -> Choice:  # fmt: skip
    """Keep the best-scoring candidate that passes the rule check (without scores: the first that passes whose
    opening `used` has counted least); among
    candidates within `margin` of the best, the one whose opening `used` has counted least (then the better
    score).  None kept: `disfluent` (every candidate failed the rule check, or the best scored below
    `min_score`)."""
    ok = [i for i in range(len(candidates)) if not problems[i]]
    all_scores, all_problems = list(scores), [list(p) for p in problems]
    if not ok:
        detail = "; ".join(sorted({p for ps in problems for p in ps}))
        return Choice(None, None, all_scores, all_problems, reason="disfluent", detail=f"rule check: {detail}")
    scored = [i for i in ok if scores[i] is not None]
    if not scored:  # no scores (Korean, or the rules scorer): the first that passes, its opening least used so far
        first = min(ok, key=lambda i: (used.get(opening(candidates[i]), 0), i)) if used is not None else ok[0]
        return Choice(first, None, all_scores, all_problems)
    best = max(scored, key=lambda i: (scores[i], -i))
    s = scores[best]
    assert s is not None
    if s < min_score:
        detail = f"best fluency {s:.2f} < {min_score:.2f}: {candidates[best]!r}"
        return Choice(None, s, all_scores, all_problems, reason="disfluent", detail=detail)
    if used is not None and margin > 0:
        near = [i for i in scored if (scores[i] or 0.0) >= s - margin]
        best = min(near, key=lambda i: (used.get(opening(candidates[i]), 0), -(scores[i] or 0.0), i))
        s = scores[best]
        assert s is not None
    if used is not None and crowded(opening(candidates[best]), used):
        # an opening that already leads too many questions gives way to any fluent enough form (the s15 demo: 'What's
        # the difference' opened 5 of 45 English questions, the model scoring it best each time)
        fluent = [i for i in scored if (scores[i] or 0.0) >= min_score]
        best = min(fluent, key=lambda i: (used.get(opening(candidates[i]), 0), -(scores[i] or 0.0), i))
        s = scores[best]
        assert s is not None
    return Choice(best, s, all_scores, all_problems)


OPENING_SHARE = 0.08  # an opening leading this share of the questions chosen so far (and at least 2) gives way


def crowded(key: str, used: Mapping[str, int]) -> bool:
    """Whether opening `key` already leads too many of the questions chosen so far (`used`: opening → count)."""
    n = used.get(key, 0)
    return n >= 2 and n >= OPENING_SHARE * sum(used.values())


def score_texts(
    model: ModelClient, groups: Sequence[Sequence[str]], language: str
) -> tuple[list[list[float | None]], dict[str, Any]]:
    """Mean token log-likelihood of every text of every group (one `fluency_scorer` request per group), and how
    the role was served: {'implementation': model|rules, 'backend', 'model', 'failure'?}. A language the
    mapped model cannot read (Korean on SmolLM2) is routed to rules by the model config: None scores."""
    if not groups:
        return [], {"implementation": "none"}
    inputs = [FluencyInput(texts=list(g), language=language) for g in groups]  # type: ignore[arg-type]
    results = model.map("fluency_scorer", inputs)
    out: list[list[float | None]] = []
    for r, g in zip(results, groups, strict=True):
        out.append(list(r.output.scores) if r.output is not None else [None] * len(g))
    served = [r for r in results if r.implementation == "model"]
    first = served[0] if served else results[0]
    info: dict[str, Any] = {
        "implementation": first.implementation,
        "backend": first.backend,
        "model": first.model,
        "groups": len(results),
        "scored_groups": len(served),
    }
    failed = next((r for r in results if r.failure is not None), None)
    if failed is not None and failed.failure is not None:
        info["failure"] = failed.failure.error
        info["failed_groups"] = sum(r.failure is not None for r in results)
    return out, info
