"""Recorded answers: a source whose answers vary from call to call, made a stable environment.

A service may answer the same read-only call differently each time: a dynamic mock server
(``prism mock -d`` draws every answer at random), a live feed.  The factory's checks re-execute calls
(degeneracy re-runs, replays, the judge's re-solving, export read-back) and rightly reject an answer
that a re-execution does not reproduce, so such a source yields nothing.  With ``responses: record`` on
the source (`SourceConfig.responses`; `SourceRef.recorded` on its tools), the first answer of every
read-only call is recorded and every later identical call, in any stage or process of the project,
gets that answer back: the recordings are the environment the tasks were made in (the approach of
StableToolBench's response cache), kept in the data folder under ``recordings/<platform>/``.

- Only read-only calls (`ToolSpec.state_changing` false) whose transport returned a body are recorded;
  failures are never recorded (a transient error is retried live next time), state changes never replayed.
- A call is identified by its tool and its arguments without the API key (`call_key`); a recorded body
  has the known secrets replaced (`factory.redaction.redact_secrets`) before it is written; key-like
  values are then redacted where results enter, as for a live answer.
- The first recording wins: a file is created only where none exists (a hard link of a finished
  temporary file on a local folder), and a call that lost the race answers with the recording that won,
  so two processes calling at once agree.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factory.redaction import redact_secrets
from factory.tools.transports.base import Exchange, Transport

if TYPE_CHECKING:
    from factory.io import Store
    from factory.tools.spec import ToolSpec

RECORDINGS_DIR = "recordings"


def recorded(tool: ToolSpec) -> bool:
    """Whether calls of `tool` are answered from recordings (a recorded source's read-only tool)."""
    return bool(tool.source.recorded) and not tool.state_changing


def call_key(tool: ToolSpec, args: dict[str, Any]) -> str:
    """sha256 of the tool and its arguments, the API key left out (the same call under another key is the same)."""
    key = tool.generic_params.key
    canon = {k: v for k, v in sorted(args.items()) if k != key}
    text = json.dumps([tool.qualified_name, canon], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Recordings:
    """The recorded answers of one data folder (`factory.io.Store`)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def rel(self, tool: ToolSpec, key: str) -> str:
        return f"{RECORDINGS_DIR}/{tool.platform}/{key}.json"

    def get(self, tool: ToolSpec, key: str) -> Exchange | None:
        rel = self.rel(tool, key)
        if not self.store.exists(rel):
            return None
        data = self.store.read_json(rel)
        return Exchange(status_code=data.get("status_code"), body=data.get("body"), detail=data.get("detail") or "")

    def put(self, tool: ToolSpec, key: str, args: dict[str, Any], ex: Exchange) -> Exchange:
        """Record `ex` unless a recording exists; the recording that stands (this one or the earlier one)."""
        rel = self.rel(tool, key)
        arg_key = tool.generic_params.key
        shown = {k: ("<KEY>" if k == arg_key else v) for k, v in args.items()}
        record = {"tool": tool.qualified_name, "args": shown, "status_code": ex.status_code, "body": ex.body}
        text = redact_secrets(json.dumps(record, ensure_ascii=False, default=str))
        data = text.encode()
        local = self.store.local_path(rel)
        if local is None:  # object storage: no atomic create; the last writer of a race wins there
            if not self.store.exists(rel):
                self.store.write_bytes(rel, data)
        else:
            local.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".rec-", dir=local.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                try:
                    os.link(tmp, local)  # atomic create: fails where a recording already stands
                except FileExistsError:
                    pass
            finally:
                os.unlink(tmp)
        return self.get(tool, key) or ex


@dataclass
class _Prepared:
    key: str | None
    args: dict[str, Any]
    inner: Any


class RecordingTransport(Transport):
    """Wraps a kind's transport: recorded tools are answered from `Recordings`, the rest pass through."""

    def __init__(self, inner: Transport, recordings: Recordings) -> None:
        super().__init__(inner.options)
        self.inner = inner
        self.recordings = recordings
        self.kind = inner.kind  # type: ignore[misc]
        self.replayed = 0
        self.recorded = 0

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    async def end_scope(self, scope: object) -> None:
        await self.inner.end_scope(scope)

    async def prepare(self, tool: ToolSpec, args: dict[str, Any]) -> Any:
        inner = await self.inner.prepare(tool, args)
        return _Prepared(call_key(tool, args) if recorded(tool) else None, dict(args), inner)

    async def send(self, tool: ToolSpec, prepared: Any) -> Exchange:
        if not isinstance(prepared, _Prepared):
            return await self.inner.send(tool, prepared)
        if prepared.key is not None and (hit := self.recordings.get(tool, prepared.key)) is not None:
            self.replayed += 1
            return hit
        ex = await self.inner.send(tool, prepared.inner)
        if prepared.key is not None and ex.outcome is None:
            self.recorded += 1
            return self.recordings.put(tool, prepared.key, prepared.args, ex)
        return ex
