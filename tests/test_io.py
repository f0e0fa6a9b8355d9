import os

import pandas as pd
import pytest

from factory.io import Store, StoreError


def test_json_parquet_roundtrip_and_no_temp_files_left(tmp_path):
    s = Store(tmp_path)
    s.write_json("a/b.json", {"k": "값", "n": [1, 2]})
    assert s.read_json("a/b.json") == {"k": "값", "n": [1, 2]}
    df = pd.DataFrame({"x": [1, 2], "y": ["a", "b"]})
    s.write_parquet("a/c.parquet", df)
    pd.testing.assert_frame_equal(s.read_parquet("a/c.parquet"), df)
    assert sorted(os.listdir(tmp_path / "a")) == ["b.json", "c.parquet"]


def test_replace_is_atomic_rename(tmp_path, monkeypatch):
    s = Store(tmp_path)
    s.write_json("x.json", {"v": 1})

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        s.write_json("x.json", {"v": 2})
    monkeypatch.undo()
    assert s.read_json("x.json") == {"v": 1}  # the old version is intact


def test_corrupted_and_missing_files_name_the_path(tmp_path):
    s = Store(tmp_path)
    (tmp_path / "bad.json").write_text('{"a": ')
    with pytest.raises(StoreError, match="corrupted JSON artifact .*bad.json"):
        s.read_json("bad.json")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1garbage")
    with pytest.raises(StoreError, match="corrupted Parquet artifact .*bad.parquet"):
        s.read_parquet("bad.parquet")
    with pytest.raises(StoreError, match="artifact not found: .*nope.json"):
        s.read_json("nope.json")


def test_stale_temporaries_of_killed_writers_are_removed(tmp_path):
    s = Store(tmp_path)
    stale = tmp_path / ".tmp-dead-x.json"
    fresh = tmp_path / ".tmp-live-x.json"
    stale.write_text("{")
    fresh.write_text("{")
    old = stale.stat().st_mtime - 3600
    os.utime(stale, (old, old))
    s.write_json("x.json", {"v": 1})
    assert not stale.exists() and fresh.exists()  # a concurrent writer's temp file is left alone


# --------------------------------------------------------------------------- the storage face


def test_data_store_is_the_config_folder_data_dir(tmp_path, monkeypatch):
    from factory.config import load_config
    from factory.io import data_store

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "factory.yaml").write_text(
        "data_dir: out\ndomains: [{name: m, sources: [{kind: openapi, spec: 'demo://x'}]}]\n"
    )
    monkeypatch.chdir(tmp_path)
    store = data_store(load_config(tmp_path / "p" / "factory.yaml"))
    assert store.root == str(tmp_path / "p" / "out") and store.is_local


def test_artifact_layout_roundtrip_and_format_switch(tmp_path):
    from factory.io import artifact_exists, artifact_file, artifact_rel, read_artifact, write_artifact

    s = Store(tmp_path)
    assert artifact_rel("tool_inventory", "music") == "tool_inventory/music"
    assert artifact_rel("tool_catalog") == "tool_catalog/__all__"
    assert artifact_rel("a", "x/y") == "a/x_y"
    assert not artifact_exists(s, "a", "m") and read_artifact(s, "a", "m", default=None) is None
    with pytest.raises(StoreError, match="artifact not found: .*a/m.json"):
        read_artifact(s, "a", "m")
    path = write_artifact(s, "a", "m", {"v": 1})
    assert path == str(tmp_path / "a" / "m.json") and read_artifact(s, "a", "m") == {"v": 1}
    df = pd.DataFrame({"x": [1]})
    write_artifact(s, "a", "m", df)  # a DataFrame replaces the JSON value
    assert artifact_file(s, "a", "m") == "a/m.parquet" and not (tmp_path / "a" / "m.json").exists()
    pd.testing.assert_frame_equal(read_artifact(s, "a", "m"), df)
    write_artifact(s, "a", None, [1, 2])
    assert read_artifact(s, "a") == [1, 2] and (tmp_path / "a" / "__all__.json").exists()
    (tmp_path / "a" / "bad.json").write_text("{")
    with pytest.raises(StoreError, match="corrupted JSON"):
        read_artifact(s, "a", "bad", default=None)  # a corrupted value is never silently absent


def test_io_manager_uses_the_layout(tmp_path):
    import dagster as dg

    from factory.io import read_artifact
    from factory.resources import FactoryIOManager

    @dg.asset
    def thing() -> dict:
        return {"k": 1}

    @dg.asset
    def table() -> pd.DataFrame:
        return pd.DataFrame({"x": [1, 2]})

    res = dg.materialize([thing, table], resources={"io_manager": FactoryIOManager(base_dir=str(tmp_path))})
    assert res.success
    assert read_artifact(Store(tmp_path), "thing") == {"k": 1}
    assert list(read_artifact(Store(tmp_path), "table")["x"]) == [1, 2]


def test_folder_operations_for_publishers(tmp_path):
    s = Store(tmp_path)
    s.write_bytes("stage/one.txt", b"1")
    s.write_bytes("stage/sub/two.txt", b"2")
    assert s.is_dir("stage") and not s.is_dir("stage/one.txt") and not s.is_dir("nope")
    assert sorted((e.name, e.is_dir) for e in s.list_dir("stage")) == [("one.txt", False), ("sub", True)]
    assert s.list_dir("nope") == []
    s.move("stage/one.txt", "final/one.txt")  # a file, into a folder that does not exist yet
    s.move("stage", "release")  # a whole folder
    assert s.read_bytes("final/one.txt") == b"1" and s.read_bytes("release/sub/two.txt") == b"2"
    s.remove_dir("release")
    s.remove_dir("release")  # gone already: nothing to do
    assert not s.exists("release") and s.exists("final/one.txt")


def test_publish_release_dispatches_on_its_kind_and_names_unknown_ones(tmp_path):
    import pytest

    from factory.io import RELEASE, Store, StoreError, publish_release, register_release

    store = Store(tmp_path)
    store.write_bytes("a/.staged/r1/files/x.txt", b"new")
    plain = {"n": 1}
    assert publish_release(store, plain) is plain  # nothing staged beside it

    def move(st, value):
        st.move(value[RELEASE]["staged"] + "/x.txt", "a/x.txt")
        return {k: v for k, v in value.items() if k != RELEASE}

    register_release("test-kind", move)
    out = publish_release(store, {"n": 2, RELEASE: {"kind": "test-kind", "staged": "a/.staged/r1/files"}})
    assert out == {"n": 2} and store.read_bytes("a/x.txt") == b"new"
    with pytest.raises(StoreError, match=r"no publisher .*'other'.*a/.staged/r2"):
        publish_release(store, {RELEASE: {"kind": "other", "staged": "a/.staged/r2"}})


def test_a_killed_runs_markers_after_promotion_are_swept_even_when_it_reads_live(tmp_path):
    """test_crash under load: kill -9 between promote (value moved) and dropping the gate markers left
    `tool_inventory/.staged/<run>/korea.<gate>.passed`; a `dagster asset materialize` re-run never marks the
    killed run failed, so its folder read as live and stayed.  Markers alone are swept; a staged value is not."""
    from factory.io import STAGED, mark_gate_passed, remove_stale_staging, stage_artifact

    store = Store(str(tmp_path))
    mark_gate_passed(store, "tool_inventory", "korea", "killed", "contract")  # promoted, markers left
    stage_artifact(store, "tool_probes", "korea", "running", {"rows": []})  # a live run's value
    mark_gate_passed(store, "tool_probes", "korea", "running", "coverage")
    removed = remove_stale_staging(store, lambda rid: True)
    assert removed == [f"tool_inventory/{STAGED}/killed"]
    assert store.exists(f"tool_probes/{STAGED}/running/korea.json")
