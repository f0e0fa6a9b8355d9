"""One GRPO step on CPU over an export's RL rows: does the export train as shipped?

`python -m factory.rewards.grpo_smoke --rl data/exports/<version>/rl` runs TRL's `GRPOTrainer` for one step
with the export's prompts and ground truth, `factory.rewards` as reward functions and the project's live tools
as TRL's `environment_factory` (each rollout slot its own executor session, keys acquired as system state).
Nothing is downloaded: the tokenizer is trained on the rows' own text and the model is a tiny Qwen3-architecture
network built here. A random network never emits a tool call or a right answer (every reward 0, advantage 0,
no gradient), so the tiny model is a *scripted policy*: its weights make it a next-token table that, at the
start of each assistant turn, opens a golden first call (`<tool_call>`, one token holding a row's call, then
`</tool_call>`: the markup stays control tokens, which transformers >= 5.25 requires before it parses a call),
or says a row's golden answer sentence or a wrong answer, each one token. Sampled `num_generations` times per prompt, a group holds calls
(executed for real against the services), right answers (reward 1) and wrong ones (reward 0), so the step has
a non-zero advantage and a real gradient. What it proves is the plumbing — the columns TRL reads, the chat
template's tool rendering and parsing, the environment, the rewards — not learning.

Needs the `rl` extra (`pip install -e '.[rl]'`: trl, accelerate) and the services of the project running
(the demo service for the demo). Training a real model: README, "Training on an export".
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factory.rewards.env import ToolEnvironment
from factory.rewards.scores import RewardError, parse_ground_truth

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
WRONG = "I could not find the answer."


class SmokeError(RuntimeError):
    """The smoke step cannot run (missing extra, no usable rows, a row its tools cannot serve)."""


@dataclass
class Turn:
    """One whole assistant turn the scripted policy can emit: one token, and for a call that token (the call's
    JSON between newlines) between the `<tool_call>` and `</tool_call>` control tokens."""

    kind: str  # "call" | "right" | "wrong"
    text: str  # the turn's own token
    row: int | None = None

    @property
    def rendered(self) -> str:
        return f"<tool_call>{self.text}</tool_call>" if self.kind == "call" else self.text


@dataclass
class SmokeResult:
    rows: list[str]
    turns: list[Turn]
    metrics: dict[str, float]
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0

    def summary(self) -> str:
        m = self.metrics
        keys = ["loss", "grad_norm", "reward", "reward_std", "tools/call_frequency", "tools/failure_frequency",
                "rewards/outcome_reward/mean", "rewards/answer_reward/mean", "step_time"]  # fmt: skip
        lines = [f"GRPO smoke step over {len(self.rows)} export rows ({self.wall_s:.0f} s)"]
        lines += [f"  {k}: {m[k]:.4g}" for k in keys if k in m]
        ok = sum(1 for c in self.tool_calls if c.get("ok"))
        lines.append(f"  live tool calls: {len(self.tool_calls)} ({ok} ok)")
        return "\n".join(lines)


def _require_trl() -> None:
    try:
        import trl  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise SmokeError("TRL is not installed: pip install -e '.[rl]' (trl and accelerate, with the CPU torch)") from e


def load_rows(path: str | Path, split: str = "train") -> list[dict[str, Any]]:
    """RL rows from an export's `rl` folder (`<split>.parquet`) or a Parquet/JSONL file."""
    p = Path(path)
    if p.is_dir():
        p = p / f"{split}.parquet"
    if not p.exists():
        raise SmokeError(f"no RL rows at {p}: point --rl at an export's rl/ folder (data/exports/<version>/rl)")
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_table(p).to_pylist())
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def _first_call(gt: Mapping[str, Any], env: ToolEnvironment) -> tuple[str, dict[str, Any]] | None:
    """The row's first golden call the environment offers (key tools are system state, not tools)."""
    offered = {(b.spec.platform, b.spec.name): b for b in env.bindings}
    for a in gt.get("golden_actions") or []:
        b = offered.get((str(a.get("platform")), str(a.get("tool"))))
        if b is not None:  # the key argument is system state: not in the tool's signature
            params = b.signature()[0].parameters
            return b.name, {k: v for k, v in (a.get("arguments") or {}).items() if k in params}
    return None


def pick_rows(rows: Sequence[Mapping[str, Any]], env: ToolEnvironment, n: int) -> list[dict[str, Any]]:
    """The first `n` rows whose task has a golden call among the environment's tools and a RESPONSE basis."""
    out = []
    for r in rows:
        try:
            gt = parse_ground_truth(r.get("ground_truth"), where=f"row {r.get('id')}")
        except RewardError:
            continue
        if "RESPONSE" in (gt.get("reward_basis") or []) and _first_call(gt, env) and gt.get("answer", {}).get("text"):
            out.append(dict(r))
        if len(out) == n:
            break
    if not out:
        raise SmokeError("no row to train on: none has a golden call among the project's tools and a RESPONSE basis")
    return out


def turns_for(rows: Sequence[Mapping[str, Any]], env: ToolEnvironment) -> list[Turn]:
    """Per row its first golden call and its golden answer sentence, and one wrong answer."""
    turns: list[Turn] = []
    for i, r in enumerate(rows):
        gt = parse_ground_truth(r["ground_truth"])
        call = _first_call(gt, env)
        assert call is not None  # pick_rows kept only rows with one
        body = json.dumps({"name": call[0], "arguments": call[1]}, ensure_ascii=False)
        turns.append(Turn("call", f"\n{body}\n", i))
        turns.append(Turn("right", str(gt["answer"]["text"]), i))
    turns.append(Turn("wrong", WRONG))
    return turns


def build_tokenizer(texts: Iterable[str], turns: Sequence[Turn], vocab_size: int = 4096) -> Any:
    """A byte-level BPE tokenizer trained on `texts`, with the Qwen3 chat template TRL knows how to parse and
    every scripted turn as one added token."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_chat_template

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL + MARKUP, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(texts, trainer)
    tok.add_tokens([AddedToken(t.text, normalized=False) for t in turns])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = qwen3_chat_template
    return fast


def scripted_model(tokenizer: Any, turns: Sequence[Turn], start_ids: Iterable[int], *, seed: int = 0) -> Any:
    """A one-layer Qwen3 whose layers add nothing (attention and MLP outputs zero) and whose embedding and head
    make it a next-token table. After a turn-start token (`start_ids`: the last token of the assistant header)
    it opens a call with the `call` share of `KIND_SHARE` or says an answer turn with its kind's share; after
    `<tool_call>` one of the call bodies follows (evenly), after a body `</tool_call>`, and after `</tool_call>`
    or an answer turn the end of turn. Every other token keeps its random initialisation."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    ids = [tokenizer.convert_tokens_to_ids(t.text) for t in turns]
    opener, closer = (tokenizer.convert_tokens_to_ids(t) for t in ("<tool_call>", "</tool_call>"))
    if any(i is None or i == tokenizer.unk_token_id for i in [*ids, opener, closer]):
        raise SmokeError("a scripted turn is not one token of the tokenizer")
    starts = sorted(set(start_ids))
    states = [*starts, opener, closer, *ids]  # each a one-hot slot of the hidden state
    hidden = 8 * math.ceil((len(states) + 2) / 8)
    cfg = Qwen3Config(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=hidden // 2,
                      max_position_embeddings=32768, tie_word_embeddings=False,
                      eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)  # fmt: skip
    model = Qwen3ForCausalLM(cfg)
    eos = tokenizer.eos_token_id
    scale = 1.0 / math.sqrt(hidden)  # the final RMSNorm turns a one-hot row into sqrt(hidden) × one-hot
    slot = {tid: k for k, tid in enumerate(states)}
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        emb, head = model.model.embed_tokens.weight, model.lm_head.weight
        head.zero_()
        for tid, k in slot.items():
            emb[tid] = 0.0
            emb[tid, k] = 1.0
        first = _first_turn_logits(turns, ids, opener)
        for s in starts:
            for tid, logit in first.items():
                head[tid, slot[s]] = logit * scale
        bodies = [tid for tid, t in zip(ids, turns, strict=True) if t.kind == "call"]
        for tid in bodies:
            head[tid, slot[opener]] = 40.0 * scale  # equal logits: the bodies share the opened call evenly
            head[closer, slot[tid]] = 40.0 * scale
        head[eos, slot[closer]] = 40.0 * scale
        for tid, t in zip(ids, turns, strict=True):
            if t.kind != "call":
                head[eos, slot[tid]] = 40.0 * scale  # an answer turn is followed by the end of the turn
    return model


# Each kind's share of the first turn: half of the episodes start with a call, so a group of eight almost
# surely holds one (a uniform choice among 2 calls, 2 answers and the wrong reply had made none in 1 of 60).
KIND_SHARE = {"call": 0.5, "right": 1 / 3, "wrong": 1 / 6}


def _first_turn_logits(turns: Sequence[Turn], ids: Sequence[int], opener: int) -> dict[int, float]:
    """Logits (before the 1/sqrt(hidden) scale) of a turn's first token: the `<tool_call>` control token with
    the call share, each answer turn's token with its kind's share split evenly among its turns; a large base
    keeps every other token out of reach."""
    counts = {k: sum(t.kind == k for t in turns) for k in KIND_SHARE}
    out = {opener: 20.0 + math.log(KIND_SHARE["call"])} if counts["call"] else {}
    for tid, t in zip(ids, turns, strict=True):
        if t.kind != "call":
            out[tid] = 20.0 + math.log(KIND_SHARE[t.kind] / counts[t.kind])
    return out


def _turn_start_ids(tokenizer: Any, rows: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> set[int]:
    """The last token of each rendered prompt (the assistant header), also after a tool response."""
    out = set()
    for r in rows:
        msgs = list(r["prompt"])
        out.add(_ids(tokenizer.apply_chat_template(msgs, tools=tools, add_generation_prompt=True, tokenize=True))[-1])
        after = [*msgs, {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "x", "arguments": {}}}]}, {"role": "tool", "content": "{}"}]  # fmt: skip
        out.add(_ids(tokenizer.apply_chat_template(after, tools=tools, add_generation_prompt=True, tokenize=True))[-1])
    return out


def _ids(encoded: Any) -> list[int]:
    return list(encoded["input_ids"] if isinstance(encoded, Mapping) else encoded)


def grpo_step(
    rows: Sequence[Mapping[str, Any]],
    env: ToolEnvironment,
    out_dir: str | Path,
    *,
    num_generations: int = 8,
    seed: int = 0,
) -> SmokeResult:
    """One `GRPOTrainer` step over `rows` (export RL rows) with the scripted tiny policy, `outcome_reward` and
    `answer_reward`, and `env.environment_factory()` as the tools."""
    _require_trl()
    import os

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from factory.rewards import answer_reward, outcome_reward

    t0 = time.monotonic()
    turns = turns_for(rows, env)
    factory_cls = env.environment_factory()
    probe = factory_cls()
    tools = [getattr(probe, b.name) for b in env.bindings]
    texts = [str(m["content"]) for r in rows for m in r["prompt"]] + [json.dumps(b.name) for b in env.bindings]
    texts += [str(f.__doc__ or "") for f in tools]
    tokenizer = build_tokenizer(texts, turns)
    start_ids = _turn_start_ids(tokenizer, rows, tools)
    model = scripted_model(tokenizer, turns, start_ids, seed=seed)
    calls: list[dict[str, Any]] = []

    class Recorded(factory_cls):  # type: ignore[misc, valid-type]
        """The environment with its sessions' calls kept for the report."""

        def reset(self, **row: Any) -> None:
            super().reset(**row)
            calls_ref = self._factory_session.calls
            calls.append({"_session": calls_ref})

    def gt_text(v: Any) -> str:  # answer values differ in type from row to row: JSON text, as in the Parquet
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

    ds = Dataset.from_list([{"prompt": list(r["prompt"]), "ground_truth": gt_text(r["ground_truth"])} for r in rows])
    args = GRPOConfig(
        output_dir=str(out_dir), per_device_train_batch_size=num_generations * len(rows),
        num_generations=num_generations, max_completion_length=4, max_steps=1, logging_steps=1, report_to=[],
        use_cpu=True, save_strategy="no", bf16=False, max_tool_calling_iterations=1, seed=seed,
        temperature=1.0, learning_rate=1e-3, disable_tqdm=True,
    )  # fmt: skip
    rewards: list[Any] = [outcome_reward, answer_reward]  # TRL annotates list[float | None] returns
    trainer = GRPOTrainer(model=model, reward_funcs=rewards, args=args,
                          train_dataset=ds, processing_class=tokenizer, environment_factory=Recorded)  # fmt: skip
    trainer.train()
    metrics = {k: float(v) for k, v in trainer.state.log_history[0].items() if isinstance(v, int | float)}
    executed = [c for entry in calls for c in entry["_session"]]
    return SmokeResult([str(r.get("id")) for r in rows], turns, metrics, executed, time.monotonic() - t0)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m factory.rewards.grpo_smoke", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rl", required=True, help="an export's rl/ folder (or one of its .parquet/.jsonl files)")
    ap.add_argument("--split", default="train")
    ap.add_argument("--config", default=None, help="project config (default: ./factory.yaml)")
    ap.add_argument("--domains", default=None, help="comma-separated domains whose tools the episodes get")
    ap.add_argument("--rows", type=int, default=2)
    ap.add_argument("--generations", type=int, default=8)
    ap.add_argument("--out", default="grpo-smoke")
    a = ap.parse_args(argv)
    try:
        domains = a.domains.split(",") if a.domains else None
        env = ToolEnvironment.from_project(a.config, domains=domains)
        try:
            rows = pick_rows(load_rows(a.rl, a.split), env, a.rows)
            result = grpo_step(rows, env, a.out, num_generations=a.generations)
        finally:
            env.close()
    except SmokeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(result.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
