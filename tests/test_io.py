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
