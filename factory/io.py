"""Durable, atomic storage of artifacts under a base path or URI.

Every write goes to a temporary sibling first and is then renamed into place,
so a killed process leaves either the old file or the new one, never half of
one.  Paths are resolved through `pyarrow.fs`, so a base such as
`s3://bucket/prefix` works the same way as a local folder.
"""

import io
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq


class StoreError(RuntimeError):
    """An artifact that is missing or cannot be decoded; the message names the file."""


def _json_default(o: Any) -> Any:
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if isinstance(o, set | frozenset):
        return sorted(o)
    if hasattr(o, "item"):  # numpy scalars
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)


def dumps(obj: Any, *, indent: int | None = None) -> str:
    """Canonical JSON used for artifacts and hashes (sorted keys, UTF-8 kept)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=indent, default=_json_default)


STALE_TEMP_S = 600


def _remove_stale_temps(folder: Path, name: str) -> None:
    """Delete temporaries of `name` left by writers killed mid-write (older than STALE_TEMP_S)."""
    now = time.time()
    for p in folder.glob(f".tmp-*-{name}"):
        try:
            if now - p.stat().st_mtime > STALE_TEMP_S:
                p.unlink()
        except OSError:
            pass


class Store:
    """A folder (local path or URI) holding artifacts addressed by relative paths."""

    def __init__(self, base: str | os.PathLike):
        base = str(base)
        if "://" in base:
            self.fs, root = pafs.FileSystem.from_uri(base)
        else:
            self.fs, root = pafs.LocalFileSystem(), str(Path(base).resolve())
        self.root = root.rstrip("/")
        self.base = base

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel.lstrip('/')}"

    def local_path(self, rel: str) -> Path | None:
        return Path(self.path(rel)) if isinstance(self.fs, pafs.LocalFileSystem) else None

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self.path(rel)).type != pafs.FileType.NotFound

    def delete(self, rel: str) -> None:
        if self.exists(rel):
            self.fs.delete_file(self.path(rel))

    # -- bytes
    def write_bytes(self, rel: str, data: bytes) -> str:
        target = self.path(rel)
        parent = target.rsplit("/", 1)[0]
        self.fs.create_dir(parent, recursive=True)
        tmp = f"{parent}/.tmp-{uuid.uuid4().hex}-{target.rsplit('/', 1)[1]}"
        with self.fs.open_output_stream(tmp) as f:
            f.write(data)
        if isinstance(self.fs, pafs.LocalFileSystem):
            os.replace(tmp, target)  # atomic on POSIX
            _remove_stale_temps(Path(parent), target.rsplit("/", 1)[1])
        else:
            self.fs.move(tmp, target)
        return target

    def read_bytes(self, rel: str) -> bytes:
        target = self.path(rel)
        try:
            with self.fs.open_input_stream(target) as f:
                return f.read()
        except FileNotFoundError as e:
            raise StoreError(f"artifact not found: {target}") from e

    # -- JSON
    def write_json(self, rel: str, obj: Any) -> str:
        return self.write_bytes(rel, dumps(obj, indent=1).encode("utf-8"))

    def read_json(self, rel: str) -> Any:
        raw = self.read_bytes(rel)
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise StoreError(f"corrupted JSON artifact {self.path(rel)}: {e}") from e

    def write_jsonl(self, rel: str, rows: list[Any]) -> str:
        text = "".join(dumps(r) + "\n" for r in rows)
        return self.write_bytes(rel, text.encode("utf-8"))

    def read_jsonl(self, rel: str) -> list[Any]:
        out = []
        for i, line in enumerate(self.read_bytes(rel).decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise StoreError(f"corrupted JSONL artifact {self.path(rel)} line {i}: {e}") from e
        return out

    # -- Parquet
    def write_parquet(self, rel: str, df: pd.DataFrame) -> str:
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), buf)
        return self.write_bytes(rel, buf.getvalue())

    def read_parquet(self, rel: str) -> pd.DataFrame:
        raw = self.read_bytes(rel)
        try:
            return pq.read_table(pa.BufferReader(raw)).to_pandas()
        except pa.ArrowInvalid as e:
            raise StoreError(f"corrupted Parquet artifact {self.path(rel)}: {e}") from e
