"""The openai_strict variant: only messages/tools per line, ids and metadata in the sidecar by line number,
arguments typed per the tool's schema, and a validator that names the row it rejects."""

import json
from typing import Any

import pytest

from factory.export.strict import StrictRowError, strict_row, strict_rows, validate_strict

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_tracks",
            "description": "Search tracks.",
            "parameters": {
                "type": "object",
                "properties": {
                    "api_key": {"type": "string"},
                    "genre_id": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
                    "name": {"type": "string"},
                    "explicit": {"type": "boolean"},
                    "ids": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["api_key", "name"],
            },
        },
    }
]


def _chat(args: dict[str, Any], tid: str = "sha256:aa", split: str = "train") -> dict[str, Any]:
    return {
        "id": tid,
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "How many rock tracks?"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_01", "type": "function",
             "function": {"name": "search_tracks", "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": "call_01", "content": "{\"total_count\": 3}"},
            {"role": "assistant", "content": "There are 3 rock tracks."},
        ],
        "tools": TOOLS,
        "parallel_tool_calls": True,
        "metadata": {"split": split, "pattern": "SEQ"},
    }  # fmt: skip


def _args(row: dict[str, Any]) -> dict[str, Any]:
    return json.loads(row["messages"][2]["tool_calls"][0]["function"]["arguments"])


def test_rows_keep_only_messages_and_tools_with_typed_arguments() -> None:
    chat = _chat({"api_key": "<KEY>", "genre_id": "1", "name": "Rock", "explicit": "true", "ids": "7"})
    assert validate_strict({"messages": chat["messages"], "tools": chat["tools"]})  # as openai_chat has it: rejected
    rows, side = strict_rows([chat, _chat({"api_key": "<KEY>", "name": "Jazz"}, tid="sha256:bb")], "train")
    assert [set(r) for r in rows] == [{"messages", "tools"}] * 2
    assert _args(rows[0]) == {"api_key": "<KEY>", "genre_id": 1, "name": "Rock", "explicit": True, "ids": [7]}
    assert "content" not in rows[0]["messages"][2]  # a tool-calling turn has no null content
    assert side == [
        {"line": 1, "id": "sha256:aa", "metadata": chat["metadata"]},
        {"line": 2, "id": "sha256:bb", "metadata": {"split": "train", "pattern": "SEQ"}},
    ]
    assert all(validate_strict(r) == [] for r in rows)


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"api_key": "<KEY>", "genre_id": "rock", "name": "Rock"}, "genre_id"),  # cannot be typed
        ({"api_key": "<KEY>", "genre_id": 0, "name": "Rock"}, "genre_id"),  # below the minimum
        ({"api_key": "<KEY>"}, "'name' is a required property"),
    ],
)
def test_a_row_that_does_not_validate_stops_the_export_naming_it(args: dict[str, Any], problem: str) -> None:
    good = _chat({"api_key": "<KEY>", "name": "Jazz"})
    with pytest.raises(StrictRowError, match=rf"openai_strict/dev.jsonl line 2 \(task sha256:bad.*{problem}"):
        strict_rows([good, _chat(args, tid="sha256:bad")], "dev")


def test_validator_rejects_what_an_upload_rejects() -> None:
    row = strict_row(_chat({"api_key": "<KEY>", "name": "Jazz"}))
    assert validate_strict(row) == []
    assert any("keys outside" in e for e in validate_strict({**row, "id": "x"}))
    bad_msg = {**row, "messages": [*row["messages"][:-1], {"role": "assistant", "content": "3", "metadata": {}}]}
    assert any("unexpected keys ['metadata']" in e for e in validate_strict(bad_msg))
    bad_name = {**row, "tools": [{**TOOLS[0], "function": {**TOOLS[0]["function"], "name": "search tracks!"}}]}
    assert any("the name must match" in e for e in validate_strict(bad_name))
    null_content = {**row, "messages": [*row["messages"][:2], {**row["messages"][2], "content": None},
                                        *row["messages"][3:]]}  # fmt: skip
    assert any("content is null" in e for e in validate_strict(null_content))
