"""SplitsConfig validation (factory/config.py, splits section)."""

import pytest
from pydantic import ValidationError

from factory.config import SplitsConfig


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ratios": {"train": 0.5, "dev": 0.1}}, "must sum to 1"),
        ({"ratios": {"dev": 0.5, "test": 0.5}}, "split 'train' is required"),
        ({"ratios": {"train": 1.2, "test": -0.2}}, "must be ≥ 0"),
        ({"ratios": {"train": 1.0}, "held_out_platforms": ["x"]}, "needs a 'test' split"),
        ({"near_duplicate_threshold": 0.5, "structural_threshold": 0.6}, "must not exceed"),
    ],
)
def test_invalid(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        SplitsConfig(**kwargs)


def test_defaults_and_slug():
    c = SplitsConfig()
    assert (c.ngram, c.num_perm, c.near_duplicate_threshold, c.structural_threshold) == (5, 128, 0.85, 0.60)
    assert str(c) == "minhash-c5-p128-s1-t0.85-0.6"
    assert SplitsConfig(ratios={"train": 1.0}).ratios == {"train": 1.0}
