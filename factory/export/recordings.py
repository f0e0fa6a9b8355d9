"""Recorded answers in the exports: the environment a `responses: record` source's tasks were made in.

A source with ``responses: record`` (`factory.tools.transports.recorded`) answers every read-only call
from the data folder's ``recordings/<platform>/<call key>.json``: the answers the tasks were made and
checked with. A user who re-uses the dataset as an environment (replays the golden paths, trains a
policy against the tools) needs those answers too, since the service itself answers differently
(a dynamic mock draws every answer at random). So the export ships them:

- ``recordings/<platform>.jsonl``: one row per recorded call that an exported task's golden path or
  alternative paths make, sorted by key: ``{"key", "tool", "args", "status_code", "body"}`` (`key`:
  `call_key` of the tool and its arguments without the API key; `args` with the key as ``<KEY>``).
  The manifest lists each file under ``recordings`` by platform, with its rows and sha256; the
  read-back gate checks the checksum, that every row parses and that its key is its call's key, and
  scans every byte for keys like every other file;
- secrets are never shipped: a recording holds no API key (`Recordings.put` writes the key argument as
  ``<KEY>`` and replaces the known secrets), the rows are redacted again here
  (`factory.redaction.redact_secrets`), and the export's key scan refuses a file that still holds one;
- `install` writes an export's recordings into a data folder (``recordings/<platform>/<key>.json``,
  an existing recording kept): a project whose source has ``responses: record`` then answers those
  calls as the tasks saw them.

A recorded call of an exported task without a recording (made before the source was recorded, or
its recording deleted) is counted in ``missing`` (the export's replay summary), never invented.
"""

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from factory.export.tools import TaskTools
from factory.io import Store
from factory.redaction import redact_secrets
from factory.tools.spec import ToolSpec
from factory.tools.transports.recorded import RECORDINGS_DIR, Recordings, call_key, recorded

FORMATS = ("recordings",)
ROW_KEYS = ("key", "tool", "args", "status_code", "body")


def _actions(task: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The calls of a task's golden path and of its alternative paths."""
    yield from task.get("golden_actions") or []
    for path in task.get("alternative_paths") or []:
        yield from path.get("actions") or []


def used_calls(tasks: Iterable[tuple[Mapping[str, Any], TaskTools]]) -> dict[str, dict[str, tuple[ToolSpec, dict]]]:
    """platform → call key → (tool, args) of the recorded calls the tasks make (read-only tools of a
    recorded source; state changes are never recorded)."""
    out: dict[str, dict[str, tuple[ToolSpec, dict]]] = {}
    for task, tt in tasks:
        by_name = {(s.platform, s.name): s for s in tt.specs}
        for a in _actions(task):
            spec = by_name.get((a["platform"], a["tool"]))
            if spec is None or not recorded(spec):
                continue
            args = dict(a.get("args") or {})
            out.setdefault(spec.platform, {})[call_key(spec, args)] = (spec, args)
    return out


def files(
    tasks: Iterable[tuple[Mapping[str, Any], TaskTools]], store: Store
) -> tuple[list[tuple[str, str, str, bytes, int]], dict[str, int]]:
    """([(format, platform, relative path, bytes, rows)], {"shipped", "missing"}) of the recordings the
    tasks use, read from the data folder `store`."""
    recs = Recordings(store)
    out: list[tuple[str, str, str, bytes, int]] = []
    shipped = missing = 0
    for platform, calls in sorted(used_calls(tasks).items()):
        rows = []
        for key in sorted(calls):
            spec, _args = calls[key]
            rel = recs.rel(spec, key)
            if not store.exists(rel):
                missing += 1
                continue
            rec = store.read_json(rel)
            rows.append({"key": key, **{k: rec.get(k) for k in ROW_KEYS if k != "key"}})
        if not rows:
            continue
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, default=str) + "\n" for r in rows)
        out.append(
            ("recordings", platform, f"{RECORDINGS_DIR}/{platform}.jsonl", redact_secrets(text).encode(), len(rows))
        )
        shipped += len(rows)
    return out, {"shipped": shipped, "missing": missing}


def _rows(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def _key_of(row: Mapping[str, Any]) -> str:
    """`call_key` of a row's tool and arguments (the ``<KEY>`` argument is the API key: left out)."""
    canon = {k: v for k, v in sorted((row.get("args") or {}).items()) if v != "<KEY>"}
    text = json.dumps([row.get("tool"), canon], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def read_back(fmt: str, data: bytes, split: str) -> tuple[int, list[str]]:
    """(rows read, problems) of one platform's recordings file (`split` is the platform here)."""
    rows = _rows(data)
    errs = [f"row {i}: missing {k}" for i, r in enumerate(rows, 1) for k in ROW_KEYS if k not in r]
    errs += [
        f"row {i}: key {str(r.get('key'))[:12]}… is not the call's key"
        for i, r in enumerate(rows, 1)
        if "key" in r and r.get("key") != _key_of(r)
    ]
    errs += [f"row {i}: tool {r.get('tool')} of another platform" for i, r in enumerate(rows, 1)
             if not str(r.get("tool") or "").startswith(f"{split}.")]  # fmt: skip
    return len(rows), errs


def install(export: Store, manifest: Mapping[str, Any], data: Store) -> dict[str, int]:
    """Write the recordings an export ships (its `manifest.json` as read, paths relative to `export`) into
    the data folder `data` as ``recordings/<platform>/<key>.json``; an existing recording is kept (the
    first recording wins, as in `Recordings.put`). Returns per platform the recordings written."""
    written: dict[str, int] = {}
    for platform, entry in sorted((manifest.get("recordings") or {}).items()):
        raw = export.read_bytes(entry["path"])
        if entry.get("sha256") and hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            raise ValueError(f"{entry['path']}: sha256 differs from the export's manifest; nothing installed from it")
        n = 0
        for row in _rows(raw):
            rel = f"{RECORDINGS_DIR}/{platform}/{row['key']}.json"
            if data.exists(rel):
                continue
            record = {k: row[k] for k in ROW_KEYS if k != "key"}
            data.write_bytes(rel, json.dumps(record, ensure_ascii=False, default=str).encode())
            n += 1
        written[platform] = n
    return written
