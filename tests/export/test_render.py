"""Pure parts of the export: tool-result rendering caps, schema cleaning, chat validation."""

import json

from factory.export.formats import validate_chat
from factory.export.results import STRING_MARK, CallView, render_result
from factory.export.tools import clean_schema


def test_record_cap_and_marker():
    recs = [{"i": i, "name": f"row {i}"} for i in range(50)]
    text, cut = render_result(
        CallView(records=recs, total_count=912, record_count=50, outcome="semantic_success"),
        max_records=20,
        max_chars=100_000,
        max_string=400,
    )
    body = json.loads(text)
    assert cut and body["total_count"] == 912 and len(body["records"]) == 20
    assert body["truncated"] == {"shown": 20, "omitted": 30, "reason": "record cap 20"}
    assert body["records"][0] == recs[0]


def test_char_cap_and_long_strings():
    recs = [{"text": "x" * 1000, "i": i} for i in range(10)]
    text, cut = render_result(
        CallView(records=recs, total_count=None, record_count=10, outcome="semantic_success"),
        max_records=20,
        max_chars=1500,
        max_string=300,
    )
    body = json.loads(text)
    assert cut and len(text) <= 1500
    assert body["total_count"] == 10  # no reported total: the records returned
    assert body["records"][0]["text"].endswith(STRING_MARK) and len(body["records"][0]["text"]) < 320
    assert body["truncated"]["omitted"] == 10 - len(body["records"])
    assert "message cap 1500" in body["truncated"]["reason"] and "long string" in body["truncated"]["reason"]


def test_small_result_is_not_marked():
    text, cut = render_result(
        CallView(records=[{"a": 1}], total_count=1, record_count=1, outcome="semantic_success"),
        max_records=20,
        max_chars=4000,
        max_string=400,
    )
    assert not cut and json.loads(text) == {"total_count": 1, "records": [{"a": 1}]}


def test_clean_schema_drops_vendor_keys_not_property_names():
    schema = {
        "type": "object",
        "x-content-type": "application/json",
        "properties": {"x-odd-name": {"type": "string", "x-raw-body": True}, "items": {"anyOf": [{"x-a": 1}]}},
    }
    out = clean_schema(schema)
    assert out == {"type": "object", "properties": {"x-odd-name": {"type": "string"}, "items": {"anyOf": [{}]}}}


def _chat(messages):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    return {"messages": messages, "tools": tools}


def test_validate_chat_catches_unanswered_and_unknown_calls():
    sys_user = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    good = [*sys_user, {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "{}"}, {"role": "assistant", "content": "42"}]  # fmt: skip
    assert validate_chat(_chat(good)) == []
    unanswered = [*good[:3], {"role": "assistant", "content": "42"}]
    assert any("answered" in e for e in validate_chat(_chat(unanswered)))
    bad_name = json.loads(json.dumps(good))
    bad_name[2]["tool_calls"][0]["function"]["name"] = "g"
    assert any("not among the tools" in e for e in validate_chat(_chat(bad_name)))
    twice = [*good[:4], {"role": "tool", "tool_call_id": "c1", "content": "{}"}, good[-1]]
    assert any("already answered" in e for e in validate_chat(_chat(twice)))
    bad_args = json.loads(json.dumps(good))
    bad_args[2]["tool_calls"][0]["function"]["arguments"] = "[1]"
    assert any("JSON object" in e for e in validate_chat(_chat(bad_args)))
