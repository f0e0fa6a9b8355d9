"""Installed as a package (not editable), the factory works in a project folder of the user's choosing.

A temporary venv reuses the dependencies of the running interpreter (a .pth line pointing at its
site-packages) and gets the package with `pip install --no-deps --no-build-isolation` from a copy
of the source tree (building writes build/ and *.egg-info next to the sources). Then, from a
temporary folder and with the venv not activated (no venv on PATH, no PYTHONPATH),
`factory init` writes a starter project and `factory run` runs it on small settings: the outputs,
logs and Dagster instance must be in that folder, and nothing may be written into the source tree.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
import yaml

from factory.io import Store, read_artifact
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["pyproject.toml", "README.md", "factory", "assets", "sensors", "prompts", "expectations"]
SKIP = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache"}


def _snapshot(root: Path) -> dict[str, float]:
    """Every file of the source tree with its mtime (caches and the venv left out)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP]
        for f in filenames:
            p = Path(dirpath) / f
            out[str(p.relative_to(root))] = p.stat().st_mtime
    return out


def _venv_with_parent_packages(folder: Path) -> Path:
    """A venv without pip whose site-packages also sees the running interpreter's (dependencies, pip)."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(folder)
    python = folder / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    parents = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (Path(site) / "_parent_site_packages.pth").write_text("".join(f"{p}\n" for p in parents))
    return python


def _clean_env(python: Path) -> dict[str, str]:
    """The environment of a user who did not activate the venv (and has no factory config around)."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FACTORY_CONFIG", "DAGSTER_HOME", "VIRTUAL_ENV")
    }
    outer = {str(Path(sys.prefix) / "bin"), str(Path(sys.executable).parent), str(python.parent)}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p not in outer)
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    return env


@pytest.mark.slow
def test_installed_package_runs_a_project_in_its_own_folder(tmp_path):
    before = _snapshot(ROOT)
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns(*SKIP))
        else:
            shutil.copy2(p, src / name)
    python = _venv_with_parent_packages(tmp_path / "venv")
    env = _clean_env(python)
    pip = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", str(src)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stderr[-3000:]
    where = subprocess.run(
        [python, "-c", "import factory, factory.paths as p; print(factory.__file__); print(p.package_root())"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=True,
    ).stdout.split()  # fmt: skip
    site = Path(where[1])
    assert Path(where[0]).is_relative_to(tmp_path / "venv"), where  # the installed copy, not the sources
    assert (site / "prompts" / "query_writer").is_dir() and (site / "expectations" / "tool_inventory.json").is_file()

    factory_bin = python.parent / "factory"
    project = tmp_path / "my project"
    init = subprocess.run(
        [factory_bin, "init", str(project)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
    )
    assert init.returncode == 0, init.stderr[-3000:]
    cfg_file = project / "factory.yaml"
    cfg = yaml.safe_load(cfg_file.read_text())
    # small settings (tests/conftest.py synth_world) and a port of its own
    cfg["demo"]["port"] = free_port()
    cfg["graph"] = {"iterations": 3, "paths_per_iteration": 20, "eval_trials_per_edge": 0}
    cfg["synthesis"] = {"per_pattern": 2, "attempts": 70}
    cfg_file.write_text(yaml.safe_dump(cfg, sort_keys=False))

    run = subprocess.run([factory_bin, "run"], capture_output=True, text=True, env=env, cwd=project, timeout=1500)
    assert run.returncode == 0, (run.stdout[-4000:], run.stderr[-4000:])
    assert f"Outputs under {project / 'data'}/" in run.stdout
    data = Store(project / "data")
    (domain,) = cfg["domains"]
    inventory = read_artifact(data, "tool_inventory", domain["name"])
    assert {t["platform"] for t in inventory["tools"]} == {"airport-directory", "geo-mcp"}  # the MCP server ran
    assert read_artifact(data, "dataset_splits")["tasks"]
    assert data.exists("exports/LATEST.json")
    assert (project / ".dagster_home" / "dagster.yaml").is_file()
    assert any((project / "logs").glob("demo-service-*.log"))
    assert (project / "data" / "cache").is_dir()  # model-layer caches in the project too

    after = _snapshot(ROOT)
    assert sorted(set(after) - set(before)) == [] and [f for f in before if after.get(f) != before[f]] == []
