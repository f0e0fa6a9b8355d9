"""Where things are (no imports from the rest of the package, so anything may use it).

Two roots, never mixed:
- `package_root()`: the folder holding the installed `factory/` package (a checkout, or
  site-packages). Only bundled resources are read from it: `prompts/`, `expectations/`,
  the demo service. Nothing is ever written there.
- the project folder: the folder of the project's config file (`ProjectConfig.project_dir`).
  Every relative path in the config (data_dir, caches, model files, benchmark files) and
  everything a run writes (data, logs, the default DAGSTER_HOME) lives under it.
"""

import os
from pathlib import Path


def package_root() -> Path:
    """The folder holding `factory/` and the bundled `prompts/` and `expectations/` (read-only)."""
    return Path(__file__).resolve().parent.parent


def is_uri(location: str | os.PathLike) -> bool:
    """True for `scheme://...` locations (object stores); False for local paths."""
    return "://" in str(location)


def resolve_path(path: str | os.PathLike, base: str | os.PathLike | None = None) -> Path:
    """A local path made absolute: a relative one is taken relative to `base` (the project folder;
    None: the working directory). Paths from a project config are resolved by the config itself
    (`ProjectConfig.resolve`, `ProjectConfig.resolved_models`), so library code gets absolute ones."""
    p = Path(path).expanduser()
    return (p if p.is_absolute() else Path(base if base is not None else Path.cwd()) / p).resolve()


def resolve_location(location: str | os.PathLike, base: str | os.PathLike) -> str:
    """A URI unchanged; a local path absolute (relative ones against `base`)."""
    return str(location) if is_uri(location) else str(resolve_path(location, base))
