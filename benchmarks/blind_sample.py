"""Draw a random sample of published tasks for a blind audit (a reader who never sees the code).

    python benchmarks/blind_sample.py DATA_DIR OUT.jsonl [--n 60] [--seed 20261201] [--min-lang ko=20]
        [--only multisource|policy]

Each line holds only what a careful annotator needs: the query, the gold answer, the golden
calls (tool, platform, step, arguments; the API key and paging left out) and the documentation
of each tool used (description and parameters, as the service publishes them). No result
samples, no synthesis internals: the auditor re-derives every answer from the raw data.
The prompt given to the auditor is benchmarks/blind_audit_prompt.md.
"""

import argparse
import json
import random
import sys
from pathlib import Path

SPLITS = ("train", "dev", "test")
# only credentials and wire formats are hidden: paging arguments stay, or two pages of one listing
# read as a repeated call (round-3 audit, task b4396738)
HIDDEN_ARGS = {"api_key", "format"}


def published(data: Path) -> list[dict]:
    rows = []
    for split in SPLITS:
        path = data / "dataset_splits" / f"{split}.jsonl"
        if path.exists():
            rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows


def _param_doc(schema: dict) -> str:
    text = schema.get("description") or schema.get("type") or ""
    if "default" in schema:
        text += f" (default: {schema['default']})"
    return text


def tool_docs(data: Path) -> dict[tuple[str, str], dict]:
    docs: dict[tuple[str, str], dict] = {}
    for path in sorted((data / "tool_inventory").glob("*.json")):
        inv = json.loads(path.read_text(encoding="utf-8"))
        for t in inv.get("tools", []):
            props = (t.get("input_schema") or {}).get("properties") or {}
            docs[(t["platform"], t["name"])] = {
                "tool": t["name"],
                "platform": t["platform"],
                "description": t.get("description", ""),
                "parameters": {p: _param_doc(s) for p, s in props.items() if p not in HIDDEN_ARGS},
            }
    return docs


def blind_row(task: dict, docs: dict[tuple[str, str], dict]) -> dict:
    calls = [
        {
            "step": a["step"],
            "platform": a["platform"],
            "tool": a["tool"],
            "args": {k: v for k, v in (a.get("args") or {}).items() if k not in HIDDEN_ARGS},
        }
        for a in task["golden_actions"]
    ]
    used = sorted({(a["platform"], a["tool"]) for a in task["golden_actions"]})
    return {
        "id": task["id"].removeprefix("sha256:")[:8],
        "domain": task["domain"],
        "language": task["language"],
        "category": task.get("category"),
        "query": task["query"],
        "answer": {k: task["answer"].get(k) for k in ("value", "text", "type")},
        "golden_calls": calls,
        "tools": [docs[u] for u in used if u in docs],
        **({"hop_type": task["hop_type"]} if task.get("hop_type") else {}),
        # the tool-use policy the agent is given (its system prompt) and the answer it then expects
        **(
            {"policy": {k: task["policy"].get(k) for k in ("category", "text", "expected_answer")}}
            if isinstance(task.get("policy"), dict)
            else {}
        ),
    }


def _selected(task: dict, only: str | None) -> bool:
    if only == "multisource":
        return str(task.get("hop_type") or "API") != "API"
    if only == "policy":
        return isinstance(task.get("policy"), dict) and task["policy"].get("category") not in (None, "none")
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument(
        "--min-lang",
        action="append",
        default=[],
        metavar="LANG=K",
        help="at least K tasks in LANG (drawn first, at random); repeatable",
    )
    ap.add_argument(
        "--only",
        choices=["multisource", "policy"],
        help="only API+RAG tasks (a hop type other than API) or only tasks with a policy that changes something",
    )
    a = ap.parse_args(argv)
    tasks = [t for t in published(a.data_dir) if _selected(t, a.only)]
    if not tasks:
        print(f"no published tasks under {a.data_dir / 'dataset_splits'}", file=sys.stderr)
        return 2
    random.Random(a.seed).shuffle(tasks)
    chosen: list[dict] = []
    for spec in a.min_lang:
        lang, _, k = spec.partition("=")
        if not k.isdigit():
            print(f"--min-lang expects LANG=K, got {spec!r}", file=sys.stderr)
            return 2
        of_lang = [t for t in tasks if t["language"] == lang and t not in chosen]
        if len(of_lang) < int(k):
            print(f"only {len(of_lang)} published {lang} tasks, fewer than the {k} asked for", file=sys.stderr)
        chosen += of_lang[: int(k)]
    chosen += [t for t in tasks if t not in chosen][: max(0, a.n - len(chosen))]
    random.Random(a.seed + 1).shuffle(chosen)  # languages interleaved, not in blocks
    docs = tool_docs(a.data_dir)
    sample = [blind_row(t, docs) for t in chosen]
    a.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sample), encoding="utf-8")
    print(f"{len(sample)} of {len(tasks)} published tasks -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
