"""Issue 21 #8: a key-like value in one tool's data is redacted where it enters, counted per tool."""

import json
import re

import pytest

from factory.config import ExportsConfig, load_config
from factory.export.build import _scan
from factory.ingest import build_inventory, run_probes
from factory.tools.executor import KEY_LIKE_PLACEHOLDER, ToolExecutor
from factory.tools.mcp import run_sync
from factory.tools.openapi import fetch_spec, load_openapi
from tests.conftest import write_config
from tests.hostile.http_secrets import LEAKED, serve

PATTERNS = ExportsConfig().secret_patterns


@pytest.fixture(scope="module")
def hooks_url():
    with serve() as url:
        yield url


def test_executor_redacts_key_like_values_per_value(hooks_url):
    url = f"{hooks_url}/openapi.json"
    specs = load_openapi(fetch_spec(url), domain="hooks", platform="hooks", spec_locator=url, base_url=hooks_url)

    async def go():
        async with ToolExecutor(specs, key_patterns=PATTERNS) as ex:
            return await ex.call_many([("list_webhooks", {"team": "core"}), ("list_teams", {})])

    hooks, teams = run_sync(go())
    assert hooks.ok and hooks.record_count == 3
    assert LEAKED not in hooks.model_dump_json()
    assert hooks.records[0]["secret"] == KEY_LIKE_PLACEHOLDER
    assert hooks.records[1]["note"] == f"rotated from {KEY_LIKE_PLACEHOLDER}"
    assert hooks.records[0]["url"] == "https://example.org/h/1"  # the rest of the row is kept
    assert hooks.key_like_redacted == 2 and teams.key_like_redacted == 0


def test_probe_rows_are_redacted_and_counted_per_tool(hooks_url, tmp_path):
    domain = {
        "name": "hooks",
        "language": "en",
        "description": "Webhooks of teams.",
        "sources": [{"kind": "openapi", "platform": "hooks", "spec": f"{hooks_url}/openapi.json"}],
    }
    cfg = load_config(write_config(tmp_path, domains=[domain]))
    inventory, _ = build_inventory(cfg.domain("hooks"), cfg)
    value, meta = run_probes(inventory, cfg, progress=lambda m: None)
    text = json.dumps(value)
    assert LEAKED not in text
    assert _scan(text.encode(), set(), [re.compile(p) for p in cfg.exports.secret_patterns]) == []
    assert meta["key_like_values_by_tool"].keys() == {"list_webhooks"}
    assert meta["key_like_values_redacted"] == meta["key_like_values_by_tool"]["list_webhooks"] >= 2
    assert all(r["key_like_redacted"] == 0 for r in value["rows"] if r["tool"] == "list_teams")
