"""Publish a set of files all-or-nothing: stage every file first, then move them into place.

`publish` does both at once; a gated asset calls `stage` when it is built and `publish_staged` once
its blocking checks passed (the checks read the staged folder), so a failing gate leaves the
previous release as it was.

Every byte is produced in memory and written to a staging folder before any published file is
touched, so a failure while building or writing leaves the previous release intact. The moves are
renames (atomic per file); the manifest, listing each file's sha256, is moved last, so a reader
can verify that the files it sees belong to one release. Files of the previous release that the
new one does not have (a split removed from the config) are deleted after the moves.
"""

import hashlib
import json
import uuid
from collections.abc import Mapping
from typing import Any

from factory.io import Store, dumps

MANIFEST = "manifest.json"


def publish(
    store: Store, folder: str, files: Mapping[str, bytes], *, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Write `files` ({name: bytes}) under `folder` all-or-nothing; returns the manifest."""
    staging = f"{folder}/.staging-{uuid.uuid4().hex}"
    manifest = stage(store, staging, files, extra=extra)
    publish_staged(store, staging, folder)
    return manifest


def stage(
    store: Store, staging: str, files: Mapping[str, bytes], *, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Write `files` and their manifest into the folder `staging` (nothing published); returns the manifest.
    A failure while writing removes the staging folder."""
    manifest = {
        "files": {
            name: {"sha256": "sha256:" + hashlib.sha256(data).hexdigest(), "bytes": len(data)}
            for name, data in sorted(files.items())
        },
        **dict(extra or {}),
    }
    payload = {**files, MANIFEST: dumps(manifest, indent=1).encode("utf-8")}
    try:
        for name, data in payload.items():
            store.write_bytes(f"{staging}/{name}", data)
    except BaseException:
        _remove_dir(store, staging)
        raise
    return manifest


def publish_staged(store: Store, staging: str, folder: str) -> dict[str, Any]:
    """Move a release staged by `stage` into `folder` (its files by rename, the manifest last), delete the
    previous release's files it does not have, remove the staging folder; returns the new manifest."""
    rel = f"{staging}/{MANIFEST}"
    if not store.exists(rel):
        raise FileNotFoundError(f"no staged release at {store.path(staging)} (already published, or removed)")
    manifest = json.loads(store.read_bytes(rel))
    names = sorted(manifest.get("files") or {})
    previous = _previous(store, folder)
    try:
        for name in [*names, MANIFEST]:
            store.move(f"{staging}/{name}", f"{folder}/{name}")
    finally:
        _remove_dir(store, staging)
    for name in previous - set(names):
        store.delete(f"{folder}/{name}")
    return manifest


def _previous(store: Store, folder: str) -> set[str]:
    rel = f"{folder}/{MANIFEST}"
    if not store.exists(rel):
        return set()
    try:
        return set(json.loads(store.read_bytes(rel)).get("files") or {})
    except (ValueError, AttributeError):
        return set()


def _remove_dir(store: Store, rel: str) -> None:
    try:
        store.remove_dir(rel)
    except OSError:
        pass


def verify(store: Store, folder: str) -> list[str]:
    """Problems found comparing the published files with the manifest (empty: consistent)."""
    rel = f"{folder}/{MANIFEST}"
    if not store.exists(rel):
        return [f"{store.path(rel)} is missing"]
    manifest = json.loads(store.read_bytes(rel))
    out = []
    for name, info in (manifest.get("files") or {}).items():
        p = f"{folder}/{name}"
        if not store.exists(p):
            out.append(f"{store.path(p)} is missing")
            continue
        digest = "sha256:" + hashlib.sha256(store.read_bytes(p)).hexdigest()
        if digest != info.get("sha256"):
            out.append(f"{store.path(p)} does not match the manifest")
    return out
