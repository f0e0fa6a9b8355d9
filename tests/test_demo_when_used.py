"""The demo service starts only when a source uses demo:// (issue 13, item 8)."""

from factory.config import load_config
from factory.resources import DemoServiceResource
from tests.conftest import write_config

MCP_ONLY = [{"name": "clock", "sources": [{"kind": "mcp", "platform": "clock", "command": ["true"]}]}]


class _Spy:
    started: list[str] = []

    def __init__(self, cfg, log_dir=""):
        self.cfg = cfg

    def ensure_running(self):
        _Spy.started.append(self.cfg.base_url)

    def stop(self):
        pass

    def detach(self):
        pass


def test_no_demo_source_starts_nothing(tmp_path, monkeypatch):
    import factory.demo.service as service

    monkeypatch.setattr(service, "DemoService", _Spy)
    _Spy.started = []
    cfg = load_config(write_config(tmp_path, domains=MCP_ONLY))
    res = DemoServiceResource(log_dir=str(tmp_path))
    with res.serving(cfg, stop=True) as svc:
        assert svc is None
    with res.serving(cfg, cfg.domain("clock")) as svc:
        assert svc is None
    assert _Spy.started == []


def test_a_demo_source_among_the_selected_domains_starts_it(tmp_path, monkeypatch):
    import factory.demo.service as service

    monkeypatch.setattr(service, "DemoService", _Spy)
    _Spy.started = []
    music = {"name": "music", "sources": [{"kind": "openapi", "platform": "c", "spec": "demo://chinook-catalog"}]}
    cfg = load_config(write_config(tmp_path, domains=[*MCP_ONLY, music]))
    res = DemoServiceResource(log_dir=str(tmp_path))
    with res.serving(cfg, stop=True, domains=[cfg.domain("clock")]) as svc:  # `factory run --domains clock`
        assert svc is None
    assert _Spy.started == []
    with res.serving(cfg, stop=True) as svc:
        assert isinstance(svc, _Spy)
    assert _Spy.started == [cfg.demo.base_url]
