"""Code versions for assets: content hashes of the files an asset's output depends on.

A change to any of those files (core module, expectation suite, prompt
template) changes the version, so Dagster marks the asset and everything
downstream stale.
"""

import hashlib

from factory.paths import package_root

_SUFFIXES = {".py", ".json", ".j2", ".yaml"}


def files_version(*rel_paths: str) -> str:
    """sha256 (first 16 hex) over the named files or folders (relative to the package root: factory/..., prompts/..., expectations/...)."""
    root = package_root()
    h = hashlib.sha256()
    for rel in sorted(rel_paths):
        p = root / rel
        files = sorted(f for f in p.rglob("*") if f.suffix in _SUFFIXES) if p.is_dir() else [p]
        for f in files:
            if "__pycache__" in f.parts:
                continue
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes() if f.exists() else b"<missing>")
    return h.hexdigest()[:16]
