"""Truncation keeps what the conversation uses (issue 16 item 4): a record that a later call's argument or
the answer is read from stays in the tool message beyond the record and character caps."""

import json
from typing import Any

from factory.export.formats import conversation
from factory.export.results import CallView, needed_records, render_result

CAPS = {"max_result_records": 20, "max_result_chars": 4000, "max_string_chars": 400}


class _Tools:
    """The part of TaskTools that `conversation` reads (every call visible, arguments as recorded)."""

    hidden_keys = True

    def visible(self, action: dict[str, Any]) -> bool:
        return True

    def name_of(self, action: dict[str, Any]) -> str:
        return str(action["tool"])

    def call_args(self, action: dict[str, Any]) -> dict[str, Any]:
        return dict(action["args"])

    def key_tools(self) -> dict[str, str]:
        return {}


def _albums(n: int) -> list[dict[str, Any]]:
    return [{"album_id": 100 + i, "title": f"Album {i}", "notes": "n" * 120} for i in range(n)]


def _chain(bridge_index: int, answer_spec: dict[str, Any]) -> tuple[dict[str, Any], list[CallView]]:
    """list_albums (60 records) → get_album(album_id of record `bridge_index`) → answer from the spec."""
    albums = _albums(60)
    bridge = albums[bridge_index]
    task = {
        "language": "en",
        "query": "How many tracks does the album with the given title have?",
        "max_allowed_calls": 5,
        "system_state": {"current_date": "2025-06-30"},
        "golden_actions": [
            {"step": 1, "tool": "list_albums", "platform": "p", "args": {"page_size": 60, "api_key": "<KEY>"}},
            {"step": 2, "tool": "get_album", "platform": "p", "args": {"album_id": bridge["album_id"]}},
        ],
        "answer_spec": answer_spec,
        "answer": {"text": "It has 11 tracks."},
    }
    calls = [
        CallView(records=albums, total_count=347, record_count=60, outcome="semantic_success"),
        CallView(records=[{**bridge, "track_count": 11}], total_count=1, record_count=1, outcome="semantic_success"),
    ]
    return task, calls


def _tool_bodies(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def test_bridge_record_past_the_cap_is_kept_and_counted():
    spec = {"kind": "value", "field": "track_count", "calls": [{"step": 2, "index": 0}]}
    task, calls = _chain(45, spec)
    messages, truncated = conversation(task, _Tools(), calls, CAPS)
    first, second = _tool_bodies(messages)
    ids = [r["album_id"] for r in first["records"]]
    assert 145 in ids, "the record the next call's album_id comes from must be shown"
    assert ids == sorted(ids) and ids[:20] == list(range(100, 120))  # the first 20, then the kept one, in order
    assert first["truncated"]["shown"] == len(ids) and first["truncated"]["omitted"] == 60 - len(ids)
    assert (
        first["truncated"]["kept"] == 1
        and "1 record(s) a later call or the answer uses kept" in (first["truncated"]["reason"])
    )
    assert second == {"total_count": 1, "records": [calls[1].records[0]]}
    assert truncated == 1


def test_without_a_later_use_the_cap_applies_as_before():
    spec = {"kind": "count", "calls": [{"step": 1, "index": 0}]}
    task, calls = _chain(5, spec)  # the bridge lies inside the cap: nothing extra
    first = _tool_bodies(conversation(task, _Tools(), calls, CAPS)[0])[0]
    assert len(first["records"]) == 20 and "kept" not in first["truncated"]
    assert first["truncated"]["omitted"] == 40


def test_answer_record_selected_past_the_cap_is_kept():
    spec = {"kind": "value", "field": "title", "calls": [{"step": 1, "index": 0, "record": {"album_id": 157}}]}
    task, calls = _chain(3, spec)
    need = needed_records(task, calls)
    assert need[0] == {3: {"album_id"}, 57: {"title"}}
    first = _tool_bodies(conversation(task, _Tools(), calls, CAPS)[0])[0]
    assert {"album_id": 157, "title": "Album 57", "notes": "n" * 120} in first["records"]


def test_kept_records_survive_the_character_cap_and_their_fields_are_not_cut():
    recs = [{"id": i, "name": ("long name " * 60) + str(i)} for i in range(30)]
    view = CallView(records=recs, total_count=30, record_count=30, outcome="semantic_success")
    text, cut = render_result(view, max_records=20, max_chars=1200, max_string=100, keep={27: {"name"}})
    body = json.loads(text)
    kept = [r for r in body["records"] if r["id"] == 27]
    assert cut and kept and kept[0]["name"] == recs[27]["name"]  # the used field is never cut
    assert all(r["name"].endswith("…[cut]") for r in body["records"] if r["id"] != 27)
    assert body["truncated"]["omitted"] == 30 - len(body["records"])
    assert "message cap 1200 chars" in body["truncated"]["reason"]


def test_argument_matching_skips_keys_and_reads_only_earlier_steps():
    task, calls = _chain(45, {"kind": "count", "calls": [{"step": 2, "index": 0}]})
    # step 2's own record also holds album_id 145: it is not an earlier call, so it is not "needed"
    assert needed_records(task, calls) == {0: {45: {"album_id"}}}
