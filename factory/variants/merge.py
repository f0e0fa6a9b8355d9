"""Aggregation: merge (Table 1, App. C.1) — several native functions become one tool that selects the
function through its arguments.

Which functions go together (the grouping method):
- ``full``: every function of the domain in one merged tool;
- ``class``: class dispatch, one merged tool per class (platform);
- ``semantic``: groups of about `group_size` functions by embedding similarity (the project embedder);
- ``random``: groups of the same sizes with seeded random membership;
- ``anti_semantic``: groups of the same sizes that deliberately mix unrelated functions;
- ``partial``: only a fraction of the domain is merged into one tool (the merge side of the
  granularity ladder), the rest stays native.

How the merged tool takes its arguments (the structure):
- ``flat``: an ``operation`` enum plus one optional field per member argument, prefixed by the member
  (``search_artists__name``); fields of another member are rejected;
- ``nested``: the ``operation`` enum plus one ``arguments`` object whose properties are the union of the
  members' arguments (the JSON-RPC / MCP shape);
- ``union``: no operation field, one object per member; exactly one of them is filled (no JSON-Schema
  ``oneOf``: tool-call parsers do not handle it reliably).
"""

import math
import random
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from factory.variants.core import (
    Call,
    Catalog,
    CheckedSession,
    Execute,
    NotApplicable,
    Outcome,
    Reject,
    ToolDef,
    Variant,
    VariantError,
    object_schema,
    slug,
    unique_name,
    with_tools,
)

Grouping = Literal["full", "class", "semantic", "random", "anti_semantic", "partial"]
Structure = Literal["flat", "nested", "union"]
Embed = Callable[[list[str]], Any]
SEP = "__"


def tool_text(t: ToolDef) -> str:
    """What the embedder reads of a tool: its signature text, else its name, description and argument names."""
    return t.text or f"{t.name.replace('_', ' ')}: {t.description} ({', '.join(t.properties)})"


def _similarity(tools: Sequence[ToolDef], embed: Embed) -> np.ndarray:
    vecs = np.asarray(embed([tool_text(t) for t in tools]), dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.where(norms == 0, 1.0, norms)
    return vecs @ vecs.T


def _sizes(n: int, group_size: int) -> list[int]:
    k = max(1, math.ceil(n / group_size))
    base, extra = divmod(n, k)
    return [base + (1 if i < extra else 0) for i in range(k)]


def semantic_groups(tools: Sequence[ToolDef], group_size: int, embed: Embed) -> list[list[str]]:
    """Greedy clusters of about `group_size`: each group starts from the first unassigned tool (name
    order) and takes its most similar unassigned tools."""
    sim = _similarity(tools, embed)
    left = list(range(len(tools)))
    groups: list[list[str]] = []
    for size in _sizes(len(tools), group_size):
        seed = left.pop(0)
        members = sorted(left, key=lambda j: (-sim[seed, j], j))[: size - 1]
        left = [j for j in left if j not in members]
        groups.append([tools[i].name for i in [seed, *members]])
    return groups


def anti_semantic_groups(tools: Sequence[ToolDef], group_size: int, embed: Embed) -> list[list[str]]:
    """Groups of the semantic sizes whose members come from different semantic clusters (dealt round robin)."""
    clusters = semantic_groups(tools, group_size, embed)
    order = [name for c in clusters for name in c]
    sizes = _sizes(len(tools), group_size)
    groups: list[list[str]] = [[] for _ in sizes]
    i = 0
    for name in order:
        while len(groups[i % len(groups)]) >= sizes[i % len(groups)]:
            i += 1
        groups[i % len(groups)].append(name)
        i += 1
    return groups


def random_groups(tools: Sequence[ToolDef], group_size: int, seed: int) -> list[list[str]]:
    names = [t.name for t in tools]
    random.Random(seed).shuffle(names)
    out, at = [], 0
    for size in _sizes(len(names), group_size):
        out.append(names[at : at + size])
        at += size
    return out


def groups_for(
    catalog: Catalog,
    grouping: Grouping,
    *,
    group_size: int = 4,
    fraction: float = 0.5,
    seed: int = 0,
    embed: Embed | None = None,
) -> list[list[str]]:
    tools = sorted(catalog.tools, key=lambda t: t.name)
    if grouping == "full":
        return [[t.name for t in tools]]
    if grouping == "class":
        by: dict[str, list[str]] = {}
        for t in tools:
            by.setdefault(t.cls or catalog.domain, []).append(t.name)
        return [by[c] for c in sorted(by)]
    if grouping == "partial":
        if not 0 < fraction < 1:
            raise VariantError(f"partial merge: fraction must be in (0, 1), got {fraction}")
        m = max(2, round(fraction * len(tools)))
        return [[t.name for t in tools[:m]]]
    if group_size < 2:
        raise VariantError(f"merge {grouping}: group_size must be at least 2, got {group_size}")
    if grouping == "random":
        return random_groups(tools, group_size, seed)
    if embed is None:
        raise VariantError(f"merge {grouping}: needs an embedder (factory.embed.Embedder.encode)")
    if grouping == "semantic":
        return semantic_groups(tools, group_size, embed)
    if grouping == "anti_semantic":
        return anti_semantic_groups(tools, group_size, embed)
    raise VariantError(f"unknown merge grouping {grouping!r}")


# --------------------------------------------------------------------------- one merged tool


class _Merged:
    """One merged tool: its definition and how its calls map to member calls."""

    def __init__(self, name: str, members: list[ToolDef], structure: Structure) -> None:
        self.name, self.members, self.structure = name, {m.name: m for m in members}, structure
        listing = "; ".join(f"{m.name}: {m.description}" for m in members)
        ops = [m.name for m in members]
        if structure == "flat":
            props: dict[str, Any] = {
                "operation": {"type": "string", "enum": ops, "description": "The operation to run."}
            }
            for m in members:
                for p, sch in m.properties.items():
                    props[f"{m.name}{SEP}{p}"] = _described(sch, f"({m.name}) ")
            params = object_schema(props, ["operation"])
            how = f"Set `operation` and fill only the fields prefixed `<operation>{SEP}`."
        elif structure == "nested":
            union: dict[str, Any] = {}
            for m in members:
                for p, sch in m.properties.items():
                    union[p] = sch if p not in union or union[p] == sch else {"description": f"argument {p}"}
            params = object_schema(
                {
                    "operation": {"type": "string", "enum": ops, "description": "The operation to run."},
                    "arguments": {**object_schema(union), "description": "The operation's arguments."},
                },
                ["operation"],
            )
            how = "Set `operation` and put its arguments in `arguments`."
        elif structure == "union":
            params = object_schema({m.name: {**m.parameters, "description": m.description} for m in members})
            how = "Fill exactly one of the objects: the operation to run, with its arguments."
        else:
            raise VariantError(f"unknown merge structure {structure!r}")
        self.tool = ToolDef(
            name, f"Runs one of these operations. {how} Operations: {listing}", params, cls=members[0].cls
        )

    def encode(self, call: Call) -> Call:
        if self.structure == "flat":
            args = {"operation": call.name, **{f"{call.name}{SEP}{k}": v for k, v in call.arguments.items()}}
        elif self.structure == "nested":
            args = {"operation": call.name, "arguments": dict(call.arguments)}
        else:
            args = {call.name: dict(call.arguments)}
        return Call(self.name, args, call.label, call.step)

    def decode(self, tool: ToolDef, call: Call) -> Outcome:
        a = call.arguments
        if self.structure == "union":
            chosen = [k for k in a if a[k] is not None]
            if len(chosen) != 1:
                return Reject(f"{self.name}: fill exactly one operation object, got {len(chosen)}", "schema")
            op, args = chosen[0], a[chosen[0]]
            if not isinstance(args, dict):
                return Reject(f"{self.name}: {op} must be an object", "schema")
        else:
            op = a["operation"]
            if self.structure == "flat":
                wrong = [k for k in a if k != "operation" and not k.startswith(f"{op}{SEP}")]
                if wrong:
                    return Reject(f"{self.name}: {', '.join(wrong)} do not belong to operation {op!r}", "schema")
                args = {k[len(op) + len(SEP) :]: v for k, v in a.items() if k != "operation"}
            else:
                args = dict(a.get("arguments") or {})
        member = self.members.get(op)
        if member is None:
            return Reject(f"{self.name}: unknown operation {op!r}", "routing")
        problems = member.problems(args)
        if problems:
            return Reject("; ".join(problems), "schema")
        return Execute(Call(op, args, call.label, call.step))


def _described(schema: dict[str, Any], prefix: str) -> dict[str, Any]:
    out = dict(schema)
    out["description"] = prefix + str(schema.get("description") or "")
    return out


def merge(
    catalog: Catalog,
    grouping: Grouping = "full",
    structure: Structure = "flat",
    *,
    group_size: int = 4,
    fraction: float = 0.5,
    seed: int = 0,
    embed: Embed | None = None,
    vid: str | None = None,
) -> Variant:
    """Merge the catalog's functions by `grouping` into tools taking arguments in `structure`."""
    groups = [
        g for g in groups_for(catalog, grouping, group_size=group_size, fraction=fraction, seed=seed, embed=embed) if g
    ]
    if all(len(g) < 2 for g in groups):
        raise NotApplicable(f"merge {grouping}: no group has two functions on {catalog.domain!r}")
    taken = {t.name for t in catalog.tools}
    grouped = {n for g in groups for n in g}
    merged: list[_Merged] = []
    for i, g in enumerate(groups):
        members = [catalog.tool(n) for n in g]
        if grouping == "full":
            base = f"{slug(catalog.domain)}_tools"
        elif grouping == "class":
            base = f"{slug(members[0].cls or catalog.domain)}_tools"
        else:
            base = f"{slug(catalog.domain)}_group_{i + 1}"
        merged.append(_Merged(unique_name(base, taken), members, structure))
    by_member = {n: m for m in merged for n in m.members}
    tools = [t for t in catalog.tools if t.name not in grouped] + [m.tool for m in merged]
    schema = with_tools(catalog, tools)
    by_tool = {m.name: m for m in merged}

    def encode(trace: Sequence[Call]) -> list[Call]:
        return [by_member[c.name].encode(c) if c.name in by_member else c for c in trace]

    def decode(tool: ToolDef, call: Call) -> Outcome:
        m = by_tool.get(tool.name)
        return m.decode(tool, call) if m else Execute(call)

    method = f"{grouping}_{structure}" + (
        f"_g{group_size}" if grouping in ("semantic", "random", "anti_semantic") else ""
    )
    method += f"_{round(fraction * 100)}" if grouping == "partial" else ""
    sentence = {
        "flat": f"Choose the function with `operation` and fill only the fields prefixed with its name and `{SEP}`.",
        "nested": "Choose the function with `operation` and put its arguments inside `arguments`.",
        "union": "Fill exactly one argument object: the one named after the function you want.",
    }[structure]
    return Variant(
        id=vid or f"merge_{method}",
        operator="merge",
        method=method,
        schema=schema,
        base=catalog,
        encoder=encode,
        decoder=lambda: CheckedSession(schema, decode),
        instruction=f"Several functions share one tool here. {sentence}",
    )
