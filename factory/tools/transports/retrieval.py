"""Retrieval transport: `search_<collection>(query, k)` executed against the pinned LanceDB index version.

The ToolSpec names the index (`factory.tools.retrieval`: LanceDB location, table, version, query
embedding model). Opened indices (and their embedding model) are kept per process, keyed by that
location, so executors share them; a search runs in a worker thread (it is CPU work). The body is
``{"passages": [...], "index": {table, version}}``; the executor classifies it like any body
(records at ``passages``). An index that cannot be opened is endpoint_unavailable; a call without a
query, or with a k outside 1..50, is never sent.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from factory.tools.locators import SourceError
from factory.tools.outcomes import Outcome
from factory.tools.retrieval import parse_index_path
from factory.tools.spec import ToolSpec
from factory.tools.transports.base import Exchange, NotSent, Transport, short

_OPEN: dict[tuple[str, str, int, str], Any] = {}
_LOCK = threading.Lock()


def open_index(uri: str, table: str, version: int, model: str) -> Any:
    """The process-wide `RetrievalIndex` of one table version (opened on first use)."""
    from factory.model_config import EmbeddingsConfig
    from factory.retrieval.embedding import RetrievalEmbedder
    from factory.retrieval.index import RetrievalIndex

    key = (uri, table, version, model)
    with _LOCK:
        if key not in _OPEN:
            embedder = RetrievalEmbedder(EmbeddingsConfig(model=model, cache_path=None), cache_path=False)
            opened = RetrievalIndex(uri, table, version, embedder)
            # load the query model here, outside the per-call timeout: a first search that loads it on busy
            # cores times out, and five in a row open the tool's circuit for the run
            embedder.encode_queries(["warm up"])
            _OPEN[key] = opened
        return _OPEN[key]


class RetrievalTransport(Transport):
    kind = "retrieval"

    async def prepare(self, tool: ToolSpec, args: dict[str, Any]) -> Any:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise NotSent(Outcome.MISSING_FIELD, f"{tool.name}: 'query' must be a non-empty string")
        default_k = tool.input_schema.get("properties", {}).get("k", {}).get("default", 5)
        k = args.get("k", default_k)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 50:
            raise NotSent(Outcome.SCHEMA_MISMATCH, f"{tool.name}: 'k' must be an integer from 1 to 50, got {k!r}")
        try:
            table, version, model = parse_index_path(tool.path)
        except SourceError as e:
            raise NotSent(Outcome.ENDPOINT_UNAVAILABLE, str(e)) from e
        return {"uri": tool.source.base_url or "", "table": table, "version": version, "model": model,
                "query": query, "k": k}  # fmt: skip

    async def send(self, tool: ToolSpec, prepared: Any) -> Exchange:
        p = prepared
        try:
            index = await asyncio.to_thread(open_index, p["uri"], p["table"], p["version"], p["model"])
        except Exception as e:  # noqa: BLE001 - a missing/corrupt table or model: the endpoint is unavailable
            return Exchange(outcome=Outcome.ENDPOINT_UNAVAILABLE, detail=short(f"{tool.name}: {e}"))
        try:
            passages = await asyncio.wait_for(
                asyncio.to_thread(index.search, p["query"], p["k"]), timeout=self.cfg.timeout_s
            )
        except TimeoutError:
            return Exchange(outcome=Outcome.TIMEOUT, detail=f"{tool.name}: search took over {self.cfg.timeout_s}s",
                            retry=True)  # fmt: skip
        except Exception as e:  # noqa: BLE001 - the library's own errors: reported, not raised
            return Exchange(outcome=Outcome.SERVER_ERROR, detail=short(f"{tool.name}: {type(e).__name__}: {e}"))
        body = {"passages": passages, "index": {"table": p["table"], "version": p["version"]}}
        return Exchange(status_code=200, body=body)
