"""Bounds on what a tool may send back: nesting depth and size (issue 21: hostile responses).

A leaf module (no imports from the tool packages), shared by the executor and the transports.
"""

from typing import Any

MAX_JSON_DEPTH = 200  # deeper bodies are a structural failure: nothing downstream may recurse into them


class TooDeep(ValueError):
    """A JSON text nested deeper than the parser (or `MAX_JSON_DEPTH`) allows."""


def too_deep() -> str:
    """The detail of a body nested too deep."""
    return f"response nested deeper than {MAX_JSON_DEPTH} levels"


def too_large(limit: int) -> str:
    """The detail of a response cut at the size cap."""
    return f"response too large: more than {limit} bytes (executor.max_response_bytes)"


def json_depth_exceeds(obj: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a parsed JSON value nests containers deeper than `limit` (iterative: safe on any depth)."""
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list | tuple):
            children = value
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))
    return False
