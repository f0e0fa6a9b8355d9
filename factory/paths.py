"""Project-relative paths (no imports from the rest of the package, so anything may use it)."""

import os
from pathlib import Path


def project_root() -> Path:
    return Path(__file__).resolve().parent.parent


def resolve_path(path: str | os.PathLike) -> Path:
    """A relative path in the config is relative to the project root, not the working directory."""
    p = Path(path)
    return p if p.is_absolute() else project_root() / p
