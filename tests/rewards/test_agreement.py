"""`factory eval` and the TRL reward give the same RESPONSE score on every task of a real demo export: the
export's RL rows (ground_truth as written) scored by `factory.rewards.answer_reward` against the harness's
episodes of a scripted model that makes the golden calls and then replies with the golden sentence, a natural
sentence or a wrong one (in turn, one episode per task); the reward alone scores all three on every task."""

import json
from pathlib import Path
from typing import Any

from factory.eval.harness import EvalSettings, evaluate, load_tasks
from factory.llm.service import LLM
from factory.rewards import answer_reward
from factory.tools.registry import ToolRegistry
from tests.eval.conftest import inventories, perfect_script, scripted_config, variant
from tests.export.helpers import ensure_chain, read_jsonl


def _natural(task: dict[str, Any]) -> str:
    value = task["answer"]["value"]
    if isinstance(value, list):
        return "They are " + " and ".join(map(str, value)) + "."
    return f"{value}입니다." if task["language"] == "ko" else f"The answer is {value}."


def _wrong(task: dict[str, Any]) -> str:
    value = task["answer"]["value"]
    return f"The answer is {value + 1000}." if isinstance(value, int | float) else "I could not find it."


REPLIES = {"golden": lambda t: t["answer"]["text"], "natural": _natural, "wrong": _wrong}


def test_eval_and_trl_reward_agree_on_every_exported_task(synth_world, scripted_server, tmp_path: Path) -> None:
    ensure_chain(synth_world)
    manifest = synth_world.load("dataset_exports")
    rl = {r["id"]: r for e in manifest["rl"].values() for r in read_jsonl(e["path"])}
    tasks = [t for e in manifest["benchmark"].values() for t in json.loads(Path(e["path"]).read_text())["tasks"]]
    assert tasks and set(rl) == {t["id"] for t in tasks}
    index = ToolRegistry.from_inventories(inventories(synth_world))
    runs, replies = [], {}
    kinds = list(REPLIES)
    for i, t in enumerate(tasks):
        kind = kinds[i % len(kinds)]
        v = variant(t, f"rw {kind}")  # a label without numbers or names: the question reads the same
        scripted_server.script(v["query"], [*perfect_script(v, index)[:-1], REPLIES[kind](t)])
        runs.append(v)
        replies[v["query"]] = (t["id"], kind, REPLIES[kind](t))
    cfg = scripted_config(synth_world, scripted_server, tmp_path, concurrency=4)
    settings = EvalSettings.resolve(cfg, backend="scripted", split="all", runs=1, k=1, temperature=0.0)
    llm = LLM(cfg.models)
    try:
        result = evaluate(load_tasks(runs), inventories(synth_world), cfg, llm, settings)
    finally:
        llm.close()
    rows = result.report["episode_rows"]
    assert len(rows) == len(runs)
    for row in rows:
        tid, kind, said = replies[row["query"]]
        assert row["final_answer"] == said, row
        reward = answer_reward([said], ground_truth=[rl[tid]["ground_truth"]])[0]
        assert reward == float(row["response_pass"]), (kind, said, rl[tid]["ground_truth"]["answer"], row)
        assert reward == (0.0 if kind == "wrong" else 1.0), (kind, said, rl[tid]["ground_truth"]["answer"])
    # the convention itself, on every task: golden and natural sentences pass, wrong answers fail
    for kind, expected in (("golden", 1.0), ("natural", 1.0), ("wrong", 0.0)):
        said = [REPLIES[kind](t) for t in tasks]
        assert answer_reward(said, ground_truth=[rl[t["id"]]["ground_truth"] for t in tasks]) == [expected] * len(tasks)
    assert len({t["pattern"] for t in tasks}) >= 4
