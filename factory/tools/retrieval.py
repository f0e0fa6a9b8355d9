"""Loader of `retrieval` sources: a domain's retrieval index as one search tool.

The tool pins the pre-synthesis version (`retrieval_synthesis_index`, built right after the corpus,
before ingestion), so synthesis searches it before the splits exist; the decontaminated version
published after the splits (`retrieval_index`) is `served_tool` of the same table.

``{kind: retrieval, collection: <c>}`` becomes ``search_<c>(query, k)``. The ToolSpec says where the
index is (`SourceRef.base_url` = the LanceDB location; `path` = ``<table>?version=<v>&model=<m>``,
the table version the published value pins and the query embedding model) and carries the index
fingerprint in its output schema (``x-index``), so a rebuilt index changes the tool surface and
shows as drift like any changed API. Calls run in `factory.tools.transports.retrieval`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from factory.tools.locators import SourceError
from factory.tools.spec import OutputField, SourceRef, ToolSpec

if TYPE_CHECKING:
    from factory.config import ProjectConfig, SourceConfig

INDEX_ASSET = "retrieval_index"
SYNTHESIS_INDEX_ASSET = "retrieval_synthesis_index"
PASSAGE_FIELDS = {
    "id": ("string", "Passage id (<domain>:<content hash>): cite it for the passage used."),
    "title": ("string", "Title of the document the passage comes from."),
    "source": ("string", "Where the document came from (file, line or demo corpus path)."),
    "position": ("integer", "Index of the passage within its document."),
    "text": ("string", "The passage text."),
    "score": ("number", "Fused rank score (reciprocal-rank fusion of vector and BM25 rankings)."),
}


def index_path(table: str, version: int, model: str) -> str:
    return f"{table}?{urlencode({'version': version, 'model': model})}"


def parse_index_path(path: str) -> tuple[str, int, str]:
    """(table, version, model) of a retrieval ToolSpec's `path`."""
    parts = urlsplit(path)
    q = parse_qs(parts.query)
    try:
        return parts.path, int(q["version"][0]), q["model"][0]
    except (KeyError, ValueError, IndexError) as e:
        raise SourceError(f"retrieval tool path {path!r} is not <table>?version=<n>&model=<name>") from e


def search_tool(domain: str, platform: str, index: dict[str, Any], default_k: int = 5) -> ToolSpec:
    """The ToolSpec of a published index value (`retrieval_index`)."""
    collection = str(index["collection"])
    items = {
        "type": "object",
        "properties": {k: {"type": t, "description": d} for k, (t, d) in PASSAGE_FIELDS.items()},
    }
    language = {"ko": "Korean", "en": "English"}.get(str(index.get("language")), str(index.get("language")))
    return ToolSpec(
        domain=domain,
        platform=platform,
        name=f"search_{collection}",
        description=f"Search the {collection.replace('_', ' ')} documents of the {domain} domain ({index['served']} "
        f"{language} passages) for facts the APIs do not serve; returns the k best passages (vector and keyword "
        "search fused) with their id, title, source and text.",
        method="SEARCH",
        path=index_path(str(index["table"]), int(index["version"]), str(index["model"])),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for, in words (names, dates, topics)."},
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "default": default_k,
                    "description": "How many passages to return.",
                },
            },
            "required": ["query"],
        },
        param_locations={"query": "body", "k": "body"},
        output_schema={
            "type": "object",
            "properties": {"passages": {"type": "array", "items": items}},
            "x-index": {"table": index["table"], "version": index["version"], "fingerprint": index["fingerprint"]},
        },
        output_fields={k: OutputField(name=k, type=t, description=d) for k, (t, d) in PASSAGE_FIELDS.items()},
        records_path="passages",
        source=SourceRef(kind="retrieval", locator=f"retrieval://{collection}", base_url=str(index["uri"])),
    )


def served_tool(tool: ToolSpec, served_index: dict[str, Any], default_k: int = 5) -> ToolSpec:
    """The search tool `tool` re-pinned to the served (decontaminated) version of its index, for replay and
    evaluation against what is published; same name, platform and schema."""
    if tool.source.kind != "retrieval":
        raise SourceError(f"{tool.name} is a {tool.source.kind} tool, not a retrieval search")
    return search_tool(tool.domain, tool.platform, served_index, default_k)


def load_retrieval(src: SourceConfig, domain: str, cfg: ProjectConfig) -> list[ToolSpec]:
    """The search tool of the domain's published retrieval index for `src.collection`."""
    from factory.io import StoreError, read_artifact

    locator = src.locator
    dom = cfg.domain(domain)
    if dom.retrieval is None or dom.retrieval.collection != src.collection:
        have = dom.retrieval.collection if dom.retrieval else None
        raise SourceError(
            f"{locator}: domain {domain!r} has no retrieval collection {src.collection!r} (its retrieval.collection "
            f"is {have!r})"
        )
    try:
        value = read_artifact(cfg, SYNTHESIS_INDEX_ASSET, domain, default=None)
    except StoreError as e:
        raise SourceError(f"{locator}: cannot read the {SYNTHESIS_INDEX_ASSET} of {domain!r}: {e}") from e
    if not value or not value.get("table"):
        raise SourceError(
            f"{locator}: the retrieval index of domain {domain!r} is not built yet; materialize "
            f"{SYNTHESIS_INDEX_ASSET} for {domain!r} (factory run does, before tool_inventory)"
        )
    platform = src.platform or f"{domain}-{src.collection}".replace("_", "-")
    return [search_tool(domain, platform, value, cfg.retrieval.default_k)]
