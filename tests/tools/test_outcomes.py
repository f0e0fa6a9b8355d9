"""`is_success_outcome`: Outcome.is_success for stored outcome strings."""

import pytest

from factory.tools.outcomes import SUCCESS_OUTCOMES, Outcome, is_success_outcome


@pytest.mark.parametrize("outcome", list(Outcome))
def test_agrees_with_outcome_is_success(outcome):
    assert is_success_outcome(outcome.value) is outcome.is_success
    assert is_success_outcome(outcome) is outcome.is_success


def test_other_strings_and_none_are_not_successes():
    assert SUCCESS_OUTCOMES == {"semantic_success", "generic_only_success"}
    for s in ("empty_result", "", "SEMANTIC_SUCCESS", None):
        assert not is_success_outcome(s)
