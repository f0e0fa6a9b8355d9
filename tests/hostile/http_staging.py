"""A loopback JSON service that can be switched off (item 5: a failing gate must not overwrite good data)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.serving import send_json

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "shelf", "version": "1"},
    "paths": {
        "/books": {
            "get": {
                "operationId": "list_books",
                "summary": "List the books on the shelf",
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/books/{book_id}": {
            "get": {
                "operationId": "get_book",
                "summary": "Get one book by its id",
                "parameters": [
                    {"name": "book_id", "in": "path", "required": True, "schema": {"type": "integer", "example": 1}}
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}
BOOKS = [{"book_id": 1, "title": "Dune", "author": "Herbert"}, {"book_id": 2, "title": "Emma", "author": "Austen"}]


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        parts = self.path.split("?")[0].strip("/").split("/")
        if parts == ["books"]:
            body: Any = {"books": BOOKS}
        elif len(parts) == 2 and parts[0] == "books" and parts[1].isdigit() and 1 <= int(parts[1]) <= len(BOOKS):
            body = BOOKS[int(parts[1]) - 1]
        else:
            self.send_response(404)
            self.end_headers()
            return
        send_json(self, body)


class ShelfService:
    """`with ShelfService(port) as svc:` serves until the block ends (then the port refuses connections)."""

    def __init__(self, port: int):
        self.port = port

    def write_spec(self, path: Path) -> Path:
        path.write_text(json.dumps({**SPEC, "servers": [{"url": f"http://127.0.0.1:{self.port}"}]}))
        return path

    def __enter__(self) -> "ShelfService":
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
