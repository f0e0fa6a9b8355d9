import pytest

from factory.config import ConfigError, load_config, parse_config

GOOD = """
name: t
domains:
  - name: aviation
    sources:
      - {kind: openapi, spec: "demo://flight-ops"}
"""


def test_project_config_loads_and_has_demo_domains():
    cfg = load_config()
    assert cfg.domain_names == ["aviation", "music", "korea"]
    assert cfg.domain("korea").language == "ko"
    assert str(cfg).startswith("toolcall-factory-3d-seed13-")


def test_minimal_config_gets_defaults():
    cfg = parse_config(GOOD)
    assert cfg.executor.max_retries == 2 and cfg.demo.port == 8765
    assert cfg.domain("aviation").sources[0].locator == "demo://flight-ops"


def test_unknown_source_kind_names_the_line():
    text = GOOD.replace("kind: openapi", "kind: graphql")
    with pytest.raises(ConfigError) as e:
        parse_config(text, source="f.yaml")
    msg = str(e.value)
    assert "f.yaml:6" in msg and "unknown source kind 'graphql'" in msg


def test_domain_declared_twice_names_both_lines():
    text = (
        GOOD
        + """  - name: aviation
    sources:
      - {kind: mcp, command: [python, -m, x]}
"""
    )
    with pytest.raises(ConfigError) as e:
        parse_config(text, source="f.yaml")
    assert "f.yaml:7" in str(e.value) and "declared twice (first at line 4)" in str(e.value)


def test_source_missing_its_locator_is_rejected():
    text = GOOD.replace('spec: "demo://flight-ops"', "platform: x")
    with pytest.raises(ConfigError, match=r"f.yaml:6: domains\[0\].sources\[0\]: .*needs 'spec'"):
        parse_config(text, source="f.yaml")


def test_bad_domain_slug_and_fault_rate():
    with pytest.raises(ConfigError, match="lowercase slug"):
        parse_config(GOOD.replace("name: aviation", "name: Avi ation"))
    with pytest.raises(ConfigError, match=r"demo.faults.x.rate_limit"):
        parse_config(GOOD + "demo: {faults: {x: {rate_limit: 3}}}\n")


def test_unreadable_and_non_yaml_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "missing.yaml")
    p = tmp_path / "bad.yaml"
    p.write_text("domains: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(p)
