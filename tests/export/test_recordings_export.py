"""Recorded answers shipped with an export (`factory.export.recordings`): the recordings the tasks' calls
use, checksummed and read back like every export file, no secret in them, installable into a data folder
where the same calls then get the same answers without reaching the service."""

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from factory.export import recordings as rx
from factory.export.build import FILE_FORMATS, problems_of, verify_export
from factory.export.publish import sha256_bytes
from factory.io import Store
from factory.tools.transports.recorded import RECORDINGS_DIR
from tests.tools.test_recorded import GET, POST, SECRET, _run


def _action(tool: str, pet: str, step: int = 1) -> dict[str, Any]:
    return {"step": step, "tool": tool, "platform": "mock", "args": {"id": pet, "api_key": "<KEY>"}}


def _files(data: Store) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, bytes], dict[str, int]]:
    task = {  # golden path get_pet(7), add_pet(1) (a state change: never recorded), get_pet(5) (no recording)
        "golden_actions": [_action("get_pet", "7"), _action("add_pet", "1", 2), _action("get_pet", "5", 3)],
        "alternative_paths": [{"note": "original", "actions": [_action("get_pet", "8")]}],
    }
    out, counts = rx.files([(task, SimpleNamespace(specs=[GET, POST]))], data)  # type: ignore[list-item]
    files = {fmt: {plat: {"path": rel, "rows": n, "sha256": sha256_bytes(b)}} for fmt, plat, rel, b, n in out}
    return files, {rel: b for _f, _p, rel, b, _n in out}, counts


def test_the_recordings_the_tasks_use_are_shipped_checked_and_installable(tmp_path: Path) -> None:
    data = Store(tmp_path / "data")
    answers, sent = _run(data, [("get_pet", {"id": "7"}), ("get_pet", {"id": "8"}), ("get_pet", {"id": "9"})])
    assert sent == 3
    files, blobs, counts = _files(data)
    assert "recordings" in FILE_FORMATS and list(files) == ["recordings"]
    (entry,) = files["recordings"].values()
    assert entry["path"] == f"{RECORDINGS_DIR}/mock.jsonl" and entry["rows"] == 2  # 7 and 8, not 9 (no task)
    assert counts == {"shipped": 2, "missing": 1}  # get_pet(5) has no recording: counted, never invented
    text = blobs[entry["path"]].decode()
    rows = [json.loads(line) for line in text.splitlines()]
    assert [r["body"]["id"] for r in sorted(rows, key=lambda r: r["body"]["id"])] == ["7", "8"]
    assert all(r["args"]["api_key"] == "<KEY>" and r["tool"] == "mock.get_pet" for r in rows)
    assert SECRET not in text and [r["key"] for r in rows] == sorted(r["key"] for r in rows)
    # read back as the export gate does: checksum, rows, keys
    assert problems_of(verify_export(blobs.__getitem__, files, {SECRET})) == []
    bad_body = text.replace('"name": "pet-', '"name": "cat-', 1).encode()
    (tampered,) = verify_export({entry["path"]: bad_body}.__getitem__, files)
    assert any("sha256 differs" in p for p in tampered["problems"])
    other = dict(rows[0], args={"id": "99", "api_key": "<KEY>"})  # a row whose key is not its call's
    forged = "".join(json.dumps(r) + "\n" for r in [other, rows[1]]).encode()
    (rep,) = verify_export({entry["path"]: forged}.__getitem__, {"recordings": {"mock": {**entry, "sha256": ""}}})
    assert any("is not the call's key" in p for p in rep["problems"])
    leaked = text.replace("pet-1", SECRET).encode()
    (rep,) = verify_export({entry["path"]: leaked}.__getitem__, {"recordings": {"mock": {**entry, "sha256": ""}}},
                           {SECRET})  # fmt: skip
    assert not rep["key_free"]
    # installed into another project's data folder: the same calls get the same answers, nothing sent
    export = Store(tmp_path / "export")
    export.write_bytes(entry["path"], blobs[entry["path"]])
    fresh = Store(tmp_path / "fresh")
    assert rx.install(export, files, fresh) == {"mock": 2}
    again, sent = _run(fresh, [("get_pet", {"id": "8"}), ("get_pet", {"id": "7"})])
    assert sent == 0 and again == [answers[1], answers[0]]
    assert rx.install(export, files, fresh) == {"mock": 0}  # an existing recording is kept
