"""Code versions for assets: content hashes of everything an asset's output depends on.

An asset names its core entry (the `factory` module it calls) and the bundled resources it reads
(prompt folders, expectation suites). The version hashes the entry's *import closure* inside the
`factory` package — every module it imports, at module level or inside a function, transitively —
plus the resources. A change to any of those files changes the version, so Dagster marks the asset
and everything downstream stale; nobody keeps a file list by hand. A resource that does not exist
is an error (a typo would otherwise hash as "missing" and never change).
"""

import ast
import hashlib
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from factory.paths import package_root

PACKAGE = "factory"
_SUFFIXES = {".py", ".json", ".j2", ".yaml", ".md"}


def _module_file(name: str) -> Path | None:
    """The source file of a `factory` module name, or None when the name is not a module."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = package_root().joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _imported_names(path: Path) -> frozenset[str]:
    """Every `factory.*` module a file imports (module level and inside functions). Parsed once per file
    version: the closures of a code location's assets share most files (20 closures parsed ~1,050 files,
    ~1/3 of the CPU of importing factory.definitions, paid by every process that imports it)."""
    st = path.stat()
    return _parsed_imports(path, st.st_mtime_ns, st.st_size)


@cache
def _parsed_imports(path: Path, mtime_ns: int, size: int) -> frozenset[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != PACKAGE:
                continue
            out.add(node.module)
            # `from factory.x import y` imports the submodule factory.x.y when y is one
            out.update(f"{node.module}.{a.name}" for a in node.names if _module_file(f"{node.module}.{a.name}"))
    return frozenset(out)


@cache
def import_closure(module: str) -> tuple[Path, ...]:
    """Source files of `module` and of every `factory` module it imports, transitively (with the
    `__init__.py` of each package on the way), sorted."""
    if _module_file(module) is None:
        raise ModuleNotFoundError(f"code_version: {module!r} is not a module of the {PACKAGE} package")
    seen: set[Path] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # the packages on the way are imported too
            f = _module_file(".".join(parts[:i]))
            if f is None or f in seen:
                continue
            seen.add(f)
            todo.extend(_imported_names(f))
    return tuple(sorted(seen))


def _entry_name(entry: str | ModuleType | Any) -> str:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, ModuleType):
        return entry.__name__
    mod = getattr(entry, "__module__", None)
    if mod is None:
        raise TypeError(f"code_version: cannot tell the module of {entry!r}")
    return mod


def _resource_files(rel: str) -> list[Path]:
    p = package_root() / rel
    if p.is_dir():
        return sorted(f for f in p.rglob("*") if f.suffix in _SUFFIXES and "__pycache__" not in f.parts)
    if p.is_file():
        return [p]
    raise FileNotFoundError(f"code_version: resource {rel!r} does not exist under {package_root()}")


def code_version(*entries: str | ModuleType | Any, resources: Iterable[str] = ()) -> str:
    """sha256 (first 16 hex) over the import closures of `entries` (modules, callables or dotted
    names inside `factory`) and the bundled `resources` (files or folders relative to the
    package root: `prompts/<role>`, `expectations/<suite>.json`)."""
    if not entries:
        raise ValueError("code_version needs at least one core entry")
    root = package_root()
    files: set[Path] = set()
    for e in entries:
        files.update(import_closure(_entry_name(e)))
    for rel in resources:
        files.update(_resource_files(rel))
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(str(f.relative_to(root)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


if __name__ == "__main__":  # `python -m factory.versions factory.ingest` lists a closure
    for name in sys.argv[1:]:
        for f in import_closure(name):
            print(f.relative_to(package_root()))  # noqa: T201
