"""A loopback service with destructive endpoints that counts every call (issue 21 #6).

`DELETE /all` wipes the store; `PUT /items/{id}` overwrites; an unmarked `POST /items` creates;
`GET /purge` (operationId purge_cache) destroys by name; `POST /search` (x-state-changing: false)
is a read; `POST /notes` (x-destructive: false) a harmless create; `GET /items` a plain list.
`calls` counts requests per "METHOD /path" (path without query).
"""

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.serving import send_json

OK = {"200": {"description": "ok"}}
ITEM = {"type": "object", "properties": {"item_id": {"type": "integer"}, "name": {"type": "string"}}}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "hostile-store", "version": "1"},
    "paths": {
        "/items": {
            "get": {"operationId": "list_items", "summary": "List the items", "responses": OK},
            "post": {
                "operationId": "create_item",
                "summary": "Create an item",
                "requestBody": {"content": {"application/json": {"schema": {
                    "type": "object", "properties": {"name": {"type": "string", "example": "x"}}}}}},
                "responses": OK,
            },
        },
        "/items/{item_id}": {
            "put": {
                "operationId": "replace_item",
                "summary": "Replace an item",
                "parameters": [
                    {"name": "item_id", "in": "path", "required": True, "schema": {"type": "integer", "example": 1}}
                ],
                "responses": OK,
            }
        },
        "/all": {"delete": {"operationId": "delete_all", "summary": "Delete every item", "responses": OK}},
        "/purge": {"get": {"operationId": "purge_cache", "summary": "Purge the cache", "responses": OK}},
        "/search": {
            "post": {
                "operationId": "search_items",
                "summary": "Search items",
                "x-state-changing": False,
                "requestBody": {"content": {"application/json": {"schema": {
                    "type": "object", "properties": {"q": {"type": "string", "example": "a"}}}}}},
                "responses": OK,
            }
        },
        "/notes": {
            "post": {
                "operationId": "add_note",
                "summary": "Add a note",
                "x-state-changing": True,
                "x-destructive": False,
                "requestBody": {"content": {"application/json": {"schema": {
                    "type": "object", "properties": {"text": {"type": "string", "example": "hi"}}}}}},
                "responses": OK,
            }
        },
    },
}  # fmt: skip
ITEMS = [{"item_id": 1, "name": "apple"}, {"item_id": 2, "name": "pear"}]


class DestructiveService:
    """`with DestructiveService() as svc:` serves on loopback; `svc.calls` counts requests."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()
        svc = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, method: str) -> None:
                path = self.path.split("?")[0]
                with svc.lock:
                    svc.calls[f"{method} {path}"] += 1
                if int(self.headers.get("Content-Length") or 0):
                    self.rfile.read(int(self.headers["Content-Length"]))
                if path == "/openapi.json":
                    body: Any = {**SPEC, "servers": [{"url": svc.url}]}
                elif method == "DELETE":
                    body = {"deleted": len(ITEMS)}
                else:
                    body = ITEMS
                send_json(self, body)

            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._answer("POST")

            def do_PUT(self) -> None:  # noqa: N802
                self._answer("PUT")

            def do_PATCH(self) -> None:  # noqa: N802
                self._answer("PATCH")

            def do_DELETE(self) -> None:  # noqa: N802
                self._answer("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "DestructiveService":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def count(self, method: str, path: str) -> int:
        return self.calls[f"{method} {path}"]

    def destructive_calls(self) -> int:
        """Requests that destroy or overwrite: DELETE, PUT, PATCH, the unmarked POST /items, GET /purge."""
        return sum(
            n
            for k, n in self.calls.items()
            if k.split()[0] in ("DELETE", "PUT", "PATCH") or k in ("POST /items", "GET /purge")
        )
