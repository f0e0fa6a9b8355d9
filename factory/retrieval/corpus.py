"""Document corpora: configured sources read into documents, documents cut into chunks.

A source is a glob of .md/.markdown/.html/.htm/.txt/.jsonl files (relative to the project folder)
or ``demo://<corpus>`` (`factory.retrieval.demo_corpora`). Chunks are paragraph-aligned, at most
`retrieval.chunk_chars` long, each starting with the last `chunk_overlap` characters of the one
before. A chunk's id is ``<domain>:<sha256(domain, source, text)[:24]>``: it depends only on its
content and where it came from, so it is stable across runs and never collides across domains
(a repeated text within one document gets ``~2``, ``~3`` ...).
"""

import glob
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from factory.config import CorpusSourceConfig, DomainRetrievalConfig, ProjectConfig, RetrievalConfig
from factory.report import bar_plot, md_table

DEMO_SCHEME = "demo://"
TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".html", ".htm", ".jsonl"}


class CorpusError(ValueError):
    """A corpus source that cannot be read; the message names the source and the problem."""


@dataclass(frozen=True)
class Document:
    """One document before chunking."""

    title: str
    text: str
    source: str  # file path (relative to the project when inside it), `path#L<n>` for jsonl, demo://... for demo
    meta: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- reading


class _HTMLText(HTMLParser):
    """Visible text of an HTML page (script/style dropped, block elements end paragraphs) and its title."""

    _BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article", "table"}

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.title = ""
        self.h1 = ""
        self._skip = 0
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        if tag in self._BLOCK:
            self.parts.append("\n\n")
        self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1
        if tag in self._BLOCK:
            self.parts.append("\n\n")
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        current = self._in[-1] if self._in else ""
        if current == "title":
            self.title += data
            return
        if current == "h1" and not self.h1:
            self.h1 = data.strip()
        self.parts.append(data)


def _clean(text: str) -> str:
    paras = [re.sub(r"[ \t\r\f\v]+", " ", " ".join(p.split("\n"))).strip() for p in re.split(r"\n\s*\n", text)]
    return "\n\n".join(p for p in paras if p)


def read_file(path: Path, src: CorpusSourceConfig, shown: str) -> list[Document]:
    """The documents of one file (one per file; one per line for jsonl)."""
    suffix = path.suffix.lower()
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"corpus source {src.path!r}: cannot read {shown}: {e}") from e
    if suffix == ".jsonl":
        if not src.text_field:
            raise CorpusError(f"corpus source {src.path!r}: {shown} is jsonl; set text_field (the field with the text)")
        docs = []
        for n, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise CorpusError(f"corpus source {src.path!r}: {shown} line {n} is not JSON: {e}") from e
            text = row.get(src.text_field) if isinstance(row, dict) else None
            if not isinstance(text, str):
                raise CorpusError(
                    f"corpus source {src.path!r}: {shown} line {n} has no string field {src.text_field!r}"
                )
            title = row.get(src.title_field) if src.title_field else None
            docs.append(Document(str(title) if title else f"{path.stem} {n}", _clean(text), f"{shown}#L{n}"))
        return docs
    if suffix in (".html", ".htm"):
        parser = _HTMLText()
        parser.feed(raw)
        title = parser.title.strip() or parser.h1 or path.stem
        return [Document(title, _clean("".join(parser.parts)), shown)]
    text = _clean(raw)
    title = path.stem
    if suffix in (".md", ".markdown"):
        m = re.search(r"^#\s+(.+)$", raw, flags=re.M)
        if m:
            title = m.group(1).strip()
    else:
        first = text.split("\n\n", 1)[0]
        if 0 < len(first) <= 120:
            title = first
    return [Document(title, text, shown)]


def read_source(src: CorpusSourceConfig, project_dir: Path, domain: str, limit: int | None = None) -> list[Document]:
    """The documents of one configured source, in a stable order (files sorted by path); at most `limit`."""
    if src.path.startswith(DEMO_SCHEME):
        from factory.retrieval import demo_corpora

        return demo_corpora.render(src.path[len(DEMO_SCHEME) :], limit)
    pattern = src.path if Path(src.path).is_absolute() else str(project_dir / src.path)
    files = sorted(p for p in map(Path, glob.glob(pattern, recursive=True)) if p.is_file())
    if not files:
        raise CorpusError(f"corpus source {src.path!r} of domain {domain!r} matches no file (under {project_dir})")
    unsupported = [p.name for p in files if p.suffix.lower() not in TEXT_SUFFIXES]
    if unsupported:
        raise CorpusError(
            f"corpus source {src.path!r}: unsupported file type(s) {unsupported[:5]}; "
            f"supported: {', '.join(sorted(TEXT_SUFFIXES))}"
        )
    docs: list[Document] = []
    for p in files:
        try:
            shown = str(p.resolve().relative_to(project_dir.resolve()))
        except ValueError:
            shown = str(p)
        docs.extend(read_file(p, src, shown))
        if limit is not None and len(docs) >= limit:
            break
    return docs[:limit] if limit is not None else docs


# --------------------------------------------------------------------------- chunking


def _split_long(paragraph: str, limit: int) -> list[str]:
    """A paragraph longer than `limit` cut at sentence ends, else at spaces, else hard."""
    out: list[str] = []
    rest = paragraph
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind(". "), window.rfind("다. "), window.rfind("? "), window.rfind("! "))
        cut = cut + 2 if cut > limit // 3 else window.rfind(" ")
        if cut <= limit // 3:
            cut = limit
        out.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        out.append(rest)
    return out


def chunk_text(text: str, chunk_chars: int, overlap: int) -> list[str]:
    """Paragraph-aligned chunks of at most `chunk_chars` (+ the overlap carried from the chunk before)."""
    pieces = [s for p in text.split("\n\n") for s in _split_long(p.strip(), chunk_chars) if s]
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + 2 + len(piece) > chunk_chars:
            chunks.append(current)
            tail = current[-overlap:] if overlap else ""
            if tail and " " in tail:
                tail = tail[tail.index(" ") + 1 :]
            current = f"{tail} … {piece}" if tail else piece
        else:
            current = f"{current}\n\n{piece}" if current else piece
    if current:
        chunks.append(current)
    return chunks


def chunk_id(domain: str, source: str, text: str) -> str:
    digest = hashlib.sha256(f"{domain}\x1f{source}\x1f{text}".encode()).hexdigest()[:24]
    return f"{domain}:{digest}"


def chunk_documents(
    domain: str, docs: Sequence[Document], settings: RetrievalConfig, *, licence: str, language: str
) -> list[dict[str, Any]]:
    """Chunk rows: id, doc_id, domain, title, source, position (chunk index in its document), text,
    licence, language and the document's own metadata (JSON)."""
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for doc in docs:
        doc_id = chunk_id(domain, doc.source, doc.title)
        for pos, text in enumerate(chunk_text(doc.text, settings.chunk_chars, settings.chunk_overlap)):
            cid = chunk_id(domain, doc.source, text)
            seen[cid] = seen.get(cid, 0) + 1
            if seen[cid] > 1:
                cid = f"{cid}~{seen[cid]}"
            rows.append(
                {
                    "id": cid,
                    "doc_id": doc_id,
                    "domain": domain,
                    "title": doc.title,
                    "source": doc.source,
                    "position": pos,
                    "text": text,
                    "licence": licence,
                    "language": language,
                    "meta": json.dumps(doc.meta, ensure_ascii=False, sort_keys=True, default=str),
                }
            )
    return rows


# --------------------------------------------------------------------------- the asset's core


def build_corpus(
    domain: str, retrieval: DomainRetrievalConfig | None, cfg: ProjectConfig
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`retrieval_corpus` of one domain: {domain, collection, chunks: [...], sources: [...]} and metadata."""
    if retrieval is None:
        value: dict[str, Any] = {"domain": domain, "collection": None, "chunks": [], "sources": []}
        return value, {"documents": 0, "chunks": 0, "configured": False}
    settings = cfg.retrieval
    chunks: list[dict[str, Any]] = []
    sources: list[dict[str, Any]] = []
    for src in retrieval.sources:
        limits = [n for n in (src.max_documents, settings.max_documents_per_source) if n is not None]
        docs = read_source(src, cfg.project_dir, domain, min(limits) if limits else None)
        rows = chunk_documents(domain, docs, settings, licence=src.licence, language=src.language)
        chunks.extend(rows)
        sources.append(
            {
                "path": src.path,
                "licence": src.licence,
                "language": src.language,
                "documents": len(docs),
                "chunks": len(rows),
                "chars": sum(len(r["text"]) for r in rows),
            }
        )
    ids = [c["id"] for c in chunks]
    if len(set(ids)) != len(ids):  # two sources holding the same file: the ids would collide
        dup = sorted({i for i in ids if ids.count(i) > 1})[:3]
        raise CorpusError(f"domain {domain!r}: chunk ids repeat across sources {dup} (the same document twice?)")
    value = {"domain": domain, "collection": retrieval.collection, "chunks": chunks, "sources": sources}
    lengths = sorted(len(c["text"]) for c in chunks)
    meta: dict[str, Any] = {
        "configured": True,
        "documents": sum(s["documents"] for s in sources),
        "chunks": len(chunks),
        "chars": sum(lengths),
        "chunk_chars_median": lengths[len(lengths) // 2] if lengths else 0,
        "sources": md_table(sources, ["path", "licence", "language", "documents", "chunks"], limit=50),
    }
    if chunks:
        meta["chunk_length_plot"] = bar_plot(
            {f"≤{b}": sum(1 for n in lengths if b - 200 < n <= b) for b in range(200, settings.chunk_chars + 201, 200)},
            title=f"{domain}: chunk lengths (characters)",
        )
    return value, meta
