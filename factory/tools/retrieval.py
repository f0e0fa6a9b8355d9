"""Loader of `retrieval` sources: a domain's retrieval index as one search tool.

The tool pins the pre-synthesis version (`retrieval_synthesis_index`, built right after the corpus,
before ingestion), so synthesis searches it before the splits exist; the decontaminated version
published after the splits (`retrieval_index`) is `served_tool` of the same table. Every stage that
serves the tools to an agent once the index is published (evaluation, conversations, exports, the RL
environment) reads the inventories through `served_inventories`, the one place that decides which
version a search tool serves.

``{kind: retrieval, collection: <c>}`` becomes ``search_<c>(query, k)``. The ToolSpec says where the
index is (`SourceRef.base_url` = the LanceDB location; `path` = ``<table>?version=<v>&model=<m>``,
the table version the published value pins and the query embedding model) and carries the index
fingerprint in its output schema (``x-index``), so a rebuilt index changes the tool surface and
shows as drift like any changed API. Calls run in `factory.tools.transports.retrieval`.
"""

from __future__ import annotations

from collections.abc import Mapping
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


def serves_after(tool: ToolSpec, served_index: Mapping[str, Any] | None) -> bool:
    """Whether `served_index` (a published `retrieval_index` value) is the decontaminated successor of the version
    `tool` pins: the same table at the same location, written after it (LanceDB versions of a table only grow, and
    `retrieval_index` is built after the synthesis version of the same run). A stored index older than the pinned
    version is an earlier run's (the corpus and the tasks may have changed since): the pinned version stays."""
    if tool.source.kind != "retrieval" or not served_index or not served_index.get("table"):
        return False
    if served_index.get("version") is None or served_index.get("stage") == "synthesis":
        return False
    table, version, _ = parse_index_path(tool.path)
    return (
        str(served_index["table"]) == table
        and str(served_index.get("uri")) == str(tool.source.base_url)
        and int(served_index["version"]) > version
    )


def served_inventories(inventories: Mapping[str, Mapping[str, Any]], cfg: ProjectConfig) -> dict[str, dict[str, Any]]:
    """The `tool_inventory` values as agents are served them: each domain's search tools re-pinned (`served_tool`) to
    the domain's published `retrieval_index` when that is the successor of the version they pin (`serves_after`), so
    a chunk decontamination removed is never returned; the inventory's surface fingerprints follow the served tools,
    and `retrieval_served` names what was re-pinned ({tool: {table, version, pinned_version}}). A domain without a
    search tool or without a newer published index is returned as it is (synthesis, before the index exists, gets
    the version it pins)."""
    from factory.io import StoreError, read_artifact
    from factory.tools.fingerprint import fingerprint_by_platform, surface_fingerprint

    out: dict[str, dict[str, Any]] = {}
    for domain, inv in inventories.items():
        specs = [ToolSpec.model_validate(t) for t in inv.get("tools") or []]
        if not any(s.source.kind == "retrieval" for s in specs):
            out[domain] = dict(inv)
            continue
        try:
            value = read_artifact(cfg, INDEX_ASSET, domain, default=None)
        except StoreError:
            value = None  # unreadable: as if none were published (the tool keeps its pinned version)
        served = [served_tool(s, value, cfg.retrieval.default_k) if serves_after(s, value) else s for s in specs]
        moved = {
            s.name: {
                "table": value["table"],
                "version": value["version"],
                "pinned_version": parse_index_path(s.path)[1],
            }
            for s, new in zip(specs, served, strict=True)
            if new is not s and value is not None
        }
        if not moved:
            out[domain] = dict(inv)
            continue
        out[domain] = {
            **inv,
            "tools": [t.model_dump(mode="json") for t in served],
            "fingerprint": surface_fingerprint(served),
            "platform_fingerprints": fingerprint_by_platform(served),
            "retrieval_served": moved,
        }
    return out


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
