"""A small verified task (key acquisition, lookup by name, dependent call) and an in-memory tool environment."""

import copy
from typing import Any

KEY = "<KEY>"


def source_task(language: str = "en") -> dict[str, Any]:
    en = language == "en"
    return {
        "id": f"sha256:src-{language}",
        "domain": "music" if en else "korea",
        "language": language,
        "platforms": ["store"],
        "query": "Can you count the albums of the artist of track Different World for me?"
        if en
        else "철마면의 시군구의 읍면동 수를 알려 주세요.",
        "answer": {
            "type": "number",
            "value": 21 if en else 5,
            "text": "The artist has 21 albums." if en else "5곳입니다.",
        },
        "pattern": "SEQ",
        "golden_actions": [
            {"step": 1, "tool": "get_key", "platform": "store", "args": {}},
            {
                "step": 2,
                "tool": "search",
                "platform": "store",
                "args": {"name": "Different World" if en else "철마면", "api_key": KEY},
            },
            {"step": 3, "tool": "count_items", "platform": "store", "args": {"parent_id": 90, "api_key": KEY}},
        ],
        "available_tools": ["search", "count_items", "create_list"],
        "system_state": {"api_key": {"acquire_with": {"store": "get_key"}}},
        "expected_state_hash": {},
        "split": "train",
    }


def trajectory(language: str = "en") -> dict[str, Any]:
    value = "Different World" if language == "en" else "철마면"
    return {
        "seeds": [
            {"tool_id": "d/store/count_items", "param": "parent_id", "value": value,
             "via": {"tool_id": "d/store/search", "param": "name"}}
        ]
    }  # fmt: skip


def noun_of(tool_id: str, param: str, language: str) -> str | None:
    return {"en": "track", "ko": "읍면동"}[language] if (tool_id, param) == ("d/store/search", "name") else None


class FakeEnv:
    """Executes every offered tool (the state changes with create_list calls)."""

    def __init__(self, tools: list[str]) -> None:
        self.tools = set(tools)
        self.lists: list[dict[str, Any]] = []

    async def call(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        if name not in self.tools:
            return False, f"unknown tool {name}"
        if name == "create_list":
            self.lists.append(copy.deepcopy(args))
        return True, '{"records": []}'

    async def state(self) -> dict[str, str | None]:
        return {"store": f"lists:{len(self.lists)}"}
