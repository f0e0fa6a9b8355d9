"""Before/after pairs of published questions and answer sentences on one run's trajectories (issue 15).

    PYTHONPATH=. python benchmarks/phrase_pairs.py <data_dir> <factory.yaml> [--en 20] [--ko 10] [--lexicon-dir lexicon]

"Before": the `query` and `answer.text` published in <data_dir>/dataset_splits (the run's own code). "After": the
generated_queries stage of this checkout (`build_queries`, rules writer, grounding and rule checks included) over the
same trajectories, so each pair is one trajectory; a trajectory the new realization does not publish shows its
`Unphraseable` reason code. Pairs are drawn deterministically (sorted by task id). Prints a markdown table.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any


def _after(data: Path, config: Path, lexicon_dir: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    from factory.config import load_config
    from factory.frames import build_frames, load_lexicon_overrides
    from factory.llm.service import LLM
    from factory.model_config import ModelsConfig
    from factory.synthesis.queries import build_queries
    from factory.tools.registry import ToolRegistry

    cfg = load_config(str(config))
    inventories = {p.stem: json.loads(p.read_text()) for p in (data / "tool_inventory").glob("*.json")}
    specs = ToolRegistry.from_inventories(inventories)
    model = LLM(ModelsConfig(roles={}), cache_path=None)
    done: dict[str, dict[str, Any]] = {}
    rejected: dict[str, str] = {}
    for tp in sorted((data / "trajectories").glob("*.json")):
        domain = tp.stem
        lex = json.loads((data / "tool_lexicon" / f"{domain}.json").read_text())
        ov_path = lexicon_dir / f"{domain}.yaml"
        ov = load_lexicon_overrides(ov_path) if ov_path.is_file() else None
        lex = {**lex, "nouns": {"tools": build_frames(specs, lex["value_types"]["tools"], ov)}}
        value, _ = build_queries(domain, json.loads(tp.read_text()), inventories, cfg, model, lexicon=lex)
        for t in value["tasks"]:
            done[t["lineage"]["trajectory_id"]] = t
        for r in value["rejected"]:
            rejected[r["trajectory_id"]] = f"{r['reason']}:{r.get('code') or ''}".rstrip(":")
    return done, rejected


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("config", type=Path)
    ap.add_argument("--en", type=int, default=20)
    ap.add_argument("--ko", type=int, default=10)
    ap.add_argument("--lexicon-dir", type=Path, default=Path("lexicon"))
    a = ap.parse_args(argv)
    before = [json.loads(line) for p in sorted((a.data_dir / "dataset_splits").glob("*.jsonl")) for line in p.open()]
    after, rejected = _after(a.data_dir, a.config, a.lexicon_dir)
    published = sum(1 for t in before if t["lineage"]["trajectory_id"] in after)
    print(f"before: {len(before)} published; after, on the same trajectories: {published} still published, "
          f"{sum(1 for t in before if t['lineage']['trajectory_id'] in rejected)} not published\n")  # fmt: skip
    print("| # | lang | category | before: query / answer | after: query / answer |")
    print("|---|---|---|---|---|")
    n = 0
    for lang, k in (("en", a.en), ("ko", a.ko)):
        mine = sorted(
            (t for t in before if t["language"] == lang), key=lambda t: hashlib.sha1(t["id"].encode()).hexdigest()
        )
        for t in mine[:k]:
            n += 1
            tid = t["lineage"]["trajectory_id"]
            new = after.get(tid)
            right = (f"{new['query']}<br>→ {new['answer']['text']}" if new
                     else f"*not published* ({rejected.get(tid, 'not realized')})")  # fmt: skip
            left = f"{t['query']}<br>→ {t['answer']['text']}"
            print(f"| {n} | {lang} | {t['category']} | {left.replace('|', '/')} | {right.replace('|', '/')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
