"""Prompt templates: every role's prompts render; hashes are stable and order-independent."""

import pytest

from factory import prompts
from factory.llm.roles import ROLES, role_prompts_version
from factory.llm.service import LLM
from factory.model_config import ROLE_NAMES, ModelsConfig
from tests.llm.samples import sample_inputs


@pytest.mark.parametrize("name", [r for r in ROLE_NAMES if r not in ("agent_resolver", "fluency_scorer")])
@pytest.mark.parametrize("language", ["en", "ko"])
def test_model_prompts_render(name: str, language: str) -> None:
    spec = ROLES[name]
    inp = sample_inputs()[name]
    if "language" in type(inp).model_fields:
        inp = inp.model_copy(update={"language": language})
    msgs = spec.messages(inp)
    assert msgs[0]["role"] == "system" and msgs[-1]["role"] == "user"
    assert all(m["content"].strip() and "{{" not in m["content"] for m in msgs)
    assert '"properties"' in msgs[0]["content"]  # the reply schema is spelled out
    if spec.language_specific and language == "ko":
        assert any("\uac00" <= ch <= "\ud7a3" for ch in msgs[0]["content"])  # Korean variant exists


def test_every_role_has_prompt_files_and_a_version() -> None:
    for name in ROLE_NAMES:
        assert ROLES[name].all_templates(), name
        assert len(role_prompts_version(name)) == 16
    assert "query_writer/rules.ko" in ROLES["query_writer"].all_templates()


def test_hashes_are_stable_and_cover_includes() -> None:
    names = ["edge_proposal/system.en", "query_writer/rules.ko"]
    assert prompts.prompts_version(names) == prompts.prompts_version(list(reversed(names)))
    assert prompts.template_hash("edge_proposal/system.en") == prompts.template_hash("edge_proposal/system.en")
    # system.en includes common/schema.en: its hash covers both files
    assert "common/schema.en.j2" in prompts._referenced("edge_proposal/system.en")
    assert "common/phrases.ko.j2" in prompts._referenced("query_writer/rules.ko")
    assert set(prompts.template_hashes(names)) == set(names)


def test_code_version_changes_with_implementation() -> None:
    rules_only = LLM(ModelsConfig(roles={}), cache_path=None)
    default = LLM(ModelsConfig(), cache_path=None)
    assert rules_only.code_version("query_paraphrase") != default.code_version("query_paraphrase")
    assert rules_only.code_version("edge_proposal") == default.code_version("edge_proposal")


def test_strict_undefined() -> None:
    with pytest.raises(Exception, match="undefined"):
        prompts.render("common/repair.en")
