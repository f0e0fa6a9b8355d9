"""Durable, content-addressed response cache (SQLite) and the failure log.

A reply is stored the moment it arrives, keyed by the backend identity, model,
rendered-prompt hash, request parameters and the reply-schema hash, so a run
that crashes half-way leaves every finished reply behind and a re-run pays
only for the prompts that changed or never finished. Final validation
failures are logged with their raw text in the same file.
"""

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def sha256_json(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def request_key(
    *,
    endpoint: str,
    model: str,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    schema: dict[str, Any] | None,
    tools: list[dict[str, Any]] | None,
) -> str:
    """Cache key of one chat request; every part that changes the reply changes the key."""
    return sha256_json(
        {
            "endpoint": endpoint,
            "model": model,
            "prompt": sha256_json(messages),
            "params": params,
            "schema": sha256_json(schema) if schema is not None else None,
            "tools": sha256_json(tools) if tools else None,
        }
    )


@dataclass(frozen=True)
class CachedReply:
    key: str
    message: dict[str, Any]  # {"content": str | None, "tool_calls": [...] | None}
    prompt_tokens: int
    completion_tokens: int


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    role TEXT NOT NULL,
    message TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    role TEXT NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    error TEXT NOT NULL,
    raw_text TEXT,
    attempts INTEGER NOT NULL,
    created_at REAL NOT NULL
);
"""


class ResponseCache:
    """SQLite-backed cache; safe across threads and processes (WAL, one short transaction per write)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = None if path is None else Path(path)
        self._lock = threading.Lock()
        if self.path is None:
            self._db = sqlite3.connect(":memory:", check_same_thread=False)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        self._db.commit()

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self._db.execute(
                "SELECT message, prompt_tokens, completion_tokens FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        return CachedReply(key=key, message=json.loads(row[0]), prompt_tokens=row[1], completion_tokens=row[2])

    def put(
        self,
        key: str,
        *,
        endpoint: str,
        model: str,
        role: str,
        message: dict[str, Any],
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    endpoint,
                    model,
                    role,
                    json.dumps(message, ensure_ascii=False),
                    prompt_tokens,
                    completion_tokens,
                    time.time(),
                ),
            )
            self._db.commit()

    def record_failure(
        self, *, role: str, backend: str, model: str, input_hash: str, error: str, raw_text: str | None, attempts: int
    ) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO failures (role, backend, model, input_hash, error, raw_text, attempts, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (role, backend, model, input_hash, error, raw_text, attempts, time.time()),
            )
            self._db.commit()

    def count(self, role: str | None = None) -> int:
        args: tuple[str, ...]
        sql, args = "SELECT COUNT(*) FROM responses", ()
        if role is not None:
            sql, args = sql + " WHERE role = ?", (role,)
        with self._lock:
            return int(self._db.execute(sql, args).fetchone()[0])

    def failures(self, role: str | None = None) -> list[dict[str, Any]]:
        args: tuple[str, ...]
        sql, args = "SELECT role, backend, model, input_hash, error, raw_text, attempts FROM failures", ()
        if role is not None:
            sql, args = sql + " WHERE role = ?", (role,)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY id", args).fetchall()
        keys = ("role", "backend", "model", "input_hash", "error", "raw_text", "attempts")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
