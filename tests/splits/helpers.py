"""Hand-built Task dicts for the splits tests."""

from typing import Any

from factory.records import task_id

KEYS = {"p-air": "get_air_key", "p-geo": "get_geo_key", "p-held": "get_held_key"}


def make_task(
    domain: str,
    query: str,
    steps: list[list[str]],
    *,
    pattern: str = "SEQ",
    platform: str = "p-air",
    junctions: list[tuple[str, str]] = (),
    language: str = "en",
    key: bool = True,
) -> dict[str, Any]:
    """A valid Task: step 1 acquires the platform key (when `key`), then one step per group of tools."""
    actions = []
    if key:
        actions.append({"step": 1, "tool": KEYS[platform], "platform": platform, "args": {}})
    for i, group in enumerate(steps, start=2 if key else 1):
        for tool in group:
            actions.append({"step": i, "tool": tool, "platform": platform, "args": {"q": query[:8], "key": "<KEY>"}})
    js = [{"from": f"{u}.field", "to": f"{v}.param", "type": "SEQ", "n": 1, "width": 1} for u, v in junctions]
    return {
        "id": task_id(domain, actions, query),
        "domain": domain,
        "platforms": [platform],
        "language": language,
        "query": query,
        "templated_query": query,
        "answer": {"type": "number", "value": 1, "text": "1"},
        "pattern": pattern,
        "category": pattern.split("+")[0]
        if pattern.split("+")[0] in {"SEQ", "FAN", "DRV", "SEM", "CMP", "COND"}
        else "MIXED",
        "junctions": js,
        "golden_actions": actions,
        "answer_spec": {"kind": "count"},
        "available_tools": sorted({a["tool"] for a in actions}),
        "system_state": {"api_key": {"acquire_with": {platform: KEYS[platform]}}} if key else {},
        "max_allowed_calls": len(actions) + 2,
        "reward_basis": ["RESPONSE", "ACTION"],
        "lineage": {"trajectory_id": "t-" + query[:10]},
    }


def inventory(domain: str, platforms: list[str]) -> dict[str, Any]:
    """A minimal tool_inventory value: the platforms' key tools (key_acquisition set)."""
    return {
        "domain": domain,
        "fingerprint": f"sha256:{domain}",
        "platform_fingerprints": {p: f"sha256:{p}" for p in platforms},
        "tools": [{"name": KEYS[p], "platform": p, "key_acquisition": {"output_field": "api_key"}} for p in platforms],
    }
