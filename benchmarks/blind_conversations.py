"""Draw published conversations for a blind read (a reader who never sees the code).

    python benchmarks/blind_conversations.py DATA_DIR OUT.jsonl [--n 20] [--seed 20261210] [--min-lang ko=10]

First one conversation of every case kind per language (single, sequential, parallel, multi_turn, no_call and
error_recovery, where the run has one), then random ones until N, with at least K in a language. Each line holds
what the reader needs: the opening message, persona, hidden facts, success criteria, the tools offered and the
reference conversation (user, assistant tool calls, tool results, final answer). No synthesis internals
(naturalness scores, oracle audit, question keys). The reader's brief: `benchmarks/blind_audit_prompt.md` (data
section) and the prompt the lead writes for the conversation read.
"""

import argparse
import json
import random
import sys
from pathlib import Path

SHOWN = ("id", "domain", "language", "initial_message", "persona", "hidden_info", "success_criteria", "tools_subset")


def conversations(data: Path) -> list[dict]:
    path = data / "conversations" / "__all__.json"
    if not path.exists():
        raise SystemExit(f"no conversations asset at {path}: materialize `conversations` first (factory run)")
    return list(json.loads(path.read_text(encoding="utf-8")).get("tasks") or [])


def kind(conv: dict) -> str:
    return "error_recovery" if conv.get("recovers") else str(conv.get("case_pattern"))


def reader_row(conv: dict) -> dict:
    row = {key: conv.get(key) for key in SHOWN}
    row["case_pattern"] = kind(conv)
    row["golden_messages"] = conv.get("golden_messages") or []
    return row


def draw(convs: list[dict], n: int, seed: int, min_lang: dict[str, int]) -> list[dict]:
    rng = random.Random(seed)
    pool = sorted(convs, key=lambda c: str(c.get("id")))
    rng.shuffle(pool)
    chosen: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for conv in pool:  # one of each kind per language
        key = (kind(conv), str(conv.get("language")))
        if key not in seen:
            seen.add(key)
            chosen.append(conv)
    for lang, k in min_lang.items():
        for conv in pool:
            if sum(1 for c in chosen if c.get("language") == lang) >= k:
                break
            if conv.get("language") == lang and conv not in chosen:
                chosen.append(conv)
    for conv in pool:
        if len(chosen) >= n:
            break
        if conv not in chosen:
            chosen.append(conv)
    return chosen[: max(n, len(seen))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=20261210)
    ap.add_argument("--min-lang", action="append", default=[], metavar="LANG=K")
    args = ap.parse_args(argv)
    min_lang = {lang: int(k) for lang, k in (item.split("=", 1) for item in args.min_lang)}
    rows = [reader_row(c) for c in draw(conversations(args.data_dir), args.n, args.seed, min_lang)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(args.out.suffix + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(args.out)
    by = {}
    for r in rows:
        by[(r["language"], r["case_pattern"])] = by.get((r["language"], r["case_pattern"]), 0) + 1
    print(f"{len(rows)} conversations -> {args.out}: " + ", ".join(f"{k[0]}/{k[1]} {v}" for k, v in sorted(by.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
