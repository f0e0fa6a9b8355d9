"""Degenerate tasks before/after: re-run the trajectories stage on a finished project's inputs.

    PYTHONPATH=<checkout> .venv/bin/python benchmarks/degeneracy.py <project folder> [--domains a,b]
        [--out report.json] [--dump folder]

Reads tool_inventory, tool_probes and connectivity_graph of every domain from the project's data
folder, starts the project's demo service (its configured port), runs `build_trajectories` per
domain (the same inputs for any checkout on PYTHONPATH, so two checkouts compare on one graph)
and prints one JSON report per domain: kept and rejected by reason, tool calls made (counted
around every executor session), the stage time, and the kept tasks that an independent reading
finds degenerate:

- ``count_of_lookups``: a count answer (or COND branch / CMP arm) summing ≥ 2 calls of one record each;
- ``count_of_key_lookup``: a count over one call of a tool that returned 1 record at most in its probes
  and graph observations;
- ``cond_one_sided``: a COND whose condition tool returned 1 record at most in those calls (threshold ≥ 2
  can never hold) or whose 'then' branch was never executed;
- ``cmp_fixed_arm``: a CMP arm counting 1 where the compared value names another argument of the call
  (group_by=origin while origin is fixed);
- ``cmp_binary``: a CMP answered with one of its two labels (reported as a share);
- ``string_number_arg``: an argument sent as a string where the schema says integer/number.

The reading uses the task rows, the probe file and the graph's observations only, not the synthesis
code's own checks.
"""

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from factory.config import load_config
from factory.demo.service import DemoService
from factory.io import read_artifact
from factory.synthesis import trajectories as T
from factory.tools.executor import ToolExecutor


def _count_calls() -> dict[str, int]:
    """Count the calls of every executor session (ToolExecutor.__aexit__ adds its session's calls)."""
    box = {"calls": 0}
    orig = ToolExecutor.__aexit__

    async def counted(self, *exc):
        box["calls"] += sum(c["calls"] for c in self.call_counts().values())
        return await orig(self, *exc)

    ToolExecutor.__aexit__ = counted  # type: ignore[method-assign]
    return box


def _probe_max(probes: dict[str, Any], graph: dict[str, Any]) -> dict[str, int]:
    """tool name → the largest record count of its successful probes and graph observations (those keep at
    most 3 records: enough to tell 1 from more)."""
    out: dict[str, int] = {}
    for r in probes.get("rows") or []:
        if r.get("outcome_group") != "success":
            continue
        n = r.get("total_count") if r.get("total_count") is not None else r.get("record_count") or 0
        out[r["tool"]] = max(out.get(r["tool"], 0), int(n))
    for o in graph.get("observations") or []:
        out[o["tool"]] = max(out.get(o["tool"], 0), len(o.get("records") or []))
    return out


def _pos(acts: list[dict[str, Any]], r: Any) -> int:
    """A call reference's position: a 0-based position (older tasks) or {'step': s, 'index': i}."""
    if isinstance(r, int):
        return r
    return [p for p, a in enumerate(acts) if a["step"] == r["step"]][r.get("index", 0)]


def _calls_of(spec: Any, acts: list[dict[str, Any]]) -> list[int]:
    return [_pos(acts, r) for r in spec.get("calls") or []]


def _totals(actions: list[dict[str, Any]], idx: list[int]) -> list[int]:
    out = []
    for i in idx:
        a = actions[i]
        out.append(int(a["total_count"] if a.get("total_count") is not None else a.get("records") or 0))
    return out


def degenerate(t: dict[str, Any], pmax: dict[str, int], specs: dict[str, Any]) -> list[str]:
    acts, spec, out = t["golden_actions"], t["answer_spec"], []

    def count_flags(s: dict[str, Any]) -> None:
        if any(isinstance(r, dict) and r.get("field") for r in s.get("calls") or []):
            return  # a count read from a record's count field (an album's track_count), not a call's records
        idx = _calls_of(s, acts)
        tot = _totals(acts, idx)
        if len(idx) >= 2 and all(n == 1 for n in tot):
            out.append("count_of_lookups")
        elif len(idx) == 1 and tot == [1] and pmax.get(acts[idx[0]]["tool"], 2) == 1:
            out.append("count_of_key_lookup")

    kind = spec["kind"]
    if kind == "count":
        count_flags(spec)
    elif kind == "cond":
        cond_tool = acts[_pos(acts, spec["cond_call"])]["tool"]
        never_run = t["answer"].get("branch") == "else" and not t.get("counterfactual_actions")
        if pmax.get(cond_tool, 2) == 1 or never_run:
            out.append("cond_one_sided")
        if spec["then"]["calls"]:
            count_flags(spec["then"])
    elif kind == "cmp":
        for arm, label in zip(spec["arms"], spec["labels"], strict=True):
            idx = _calls_of(arm, acts)
            if _totals(acts, idx) == [1] and str(label) in {k for k, v in acts[idx[0]]["args"].items() if v}:
                out.append("cmp_fixed_arm")
            count_flags(arm)
        if spec.get("ask", "winner") == "winner":
            out.append("cmp_binary")
    for a in acts:
        props = (specs.get(a["tool_id"]) or {}).get("input_schema", {}).get("properties", {})
        for k, v in a["args"].items():
            s = props.get(k) or {}
            types = {s.get("type")} | {x.get("type") for x in s.get("anyOf") or []}
            if isinstance(v, str) and v != "<KEY>" and types & {"integer", "number"} and "string" not in types:
                out.append("string_number_arg")
    return sorted(set(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("project")
    ap.add_argument("--domains", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--dump", default="", help="folder for each domain's trajectories value (<domain>.json)")
    a = ap.parse_args()
    cfg = load_config(Path(a.project) / "factory.yaml")
    domains = [d for d in a.domains.split(",") if d] or cfg.domain_names
    inv = {d: read_artifact(cfg, "tool_inventory", d) for d in cfg.domain_names}
    probes = {d: read_artifact(cfg, "tool_probes", d) for d in cfg.domain_names}
    specs = {f"{d}/{t['platform']}/{t['name']}": t for d in cfg.domain_names for t in inv[d]["tools"]}
    box = _count_calls()
    report: dict[str, Any] = {}
    with DemoService(cfg.demo, log_dir=Path(a.project) / "logs"):
        for d in domains:
            box["calls"] = 0
            graph = read_artifact(cfg, "connectivity_graph", d)
            t0 = time.perf_counter()
            value, meta = T.build_trajectories(d, graph, inv, probes, cfg, progress=lambda m: None)
            secs = time.perf_counter() - t0
            if a.dump:
                Path(a.dump).mkdir(parents=True, exist_ok=True)
                (Path(a.dump) / f"{d}.json").write_text(json.dumps(value, ensure_ascii=False, default=str), "utf-8")
            pmax = _probe_max(probes[d], graph)
            trajs = value["trajectories"]
            flags = {t["trajectory_id"][7:15]: degenerate(t, pmax, specs) for t in trajs}
            flagged = Counter(f for fs in flags.values() for f in fs)
            report[d] = {
                "kept": len(trajs),
                "by_category": dict(Counter(t["category"] for t in trajs)),
                "rejected_by_reason": dict(sorted(Counter(r["reason"] for r in value["rejected"]).items())),
                "calls": box["calls"],
                "seconds": round(secs, 1),
                "degeneracy": value.get("degeneracy"),
                "flagged": dict(sorted(flagged.items())),
                "tasks_flagged_degenerate": sum(1 for fs in flags.values() if set(fs) - {"cmp_binary"}),
                "cond": sum(t["template"] == "COND" for t in trajs),
                "cmp": sum(t["template"] == "CMP" for t in trajs),
                "answer_types": dict(Counter(t["answer"]["type"] for t in trajs)),
            }
            print(d, json.dumps(report[d], ensure_ascii=False), file=sys.stderr, flush=True)
    text = json.dumps(report, indent=1, ensure_ascii=False)
    if a.out:
        Path(a.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
