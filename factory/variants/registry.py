"""The registry of named schema variants: every operator with its methods, and composed variants.

`build_variants(catalog, embed=...)` returns the variants that apply to a catalog (an operator with
nothing to change there, e.g. fully split on a domain without enumerable arguments, is left out with
its reason) plus the native schema itself as ``native``. Ids are stable: exports carry them, so a user
can train on a mixture and hold variants out.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from factory.variants import merge as m
from factory.variants import protocols as p
from factory.variants import representation as r
from factory.variants import split as s
from factory.variants.core import Catalog, NotApplicable, Variant, compose, identity

Build = Callable[[Catalog, Any], Variant]


@dataclass(frozen=True)
class Recipe:
    id: str
    family: str  # partitioning | representation | protocol | composed
    build: Build
    needs_embedder: bool = False


def _composed(vid: str, *steps: Build) -> Build:
    def build(cat: Catalog, embed: Any) -> Variant:
        v = steps[0](cat, embed)
        for step in steps[1:]:
            v = compose(v, step(v.schema, embed))
        return replace(v, id=vid)

    return build


RECIPES: list[Recipe] = [
    # tool-set partitioning: merge (grouping × structure) and split
    Recipe("merge_full_flat", "partitioning", lambda c, e: m.merge(c, "full", "flat", vid="merge_full_flat")),
    Recipe("merge_full_nested", "partitioning", lambda c, e: m.merge(c, "full", "nested", vid="merge_full_nested")),
    Recipe("merge_full_union", "partitioning", lambda c, e: m.merge(c, "full", "union", vid="merge_full_union")),
    Recipe("merge_class_flat", "partitioning", lambda c, e: m.merge(c, "class", "flat", vid="merge_class_flat")),
    Recipe("merge_class_nested", "partitioning", lambda c, e: m.merge(c, "class", "nested", vid="merge_class_nested")),
    Recipe(
        "merge_semantic_g2",
        "partitioning",
        lambda c, e: m.merge(c, "semantic", "flat", group_size=2, embed=e, vid="merge_semantic_g2"),
        needs_embedder=True,
    ),
    Recipe(
        "merge_semantic_g4",
        "partitioning",
        lambda c, e: m.merge(c, "semantic", "flat", group_size=4, embed=e, vid="merge_semantic_g4"),
        needs_embedder=True,
    ),
    Recipe(
        "merge_anti_semantic_g4",
        "partitioning",
        lambda c, e: m.merge(c, "anti_semantic", "flat", group_size=4, embed=e, vid="merge_anti_semantic_g4"),
        needs_embedder=True,
    ),
    Recipe(
        "merge_random_g2",
        "partitioning",
        lambda c, e: m.merge(c, "random", "flat", group_size=2, vid="merge_random_g2"),
    ),
    Recipe(
        "merge_random_g4",
        "partitioning",
        lambda c, e: m.merge(c, "random", "flat", group_size=4, vid="merge_random_g4"),
    ),
    Recipe(
        "merge_partial_25",
        "partitioning",
        lambda c, e: m.merge(c, "partial", "flat", fraction=0.25, vid="merge_partial_25"),
    ),
    Recipe(
        "merge_partial_50",
        "partitioning",
        lambda c, e: m.merge(c, "partial", "flat", fraction=0.5, vid="merge_partial_50"),
    ),
    Recipe(
        "merge_partial_75",
        "partitioning",
        lambda c, e: m.merge(c, "partial", "flat", fraction=0.75, vid="merge_partial_75"),
    ),
    Recipe("split_full", "partitioning", lambda c, e: s.fully_split(c)),
    Recipe("split_interval_1", "partitioning", lambda c, e: s.interval_split(c, 1)),
    Recipe("split_interval_2", "partitioning", lambda c, e: s.interval_split(c, 2)),
    Recipe("split_interval_4", "partitioning", lambda c, e: s.interval_split(c, 4)),
    # per-tool representation
    Recipe("nest_all", "representation", lambda c, e: r.nest(c, "all")),
    Recipe("nest_optional", "representation", lambda c, e: r.nest(c, "optional")),
    Recipe("rename_namespaced", "representation", lambda c, e: r.rename(c, "namespaced")),
    Recipe("rename_opaque", "representation", lambda c, e: r.rename(c, "opaque")),
    Recipe("strip_descriptions", "representation", lambda c, e: r.strip_descriptions(c)),
    Recipe("reorder_arguments", "representation", lambda c, e: r.reorder(c)),
    # cross-call protocols
    Recipe("transaction_all", "protocol", lambda c, e: p.transaction(c, "all")),
    Recipe("transaction_subset", "protocol", lambda c, e: p.transaction(c, "subset")),
    Recipe("reference_resolution", "protocol", lambda c, e: p.reference_resolution(c)),
    Recipe("schema_discovery", "protocol", lambda c, e: p.schema_discovery(c)),
    # composed variants
    Recipe(
        "transaction_over_references",
        "composed",
        _composed(
            "transaction_over_references", lambda c, e: p.reference_resolution(c), lambda c, e: p.transaction(c, "all")
        ),
    ),
    Recipe(
        "opaque_stripped",
        "composed",
        _composed("opaque_stripped", lambda c, e: r.rename(c, "opaque"), lambda c, e: r.strip_descriptions(c)),
    ),
    Recipe(
        "nest_merge_class",
        "composed",
        _composed("nest_merge_class", lambda c, e: r.nest(c, "all"), lambda c, e: m.merge(c, "class", "flat")),
    ),
    Recipe(
        "split_interval_opaque",
        "composed",
        _composed("split_interval_opaque", lambda c, e: s.interval_split(c, 1), lambda c, e: r.rename(c, "opaque")),
    ),
    Recipe(
        "reference_reordered_stripped",
        "composed",
        _composed(
            "reference_reordered_stripped",
            lambda c, e: p.reference_resolution(c),
            lambda c, e: r.reorder(c),
            lambda c, e: r.strip_descriptions(c),
        ),
    ),
]

VARIANT_IDS = [rec.id for rec in RECIPES]


def recipe(vid: str) -> Recipe:
    for rec in RECIPES:
        if rec.id == vid:
            return rec
    raise KeyError(f"unknown variant {vid!r}; known: {', '.join(VARIANT_IDS)}")


def build_variants(
    catalog: Catalog, embed: Any = None, only: list[str] | None = None
) -> tuple[list[Variant], dict[str, str]]:
    """(variants that apply, native first; {variant id: why it was left out})."""
    out, skipped = [identity(catalog)], {}
    for rec in RECIPES:
        if only is not None and rec.id not in only:
            continue
        if rec.needs_embedder and embed is None:
            skipped[rec.id] = "no embedder configured"
            continue
        try:
            v = rec.build(catalog, embed)
        except NotApplicable as e:
            skipped[rec.id] = str(e)
            continue
        out.append(v)
    return out, skipped
