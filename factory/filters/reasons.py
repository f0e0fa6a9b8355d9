"""The closed set of rejection reason codes of the judged_queries cascade (EDGE Appendix F).

Every rejected task carries exactly one of these codes; every failed check in a task's
`lineage.verdicts` names one too. The stage a code belongs to is the stage whose check
produces it, so a code also says how expensive it was to find the defect:

- ``rules`` (stage 1): deterministic checks on the task record alone (plus the domain's other
  tasks for near-duplicates);
- ``judges`` (stage 2): static judges (rules, and a model where one is mapped) plus execution
  perturbation of intermediate steps;
- ``resolve`` (stage 3): the golden trajectory replayed now, and an independent agent solution.

Adding a code means adding it here (with its description) and to the GX suite
`expectations/judged_queries.json`; a test keeps the two in sync.
"""

from factory.records import Stage

STAGES: tuple[Stage, ...] = ("rules", "judges", "resolve")

REASONS: dict[str, tuple[Stage, str]] = {
    # stage 1: rules
    "non_reproducible": (
        "rules",
        "A golden call uses a tool marked realtime and no fixed reference time (a date in its arguments) pins its "
        "output, so the label changes from one execution to the next.",
    ),
    "error_ground_truth": (
        "rules",
        "The gold answer is empty or an error signal (None, '', 'error', an HTTP error text), or it was read from "
        "a golden call that did not succeed.",
    ),
    "near_duplicate": (
        "rules",
        "Char 5-gram Jaccard of the normalized query with an earlier kept task of the domain is at least "
        "filters.near_duplicate_threshold, or both tasks have the same golden actions and answer spec.",
    ),
    "malformed_schema": (
        "rules",
        "The row fails Task validation, the answer value does not fit its type, a golden action names an unknown "
        "tool or its arguments do not validate against the tool's input schema.",
    ),
    "malformed_query": (
        "rules",
        "The query mixes scripts (Hangul/Han/kana in an English task; Han/kana, or Latin words that are no cited "
        "value, in a Korean task), or carries special tokens (<|im_start|>, </s>), template placeholders or "
        "leftover {braces}.",
    ),
    "benchmark_collision": (
        "rules",
        "The query (with its tool sequence) collides with a row of a configured benchmark file (splits.benchmarks) "
        "above the MinHash audit thresholds: the reverse filter that keeps new data from drifting into a benchmark.",
    ),
    "rag_answerable_by_api": (
        "rules",
        "Decontamination rule (b) (factory.retrieval.decontam): a RAG-only task whose answer an API response "
        "the factory executed states next to a value the question names, so the documents are not needed.",
    ),
    "undocumented_field": (
        "rules",
        "A junction or the answer reads a record field that the tool's documented output schema does not list, so "
        "an agent reading the tools' documentation could not know the call gives it.",
    ),
    # stage 2: judges
    "answer_leakage": (
        "judges",
        "The query states the answer, or a bridge value that a step must derive, making the call that finds it "
        "redundant.",
    ),
    "non_gradable": (
        "judges",
        "The answer cannot be checked automatically: vague terms, an overlong list, or time-dependent without a "
        "fixed time.",
    ),
    "decorative_step": (
        "judges",
        "An intermediate step does not constrain the answer: perturbing the value it passes on, dropping that "
        "argument or skipping the step re-executes to the same answer (or a judge finds the step unused).",
    ),
    # stage 3: resolve
    "stale_label": (
        "resolve",
        "Replaying the golden trajectory now gives a different answer than the stored one, and no independent "
        "re-solution confirmed a replacement.",
    ),
    "replay_failed": (
        "resolve",
        "A golden call fails when the trajectory is replayed now (twice, to rule out a transient fault).",
    ),
}

REASON_CODES: tuple[str, ...] = tuple(REASONS)


def stage_of(code: str) -> Stage:
    """The stage that produces `code`; KeyError naming the closed set for an unknown code."""
    try:
        return REASONS[code][0]
    except KeyError:
        raise KeyError(f"unknown rejection reason {code!r}; the closed set is {', '.join(REASON_CODES)}") from None


def reasons_of(stage: Stage) -> list[str]:
    """The codes a stage may produce, in their documented order."""
    return [c for c, (s, _) in REASONS.items() if s == stage]


def describe(code: str) -> str:
    stage_of(code)
    return REASONS[code][1]


def reasons_table() -> str:
    """A markdown table of the closed set (for docs and asset descriptions)."""
    rows = ["| stage | reason | meaning |", "|---|---|---|"]
    rows += [f"| {s} | `{c}` | {d} |" for c, (s, d) in REASONS.items()]
    return "\n".join(rows)
