"""Schema variants in the exports (issue 18 item 5) and the manifest paths of every extra format."""

import json

from factory.export import build
from factory.export import variants as V


def _value(domain: str, task_ids: list[str]) -> dict:
    variants = [
        {"id": "native", "operator": "native", "published": True, "tool_definitions": [{"name": "a"}]},
        {"id": "merge_full_flat", "operator": "merge", "published": True, "tool_definitions": [{"name": "m"}]},
        {"id": "broken", "operator": "split", "published": False, "tool_definitions": [{"name": "s"}]},
    ]
    tasks = [
        {"task_id": t, "target_actions": [{"operation": "a", "arguments": {}}],
         "variants": {v["id"]: [{"name": v["tool_definitions"][0]["name"], "arguments": {}}] for v in variants}}
        for t in task_ids
    ]  # fmt: skip
    return {"domain": domain, "variants": variants, "tasks": tasks}


def test_rows_follow_the_split_and_leave_unpublished_variants_out():
    values = {"music": _value("music", ["t1", "t2", "gone"])}
    split_of = {"t1": "train", "t2": "test"}
    (fmt, rel, data, n), *_ = list(V.files(values, "train", split_of))
    rows = [json.loads(line) for line in data.decode().splitlines()]
    assert (fmt, rel, n) == ("variants", "variants/train.jsonl", 2)
    assert {(r["task_id"], r["variant_id"], r["split"]) for r in rows} == {
        ("t1", "native", "train"), ("t1", "merge_full_flat", "train")}  # fmt: skip
    assert V.read_back("variants", data, "train") == (2, [])
    assert V.read_back("variants", data, "test")[1]  # rows of another split are named


def test_catalog_keeps_each_variants_tools_once_and_no_values_means_no_files():
    values = {"music": _value("music", ["t1"])}
    rel, data, n = V.catalog_file(values)
    assert rel == "variants/catalog.json" and n == 2
    assert json.loads(data)["music"]["merge_full_flat"]["tools"] == [{"name": "m"}]
    assert V.read_back("variants_catalog", data, "all") == (2, [])
    assert list(V.files(None, "train", {"t1": "train"})) == [] and V.catalog_file(None) is None


def test_current_variants_keeps_domains_with_a_current_task():
    splits = {"tasks": [{"id": "t1", "split": "train"}]}
    got = V.current_variants({"music": _value("music", ["t1"]), "korea": _value("korea", ["x"]), "a": None}, splits)
    assert got is not None and set(got) == {"music"}
    assert V.current_variants({"korea": _value("korea", ["x"])}, splits) is None


def test_published_paths_move_every_format_a_manifest_names(tmp_path):
    """Conversation and variant files are moved from staging to the published folder like the task formats."""
    from factory.io import RELEASE, Store

    store = Store(str(tmp_path))
    staged = store.path(".staging-x")
    manifest = {RELEASE: {"staged": ".staging-x"}, "root": staged}
    for fmt in ("openai_chat", "conversations_chat", "variants", "variants_catalog"):
        manifest[fmt] = {"train": {"path": f"{staged}/{fmt}/train.jsonl", "rows": 1}}
    out = build.publish_paths(store, manifest, "v1")
    for fmt in ("openai_chat", "conversations_chat", "variants", "variants_catalog"):
        assert out[fmt]["train"]["path"] == f"{store.path('v1')}/{fmt}/train.jsonl"
