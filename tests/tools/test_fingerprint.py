"""Tool-surface fingerprints: stable under reordering, sensitive to schema changes only."""

from __future__ import annotations

from factory.tools.fingerprint import canonical_json, fingerprint_by_platform, surface_fingerprint
from factory.tools.spec import OutputField, SourceRef, ToolSpec

SRC = SourceRef(kind="openapi", locator="mem://spec", base_url="http://x")


def tool(name: str, platform: str = "p", **kw: object) -> ToolSpec:
    base = dict(
        domain="d", platform=platform, name=name, description=f"{name} tool", source=SRC,
        input_schema={"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
        output_schema={"type": "object", "properties": {"이름": {"type": "string"}}},
    )  # fmt: skip
    base.update(kw)
    return ToolSpec(**base)  # type: ignore[arg-type]


def test_format_and_order_independence() -> None:
    a, b, c = tool("a"), tool("b"), tool("c", platform="q")
    fp = surface_fingerprint([a, b, c])
    assert fp.startswith("sha256:") and len(fp) == len("sha256:") + 64
    assert surface_fingerprint([c, a, b]) == fp
    # dict key order inside schemas does not matter either
    a2 = tool("a", input_schema={"required": ["code"], "properties": {"code": {"type": "string"}}, "type": "object"})
    assert surface_fingerprint([b, a2, c]) == fp


def test_changes_with_schema_not_with_description_or_source() -> None:
    a, b = tool("a"), tool("b")
    fp = surface_fingerprint([a, b])
    assert surface_fingerprint([a.model_copy(update={"description": "new words"}), b]) == fp
    moved = a.model_copy(update={"source": SourceRef(kind="openapi", locator="other", base_url="http://y")})
    assert surface_fingerprint([moved, b]) == fp
    renamed_param = tool("a", input_schema={"type": "object", "properties": {"cd": {"type": "string"}}, "required": []})
    assert surface_fingerprint([renamed_param, b]) != fp
    retyped_output = tool("a", output_schema={"type": "object", "properties": {"이름": {"type": "integer"}}})
    assert surface_fingerprint([retyped_output, b]) != fp
    assert surface_fingerprint([a]) != fp  # a tool removed


def test_output_fields_used_when_no_output_schema() -> None:
    x = tool("x", output_schema={}, output_fields={"n": OutputField(name="n", type="integer")})
    y = tool("x", output_schema={}, output_fields={"n": OutputField(name="n", type="string")})
    assert surface_fingerprint([x]) != surface_fingerprint([y])


def test_by_platform_and_canonical_json() -> None:
    tools = [tool("a"), tool("b", platform="q"), tool("c")]
    by = fingerprint_by_platform(tools)
    assert list(by) == ["p", "q"]
    assert by["p"] == surface_fingerprint([tools[2], tools[0]])
    assert canonical_json({"b": 1, "a": "한"}) == '{"a":"한","b":1}'
