"""Item 1 of issue 21: API keys never reach a log line (console, compute logs, event log) nor data/."""

import io
import logging
import secrets
from pathlib import Path

import dagster as dg
import pytest

from factory.cli import configure_logging
from factory.config import load_config
from factory.definitions import build_definitions
from factory.demo.service import DemoService
from factory.redaction import PLACEHOLDER, RedactingFilter, redact_text, register_secret
from sensors.partitions import sync_domain_partitions
from tests.conftest import write_config

FORMAT = "%(levelname)s %(name)s: %(message)s"


def _record(msg, *args, exc=None):
    return logging.LogRecord("httpx", logging.INFO, __file__, 1, msg, args, exc)


def test_filter_rewrites_message_args_and_exception():
    key = f"sk-test-{secrets.token_hex(8)}"
    register_secret(key)
    f = RedactingFilter()
    rec = _record('HTTP Request: %s %s "%s"', "GET", f"http://h/albums/1?api_key={key}&x=1", "HTTP/1.1 200 OK")
    assert f.filter(rec) is True
    assert key not in rec.getMessage() and f"api_key={PLACEHOLDER}&x=1" in rec.getMessage()
    try:
        raise RuntimeError(f"boom with {key}")
    except RuntimeError:
        import sys

        rec = _record("failed %s", key, exc=sys.exc_info())
    f.filter(rec)
    text = logging.Formatter(FORMAT).format(rec)
    assert key not in text and "boom with <KEY>" in text
    # key-bearing parameters and key-like values are redacted even when nobody registered them
    assert redact_text("GET /x?serviceKey=abc123&_type=json") == f"GET /x?serviceKey={PLACEHOLDER}&_type=json"
    assert redact_text("got chin-0123456789abcdef01234567") == f"got {PLACEHOLDER}"
    assert redact_text("partition_key=music, 3 records") == "partition_key=music, 3 records"


@pytest.mark.slow  # ~30 s: starts the demo service and probes one platform
def test_verbose_run_with_env_key_leaves_no_key_anywhere(tmp_path, monkeypatch, capfd):
    """A keyed demo platform, the key from the environment, verbose logs, httpx in Dagster's managed loggers."""
    key = f"sk-test-{secrets.token_hex(12)}"
    monkeypatch.setenv("FACTORY_TEST_CHINOOK_KEY", key)
    base = load_config().model_dump(mode="json", exclude_none=True)
    music = next(d for d in base["domains"] if d["name"] == "music")
    music["sources"] = [{**s, "api_key_env": "FACTORY_TEST_CHINOOK_KEY"} for s in music["sources"]][:1]
    path = write_config(tmp_path, domains=[music], probes={**base["probes"], "per_tool": 1})
    (tmp_path / "dagster_home").mkdir()
    cfg = load_config(path)

    root = logging.getLogger()
    old_level = root.level
    early = io.StringIO()
    early_handler = logging.StreamHandler(early)  # stands for the CLI's console handler (pytest owns root's)
    early_handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(early_handler)
    root.setLevel(logging.INFO)
    late = io.StringIO()
    late_handler = logging.StreamHandler(late)
    try:
        configure_logging(verbose=True)
        defs = build_definitions(str(path))
        root.addHandler(late_handler)  # a handler added later (as Dagster adds its own) is covered too
        overrides = {"python_logs": {"managed_python_loggers": ["httpx", "httpcore"], "python_log_level": "INFO"}}
        with (
            dg.instance_for_test(temp_dir=str(tmp_path / "dagster_home"), overrides=overrides) as instance,
            DemoService(cfg.demo, log_dir=tmp_path / "logs"),
        ):
            sync_domain_partitions(instance, cfg.domain_names)
            res = defs.resolve_job_def("domain_ingestion").execute_in_process(
                partition_key="music",
                instance=instance,
                raise_on_error=False,
                run_config={"loggers": {"console": {"config": {"log_level": "DEBUG"}}}},
            )
            event_text = "\n".join(str(e.user_message) for e in instance.all_logs(res.run_id))
    finally:
        root.removeHandler(early_handler)
        root.removeHandler(late_handler)
        root.setLevel(old_level)
    out, err = capfd.readouterr()
    console = early.getvalue() + late.getvalue() + out + err
    # the run did send keyed requests and logged their URLs (redacted) to the console and the event log
    assert "api_key=<KEY>" in early.getvalue() and "api_key=<KEY>" in late.getvalue()
    assert "api_key=<KEY>" in event_text
    assert key not in console
    assert key not in event_text
    leaks = [p for p in Path(tmp_path).rglob("*") if p.is_file() and key.encode() in p.read_bytes()]
    assert leaks == []  # data/, compute logs, the event log's database, the demo's logs
