"""Re-draw the tool-use policies of a run's judged tasks with this checkout's code (pure: no pipeline run) and print
the counts per domain / language / category / scope, with one policy text per (language, category, scope).

    PYTHONPATH=$PWD python benchmarks/policy_draw.py PROJECT_DIR [--json OUT]

PROJECT_DIR holds factory.yaml and data/ (judged_queries, tool_inventory, retrieval_corpus per domain). The
published splits drop near-duplicates after the draw, so their counts can be a little lower."""

import argparse
import json
from collections import Counter
from pathlib import Path

from factory.config import load_config
from factory.retrieval import policy


def _read(data: Path, asset: str) -> dict:
    out = {}
    for f in sorted((data / asset).glob("*.json")):
        out[f.stem] = json.loads(f.read_text(encoding="utf-8"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("project", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    cfg = load_config(a.project / "factory.yaml")
    data = a.project / "data"
    judged = _read(data, "judged_queries")
    out, stats = policy.with_policies(judged, cfg, _read(data, "retrieval_corpus"), _read(data, "tool_inventory"))
    tasks = [t for v in out.values() for t in v.get("kept") or []]
    combo: Counter[str] = Counter()
    examples: dict[str, dict] = {}
    for t in tasks:
        pol = t.get("policy") or {}
        key = f"{t['domain']}/{t['language']}/{policy.category_of(t)}/{pol.get('scope') or '-'}"
        combo[key] += 1
        if pol and key not in examples:
            un = (pol.get("unrestricted") or {}).get("golden_actions") or t.get("golden_actions") or []
            examples[key] = {
                "query": t.get("query"),
                "policy": pol.get("text"),
                "golden": [a["tool"] for a in t.get("golden_actions") or []],
                "unrestricted_golden": [a["tool"] for a in un],
                "answer": (t.get("answer") or {}).get("value"),
            }
    rep = {"tasks": len(tasks), "stats": stats, "domain/language/category/scope": dict(sorted(combo.items())),
           "examples": examples}  # fmt: skip
    text = json.dumps(rep, ensure_ascii=False, indent=1)
    print(text)
    if a.json:
        a.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
