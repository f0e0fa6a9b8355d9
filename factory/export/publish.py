"""All-or-nothing publication of an export under `<data_dir>/exports/`.

Every file is written (atomically, through `Store`) into a private staging folder
`exports/.staging-<nonce>/`, read back and validated there, and only then moved to
`exports/<version>/` (`version` = hash of the data files' digests, so the same content always
lands in the same folder). The pointer `exports/LATEST.json` is written last; it is the commit:
a failure before it leaves the previous export current and removes the staging folder.
The asset stages only (`build_exports(..., stage_only=True)`): its check reads the export back from the
staging folder, and `factory.export.build.publish_release` (`Staging.reopen` + `publish`) runs once
every blocking check passed; a failing check leaves the previous export current. On object
stores, where a folder cannot be renamed, the files are copied before the pointer is written.
"""

import hashlib
import logging
import time
import uuid
from collections.abc import Mapping
from typing import Any

from factory.io import Store

log = logging.getLogger(__name__)

EXPORTS_DIR = "exports"
POINTER = f"{EXPORTS_DIR}/LATEST.json"
STAGING_PREFIX = ".staging-"
STALE_STAGING_S = 3600


class ExportError(RuntimeError):
    """An export that could not be built, verified or published; nothing was published."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Staging:
    """A staging folder collecting the files of one export."""

    def __init__(self, store: Store):
        self.store = store
        self.dir = f"{EXPORTS_DIR}/{STAGING_PREFIX}{uuid.uuid4().hex[:12]}"
        self.files: dict[str, dict[str, Any]] = {}

    @classmethod
    def reopen(cls, store: Store, folder: str, files: Mapping[str, Mapping[str, Any]]) -> "Staging":
        """The staging folder an earlier step wrote (`folder`, with its `files` entries), to publish it now."""
        if not folder.startswith(f"{EXPORTS_DIR}/{STAGING_PREFIX}") or not store.is_dir(folder):
            raise ExportError(f"no staged export at {store.path(folder)} (already published, or removed)")
        staging = cls(store)
        staging.dir, staging.files = folder, {rel: dict(e) for rel, e in files.items()}
        return staging

    def write(self, rel: str, data: bytes) -> dict[str, Any]:
        self.store.write_bytes(f"{self.dir}/{rel}", data)
        entry = {"sha256": sha256_bytes(data), "bytes": len(data)}
        self.files[rel] = entry
        return entry

    def read(self, rel: str) -> bytes:
        return self.store.read_bytes(f"{self.dir}/{rel}")

    def version(self, exclude: tuple[str, ...] = ()) -> str:
        h = hashlib.sha256()
        for rel in sorted(self.files):
            if rel not in exclude:
                h.update(f"{rel}\0{self.files[rel]['sha256']}\n".encode())
        return h.hexdigest()[:16]

    def _identical(self, folder: str) -> bool:
        return all(
            self.store.exists(f"{folder}/{rel}")
            and sha256_bytes(self.store.read_bytes(f"{folder}/{rel}")) == e["sha256"]
            for rel, e in self.files.items()
        )

    def abort(self) -> None:
        _delete_dir(self.store, self.dir)

    def publish(self, version: str, pointer: Mapping[str, Any]) -> str:
        """Move the staging folder to exports/<version>/ and write the pointer; returns the folder."""
        final = f"{EXPORTS_DIR}/{version}"
        if self.store.is_dir(final) and not self._identical(final):
            _delete_dir(self.store, final)  # a damaged copy of the same version: replaced
        if self.store.is_dir(final):
            self.abort()  # the same content is already published
        else:
            try:
                self.store.move(self.dir, final)
            except (OSError, NotImplementedError):  # object stores cannot rename folders
                for rel in self.files:
                    self.store.write_bytes(f"{final}/{rel}", self.read(rel))
                self.abort()
        for rel, e in self.files.items():  # what was published is what was verified
            if sha256_bytes(self.store.read_bytes(f"{final}/{rel}")) != e["sha256"]:
                raise ExportError(f"published file {final}/{rel} differs from the verified staging copy")
        self.store.write_json(POINTER, dict(pointer))
        return final


def _delete_dir(store: Store, rel: str) -> None:
    try:
        store.remove_dir(rel)
    except OSError as e:  # cleanup must not hide the original error
        log.warning("could not remove %s: %s", store.path(rel), e)


def cleanup(store: Store, keep: int, current: str | None) -> list[str]:
    """Remove stale staging folders and published versions beyond the newest `keep` (never `current`)."""
    now = time.time()
    removed = []
    versions = []
    for entry in store.list_dir(EXPORTS_DIR):
        if not entry.is_dir:
            continue
        name = entry.name
        mtime = entry.mtime.timestamp() if entry.mtime else now
        if name.startswith(STAGING_PREFIX):
            if now - mtime > STALE_STAGING_S:
                _delete_dir(store, f"{EXPORTS_DIR}/{name}")
                removed.append(name)
        else:
            versions.append((mtime, name))
    versions.sort(reverse=True)
    for _, name in versions[keep:]:
        if name != current:
            _delete_dir(store, f"{EXPORTS_DIR}/{name}")
            removed.append(name)
    return removed
