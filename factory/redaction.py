"""Keep API keys out of every log line: a `logging.Filter` that rewrites records.

The executor never logs keys, but libraries do: httpx logs every request URL at INFO
(``GET …/albums/1?api_key=sk-…``).  `RedactingFilter` rewrites a record's message (its
``msg`` and ``args`` are formatted and replaced by the redacted text), its exception text and
stack info, replacing

- every known secret: the keys registered with `register_secret` (the configured API keys read
  from the environment, every key an executor was given or acquired), and
- the value of key-bearing query/form parameters (``api_key=``, ``serviceKey=``, ``token=`` …,
  `KEY_PARAM_RE`), and the credential of an Authorization header (``Authorization: Bearer …``,
  `AUTH_HEADER_RE`), and
- values matching the key formats of `KEY_LIKE_PATTERNS` (the export scan's default,
  ``<2-4 letters>-<24 hex>``) plus any patterns given to `install_log_redaction`,

by ``<KEY>``.  `install_log_redaction` puts the filter on every handler that exists (the
CLI's console handler, the root logger's, the httpx/httpcore loggers') and on the httpx and
httpcore loggers, and wraps the log-record factory so that every record is redacted when it
is created — that covers handlers added later, such as the handler Dagster attaches to its
managed python loggers while a step runs (``python_logs.managed_python_loggers`` in
dagster.yaml: those records go to the event log) and the console/stderr output Dagster's
compute-log manager captures.  Secrets are kept in memory only.
"""

import logging
import re
import threading
from collections.abc import Iterable

__all__ = [
    "AUTH_HEADER_RE",
    "KEY_LIKE_PATTERNS",
    "KEY_PARAM_RE",
    "PLACEHOLDER",
    "RedactingFilter",
    "install_log_redaction",
    "known_secret_count",
    "redact_secrets",
    "redact_text",
    "register_secret",
]

PLACEHOLDER = "<KEY>"
MIN_SECRET_LEN = 6
KEY_LIKE_PATTERNS: tuple[str, ...] = (r"\b[a-z]{2,4}-[0-9a-f]{24}\b",)
KEY_PARAM_RE = re.compile(
    r"(?i)(?P<name>(?:(?<=[?&;])key|(?<![A-Za-z0-9_-])(?:api[_-]?key|apikey|service[_-]?key|access[_-]?token|"
    r"auth[_-]?token|token|client[_-]?secret|secret|password|passwd))(?:=|[\"']?\s*:\s*[\"']))"
    r"(?P<value>[^&\s\"'#<>,;)]+)"
)
AUTH_HEADER_RE = re.compile(
    r"(?i)(?P<name>\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+)(?P<value>[^\s\"',;]+)"
)

_lock = threading.Lock()
_secrets: set[str] = set()
_patterns: list[re.Pattern[str]] = [re.compile(p) for p in KEY_LIKE_PATTERNS]
_installed = False


def register_secret(value: object) -> None:
    """Remember a secret so that no log line shows it (short values are ignored: too ambiguous)."""
    s = str(value) if value is not None else ""
    if len(s) >= MIN_SECRET_LEN and s != PLACEHOLDER:
        with _lock:
            _secrets.add(s)


def known_secret_count() -> int:
    return len(_secrets)


def _key_param(m: re.Match[str]) -> str:
    return m.group("value") if m.group("value") == PLACEHOLDER else m.group("name") + PLACEHOLDER


def redact_secrets(text: str) -> str:
    """`text` with every known secret (`register_secret`) replaced by ``<KEY>``; nothing else changed (a
    recorded answer keeps its data, such as a `password` field a service returns, which `redact_text` would hide)."""
    if not text:
        return text
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for s in secrets:
        if s in text:
            text = text.replace(s, PLACEHOLDER)
    return text


def redact_text(text: str) -> str:
    """`text` with every known secret, key parameter value and key-like value replaced by ``<KEY>``."""
    if not text:
        return text
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
        patterns = list(_patterns)
    for s in secrets:
        if s in text:
            text = text.replace(s, PLACEHOLDER)
    text = KEY_PARAM_RE.sub(_key_param, text)
    text = AUTH_HEADER_RE.sub(_key_param, text)
    for p in patterns:
        text = p.sub(PLACEHOLDER, text)
    return text


class RedactingFilter(logging.Filter):
    """Rewrites every record it sees (message and args, exception text, stack info); never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_factory_redacted", False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed format string: leave the record, logging reports it
            return True
        redacted = redact_text(message)
        if redacted != message or record.args:
            record.msg, record.args = redacted, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)
        record._factory_redacted = True
        return True


FILTER = RedactingFilter()
LIBRARY_LOGGERS = ("httpx", "httpcore", "mcp", "urllib3", "dagster")


def _add_filter(target: logging.Filterer) -> None:
    if not any(isinstance(f, RedactingFilter) for f in target.filters):
        target.addFilter(FILTER)


def install_log_redaction(secrets: Iterable[str] = (), patterns: Iterable[str] = ()) -> None:
    """Register `secrets` and `patterns`; put the filter on every handler and the library loggers;
    redact every record created from now on (idempotent)."""
    global _installed
    for s in secrets:
        register_secret(s)
    with _lock:
        known = {p.pattern for p in _patterns}
        _patterns.extend(re.compile(p) for p in patterns if p not in known)
    loggers: list[logging.Logger] = [logging.getLogger()]
    loggers += [logging.getLogger(n) for n in LIBRARY_LOGGERS]
    loggers += [lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)]
    for lg in loggers:
        for h in lg.handlers:
            _add_filter(h)
    for n in LIBRARY_LOGGERS:
        _add_filter(logging.getLogger(n))
    with _lock:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        FILTER.filter(record)
        return record

    logging.setLogRecordFactory(factory)
