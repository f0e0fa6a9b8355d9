"""`factory init`: write a starter project into a folder the user chooses.

The files are templates shipped in this package: `factory.yaml` (a small working demo domain, so
that `factory run` works at once, and commented examples of an OpenAPI source with an API key
from the environment and of an MCP server over stdio), `.env.example`, a README stub with the
commands, and `workspace.yaml` for `dagster dev`. Existing files are never overwritten unless
`force` is given.
"""

import os
from pathlib import Path

from factory.io import Store
from factory.paths import package_root

TEMPLATES = package_root() / "factory" / "starter"
# file written → template it comes from
FILES: dict[str, str] = {
    "factory.yaml": "factory.yaml",
    ".env.example": "env.example",
    "README.md": "README.md",
    "workspace.yaml": "workspace.yaml",
}


class StarterError(RuntimeError):
    """The starter project cannot be written (the message names the files or the folder)."""


def write_starter(folder: str | os.PathLike = ".", *, force: bool = False) -> list[Path]:
    """Write the starter files into `folder` (created if missing); returns the files written.

    Refuses, writing nothing, when one of them exists already (unless `force`).
    """
    root = Path(folder).expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise StarterError(f"{root} exists and is not a folder")
    targets = [root / name for name in FILES]
    existing = [t for t in targets if t.exists()]
    if existing and not force:
        raise StarterError(
            f"not overwriting {', '.join(str(t) for t in existing)} (a project is already there; "
            "use --force to replace the starter files)"
        )
    store = Store(root)
    for name, template in FILES.items():
        store.write_bytes(name, (TEMPLATES / template).read_bytes())
    return targets
