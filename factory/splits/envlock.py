"""env_lock.json: hashes that say whether two runs measure the same thing (kotraj-bench card).

- per domain: the tool-surface fingerprint of its inventory and one per platform;
- the demo service implementation: sha256 over factory/demo/*.py (path + content, sorted by path;
  the same digest `GET /health` reports as `implementation`);
- prompts: sha256 over every file under prompts/ (and one hash per file);
- the project configuration: sha256 of its canonical JSON without the fields that only say where
  things live (`PLACEMENT_FIELDS`: data folder, cache files, ports), so the same project run from
  another folder or port locks the same environment;
- the benchmark files audited against (sha256 of their bytes);
- the user simulator of conversation tasks (`factory.llm.simulator.simulator_pin`, given by the caller): its backend and model per language, temperature
  (pinned to 0) and the hash of every template it renders (issue 19);
- `lock`: sha256 over the canonical JSON of everything above.
If any hash differs between two locks, the runs used a different environment.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from factory.config import ProjectConfig
from factory.io import dumps
from factory.paths import package_root

LOCK_VERSION = 1
PLACEMENT_FIELDS: tuple[tuple[str, ...], ...] = (
    ("data_dir",),
    ("demo", "port"),
    ("models", "backends", "local", "port"),
    ("models", "cache", "path"),
    ("models", "embeddings", "cache_path"),
)


def config_digest(cfg: ProjectConfig) -> str:
    """sha256 of the configuration's canonical JSON without its PLACEMENT_FIELDS."""
    data = cfg.model_dump(mode="json")
    for path in PLACEMENT_FIELDS:
        node: Any = data
        for k in path[:-1]:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return "sha256:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def tree_digest(root: Path, pattern: str = "*") -> tuple[str, dict[str, str]]:
    """sha256 over (relative path, content) of the files matching `pattern` under root, sorted by
    path (caches and hidden files skipped), and the sha256 of each file."""
    h = hashlib.sha256()
    files: dict[str, str] = {}
    if not root.is_dir():
        raise FileNotFoundError(f"env lock: folder {root} does not exist")
    for path in sorted(root.rglob(pattern)):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or "__pycache__" in path.parts or any(p.startswith(".") for p in Path(rel).parts):
            continue
        data = path.read_bytes()
        h.update(rel.encode() + b"\0" + data + b"\0")
        files[rel] = "sha256:" + hashlib.sha256(data).hexdigest()
    return "sha256:" + h.hexdigest(), files


def build_env_lock(
    cfg: ProjectConfig,
    inventories: Mapping[str, Mapping[str, Any]],
    *,
    benchmarks: Sequence[Mapping[str, Any]] = (),
    demo_dir: Path | None = None,
    prompts_dir: Path | None = None,
    method: Mapping[str, Any] | None = None,
    simulator: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The environment lock; `simulator` is the user simulator's pin (`factory.llm.simulator.simulator_pin`),
    computed by the caller so that this package does not depend on the model layer."""
    demo_digest, demo_files = tree_digest(demo_dir or package_root() / "factory" / "demo", "*.py")
    prompts_digest, prompt_files = tree_digest(prompts_dir or package_root() / "prompts")
    config = config_digest(cfg)
    body = {
        "version": LOCK_VERSION,
        "tool_surfaces": {
            d: {
                "surface": inv.get("fingerprint"),
                "platforms": dict(sorted((inv.get("platform_fingerprints") or {}).items())),
            }
            for d, inv in sorted(inventories.items())
        },
        "demo_service": {"sha256": demo_digest, "files": len(demo_files)},
        "prompts": {"sha256": prompts_digest, "files": prompt_files},
        "config": {"digest": config, "slug": f"{cfg.name}-{len(cfg.domains)}d-seed{cfg.seed}-{config[7:15]}"},
        "benchmarks": {b["path"]: b["sha256"] for b in benchmarks},
        "audit_method": dict(method or {}),
        "user_simulator": dict(simulator or {}),
    }
    return {**body, "lock": "sha256:" + hashlib.sha256(dumps(body).encode()).hexdigest()}


def diff_env_lock(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Dotted paths whose values differ between two locks (empty: the same environment)."""
    out: list[str] = []

    def walk(x: Any, y: Any, path: str) -> None:
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            for k in sorted(set(x) | set(y)):
                if k == "lock":
                    continue
                walk(x.get(k), y.get(k), f"{path}.{k}" if path else str(k))
        elif x != y:
            out.append(path)

    walk(a, b, "")
    return out
