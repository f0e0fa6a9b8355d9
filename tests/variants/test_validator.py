"""The variant validator rejects deliberately broken operators, and the schema_variants gate blocks
publication of a failing or too small set of variants."""

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from factory import quality
from factory.variants.build import checks_frame
from factory.variants.core import Call, Execute, Outcome, Variant
from factory.variants.representation import rename
from factory.variants.split import interval_split
from factory.variants.validate import validate
from tests.variants.conftest import Demo, FakeWorld


def _broken_decoder(good: Variant, mangle: Any) -> Variant:
    """`good` whose decoder passes every decoded call through `mangle` first."""

    class Mangled:
        def __init__(self) -> None:
            self.inner = good.decoder()

        def handle(self, call: Call) -> Outcome:
            out = self.inner.handle(call)
            return Execute(mangle(out.call)) if isinstance(out, Execute) else out

    return replace(good, id=f"broken_{good.id}", decoder=Mangled)


def _failures(demo: Demo, variant: Variant) -> tuple[list[str], int]:
    val = validate(FakeWorld(demo.state_changing), demo.catalog, [variant], demo.tasks)
    return sorted({c.failure for c in val.checks if not c.passed}), len(val.checks)


def test_validator_rejects_a_decoder_that_changes_an_argument(music: Demo) -> None:
    good = interval_split(music.catalog, 1)
    assert _failures(music, good)[0] == []

    def off_by_one(c: Call) -> Call:
        args = {k: v + 1 if k.endswith("_id") else v for k, v in c.arguments.items()}
        return Call(c.name, args, c.label, c.step)

    failures, n = _failures(music, _broken_decoder(good, off_by_one))
    assert failures == ["actions"] and n == len(music.tasks)


def test_validator_rejects_a_decoder_that_routes_to_another_tool(music: Demo) -> None:
    good = rename(music.catalog, "opaque")
    names = {"list_artist_albums": "list_album_tracks", "list_album_tracks": "list_artist_albums"}

    def swapped(c: Call) -> Call:
        return Call(names.get(c.name, c.name), c.arguments, c.label, c.step)

    failures, _ = _failures(music, _broken_decoder(good, swapped))
    assert failures and set(failures) <= {"actions", "rejected"}


def test_validator_rejects_an_encoder_that_drops_a_call(music: Demo) -> None:
    good = rename(music.catalog, "namespaced")
    broken = replace(good, id="broken_drop", encoder=lambda trace: good.encoder(trace)[:-1])
    failures, _ = _failures(music, broken)
    assert failures == ["actions"]


def test_validator_compares_final_state(music: Demo) -> None:
    """Same actions and results, another final state (a world whose state moves between episodes): fails."""

    class Drifting(FakeWorld):
        episodes = 0

        async def episode(self, body: Any) -> tuple[Any, dict[str, str | None]]:
            value, _ = await super().episode(body)
            Drifting.episodes += 1
            return value, {"store": "fresh" if Drifting.episodes == 1 else f"changed {Drifting.episodes}"}

    val = validate(Drifting(music.state_changing), music.catalog, [rename(music.catalog, "opaque")], music.tasks[:1])
    assert [c.failure for c in val.checks] == ["state"]


def test_validator_rejects_an_encoder_that_cannot_express_a_task(music: Demo) -> None:
    def refuse(trace: Sequence[Call]) -> list[Call]:
        raise ValueError("no tool for this value")

    failures, _ = _failures(music, replace(rename(music.catalog, "opaque"), id="broken_encode", encoder=refuse))
    assert failures == ["encode"]


def _value(checks: list[dict[str, Any]], published: list[str], tasks: int = 2) -> dict[str, Any]:
    return {
        "variants": [{"id": v, "published": v in published} for v in {c["variant"] for c in checks}],
        "checks": checks,
        "tasks": [{"task_id": f"t{i}"} for i in range(tasks)],
    }


def _check(v: str, t: str, passed: bool = True) -> dict[str, Any]:
    return {
        "variant": v,
        "task": t,
        "passed": passed,
        "failure": None if passed else "actions",
        "detail": "" if passed else "call 0: got x, want y",
        "calls": 3,
    }


def test_gate_passes_published_variants_that_pass_every_task() -> None:
    checks = [_check(v, t) for v in ("a", "b") for t in ("t0", "t1")]
    gate = quality.validate(
        "schema_variants", checks_frame(_value(checks, ["a", "b"])), settings={"variants.min_published": 2}
    )
    assert gate.success, gate.summary()


def test_gate_fails_a_published_variant_with_a_failing_task_and_too_few_variants() -> None:
    checks = [_check("a", "t0"), _check("a", "t1", passed=False), _check("b", "t0"), _check("b", "t1")]
    gate = quality.validate(
        "schema_variants", checks_frame(_value(checks, ["a", "b"])), settings={"variants.min_published": 2}
    )
    assert not gate.success
    assert "every published variant reproduces" in gate.summary()
    # the failing variant left unpublished: only the count fails
    gate = quality.validate(
        "schema_variants", checks_frame(_value(checks, ["b"])), settings={"variants.min_published": 2}
    )
    assert not gate.success
    summary = gate.summary()
    assert "enough validated variants" in summary and "every published variant reproduces" not in summary
    # a domain without tasks checks no count
    empty = {"variants": [], "checks": [], "tasks": []}
    assert quality.validate("schema_variants", checks_frame(empty), settings={"variants.min_published": 2}).success


def test_variant_rows_carry_the_variant_id_and_follow_the_splits() -> None:
    from factory.variants.export import variant_rows

    value = {
        "domain": "music",
        "variants": [
            {"id": "native", "published": True, "operator": "native", "tool_definitions": [{"n": 1}]},
            {"id": "rename_opaque", "published": True, "operator": "rename", "tool_definitions": [{"n": 2}]},
            {"id": "broken", "published": False, "operator": "x", "tool_definitions": []},
        ],
        "tasks": [
            {
                "task_id": "t1",
                "target_actions": [],
                "variants": {"native": [{"name": "a"}], "rename_opaque": [{"name": "b"}]},
            },
            {"task_id": "t2", "target_actions": [], "variants": {"native": [{"name": "a"}], "broken": [{"name": "c"}]}},
        ],
    }
    rows = variant_rows([value], split_of={"t1": "train"})
    assert [(r["task_id"], r["variant_id"], r["split"]) for r in rows] == [
        ("t1", "native", "train"),
        ("t1", "rename_opaque", "train"),
    ]
    assert rows[1]["tools"] == [{"n": 2}] and rows[1]["trace"] == [{"name": "b"}]
    held_out = variant_rows({"music": value}, include=["native"])
    assert {r["variant_id"] for r in held_out} == {"native"} and len(held_out) == 2
