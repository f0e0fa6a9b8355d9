"""MCP resource blocks as records, the `uri_id` transform and the bindings it makes (issue 13:
server-everything's get-resource-links → get-resource-reference)."""

from __future__ import annotations

import mcp.types as mt
import pytest

from factory.graph.plan import TRANSFORMS, apply_transform, fill_args
from factory.graph.skeleton import check_uri_id
from factory.llm.rules import edge_proposal
from factory.llm.schemas import EdgeProposalInput, FieldBrief, ParamBrief, ToolBrief
from factory.semtypes import ValueTypes
from factory.tools.identifiers import uri_id, uri_words
from factory.tools.mcp import interpret_result, resource_records
from factory.tools.outcomes import Outcome


def _result(*blocks: object, is_error: bool = False) -> mt.CallToolResult:
    return mt.CallToolResult(content=list(blocks), isError=is_error)  # type: ignore[arg-type]


def _link(n: int, kind: str = "text") -> mt.ResourceLink:
    return mt.ResourceLink(
        type="resource_link",
        uri=f"demo://resource/dynamic/{kind}/{n}",
        name=f"{kind.title()} Resource {n}",
        description=f"Resource {n}: plaintext resource",
        mimeType="text/plain",
    )


def test_resource_links_are_the_records_and_the_caption_is_dropped() -> None:
    res = _result(mt.TextContent(type="text", text="Here are 2 resource links:"), _link(1, "blob"), _link(2))
    outcome, body, detail = interpret_result(res)
    assert outcome is None and detail == ""
    assert body == [
        {"uri": "demo://resource/dynamic/blob/1", "name": "Blob Resource 1",
         "description": "Resource 1: plaintext resource", "mimeType": "text/plain"},
        {"uri": "demo://resource/dynamic/text/2", "name": "Text Resource 2",
         "description": "Resource 2: plaintext resource", "mimeType": "text/plain"},
    ]  # fmt: skip


def test_embedded_resources_give_uri_and_mime_type_not_their_contents() -> None:
    text = mt.EmbeddedResource(
        type="resource",
        resource=mt.TextResourceContents(uri="test://static/resource/12", mimeType="text/plain", text="hello"),
    )
    blob = mt.EmbeddedResource(
        type="resource",
        resource=mt.BlobResourceContents(uri="test://static/resource/13", mimeType="image/png", blob="AAAA"),
    )
    caption = mt.TextContent(type="text", text="You can access this resource using the URI: test://static/resource/12")
    outcome, body, _ = interpret_result(_result(caption, text, blob))
    assert outcome is None
    assert body == [
        {"uri": "test://static/resource/12", "mimeType": "text/plain"},
        {"uri": "test://static/resource/13", "mimeType": "image/png"},
    ]  # the contents (a text stamped with the time on server-everything) would break replay digests


def test_error_text_beside_a_resource_is_still_an_error() -> None:
    res = _result(mt.TextContent(type="text", text="Error: resource 99 not found"), _link(99))
    outcome, body, detail = interpret_result(res)
    assert outcome is Outcome.SCHEMA_MISMATCH and body is None, (outcome, detail)
    assert "resource 99 not found" in detail


def test_text_only_results_are_read_as_before() -> None:
    assert resource_records([mt.TextContent(type="text", text="plain")]) == []
    assert interpret_result(_result(mt.TextContent(type="text", text='{"a": 1}')))[1] == {"a": 1}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("test://static/resource/12", 12),
        ("demo://resource/dynamic/blob/3", 3),
        ("https://api.example.org/items/ab-12?x=1#f", "ab-12"),
        ("https://api.example.org/about", None),  # no digit: a page, not an id
        ("file:///tmp/notes.txt", None),
        ("resource/12", None),  # no scheme: not a URI
        (12, None),
    ],
)
def test_uri_id(value: object, expected: object) -> None:
    assert uri_id(value) == expected


def test_uri_id_transform_and_its_words() -> None:
    assert "uri_id" in TRANSFORMS
    assert apply_transform("test://static/resource/12", "uri_id") == 12
    assert apply_transform("not a uri", "uri_id") == "not a uri"  # unchanged, as every failed transform
    assert uri_words("demo://resource/dynamic/text/2") == {"resource", "dynamic", "text"}
    plan = {"resourceId": {"kind": "UPSTREAM", "field": "uri", "transform": "uri_id"}}
    assert fill_args(plan, {"uri": "demo://resource/dynamic/text/7"}) == {"resourceId": 7}


def _briefs(samples: list[str], param: str = "resourceId") -> EdgeProposalInput:
    src = ToolBrief(
        name="get-resource-links",
        description="Returns up to ten resource links that reference different types of resources",
        fields=[FieldBrief(name="uri", samples=samples), FieldBrief(name="name", samples=["Text Resource 1"])],
    )
    tgt = ToolBrief(
        name="get-resource-reference",
        description="Returns a resource reference that can be used by MCP clients",
        params=[ParamBrief(name=param, type="number", description="ID of the text resource to fetch",
                                    default=1, examples=[1])],
    )  # fmt: skip
    return EdgeProposalInput(source=src, target=tgt)


def test_rules_bind_an_id_parameter_to_the_ids_uris_end_with() -> None:
    out = edge_proposal(_briefs(["demo://resource/dynamic/text/1", "demo://resource/dynamic/blob/2"]))
    assert [(b.target_param, b.source_field, b.transform) for b in out.bindings] == [("resourceId", "uri", "uri_id")]
    # URIs that do not name the parameter's entity, or do not end in an id, give no such binding
    for samples in (["demo://image/dynamic/1"], ["demo://resource/readme"]):
        assert not any(b.transform == "uri_id" for b in edge_proposal(_briefs(samples)).bindings), samples
    assert not any(b.transform == "uri_id" for b in edge_proposal(_briefs(["demo://resource/1"], "count")).bindings)


def test_check_uri_id_by_the_parameter_type_and_the_observed_uris() -> None:
    src, tgt = "everything/everything.get-resource-links", "everything/everything.get-resource-reference"
    typed = ValueTypes({tgt: {"params": {"resourceId": "resource.id@everything", "count": "count"}}})
    uris = ["demo://resource/dynamic/text/1", "demo://resource/dynamic/blob/2"]
    assert check_uri_id(typed, src, "uri", tgt, "resourceId", uris)[0] == "equal"
    assert check_uri_id(ValueTypes(), src, "uri", tgt, "resourceId", uris)[0] == "equal"  # untyped: by its name
    assert check_uri_id(typed, src, "uri", tgt, "count", uris)[0] == "mismatch"
    assert check_uri_id(typed, src, "uri", tgt, "resourceId", [])[0] == "unverified"
    check, why = check_uri_id(typed, src, "uri", tgt, "resourceId", ["demo://image/1"])
    assert check == "unverified" and "do not name resource" in why
