"""Per-domain yield of a finished project run: trajectories kept per pattern against the quota, kept/attempted,
tasks the judges kept, and the main rejection reasons (trajectories and judged_queries artifacts).

    PYTHONPATH=. python benchmarks/yield_table.py <project folder> [<project folder> ...]

Prints one markdown table per project (the before/after tables of benchmarks/results/yield_2026-12-01.md).
"""

import json
import sys
from collections import Counter
from pathlib import Path

CATEGORIES = ["SEQ", "FAN", "DRV", "SEM", "CMP", "COND", "MIXED"]


def table(project: Path) -> str:
    data = project / "data"
    rows = [
        "| domain | "
        + " | ".join(CATEGORIES)
        + " | kept/attempted | judged kept | units retired | top trajectory rejections |",
        "|---" * (len(CATEGORIES) + 5) + "|",
    ]
    for path in sorted((data / "trajectories").glob("*.json")):
        value = json.loads(path.read_text())
        quota = int(value.get("config", {}).get("per_pattern", 0))
        kept, rejected = value["trajectories"], value["rejected"]
        have = Counter(t["category"] for t in kept)
        judged_path = data / "judged_queries" / path.name
        judged = json.loads(judged_path.read_text()) if judged_path.exists() else {"kept": []}
        top = ", ".join(f"{r} {n}" for r, n in Counter(r["reason"] for r in rejected).most_common(4))
        retired = value.get("degeneracy", {}).get("units_retired", "-")
        fills = " | ".join(f"{have.get(c, 0)}/{quota}" for c in CATEGORIES)
        rows.append(
            f"| {path.stem} | {fills} | {len(kept)}/{len(kept) + len(rejected)} | {len(judged['kept'])} | "
            f"{retired} | {top} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"### {arg}\n\n{table(Path(arg))}\n")
