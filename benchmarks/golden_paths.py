"""Golden-path soundness counts of a data folder's published tasks (issues 15/17/19, blind read s10).

    python benchmarks/golden_paths.py DATA [--json OUT]

Per published task (`dataset_splits/*.jsonl`): a call sent with an API key (`<KEY>`) whose platform's key call
is not in the golden path (`missing_key_call`), a key tool neither called nor offered (`key_tool_not_offered`), a
golden call of a source the task's policy forbids (`forbidden_golden_call`, changes_answer), and the counts per
domain / category / language / hop type / policy category, and the answers API+RAG tasks share.
"""

import argparse
import json
from collections import Counter
from pathlib import Path


def key_tools(data: Path) -> dict[str, str]:
    """platform → its key-acquisition tool, from the tool inventories."""
    out: dict[str, str] = {}
    for f in sorted((data / "tool_inventory").glob("*.json")):
        for t in json.loads(f.read_text(encoding="utf-8")).get("tools") or []:
            if t.get("key_acquisition"):
                out[t["platform"]] = t["name"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    keys = key_tools(a.data)
    tasks = [
        json.loads(line)
        for f in sorted((a.data / "dataset_splits").glob("*.jsonl"))
        for line in f.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    problems: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    counts: dict[str, Counter[str]] = {
        k: Counter() for k in ("domain", "category", "language", "hop", "policy", "policy_scope")
    }
    combo: Counter[str] = Counter()
    answers: Counter[str] = Counter()
    for t in tasks:
        pol = t.get("policy") or {}
        hop = t.get("hop_type") or "API"
        cat = pol.get("category") or "none"
        counts["domain"][t["domain"]] += 1
        counts["category"][t["category"]] += 1
        counts["language"][t["language"]] += 1
        counts["hop"][hop] += 1
        counts["policy"][cat] += 1
        combo[f"{t['domain']}/{t['language']}/{'RAG' if hop != 'API' else 'API'}/{cat}"] += 1
        golden = t.get("golden_actions") or []
        called = {g["tool"] for g in golden}
        for g in golden:
            if "<KEY>" in (g.get("args") or {}).values():
                k = keys.get(g["platform"])
                if k and k not in called:
                    problems["missing_key_call"] += 1
                    examples.setdefault("missing_key_call", []).append(f"{t['id'][:15]} {g['tool']}")
                    break
        for g in golden:
            k = keys.get(g["platform"])
            if (
                "<KEY>" in (g.get("args") or {}).values()
                and k
                and k not in called | set(t.get("available_tools") or [])
            ):
                problems["key_tool_not_offered"] += 1
                break
        forbidden = set(pol.get("forbidden_sources") or [])
        banned = set(pol.get("forbidden_platforms") or [])  # a platform-scoped policy (any category)
        paths = [golden] + [p.get("actions") or [] for p in t.get("alternative_paths") or []]
        if any(
            (g.get("source_type") or "api") in forbidden
            and cat == "changes_answer"
            or ((g.get("source_type") or "api") == "api" and g.get("platform") in banned)
            for p in paths
            for g in p
        ):
            problems["forbidden_golden_call"] += 1
            examples.setdefault("forbidden_golden_call", []).append(t["id"][:15])
        if pol:
            counts["policy_scope"][f"{t.get('language')}:{cat}:{pol.get('scope') or 'source'}"] += 1
        if hop != "API":
            answers[f"{t['domain']}:{t['answer']['value']}"] += 1
    rep = {
        "tasks": len(tasks),
        "problems": {
            k: problems.get(k, 0) for k in ("missing_key_call", "key_tool_not_offered", "forbidden_golden_call")
        },
        "examples": {k: v[:5] for k, v in examples.items()},
        **{k: dict(sorted(v.items())) for k, v in counts.items()},
        "domain/language/kind/policy": dict(sorted(combo.items())),
        "rag_answers_repeated": {k: n for k, n in answers.most_common() if n > 1},
    }
    text = json.dumps(rep, ensure_ascii=False, indent=1)
    print(text)
    if a.json:
        a.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
