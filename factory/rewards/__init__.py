"""Training-time use of an export: RL rewards on the scorer of `factory eval`, and the live tools as an RL
environment (importable without Dagster).

    from factory.rewards import answer_reward, outcome_reward, compute_score   # TRL / verl rewards
    from factory.rewards.env import ToolEnvironment                             # tools= / environment_factory=
"""

from factory.rewards.scores import (
    RewardError,
    action_reward,
    answer_reward,
    answer_spec,
    compute_score,
    final_reply,
    outcome_reward,
    parse_ground_truth,
    response_score,
)

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
