"""`data_dir: s3://bucket/prefix`: the store, the gated publication, the release publishers and the retrieval
index against a local S3 server (moto on loopback), read back with boto3 (not through the code under test);
and one domain end to end through exports (slow).
"""

import hashlib
import io
import json
import time
import uuid

import numpy as np
import pandas as pd
import pytest

from factory.io import (
    Store,
    StoreError,
    check_location,
    object_store_options,
    promote_staged,
    read_artifact,
    stage_artifact,
)
from tests.conftest import free_port
from tests.infra.conftest import FAKE_SECRET


def _prefix() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def test_store_roundtrip_on_s3_leaves_only_whole_objects(s3_env):
    prefix = _prefix()
    store = Store(f"s3://{s3_env.bucket}/{prefix}")
    written = store.write_json("tool_inventory/music.json", {"tools": [1, 2]})
    store.write_parquet("judged_queries/music.parquet", pd.DataFrame({"a": [1, 2, 3]}))
    store.write_json("tool_inventory/music.json", {"tools": [3]})  # overwrite

    assert written == f"s3://{s3_env.bucket}/{prefix}/tool_inventory/music.json"
    assert json.loads(s3_env.get(f"{prefix}/tool_inventory/music.json")) == {"tools": [3]}
    assert store.read_parquet("judged_queries/music.parquet")["a"].tolist() == [1, 2, 3]
    keys = s3_env.keys(prefix)
    assert not [k for k in keys if ".tmp-" in k], keys  # temporaries were renamed away
    assert {e.name for e in store.list_dir("")} >= {"tool_inventory", "judged_queries"}
    with pytest.raises(StoreError, match=f"s3://{s3_env.bucket}/{prefix}/nope.json"):
        store.read_json("nope.json")
    with pytest.raises(FileNotFoundError):
        store.move("nope.json", "other.json")


def test_gated_value_is_published_on_s3(s3_env):
    prefix = _prefix()
    store = Store(f"s3://{s3_env.bucket}/{prefix}")
    stage_artifact(store, "trajectories", "music", "run1", {"rows": [1]})
    assert read_artifact(store, "trajectories", "music", default=None) is None  # staged, not published
    promoted = promote_staged(store, "trajectories", "music", "run1")
    assert promoted == f"s3://{s3_env.bucket}/{prefix}/trajectories/music.json"
    assert json.loads(s3_env.get(f"{prefix}/trajectories/music.json")) == {"rows": [1]}
    assert not [k for k in s3_env.keys(f"{prefix}/trajectories/") if ".staged" in k]
    assert promote_staged(store, "trajectories", "music", "run1") is None  # already promoted


def test_split_and_export_publishers_on_s3(s3_env):
    from factory.export.publish import Staging
    from factory.splits import publish as splits_publish

    prefix = _prefix()
    store = Store(f"s3://{s3_env.bucket}/{prefix}")
    files = {"train.jsonl": b'{"id": 1}\n', "test.jsonl": b'{"id": 2}\n'}
    manifest = splits_publish.publish(store, "dataset_splits", files)
    for name, data in files.items():
        assert s3_env.get(f"{prefix}/dataset_splits/{name}") == data
        assert manifest["files"][name]["sha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert splits_publish.verify(store, "dataset_splits") == []

    staging = Staging(store)
    staging.write("openai_chat/train.jsonl", b'{"messages": []}\n')
    root = staging.publish("v1", {"version": "v1"})  # object stores cannot rename a folder: copied, then removed
    assert s3_env.get(f"{prefix}/{root}/openai_chat/train.jsonl") == b'{"messages": []}\n'
    assert json.loads(s3_env.get(f"{prefix}/exports/LATEST.json")) == {"version": "v1"}
    assert not [k for k in s3_env.keys(f"{prefix}/exports/") if ".staging-" in k]


@pytest.mark.slow  # LanceDB's full-text index makes many small requests to the (Python) test server
def test_retrieval_index_on_s3(s3_env):
    from factory.retrieval.index import write_index

    uri = f"s3://{s3_env.bucket}/{_prefix()}/retrieval_index/lancedb"
    assert object_store_options(uri) == {"endpoint": s3_env.endpoint, "allow_http": "true", "region": "us-east-1"}
    cols = ("id", "doc_id", "domain", "title", "source", "position", "text", "licence", "language", "meta")
    rows = [{c: (i if c == "position" else f"{c}-{i}") for c in cols} for i in range(3)]
    version = write_index(uri, "music__notes", rows, np.eye(3, 4, dtype=np.float32), "en")
    import lancedb

    table = lancedb.connect(uri, storage_options=object_store_options(uri)).open_table("music__notes")
    table.checkout(version)
    assert sorted(table.to_arrow().column("id").to_pylist()) == ["id-0", "id-1", "id-2"]
    assert any(k.endswith(".lance") for k in s3_env.keys(uri.split(s3_env.bucket + "/", 1)[1]))


@pytest.mark.parametrize(
    "location",
    [
        f"s3://AKIAFACTORYTEST:{FAKE_SECRET}@bucket/data",
        f"s3://bucket/data?access_key=AKIAFACTORYTEST&secret_key={FAKE_SECRET}",
        f"s3://bucket/data?session_token={FAKE_SECRET}",
    ],
)
def test_credentials_in_the_location_are_refused_without_echoing_them(location):
    with pytest.raises(StoreError, match="AWS_ACCESS_KEY_ID") as e:
        check_location(location)
    assert FAKE_SECRET not in str(e.value)
    with pytest.raises(StoreError):
        Store(location)


def test_plain_locations_pass_and_options_are_s3_only(monkeypatch):
    check_location("s3://bucket/prefix?region=eu-west-1")
    check_location("/tmp/data")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "https://minio.internal:9000")
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    assert object_store_options("s3://b/p") == {"endpoint": "https://minio.internal:9000"}  # https: no allow_http
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")  # the S3-specific variable wins
    assert object_store_options("s3://b/p")["endpoint"] == "http://127.0.0.1:9"
    assert object_store_options("/local/folder") == {}


# --------------------------------------------------------------------------- one domain end to end (slow)


# a whole music run in process, no injected faults: 293-307 s at load 8-11 on 2 cores (1190 s at load ~15 with
# faults, before a versions fix); in CI's `make test-slow` and in `make test-infra`
@pytest.mark.slow
@pytest.mark.infra
def test_music_end_to_end_on_s3_through_exports(tmp_path, s3_env):
    """`factory run`'s stages for one domain with `data_dir: s3://...`: every asset value, the splits, the
    exports and the retrieval index land in the bucket (nothing in a local data folder), and the published
    files read back with boto3 match the export manifest's checksums; the secret key is nowhere in the
    bucket or the run's events."""
    import dagster as dg

    from factory.config import load_config
    from factory.definitions import build_definitions
    from factory.demo.service import DemoService
    from sensors.jobs import run_pipeline
    from sensors.partitions import sync_domain_partitions
    from tests.conftest import write_config

    prefix = _prefix()
    base = load_config().model_dump(mode="json")
    domains = [d for d in base["domains"] if d["name"] == "music"]
    graph = {**base["graph"], "iterations": 3, "paths_per_iteration": 20, "eval_trials_per_edge": 0}
    synthesis = {**base["synthesis"], "per_pattern": 2, "attempts": 70}
    demo = {**base["demo"], "faults": {}, "port": free_port()}  # no injected faults (no backoff waits); never 8765
    path = write_config(tmp_path, domains=domains, graph=graph, synthesis=synthesis, demo=demo)
    text = path.read_text(encoding="utf-8").replace(str(tmp_path / "data"), f"s3://{s3_env.bucket}/{prefix}")
    path.write_text(text, encoding="utf-8")
    cfg = load_config(path)
    assert cfg.data_location == f"s3://{s3_env.bucket}/{prefix}"
    defs = build_definitions(str(path))
    t0 = time.monotonic()
    lines: list[str] = []
    with dg.instance_for_test() as instance, DemoService(cfg.demo, log_dir=tmp_path / "logs"):
        sync_domain_partitions(instance, cfg.domain_names)
        staged = run_pipeline(
            defs, instance, cfg.domain_names, progress=lambda m: lines.append(f"{time.monotonic() - t0:7.1f} s  {m}")
        )
        failed = [k for k, r in staged.items() if not r.success]
        assert not failed, failed
        events = [
            e for r in staged.values() for e in instance.all_logs(r.run_id) if e.dagster_event is not None
        ]  # fmt: skip
        assert FAKE_SECRET not in json.dumps([str(e) for e in events])
        materialized = {
            (e.dagster_event.asset_key.path[-1], e.dagster_event.partition)
            for e in events
            if e.dagster_event.is_step_materialization and e.dagster_event.asset_key is not None
        }
        print("\n".join(lines))
        print(_slowest_steps(events))

    assert not (tmp_path / "data").exists()
    keys = set(s3_env.keys(prefix + "/"))
    # every asset value the run materialized is an object in the bucket, and reads back through the store
    # (pyarrow.fs) as boto3 reads it
    assert len({a for a, _ in materialized}) >= 15, sorted(materialized, key=str)
    for asset, partition in sorted(materialized, key=str):
        rel = f"{prefix}/{asset}/{(partition or '__all__').replace('/', '_')}"
        found = [k for k in (rel + ".json", rel + ".parquet") if k in keys]
        assert len(found) == 1, (asset, partition, found)
        value = read_artifact(cfg, asset, partition)
        if found[0].endswith(".json"):
            assert value == json.loads(s3_env.get(found[0])), asset
        else:
            assert len(value) == len(pd.read_parquet(io.BytesIO(s3_env.get(found[0])))), asset
    for asset in ("tool_inventory/music.json", "trajectories/music.json", "dataset_splits/__all__.json"):
        assert f"{prefix}/{asset}" in keys, asset
    assert any(k.startswith(f"{prefix}/retrieval_index/lancedb/") for k in keys)
    assert not [k for k in keys if ".tmp-" in k or "/.staged/" in k or "/.staging-" in k]

    pointer = json.loads(s3_env.get(f"{prefix}/exports/LATEST.json"))
    manifest = json.loads(s3_env.get(f"{prefix}/exports/{pointer['manifest']}"))
    published = [
        e
        for fmt in ("openai_chat", "hf_parquet", "benchmark")
        if isinstance(manifest.get(fmt), dict)
        for e in manifest[fmt].values()
    ]
    assert published, sorted(manifest)
    for e in published:
        data = s3_env.get(f"{prefix}/exports/{pointer['version']}/{e['path']}")
        assert hashlib.sha256(data).hexdigest() == e["sha256"].removeprefix("sha256:"), e["path"]
    train = s3_env.get(f"{prefix}/dataset_splits/train.jsonl").decode("utf-8").splitlines()
    assert train and all(isinstance(json.loads(line), dict) for line in train)
    value = read_artifact(cfg, "dataset_exports")
    assert value["root"] == f"s3://{s3_env.bucket}/{prefix}/exports/{pointer['version']}"
    assert all(FAKE_SECRET.encode() not in s3_env.get(k) for k in keys if not k.endswith((".lance", ".idx")))


def _slowest_steps(events: list, n: int = 15) -> str:
    """The run's slowest steps (start to success), for the test's printed timing."""
    start: dict[tuple[str, str], float] = {}
    took: list[tuple[float, str]] = []
    for e in events:
        ev = e.dagster_event
        key = (e.run_id, ev.step_key or "")
        if ev.is_step_start:
            start[key] = e.timestamp
        elif ev.is_step_success and key in start:
            took.append((e.timestamp - start[key], ev.step_key or ""))
    took.sort(reverse=True)
    return "slowest steps: " + ", ".join(f"{k} {s:.1f} s" for s, k in took[:n])
