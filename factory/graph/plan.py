"""Bindings and source plans of an edge u→v (EDGE Eq. 1).

For every input parameter p of the target v the plan says where its value comes from:

- ``UPSTREAM``: the output field B_e(p) of u (a binding), optionally transformed;
- ``DEFAULT``: a generic parameter (paging, format) with a static value; the API key
  parameter is left to the executor, which injects the platform's key;
- ``CLARIFY``: candidate values D_e(p) (the proposal's default candidates, then real
  values from the knowledge graph).  Only required CLARIFY parameters are sent while
  probing an edge: optional filters would narrow the call and blame the binding for it.
"""

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from factory.io import dumps
from factory.tools.identifiers import uri_id
from factory.tools.spec import ToolSpec

UPSTREAM, DEFAULT, CLARIFY = "UPSTREAM", "DEFAULT", "CLARIFY"
TRANSFORMS = (
    "upper",
    "lower",
    "strip",
    "to_number",
    "to_string",
    "date:YYYYMMDD",
    "date:YYYY-MM-DD",
    "first_token",
    "wrap",
    "uri_id",
)
# `wrap`: the upstream record's value as a one-element list, for an array input whose items have the
# field's type (open_nodes(names: string[]) ← read_graph.name); a list value is sent as it is.
# `uri_id`: the id a URI ends with (get-resource-reference(resourceId) ← get-resource-links.uri,
# test://static/resource/12 → 12; `factory.tools.identifiers.uri_id`).


def edge_id(source: str, target: str, bindings: Sequence[Mapping[str, Any]]) -> str:
    """Content hash of (source tool id, target tool id, canonical bindings): the sha256 of
    `factory.io.dumps([source, target, canon])`, the JSON written directly when every part is a string."""
    canon = sorted((b["target_param"], b["source_field"], b.get("transform") or "") for b in bindings)
    if isinstance(source, str) and isinstance(target, str) and all(isinstance(x, str) for c in canon for x in c):
        q = json_string
        rows = ", ".join(f"[{q(p)}, {q(f)}, {q(t)}]" for p, f, t in canon)
        text = f"[{q(source)}, {q(target)}, [{rows}]]"
    else:
        text = dumps([source, target, canon])
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


#: a string as `factory.io.dumps` writes it (JSON, non-ASCII kept)
json_string: Callable[[str], str] = json.encoder.encode_basestring


def bindable_params(tool: ToolSpec) -> list[str]:
    """Input parameters an upstream field may fill: not generic, not the key."""
    return [p for p in tool.semantic_params() if p != tool.generic_params.key]


def validate_bindings(
    source: ToolSpec, target: ToolSpec, bindings: list[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Keep bindings whose field exists in the source's outputs and whose parameter is a bindable
    input of the target (one binding per parameter).  Returns (kept, reasons for the dropped)."""
    kept: list[dict[str, Any]] = []
    dropped: list[str] = []
    params = set(bindable_params(target))
    seen: set[str] = set()
    for b in bindings:
        p, f = b.get("target_param"), b.get("source_field")
        t = b.get("transform") or None
        if f not in source.output_fields:
            dropped.append(f"source field {f!r} is not an output of {source.name}")
        elif p not in params:
            why = "a generic/key input" if p in target.params else "not an input"
            dropped.append(f"target param {p!r} is {why} of {target.name}")
        elif p in seen:
            dropped.append(f"target param {p!r} bound twice")
        else:
            if t is not None and t not in TRANSFORMS:
                dropped.append(f"unknown transform {t!r} on {p} (kept without transform)")
                t = None
            seen.add(p)
            kept.append({"target_param": p, "source_field": f, "transform": t})
    return kept, dropped


def generic_default(tool: ToolSpec, param: str, schema: Mapping[str, Any]) -> Any | None:
    g = tool.generic_params
    if param == g.page:
        return 1
    if param == g.page_size:
        return int(min(10, schema.get("maximum", 10)))
    if param in g.format:
        vals = [schema.get("default"), *(schema.get("enum") or [])]
        vals = [v for v in vals if v is not None]
        return "json" if "json" in vals or not vals else vals[0]
    return None


def compile_plan(
    target: ToolSpec, bindings: Sequence[Mapping[str, Any]], candidates: Mapping[str, list[Any]]
) -> dict[str, dict[str, Any]]:
    """The source plan Π_e over every input parameter of `target` except its key."""
    return PlanCompiler(target).compile(bindings, candidates)


class PlanCompiler:
    """`compile_plan` for one target, its schema read once (the skeleton compiles many edges per target)."""

    def __init__(self, target: ToolSpec):
        key, generic = target.generic_params.key, target.generic_params.names()
        required = set(target.required_params)
        # (param, generic?, its DEFAULT value (None: left out), required?) in schema order
        self._slots: list[tuple[str, bool, Any, bool]] = [
            (p, p in generic, generic_default(target, p, schema) if p in generic else None, p in required)
            for p, schema in target.params.items()
            if p != key
        ]

    def compile(
        self, bindings: Sequence[Mapping[str, Any]], candidates: Mapping[str, list[Any]]
    ) -> dict[str, dict[str, Any]]:
        plan: dict[str, dict[str, Any]] = {}
        for p, kind, a, b in self.shape(bindings):
            if kind == UPSTREAM:
                plan[p] = {"kind": UPSTREAM, "field": a, "transform": b}
            elif kind == DEFAULT:
                plan[p] = {"kind": DEFAULT, "value": a}
            else:
                plan[p] = {"kind": CLARIFY, "candidates": list(candidates.get(p, [])), "required": a}
        return plan

    def shape(self, bindings: Sequence[Mapping[str, Any]]) -> "PlanShape":
        """Where each parameter's value comes from, in schema order: (param, UPSTREAM, field, transform),
        (param, DEFAULT, value, None) or (param, CLARIFY, required?, None); a generic parameter without a
        default is left out.  The same for every edge of this target with these bindings (the skeleton
        fills the CLARIFY candidates per edge)."""
        bound = {b["target_param"]: b for b in bindings}
        out: list[tuple[str, str, Any, Any]] = []
        for p, generic, default, required in self._slots:
            if p in bound:
                out.append((p, UPSTREAM, bound[p]["source_field"], bound[p].get("transform")))
            elif generic:
                if default is not None:
                    out.append((p, DEFAULT, default, None))
            else:
                out.append((p, CLARIFY, required, None))
        return tuple(out)


#: `PlanCompiler.shape`'s value
PlanShape = tuple[tuple[str, str, Any, Any], ...]


_DASH = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")


def apply_transform(value: Any, transform: str | None) -> Any:
    """Apply a binding's transform; unknown transforms and failures return the value unchanged."""
    if transform is None or value is None:
        return value
    if transform == "wrap":
        return list(value) if isinstance(value, list | tuple) else [value]
    if transform == "uri_id":
        tail = uri_id(value)
        return value if tail is None else tail
    s = str(value)
    try:
        if transform == "upper":
            return s.upper()
        if transform == "lower":
            return s.lower()
        if transform == "strip":
            return s.strip()
        if transform == "to_number":
            f = float(s)
            return int(f) if f.is_integer() else f
        if transform == "to_string":
            return str(int(value)) if isinstance(value, float) and value.is_integer() else s
        if transform == "first_token":
            return s.split()[0] if s.split() else s
        if transform == "date:YYYYMMDD" and (m := _DASH.match(s)):
            return "".join(m.groups())
        if transform == "date:YYYY-MM-DD" and (m := _COMPACT.match(s)):
            return "-".join(m.groups())
    except (TypeError, ValueError):
        return value
    return value


def fill_args(
    plan: Mapping[str, Mapping[str, Any]],
    record: Mapping[str, Any],
    *,
    variant: int = 0,
    include_optional: bool = False,
) -> dict[str, Any] | None:
    """Arguments of the target from one upstream record; None when a bound field is missing in it.
    The `variant`-th CLARIFY candidate is used (cycling)."""
    args: dict[str, Any] = {}
    for p, step in plan.items():
        kind = step["kind"]
        if kind == UPSTREAM:
            v = record.get(step["field"])
            if v is None or v == "":
                return None
            args[p] = apply_transform(v, step.get("transform"))
        elif kind == DEFAULT:
            args[p] = step["value"]
        elif kind == CLARIFY and (step.get("required") or include_optional):
            cands = step.get("candidates") or []
            if cands:
                args[p] = cands[variant % len(cands)]
    return args


def upstream_fields(plan: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return [s["field"] for s in plan.values() if s["kind"] == UPSTREAM]
