"""Shared by the tests of the facts only the demo documents give (korea doctors, music composers, aviation
weather): a `passage_value` answer spec, and the audit's verdicts on the right value and on a wrong one."""

import copy
from typing import Any

from factory.audit.run import audit_task


def passage_value_spec(row: dict[str, Any], value: Any, statement: str) -> dict[str, Any]:
    """The answer spec of a task whose answer the search result `row` states (`statement`: its sentence with the
    value blanked)."""
    return {"kind": "passage_value", "calls": [{"step": 2, "index": 0, "record": {"id": row["id"]}}],
            "passage_id": row["id"], "value": value, "statement": statement}  # fmt: skip


def assert_audit_rederives(task: dict[str, Any], index: Any, value: Any, wrong_value: Any) -> dict[str, Any]:
    """The audit re-derives `value` from the raw data and fails the task with `wrong_value`; the failing row."""
    row = audit_task(task, index)
    assert (row["status"], row["audit_kind"], row["derived"]) == ("correct", "passage_value", value), row["reason"]
    wrong = copy.deepcopy(task)
    wrong["answer"]["value"] = wrong["answer_spec"]["value"] = wrong_value
    row = audit_task(wrong, index)
    assert row["status"] == "wrong", row
    return row
