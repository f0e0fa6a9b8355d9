"""The shared vocabulary of schema variants (Action-Space Shaping, §3): catalogs, calls, decoding sessions.

A *catalog* is the tool schema an agent sees (`ToolDef`s: name, description, JSON-Schema parameters,
the class they belong to). A *call* is one tool call on a catalog. An operator turns a catalog S into
a variant catalog S' and gives two functions:

- the encoder maps a trace of calls on S to a trace on S' (one call may become several: protocol
  steps), and
- the decoder is a factory of *sessions*; a session holds the protocol state of one episode (open
  transactions, resolved handles, discovered classes) and maps each call on S' to an `Outcome`:
  `Execute(call on S)`, `Reply(payload)` (a protocol step the adapter answers itself) or
  `Reject(reason)`.

Later calls may consume what an earlier protocol step returned: the encoder writes such a value as a
reference ``{"$ref": <label of the earlier call>, "field": <reply field>}``, which the trace driver
(`factory.variants.adapter.run_trace`) substitutes with the real reply before decoding.

Everything here is pure: no executor, no Dagster.
"""

import copy
import json
import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import jsonschema

REF = "$ref"


class VariantError(ValueError):
    """An operator cannot build its variant as asked (bad method, missing embedder, name clash)."""


class NotApplicable(VariantError):
    """The operator has nothing to change on this catalog (e.g. no enumerable argument to split on)."""


@dataclass(frozen=True)
class ToolDef:
    """One tool of a catalog as an agent sees it."""

    name: str
    description: str
    parameters: dict[str, Any]
    cls: str = ""  # the tool's class (its platform on the demo): class dispatch and namespaces group by it
    generic: tuple[str, ...] = ()  # parameters without task meaning (paging): never split on or resolved
    text: str = ""  # what the embedder reads (semantic grouping); "" : name, description and argument names

    def definition(self) -> dict[str, Any]:
        """The OpenAI tool definition."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    @property
    def properties(self) -> dict[str, Any]:
        return dict(self.parameters.get("properties") or {})

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required") or [])

    def problems(self, args: Mapping[str, Any]) -> list[str]:
        """Why `args` are not a valid call of this tool ([] when valid): unknown parameters, schema errors."""
        known = self.properties
        out = []
        if self.parameters.get("additionalProperties") is not True:  # True: an untyped object takes anything
            out = [f"{self.name}: unexpected argument {k!r}" for k in args if k not in known]
        validator = _validator(self.parameters)
        if validator is not None:
            for err in sorted(validator.iter_errors(dict(args)), key=lambda e: list(e.absolute_path)):
                where = ".".join(str(p) for p in err.absolute_path) or "(arguments)"
                out.append(f"{self.name}: {where}: {err.message}"[:240])
        return out


_VALIDATORS: dict[int, tuple[Any, Any]] = {}  # id(schema) → (schema kept alive, validator or None)


def _validator(schema: Mapping[str, Any]) -> Any:
    """A cached JSON-Schema validator (Draft 7 unless the schema names another; None for an unusable schema)."""
    hit = _VALIDATORS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    try:
        validator = cls(schema)
        next(iter(validator.iter_errors({})), None)  # an unusable schema raises here, not on every call
    except (jsonschema.SchemaError, jsonschema.exceptions.RefResolutionError, TypeError, KeyError):
        validator = None
    _VALIDATORS[id(schema)] = (schema, validator)
    return validator


@dataclass(frozen=True)
class Catalog:
    """A tool schema: the tools of one domain in one form."""

    domain: str
    tools: tuple[ToolDef, ...]

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise VariantError(f"catalog {self.domain!r} names a tool twice: {', '.join(dup)}")

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def get(self, name: str) -> ToolDef | None:
        return next((t for t in self.tools if t.name == name), None)

    def tool(self, name: str) -> ToolDef:
        t = self.get(name)
        if t is None:
            raise VariantError(f"catalog {self.domain!r} has no tool {name!r}")
        return t

    def definitions(self) -> list[dict[str, Any]]:
        return [t.definition() for t in self.tools]

    def fingerprint(self) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(self.definitions(), sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Call:
    """One tool call of a trace. `label` names it so that later calls can refer to its reply."""

    name: str
    arguments: dict[str, Any]
    label: str = ""
    step: int = 0

    def key(self) -> str:
        return canonical(self.name, self.arguments)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments, "label": self.label, "step": self.step}


def canonical(name: str, args: Mapping[str, Any]) -> str:
    return json.dumps([name, args], sort_keys=True, ensure_ascii=False, default=str)


def ref(label: str, field_name: str) -> dict[str, str]:
    """A value the trace driver fills with field `field_name` of the reply to the call labelled `label`."""
    return {REF: label, "field": field_name}


def substitute(value: Any, replies: Mapping[str, Mapping[str, Any]]) -> Any:
    """`value` with every reference replaced by the reply field it names (KeyError when not there yet)."""
    if isinstance(value, dict):
        if set(value) == {REF, "field"}:
            reply = replies.get(value[REF])
            if reply is None or value["field"] not in reply:
                raise KeyError(f"no reply field {value['field']!r} of call {value[REF]!r}")
            return reply[value["field"]]
        return {k: substitute(v, replies) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, replies) for v in value]
    return value


# --------------------------------------------------------------------------- decoding


@dataclass(frozen=True)
class Execute:
    """The call decodes to this call on the layer below (on the native layer: a native action)."""

    call: Call


@dataclass(frozen=True)
class Reply:
    """A protocol step the adapter answers itself (no native action)."""

    payload: dict[str, Any]


@dataclass(frozen=True)
class Reject:
    """An off-schema or protocol-breaking call; `kind` is one of REJECT_KINDS."""

    reason: str
    kind: str = "schema"


#: schema: not a valid call of the presented schema; protocol: breaks a protocol (unknown handle or
#: transaction, a method used before it was listed); routing: a tool or operation that does not exist.
REJECT_KINDS = ("schema", "protocol", "routing")

Outcome = Execute | Reply | Reject


class Session(Protocol):
    def handle(self, call: Call) -> Outcome: ...


class CheckedSession:
    """A stateless session: the call must be a valid call of `schema`; `decode` maps it one level down."""

    def __init__(self, schema: Catalog, decode: Callable[[ToolDef, Call], Outcome] | None = None) -> None:
        self.schema = schema
        self._decode = decode

    def handle(self, call: Call) -> Outcome:
        tool = self.schema.get(call.name)
        if tool is None:
            return Reject(f"there is no tool {call.name!r} in this schema", "routing")
        problems = tool.problems(call.arguments)
        if problems:
            return Reject("; ".join(problems), "schema")
        return self._decode(tool, call) if self._decode else Execute(call)


class ChainSession:
    """Sessions of stacked operators, outermost first: an Execute goes one layer down."""

    def __init__(self, sessions: Sequence[Session]) -> None:
        self.sessions = list(sessions)

    def handle(self, call: Call) -> Outcome:
        out: Outcome = Execute(call)
        for s in self.sessions:
            assert isinstance(out, Execute)
            out = s.handle(out.call)
            if not isinstance(out, Execute):
                return out
        return out


Encoder = Callable[[Sequence[Call]], list[Call]]


@dataclass(frozen=True)
class Variant:
    """A schema variant: the catalog an agent sees, how native traces map onto it and back.

    `base` is the catalog the operator was applied to (the native catalog, or the variant it was
    composed on); `encoder` maps traces on `base` to traces on `schema`; `decoder()` opens a fresh
    decoding session (protocol state) mapping calls on `schema` to calls on `base`.
    """

    id: str
    operator: str
    method: str
    schema: Catalog
    base: Catalog
    encoder: Encoder
    decoder: Callable[[], Session]
    instruction: str = ""
    parts: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "operator": self.operator,
            "method": self.method,
            "parts": list(self.parts or (self.id,)),
            "tools": len(self.schema.tools),
            "base_tools": len(self.base.tools),
            "instruction": self.instruction,
            "fingerprint": self.schema.fingerprint(),
        }


def compose(inner: Variant, outer: Variant, vid: str | None = None) -> Variant:
    """`outer` (built on `inner.schema`) stacked on `inner`: encode inner then outer, decode outer then inner."""
    if outer.base != inner.schema:
        raise VariantError(f"cannot compose {outer.id!r} on {inner.id!r}: it was not built on that schema")

    def encode(trace: Sequence[Call]) -> list[Call]:
        return outer.encoder(inner.encoder(trace))

    def decoder() -> Session:
        return ChainSession([outer.decoder(), inner.decoder()])

    parts = (*(inner.parts or (inner.id,)), *(outer.parts or (outer.id,)))
    return Variant(
        id=vid or "+".join(parts),
        operator="composed",
        method="+".join(parts),
        schema=outer.schema,
        base=inner.base,
        encoder=encode,
        decoder=decoder,
        instruction=" ".join(x for x in (inner.instruction, outer.instruction) if x),
        parts=parts,
    )


def identity(catalog: Catalog) -> Variant:
    """The native schema as a variant (id 'native'): calls decode to themselves."""
    return Variant(
        id="native",
        operator="native",
        method="native",
        schema=catalog,
        base=catalog,
        encoder=list,
        decoder=lambda: CheckedSession(catalog),
        parts=("native",),
    )


# --------------------------------------------------------------------------- helpers for operators


def slug(text: Any, limit: int = 40) -> str:
    """A tool-name-safe fragment: [a-z0-9_], at most `limit` characters."""
    s = re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")
    return (s or "x")[:limit]


def tool_name(*parts: str, limit: int = 64) -> str:
    """A function name from fragments; names over `limit` keep a hash suffix so they stay unique."""
    import hashlib

    name = "__".join(p for p in parts if p)
    if len(name) <= limit:
        return name
    h = hashlib.sha256(name.encode()).hexdigest()[:8]
    return name[: limit - 9] + "_" + h


def object_schema(props: Mapping[str, Any], required: Iterable[str] = ()) -> dict[str, Any]:
    req = [r for r in required if r in props]
    out: dict[str, Any] = {"type": "object", "properties": copy.deepcopy(dict(props))}
    if req:
        out["required"] = req
    return out


def encode_calls(trace: Sequence[Call], affected: Container[str], one: Callable[[Call], Call]) -> list[Call]:
    """An operator's encoder that rewrites each call of an `affected` tool on its own (`one`) and passes the
    other calls through unchanged."""
    return [one(c) if c.name in affected else c for c in trace]


def with_tools(catalog: Catalog, tools: Iterable[ToolDef]) -> Catalog:
    return replace(catalog, tools=tuple(tools))


def unique_name(name: str, taken: set[str]) -> str:
    out, i = name, 2
    while out in taken:
        out = f"{name}_{i}"
        i += 1
    taken.add(out)
    return out


def is_ref(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {REF, "field"}
