"""Role → backend mapping is validated when the config loads."""

import pytest
from pydantic import ValidationError

from factory.config import ConfigError, parse_config
from factory.model_config import ROLE_NAMES, LocalBackendConfig, ModelsConfig, OpenAIBackendConfig


def test_default_config_is_valid_and_uses_local_only_for_english_paraphrase() -> None:
    m = ModelsConfig()
    assert m.backend_for("query_paraphrase", "en") == "local"
    assert m.backend_for("query_paraphrase", "ko") == "rules"
    assert all(m.backend_for(r, "ko") == "rules" for r in ROLE_NAMES)
    assert str(m).startswith("models-local-")


@pytest.mark.parametrize(
    ("roles", "backends", "message"),
    [
        ({"query_writer": "local"}, None, "cannot write 'ko'"),  # SmolLM2 writes no Korean
        ({"agent_resolver.en": "local", "agent_resolver.ko": "rules"}, None, "needs tool calls"),
        ({"edge_proposal": "gpt"}, None, "not declared"),
        ({"edge_writer": "rules"}, None, "unknown role"),
        ({"edge_proposal.ko": "rules"}, None, "not language-specific"),
        ({}, {"rules": LocalBackendConfig()}, "built in"),
    ],
)
def test_unservable_mapping_is_a_validation_error(roles: dict, backends: dict | None, message: str) -> None:
    kwargs = {"roles": roles} | ({"backends": backends} if backends else {})
    with pytest.raises(ValidationError, match=message):
        ModelsConfig(**kwargs)


def test_valid_mappings() -> None:
    m = ModelsConfig(
        backends={"local": LocalBackendConfig(), "gpt": OpenAIBackendConfig(model="gpt-4o-mini")},
        roles={"query_writer": "gpt", "query_writer.en": "local", "agent_resolver": "gpt", "edge_proposal": "gpt"},
    )
    assert m.backend_for("query_writer", "ko") == "gpt" and m.backend_for("query_writer", "en") == "local"
    assert m.backend_for("judge_non_gradable") == "rules"
    with pytest.raises(ValidationError, match="chatml-function-calling"):
        LocalBackendConfig(tool_calls=True)


def test_project_yaml_error_names_file_and_line() -> None:
    text = """
domains:
  - name: aviation
    sources: [{kind: openapi, spec: "demo://flight-ops"}]
models:
  roles:
    query_writer: local
"""
    with pytest.raises(ConfigError, match=r"factory.yaml:\d+: models.*cannot write 'ko'"):
        parse_config(text)
    ok = parse_config(text.replace("query_writer: local", "query_writer.en: local"))
    assert ok.models.backend_for("query_writer", "en") == "local"
