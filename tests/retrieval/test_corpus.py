"""Corpus reading and chunking: file kinds, stable content-hash ids, errors naming the source."""

import json
from pathlib import Path

import pytest
import yaml

from factory.config import CorpusSourceConfig, DomainRetrievalConfig, RetrievalConfig, parse_config
from factory.retrieval import corpus


def _cfg(tmp: Path, sources: list[dict], **retrieval) -> tuple:
    raw = {
        "retrieval": retrieval,
        "domains": [
            {
                "name": "d1",
                "sources": [{"kind": "openapi", "spec": "demo://x"}],
                "retrieval": {"collection": "notes", "sources": sources},
            }
        ],
    }
    cfg = parse_config(yaml.safe_dump(raw), project_dir=tmp)
    return cfg, cfg.domain("d1").retrieval


def _write(tmp: Path) -> None:
    (tmp / "docs").mkdir()
    (tmp / "docs" / "a.md").write_text("# Alpha guide\n\nFirst paragraph.\n\nSecond paragraph.\n", encoding="utf-8")
    (tmp / "docs" / "b.html").write_text(
        "<html><head><title>Beta page</title><style>x{}</style></head><body><h1>Beta</h1><p>Hello <b>there</b>.</p>"
        "<script>var x=1;</script><p>Bye.</p></body></html>",
        encoding="utf-8",
    )
    (tmp / "docs" / "c.txt").write_text("Gamma title\n\nGamma body text.", encoding="utf-8")
    rows = [{"body": "Delta one.", "name": "D1"}, {"body": "Delta two.", "name": "D2"}]
    (tmp / "docs" / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")


def test_reads_every_file_kind_with_titles_and_sources(tmp_path):
    _write(tmp_path)
    src = {"path": "docs/*", "text_field": "body", "title_field": "name", "licence": "CC0", "language": "en"}
    cfg, retrieval = _cfg(tmp_path, [src])
    value, meta = corpus.build_corpus("d1", retrieval, cfg)
    by_title = {c["title"]: c for c in value["chunks"]}
    assert set(by_title) == {"Alpha guide", "Beta page", "Gamma title", "D1", "D2"}
    assert "var x" not in by_title["Beta page"]["text"] and "Hello there." in by_title["Beta page"]["text"]
    assert by_title["D2"]["source"] == "docs/d.jsonl#L2"
    assert meta["documents"] == 5 and meta["chunks"] == 5
    assert all(c["id"].startswith("d1:") and c["licence"] == "CC0" for c in value["chunks"])


def test_ids_are_stable_content_hashes_and_differ_across_domains(tmp_path):
    docs = [corpus.Document("T", "one two three", "s")]
    settings = RetrievalConfig()
    a = corpus.chunk_documents("aviation", docs, settings, licence="x", language="en")
    b = corpus.chunk_documents("aviation", docs, settings, licence="x", language="en")
    c = corpus.chunk_documents("music", docs, settings, licence="x", language="en")
    changed = corpus.chunk_documents("aviation", [corpus.Document("T", "one two four", "s")], settings,
                                     licence="x", language="en")  # fmt: skip
    assert a[0]["id"] == b[0]["id"]
    assert a[0]["id"] != c[0]["id"] and a[0]["id"] != changed[0]["id"]


def test_long_text_is_chunked_within_the_limit_with_overlap():
    text = "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(12))
    chunks = corpus.chunk_text(text, 300, 40)
    assert len(chunks) > 5
    assert all(len(c) <= 300 + 40 + 3 for c in chunks)
    assert "Paragraph 11" in chunks[-1]
    assert "…" in chunks[1]  # carried overlap marker


def test_missing_glob_and_missing_text_field_name_the_source(tmp_path):
    cfg, retrieval = _cfg(tmp_path, [{"path": "nothing/*.md", "licence": "CC0", "language": "en"}])
    with pytest.raises(corpus.CorpusError, match="nothing/\\*.md.*matches no file"):
        corpus.build_corpus("d1", retrieval, cfg)
    _write(tmp_path)
    cfg, retrieval = _cfg(tmp_path, [{"path": "docs/*.jsonl", "licence": "CC0", "language": "en"}])
    with pytest.raises(corpus.CorpusError, match="set text_field"):
        corpus.build_corpus("d1", retrieval, cfg)


def test_unknown_demo_corpus_is_an_error():
    with pytest.raises(corpus.CorpusError, match="unknown demo corpus"):
        corpus.read_source(CorpusSourceConfig(path="demo://nope", licence="x", language="en"), Path("."), "d")


def test_retrieval_config_validates_collection():
    with pytest.raises(ValueError, match="lowercase slug"):
        DomainRetrievalConfig(collection="Bad Name", sources=[{"path": "x", "licence": "x", "language": "en"}])


def test_per_source_document_cap_wins_over_the_global_one(tmp_path):
    _write(tmp_path)
    src = {"path": "docs/*.md", "licence": "CC0", "language": "en"}
    capped = {"path": "docs/*.jsonl", "text_field": "body", "licence": "CC0", "language": "en", "max_documents": 1}
    cfg, retrieval = _cfg(tmp_path, [src, capped], max_documents_per_source=5)
    value, meta = corpus.build_corpus("d1", retrieval, cfg)
    assert [s["documents"] for s in value["sources"]] == [1, 1]
    assert [c["source"] for c in value["chunks"]] == ["docs/a.md", "docs/d.jsonl#L1"]
