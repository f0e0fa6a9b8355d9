"""The EDGE outcome taxonomy (paper Table 7) and the executor's result row."""

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
