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


def _tiny_policy():  # two rows' first calls and answers, one wrong reply
    from factory.rewards.grpo_smoke import Turn, build_tokenizer, scripted_model

    turns = [Turn("call", '\n{"name": "get_album", "arguments": {"album_id": 3}}\n', 0), Turn("right", "Seven.", 0),
             Turn("call", '\n{"name": "get_artist", "arguments": {"artist_id": 1}}\n', 1),
             Turn("right", "Eight.", 1), Turn("wrong", "I could not find the answer.")]  # fmt: skip
    tokenizer = build_tokenizer(["How many tracks?", "How many albums?"], turns, vocab_size=300)
    start = tokenizer.convert_tokens_to_ids("<|im_start|>")
    return turns, tokenizer, start, scripted_model(tokenizer, turns, [start])


def _next(model, token: int):
    import torch

    with torch.no_grad():
        return model(torch.tensor([[token]])).logits[0, -1].softmax(-1)


def test_the_scripted_policy_starts_half_its_episodes_with_a_call() -> None:
    """The tiny policy's first-turn distribution: calls 1/2, right answers 1/3, the wrong reply 1/6, so a group
    of 16 completions misses a call once in 65,536 groups (a uniform choice had missed in 1 of 60, and CI did)."""
    turns, tokenizer, start, model = _tiny_policy()
    probs, tid = _next(model, start), tokenizer.convert_tokens_to_ids
    share = {"call": float(probs[tid("<tool_call>")])}
    share |= {k: sum(float(probs[tid(t.text)]) for t in turns if t.kind == k) for k in ("right", "wrong")}
    assert share == pytest.approx({"call": 0.5, "right": 1 / 3, "wrong": 1 / 6}, abs=1e-3), share
    # an opened call goes on with one of the bodies, evenly, then closes and ends the turn
    opened = _next(model, tid("<tool_call>"))
    assert [float(opened[tid(t.text)]) for t in turns if t.kind == "call"] == pytest.approx([0.5, 0.5], abs=1e-3)
    assert float(_next(model, tid(turns[0].text))[tid("</tool_call>")]) > 0.999
    assert float(_next(model, tid("</tool_call>"))[tokenizer.eos_token_id]) > 0.999


def test_a_call_the_scripted_policy_emits_parses_as_a_tool_call() -> None:
    """TRL parses a completion with `parse_response`; transformers 5.25 matches `<tool_call>` only as the
    control token, never inside a longer added token (CI's fresh install got 5.25 and the step saw no call)."""
    pytest.importorskip("trl")
    from trl.chat_template_utils import add_response_schema, parse_response

    turns, tokenizer, _, _ = _tiny_policy()
    tokenizer = add_response_schema(tokenizer)

    def get_album(album_id: int) -> str:
        """An album by its id.

        Args:
            album_id: the album's id
        """
        return ""

    prefix = tokenizer.apply_chat_template([{"role": "user", "content": "How many tracks?"}], tools=[get_album],
                                           add_generation_prompt=True, tokenize=True)  # fmt: skip
    prefix = list(prefix["input_ids"] if hasattr(prefix, "keys") else prefix)
    tid = tokenizer.convert_tokens_to_ids
    ids = [tid("<tool_call>"), tid(turns[0].text), tid("</tool_call>"), tokenizer.eos_token_id]
    parsed = parse_response(tokenizer, ids, prefix=prefix, tools=[get_album])
    assert parsed.get("tool_calls") == [
        {"type": "function", "function": {"name": "get_album", "arguments": {"album_id": 3}}}
    ], parsed
    assert tokenizer.decode(ids[:3]) == turns[0].rendered
