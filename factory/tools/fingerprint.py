"""Tool-surface fingerprints: a hash that changes exactly when a tool surface drifts.

The surface of a tool is its name, input schema and output schema
(`ToolSpec.surface()`); descriptions, base URLs and sources are not part of it.
The fingerprint is SHA-256 over canonical JSON (sorted keys, compact
separators, UTF-8 kept) of the surfaces sorted by tool name, so it does not
depend on load order.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from factory.tools.spec import ToolSpec


def canonical_json(obj: Any) -> str:
    """Canonical JSON text: sorted keys, compact separators, non-ASCII kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_digest(obj: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of `obj`."""
    return "sha256:" + hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def surface_fingerprint(tools: Iterable[ToolSpec]) -> str:
    """Fingerprint of a set of tools (order-independent)."""
    surfaces = sorted((t.surface() for t in tools), key=lambda s: (s["name"], canonical_json(s)))
    return sha256_digest(surfaces)


def fingerprint_by_platform(tools: Iterable[ToolSpec]) -> dict[str, str]:
    """``{platform: fingerprint}`` over the tools of each platform (platforms sorted)."""
    groups: dict[str, list[ToolSpec]] = defaultdict(list)
    for t in tools:
        groups[t.platform].append(t)
    return {p: surface_fingerprint(groups[p]) for p in sorted(groups)}
