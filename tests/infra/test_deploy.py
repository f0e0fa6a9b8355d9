"""deploy/: the Dockerfile, the Dagster Helm chart values and the Kubernetes manifests, checked without a cluster.

- every manifest parses and round-trips through the Kubernetes client's own models (a misspelt or
  misplaced field is dropped by the model and the round trip differs; a missing required field raises);
- the Helm values match a schema of the fields set here (shapes of Dagster's chart: user deployments,
  external PostgreSQL, K8sRunLauncher, queued run coordinator), their pod volumes are Kubernetes volumes;
- the project config in the ConfigMap is a valid ProjectConfig whose k8s_job executor config passes
  dagster-k8s's own config schema, and whose demo/vLLM hosts are Services of the manifests;
- the Dockerfile copies only what exists, installs the extra that brings dagster-k8s, and serves the
  module named in pyproject's [tool.dagster] on the port the chart uses.
"""

import json
import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

from factory.config import parse_config

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PROJECT_FILE = "/opt/factory/project/factory.yaml"

KINDS = {
    ("apps/v1", "Deployment"): "V1Deployment",
    ("v1", "Service"): "V1Service",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("batch/v1", "Job"): "V1Job",
}


def manifests() -> list[dict[str, Any]]:
    docs = []
    for f in sorted((DEPLOY / "k8s").glob("*.yaml")):
        for doc in yaml.safe_load_all(f.read_text(encoding="utf-8")):
            if doc is not None:
                doc["__file__"] = f.name
                docs.append(doc)
    return docs


def by_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in manifests() if d["kind"] == kind}


def k8s_roundtrip(obj: Any, klass: str) -> Any:
    """`obj` read into the Kubernetes client's model `klass` and written back."""
    from kubernetes.client import ApiClient

    class _Response:
        data = json.dumps(obj)

    api = ApiClient()
    return api.sanitize_for_serialization(api.deserialize(_Response(), klass))


def test_manifests_are_valid_kubernetes_objects():
    docs = manifests()
    assert {(d["apiVersion"], d["kind"]) for d in docs} == set(KINDS)  # every kind is checked below
    for d in docs:
        body = {k: v for k, v in d.items() if k != "__file__"}
        assert k8s_roundtrip(body, KINDS[(d["apiVersion"], d["kind"])]) == body, d["__file__"]
        assert d["metadata"]["namespace"] == "factory", d["__file__"]


def test_roundtrip_catches_a_misplaced_field():
    dep = by_kind("Deployment")["factory-demo"]
    body = {k: v for k, v in dep.items() if k != "__file__"}
    bad = json.loads(json.dumps(body))
    bad["spec"]["template"]["spec"]["containers"][0]["port"] = 8765  # `ports` misspelt
    assert k8s_roundtrip(bad, "V1Deployment") != bad
    del bad["spec"]["template"]["spec"]["containers"][0]["name"]  # required
    with pytest.raises(ValueError, match="name"):
        k8s_roundtrip(bad, "V1Deployment")


def test_services_select_their_deployments_and_ports():
    deps, services = by_kind("Deployment"), by_kind("Service")
    assert set(services) == {"factory-demo", "vllm"}
    for name, svc in services.items():
        pod = deps[name]["spec"]["template"]
        assert svc["spec"]["selector"].items() <= pod["metadata"]["labels"].items(), name
        assert deps[name]["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
        named = {p["name"] for c in pod["spec"]["containers"] for p in c.get("ports", [])}
        assert all(p["targetPort"] in named for p in svc["spec"]["ports"]), name
    gpu = deps["vllm"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert gpu["nvidia.com/gpu"] == "1"


def _service_of(url_host: str) -> str:
    name, namespace, *rest = url_host.split(".")
    assert namespace == "factory" and rest[:1] == ["svc"], url_host
    return name


def test_project_config_in_the_configmap():
    from dagster._config import process_config
    from dagster_k8s import k8s_job_executor

    from factory.executors import make_executor

    text = by_kind("ConfigMap")["factory-project"]["data"]["factory.yaml"]
    cfg = parse_config(text)
    assert cfg.data_dir.startswith("s3://")
    assert cfg.orchestration.executor == "k8s_job"
    checked = process_config(k8s_job_executor.config_schema.config_type, cfg.orchestration.k8s)
    assert checked.success, [e.message for e in checked.errors]
    assert make_executor(cfg).name == "k8s_job"
    services = by_kind("Service")
    demo = services[_service_of(cfg.demo.host)]
    assert cfg.demo.port in {p["port"] for p in demo["spec"]["ports"]}
    urls = [b.base_url for b in cfg.models.backends.values() if b.kind == "vllm"]
    assert urls, "the cluster config reaches vLLM"
    for u in urls:
        parts = urlsplit(u)
        assert parts.port in {p["port"] for p in services[_service_of(parts.hostname or "")]["spec"]["ports"]}
    # the step pods mount the same config file the code location reads
    mounts = cfg.orchestration.k8s["volume_mounts"]
    assert any(m["mount_path"] == PROJECT_FILE and m["sub_path"] == "factory.yaml" for m in mounts)


def test_k8s_executor_config_rejects_an_unknown_key():
    """The check above is real: a key dagster-k8s does not know (a container field put at the root) fails."""
    from dagster._config import process_config
    from dagster_k8s import k8s_job_executor

    bad = {"job_namespace": "factory", "container_config": {"resources": {}}}
    assert not process_config(k8s_job_executor.config_schema.config_type, bad).success


NAMED = {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}
IMAGE = {
    "type": "object",
    "required": ["repository", "tag", "pullPolicy"],
    "additionalProperties": False,
    "properties": {
        "repository": {"type": "string"},
        "tag": {"type": "string"},
        "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
    },
}
HELM_VALUES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["dagster-user-deployments", "postgresql", "runLauncher", "dagsterDaemon"],
    "properties": {
        "global": {
            "type": "object",
            "properties": {"postgresqlSecretName": {"type": "string"}, "serviceAccountName": {"type": "string"}},
        },
        "dagster-user-deployments": {
            "type": "object",
            "required": ["enabled", "enableSubchart", "deployments"],
            "properties": {
                "enabled": {"const": True},
                "enableSubchart": {"type": "boolean"},
                "deployments": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["name", "image", "port", "dagsterApiGrpcArgs"],
                        "additionalProperties": False,
                        "properties": {
                            "name": {"type": "string", "pattern": "^[a-z0-9-]+$"},
                            "image": IMAGE,
                            "port": {"type": "integer"},
                            "dagsterApiGrpcArgs": {"type": "array", "items": {"type": "string"}},
                            "includeConfigInLaunchedRuns": {
                                "type": "object",
                                "properties": {"enabled": {"type": "boolean"}},
                                "additionalProperties": False,
                            },
                            "env": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["name"],
                                    "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
                                },
                            },
                            "envConfigMaps": NAMED,
                            "envSecrets": NAMED,
                            "volumes": {"type": "array"},
                            "volumeMounts": {"type": "array"},
                            "resources": {"type": "object"},
                        },
                    },
                },
            },
        },
        "postgresql": {
            "type": "object",
            "required": ["enabled", "postgresqlHost", "postgresqlUsername", "postgresqlDatabase", "service"],
            "properties": {
                "enabled": {"const": False},
                "postgresqlHost": {"type": "string", "minLength": 1},
                "postgresqlUsername": {"type": "string"},
                "postgresqlPassword": {"const": ""},  # never a password in the values: the secret holds it
                "postgresqlDatabase": {"type": "string"},
                "postgresqlParams": {"type": "object"},
                "service": {"type": "object", "required": ["port"], "properties": {"port": {"type": "integer"}}},
            },
        },
        "generatePostgresqlPasswordSecret": {"const": False},
        "runLauncher": {
            "type": "object",
            "required": ["type", "config"],
            "properties": {
                "type": {"const": "K8sRunLauncher"},
                "config": {
                    "type": "object",
                    "required": ["k8sRunLauncher"],
                    "properties": {
                        "k8sRunLauncher": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {
                                "imagePullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
                                "jobNamespace": {"type": "string"},
                                "loadInclusterConfig": {"type": "boolean"},
                                "envConfigMaps": NAMED,
                                "envSecrets": NAMED,
                                "envVars": {"type": "array", "items": {"type": "string"}},
                                "volumes": {"type": "array"},
                                "volumeMounts": {"type": "array"},
                                "runK8sConfig": {"type": "object"},
                            },
                        }
                    },
                },
            },
        },
        "dagsterDaemon": {
            "type": "object",
            "required": ["enabled", "runCoordinator"],
            "properties": {
                "enabled": {"const": True},
                "runCoordinator": {
                    "type": "object",
                    "required": ["enabled", "type", "config"],
                    "properties": {
                        "type": {"const": "QueuedRunCoordinator"},
                        "config": {
                            "type": "object",
                            "required": ["queuedRunCoordinator"],
                            "properties": {
                                "queuedRunCoordinator": {
                                    "type": "object",
                                    "properties": {
                                        "maxConcurrentRuns": {"type": "integer", "minimum": 1},
                                        "tagConcurrencyLimits": {"type": "array"},
                                    },
                                }
                            },
                        },
                    },
                },
            },
        },
    },
}


def helm_values() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text(encoding="utf-8"))


def test_helm_values_match_the_chart_shapes():
    values = helm_values()
    jsonschema.validate(values, HELM_VALUES_SCHEMA)
    (dep,) = values["dagster-user-deployments"]["deployments"]
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    for where in (dep, launcher):  # pod volumes as Kubernetes defines them
        for v in where["volumes"]:
            assert k8s_roundtrip(v, "V1Volume") == v
        for m in where["volumeMounts"]:
            assert k8s_roundtrip(m, "V1VolumeMount") == m
        mounted = {m["name"] for m in where["volumeMounts"]}
        assert mounted <= {v["name"] for v in where["volumes"]}
        assert any(m["mountPath"] == PROJECT_FILE for m in where["volumeMounts"])
        assert {v["configMap"]["name"] for v in where["volumes"]} <= set(by_kind("ConfigMap"))
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert dep["dagsterApiGrpcArgs"] == ["-m", pyproject["tool"]["dagster"]["module_name"]]
    assert {"name": "FACTORY_CONFIG", "value": PROJECT_FILE} in dep["env"]


def test_helm_schema_rejects_a_password_in_the_values():
    values = helm_values()
    values["postgresql"]["postgresqlPassword"] = "hunter2"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(values, HELM_VALUES_SCHEMA)


def _dockerfile() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            op, _, rest = line.partition(" ")
            out.append((op.upper(), rest.strip()))
    return out


def test_dockerfile():
    ins = _dockerfile()
    assert ins[0][0] == "FROM" and re.match(r"python:3\.1[12]", ins[0][1])
    for op, rest in ins:
        if op == "COPY":
            *srcs, _dst = rest.split()
            for s in srcs:
                assert (ROOT / s).exists(), f"COPY {s}: not in the repository"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    run = " ".join(rest for op, rest in ins if op == "RUN")
    installed = re.findall(r"'\.\[(\w+)\]'", run)
    assert installed and all(e in extras for e in installed)
    assert any(d.startswith("dagster-k8s==") for e in installed for d in extras[e])
    dagster_pin = next(d for d in pyproject["project"]["dependencies"] if d.startswith("dagster=="))
    k8s_pin = next(d for d in extras["k8s"] if d.startswith("dagster-k8s=="))
    # dagster-k8s 0.X.Y is released with dagster 1.(X-16).Y
    major, minor, patch = k8s_pin.split("==")[1].split(".")
    assert dagster_pin.split("==")[1] == f"1.{int(minor) - 16}.{patch}" and major == "0"
    assert "torch==2.13.0" in run
    env = " ".join(rest for op, rest in ins if op == "ENV")
    assert f"FACTORY_CONFIG={PROJECT_FILE}" in env
    cmd = json.loads(next(rest for op, rest in ins if op == "CMD"))
    assert (
        cmd[:3] == ["dagster", "api", "grpc"]
        and cmd[cmd.index("-m") + 1] == pyproject["tool"]["dagster"]["module_name"]
    )
    (dep,) = helm_values()["dagster-user-deployments"]["deployments"]
    assert str(dep["port"]) == cmd[cmd.index("-p") + 1] == next(rest for op, rest in ins if op == "EXPOSE")
    # the makefile's data packages (read as files, installed without their deps) are in the image too
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    nodeps = re.search(r"--no-deps (.+)$", make, re.M)
    assert nodeps and all(p in run for p in nodeps.group(1).split())
