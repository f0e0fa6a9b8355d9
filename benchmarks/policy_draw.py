"""Re-draw the tool-use policies of a run's judged tasks with this checkout's code (pure: no pipeline run) and print
the counts per domain / language / category / scope, with one policy text per (language, category, scope).

    PYTHONPATH=$PWD python benchmarks/policy_draw.py PROJECT_DIR [--json OUT] [--published]

PROJECT_DIR holds factory.yaml and data/ (judged_queries, tool_inventory, retrieval_corpus per domain). The
published splits drop near-duplicates after the draw, so their counts can be a little lower. `--published` reads the
policies the run itself published (data/dataset_splits: what the run's code drew) instead of re-drawing them, so
one run's data compares two versions of the code.

PolTest (`no_effect_tests`): the share of no_effect policies whose forbidden source could serve the task (a banned
platform with a tool that stands in for a golden call or that an alternative path uses; banned documents, one about
something the question names; banned APIs that may compute the passage's fact), i.e. a ban a plausible agent might
break (blind read s12 pol: 2 of 10). Also checked: every platform ban names every tool of its platform, and a
platform-scoped task offers every read tool of the permitted platforms with their key tools."""

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from factory.config import load_config
from factory.retrieval import policy


def _read(data: Path, asset: str) -> dict:
    out = {}
    for f in sorted((data / asset).glob("*.json")):
        out[f.stem] = json.loads(f.read_text(encoding="utf-8"))
    return out


def _poltest(tasks: list[dict], judged: dict, corpora: dict, inventories: dict) -> dict:
    """PolTest over the no_effect policies, and the consistency of platform bans (see the module docstring)."""
    originals = {str(t.get("id")): t for v in judged.values() for t in v.get("kept") or []}
    catalogs = {d: policy.tool_catalog(inv) for d, inv in inventories.items()}
    rows: list[dict] = []
    lists: dict[str, set[tuple[str, ...]]] = {}
    missing_offer: list[dict] = []
    for t in tasks:
        pol = t.get("policy") or {}
        d = str(t.get("domain"))
        cat = catalogs.get(d) or {}
        for p in pol.get("forbidden_platforms") or []:
            m = re.search(
                rf"{re.escape(p)} API \(([^)]*)\)|{re.escape(p)} API[^(]*\(해당 도구: ([^)]*)\)", pol.get("text") or ""
            )
            listed = [x.strip() for x in (m.group(1) or m.group(2) or "").split(",") if x.strip()] if m else []
            # the Korean sentence lists every banned tool in one bracket (documents too): keep this platform's
            named = tuple(sorted(x for x in listed if (cat.get(x) or {}).get("platform", p) == p))
            lists.setdefault(p, set()).add(named)
        if pol.get("forbidden_platforms"):
            banned = set(pol["forbidden_platforms"])
            offered = set(t.get("available_tools") or [])
            want = {
                n for n, c in cat.items() if c["platform"] not in banned and not c.get("state") and c["kind"] == "api"
            }
            if want - offered:
                missing_offer.append({"id": t.get("id"), "missing": sorted(want - offered)})
        if pol.get("category") != "no_effect":
            continue
        orig = originals.get(str(t.get("id")), t)
        why = policy.no_effect_tests(orig, pol, cat, (corpora.get(d) or {}).get("chunks") or [])
        rows.append({"id": t.get("id"), "domain": d, "language": t.get("language"), "query": t.get("query"),
                     "forbidden": pol.get("forbidden_platforms") or pol.get("forbidden_sources"), "tests": why})  # fmt: skip
    n = len(rows)
    ok = sum(1 for r in rows if r["tests"])
    return {
        "no_effect": n,
        "tests_something": ok,
        "share": round(ok / n, 3) if n else None,
        "rows": rows,
        "platform_ban_lists": {p: len(v) for p, v in sorted(lists.items())},  # 1 = the same list in every task
        "platform_ban_lists_all_tools": {
            p: all(
                set(named) == {n for c in catalogs.values() for n, x in c.items() if x["platform"] == p} for named in v
            )
            for p, v in sorted(lists.items())
        },
        "permitted_read_tools_not_offered": missing_offer,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("project", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--published", action="store_true", help="the run's published policies, not a re-draw")
    ap.add_argument("--dump", type=Path, help="write the drawn tasks (JSONL) for --tasks")
    ap.add_argument("--tasks", type=Path, help="a JSONL of tasks with their policies (e.g. another checkout's draw)")
    a = ap.parse_args()
    cfg = load_config(a.project / "factory.yaml")
    data = a.project / "data"
    judged = _read(data, "judged_queries")
    corpora, inventories = _read(data, "retrieval_corpus"), _read(data, "tool_inventory")
    if a.published or a.tasks:
        files = [a.tasks] if a.tasks else sorted((data / "dataset_splits").glob("*.jsonl"))
        tasks = [json.loads(line) for f in files for line in f.open()]
        stats: dict = {"read": len(tasks)}
    else:
        out, stats = policy.with_policies(judged, cfg, corpora, inventories)
        tasks = [t for v in out.values() for t in v.get("kept") or []]
    stats["poltest"] = _poltest(tasks, judged, corpora, inventories)
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
    if a.dump:
        a.dump.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks), encoding="utf-8")
    text = json.dumps(rep, ensure_ascii=False, indent=1)
    print(text)
    if a.json:
        a.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
