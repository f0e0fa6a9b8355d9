"""A project is the folder of its config: discovery, relative paths, `factory init`."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from factory.cli import main
from factory.config import CONFIG_ENV_VAR, ConfigError, find_config, load_config, parse_config
from factory.paths import package_root
from factory.starter import FILES, StarterError, write_starter

MINIMAL = """
name: t
domains:
  - name: music
    sources:
      - {kind: openapi, spec: "demo://chinook-catalog"}
"""


def _project(folder: Path, text: str = MINIMAL) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "factory.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv(CONFIG_ENV_VAR, raising=False)


# --------------------------------------------------------------------------- discovery


def test_flag_wins_over_env_and_working_directory(tmp_path, monkeypatch):
    flag = _project(tmp_path / "flag")
    env = _project(tmp_path / "env")
    here = _project(tmp_path / "here")
    monkeypatch.chdir(here.parent)
    monkeypatch.setenv(CONFIG_ENV_VAR, str(env))
    assert find_config(flag) == flag
    assert load_config(flag).project_dir == flag.parent
    assert find_config() == env
    assert load_config().project_dir == env.parent


def test_env_var_relative_to_working_directory(tmp_path, monkeypatch):
    _project(tmp_path / "p")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CONFIG_ENV_VAR, "p/factory.yaml")
    assert load_config().project_dir == tmp_path / "p"


def test_working_directory_then_parents(tmp_path, monkeypatch, no_env):
    path = _project(tmp_path / "proj")
    deep = tmp_path / "proj" / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "proj")
    assert find_config() == path
    monkeypatch.chdir(deep)
    assert find_config() == path
    assert load_config().project_dir == path.parent
    nested = _project(tmp_path / "proj" / "a")  # the nearest one wins
    assert find_config() == nested


def test_none_found_names_where_it_looked_and_suggests_init(tmp_path, monkeypatch, no_env):
    monkeypatch.chdir(tmp_path)
    # a factory.yaml above the temp folder would be found: the machine must not have one
    assert not any((p / "factory.yaml").exists() for p in tmp_path.parents), "a factory.yaml above the temp folder"
    with pytest.raises(ConfigError) as e:
        load_config()
    msg = str(e.value)
    assert str(tmp_path) in msg and "factory init" in msg and CONFIG_ENV_VAR in msg and "--config" in msg


def test_cli_reports_a_missing_project_and_accepts_config_after_the_command(tmp_path, monkeypatch, no_env, capsys):
    # a factory.yaml above the temp folder would be found: the machine must not have one
    assert not any((p / "factory.yaml").exists() for p in tmp_path.parents), "a factory.yaml above the temp folder"
    monkeypatch.chdir(tmp_path)
    assert main(["check-config"]) == 2
    assert "no project config found" in capsys.readouterr().err
    path = _project(tmp_path / "elsewhere")
    assert main(["check-config", "--config", str(path)]) == 0
    assert "domains: music" in capsys.readouterr().out
    assert main(["--config", str(path), "check-config"]) == 0


# --------------------------------------------------------------------------- relative paths


def test_relative_paths_resolve_against_the_config_folder(tmp_path, monkeypatch):
    proj = tmp_path / "proj"
    text = MINIMAL + (
        "data_dir: out/data\n"
        "splits: {benchmarks: [bench/b.jsonl]}\n"
        "models:\n"
        "  cache: {path: caches/llm.sqlite}\n"
        "  embeddings: {cache_path: caches/emb.sqlite, model: models/emb}\n"
        "  backends: {local: {kind: local, model_path: models/m.gguf}}\n"
    )
    cfg = load_config(_project(proj, text))
    (proj / "models" / "emb").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)  # the working directory does not matter
    assert cfg.project_dir == proj
    assert cfg.data_location == str(proj / "out" / "data")
    assert cfg.resolve("bench/b.jsonl") == str(proj / "bench" / "b.jsonl")
    assert cfg.resolve("/abs/x") == "/abs/x" and cfg.resolve("s3://bucket/p") == "s3://bucket/p"
    assert cfg.logs_dir == proj / "logs" and cfg.dagster_home == proj / ".dagster_home"
    m = cfg.resolved_models()
    assert m.cache.path == str(proj / "caches" / "llm.sqlite")
    assert m.embeddings.cache_path == str(proj / "caches" / "emb.sqlite")
    assert m.embeddings.model == str(proj / "models" / "emb")  # a local folder that exists
    assert m.backends["local"].model_path == str(proj / "models" / "m.gguf")
    assert cfg.models.cache.path == "caches/llm.sqlite"  # the config itself keeps what was written
    assert cfg.digest() == parse_config(text).digest()  # the folder is not part of the digest


def test_model_names_and_uris_are_left_alone(tmp_path):
    text = MINIMAL + "data_dir: s3://bucket/prefix\nmodels: {embeddings: {model: sentence-transformers/x}}\n"
    cfg = load_config(_project(tmp_path, text))
    assert cfg.data_location == "s3://bucket/prefix"
    assert cfg.resolved_models().embeddings.model == "sentence-transformers/x"


def test_benchmark_and_spec_files_are_read_from_the_project_folder(tmp_path, monkeypatch):
    from factory.splits.contamination import BenchmarkIndex
    from factory.tools.sources import resolve_source

    text = MINIMAL.replace('"demo://chinook-catalog"', "specs/api.json") + "splits: {benchmarks: [b.jsonl]}\n"
    cfg = load_config(_project(tmp_path / "proj", text))
    (tmp_path / "proj" / "b.jsonl").write_text('{"id": 1, "query": "list every album by the band"}\n')
    monkeypatch.chdir(tmp_path)
    index = BenchmarkIndex.load(cfg.splits.benchmarks, cfg.splits, base_dir=cfg.project_dir)
    assert len(index) == 1 and index.files[0]["path"] == "b.jsonl"  # recorded as configured
    spec, _ = resolve_source(cfg.domains[0].sources[0], cfg.demo, cfg.project_dir)
    assert spec == str(tmp_path / "proj" / "specs" / "api.json")


def test_parsed_config_without_a_file_resolves_against_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = parse_config(MINIMAL)
    assert cfg.data_location == str(tmp_path / "data")
    assert parse_config(MINIMAL, project_dir=tmp_path / "p").data_location == str(tmp_path / "p" / "data")


def test_user_data_never_defaults_to_the_package():
    """package_root is for bundled resources only (prompts/, expectations/, the demo)."""
    root = package_root()
    assert (root / "prompts").is_dir() and (root / "expectations").is_dir()
    assert (root / "factory" / "demo" / "mcp_server.py").is_file()


# --------------------------------------------------------------------------- factory init


def test_init_writes_a_starter_project_that_loads(tmp_path, monkeypatch, no_env):
    target = tmp_path / "new"
    written = write_starter(target)
    assert (
        sorted(p.name for p in written)
        == sorted(FILES)
        == sorted([".env.example", "README.md", "factory.yaml", "workspace.yaml"])
    )
    monkeypatch.chdir(target)
    cfg = load_config()
    assert cfg.project_dir == target and cfg.data_location == str(target / "data")
    assert len(cfg.domains) == 1 and {s.kind for s in cfg.domains[0].sources} == {"openapi", "mcp"}
    assert cfg.models.backend_for("query_paraphrase", "en") == "rules"  # no model download on first run
    text = (target / "factory.yaml").read_text()
    assert "api_key_env:" in text and "kind: mcp" in text and "command:" in text  # the commented examples
    uncommented = yaml.safe_load(text)
    assert uncommented["domains"][0]["sources"][1]["command"] == ["python", "-m", "factory.demo.mcp_server"]
    assert "factory.definitions" in (target / "workspace.yaml").read_text()
    assert "factory run" in (target / "README.md").read_text()
    assert "API_KEY" in (target / ".env.example").read_text()


def test_init_refuses_to_overwrite(tmp_path):
    (tmp_path / "factory.yaml").write_text("mine\n")
    with pytest.raises(StarterError, match="not overwriting .*factory.yaml"):
        write_starter(tmp_path)
    assert (tmp_path / "factory.yaml").read_text() == "mine\n"
    assert not (tmp_path / "README.md").exists()  # nothing written
    write_starter(tmp_path, force=True)
    assert "domains:" in (tmp_path / "factory.yaml").read_text()


def test_init_command_line(tmp_path):
    cmd = [sys.executable, "-m", "factory.cli", "init", str(tmp_path / "p")]
    first = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert first.returncode == 0 and (tmp_path / "p" / "factory.yaml").is_file(), first.stderr
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 2 and "not overwriting" in again.stderr
    forced = subprocess.run([*cmd, "--force"], capture_output=True, text=True, cwd=tmp_path)
    assert forced.returncode == 0
