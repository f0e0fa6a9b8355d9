"""The project's Dagster instance folder (DAGSTER_HOME) with telemetry off."""

import os
from pathlib import Path

DAGSTER_YAML = """# written by toolcall-factory; edit freely (see README, Production storage)
telemetry:
  enabled: false
"""


def ensure_dagster_home(default: str | os.PathLike | None = None) -> Path:
    """Use $DAGSTER_HOME if set, else `default` (the project's `ProjectConfig.dagster_home`, i.e.
    `<project>/.dagster_home`), else `./.dagster_home`; create it with telemetry off and export it."""
    home = Path(os.environ.get("DAGSTER_HOME") or default or Path.cwd() / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    cfg = home / "dagster.yaml"
    if not cfg.exists():
        cfg.write_text(DAGSTER_YAML, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


if __name__ == "__main__":
    from factory.config import load_config

    # `python -m factory.instance` prints the folder it prepared for the project found from here
    print(ensure_dagster_home(load_config().dagster_home))  # noqa: T201
