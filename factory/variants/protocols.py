"""Cross-call protocols (Table 1): one native action becomes a sequence of dependent calls, a later call
consuming what an earlier one returned.

- ``transaction``: ``begin_transaction(operation)`` returns a transaction id, ``set_argument(transaction_id,
  name, value)`` writes one argument per call, ``commit_transaction(transaction_id)`` executes; nothing
  runs before the commit. For every function or a subset (every second function by name: a mixed
  catalog). Composed on reference resolution, the written values are handles.
- ``reference resolution``: one argument of each tool (its first required semantic argument) is
  replaced by a handle; ``resolve_reference(argument, value)`` turns the user's value into one.
- ``schema discovery``: the catalog shows only ``list_methods(service)`` and an untyped ``invoke(method,
  arguments)``; a method may be invoked only after its service was listed, with the names given there.

Handles and transaction ids are numbered per session, so replays are deterministic.
"""

from collections.abc import Sequence
from typing import Any, Literal

from factory.variants.core import (
    Call,
    Catalog,
    CheckedSession,
    Execute,
    NotApplicable,
    Outcome,
    Reject,
    Reply,
    ToolDef,
    Variant,
    VariantError,
    object_schema,
    ref,
    slug,
    unique_name,
    with_tools,
)

BEGIN, WRITE, COMMIT = "begin_transaction", "set_argument", "commit_transaction"
RESOLVE = "resolve_reference"
LIST, INVOKE = "list_methods", "invoke"
HANDLE_SUFFIX = "_handle"
PROTOCOL_CLASSES = ("transaction", "reference", "discovery")  # classes of the tools protocols add


def _check_free(catalog: Catalog, names: Sequence[str]) -> None:
    clash = sorted(set(names) & set(catalog.names))
    if clash:
        raise VariantError(f"catalog {catalog.domain!r} already has tool(s) {', '.join(clash)}")


# --------------------------------------------------------------------------- transaction


class _TransactionSession:
    def __init__(self, schema: Catalog, members: dict[str, ToolDef]) -> None:
        self.checked = CheckedSession(schema)
        self.members = members
        self.open: dict[str, dict[str, Any]] = {}
        self.n = 0

    def handle(self, call: Call) -> Outcome:
        out = self.checked.handle(call)
        if not isinstance(out, Execute) or call.name not in (BEGIN, WRITE, COMMIT):
            return out
        a = call.arguments
        if call.name == BEGIN:
            self.n += 1
            tid = f"txn_{self.n}"
            self.open[tid] = {"operation": a["operation"], "arguments": {}}
            return Reply({"transaction_id": tid, "status": "open", "operation": a["operation"]})
        tid = a["transaction_id"]
        txn = self.open.get(tid)
        if txn is None:
            return Reject(
                f"{call.name}: no open transaction {tid!r} (begin one, and commit each only once)", "protocol"
            )
        member = self.members[txn["operation"]]
        if call.name == WRITE:
            if a["name"] not in member.properties:
                return Reject(f"{WRITE}: {txn['operation']} has no argument {a['name']!r}", "protocol")
            txn["arguments"][a["name"]] = a.get("value")
            return Reply({"transaction_id": tid, "written": a["name"]})
        problems = member.problems(txn["arguments"])
        if problems:
            return Reject(f"{COMMIT} {tid}: " + "; ".join(problems), "protocol")
        del self.open[tid]
        return Execute(Call(txn["operation"], dict(txn["arguments"]), call.label, call.step))


def transaction(catalog: Catalog, scope: Literal["all", "subset"] = "all", *, vid: str | None = None) -> Variant:
    """Every function (or every second one by name) through begin → set one argument per call → commit."""
    names = sorted(t.name for t in catalog.tools if t.cls not in PROTOCOL_CLASSES)
    chosen = names if scope == "all" else names[1::2] if scope == "subset" else None
    if chosen is None:
        raise VariantError(f"transaction: scope must be 'all' or 'subset', got {scope!r}")
    if not chosen:
        raise NotApplicable(f"transaction {scope}: no function of {catalog.domain!r} to wrap")
    _check_free(catalog, [BEGIN, WRITE, COMMIT])
    members = {n: catalog.tool(n) for n in chosen}
    listing = "; ".join(f"{n}: {members[n].description}" for n in chosen)
    protocol = [
        ToolDef(
            BEGIN,
            f"Opens a transaction for one operation and returns its transaction_id. Operations: {listing}",
            object_schema({"operation": {"type": "string", "enum": chosen}}, ["operation"]),
            "transaction",
        ),
        ToolDef(
            WRITE,
            "Writes one argument of the transaction's operation.",
            object_schema(
                {
                    "transaction_id": {"type": "string"},
                    "name": {"type": "string", "description": "The argument's name."},
                    "value": {"description": "The argument's value."},
                },
                ["transaction_id", "name", "value"],
            ),
            "transaction",
        ),
        ToolDef(
            COMMIT,
            "Runs the transaction's operation with the written arguments and returns its result.",
            object_schema({"transaction_id": {"type": "string"}}, ["transaction_id"]),
            "transaction",
        ),
    ]
    schema = with_tools(catalog, [t for t in catalog.tools if t.name not in members] + protocol)

    def encode(trace: Sequence[Call]) -> list[Call]:
        out: list[Call] = []
        for c in trace:
            if c.name not in members:
                out.append(c)
                continue
            opened = f"{c.label}.begin"
            out.append(Call(BEGIN, {"operation": c.name}, opened, c.step))
            tid = ref(opened, "transaction_id")
            out += [
                Call(WRITE, {"transaction_id": tid, "name": k, "value": v}, "", c.step) for k, v in c.arguments.items()
            ]
            out.append(Call(COMMIT, {"transaction_id": tid}, c.label, c.step))
        return out

    return Variant(
        id=vid or f"transaction_{scope}",
        operator="transaction",
        method=scope,
        schema=schema,
        base=catalog,
        encoder=encode,
        decoder=lambda: _TransactionSession(schema, members),
        instruction=f"Run an operation by calling {BEGIN}, then {WRITE} once per argument with the returned "
        f"transaction_id, then {COMMIT}.",
    )


# --------------------------------------------------------------------------- reference resolution


def resolved_argument(t: ToolDef) -> str | None:
    """The argument reference resolution replaces: the first required semantic string or integer."""
    for p in t.required:
        ty = (t.properties.get(p) or {}).get("type")
        if p not in t.generic and ty in ("string", "integer", "number"):
            return p
    return None


class _ReferenceSession:
    def __init__(self, schema: Catalog, resolved: dict[str, str]) -> None:
        self.checked = CheckedSession(schema)
        self.resolved = resolved
        self.handles: dict[str, tuple[str, Any]] = {}

    def handle(self, call: Call) -> Outcome:
        out = self.checked.handle(call)
        if not isinstance(out, Execute):
            return out
        a = call.arguments
        if call.name == RESOLVE:
            h = f"ref_{len(self.handles) + 1}"
            self.handles[h] = (a["argument"], a["value"])
            return Reply({"handle": h, "argument": a["argument"]})
        p = self.resolved.get(call.name)
        if p is None:
            return out
        h = a[p + HANDLE_SUFFIX]
        got = self.handles.get(h)
        if got is None:
            return Reject(f"{call.name}: unknown handle {h!r}; get one from {RESOLVE}", "protocol")
        if got[0] != p:
            return Reject(f"{call.name}: handle {h!r} resolves {got[0]!r}, not {p!r}", "protocol")
        args = {k: v for k, v in a.items() if k != p + HANDLE_SUFFIX}
        args[p] = got[1]
        return Execute(Call(call.name, args, call.label, call.step))


def reference_resolution(catalog: Catalog, *, vid: str | None = None) -> Variant:
    """Each tool's first required semantic argument is passed as a handle from `resolve_reference`."""
    _check_free(catalog, [RESOLVE])
    resolved: dict[str, str] = {}
    tools = []
    for t in catalog.tools:
        p = resolved_argument(t)
        if p is None or p + HANDLE_SUFFIX in t.properties:
            tools.append(t)
            continue
        props: dict[str, Any] = {}
        for k, s in t.properties.items():
            if k == p:
                props[p + HANDLE_SUFFIX] = {
                    "type": "string",
                    "description": f"A handle for {p} from {RESOLVE}(argument='{p}', value=...).",
                }
            else:
                props[k] = s
        req = [p + HANDLE_SUFFIX if r == p else r for r in t.required]
        tools.append(ToolDef(t.name, t.description, object_schema(props, req), t.cls, t.generic))
        resolved[t.name] = p
    if not resolved:
        raise NotApplicable(f"reference resolution: no tool of {catalog.domain!r} has an argument to resolve")
    kinds = sorted(set(resolved.values()))
    tools.append(
        ToolDef(
            RESOLVE,
            "Turns a value the user gave into a handle that tools take in place of the value.",
            object_schema(
                {
                    "argument": {"type": "string", "enum": kinds, "description": "Which argument the value is for."},
                    "value": {"description": "The value as the user gave it."},
                },
                ["argument", "value"],
            ),
            "reference",
        )
    )
    schema = with_tools(catalog, tools)

    def encode(trace: Sequence[Call]) -> list[Call]:
        out: list[Call] = []
        for c in trace:
            p = resolved.get(c.name)
            if p is None or p not in c.arguments:
                out.append(c)
                continue
            got = f"{c.label}.ref"
            out.append(Call(RESOLVE, {"argument": p, "value": c.arguments[p]}, got, c.step))
            args = {
                (p + HANDLE_SUFFIX if k == p else k): (ref(got, "handle") if k == p else v)
                for k, v in c.arguments.items()
            }
            out.append(Call(c.name, args, c.label, c.step))
        return out

    return Variant(
        id=vid or "reference_resolution",
        operator="reference",
        method="resolver",
        schema=schema,
        base=catalog,
        encoder=encode,
        decoder=lambda: _ReferenceSession(schema, resolved),
        instruction=f"Arguments ending in {HANDLE_SUFFIX} take a handle: get it first from {RESOLVE}.",
    )


# --------------------------------------------------------------------------- schema discovery


class _DiscoverySession:
    def __init__(self, schema: Catalog, base: Catalog, services: dict[str, str]) -> None:
        self.checked = CheckedSession(schema)
        self.base = base
        self.services = services  # service slug → class
        self.listed: set[str] = set()

    def handle(self, call: Call) -> Outcome:
        out = self.checked.handle(call)
        if not isinstance(out, Execute):
            return out
        a = call.arguments
        if call.name == LIST:
            cls = self.services[a["service"]]
            self.listed.add(cls)
            return Reply(
                {
                    "service": a["service"],
                    "methods": [
                        {"name": t.name, "description": t.description, "parameters": t.parameters}
                        for t in self.base.tools
                        if (t.cls or self.base.domain) == cls
                    ],
                }
            )
        tool = self.base.get(a["method"])
        if tool is None:
            return Reject(f"{INVOKE}: unknown method {a['method']!r}", "routing")
        if (tool.cls or self.base.domain) not in self.listed:
            return Reject(f"{INVOKE}: list the methods of its service with {LIST} first", "protocol")
        args = a.get("arguments") or {}
        if not isinstance(args, dict):
            return Reject(f"{INVOKE}: arguments must be an object", "schema")
        return Execute(Call(tool.name, dict(args), call.label, call.step))


def schema_discovery(catalog: Catalog, *, vid: str | None = None) -> Variant:
    """Only `list_methods(service)` and an untyped `invoke(method, arguments)` are shown up front."""
    taken: set[str] = set()
    services: dict[str, str] = {}
    for cls in sorted({t.cls or catalog.domain for t in catalog.tools}):
        services[unique_name(slug(cls), taken)] = cls
    service_of = {c: s for s, c in services.items()}
    schema = with_tools(
        catalog,
        [
            ToolDef(
                LIST,
                "Lists a service's methods with their argument names and types.",
                object_schema({"service": {"type": "string", "enum": sorted(services)}}, ["service"]),
                "discovery",
            ),
            ToolDef(
                INVOKE,
                "Calls a method listed by list_methods, with its arguments by the names given there.",
                object_schema(
                    {
                        "method": {"type": "string", "description": "A method name from list_methods."},
                        "arguments": {"type": "object", "additionalProperties": True},
                    },
                    ["method"],
                ),
                "discovery",
            ),
        ],
    )

    def encode(trace: Sequence[Call]) -> list[Call]:
        out: list[Call] = []
        listed: set[str] = set()
        for c in trace:
            t = catalog.get(c.name)
            if t is None:
                raise VariantError(f"schema discovery: {c.name!r} is not a method of {catalog.domain!r}")
            cls = t.cls or catalog.domain
            if cls not in listed:
                listed.add(cls)
                out.append(Call(LIST, {"service": service_of[cls]}, f"{c.label}.list", c.step))
            out.append(Call(INVOKE, {"method": c.name, "arguments": dict(c.arguments)}, c.label, c.step))
        return out

    return Variant(
        id=vid or "schema_discovery",
        operator="discovery",
        method="list_invoke",
        schema=schema,
        base=catalog,
        encoder=encode,
        decoder=lambda: _DiscoverySession(schema, catalog, services),
        instruction=f"Call {LIST} for a service first, then {INVOKE} a listed method with exactly the argument "
        "names it gave.",
    )
