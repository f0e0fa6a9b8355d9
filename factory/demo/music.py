"""Music platforms on the Chinook digital-media store: `chinook-catalog` and `chinook-store`.

The shared Chinook tables are read-only; `chinook-store`'s state-changing tools
(create_playlist, add_track_to_playlist, create_invoice) write only to the calling key's
session, and get_state_hash digests that session's state.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

import pandas as pd
from fastapi import Body, Depends, FastAPI, Path, Query
from pydantic import BaseModel, Field

from factory.demo import data
from factory.demo.data import records
from factory.demo.framework import Platform, ServiceState, rename_keys, renamed_model, rest_error, session_of
from factory.demo.rest import PageNo, PerPage, one, paginate

SESSION_INVOICE_DATE = "2014-01-01"  # fixed so equal actions give equal state hashes
# Chinook's Track.Composer is not served (no tool's output field or parameter): the catalogue notes state an album's and
# an artist's composer credits (the music-catalogue demo corpus, factory/retrieval/demo_corpora.py), so a question
# about them needs the documents (issue 17 gap 4: a patient agent computed every note fact from the APIs). The data
# stays whole; the service leaves the column out.
UNSERVED_TRACK_FIELDS = ("composer",)

# --------------------------------------------------------------------------- models


class Artist(BaseModel):
    artist_id: int = Field(description="Artist id (use with list_artist_albums).")
    name: str = Field(description="Artist name.")


class Album(BaseModel):
    album_id: int = Field(description="Album id (use with list_album_tracks / get_album).")
    title: str = Field(description="Album title.")
    artist_id: int = Field(description="Id of the album's artist.")
    artist_name: str = Field(description="Name of the album's artist.")
    track_count: int = Field(description="Number of tracks on the album.")


class Track(BaseModel):
    """A track of the catalogue with its album, artist, genre and media type."""

    track_id: int = Field(description="Track id (use with get_track, add_track_to_playlist, create_invoice).")
    name: str = Field(description="Track title.")
    album_id: int = Field(description="Album id.")
    album_title: str = Field(description="Album title.")
    artist_id: int = Field(description="Artist id.")
    artist_name: str = Field(description="Artist name.")
    genre_id: int = Field(description="Genre id.")
    genre_name: str = Field(description="Genre name, e.g. Rock, Jazz.")
    media_type_id: int = Field(description="Media type id.")
    media_type_name: str = Field(description="Media type, e.g. MPEG audio file.")
    milliseconds: int = Field(description="Duration in milliseconds.")
    bytes: int = Field(description="File size in bytes.")
    unit_price: float = Field(description="Price in USD.")


class Genre(BaseModel):
    genre_id: int = Field(description="Genre id (use with search_tracks).")
    name: str = Field(description="Genre name.")
    track_count: int = Field(description="Tracks of this genre.")


class Customer(BaseModel):
    customer_id: int = Field(description="Customer id (use with get_customer, list_customer_invoices, create_invoice).")
    first_name: str = Field(description="First name.")
    last_name: str = Field(description="Last name.")
    company: str | None = Field(description="Company, if any.")
    address: str | None = Field(description="Street address.")
    city: str | None = Field(description="City.")
    state: str | None = Field(description="State or province.")
    country: str = Field(description="Country name.")
    postal_code: str | None = Field(description="Postal code.")
    phone: str | None = Field(description="Phone number.")
    email: str = Field(description="E-mail address.")
    support_rep_id: int | None = Field(description="Employee id of the support representative.")


class Invoice(BaseModel):
    invoice_id: int = Field(description="Invoice id (use with list_invoice_lines).")
    customer_id: int = Field(description="Customer id.")
    invoice_date: str = Field(description="Invoice date YYYY-MM-DD.")
    billing_city: str | None = Field(description="Billing city.")
    billing_country: str | None = Field(description="Billing country.")
    total: float = Field(description="Invoice total in USD.")


class InvoiceLine(BaseModel):
    invoice_line_id: int = Field(description="Invoice line id.")
    invoice_id: int = Field(description="Invoice id.")
    track_id: int = Field(description="Purchased track id (use with get_track).")
    track_name: str = Field(description="Purchased track title.")
    unit_price: float = Field(description="Unit price in USD.")
    quantity: int = Field(description="Quantity.")


class CreatedInvoice(Invoice):
    lines: list[InvoiceLine] = Field(description="Lines of the new invoice.")


class Playlist(BaseModel):
    playlist_id: int = Field(description="Playlist id (use with list_playlist_tracks / add_track_to_playlist).")
    name: str = Field(description="Playlist name.")
    track_count: int = Field(description="Tracks in the playlist.")
    editable: bool = Field(description="True for playlists created in this session (the store's own are read-only).")


class NewPlaylist(BaseModel):
    name: str = Field(min_length=1, max_length=120, description="Name of the new playlist.", examples=["Road trip"])


class PlaylistTrackIn(BaseModel):
    track_id: int = Field(
        ge=1, description="Id of the track to add (from search_tracks or list_album_tracks).", examples=[1]
    )


class NewInvoice(BaseModel):
    customer_id: int = Field(ge=1, description="Buying customer's id (from search_customers).", examples=[1])
    track_ids: list[int] = Field(
        min_length=1, max_length=50, description="Ids of the tracks bought, one line each.", examples=[[1, 2]]
    )


class StateHash(BaseModel):
    state_hash: str = Field(description="sha256:<hex> digest of this session's canonical state (playlists, invoices).")


Session = Annotated[dict[str, Any], Depends(session_of)]
V2_TRACK = {"milliseconds": "duration_ms", "unit_price": "price_usd"}
TrackV2 = renamed_model(Track, V2_TRACK, "TrackV2")
_TRACK_COLS = list(Track.model_fields)


# --------------------------------------------------------------------------- chinook-catalog


def build_chinook_catalog(state: ServiceState, version: str) -> FastAPI:
    v2 = version == "v2"
    track_model = TrackV2 if v2 else Track
    renames = V2_TRACK if v2 else {}
    p = Platform(
        "chinook-catalog",
        "Chinook Catalog API",
        "Catalogue of the Chinook digital music store: artists, albums, tracks, genres and media types. "
        "Find an artist's id by name, list the artist's albums, an album's tracks, and track details. Every call "
        "except key issue needs `api_key`."
        + (
            " Schema v2: track durations and prices are named duration_ms / "
            "price_usd and search_tracks requires `sort`."
            if v2
            else ""
        ),
        "rest",
        version,
        state,
    )
    p.key_tool(
        "get_chinook_catalog_key",
        "Issue a fresh API key for the Chinook Catalog (a new session). "
        "Call this first and pass `api_key` to every other Chinook Catalog tool.",
    )

    def tracks_page(df: pd.DataFrame, page: int, per_page: int) -> dict[str, Any]:
        out = paginate(df[_TRACK_COLS], page, per_page)
        out["data"] = rename_keys(out["data"], renames)
        return out

    @p.rest_tool(
        "GET",
        "/artists",
        name="search_artists",
        summary="Search artists by name",
        description="Artists whose name contains the text (case-insensitive), with their artist ids.",
        response_model=Artist,
        paged=True,
    )
    def search_artists(
        name: Annotated[
            str,
            Query(
                min_length=1,
                description="Part of the artist name, e.g. `Iron Maiden`, `miles`.",
                examples=["Iron Maiden"],
            ),
        ],
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        a = data.chinook().artists
        return paginate(a[a["name"].str.lower().str.contains(name.lower(), regex=False)], page, per_page)

    @p.rest_tool(
        "GET",
        "/artists/{artist_id}/albums",
        name="list_artist_albums",
        summary="List an artist's albums",
        description="Albums of one artist (by artist id from search_artists), with track counts.",
        response_model=Album,
        paged=True,
    )
    def list_artist_albums(
        artist_id: Annotated[int, Path(ge=1, description="Artist id from search_artists.", examples=[90])],
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        c = data.chinook()
        if not (c.artists["artist_id"] == artist_id).any():
            raise rest_error(404, f"artist {artist_id} not found")
        return paginate(c.albums[c.albums["artist_id"] == artist_id], page, per_page)

    @p.rest_tool(
        "GET",
        "/albums/{album_id}",
        name="get_album",
        summary="Get an album",
        description="One album by id: title, artist and track count.",
        response_model=Album,
    )
    def get_album(album_id: Annotated[int, Path(ge=1, description="Album id.", examples=[1])]) -> dict[str, Any]:
        albums = data.chinook().albums
        return one(albums[albums["album_id"] == album_id], f"album {album_id}")

    @p.rest_tool(
        "GET",
        "/albums/{album_id}/tracks",
        name="list_album_tracks",
        summary="List an album's tracks",
        description="Tracks of one album in catalogue order, with genre, media type, duration and price.",
        response_model=track_model,
        paged=True,
    )
    def list_album_tracks(
        album_id: Annotated[int, Path(ge=1, description="Album id from list_artist_albums.", examples=[1])],
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        c = data.chinook()
        if not (c.albums["album_id"] == album_id).any():
            raise rest_error(404, f"album {album_id} not found")
        return tracks_page(c.tracks[c.tracks["album_id"] == album_id], page, per_page)

    @p.rest_tool(
        "GET",
        "/tracks/{track_id}",
        name="get_track",
        summary="Get a track",
        description="One track by id with album, artist, genre, media type, duration and price.",
        response_model=track_model,
    )
    def get_track(track_id: Annotated[int, Path(ge=1, description="Track id.", examples=[1])]) -> dict[str, Any]:
        t = data.chinook().tracks
        return rename_keys([one(t[t["track_id"] == track_id][_TRACK_COLS], f"track {track_id}")], renames)[0]

    @p.rest_tool(
        "GET",
        "/genres",
        name="list_genres",
        summary="List genres",
        description="All genres with their ids and track counts.",
        response_model=Genre,
        paged=True,
    )
    def list_genres(page: PageNo = 1, per_page: PerPage = 50) -> dict[str, Any]:
        return paginate(data.chinook().genres, page, per_page)

    def search_tracks(
        name: Annotated[
            str | None, Query(description="Part of the track title (case-insensitive).", examples=["love"])
        ] = None,
        genre_id: Annotated[
            int | None, Query(ge=1, description="Only tracks of this genre id (from list_genres).", examples=[1])
        ] = None,
        page: PageNo = 1,
        per_page: PerPage = 20,
        sort: str = "track_id",
    ) -> dict[str, Any]:
        t = data.chinook().tracks
        mask = pd.Series(True, index=t.index)
        if name:
            mask &= t["_name"].str.contains(name.lower(), regex=False)
        if genre_id is not None:
            mask &= t["genre_id"] == genre_id
        hit = t[mask]
        if sort != "track_id":
            hit = hit.sort_values(
                [{"name": "name", "duration": "milliseconds", "price": "unit_price"}[sort], "track_id"], kind="stable"
            )
        return tracks_page(hit, page, per_page)

    search_doc = (
        "Search tracks by title text and/or genre id; all filters optional and combined; paged with a total count."
    )
    if v2:

        def search_tracks_v2(
            sort: Annotated[
                Literal["name", "duration", "price"],
                Query(description="Sort order of the results; required since v2.", examples=["name"]),
            ],
            name: Annotated[
                str | None, Query(description="Part of the track title (case-insensitive).", examples=["love"])
            ] = None,
            genre_id: Annotated[
                int | None, Query(ge=1, description="Only tracks of this genre id (from list_genres).", examples=[1])
            ] = None,
            page: PageNo = 1,
            per_page: PerPage = 20,
        ) -> dict[str, Any]:
            return search_tracks(name, genre_id, page, per_page, sort)

        p.rest_tool(
            "GET",
            "/tracks",
            name="search_tracks",
            summary="Search tracks",
            description=search_doc,
            response_model=track_model,
            paged=True,
        )(search_tracks_v2)
    else:

        def search_tracks_v1(
            name: Annotated[
                str | None, Query(description="Part of the track title (case-insensitive).", examples=["love"])
            ] = None,
            genre_id: Annotated[
                int | None, Query(ge=1, description="Only tracks of this genre id (from list_genres).", examples=[1])
            ] = None,
            page: PageNo = 1,
            per_page: PerPage = 20,
        ) -> dict[str, Any]:
            return search_tracks(name, genre_id, page, per_page)

        p.rest_tool(
            "GET",
            "/tracks",
            name="search_tracks",
            summary="Search tracks",
            description=search_doc,
            response_model=track_model,
            paged=True,
        )(search_tracks_v1)

    return p.app


# --------------------------------------------------------------------------- chinook-store


def state_hash(session: dict[str, Any]) -> str:
    """sha256 over the canonical JSON of a session's state; a fresh session has a fixed hash."""
    canonical = {"playlists": session.get("playlists", {}), "invoices": session.get("invoices", [])}
    blob = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()


def build_chinook_store(state: ServiceState, version: str) -> FastAPI:
    p = Platform(
        "chinook-store",
        "Chinook Store API",
        "Customer-facing side of the Chinook digital music store: customers, invoices and invoice lines, and "
        "playlists. create_playlist, add_track_to_playlist and create_invoice change the state of your session "
        "(your API key); get_state_hash digests that state. Every call except key issue needs `api_key`.",
        "rest",
        version,
        state,
    )
    p.key_tool(
        "get_chinook_store_key",
        "Issue a fresh API key for the Chinook Store: a new session with its own "
        "playlists and invoices. Call this first and pass `api_key` to every other Chinook Store tool.",
    )

    def track_or_404(track_id: int) -> pd.Series:
        t = data.chinook().tracks
        hit = t[t["track_id"] == track_id]
        if hit.empty:
            raise rest_error(404, f"track {track_id} not found")
        return hit.iloc[0]

    def customer_or_404(customer_id: int) -> dict[str, Any]:
        c = data.chinook().customers
        return one(c[c["customer_id"] == customer_id][list(Customer.model_fields)], f"customer {customer_id}")

    def all_playlists(session: dict[str, Any]) -> list[dict[str, Any]]:
        c = data.chinook()
        base = [
            {
                "playlist_id": int(r.playlist_id),
                "name": r.name,
                "track_count": len(c.playlist_tracks.get(int(r.playlist_id), [])),
                "editable": False,
            }
            for r in c.playlists.itertuples()
        ]
        own = [
            {"playlist_id": int(pid), "name": pl["name"], "track_count": len(pl["track_ids"]), "editable": True}
            for pid, pl in session.get("playlists", {}).items()
        ]
        return base + own

    @p.rest_tool(
        "GET",
        "/customers",
        name="search_customers",
        summary="Search customers",
        description="Customers whose first, last or full name contains `name` and/or who live in `country` "
        "(both case-insensitive); returns customer ids.",
        response_model=Customer,
        paged=True,
    )
    def search_customers(
        name: Annotated[
            str | None,
            Query(description="Part of the customer's name, e.g. `Gonçalves` or `Helena`.", examples=["Helena"]),
        ] = None,
        country: Annotated[
            str | None, Query(description="Country name, e.g. `Brazil`, `USA`.", examples=["Brazil"])
        ] = None,
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        c = data.chinook().customers
        mask = pd.Series(True, index=c.index)
        if name:
            full = (c["first_name"] + " " + c["last_name"]).str.lower()
            mask &= full.str.contains(name.lower(), regex=False)
        if country:
            mask &= c["country"].str.lower() == country.lower()
        return paginate(c[mask][list(Customer.model_fields)], page, per_page)

    @p.rest_tool(
        "GET",
        "/customers/{customer_id}",
        name="get_customer",
        summary="Get a customer",
        description="Contact details of one customer by id.",
        response_model=Customer,
    )
    def get_customer(
        customer_id: Annotated[int, Path(ge=1, description="Customer id from search_customers.", examples=[1])],
    ) -> dict[str, Any]:
        return customer_or_404(customer_id)

    @p.rest_tool(
        "GET",
        "/customers/{customer_id}/invoices",
        name="list_customer_invoices",
        summary="List a customer's invoices",
        description="Invoices of one customer, oldest first, including invoices created in this session.",
        response_model=Invoice,
        paged=True,
    )
    def list_customer_invoices(
        session: Session,
        customer_id: Annotated[int, Path(ge=1, description="Customer id from search_customers.", examples=[2])],
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        customer_or_404(customer_id)
        inv = data.chinook().invoices
        rows = records(inv[inv["customer_id"] == customer_id][list(Invoice.model_fields)])
        rows += [
            {k: v for k, v in i.items() if k != "lines"}
            for i in session.get("invoices", [])
            if i["customer_id"] == customer_id
        ]
        return paginate(rows, page, per_page)

    @p.rest_tool(
        "GET",
        "/invoices/{invoice_id}/lines",
        name="list_invoice_lines",
        summary="List an invoice's lines",
        description="Purchased tracks (lines) of one invoice, with unit prices and quantities.",
        response_model=InvoiceLine,
        paged=True,
    )
    def list_invoice_lines(
        session: Session,
        invoice_id: Annotated[int, Path(ge=1, description="Invoice id from list_customer_invoices.", examples=[1])],
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        for inv in session.get("invoices", []):
            if inv["invoice_id"] == invoice_id:
                return paginate(inv["lines"], page, per_page)
        c = data.chinook()
        if not (c.invoices["invoice_id"] == invoice_id).any():
            raise rest_error(404, f"invoice {invoice_id} not found")
        lines = c.invoice_lines[c.invoice_lines["invoice_id"] == invoice_id]
        return paginate(lines[list(InvoiceLine.model_fields)], page, per_page)

    @p.rest_tool(
        "GET",
        "/playlists",
        name="list_playlists",
        summary="List playlists",
        description="The store's playlists followed by the playlists created in this session.",
        response_model=Playlist,
        paged=True,
    )
    def list_playlists(session: Session, page: PageNo = 1, per_page: PerPage = 20) -> dict[str, Any]:
        return paginate(all_playlists(session), page, per_page)

    @p.rest_tool(
        "GET",
        "/playlists/{playlist_id}/tracks",
        name="list_playlist_tracks",
        summary="List a playlist's tracks",
        description="Tracks of one playlist in playlist order.",
        response_model=Track,
        paged=True,
    )
    def list_playlist_tracks(
        session: Session,
        playlist_id: Annotated[
            int, Path(ge=1, description="Playlist id from list_playlists or create_playlist.", examples=[1])
        ],
        page: PageNo = 1,
        per_page: PerPage = 20,
    ) -> dict[str, Any]:
        own = session.get("playlists", {}).get(str(playlist_id))
        c = data.chinook()
        ids = own["track_ids"] if own else c.playlist_tracks.get(playlist_id)
        if ids is None:
            if not (c.playlists["playlist_id"] == playlist_id).any():
                raise rest_error(404, f"playlist {playlist_id} not found")
            ids = []
        start = (page - 1) * per_page
        t = c.tracks.set_index("track_id", drop=False)
        return {
            "data": records(t.loc[ids[start : start + per_page], _TRACK_COLS]),
            "page": page,
            "per_page": per_page,
            "total": len(ids),
        }

    @p.rest_tool(
        "POST",
        "/playlists",
        name="create_playlist",
        summary="Create a playlist",
        description="Create an empty playlist in this session; returns its id for add_track_to_playlist.",
        response_model=Playlist,
        state_changing=True,
        status_code=201,
    )
    def create_playlist(session: Session, body: Annotated[NewPlaylist, Body()]) -> dict[str, Any]:
        base_max = int(data.chinook().playlists["playlist_id"].max())
        with state.lock:
            own = session.setdefault("playlists", {})
            pid = base_max + len(own) + 1
            own[str(pid)] = {"name": body.name, "track_ids": []}
        return {"playlist_id": pid, "name": body.name, "track_count": 0, "editable": True}

    @p.rest_tool(
        "POST",
        "/playlists/{playlist_id}/tracks",
        name="add_track_to_playlist",
        summary="Add a track to a playlist",
        description="Append a track to a playlist created in this session (adding a track already in the "
        "playlist changes nothing). The store's own playlists are read-only (403).",
        response_model=Playlist,
        state_changing=True,
    )
    def add_track_to_playlist(
        session: Session,
        playlist_id: Annotated[
            int, Path(ge=1, description="Id of a playlist made with create_playlist.", examples=[19])
        ],
        body: Annotated[PlaylistTrackIn, Body()],
    ) -> dict[str, Any]:
        track_or_404(body.track_id)
        own = session.get("playlists", {}).get(str(playlist_id))
        if own is None:
            if (data.chinook().playlists["playlist_id"] == playlist_id).any():
                raise rest_error(403, f"playlist {playlist_id} belongs to the store and is read-only")
            raise rest_error(404, f"playlist {playlist_id} not found")
        with state.lock:
            if body.track_id not in own["track_ids"]:
                own["track_ids"].append(body.track_id)
        return {"playlist_id": playlist_id, "name": own["name"], "track_count": len(own["track_ids"]), "editable": True}

    @p.rest_tool(
        "POST",
        "/invoices",
        name="create_invoice",
        summary="Create an invoice (purchase tracks)",
        description="Record a purchase of tracks by a customer in this session: one line per track at the "
        "track's unit price; returns the invoice with its lines and total.",
        response_model=CreatedInvoice,
        state_changing=True,
        status_code=201,
    )
    def create_invoice(session: Session, body: Annotated[NewInvoice, Body()]) -> dict[str, Any]:
        customer = customer_or_404(body.customer_id)
        tracks = [track_or_404(t) for t in body.track_ids]
        c = data.chinook()
        with state.lock:
            own = session.setdefault("invoices", [])
            invoice_id = int(c.invoices["invoice_id"].max()) + len(own) + 1
            first_line = int(c.invoice_lines["invoice_line_id"].max()) + sum(len(i["lines"]) for i in own) + 1
            lines = [
                {
                    "invoice_line_id": first_line + n,
                    "invoice_id": invoice_id,
                    "track_id": int(t["track_id"]),
                    "track_name": str(t["name"]),
                    "unit_price": float(t["unit_price"]),
                    "quantity": 1,
                }
                for n, t in enumerate(tracks)
            ]
            invoice = {
                "invoice_id": invoice_id,
                "customer_id": body.customer_id,
                "invoice_date": SESSION_INVOICE_DATE,
                "billing_city": customer["city"],
                "billing_country": customer["country"],
                "total": round(sum(float(t["unit_price"]) for t in tracks), 2),
                "lines": lines,
            }
            own.append(invoice)
        return invoice

    @p.rest_tool(
        "GET",
        "/state/hash",
        name="get_state_hash",
        summary="Digest of this session's state",
        description="sha256 digest of this session's canonical state (its playlists and invoices): equal "
        "states give equal hashes, a fresh session always the same hash.",
        response_model=StateHash,
    )
    def get_state_hash(session: Session) -> dict[str, Any]:
        with state.lock:
            return {"state_hash": state_hash(session)}

    return p.app
