"""The project-local Dagster instance folder (DAGSTER_HOME) with telemetry off."""

import os
from pathlib import Path

from factory.config import project_root

DAGSTER_YAML = """# written by toolcall-factory; edit freely (see README, Production storage)
telemetry:
  enabled: false
"""


def ensure_dagster_home(path: str | os.PathLike | None = None) -> Path:
    """Use $DAGSTER_HOME if set, else `<project>/.dagster_home`; create it with telemetry off."""
    home = Path(path or os.environ.get("DAGSTER_HOME") or project_root() / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    cfg = home / "dagster.yaml"
    if not cfg.exists():
        cfg.write_text(DAGSTER_YAML, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


if __name__ == "__main__":
    print(ensure_dagster_home())  # noqa: T201 - `python -m factory.instance` prints the folder it prepared
