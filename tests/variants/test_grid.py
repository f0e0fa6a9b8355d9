"""The schema-bias grid: the golden oracle succeeds under every variant; failure modes follow Table 2's
first-rule-fires order; schema-form mode recovers off-schema calls that are native actions."""

import asyncio
import json
from typing import Any

from factory.variants.core import Call, Variant
from factory.variants.grid import GridSettings, oracle_for, run_episode, summarize, wilson
from tests.variants.conftest import Demo, FakeWorld


def _tasks(demo: Demo) -> list[tuple[dict[str, Any], Any]]:
    return [
        ({"id": tid, "query": f"question {i}", "answer": {"type": "string", "value": "yes", "text": "yes"}}, gold)
        for i, (tid, gold) in enumerate(demo.tasks)
    ]


def test_golden_oracle_succeeds_under_every_variant_in_both_modes(demo: Demo) -> None:
    variants = demo.variants
    tasks = _tasks(demo)[:2]
    world = FakeWorld(demo.state_changing)

    async def go() -> list[dict[str, Any]]:
        out = []
        for v in variants:
            oracle = oracle_for(v, tasks)
            for mode in ("normal", "schema_form") if v.operator in ("merge", "composed") else ("normal",):
                for t, gold in tasks:
                    out.append(await run_episode(oracle, t, v, demo.catalog, gold, world, GridSettings(), mode))
        return out

    episodes = asyncio.run(go())
    cells = summarize(episodes)
    assert {c["variant"] for c in cells} == {v.id for v in variants}
    assert all(c["success"] == 1.0 for c in cells), [(c["variant"], c["success"]) for c in cells if c["success"] < 1]
    assert all(c["schema_form_gap"] == 0.0 for c in cells if c["mode"] == "normal" and "schema_form_gap" in c)
    assert all(e["failure_mode"] is None for e in episodes)


class Scripted:
    """A model that sends the scripted tool calls (one list per turn), then answers."""

    def __init__(self, turns: list[list[tuple[str, dict[str, Any]]]], answer: str = "ANSWER: yes") -> None:
        self.turns, self.answer, self.n = turns, answer, 0

    async def chat(self, role: str, messages: list[dict[str, Any]], **_: Any) -> tuple[dict[str, Any], bool]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn >= len(self.turns):
            return {"content": self.answer}, False
        calls = []
        for name, args in self.turns[turn]:
            self.n += 1
            calls.append(
                {"id": f"c{self.n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            )
        return {"content": None, "tool_calls": calls}, False


def _episode(demo: Demo, vid: str, turns: Any, mode: str = "normal", task: int = 0) -> dict[str, Any]:
    v: Variant = next(x for x in demo.variants if x.id == vid)
    t, gold = _tasks(demo)[task]
    world = FakeWorld(demo.state_changing)
    return asyncio.run(run_episode(Scripted(turns), t, v, demo.catalog, gold, world, GridSettings(), mode))


def _gold(music: Demo, task: int = 0) -> list[tuple[str, dict[str, Any]]]:
    return [(a.operation, a.arguments) for a in music.tasks[task][1]]


def test_failure_modes_in_table_order(music: Demo) -> None:
    gold = _gold(music)
    assert len(gold) >= 2
    ok = _episode(music, "native", [gold])
    assert ok["success"] and ok["failure_mode"] is None
    # native names under a fully merged tool: rejected, nothing else runs
    stuck = _episode(music, "merge_full_flat", [gold])
    assert stuck["failure_mode"] == "rejected_and_stuck" and not stuck["executed"]
    # ... and recovered when off-schema calls that are native actions are decoded
    recovered = _episode(music, "merge_full_flat", [gold], mode="schema_form")
    assert recovered["success"] and recovered["off_schema"] == len(gold)
    handle = _episode(music, "transaction_all", [[("commit_transaction", {"transaction_id": "txn_7"})]])
    assert handle["failure_mode"] == "transaction_handle"
    loop = _episode(music, "native", [[gold[0]]] * 5)
    assert loop["failure_mode"] == "livelock"
    assert _episode(music, "native", [gold[:-1]])["failure_mode"] == "under_execution"
    assert _episode(music, "native", [[*gold, gold[0]]])["failure_mode"] == "over_execution"
    name, args = gold[0]
    other = {**args, "page": 2} if "page" in args else {**args, "per_page": 7}
    assert _episode(music, "native", [[(name, other), *gold[1:]]])["failure_mode"] == "wrong_arguments"
    assert _episode(music, "native", [[("list_genres", {}), *gold[1:]]])["failure_mode"] == "wrong_class"
    wrong_answer = asyncio.run(
        run_episode(
            Scripted([gold], answer="ANSWER: no"),
            _tasks(music)[0][0],
            music.variants[0],
            music.catalog,
            music.tasks[0][1],
            FakeWorld(set()),
            GridSettings(),
        )
    )
    assert wrong_answer["failure_mode"] == "answer" and wrong_answer["actions_ok"]


def test_wilson_interval() -> None:
    assert wilson(0, 0) == (0.0, 0.0)
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and 0.65 < lo < 0.75
    lo, hi = wilson(5, 10)
    assert lo < 0.5 < hi


def test_eval_cli_routes_variants_to_the_grid_and_names_unknown_ids(tmp_path: Any, capsys: Any) -> None:
    from factory.cli import build_parser, main
    from tests.conftest import write_config

    args = build_parser().parse_args(["eval", "--variants", "all", "--variant-modes", "normal,schema_form"])
    assert args.variants == "all" and args.variant_modes == "normal,schema_form"
    cfg = write_config(tmp_path)
    assert main(["eval", "--config", str(cfg), "--variants", "native,no_such_variant"]) == 2
    err = capsys.readouterr().err
    assert "no_such_variant" in err and "merge_full_flat" in err
    assert main(["eval", "--config", str(cfg), "--variants", "all", "--variant-modes", "sideways"]) == 2
    assert "--variant-modes" in capsys.readouterr().err


class TextScripted(Scripted):
    """A backend without structured tool calls (like the embedded model): it writes its calls in the text."""

    cfg = type("Cfg", (), {"tool_calls": False})()

    def __init__(self, turns: list[list[tuple[str, dict[str, Any]]]]) -> None:
        super().__init__(turns)
        self.seen: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []

    async def chat(self, role: str, messages: list[dict[str, Any]], **kw: Any) -> tuple[dict[str, Any], bool]:
        self.seen.append(([dict(m) for m in messages], kw))
        reply, hit = await super().chat(role, messages, **kw)
        calls = reply.pop("tool_calls", None) or []
        text = "\n".join(
            f'<tool_call>{{"name": "{c["function"]["name"]}", "arguments": {c["function"]["arguments"]}}}</tool_call>'
            for c in calls
        )
        return ({"content": text} if calls else reply), hit


def test_a_backend_without_tool_calls_reads_the_variant_in_its_prompt_and_writes_calls_in_text(music: Demo) -> None:
    gold = _gold(music)
    v = next(x for x in music.variants if x.id == "merge_full_flat")
    flat = [(c.name, c.arguments) for c in v.encoder([Call(n, a, f"a{i}") for i, (n, a) in enumerate(gold)])]
    backend = TextScripted([flat])
    t, g = _tasks(music)[0]
    ep = asyncio.run(run_episode(backend, t, v, music.catalog, g, FakeWorld(set()), GridSettings()))
    assert ep["success"] and [s["kind"] for s in ep["steps"]] == ["executed"] * len(gold)
    first_messages, first_kw = backend.seen[0]
    assert "tools" not in first_kw  # nothing sent as structured tools ...
    system = first_messages[0]["content"]
    assert all(name in system for name in v.schema.names) and "<tool_call>" in system  # ... the prompt lists them
    answer_messages, _ = backend.seen[1]
    assert answer_messages[-1]["role"] == "user" and answer_messages[-1]["content"].count("<tool_response") == len(gold)


def test_the_answer_is_read_with_the_question_as_context(music: Demo) -> None:
    """A conditional task's golden sentence restates the question's threshold before its answer: the grid
    reads it as the evaluation harness does (the question's numbers are context, not the answer)."""
    gold = _gold(music)
    task = {
        "id": "cond",
        "query": "If there are at least 4 customers from Brazil, how many invoices do they have in total?",
        "answer": {"type": "number", "value": 35},
    }
    sentence = "Yes, there are at least 4 customers from Brazil, so there are 35 invoices of those customers."
    ep = asyncio.run(
        run_episode(
            Scripted([gold], answer=sentence),
            task,
            music.variants[0],
            music.catalog,
            music.tasks[0][1],
            FakeWorld(set()),
            GridSettings(),
        )
    )
    assert ep["answer_ok"] and ep["success"]


def test_a_failing_backend_fails_its_episode_not_the_grid(music: Demo) -> None:
    from factory.llm.errors import LLMError

    class TooLong(Scripted):
        async def chat(self, role: str, messages: list[dict[str, Any]], **_: Any) -> tuple[dict[str, Any], bool]:
            raise LLMError("answered HTTP 400: context_length_exceeded")

    t, gold = _tasks(music)[0]
    ep = asyncio.run(
        run_episode(TooLong([]), t, music.variants[0], music.catalog, gold, FakeWorld(set()), GridSettings())
    )
    assert ep["stop"] == "model_error" and ep["failure_mode"] == "model_error" and "context_length" in ep["error"]
    assert summarize([ep])[0]["model_error"] == 1
