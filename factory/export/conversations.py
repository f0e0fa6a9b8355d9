"""Conversation tasks in the exports (issue 19 item 7): the `conversations` asset's audited tasks per split as

- `conversations_chat`: OpenAI chat fine-tuning JSONL of the golden conversation (system, user, assistant,
  tool turns; the assistant asks for hidden facts, the simulated user answers), with the task's tools;
- `conversations_parquet`: the same rows as Hugging Face Parquet (messages and JSON columns);
- `conversations_benchmark`: benchmark JSON with the kotraj fields (initial_message, persona, hidden_info,
  success_criteria, tools_subset, seed) and the pinned user simulator;
- `conversations_rl`: RL rows (the opening as prompt, tools, success criteria as ground truth) carrying the
  simulator config an RL environment needs to play the user.
`build_exports` writes them beside the task formats (`files`) and reads them back (`read_back`).
"""

import io
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from factory import prompts
from factory.io import dumps

FORMATS = ("conversations_chat", "conversations_parquet", "conversations_benchmark", "conversations_rl")
SYSTEM_TEMPLATE = "conversations/system.{lang}"
BENCH_FIELDS = ("id", "domain", "language", "split", "case_pattern", "task", "initial_message", "persona",
                "hidden_info", "success_criteria", "tools_subset", "seed")  # fmt: skip
PARQUET_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("domain", pa.string()),
        ("language", pa.string()),
        ("split", pa.string()),
        ("case_pattern", pa.string()),
        ("messages", pa.string()),
        ("tools", pa.string()),
        ("persona", pa.string()),
        ("hidden_info", pa.string()),
        ("success_criteria", pa.string()),
        ("seed", pa.int64()),
    ]
)


def current_conversations(value: Mapping[str, Any] | None, splits_value: Mapping[str, Any]) -> dict[str, Any] | None:
    """The stored conversations value restricted to tasks made from the current splits' tasks (and the
    terminal-state tasks of creating tools), with each task's split as its source task has it now."""
    if not value or not value.get("tasks"):
        return None
    split_of = {t["id"]: t.get("split") for t in splits_value.get("tasks") or []}
    tasks = []
    for t in value["tasks"]:
        if t.get("source_pattern") == "STATE":
            tasks.append(t)
        elif t.get("source_task_id") in split_of and split_of[t["source_task_id"]] == t.get("split"):
            tasks.append(t)
    return {**value, "tasks": tasks}


def system_message(language: str) -> dict[str, str]:
    return {"role": "system", "content": " ".join(prompts.render(SYSTEM_TEMPLATE.format(lang=language)).split())}


def chat_row(task: Mapping[str, Any]) -> dict[str, Any]:
    msgs = [system_message(task["language"])]
    for m in task.get("golden_messages") or []:
        out = {k: v for k, v in m.items() if k in ("role", "content", "tool_calls", "tool_call_id") and v is not None}
        msgs.append(out)
    meta = {k: task[k] for k in ("domain", "language", "split", "case_pattern", "persona")}
    if task.get("recovery"):  # an error-recovery conversation: a call fails, then the corrected call (item 5)
        meta["error_recovery"] = {k: task["recovery"].get(k) for k in ("kind", "detail", "error")}
    return {"id": task["id"], "messages": msgs, "tools": list(task.get("tools") or []), "metadata": meta}


def benchmark_doc(
    tasks: Sequence[Mapping[str, Any]], split: str, dataset: str, simulator: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "dataset": f"{dataset}-conversations",
        "split": split,
        "user_simulator": dict(simulator),
        "count": len(tasks),
        "tasks": [{k: t[k] for k in BENCH_FIELDS} for t in tasks],
    }


def rl_row(task: Mapping[str, Any], simulator: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": task["id"],
        "prompt": [system_message(task["language"]), {"role": "user", "content": task["initial_message"]}],
        "tools": list(task.get("tools") or []),
        "ground_truth": {
            "case_pattern": task["case_pattern"],
            "success_criteria": task["success_criteria"],
            "hidden_info": task["hidden_info"],
            "persona": task["persona"],
            "task": task["task"],
            "answer_values": task["answer"]["values"],
            "seed": task["seed"],
        },
        "user_simulator": dict(simulator),
    }


def _parquet(rows: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> bytes:
    """Parquet of (chat row, task) pairs."""
    table = pa.Table.from_pylist(
        [
            {
                "id": r["id"],
                "domain": r["metadata"]["domain"],
                "language": r["metadata"]["language"],
                "split": r["metadata"]["split"],
                "case_pattern": r["metadata"]["case_pattern"],
                "messages": dumps(r["messages"]),
                "tools": dumps(r["tools"]),
                "persona": dumps(r["metadata"]["persona"]),
                "hidden_info": dumps(t["hidden_info"]),
                "success_criteria": dumps(t["success_criteria"]),
                "seed": t["seed"],
            }
            for r, t in rows
        ],
        schema=PARQUET_SCHEMA,
    )
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def files(value: Mapping[str, Any] | None, split: str, dataset: str) -> Iterator[tuple[str, str, bytes, int]]:
    """(format, relative path, bytes, rows) of the split's conversation files (none without a value)."""
    if not value or not value.get("tasks"):
        return
    tasks = [t for t in value["tasks"] if t.get("split") == split]
    sim = value.get("simulator") or {}
    chat = [chat_row(t) for t in tasks]
    yield "conversations_chat", f"conversations/openai_chat/{split}.jsonl", _jsonl(chat), len(chat)
    yield (
        "conversations_parquet",
        f"conversations/hf_parquet/{split}.parquet",
        _parquet(list(zip(chat, tasks, strict=True))),
        len(chat),
    )
    doc = benchmark_doc(tasks, split, dataset, sim)
    yield (
        "conversations_benchmark",
        f"conversations/benchmark/{split}.json",
        dumps(doc, indent=1).encode("utf-8"),
        len(tasks),
    )
    rl = [rl_row(t, sim) for t in tasks]
    yield "conversations_rl", f"conversations/rl/{split}.jsonl", _jsonl(rl), len(rl)


def _jsonl(rows: Sequence[Any]) -> bytes:
    return "".join(dumps(r) + "\n" for r in rows).encode("utf-8")


def validate_chat(row: Mapping[str, Any]) -> list[str]:
    """Problems of one multi-turn chat row: system then user first, every tool call answered before the next
    assistant turn, tool names among the tools, JSON arguments, a final assistant message with text."""
    errs: list[str] = []
    msgs = row.get("messages") or []
    names = {(d.get("function") or {}).get("name") for d in row.get("tools") or []}
    if len(msgs) < 3 or msgs[0].get("role") != "system" or msgs[1].get("role") != "user":
        return ["messages: must start with system and user and hold at least one assistant turn"]
    last = msgs[-1]
    if last.get("role") not in ("assistant", "user") or last.get("tool_calls"):
        errs.append("messages: the conversation must end with a text turn")
    pending: set[str] = set()
    for i, m in enumerate(msgs[2:], start=2):
        role = m.get("role")
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                errs.append(f"message {i}: a tool result without its call")
            pending.discard(m.get("tool_call_id"))
            continue
        if pending:
            errs.append(f"message {i}: {role} before every tool call was answered")
            pending.clear()
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            if fn.get("name") not in names:
                errs.append(f"message {i}: tool {fn.get('name')!r} is not among the tools")
            try:
                if not isinstance(json.loads(fn.get("arguments") or ""), dict):
                    errs.append(f"message {i}: arguments are not a JSON object")
            except json.JSONDecodeError:
                errs.append(f"message {i}: arguments are not JSON")
            pending.add(c.get("id"))
    return errs


def read_back(fmt: str, data: bytes, split: str) -> tuple[int, list[str]]:
    """(rows read, problems) of one conversation file."""
    if fmt == "conversations_benchmark":
        doc = json.loads(data)
        tasks = doc.get("tasks") or []
        errs = [f"task {t.get('id')}: missing {k}" for t in tasks for k in BENCH_FIELDS if k not in t]
        errs += [f"task {t.get('id')}: split {t.get('split')}" for t in tasks if t.get("split") != split]
        if not doc.get("user_simulator"):
            errs.append("the benchmark does not name its user simulator")
        return len(tasks), errs
    if fmt == "conversations_parquet":
        table = pq.read_table(pa.BufferReader(data))
        if not table.schema.equals(PARQUET_SCHEMA, check_metadata=False):
            return 0, [f"schema differs from the conversation schema: {table.schema}"]
        rows = table.to_pylist()
        errs = []
        for r in rows:
            errs += validate_chat({"messages": json.loads(r["messages"]), "tools": json.loads(r["tools"])})
            json.loads(r["success_criteria"])
        return len(rows), errs
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    errs = []
    for r in rows:
        if fmt == "conversations_chat":
            errs += validate_chat(r)
            if (r.get("metadata") or {}).get("split") != split:
                errs.append(f"row {r.get('id')}: metadata.split differs from the file's split")
        elif not r.get("user_simulator") or not (r.get("ground_truth") or {}).get("success_criteria"):
            errs.append(f"row {r.get('id')}: an RL row without its simulator config or success criteria")
    return len(rows), errs
