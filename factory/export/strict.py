"""The `openai_strict` export variant (pure): chat rows exactly as a fine-tuning upload accepts them.

`openai_chat` rows carry our `id` and `metadata` beside `messages`, `tools` and `parallel_tool_calls`, and a
tool call's arguments as the golden action recorded them (a query-string value "1" where the schema says
integer). The strict variant keeps only `messages` and `tools` per line; the ids and metadata go to a sidecar
file keyed by line number (`{"line": 1, "id": ..., "metadata": ...}`, 1-based, the line of the row in the
strict file); arguments are typed per the tool's JSON Schema (`factory.tools.argvalues.coerce`: "1" → 1 for
an integer, "true" → true for a boolean, a lone value → [value] for an array); an assistant message that
only calls tools has no `content` key (instead of null).

`validate_strict(row)` checks what the upload checks, and more: the top-level keys, the message keys per
role, the tool definitions (name pattern, object parameters), tool-call ids answered in order, every call's
arguments valid for its tool's schema (JSON Schema, types included), the final assistant answer.
`strict_rows` runs it on every row and raises `StrictRowError` naming the split, line and task: the export
is not published.
"""

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import jsonschema

from factory.export.formats import validate_chat
from factory.tools.argvalues import coerce

__all__ = ["SIDECAR_SUFFIX", "StrictRowError", "sidecar_row", "strict_row", "strict_rows", "validate_strict"]

SIDECAR_SUFFIX = ".meta.jsonl"
ROW_KEYS = frozenset({"messages", "tools"})
MESSAGE_KEYS = {
    "system": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    "assistant": frozenset({"role", "content", "tool_calls", "name", "weight"}),
    "tool": frozenset({"role", "content", "tool_call_id"}),
}
_FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class StrictRowError(ValueError):
    """A strict row that does not validate (the message names the split, the line and the task)."""


def _typed_args(args: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments typed per the parameters schema; a value that cannot take its type is left as it is (the
    validator reports it)."""
    props = schema.get("properties") or {}
    out = {}
    for k, v in args.items():
        sub = props.get(k)
        if isinstance(sub, Mapping) and v is not None:
            ok, typed = coerce(v, sub)
            out[k] = typed if ok else v
        else:
            out[k] = v
    return out


def strict_row(chat: Mapping[str, Any]) -> dict[str, Any]:
    """The strict form of an `openai_chat` row: {"messages", "tools"} with typed arguments."""
    params = {d["function"]["name"]: d["function"].get("parameters") or {} for d in chat["tools"]}
    messages = []
    for m in chat["messages"]:
        out = {k: v for k, v in m.items() if not (k == "content" and v is None)}
        if m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                fn = c["function"]
                args = json.loads(fn["arguments"])
                typed = _typed_args(args, params.get(fn["name"]) or {})
                arguments = json.dumps(typed, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
                calls.append(
                    {"id": c["id"], "type": "function", "function": {"name": fn["name"], "arguments": arguments}}
                )
            out["tool_calls"] = calls
        messages.append(out)
    return {"messages": messages, "tools": [dict(d) for d in chat["tools"]]}


def sidecar_row(line: int, chat: Mapping[str, Any]) -> dict[str, Any]:
    return {"line": line, "id": chat["id"], "metadata": chat["metadata"]}


def validate_strict(row: Mapping[str, Any]) -> list[str]:
    """Problems of one strict row ([] when it is what the upload accepts)."""
    if not isinstance(row, Mapping):
        return ["not a JSON object"]
    errs: list[str] = []
    extra = sorted(set(row) - ROW_KEYS)
    missing = sorted(ROW_KEYS - set(row))
    if extra:
        errs.append(f"keys outside messages/tools: {extra}")
    if missing:
        return [*errs, f"missing {missing}"]
    errs += validate_chat(row)
    params: dict[str, Any] = {}
    for d in row["tools"] if isinstance(row["tools"], list) else []:
        f = d.get("function") or {}
        name = str(f.get("name"))
        if set(d) - {"type", "function"} or set(f) - {"name", "description", "parameters", "strict"}:
            errs.append(f"tool {name!r}: unexpected keys")
        if not _FUNCTION_NAME.match(name):
            errs.append(f"tool {name!r}: the name must match {_FUNCTION_NAME.pattern}")
        try:
            jsonschema.validators.validator_for(f.get("parameters") or {}).check_schema(f.get("parameters") or {})
            params[name] = f.get("parameters") or {}
        except jsonschema.SchemaError as e:
            errs.append(f"tool {name!r}: parameters are not a valid JSON Schema ({e.message})")
    for i, m in enumerate(row["messages"] if isinstance(row["messages"], list) else []):
        role = m.get("role")
        allowed = MESSAGE_KEYS.get(str(role))
        if allowed is None:
            errs.append(f"message {i}: role {role!r}")
            continue
        if set(m) - allowed:
            errs.append(f"message {i} ({role}): unexpected keys {sorted(set(m) - allowed)}")
        if "content" in m and m["content"] is None:
            errs.append(f"message {i} ({role}): content is null (leave the key out)")
        if role == "assistant" and not m.get("tool_calls") and not isinstance(m.get("content"), str):
            errs.append(f"message {i}: an assistant message with neither content nor tool calls")
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            if set(c) - {"id", "type", "function"} or c.get("type") != "function":
                errs.append(f"message {i}: tool call {c.get('id')!r} is not a function call")
            schema = params.get(str(fn.get("name")))
            if schema is None:
                continue
            try:
                args = json.loads(fn.get("arguments") or "")
            except ValueError:
                continue  # validate_chat reported it
            errs += [
                f"message {i}: {fn.get('name')}({c.get('id')}): {'/'.join(map(str, e.absolute_path)) or 'arguments'}: "
                f"{e.message}"
                for e in jsonschema.validators.validator_for(schema)(schema).iter_errors(args)
            ]
    return errs


def strict_rows(
    chat_rows: Sequence[Mapping[str, Any]], split: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(strict rows, sidecar rows) of one split's chat rows, every row validated; `StrictRowError` names the
    first row that does not validate."""
    rows, side = [], []
    for line, chat in enumerate(chat_rows, start=1):
        row = strict_row(chat)
        errs = validate_strict(row)
        if errs:
            raise StrictRowError(
                f"openai_strict/{split}.jsonl line {line} (task {str(chat.get('id'))[:19]}…, "
                f"{(chat.get('metadata') or {}).get('pattern')}): {'; '.join(errs[:5])}"
            )
        rows.append(row)
        side.append(sidecar_row(line, chat))
    return rows, side
