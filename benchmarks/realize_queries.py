"""Realize every trajectory of a run's data folder with the rules query writer and measure the questions.

    PYTHONPATH=. python benchmarks/realize_queries.py <data_dir> [--print] [--published] [--lexicon-dir lexicon]
    PYTHONPATH=. python benchmarks/realize_queries.py <data_dir> --build <factory.yaml>   # build_queries, grounding

With PYTHONPATH at a checkout from before the tool frames, the same trajectories are realized the old way (the
"before" figures of a before/after comparison on one run).

Reads trajectories/, tool_inventory/ and tool_lexicon/ of <data_dir> (a project's data folder after a run), writes
each trajectory's templated question (issue 15 items 1 and 3) and prints the naturalness metrics: share of queries
with internal ids ('id 12', '_id') or snake_case tokens, the most common opening three words and their share,
distinct-2 (distinct word bigrams / all bigrams), rejections by reason.  `--published` measures the `query` of the
published dataset_splits instead (the current run's output, for the "before" figures).
"""

import argparse
import inspect
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

_ID = re.compile(r"\bid\b\s*\d|_id\b|\bid\s+of\b", re.IGNORECASE)
_SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z][a-zA-Z]+\b")


def metrics(queries: list[str]) -> dict[str, Any]:
    n = len(queries) or 1
    openings = Counter(" ".join(q.split()[:3]).lower() for q in queries)
    bigrams = [tuple(q.split()[i : i + 2]) for q in queries for i in range(len(q.split()) - 1)]
    top, top_n = openings.most_common(1)[0] if openings else ("", 0)
    return {
        "queries": len(queries),
        "internal_id_share": round(sum(bool(_ID.search(q)) for q in queries) / n, 3),
        "snake_case_share": round(sum(bool(_SNAKE.search(q)) for q in queries) / n, 3),
        "top_opening": top,
        "top_opening_share": round(top_n / n, 3),
        "distinct_2": round(len(set(bigrams)) / max(len(bigrams), 1), 3),
        "mean_words": round(sum(len(q.split()) for q in queries) / n, 1),
    }


def realize(data: Path, lexicon_dir: Path | None = None) -> tuple[list[dict[str, Any]], Counter]:
    from factory.llm import rules
    from factory.synthesis import phrasing
    from factory.synthesis.queries import unstated_arguments, writer_input
    from factory.tools.registry import ToolRegistry

    inventories = {p.stem: json.loads(p.read_text()) for p in (data / "tool_inventory").glob("*.json")}
    specs = ToolRegistry.from_inventories(inventories)
    out: list[dict[str, Any]] = []
    rejected: Counter = Counter()
    for tp in sorted((data / "trajectories").glob("*.json")):
        domain = tp.stem
        lex_path = data / "tool_lexicon" / f"{domain}.json"
        lex = json.loads(lex_path.read_text()) if lex_path.is_file() else {}
        frames = (lex.get("nouns") or {}).get("tools") or None
        if frames is None or lexicon_dir is not None:  # a run from before the nouns section: the frames built here
            try:
                from factory.frames import build_frames, load_lexicon_overrides
            except ImportError:  # a checkout from before the frames
                build_frames = load_lexicon_overrides = None  # type: ignore[assignment]

            if build_frames is not None:
                ov_path = (lexicon_dir or Path("lexicon")) / f"{domain}.yaml"
                ov = load_lexicon_overrides(ov_path) if ov_path.is_file() else None
                frames = build_frames(specs, (lex.get("value_types") or {}).get("tools") or {}, ov)
        lang = "ko" if domain == "korea" else "en"
        for i, t in enumerate(json.loads(tp.read_text())["trajectories"]):
            if unstated_arguments(t, specs):
                rejected["unstated_argument"] += 1
                continue
            try:
                # a checkout from before the frames (PYTHONPATH at another worktree: the "before" figures)
                args = (t, specs, lang, i, frames) if "frames" in inspect.signature(writer_input).parameters else (
                    t, specs, lang, i)  # fmt: skip
                q = rules.query_writer(writer_input(*args)).query
            except phrasing.Unphraseable as e:
                rejected[f"unphraseable:{getattr(e, 'code', 'label')}"] += 1
                out.append({"domain": domain, "language": lang, "pattern": t["pattern"], "query": "", "error": str(e)})
                continue
            out.append({"domain": domain, "language": lang, "pattern": t["pattern"], "query": q})
    return out, rejected


def build(data: Path, config: Path, lexicon_dir: Path | None) -> tuple[list[dict[str, Any]], Counter]:
    """The generated_queries stage itself over the run's trajectories (grounding checks included), rules only."""
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
    rows: list[dict[str, Any]] = []
    rejected: Counter = Counter()
    for tp in sorted((data / "trajectories").glob("*.json")):
        domain = tp.stem
        lex = json.loads((data / "tool_lexicon" / f"{domain}.json").read_text())
        if lexicon_dir is not None or not (lex.get("nouns") or {}).get("tools"):
            ov_path = (lexicon_dir or Path("lexicon")) / f"{domain}.yaml"
            ov = load_lexicon_overrides(ov_path) if ov_path.is_file() else None
            lex = {**lex, "nouns": {"tools": build_frames(specs, lex["value_types"]["tools"], ov)}}
        value, _ = build_queries(domain, json.loads(tp.read_text()), inventories, cfg, model, lexicon=lex)
        for t in value["tasks"]:
            rows.append({"domain": domain, "language": t["language"], "pattern": t["pattern"], "query": t["query"]})
        for r in value["rejected"]:
            rejected[r["reason"]] += 1
            if r["reason"] != "unphraseable":
                print("REJECTED", r["reason"], r["detail"], "|", r["query"])
    return rows, rejected


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--print", action="store_true")
    ap.add_argument("--published", action="store_true")
    ap.add_argument("--build", type=Path, default=None, help="a factory.yaml: run build_queries (grounding included)")
    ap.add_argument("--lexicon-dir", type=Path, default=None, help="reviewed lexicon files to build the frames with")
    a = ap.parse_args(argv)
    if a.published:
        rows = [json.loads(line) for p in sorted((a.data_dir / "dataset_splits").glob("*.jsonl")) for line in p.open()]
        rejected: Counter = Counter()
    elif a.build is not None:
        rows, rejected = build(a.data_dir, a.build, a.lexicon_dir)
    else:
        rows, rejected = realize(a.data_dir, a.lexicon_dir)
    for lang in sorted({r["language"] for r in rows}):
        qs = [r["query"] for r in rows if r["language"] == lang and r["query"]]
        print(lang, json.dumps(metrics(qs), ensure_ascii=False))
    print("rejected", dict(rejected))
    if a.print:
        for r in sorted(rows, key=lambda r: (r["language"], r["pattern"])):
            print(f"{r['pattern']:10} {r['language']} | {r['query'] or 'UNPHRASEABLE: ' + r.get('error', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
