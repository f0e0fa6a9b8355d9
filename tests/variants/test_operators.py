"""Every operator and method: encode → decode is the identity on native actions (demo tasks and seeded
random traces), variant schemas are well-formed, off-schema and protocol-breaking calls are rejected."""

import asyncio
import random
import re
from typing import Any

import jsonschema

from factory.variants.actions import NativeAction, as_trace
from factory.variants.adapter import AdapterSession, run_trace
from factory.variants.core import Call, Catalog, Execute, Reject, Reply, Variant
from factory.variants.registry import RECIPES, build_variants
from factory.variants.validate import validate
from tests.variants.conftest import Demo, FakeWorld, bag_of_words

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
STRINGS = ["Accept", "zebra", "Émile", "강남구", "a", "M", "0012", "Ölfeld", "nirvana", "Tokyo Haneda"]


def _variants(demo: Demo) -> list[Variant]:
    return demo.variants


def test_at_least_24_variants_per_demo_domain(demo: Demo) -> None:
    variants, skipped = build_variants(demo.catalog, bag_of_words)
    ids = [v.id for v in variants if v.id != "native"]
    assert len(ids) >= 24, (ids, skipped)
    assert len(set(ids)) == len(ids)
    assert {v.operator for v in variants} >= {
        "merge",
        "split",
        "nest",
        "rename",
        "strip",
        "reorder",
        "transaction",
        "reference",
        "discovery",
        "composed",
    }
    # every method builds on the fixture unless it says why not
    assert set(ids) | set(skipped) == {r.id for r in RECIPES}


def _walk(node: Any) -> Any:
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_variant_schemas_are_well_formed(demo: Demo) -> None:
    for v in _variants(demo):
        assert v.schema.tools, v.id
        for t in v.schema.tools:
            assert NAME.match(t.name), (v.id, t.name)
            jsonschema.Draft7Validator.check_schema(t.parameters)
            assert t.parameters["type"] == "object"
            assert not any("oneOf" in n for n in _walk(t.parameters)), (v.id, t.name)


def _replay(variant: Variant, native: Catalog, trace: list[Call], mode: str = "normal") -> Any:
    async def execute(call: Call) -> dict[str, Any]:
        return {"ok": True, "digest": call.key()}

    return asyncio.run(run_trace(AdapterSession(variant, native, mode), trace, execute))  # type: ignore[arg-type]


def test_demo_tasks_round_trip_through_every_variant(demo: Demo) -> None:
    variants = _variants(demo)
    world = FakeWorld(demo.state_changing)
    val = validate(world, demo.catalog, variants, demo.tasks)
    assert not val.native_failures
    failed = [(c.variant, c.task[:19], c.failure, c.detail) for c in val.checks if not c.passed]
    assert not failed, failed[:5]
    assert len(val.checks) == len(variants) * len(demo.tasks)
    # protocol variants really add calls; in-place ones do not
    by = val.by_variant()
    native_calls = sum(c.calls for c in by["native"])
    assert sum(c.calls for c in by["transaction_all"]) > native_calls
    assert sum(c.calls for c in by["schema_discovery"]) > native_calls
    assert sum(c.calls for c in by["rename_opaque"]) == native_calls


def _value(schema: dict[str, Any], rng: random.Random) -> Any:
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    alts = [a for a in schema.get("anyOf") or [] if a.get("type") != "null"]
    if alts:
        return _value(alts[0], rng)
    ty = schema.get("type")
    if isinstance(ty, list):
        ty = next((t for t in ty if t != "null"), "string")
    if ty in ("integer", "number"):
        if ty == "integer":
            v: Any = rng.choice([rng.randint(-5, 20), rng.randint(0, 100000), 9, 10, 100, 1000])
        else:
            v = rng.choice([rng.uniform(-90, 90), 0.5, 10.0, 1e4])
        lo, hi = schema.get("minimum"), schema.get("maximum")
        v = max(v, lo) if lo is not None else v
        return min(v, hi) if hi is not None else v
    if ty == "boolean":
        return rng.random() < 0.5
    if ty == "array":
        return [rng.randint(1, 50) for _ in range(rng.randint(1, 3))]
    return rng.choice(STRINGS)


def _args(t: Any, rng: random.Random, seen: dict[str, list[Any]]) -> dict[str, Any] | None:
    """Valid random arguments of `t` (values the demo tasks used for the parameter, or drawn by type)."""
    for _ in range(20):
        args = {
            p: rng.choice(seen[p]) if seen.get(p) and rng.random() < 0.5 else _value(s, rng)
            for p, s in t.properties.items()
            if p in t.required or rng.random() < 0.5
        }
        if not t.problems(args):
            return args
    return None


def random_trace(demo: Demo, rng: random.Random, length: int) -> list[NativeAction]:
    seen: dict[str, list[Any]] = {}
    for _, actions in demo.tasks:
        for a in actions:
            for k, v in a.arguments.items():
                seen.setdefault(k, []).append(v)
    out: list[NativeAction] = []
    while len(out) < length:
        t = rng.choice(demo.catalog.tools)
        args = _args(t, rng, seen)
        if args is not None:
            out.append(NativeAction(t.name, args, t.cls, len(out) + 1))
    return out


def test_random_traces_round_trip_through_every_variant(demo: Demo) -> None:
    rng = random.Random(f"variants:{demo.domain}")
    traces = [random_trace(demo, rng, rng.randint(1, 6)) for _ in range(8)]
    assert len({a.operation for t in traces for a in t}) >= len(demo.catalog.tools) // 2
    for v in _variants(demo):
        for trace in traces:
            run = _replay(v, demo.catalog, v.encoder(as_trace(trace)))
            assert not run.rejected, (v.id, run.rejected[0].call, run.rejected[0].reason)
            assert [c.key() for c in run.executed] == [a.key() for a in trace], v.id


def _variant(demo: Demo, vid: str) -> Variant:
    return next(v for v in _variants(demo) if v.id == vid)


def test_off_schema_native_call_is_rejected_then_decoded_in_schema_form_mode(music: Demo) -> None:
    v = _variant(music, "merge_full_flat")
    call = Call("search_artists", {"name": "Accept"})
    out, off = AdapterSession(v, music.catalog, "normal").decode(call)
    assert isinstance(out, Reject) and out.kind == "routing" and not off
    out, off = AdapterSession(v, music.catalog, "schema_form").decode(call)
    assert isinstance(out, Execute) and out.call.key() == call.key() and off
    # a call that is no native action either stays rejected in schema-form mode
    out, _ = AdapterSession(v, music.catalog, "schema_form").decode(Call("search_artists", {"nam": "x"}))
    assert isinstance(out, Reject)


def test_merge_structures_reject_fields_of_another_operation(music: Demo) -> None:
    flat = AdapterSession(_variant(music, "merge_full_flat"), music.catalog)
    out, _ = flat.decode(Call("music_tools", {"operation": "search_artists", "get_album__album_id": 3}))
    assert isinstance(out, Reject) and "do not belong" in out.reason
    out, _ = flat.decode(Call("music_tools", {"operation": "search_artists", "search_artists__name": "Accept"}))
    assert isinstance(out, Execute) and out.call == Call("search_artists", {"name": "Accept"})
    union = AdapterSession(_variant(music, "merge_full_union"), music.catalog)
    out, _ = union.decode(Call("music_tools", {"get_album": {"album_id": 1}, "get_track": {"track_id": 2}}))
    assert isinstance(out, Reject) and "exactly one" in out.reason
    nested = AdapterSession(_variant(music, "merge_full_nested"), music.catalog)
    out, _ = nested.decode(Call("music_tools", {"operation": "get_album", "arguments": {"track_id": 2}}))
    assert isinstance(out, Reject)


def test_protocol_state_is_enforced(music: Demo) -> None:
    txn = AdapterSession(_variant(music, "transaction_all"), music.catalog)
    out, _ = txn.decode(Call("commit_transaction", {"transaction_id": "txn_9"}))
    assert isinstance(out, Reject) and out.kind == "protocol"
    opened, _ = txn.decode(Call("begin_transaction", {"operation": "get_album"}))
    assert isinstance(opened, Reply)
    tid = opened.payload["transaction_id"]
    out, _ = txn.decode(Call("set_argument", {"transaction_id": tid, "name": "track_id", "value": 1}))
    assert isinstance(out, Reject) and "no argument" in out.reason
    out, _ = txn.decode(Call("commit_transaction", {"transaction_id": tid}))
    assert isinstance(out, Reject) and "album_id" in out.reason  # nothing runs without its required argument
    assert isinstance(
        txn.decode(Call("set_argument", {"transaction_id": tid, "name": "album_id", "value": 7}))[0], Reply
    )
    out, _ = txn.decode(Call("commit_transaction", {"transaction_id": tid}))
    assert isinstance(out, Execute) and out.call == Call("get_album", {"album_id": 7})
    out, _ = txn.decode(Call("commit_transaction", {"transaction_id": tid}))
    assert isinstance(out, Reject), "a transaction commits once"

    disc = AdapterSession(_variant(music, "schema_discovery"), music.catalog)
    out, _ = disc.decode(Call("invoke", {"method": "get_album", "arguments": {"album_id": 7}}))
    assert isinstance(out, Reject) and "list_methods" in out.reason
    listed, _ = disc.decode(Call("list_methods", {"service": "chinook_catalog"}))
    assert isinstance(listed, Reply) and "get_album" in [m["name"] for m in listed.payload["methods"]]
    out, _ = disc.decode(Call("invoke", {"method": "get_album", "arguments": {"album": 7}}))
    assert isinstance(out, Reject)
    out, _ = disc.decode(Call("invoke", {"method": "get_album", "arguments": {"album_id": 7}}))
    assert isinstance(out, Execute) and out.call == Call("get_album", {"album_id": 7})

    refs = AdapterSession(_variant(music, "reference_resolution"), music.catalog)
    out, _ = refs.decode(Call("get_album", {"album_id_handle": "ref_1"}))
    assert isinstance(out, Reject) and "unknown handle" in out.reason
    got, _ = refs.decode(Call("resolve_reference", {"argument": "name", "value": "Accept"}))
    assert isinstance(got, Reply)
    out, _ = refs.decode(Call("get_album", {"album_id_handle": got.payload["handle"]}))
    assert isinstance(out, Reject) and "resolves" in out.reason


def test_interval_split_rejects_a_value_outside_the_tool_interval(music: Demo) -> None:
    v = _variant(music, "split_interval_1")
    s = AdapterSession(v, music.catalog)
    out, _ = s.decode(Call("get_album__album_id_below_100", {"album_id": 250}))
    assert isinstance(out, Reject)
    out, _ = s.decode(Call("get_album__album_id_from_100", {"album_id": 250}))
    assert isinstance(out, Execute) and out.call == Call("get_album", {"album_id": 250})
    out, _ = s.decode(Call("search_artists__name_below_n", {"name": "Zappa"}))
    assert isinstance(out, Reject)
