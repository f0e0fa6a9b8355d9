"""The scripted chat server of the evaluation tests, for the eval/reward agreement test."""

from tests.eval.conftest import scripted_server  # noqa: F401 - a fixture, used by name
