"""A small hand-built domain for the pure cascade tests: three tools and one valid task, no service."""

import copy
from typing import Any

from factory.records import task_id

DOMAIN = "music"
PLATFORM = "shop"


def _tool(name: str, props: dict[str, Any], required: list[str], fields: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "domain": DOMAIN,
        "platform": PLATFORM,
        "name": name,
        "description": f"{name} of the shop.",
        "input_schema": {"type": "object", "properties": props, "required": required},
        "param_locations": {p: "query" for p in props},
        "output_fields": {f: {"name": f, "type": "string"} for f in fields},
        "generic_params": {"key": "api_key"} if "api_key" in props else {},
        "source": {"kind": "openapi", "locator": "memory://shop"},
        **extra,
    }


def inventories(realtime: bool = False) -> dict[str, Any]:
    key = {"type": "string"}
    tools = [
        _tool("get_shop_key", {}, [], ["api_key"], key_acquisition={"output_field": "api_key"}),
        _tool("find_artist", {"api_key": key, "name": {"type": "string"}}, ["name", "api_key"], ["artist_id", "name"]),
        _tool(
            "list_albums",
            {"api_key": key, "artist_id": {"type": "integer"}, "page": {"type": "integer"}},
            ["artist_id", "api_key"],
            ["album_id", "title"],
            realtime=realtime,
        ),
    ]
    return {DOMAIN: {"domain": DOMAIN, "tools": tools}}


def trajectory() -> dict[str, Any]:
    return {
        "trajectory_id": "sha256:traj-queen",
        "seeds": [{"tool_id": f"{DOMAIN}/{PLATFORM}/find_artist", "param": "name", "value": "Queen"}],
        "thresholds": [],
        "bridge_values": [51],
        "golden_actions": [],
    }


def task(
    query: str = "How many albums did Queen release?", artist: str = "Queen", artist_id: int = 51, **changes: Any
) -> dict[str, Any]:
    actions = [
        {"step": 1, "tool": "get_shop_key", "platform": PLATFORM, "args": {}, "records": 1},
        {"step": 2, "tool": "find_artist", "platform": PLATFORM, "args": {"name": artist, "api_key": "<KEY>"},
         "records": 1},
        {"step": 3, "tool": "list_albums", "platform": PLATFORM, "args": {"artist_id": artist_id, "api_key": "<KEY>"},
         "records": 14, "total_count": 14},
    ]  # fmt: skip
    t: dict[str, Any] = {
        "id": task_id(DOMAIN, actions, query),
        "domain": DOMAIN,
        "platforms": [PLATFORM],
        "language": "en",
        "query": query,
        "templated_query": query,
        "answer": {"type": "number", "value": 14, "text": "14", "fields": ["total_count"]},
        "pattern": "SEQ",
        "category": "SEQ",
        "junctions": [
            {"from": "find_artist.artist_id", "to": "list_albums.artist_id", "type": "SEQ", "n": 1, "width": 1}
        ],
        "golden_actions": actions,
        "answer_spec": {"kind": "count", "calls": [{"step": 3, "index": 0}]},
        "available_tools": ["find_artist", "list_albums"],
        "system_state": {"current_date": "2025-06-30"},
        "max_allowed_calls": 8,
        "reward_basis": ["RESPONSE", "ACTION"],
        "lineage": {"trajectory_id": "sha256:traj-queen"},
    }
    for k, v in changes.items():
        t[k] = v
    t["id"] = task_id(DOMAIN, t["golden_actions"], t["query"])
    return copy.deepcopy(t)


class NoExecutor:
    """make_executor for tests that must not execute anything."""

    def __call__(self):
        raise AssertionError("this test must not execute tool calls")
