"""The EDGE outcome taxonomy (paper Table 7), outcomes by content, and the executor's result row.

Outcomes by content: tools do not always flag their failures.  An MCP server may answer
``Database error: no such table: x`` with ``isError: false``; an HTTP service may send an
error envelope (``{"error": ...}``, ``{"errors": [...]}``, ``{"success": false, ...}``,
``{"status": "error"}``) with status 200.  `error_text_rule` decides from the SHAPE of the
whole text whether it is an error message (it starts with an error marker, or it is one short
line saying "not found", "not allowed", ...), `error_envelope` from the shape of the whole body
(every key one an error envelope uses); a record that merely contains such words (a field
``error_rate``, a file named ``error.log``) is data.  `classify_error` then places the message
in the taxonomy with the name of the rule that fired (`CONTENT_RULES`, first match wins;
structural = the call's arguments are at fault, environmental = the service is).
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class Outcome(StrEnum):
    SEMANTIC_SUCCESS = "semantic_success"
    GENERIC_ONLY_SUCCESS = "generic_only_success"
    SCHEMA_MISMATCH = "schema_mismatch"
    MISSING_FIELD = "missing_field"
    RATE_LIMIT = "rate_limit"
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"
    AUTH_ERROR = "auth_error"
    ENDPOINT_UNAVAILABLE = "endpoint_unavailable"
    UNCATEGORIZED = "uncategorized"

    @property
    def is_success(self) -> bool:
        return self in (Outcome.SEMANTIC_SUCCESS, Outcome.GENERIC_ONLY_SUCCESS)

    @property
    def group(self) -> str:
        return OUTCOME_GROUP[self]


OUTCOME_GROUP: dict[Outcome, str] = {
    Outcome.SEMANTIC_SUCCESS: "success",
    Outcome.GENERIC_ONLY_SUCCESS: "success",
    Outcome.SCHEMA_MISMATCH: "structural",
    Outcome.MISSING_FIELD: "structural",
    Outcome.RATE_LIMIT: "environmental",
    Outcome.TIMEOUT: "environmental",
    Outcome.SERVER_ERROR: "environmental",
    Outcome.AUTH_ERROR: "environmental",
    Outcome.ENDPOINT_UNAVAILABLE: "environmental",
    Outcome.UNCATEGORIZED: "other",
}

OUTCOME_CLASSES: list[str] = [o.value for o in Outcome]
SUCCESS_OUTCOMES: frozenset[str] = frozenset(o.value for o in Outcome if o.is_success)


@dataclass(frozen=True)
class ContentRule:
    """An error message pattern and the outcome class it means."""

    name: str
    pattern: re.Pattern[str]
    outcome: Outcome


def _rule(name: str, pattern: str, outcome: Outcome) -> ContentRule:
    return ContentRule(name, re.compile(pattern, re.IGNORECASE), outcome)


CONTENT_RULES: list[ContentRule] = [
    _rule("unknown_tool", r"unknown tool|tool \S+ not found|no such tool", Outcome.ENDPOINT_UNAVAILABLE),
    _rule("rate_limit", r"rate.?limit|too many requests|\b429\b|quota (exceeded|exhausted)", Outcome.RATE_LIMIT),
    _rule("timeout", r"timed? ?out\b|timeout", Outcome.TIMEOUT),
    # the argument is outside what the tool accepts (a read-only tool given a write, a path outside
    # the sandbox): the call's fault, before the auth rule that "access denied" would also match
    _rule("not_allowed", r"not allowed|outside (the )?allowed|only \S+( \S+)? (queries|statements|operations) "
          r"(are|is) (allowed|permitted|supported)|not permitted for|read.?only (mode|database|tool)",
          Outcome.SCHEMA_MISMATCH),
    _rule("auth", r"unauthori[sz]ed|forbidden|api.?key|authenticat|\b40[13]\b|permission denied|access denied"
          r"|\beacces\b|\beperm\b", Outcome.AUTH_ERROR),
    _rule("no_such_file", r"\benoent\b|no such file or directory", Outcome.SCHEMA_MISMATCH),
    # a path of the wrong kind: a directory given to a file reader, a file given to a directory lister
    _rule("wrong_path_kind", r"\beisdir\b|\benotdir\b|is a directory|not a directory|illegal operation on a directory",
          Outcome.SCHEMA_MISMATCH),
    _rule("missing_argument", r"field required|\bmissing\b(?![.\w])|required (argument|parameter|field|property)"
          r"|is required|required .* not (given|provided)", Outcome.MISSING_FIELD),
    _rule("database_unavailable", r"database is locked|disk i/o error|unable to open database|could not connect"
          r"|connection to (the )?(server|database)", Outcome.SERVER_ERROR),
    _rule("database_error", r"database error|sql(ite)? error|syntax error|no such (table|column)|catalog error"
          r"|binder error|parser error|programming ?error|operational ?error", Outcome.SCHEMA_MISMATCH),
    _rule("not_found", r"not found|no such|does not exist|doesn't exist|did not resolve|\benoent\b|unknown \w+",
          Outcome.SCHEMA_MISMATCH),
    _rule("invalid_argument", r"validation error|invalid|must be|expected|type ?error|value ?error|not a valid"
          r"|cannot parse|could not parse|malformed", Outcome.SCHEMA_MISMATCH),
    _rule("unavailable", r"connection (closed|refused|reset)|unavailable|econnrefused|not implemented",
          Outcome.ENDPOINT_UNAVAILABLE),
    _rule("server_error", r"internal|server error|traceback|exception|panic|fatal", Outcome.SERVER_ERROR),
]  # fmt: skip
UNMATCHED_RULE = "unmatched"

# the whole text is an error message when its first line starts like one ...
_ERROR_LEAD = re.compile(
    r"^\s*(?:"
    r"(?:[A-Za-z][\w .]{0,40}?\s)?(?:error|exception)\b\s*(?:[:!\-—]|executing|while|in |occurred|calling)"
    r"|[A-Za-z]+(?:Error|Exception)\s*:"  # Python exception names: ValueError: ...
    r"|traceback \(most recent call last\)"
    r"|(?-i:E[A-Z]{3,})\s*:"  # node errno codes, upper case: ENOENT: ...
    r")",
    re.IGNORECASE,
)
# a weaker lead: an error when the text holds no data ("Failed jobs: 3\nDone: 10" is a record)
_FAILURE_LEAD = re.compile(r"^\s*(?:failed|failure|fatal|unknown tool|invalid)\b", re.IGNORECASE)
# ... or it is one short sentence saying one of these (a listing line naming `error.log` is not)
_ERROR_SENTENCE = re.compile(
    r"\b(not found|not allowed|not permitted|permission denied|access denied|no such (file|directory|table|column"
    r"|entity|tool|key|record|object|user)|does not exist|doesn't exist|is required|is not valid|is invalid"
    r"|could not (find|resolve|open|parse)|cannot (find|open|parse)|did not resolve)\b",
    re.IGNORECASE,
)
SHORT_MESSAGE_CHARS = 300
_PATH_LIKE = re.compile(r"^\s*(/|\./|~|\[|[A-Za-z]:\\|https?://)")


def error_text_rule(text: str) -> str | None:
    """Why the whole `text` is an error message, or None for data.

    ``error_lead``: its first line starts with an error word (``Error:``, ``Database error:``,
    ``ValueError:``, ``Traceback``, ``ENOENT:``), whatever follows; ``failure_lead`` (``Failed
    ...``, ``Invalid ...``) and ``error_sentence`` (one short line saying "not found", "not
    allowed", ...): weaker, so a reader applies them only to text that holds no data.
    """
    s = (text or "").strip()
    if not s:
        return None
    first = s.splitlines()[0]
    if _ERROR_LEAD.match(first):
        return "error_lead"
    if _FAILURE_LEAD.match(first):
        return "failure_lead"
    if "\n" not in s and len(s) <= SHORT_MESSAGE_CHARS and " " in s and not _PATH_LIKE.match(s):
        if _ERROR_SENTENCE.search(s):
            return "error_sentence"
    return None


# the whole text says the answer is empty: a success without records, never a record of its own
_NO_RESULTS = re.compile(
    r"^\s*(?:no (?:matches|match|matching \w+|results?|items?|entries|entry|records?|rows?|files?|data)"
    r"(?: (?:were|was))?(?: found)?|nothing (?:was )?found|(?:the )?(?:result|list|directory) is empty)\s*[.!]?\s*$",
    re.IGNORECASE,
)


def no_results_text(text: str) -> bool:
    """Whether the whole `text` is one short sentence saying nothing was found ("No matches found",
    "No results.", "Nothing found"): an empty answer (0 records), not a record holding that sentence."""
    s = (text or "").strip()
    return len(s) <= 60 and "\n" not in s and bool(_NO_RESULTS.match(s))


def classify_error(text: str) -> tuple[Outcome, str]:
    """The outcome class of an error message and the name of the `CONTENT_RULES` rule that fired
    (`UNMATCHED_RULE` → uncategorized)."""
    for rule in CONTENT_RULES:
        if rule.pattern.search(text or ""):
            return rule.outcome, rule.name
    return Outcome.UNCATEGORIZED, UNMATCHED_RULE


# keys of an error envelope; a body with any other key is a record, not an envelope
ENVELOPE_KEYS = frozenset(
    "error errors message msg code status success ok detail details error_code errorcode error_message "
    "errormessage error_description description type title reason request_id requestid trace_id traceid "
    "timestamp path data result status_code statuscode iserror hint instance documentation_url".split()
)
_ERROR_STATUSES = frozenset({"error", "fail", "failed", "failure", "err"})


def error_envelope(body: Any) -> tuple[Outcome, str, str] | None:
    """``(outcome, rule, message)`` when the whole `body` is an error envelope, else None.

    An envelope is an object whose every key is one of `ENVELOPE_KEYS` and which says it failed:
    a non-empty ``error`` (``error_field``), non-empty ``errors`` with no data (``errors_list``),
    ``success``/``ok`` false (``success_false``), ``status`` "error"/"fail" (``status_error``),
    ``isError`` true (``is_error_flag``).  The message (the envelope's own words, else the whole
    body) is classified by `classify_error`; the numeric code decides when the words do not.
    """
    if not isinstance(body, Mapping) or not body:
        return None
    low = {str(k).lower(): v for k, v in body.items()}
    if not set(low) <= ENVELOPE_KEYS:
        return None
    rule = None
    if low.get("error") not in (None, "", False, 0, [], {}):
        rule = "error_field"
    elif isinstance(low.get("errors"), list | dict) and low["errors"] and low.get("data") in (None, {}, []):
        rule = "errors_list"
    elif low.get("success") is False or low.get("ok") is False:
        rule = "success_false"
    elif isinstance(low.get("status"), str) and low["status"].strip().lower() in _ERROR_STATUSES:
        rule = "status_error"
    elif low.get("iserror") is True:
        rule = "is_error_flag"
    if rule is None:
        return None
    message = _envelope_message(low)
    outcome, content_rule = classify_error(message)
    if outcome is Outcome.UNCATEGORIZED:
        outcome = _code_outcome(low)
        content_rule = "status_code" if outcome is not Outcome.UNCATEGORIZED else content_rule
    return outcome, f"{rule}/{content_rule}", message


def _envelope_message(low: Mapping[str, Any]) -> str:
    for key in ("error", "errors", "message", "msg", "error_message", "errormessage", "error_description",
                "detail", "details", "reason", "title", "description"):  # fmt: skip
        v = low.get(key)
        if isinstance(v, list) and v:
            v = v[0]
        if isinstance(v, Mapping):
            v = next((v[k] for k in ("message", "msg", "detail", "description", "title") if isinstance(v.get(k), str)),
                     None)  # fmt: skip
        if isinstance(v, str) and v.strip():
            return v.strip()
    return json.dumps(dict(low), ensure_ascii=False, default=str)


def _code_outcome(low: Mapping[str, Any]) -> Outcome:
    for key in ("code", "status_code", "statuscode", "status", "error_code", "errorcode"):
        v = low.get(key)
        try:
            code = int(str(v).strip())
        except (TypeError, ValueError):
            continue
        if code == 429:
            return Outcome.RATE_LIMIT
        if code in (401, 403):
            return Outcome.AUTH_ERROR
        if code in (400, 404, 409, 422):
            return Outcome.SCHEMA_MISMATCH
        if code >= 500:
            return Outcome.SERVER_ERROR
    return Outcome.UNCATEGORIZED


def content_detail(rule: str, message: str) -> str:
    """The detail of a result classified by its content: the rule that fired, then the message."""
    return f"[content rule {rule}] {message}"


def is_success_outcome(outcome: str | None) -> bool:
    """`Outcome.is_success` for a stored outcome string; any other string (``empty_result``) or None is not."""
    return outcome in SUCCESS_OUTCOMES


class CallResult(BaseModel):
    """One executed tool call.  Never contains a secret: keys are `<KEY>`."""

    domain: str
    platform: str
    tool: str
    args: dict[str, Any] = Field(description="Arguments as sent, with key values redacted to <KEY>.")
    outcome: Outcome
    status_code: int | None = None
    detail: str = Field(default="", description="Short human-readable reason (redacted).")
    records: list[dict[str, Any]] = Field(default_factory=list, description="Extracted records (possibly truncated).")
    record_count: int = Field(default=0, description="Number of records in this response.")
    total_count: int | None = Field(default=None, description="Total matching records reported by the tool.")
    body: Any = Field(default=None, description="Parsed body (redacted), for tools without a records path.")
    attempts: int = 1
    elapsed_ms: float = 0.0
    call_digest: str = Field(default="", description="sha256 of canonical (platform, tool, args).")
    key_like_redacted: int = Field(
        default=0, description="Key-like values (the executor's key_patterns) replaced by <REDACTED> in this result."
    )
    body_digest: str = Field(default="", description="sha256 of the whole parsed body (redacted); '' when none.")
    truncated: bool = Field(
        default=False, description="Records/body were cut to executor.max_stored_bytes (a bounded sample)."
    )

    @property
    def ok(self) -> bool:
        return self.outcome.is_success

    def cardinality(self, field: str) -> int:
        """Number of distinct non-null values of `field` across the returned records."""
        values = set()
        for rec in self.records:
            v = rec.get(field)
            if v is not None:
                values.add(repr(v))
        return len(values)
