"""Compare the published tasks of two data folders (e.g. two code versions on the same config).

    python benchmarks/compare_runs.py OLD_DATA_DIR NEW_DATA_DIR

Prints, per split, how many tasks each run published, how many are identical by
(query, answer value, golden tool sequence, golden arguments), how many differ only in
per-run values (result digests of stateful calls, run ids), and the rest; then the
differing tasks side by side. Used to show that a restructuring left the data unchanged.
"""

import json
import sys
from pathlib import Path

SPLITS = ("train", "dev", "test")


def load(folder: Path, split: str) -> dict[str, dict]:
    path = folder / "dataset_splits" / f"{split}.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["id"]: r for r in rows}


def content(t: dict) -> tuple:
    """What a user reads and trains on: the query, the answer, the golden calls and their arguments."""
    calls = tuple((a["platform"], a["tool"], json.dumps(a.get("args"), sort_keys=True)) for a in t["golden_actions"])
    return t["query"], json.dumps(t["answer"].get("value"), sort_keys=True), calls


def main(old_dir: str, new_dir: str) -> int:
    old_root, new_root = Path(old_dir), Path(new_dir)
    print("| split | old | new | same id | same content | content differs | only old | only new |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    diffs = []
    for split in SPLITS:
        old, new = load(old_root, split), load(new_root, split)
        same_id = old.keys() & new.keys()
        same = [i for i in same_id if content(old[i]) == content(new[i])]
        differ = [i for i in same_id if content(old[i]) != content(new[i])]
        only_old = sorted(old.keys() - new.keys())
        only_new = sorted(new.keys() - old.keys())
        print(
            f"| {split} | {len(old)} | {len(new)} | {len(same_id)} | {len(same)} | {len(differ)} | {len(only_old)} | {len(only_new)} |"
        )
        diffs += [(split, i, old.get(i), new.get(i)) for i in differ + only_old + only_new]
    for split, i, o, n in diffs:
        print(f"\n{split} {i}:")
        print(f"  old: {o and content(o)}")
        print(f"  new: {n and content(n)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
