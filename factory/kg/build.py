"""The knowledge_graph stage (pure core): probes plus every call the connectivity loop executed."""

from collections.abc import Mapping
from typing import Any

from factory.config import ProjectConfig
from factory.kg.graph import ENTITY_TYPES, PREDICATES, KnowledgeGraph, triples_frame
from factory.report import bar_plot, counts, md_table
from factory.tools.registry import ToolRegistry


def build_knowledge_graph(
    domain: str,
    inventories: Mapping[str, Mapping[str, Any]],
    probes: Mapping[str, Any],
    connectivity: Mapping[str, Any] | None,
    cfg: ProjectConfig,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Entities and triples of `domain` from its probes and the connectivity loop's observations."""
    generic = {s.name: s.generic_params.names() for s in ToolRegistry.from_inventories(inventories).in_domain(domain)}
    kg = KnowledgeGraph(domain, cfg.kg)
    kg.add_probe_rows(domain, probes.get("rows", []), generic)
    observations = list((connectivity or {}).get("observations", []))
    for ob in observations:
        kg.add_call(
            domain=ob["domain"],
            platform=ob["platform"],
            tool=ob["tool"],
            args=ob.get("args") or {},
            records=ob.get("records") or [],
            call_digest=ob.get("call_digest") or "",
            ok=True,
            origin="path",
        )
    fingerprint = inventories.get(domain, {}).get("fingerprint")
    value = kg.to_value(fingerprint)
    frame = triples_frame(value)
    types = counts(e["type"] for e in value["entities"])
    preds = counts(t["predicate"] for t in value["triples"])
    sample = sorted(value["entities"], key=lambda e: -e["count"])[:15]
    meta = {
        "entities": len(value["entities"]),
        "triples": len(value["triples"]),
        "entity_types": {t: types.get(t, 0) for t in ENTITY_TYPES},
        "predicates": {p: preds.get(p, 0) for p in PREDICATES},
        "calls_observed": len(kg.calls_seen),
        "path_observations": len(observations),
        "orphan_triples": int((~frame["subject_exists"] | ~frame["object_exists"]).sum()) if len(frame) else 0,
        "entity_types_plot": bar_plot({k: v for k, v in types.items() if v}, title="entities by type"),
        "preview": md_table(
            [
                {"type": e["type"], "value": e["value"], "count": e["count"], "fields": ", ".join(e["fields"][:3])}
                for e in sample
            ]
        ),
    }
    return value, meta
