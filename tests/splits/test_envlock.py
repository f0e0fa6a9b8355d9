"""env_lock.json: hashes of tool surfaces, demo implementation, prompts and config."""

import shutil

from factory.config import load_config
from factory.demo.app import implementation_digest
from factory.paths import package_root
from factory.splits import envlock
from tests.splits.helpers import inventory


def test_lock_changes_exactly_with_a_prompt_file(tmp_path):
    cfg = load_config()
    prompts = tmp_path / "prompts"
    shutil.copytree(package_root() / "prompts", prompts)
    invs = {"d": inventory("d", ["p-air"])}
    a = envlock.build_env_lock(cfg, invs, prompts_dir=prompts)
    b = envlock.build_env_lock(cfg, invs, prompts_dir=prompts)
    assert a == b and a["lock"].startswith("sha256:")
    assert a["prompts"]["sha256"] == envlock.tree_digest(package_root() / "prompts")[0]

    target = prompts / "query_writer" / "rules.en.j2"
    target.write_text(target.read_text(encoding="utf-8") + "\n{# changed #}\n", encoding="utf-8")
    c = envlock.build_env_lock(cfg, invs, prompts_dir=prompts)
    assert c["lock"] != a["lock"]
    assert envlock.diff_env_lock(a, c) == ["prompts.files.query_writer/rules.en.j2", "prompts.sha256"]

    # a drifted tool surface and another config change other entries
    drifted = {"d": {**invs["d"], "fingerprint": "sha256:other"}}
    d = envlock.build_env_lock(cfg, drifted, prompts_dir=prompts)
    assert envlock.diff_env_lock(c, d) == ["tool_surfaces.d.surface"]
    other_cfg = cfg.model_copy(update={"seed": cfg.seed + 1})
    e = envlock.build_env_lock(other_cfg, invs, prompts_dir=prompts)
    assert "config.digest" in envlock.diff_env_lock(c, e)


def test_demo_digest_matches_the_health_endpoint():
    cfg = load_config()
    lock = envlock.build_env_lock(cfg, {})
    assert lock["demo_service"]["sha256"] == implementation_digest()
    assert lock["config"]["digest"] == envlock.config_digest(cfg)


def test_config_digest_ignores_where_the_project_lives_but_not_what_it_does(tmp_path):
    cfg = load_config()
    moved = cfg.model_copy(
        update={
            "data_dir": str(tmp_path / "elsewhere"),
            "demo": cfg.demo.model_copy(update={"port": cfg.demo.port + 50}),
            "models": cfg.models.model_copy(
                update={
                    "cache": cfg.models.cache.model_copy(update={"path": str(tmp_path / "llm.sqlite")}),
                    "embeddings": cfg.models.embeddings.model_copy(update={"cache_path": str(tmp_path / "e.sqlite")}),
                }
            ),
        }
    )
    assert moved.digest() != cfg.digest()  # the whole configuration did change ...
    a, b = envlock.build_env_lock(cfg, {}), envlock.build_env_lock(moved, {})
    assert a == b  # ... but not what the data is made of: the same lock
    more = cfg.model_copy(update={"synthesis": cfg.synthesis.model_copy(update={"per_pattern": 99})})
    assert envlock.diff_env_lock(a, envlock.build_env_lock(more, {})) == ["config.digest", "config.slug"]


def test_the_user_simulator_pin_is_part_of_the_lock():
    """The caller (the dataset_splits asset) pins the conversations' user simulator; another pin, another lock."""
    from factory.llm.simulator import simulator_pin

    cfg = load_config()
    pin = simulator_pin(cfg)
    assert pin["role"] == "user_simulator" and set(pin["languages"]) == set(cfg.models.languages)
    lock = envlock.build_env_lock(cfg, {}, simulator=pin)
    assert lock["user_simulator"] == pin
    other = {**pin, "rules_implementation": "sha256:0"}
    assert envlock.diff_env_lock(lock, envlock.build_env_lock(cfg, {}, simulator=other)) == [
        "user_simulator.rules_implementation"
    ]
