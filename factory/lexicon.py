"""The tool_lexicon stage (pure core): what a domain's tool inputs and outputs are.

Now: the semantic value type of every bindable parameter and every output field
(`factory.semtypes`), the code systems they belong to and the evidence for them.  Room is left
for the entity nouns and relation frames of each tool (issue 15: the `nouns` section).

Types are inferred over every domain's inventory and probes at once (two platforms' code
systems are compared wherever they are), with every domain's reviewed overrides whose
inventory is present; the value keeps the types of this domain's tools.
"""

import hashlib
from collections.abc import Mapping
from typing import Any

import pandas as pd

from factory import frames
from factory.config import ProjectConfig
from factory.io import dumps
from factory.report import Markdown, bar_plot, counts, md_table, rate
from factory.semtypes import (
    UNKNOWN,
    Overrides,
    TypeRef,
    ValueTypes,
    check_overrides,
    infer_types,
    is_valid_type,
    load_overrides,
    root,
)
from factory.tools.observed import schema_source_map
from factory.tools.registry import ToolRegistry

FRAME_COLUMNS = ["slot", "tool_id", "kind", "name", "type", "source", "valid_type", "unknown"]


def project_overrides(cfg: ProjectConfig, specs: Mapping[str, Any]) -> tuple[Overrides, list[str]]:
    """Every domain's reviewed value-type file (`DomainConfig.types`, else types/<domain>.yaml),
    each checked against its own domain's tools; files of domains without an inventory are left out."""
    merged = Overrides()
    files: list[str] = []
    domains = {s.domain for s in specs.values()}
    for d in cfg.domain_names:
        path = cfg.types_file(d)
        if path is None or d not in domains:
            continue
        ov = load_overrides(path)
        check_overrides(ov, {t: s for t, s in specs.items() if s.domain == d})
        merged = merged.merged(ov)
        files.append(path)
    return merged, files


def lexicon_file(cfg: ProjectConfig, domain: str) -> str | None:
    """The domain's reviewed lexicon file: lexicon/<domain>.yaml in the project folder (beside types/), if any."""
    path = cfg.project_dir / "lexicon" / f"{domain}.yaml"
    return str(path) if path.is_file() else None


def tool_nouns(
    cfg: ProjectConfig, domain: str, specs: Mapping[str, Any], tools: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """The `nouns` section: per tool the entity noun (EN/KO, counter), relation, display/key/reference fields
    (`factory.frames`), the reviewed file laid over the rules (each frame says which)."""
    path = lexicon_file(cfg, domain)
    ov = None
    stale: list[str] = []
    if path is not None:
        ov = frames.load_lexicon_overrides(path)
        stale = frames.check_lexicon_overrides(ov, specs, strict=cfg.lexicon.stale_entries == "error")
        if stale:
            ov = frames.prune_lexicon_overrides(ov, specs)
    built = frames.build_frames(specs, tools, ov)
    return {"tools": built, "files": [path] if path else [], "sources": counts(f["source"] for f in built.values()),
            "stale_entries": stale}  # fmt: skip


def build_lexicon(
    domain: str,
    inventories: Mapping[str, Mapping[str, Any]],
    probes: Mapping[str, Mapping[str, Any]],
    cfg: ProjectConfig,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The tool_lexicon value of `domain` and its metadata."""
    if domain not in inventories:
        raise ValueError(f"tool_lexicon {domain}: the domain's tool_inventory is not materialized")
    specs = ToolRegistry.from_inventories(inventories, probes)  # declared or observed output fields
    overrides, files = project_overrides(cfg, specs)
    inf = infer_types(specs, probes, overrides, min_agreements=cfg.lexicon.min_code_agreements)
    tids = sorted(t for t in inf.entities if specs[t].domain == domain)
    platforms = {specs[t].platform for t in tids}
    slots = [
        {
            "tool_id": tid,
            "kind": kind,
            "name": name,
            "type": typing.type,
            "source": typing.source,
            "evidence": typing.evidence,
        }
        for (tid, kind, name), typing in sorted(inf.slots.items())
        if specs[tid].domain == domain
    ]
    used = {(t.entity and root(t.entity, inf.parents), t.role, (t.system or "").removeprefix("std:")) for t in
            (TypeRef.parse(s["type"]) for s in slots) if t.is_code}  # fmt: skip
    systems = [r for r in inf.systems if (r["family"], r["role"], r["system"]) in used]
    comparisons = [
        {
            "family": c.family,
            "role": c.role,
            "a": c.a,
            "b": c.b,
            "agreements": c.agreements,
            "conflicts": c.conflicts,
            "verdict": c.verdict,
            "examples": c.examples,
        }
        for c in inf.comparisons
        if platforms & {c.a, c.b}
    ]
    tools = {tid: inf.tool_types(tid) for tid in tids}
    value = {
        "domain": domain,
        "fingerprint": inventories[domain].get("fingerprint"),
        "value_types": {
            "tools": tools,
            "slots": slots,
            "parents": dict(sorted(inf.parents.items())),
            "systems": systems,
            "comparisons": comparisons,
            "merges": [m for m in inf.merges if any(p in m["a"] or p in m["b"] for p in platforms)],
            "overrides": {
                "files": files,
                "applied": inf.overrides_applied,
                "digest": "sha256:" + hashlib.sha256(dumps(overrides.model_dump()).encode()).hexdigest(),
            },
        },
        "output_schema_sources": schema_source_map((specs[t] for t in tids), probes),  # declared | inferred | none
        "nouns": tool_nouns(cfg, domain, {t: specs[t] for t in tids}, tools),
    }
    return value, lexicon_metadata(value)


def lexicon_frame(value: Mapping[str, Any]) -> pd.DataFrame:
    """One row per typed slot (bindable parameter or output field) for the tool_lexicon suite."""
    rows = [
        {
            "slot": f"{s['kind']}:{s['tool_id']}#{s['name']}",
            "tool_id": s["tool_id"],
            "kind": s["kind"],
            "name": s["name"],
            "type": s.get("type"),
            "source": s.get("source"),
            "valid_type": is_valid_type(s.get("type")),
            "unknown": s.get("type") == UNKNOWN,
        }
        for s in (value.get("value_types") or {}).get("slots", [])
    ]
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)


def lexicon_metadata(value: Mapping[str, Any]) -> dict[str, Any]:
    vt = value["value_types"]
    slots = vt["slots"]
    unknown = [s for s in slots if s["type"] == UNKNOWN]
    by_type = counts(s["type"] for s in slots)
    top = dict(sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0]))[:25])
    return {
        "tools": len(vt["tools"]),
        "slots": len(slots),
        "params": sum(1 for s in slots if s["kind"] == "param"),
        "fields": sum(1 for s in slots if s["kind"] == "field"),
        "types": len(by_type),
        "unknown_slots": len(unknown),
        "unknown_share": rate(len(unknown), len(slots)),
        "unknown_params": sorted(
            f"{s['tool_id'].split('/', 1)[1]}.{s['name']}" for s in unknown if s["kind"] == "param"
        ),
        "type_sources": counts(s["source"] for s in slots),
        "code_systems": len(vt["systems"]),
        "merged_code_systems": sum(1 for r in vt["systems"] if len(r["members"]) > 1),
        "distinct_code_systems": sum(1 for c in vt["comparisons"] if c["verdict"] == "distinct"),
        "overrides_applied": len(vt["overrides"]["applied"]),
        "inferred_output_fields": sum(
            1
            for s in slots
            if s["kind"] == "field" and (value.get("output_schema_sources") or {}).get(s["tool_id"]) == "inferred"
        ),
        "override_files": vt["overrides"]["files"],
        "type_counts": bar_plot(top, title="slots per value type (top 25)", xlabel="type", ylabel="slots"),
        "preview": md_table(
            [
                {
                    "tool": s["tool_id"].split("/", 1)[1],
                    "slot": f"{'in' if s['kind'] == 'param' else 'out'} {s['name']}",
                    "type": s["type"],
                    "source": s["source"],
                    "evidence": s["evidence"],
                }
                for s in slots
            ],
            limit=40,
        ),
        "code_system_table": md_table(
            [{**r, "members": ", ".join(r["members"])} for r in vt["systems"] if len(r["members"]) > 1]
            or [{"family": "-", "role": "-", "system": "no merged code systems", "members": "-"}],
            limit=30,
        ),
        "system_comparisons": md_table(
            [{**c, "examples": "; ".join(c["examples"])} for c in vt["comparisons"]]
            or [{"family": "-", "verdict": "no two platforms share an entity family with observed pairs"}],
            limit=30,
        ),
        "noun_sources": (value.get("nouns") or {}).get("sources") or {},
        "lexicon_files": (value.get("nouns") or {}).get("files") or [],
        "lexicon_stale_entries": len((value.get("nouns") or {}).get("stale_entries") or []),
        "nouns_preview": md_table(frames.preview_rows((value.get("nouns") or {}).get("tools") or {}), limit=60),
        "unknown_preview": Markdown(
            "\n".join(f"- {s['tool_id'].split('/', 1)[1]} {s['kind']} `{s['name']}`" for s in unknown[:30]) or "_none_"
        ),
    }


def infer_value_types(
    inventories: Mapping[str, Mapping[str, Any]], probes: Mapping[str, Mapping[str, Any]], cfg: ProjectConfig
) -> ValueTypes:
    """Every domain's value types inferred directly (what tool_lexicon would hold), for callers that
    have the inventories and probes but no tool_lexicon values."""
    specs = ToolRegistry.from_inventories(inventories, probes)
    overrides, _ = project_overrides(cfg, specs)
    inf = infer_types(specs, probes, overrides, min_agreements=cfg.lexicon.min_code_agreements)
    return ValueTypes({tid: inf.tool_types(tid) for tid in inf.entities}, inf.parents)
