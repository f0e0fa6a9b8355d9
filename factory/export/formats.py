"""Row builders and validators of the four export formats (pure).

- `openai_chat` (JSONL): OpenAI chat fine-tuning rows `{"messages", "tools", "parallel_tool_calls",
  "id", "metadata"}`. Messages: system (tool policy, current date), user (the query), per golden
  step one assistant message whose `tool_calls` are that step's calls (parallel calls share it),
  one `tool` message per call (`tool_call_id`, result content), the final assistant answer.
  `arguments` are JSON strings, as the OpenAI format has them. (`id` and `metadata` are ours; strip
  them before uploading to a service that rejects unknown keys.)
- `hf_parquet`: one row per task with a fixed Arrow schema (`HF_SCHEMA`, identical across
  splits so `datasets` loads every split): the same messages as structs, and the parts whose
  shape varies from row to row (tool definitions, answer value, state hashes, lineage) as JSON
  strings.
- `rl` (JSONL + a Parquet sibling): GRPO prompts. `prompt` = system + user messages, `tools` =
  the function definitions, `ground_truth` = what a reward function needs (the question, answer and its type,
  golden actions (the minimal path) and the other sufficient paths, max_allowed_calls,
  expected_state_hash, reward_basis). TRL's GRPOTrainer passes
  extra columns such as `ground_truth` to reward functions as keyword arguments; verl reads
  `data_source`, `prompt`, `reward_model: {style, ground_truth}` and `extra_info`, so both are
  present; `factory.rewards` has both rewards. The Parquet sibling (`RL_SCHEMA`) carries `tools` and
  `ground_truth` as JSON strings.
- `benchmark` (JSON): `{"dataset", "split", "env_lock", "count", "tasks": [Task]}`.
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from factory import prompts
from factory.export.results import CallView, needed_records, render_result
from factory.export.tools import TaskTools, tool_names
from factory.records import Task

SYSTEM_TEMPLATE = "export/system.{lang}"


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def system_prompt(task: Mapping[str, Any], tools: TaskTools) -> tuple[str, str]:
    """(system message, template name) for a task."""
    name = SYSTEM_TEMPLATE.format(lang=task["language"])
    if not prompts.exists(name):
        name = SYSTEM_TEMPLATE.format(lang="en")
    text = prompts.render(
        name,
        current_date=(task.get("system_state") or {}).get("current_date", ""),
        key_tools={} if tools.hidden_keys else tools.key_tools(),
        max_calls=task["max_allowed_calls"],
        policy=(task.get("policy") or {}).get("text") or "",  # tool-use policy (factory/retrieval/policy.py)
    )
    return text, name


def _unanswerable(task: Mapping[str, Any]) -> str | None:
    """The expected answer when the task's tool-use policy makes it unanswerable (no call is permitted)."""
    from factory.retrieval.policy import expected_answer

    return expected_answer(task)


def answer_of(task: Mapping[str, Any]) -> dict[str, Any]:
    """The answer as exported: the gold answer, or the unanswerable sentence of a changes_answer policy."""
    ans = task["answer"]
    refusal = _unanswerable(task)
    if refusal is None:
        return {k: ans.get(k) for k in ("type", "value", "text", "fields", "branch")}
    return {"type": "string", "value": refusal, "text": refusal, "fields": [], "branch": None}


def conversation(
    task: Mapping[str, Any], tools: TaskTools, calls: Sequence[CallView], caps: Mapping[str, int]
) -> tuple[list[dict[str, Any]], int]:
    """(messages, tool results truncated) for one task; `calls` aligned with its golden actions. A tool
    message keeps, beyond the caps, every record a later call's argument or the answer is read from."""
    system, _ = system_prompt(task, tools)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": task["query"]}]
    refusal = _unanswerable(task)
    if refusal is not None:  # the policy forbids a source every path needs: no permitted call, say so
        messages.append({"role": "assistant", "content": refusal})
        return messages, 0
    need = needed_records(task, calls)
    truncated = 0
    n = 0
    actions = task["golden_actions"]
    for step in sorted({a["step"] for a in actions}):
        idx = [i for i, a in enumerate(actions) if a["step"] == step and tools.visible(a)]
        if not idx:
            continue
        tool_calls, answers = [], []
        for i in idx:
            n += 1
            call_id = f"call_{n:02d}"
            a = actions[i]
            tool_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": tools.name_of(a), "arguments": _json(tools.call_args(a))},
                }
            )
            content, cut = render_result(
                calls[i],
                max_records=caps["max_result_records"],
                max_chars=caps["max_result_chars"],
                max_string=caps["max_string_chars"],
                keep=need.get(i),
            )
            truncated += int(cut)
            answers.append({"role": "tool", "tool_call_id": call_id, "content": content})
        messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
        messages.extend(answers)
    messages.append({"role": "assistant", "content": task["answer"]["text"]})
    return messages, truncated


def metadata(task: Mapping[str, Any], flags: Sequence[str], truncated: int, system_template: str) -> dict[str, Any]:
    return {
        "domain": task["domain"],
        "language": task["language"],
        "split": task.get("split"),
        "pattern": task["pattern"],
        "category": task["category"],
        "platforms": list(task["platforms"]),
        "answer": answer_of(task),
        "max_allowed_calls": task["max_allowed_calls"],
        "reward_basis": list(task["reward_basis"]),
        "tool_calls": 0 if _unanswerable(task) is not None else len(task["golden_actions"]),
        "hop_type": task.get("hop_type") or "API",
        "policy": task.get("policy"),
        "truncated_results": truncated,
        "flags": list(flags),
        "system_prompt": {system_template: f"sha256:{prompts.template_hash(system_template)}"},
    }


def chat_row(
    task: Mapping[str, Any], messages: list[dict[str, Any]], defs: list[dict[str, Any]], meta: dict[str, Any]
) -> dict[str, Any]:
    return {"id": task["id"], "messages": messages, "tools": defs, "parallel_tool_calls": True, "metadata": meta}


def golden(task: Mapping[str, Any], actions: Sequence[Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Golden actions (of the minimal path, or the given `actions` of another sufficient path) as exported."""
    return [
        {
            "step": a["step"],
            "tool": a["tool"],
            "platform": a["platform"],
            "arguments": a["args"],
            "call_digest": a.get("call_digest", ""),
            "result_digest": a.get("result_digest", ""),
            "records": a.get("records", 0),
            "total_count": a.get("total_count"),
        }
        for a in (task["golden_actions"] if actions is None else actions)
    ]


def alternatives(task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The task's other sufficient paths (ACTION correctness accepts any of them)."""
    return [
        {"note": p["note"], "golden_actions": golden(task, p["actions"])} for p in task.get("alternative_paths") or []
    ]


def ground_truth(task: Mapping[str, Any]) -> dict[str, Any]:
    ans = answer_of(task)
    unanswerable = _unanswerable(task) is not None
    return {
        "question": task["query"],  # the scorer reads the question's numbers and names as context
        "answer": {k: ans.get(k) for k in ("value", "text", "fields", "branch")},
        "answer_type": ans["type"],
        "golden_actions": [] if unanswerable else golden(task),
        "alternative_paths": [] if unanswerable else alternatives(task),
        "policy": task.get("policy"),
        "max_allowed_calls": task["max_allowed_calls"],
        "expected_state_hash": dict(task.get("expected_state_hash") or {}),
        "reward_basis": list(task["reward_basis"]),
    }


def rl_row(task: Mapping[str, Any], messages: list[dict[str, Any]], defs: list[dict[str, Any]], index: int,
           dataset: str) -> dict[str, Any]:  # fmt: skip
    gt = ground_truth(task)
    return {
        "id": task["id"],
        "data_source": f"{dataset}/{task['domain']}",
        "prompt": [{"role": m["role"], "content": m["content"]} for m in messages[:2]],
        "tools": defs,
        "ground_truth": gt,
        "reward_model": {"style": "rule", "ground_truth": _json(gt)},
        "extra_info": {
            "id": task["id"],
            "index": index,
            "split": task.get("split"),
            "domain": task["domain"],
            "language": task["language"],
            "pattern": task["pattern"],
            "category": task["category"],
            "hop_type": task.get("hop_type") or "API",
            "policy_category": (task.get("policy") or {}).get("category") or "none",
        },
    }


def rl_parquet_row(row: Mapping[str, Any]) -> dict[str, Any]:
    return {**row, "tools": _json(row["tools"]), "ground_truth": _json(row["ground_truth"])}


def _parquet_message(m: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "role": m["role"],
        "content": m.get("content"),
        "tool_calls": m.get("tool_calls"),
        "tool_call_id": m.get("tool_call_id"),
        "name": None,
    }


def hf_row(task: Mapping[str, Any], chat: Mapping[str, Any]) -> dict[str, Any]:
    by_id = {c["id"]: c["function"]["name"] for m in chat["messages"] for c in m.get("tool_calls") or []}
    msgs = []
    for m in chat["messages"]:
        pm = _parquet_message(m)
        if m["role"] == "tool":
            pm["name"] = by_id.get(m["tool_call_id"])
        msgs.append(pm)
    ans = answer_of(task)
    return {
        "id": task["id"],
        "domain": task["domain"],
        "language": task["language"],
        "split": task.get("split") or "",
        "pattern": task["pattern"],
        "category": task["category"],
        "platforms": list(task["platforms"]),
        "query": task["query"],
        "answer_text": ans["text"],
        "answer_type": ans["type"],
        "answer_value": _json(ans["value"]),
        "messages": msgs,
        "tools": _json(chat["tools"]),
        "golden_actions": [{**g, "arguments": _json(g["arguments"])} for g in golden(task)],
        "alternative_paths": _json(alternatives(task)),
        "max_allowed_calls": task["max_allowed_calls"],
        "reward_basis": list(task["reward_basis"]),
        "expected_state_hash": _json(task.get("expected_state_hash") or {}),
        "system_state": _json(task.get("system_state") or {}),
        "lineage": _json(task["lineage"]),
        "flags": list(chat["metadata"]["flags"]),
        "truncated_results": chat["metadata"]["truncated_results"],
    }


_TOOL_CALL = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ]
)
MESSAGE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("tool_calls", pa.list_(_TOOL_CALL)),
        ("tool_call_id", pa.string()),
        ("name", pa.string()),
    ]
)
_GOLDEN = pa.struct(
    [
        ("step", pa.int32()),
        ("tool", pa.string()),
        ("platform", pa.string()),
        ("arguments", pa.string()),
        ("call_digest", pa.string()),
        ("result_digest", pa.string()),
        ("records", pa.int64()),
        ("total_count", pa.int64()),
    ]
)
HF_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("domain", pa.string()),
        ("language", pa.string()),
        ("split", pa.string()),
        ("pattern", pa.string()),
        ("category", pa.string()),
        ("platforms", pa.list_(pa.string())),
        ("query", pa.string()),
        ("answer_text", pa.string()),
        ("answer_type", pa.string()),
        ("answer_value", pa.string()),
        ("messages", pa.list_(MESSAGE)),
        ("tools", pa.string()),
        ("golden_actions", pa.list_(_GOLDEN)),
        ("alternative_paths", pa.string()),
        ("max_allowed_calls", pa.int32()),
        ("reward_basis", pa.list_(pa.string())),
        ("expected_state_hash", pa.string()),
        ("system_state", pa.string()),
        ("lineage", pa.string()),
        ("flags", pa.list_(pa.string())),
        ("truncated_results", pa.int32()),
    ]
)
RL_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("data_source", pa.string()),
        ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("tools", pa.string()),
        ("ground_truth", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        (
            "extra_info",
            pa.struct(
                [
                    ("id", pa.string()),
                    ("index", pa.int64()),
                    ("split", pa.string()),
                    ("domain", pa.string()),
                    ("language", pa.string()),
                    ("pattern", pa.string()),
                    ("category", pa.string()),
                ]
            ),
        ),
    ]
)


def benchmark_doc(
    tasks: Sequence[Mapping[str, Any]], split: str, dataset: str, env_lock: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "dataset": dataset,
        "split": split,
        "env_lock": dict(env_lock),
        "count": len(tasks),
        "tasks": [dict(t) for t in tasks],
    }


# --------------------------------------------------------------------------- validation (read-back)


def validate_chat(row: Mapping[str, Any]) -> list[str]:
    """Problems of one chat row: shape, tool-call/answer pairing, tool names, JSON arguments."""
    errs: list[str] = []
    msgs = row.get("messages")
    defs = row.get("tools")
    if not isinstance(msgs, list) or len(msgs) < 3:
        return ["messages: a list of at least system, user, assistant"]
    if not isinstance(defs, list):
        return ["tools: not a list"]
    names = tool_names(defs)
    if len(set(names)) != len(names):
        errs.append("tools: duplicate function names")
    for d in defs:
        f = d.get("function") or {}
        if d.get("type") != "function" or not f.get("name") or (f.get("parameters") or {}).get("type") != "object":
            errs.append(f"tools: malformed definition {f.get('name')!r}")
    if msgs[0].get("role") != "system" or msgs[1].get("role") != "user" or not msgs[1].get("content"):
        errs.append("messages: must start with system and a non-empty user message")
    last = msgs[-1]
    if last.get("role") != "assistant" or last.get("tool_calls") or not last.get("content"):
        errs.append("messages: the last message must be the assistant's final answer")
    pending: dict[str, str | None] = {}
    answered: set[str] = set()
    for i, m in enumerate(msgs[2:-1], start=2):
        role = m.get("role")
        if role == "assistant":
            if pending:
                errs.append(f"message {i}: assistant before every tool call was answered ({sorted(pending)})")
            calls = m.get("tool_calls") or []
            if not calls:
                errs.append(f"message {i}: an intermediate assistant message without tool_calls")
            for c in calls:
                cid = c.get("id")
                fn = (c.get("function") or {}).get("name")
                if not cid or cid in pending or cid in answered:
                    errs.append(f"message {i}: tool call id {cid!r} missing or repeated")
                if fn not in names:
                    errs.append(f"message {i}: tool {fn!r} is not among the tools")
                try:
                    args = json.loads((c.get("function") or {}).get("arguments", ""))
                    if not isinstance(args, dict):
                        raise ValueError
                except ValueError:
                    errs.append(f"message {i}: arguments of {cid!r} are not a JSON object")
                pending[cid] = fn
        elif role == "tool":
            cid = m.get("tool_call_id")
            if cid not in pending:
                errs.append(f"message {i}: tool message for unknown or already answered call {cid!r}")
            else:
                pending.pop(cid)
                answered.add(cid)
            if not isinstance(m.get("content"), str):
                errs.append(f"message {i}: tool content is not a string")
        else:
            errs.append(f"message {i}: unexpected role {role!r}")
    if pending:
        errs.append(f"unanswered tool calls {sorted(pending)}")
    return errs


def validate_rl(row: Mapping[str, Any]) -> list[str]:
    errs = []
    prompt = row.get("prompt") or []
    if [m.get("role") for m in prompt] != ["system", "user"]:
        errs.append("prompt: must be [system, user]")
    gt = row.get("ground_truth") or {}
    missing = {"answer", "answer_type", "golden_actions", "alternative_paths", "max_allowed_calls",
               "expected_state_hash", "reward_basis"} - set(gt)  # fmt: skip
    if missing:
        errs.append(f"ground_truth: missing {sorted(missing)}")
    names = set(tool_names(row.get("tools") or []))
    if not names:
        errs.append("tools: empty")
    rm = row.get("reward_model") or {}
    if rm.get("style") != "rule" or json.loads(rm.get("ground_truth") or "null") != gt:
        errs.append("reward_model.ground_truth does not equal ground_truth")
    return errs


def validate_benchmark(doc: Mapping[str, Any], split: str) -> list[str]:
    errs = []
    if doc.get("split") != split or doc.get("count") != len(doc.get("tasks") or []):
        errs.append("header: split or count does not match")
    for t in doc.get("tasks") or []:
        try:
            task = Task.model_validate(t)
        except ValueError as e:
            errs.append(f"task {str(t.get('id'))[:19]}: {str(e).splitlines()[0]}")
            continue
        if task.split != split:
            errs.append(f"task {task.id[:19]}: split {task.split!r} in the {split} file")
    return errs
