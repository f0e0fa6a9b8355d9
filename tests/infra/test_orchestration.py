"""`orchestration` in factory.yaml: the executor each choice builds, and the combinations refused."""

from pathlib import Path

import pytest
import yaml

from factory.config import ConfigError, load_config, parse_config
from factory.executors import make_executor


def _cfg(**orchestration):
    data = load_config().model_dump(mode="json")
    data["orchestration"] = orchestration
    return parse_config(yaml.safe_dump(data, allow_unicode=True))


def test_default_is_in_process():
    assert load_config().orchestration.executor == "in_process"
    assert make_executor(_cfg()).name == "in_process"


def test_multiprocess_forks_from_a_preloading_server():
    ex = make_executor(_cfg(executor="multiprocess", max_concurrent=3, parallel_domains=2))
    assert ex.name == "multiprocess"
    # the configured executor carries its settings: a forkserver that imported the code location once
    config = ex.config_schema.resolve_config({}).value["config"]
    assert config["max_concurrent"] == 3
    preload = config["start_method"]["forkserver"]["preload_modules"]
    assert preload[0] == "factory.definitions"  # the code location, then what steps import lazily
    assert {"great_expectations", "sentence_transformers"} <= set(preload)


@pytest.mark.slow  # imports torch and Great Expectations (~12 s CPU)
def test_preloaded_modules_start_no_thread():
    """A forked step gets none of the fork server's threads: a module that starts one on import (lancedb's event
    loop) would leave its steps waiting on a thread that is not there."""
    import subprocess
    import sys

    from factory.executors import STEP_PRELOAD

    code = (
        "import sys, threading\n"
        "for m in sys.argv[1:]:\n"
        "    __import__(m)\n"
        "    extra = [t.name for t in threading.enumerate() if t is not threading.main_thread()]\n"
        "    assert not extra, (m, extra)\n"
    )
    root = Path(__file__).resolve().parents[2]  # factory.definitions loads the project's factory.yaml
    proc = subprocess.run(
        [sys.executable, "-c", code, *STEP_PRELOAD], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the check itself catches a module that does start one
    bad = subprocess.run([sys.executable, "-c", code, "lancedb"], capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "LanceDBBackgroundEventLoop" in bad.stderr


def test_k8s_job_passes_its_config_to_dagster_k8s():
    ex = make_executor(_cfg(executor="k8s_job", max_concurrent=5, k8s={"job_namespace": "factory"}))
    assert ex.name == "k8s_job"
    config = ex.config_schema.resolve_config({}).value["config"]
    assert config["job_namespace"] == "factory" and config["max_concurrent"] == 5


@pytest.mark.parametrize(
    ("orchestration", "needle"),
    [
        ({"parallel_domains": 2}, "parallel_domains > 1 needs executor multiprocess or k8s_job"),
        ({"executor": "multiprocess", "k8s": {"job_namespace": "x"}}, "orchestration.k8s is the k8s_job"),
        ({"executor": "celery"}, "executor"),
        ({"executor": "multiprocess", "max_concurrent": 0}, "max_concurrent"),
    ],
)
def test_refused_combinations_name_the_setting(orchestration, needle):
    with pytest.raises(ConfigError, match=needle):
        _cfg(**orchestration)
