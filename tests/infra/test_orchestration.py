"""`orchestration` in factory.yaml: the executor each choice builds, and the combinations refused."""

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
    assert config["start_method"] == {"forkserver": {"preload_modules": ["factory.definitions"]}}


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
