"""Rewards of the exported `rl` rows, computed by the scorer of `factory eval` (pure; no Dagster, no network).

One answer convention (`factory.eval.scoring.ANSWER_CONVENTION`) is shared by the exported system prompt
("state the answer first, in one sentence"), the SFT conversations' final assistant turn (the golden answer
sentence), `factory eval` and these rewards: `score_response` reads "The answer is 6.", "6곡입니다." and the
golden sentence of every pattern alike.

TRL (`GRPOTrainer(reward_funcs=[...])`): every function takes `(completions, **columns)` and returns one float
per completion. The columns are the RL row's: `ground_truth` (a dict in the JSONL, a JSON string in the
Parquet), `prompts` (TRL passes the prompt messages; the question is read from them when the ground truth
has none), and `environments` (the per-episode `factory.rewards.env.ToolSession`s when the trainer runs with
`environment_factory`): the ENVIRONMENT and ACTION parts need them.

- `answer_reward`: RESPONSE, 1.0 when the final reply states the gold answer, else 0.0;
- `outcome_reward`: what `factory eval` counts as a pass: every outcome check of the task's `reward_basis`
  (RESPONSE; ENVIRONMENT from the episode's live state hashes); a basis with neither passes on full ACTION
  correctness;
- `action_reward`: ACTION = (correctness + efficiency) / 2 of the episode's executed calls (EDGE Eq. 3).

verl (`custom_reward_function.path=factory/rewards/scores.py`, `name=compute_score`, or import
`factory.rewards.compute_score`): `compute_score(data_source, solution_str, ground_truth, extra_info)` with
`ground_truth` = the row's `reward_model.ground_truth` (JSON text) returns the RESPONSE reward.
"""

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from factory.eval import scoring

__all__ = [
    "RewardError",
    "action_reward",
    "answer_reward",
    "answer_spec",
    "compute_score",
    "final_reply",
    "outcome_reward",
    "parse_ground_truth",
    "response_score",
]

GROUND_TRUTH_KEYS = ("answer", "answer_type", "golden_actions", "reward_basis")


class RewardError(ValueError):
    """A row or a completion the rewards cannot read (named in the message)."""


def parse_ground_truth(value: Any, *, where: str = "ground_truth") -> dict[str, Any]:
    """The ground truth of an RL row: a dict (JSONL) or its JSON text (Parquet, verl's reward_model)."""
    gt = value
    if isinstance(value, str | bytes):
        try:
            gt = json.loads(value)
        except ValueError as e:
            raise RewardError(f"{where}: not JSON ({e})") from None
    if not isinstance(gt, Mapping):
        raise RewardError(f"{where}: expected the export's ground_truth object, got {type(gt).__name__}")
    missing = [k for k in GROUND_TRUTH_KEYS if k not in gt]
    if missing:
        raise RewardError(f"{where}: not an exported ground_truth (missing {', '.join(missing)})")
    return dict(gt)


def answer_spec(gt: Mapping[str, Any]) -> dict[str, Any]:
    """The task's answer as `score_response` reads it ({'type', 'value', 'text', ...})."""
    return {**dict(gt["answer"]), "type": gt["answer_type"]}


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
# where a chat template opens an assistant turn, and the end-of-turn tokens (verl hands over decoded text)
_TURN_OPEN = re.compile(
    r"<\|im_start\|>assistant|<\|start_header_id\|>assistant<\|end_header_id\|>|<start_of_turn>model"
)
_TURN_END = re.compile(r"<\|im_end\|>|<\|eot_id\|>|<end_of_turn>|<\|endoftext\|>|</s>")


def last_turn(text: str) -> str:
    """The last assistant turn of decoded multi-turn text (ChatML, Llama 3 and Gemma markers), end tokens
    removed; text without markers unchanged."""
    opens = list(_TURN_OPEN.finditer(text))
    if opens:
        text = text[opens[-1].end() :]
    return _TURN_END.split(text)[0] if _TURN_END.search(text) else text


def final_reply(completion: Any) -> str | None:
    """The final answer text of a completion (reasoning in <think> blocks left out): the text itself (standard
    format), or the content of the last assistant message that calls no tool (conversational format: a list
    of messages, or one message)."""
    if completion is None:
        return None
    if isinstance(completion, str):
        return _THINK.sub("", completion).strip()
    if isinstance(completion, Mapping):
        completion = [completion]
    if not isinstance(completion, Sequence):
        raise RewardError(f"completion: expected text or a list of messages, got {type(completion).__name__}")
    for m in reversed(list(completion)):
        if isinstance(m, Mapping) and m.get("role", "assistant") == "assistant" and not m.get("tool_calls"):
            content = m.get("content")
            if isinstance(content, list):  # content parts
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
            return None if content is None else _THINK.sub("", str(content)).strip()
    return None


def _question(gt: Mapping[str, Any], prompt: Any) -> str | None:
    q = gt.get("question")
    if isinstance(q, str) and q:
        return q
    if isinstance(prompt, Sequence) and not isinstance(prompt, str):
        users = [m.get("content") for m in prompt if isinstance(m, Mapping) and m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return users[-1]
    return None


def response_score(completion: Any, ground_truth: Any, *, question: str | None = None, prompt: Any = None) -> dict:
    """`factory eval`'s RESPONSE check of one completion: {'passed', 'method', 'extracted', 'decided'}."""
    gt = parse_ground_truth(ground_truth)
    q = question if question is not None else _question(gt, prompt)
    return scoring.score_response(answer_spec(gt), final_reply(completion), question=q)


def _column(columns: Mapping[str, Any], name: str, n: int) -> list[Any]:
    values = columns.get(name)
    if values is None:
        return [None] * n
    values = list(values)
    if len(values) != n:
        raise RewardError(f"column {name!r}: {len(values)} values for {n} completions")
    return values


def _need(columns: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
    if columns.get("ground_truth") is None:
        raise RewardError(
            "no ground_truth column: train on the export's rl/<split>.jsonl or .parquet, whose rows carry it"
        )
    return [
        parse_ground_truth(g, where=f"ground_truth[{i}]") for i, g in enumerate(_column(columns, "ground_truth", n))
    ]


def answer_reward(completions: Sequence[Any], **columns: Any) -> list[float]:
    """TRL reward: 1.0 when the completion's final reply states the gold answer (RESPONSE), else 0.0."""
    n = len(completions)
    gts, prompts = _need(columns, n), _column(columns, "prompts", n)
    return [
        float(scoring.score_response(answer_spec(gt), final_reply(c), question=_question(gt, p))["passed"])
        for c, gt, p in zip(completions, gts, prompts, strict=True)
    ]


def _environments(columns: Mapping[str, Any], n: int, why: str) -> list[Any]:
    """The episodes' `ToolSession`s from TRL's `environments` column."""
    from factory.rewards.env import session_of

    envs = _column(columns, "environments", n)
    if any(e is None for e in envs):
        raise RewardError(
            f"{why} needs the episode's tool session: train with environment_factory="
            "factory.rewards.env.ToolEnvironment(...).environment_factory() so TRL passes `environments`"
        )
    return [session_of(e) for e in envs]


def _task(gt: Mapping[str, Any]) -> dict[str, Any]:
    """The exported ground truth in the shape of a Task for `factory.eval.scoring` (actions with `args`)."""

    def actions(xs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [{**{k: v for k, v in a.items() if k != "arguments"}, "args": a.get("arguments") or {}} for a in xs]

    return {
        "golden_actions": actions(gt["golden_actions"]),
        "alternative_paths": [
            {"note": p.get("note", ""), "actions": actions(p.get("golden_actions") or [])}
            for p in gt.get("alternative_paths") or []
        ],
        "max_allowed_calls": gt.get("max_allowed_calls"),
        "reward_basis": list(gt.get("reward_basis") or []),
        "expected_state_hash": dict(gt.get("expected_state_hash") or {}),
        "system_state": {},
    }


def action_reward(completions: Sequence[Any], **columns: Any) -> list[float]:
    """TRL reward: ACTION = (correctness + efficiency) / 2 of the calls the episode's session executed."""
    n = len(completions)
    gts, envs = _need(columns, n), _environments(columns, n, "action_reward")
    out = []
    for gt, env in zip(gts, envs, strict=True):
        out.append(float(scoring.score_action(_task(gt), env.calls, env.specs_by_platform_name())["score"]))
    return out


def outcome_reward(completions: Sequence[Any], **columns: Any) -> list[float]:
    """TRL reward: 1.0 when every outcome check of the task's reward_basis passes, as `factory eval` counts a
    pass: RESPONSE (the final reply), ENVIRONMENT (the episode's live state hashes against the expected ones);
    a basis with neither passes on full ACTION correctness."""
    n = len(completions)
    gts, prompts = _need(columns, n), _column(columns, "prompts", n)
    wants_env = any(
        "ENVIRONMENT" in gt["reward_basis"] or not {"RESPONSE", "ENVIRONMENT"} & set(gt["reward_basis"]) for gt in gts
    )
    envs = _environments(columns, n, "outcome_reward (an ENVIRONMENT or ACTION basis)") if wants_env else [None] * n
    out = []
    for c, gt, p, env in zip(completions, gts, prompts, envs, strict=True):
        basis = set(gt["reward_basis"])
        checks = []
        if "RESPONSE" in basis:
            checks.append(scoring.score_response(answer_spec(gt), final_reply(c), question=_question(gt, p))["passed"])
        if "ENVIRONMENT" in basis:
            expected = dict(gt.get("expected_state_hash") or {})
            checks.append(scoring.score_environment(expected, env.state_hashes(sorted(expected)))["passed"])
        if not checks:
            action = scoring.score_action(_task(gt), env.calls, env.specs_by_platform_name())
            checks.append(action["correctness"] == 1.0)
        out.append(float(all(checks)))
    return out


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None) -> float:
    """verl's reward for an exported row: RESPONSE (1.0 / 0.0) of `solution_str` against the row's
    `reward_model.ground_truth`. Raises `RewardError` naming the data_source for a row that is not ours."""
    try:
        gt = parse_ground_truth(ground_truth, where=f"ground_truth of data_source {data_source!r}")
    except RewardError as e:
        raise RewardError(f"{e}; factory.rewards.compute_score scores the rows of a toolcall-factory export") from None
    question = gt.get("question")
    if not question and isinstance(extra_info, Mapping):
        question = extra_info.get("question")
    answer = final_reply(last_turn(solution_str)) if isinstance(solution_str, str) else final_reply(solution_str)
    return float(scoring.score_response(answer_spec(gt), answer, question=question)["passed"])
