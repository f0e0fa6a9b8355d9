"""Issue 16's check: the exported RL rows, `factory.rewards` and the tool environment run one GRPO step of
TRL's `GRPOTrainer` on CPU with a tiny model (built here, nothing downloaded): the tool calls the policy emits
are parsed by TRL, executed against the live demo service through the environment, the rewards score the
replies, and the group's reward variance gives a real gradient."""

from pathlib import Path

import pytest

from factory.rewards.env import ToolEnvironment
from factory.rewards.grpo_smoke import grpo_step, load_rows, pick_rows
from factory.tools.registry import ToolRegistry
from tests.export.helpers import ensure_chain, inventories


@pytest.mark.slow
def test_one_grpo_step_over_the_exported_rl_rows(synth_world, tmp_path: Path) -> None:
    ensure_chain(synth_world)
    manifest = synth_world.load("dataset_exports")
    rows = load_rows(manifest["rl"]["train"]["path"])
    env = ToolEnvironment(synth_world.cfg, ToolRegistry.from_inventories(inventories(synth_world)), domains=["music"])
    try:
        picked = pick_rows(rows, env, 2)
        assert {r["data_source"] for r in picked} == {"toolcall-factory/music"}
        result = grpo_step(picked, env, tmp_path / "out", num_generations=8)
    finally:
        env.close()
    m = result.metrics
    assert m["tools/call_frequency"] > 0 and m["tools/failure_frequency"] == 0, m
    assert result.tool_calls and all(c["ok"] and c["valid"] for c in result.tool_calls), result.tool_calls
    music = {(s.platform, s.name) for s in env.registry.in_domains(["music"])}
    assert all((c["platform"], c["tool"]) in music for c in result.tool_calls)
    # right and wrong replies in one group: a non-zero advantage, so the step moves the weights
    assert 0 < m["rewards/answer_reward/mean"] < 1 and m["reward_std"] > 0, m
    assert m["grad_norm"] > 0, m


def test_the_scripted_policy_starts_half_its_episodes_with_a_call() -> None:
    """The tiny policy's first-turn distribution: calls 1/2, right answers 1/3, the wrong reply 1/6, so a group
    of 16 completions misses a call once in 65,536 groups (a uniform choice had missed in 1 of 60, and CI did)."""
    import torch

    from factory.rewards.grpo_smoke import Turn, build_tokenizer, scripted_model

    turns = [Turn("call", '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>', 0), Turn("right", "Seven.", 0),
             Turn("call", '<tool_call>\n{"name": "b", "arguments": {"x": 1}}\n</tool_call>', 1),
             Turn("right", "Eight.", 1), Turn("wrong", "I could not find the answer.")]  # fmt: skip
    tokenizer = build_tokenizer(["How many tracks?", "How many albums?"], turns, vocab_size=300)
    start = tokenizer.convert_tokens_to_ids("<|im_start|>")
    model = scripted_model(tokenizer, turns, [start])
    with torch.no_grad():
        probs = model(torch.tensor([[start]])).logits[0, -1].softmax(-1)
    share = {k: sum(float(probs[tokenizer.convert_tokens_to_ids(t.text)]) for t in turns if t.kind == k)
             for k in ("call", "right", "wrong")}  # fmt: skip
    assert share == pytest.approx({"call": 0.5, "right": 1 / 3, "wrong": 1 / 6}, abs=1e-3), share
