"""The one storage face: durable, atomic artifacts under the project's data folder.

- `data_store(cfg)`: the `Store` of a project's `data_dir` (relative: to the config's folder;
  or a URI). Nobody else works out where the data is.
- The asset layout `<asset>/<partition>.(json|parquet)` (`__all__` for unpartitioned assets):
  `artifact_rel`, `write_artifact`, `read_artifact`, `artifact_exists`, used by the Dagster IO
  manager and by every reader that goes around it (sensors, lineage, eval, tests).
- `Store`: every write goes to a temporary sibling first and is then renamed into place, so a
  killed process leaves either the old file or the new one, never half of one; `move`,
  `remove_dir`, `is_dir` and `list_dir` serve the all-or-nothing publishers
  (`factory/splits/publish.py`, `factory/export/publish.py`). Paths are resolved through
  `pyarrow.fs`, so a base such as `s3://bucket/prefix` works the same way as a local folder.
- Gated publication: `stage_artifact` / `promote_staged` for a value, and `publish_release` for the
  files an asset writes beside its value (splits, exports): such a value carries a `release`
  (`{"kind", "staged": folder}`) naming its staged files and the publisher registered for its kind.
"""

import io
import json
import os
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from factory.paths import is_uri

if TYPE_CHECKING:
    from factory.config import ProjectConfig


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


@dataclass(frozen=True)
class Entry:
    """One child of a store folder (`Store.list_dir`)."""

    name: str
    is_dir: bool
    mtime: datetime | None


# --------------------------------------------------------------------------- object stores

# query parameters of a pyarrow filesystem URI that carry secrets (s3://bucket/p?secret_key=...)
_SECRET_QUERY = ("access_key", "secret_key", "session_token", "password", "token", "credential")
# the standard AWS variables naming a custom S3 endpoint (MinIO, Ceph, a local test server), most specific first
ENDPOINT_ENV = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
REGION_ENV = ("AWS_REGION", "AWS_DEFAULT_REGION")


def check_location(location: str) -> None:
    """Refuse a data location that carries credentials (`s3://KEY:SECRET@bucket/...`, `?secret_key=`):
    the location is written to asset metadata and logs, so credentials come from the standard AWS
    environment variables (or the machine's role) instead."""
    if not is_uri(location):
        return
    parts = urlsplit(location)
    query = {k.lower() for k, _ in parse_qsl(parts.query, keep_blank_values=True)}
    if "@" in parts.netloc or any(any(s in k for s in _SECRET_QUERY) for k in query):
        scheme = parts.scheme or "s3"
        raise StoreError(
            f"data location {scheme}://{parts.hostname or '?'}/... carries credentials; it is recorded in metadata "
            "and logs, so give them as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) in the "
            "environment instead (README, Running on your infrastructure)"
        )


def _env_first(names: Iterable[str]) -> str | None:
    for n in names:
        if os.environ.get(n):
            return os.environ[n]
    return None


@lru_cache(maxsize=32)
def _filesystem(location: str, endpoint: str | None, region: str | None) -> tuple[pafs.FileSystem, str]:
    """One pyarrow filesystem per location (and endpoint/region from the environment): building an S3 client
    costs a few milliseconds and the IO manager opens the store for every value. The endpoint and region
    are part of the key only so that a changed environment gets a new client; pyarrow reads them itself."""
    return pafs.FileSystem.from_uri(location)


def object_store_options(location: str) -> dict[str, str]:
    """`storage_options` for libraries that reach object stores through Rust's object_store (LanceDB):
    the endpoint and region of the standard AWS variables, and `allow_http` for a plain-HTTP endpoint
    (a local S3 server). Credentials are not copied: object_store reads AWS_ACCESS_KEY_ID etc. itself.
    Empty for local paths and for URIs of other schemes."""
    if not location.startswith(("s3://", "s3a://")):
        return {}
    opts: dict[str, str] = {}
    endpoint = _env_first(ENDPOINT_ENV)
    if endpoint:
        opts["endpoint"] = endpoint
        if endpoint.startswith("http://"):
            opts["allow_http"] = "true"
    region = _env_first(REGION_ENV)
    if region:
        opts["region"] = region
    return opts


class Store:
    """A folder (local path or URI) holding artifacts addressed by relative paths."""

    def __init__(self, base: str | os.PathLike):
        base = str(base)
        if is_uri(base):
            check_location(base)
            self.fs, root = _filesystem(base, _env_first(ENDPOINT_ENV), _env_first(REGION_ENV))
        else:
            self.fs, root = pafs.LocalFileSystem(), str(Path(base).resolve())
        self.root = root.rstrip("/")
        self.base = base
        self.scheme = urlsplit(base).scheme if is_uri(base) else ""

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def _fs(self, rel: str) -> str:
        """The path of `rel` as the filesystem names it (`bucket/key` on an object store)."""
        return f"{self.root}/{rel.lstrip('/')}"

    def path(self, rel: str) -> str:
        """Where `rel` is, as people and `Store(...)` read it: a local path, or a URI (`s3://bucket/key`)."""
        p = self._fs(rel)
        return p if self.is_local else f"{self.scheme}://{p}"

    def local_path(self, rel: str) -> Path | None:
        return Path(self._fs(rel)) if self.is_local else None

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self._fs(rel)).type != pafs.FileType.NotFound

    def is_dir(self, rel: str) -> bool:
        return self.fs.get_file_info(self._fs(rel)).type == pafs.FileType.Directory

    def delete(self, rel: str) -> None:
        if self.exists(rel):
            self.fs.delete_file(self._fs(rel))

    # -- folders (the publishers' staging and release folders)
    def list_dir(self, rel: str) -> list[Entry]:
        """The children of folder `rel` (not recursive; empty when it does not exist)."""
        if not self.is_dir(rel):
            return []
        infos = self.fs.get_file_info(pafs.FileSelector(self._fs(rel), recursive=False))
        return [Entry(i.base_name, i.type == pafs.FileType.Directory, i.mtime) for i in infos]

    def move(self, src: str, dst: str) -> None:
        """Rename a file (atomic on a local disk) or a folder; `NotImplementedError`/`OSError` where the
        filesystem cannot rename folders (object stores: copy, then `remove_dir`)."""
        if self.is_local:
            target = self._fs(dst)
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            os.replace(self._fs(src), target)
        else:
            if not self.exists(src):  # object stores answer a missing source with a generic OSError
                raise FileNotFoundError(f"nothing to move at {self.path(src)}")
            self.fs.move(self._fs(src), self._fs(dst))

    def remove_dir(self, rel: str) -> None:
        """Delete folder `rel` and everything under it (nothing when it does not exist)."""
        if self.is_dir(rel):
            self.fs.delete_dir(self._fs(rel))

    # -- bytes
    def write_bytes(self, rel: str, data: bytes) -> str:
        """Write `rel` whole or not at all: a temporary sibling first, then a rename (local disk) or a
        server-side copy (object store: readers see the old object or the new one, never a part)."""
        target = self._fs(rel)
        parent = target.rsplit("/", 1)[0]
        self.fs.create_dir(parent, recursive=True)
        tmp = f"{parent}/.tmp-{uuid.uuid4().hex}-{target.rsplit('/', 1)[1]}"
        with self.fs.open_output_stream(tmp) as f:
            f.write(data)
        if self.is_local:
            os.replace(tmp, target)  # atomic on POSIX
            _remove_stale_temps(Path(parent), target.rsplit("/", 1)[1])
        else:
            self.fs.move(tmp, target)
        return self.path(rel)

    def read_bytes(self, rel: str) -> bytes:
        try:
            with self.fs.open_input_stream(self._fs(rel)) as f:
                return f.read()
        except FileNotFoundError as e:
            raise StoreError(f"artifact not found: {self.path(rel)}") from e

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


# --------------------------------------------------------------------------- the project's data folder


def data_store(cfg: "ProjectConfig") -> Store:
    """The Store of the project's `data_dir` (a URI, or a folder relative to the config file's folder)."""
    return Store(cfg.data_location)


ALL_PARTITIONS = "__all__"  # the file name of an unpartitioned asset's value
_EXTENSIONS = (".parquet", ".json")


def artifact_rel(asset: str, partition: str | None = None) -> str:
    """`<asset>/<partition>` (no extension) of an asset value; `__all__` when unpartitioned.

    A '/' in a partition key becomes '_' (a key is one file name).
    """
    return f"{asset.strip('/')}/{partition.replace('/', '_') if partition else ALL_PARTITIONS}"


def _as_store(src: "Store | ProjectConfig") -> Store:
    return src if isinstance(src, Store) else data_store(src)


def artifact_file(src: "Store | ProjectConfig", asset: str, partition: str | None = None) -> str | None:
    """The stored file (relative path) of an asset value, or None when it is not materialized."""
    store = _as_store(src)
    rel = artifact_rel(asset, partition)
    for ext in _EXTENSIONS:
        if store.exists(rel + ext):
            return rel + ext
    return None


def artifact_exists(src: "Store | ProjectConfig", asset: str, partition: str | None = None) -> bool:
    return artifact_file(src, asset, partition) is not None


_RAISE: Any = object()


def read_artifact(
    src: "Store | ProjectConfig", asset: str, partition: str | None = None, *, default: Any = _RAISE
) -> Any:
    """The stored value of an asset (partition): a DataFrame (Parquet) or the JSON value.

    A missing value raises StoreError, or returns `default` when one is given; a corrupted
    file always raises StoreError (naming the file).
    """
    store = _as_store(src)
    rel = artifact_file(store, asset, partition)
    if rel is None:
        if default is not _RAISE:
            return default
        rel = artifact_rel(asset, partition) + ".json"  # raises "artifact not found: <path>.json"
    return store.read_parquet(rel) if rel.endswith(".parquet") else store.read_json(rel)


def write_artifact(store: Store, asset: str, partition: str | None, value: Any) -> str:
    """Store an asset value (DataFrame: Parquet, anything else: JSON), removing the other format's
    file of the same value; returns the full path written."""
    rel = artifact_rel(asset, partition)
    if isinstance(value, pd.DataFrame):
        path = store.write_parquet(rel + ".parquet", value)
        store.delete(rel + ".json")
    else:
        path = store.write_json(rel + ".json", value)
        store.delete(rel + ".parquet")
    return path


# --------------------------------------------------------------------------- staged values (gated publication)

STAGED = ".staged"  # <asset>/.staged/<run id>/<partition>.<ext>: a value waiting for its blocking checks


def staged_rel(asset: str, partition: str | None, run_id: str) -> str:
    """`<asset>/.staged/<run id>/<partition>` (no extension): one run's value before its gates pass."""
    return f"{asset.strip('/')}/{STAGED}/{run_id}/{artifact_rel('x', partition).split('/', 1)[1]}"


def staged_files_dir(asset: str, run_id: str) -> str:
    """`<asset>/.staged/<run id>/files`: where a gated asset stages the files it publishes beside its value
    (swept with the run's staging folder when the run is over)."""
    return f"{asset.strip('/')}/{STAGED}/{run_id}/files"


def _staged_file(store: Store, asset: str, partition: str | None, run_id: str) -> str | None:
    rel = staged_rel(asset, partition, run_id)
    for ext in _EXTENSIONS:
        if store.exists(rel + ext):
            return rel + ext
    return None


def stage_artifact(store: Store, asset: str, partition: str | None, run_id: str, value: Any) -> str:
    """Write a value to the run's staging folder (the published value is untouched); returns the path."""
    rel = staged_rel(asset, partition, run_id)
    if isinstance(value, pd.DataFrame):
        return store.write_parquet(rel + ".parquet", value)
    return store.write_json(rel + ".json", value)


def read_staged(store: Store, asset: str, partition: str | None, run_id: str, *, default: Any = _RAISE) -> Any:
    """The run's staged value, or `default` when it has none (promoted, or never staged)."""
    rel = _staged_file(store, asset, partition, run_id)
    if rel is None:
        if default is not _RAISE:
            return default
        raise StoreError(f"no staged value: {store.path(staged_rel(asset, partition, run_id))}")
    return store.read_parquet(rel) if rel.endswith(".parquet") else store.read_json(rel)


def mark_gate_passed(store: Store, asset: str, partition: str | None, run_id: str, gate: str) -> None:
    store.write_bytes(f"{staged_rel(asset, partition, run_id)}.{gate}.passed", b"")


def gates_passed(store: Store, asset: str, partition: str | None, run_id: str, gates: set[str]) -> bool:
    rel = staged_rel(asset, partition, run_id)
    return all(store.exists(f"{rel}.{g}.passed") for g in gates)


def promote_staged(store: Store, asset: str, partition: str | None, run_id: str) -> str | None:
    """Publish the run's staged value (rename into `<asset>/<partition>.<ext>`, removing the other
    format's file) and drop its staging files; None when nothing was staged (already promoted)."""
    src = _staged_file(store, asset, partition, run_id)
    if src is None:
        return None
    ext = src.rsplit(".", 1)[1]
    rel = artifact_rel(asset, partition)
    try:
        store.move(src, f"{rel}.{ext}")
    except FileNotFoundError:  # a concurrent check of the same run promoted it first
        return None
    store.delete(f"{rel}.{'json' if ext == 'parquet' else 'parquet'}")
    run_dir = f"{asset.strip('/')}/{STAGED}/{run_id}"
    prefix = staged_rel(asset, partition, run_id).rsplit("/", 1)[1] + "."
    for e in store.list_dir(run_dir):
        if e.name.startswith(prefix) and e.name.endswith(".passed"):
            store.delete(f"{run_dir}/{e.name}")
    if not store.list_dir(run_dir):
        store.remove_dir(run_dir)
    if not store.list_dir(f"{asset.strip('/')}/{STAGED}"):
        store.remove_dir(f"{asset.strip('/')}/{STAGED}")
    return store.path(f"{rel}.{ext}")


def _promoted_leftover(store: Store, run_dir: str) -> bool:
    """Only gate markers are left: the value was promoted (markers are written after the value is staged and
    dropped right after it is moved), and the run was killed in between; a run still reading as live in an
    instance nobody cleaned (a `dagster asset materialize` re-run) must not keep them forever."""
    entries = store.list_dir(run_dir)
    return bool(entries) and all(not x.is_dir and x.name.endswith(".passed") for x in entries)


def remove_stale_staging(
    store: Store, is_live: Callable[[str], bool], assets: Iterable[str] | None = None
) -> list[str]:
    """Delete the staging folders of runs that are over or gone (`is_live(run_id)` false): leftovers of
    failed gates and killed runs. `assets`: the asset folders to sweep (None: every top-level folder).
    Returns the removed folders (relative)."""
    removed = []
    names = list(assets) if assets is not None else [e.name for e in store.list_dir("") if e.is_dir]
    for asset in names:
        base = f"{asset.strip('/')}/{STAGED}"
        for e in store.list_dir(base):
            if e.is_dir and (not is_live(e.name) or _promoted_leftover(store, f"{base}/{e.name}")):
                store.remove_dir(f"{base}/{e.name}")
                removed.append(f"{base}/{e.name}")
        if store.is_dir(base) and not store.list_dir(base):
            store.remove_dir(base)
    return removed


# --------------------------------------------------------------------------- staged releases (files beside a value)

RELEASE = "release"  # key of an asset value whose files wait in a staging folder for the value's gates
_RELEASE_PUBLISHERS: dict[str, Callable[[Store, dict[str, Any]], dict[str, Any]]] = {}


def register_release(kind: str, publish: Callable[[Store, dict[str, Any]], dict[str, Any]]) -> None:
    """Name the function that publishes the staged files of values whose `release["kind"]` is `kind`:
    `publish(store, value)` moves them into place and returns the value as published (no `release`)."""
    _RELEASE_PUBLISHERS[kind] = publish


def staged_release(value: Any) -> dict[str, Any] | None:
    """The `release` of a value that staged files (`{"kind", "staged": folder, ...}`), else None."""
    release = value.get(RELEASE) if isinstance(value, dict) else None
    return release if isinstance(release, dict) else None


def publish_release(store: Store, value: Any) -> Any:
    """Publish the files a value staged and return the value as published; a value without a release
    is returned as it is. Called once the value's blocking checks passed (or when it has none)."""
    release = staged_release(value)
    if release is None:
        return value
    kind = release.get("kind")
    publish = _RELEASE_PUBLISHERS.get(str(kind))
    if publish is None:
        raise StoreError(
            f"no publisher registered for staged release kind {kind!r} (known: {sorted(_RELEASE_PUBLISHERS)}); "
            f"its files stay in {store.path(str(release.get('staged')))}"
        )
    return publish(store, value)
