"""Typed values (issue 14, item 4): arguments in their parameter's JSON-Schema type, answers typed by value."""

import pytest

from factory.synthesis import answers
from factory.synthesis.coerce import Uncoercible, coerce_args, coerce_value, schema_types
from factory.synthesis.junctions import REJECTION_REASONS

INT_OR_NULL = {"anyOf": [{"type": "integer"}, {"type": "null"}]}


@pytest.mark.parametrize(
    "value, schema, expected",
    [
        ("1", {"type": "integer"}, 1),
        (" 12 ", {"type": "integer"}, 12),
        (2.0, {"type": "integer"}, 2),
        ("7", INT_OR_NULL, 7),
        ("55", {"type": ["integer", "null"]}, 55),
        (1, {"type": "string"}, "1"),
        (2.0, {"type": "string"}, "2"),
        (2.5, {"type": "string"}, "2.5"),
        ("11500", {"type": "string"}, "11500"),  # a code the schema calls a string keeps its form
        ("02134", {"type": "string"}, "02134"),
        ("100.5", {"type": "number"}, 100.5),
        ("100", {"type": "number"}, 100),
        (3, {"type": "number"}, 3),
        ("true", {"type": "boolean"}, True),
        (0, {"type": "boolean"}, False),
        (["1", 2], {"type": "array", "items": {"type": "integer"}}, [1, 2]),
        ("3", {"type": "array", "items": {"type": "integer"}}, [3]),
        ("x", {}, "x"),  # untyped: unchanged
        (None, {"type": "integer"}, None),
        ("origin", {"type": "string", "enum": ["origin", "carrier"]}, "origin"),
        ("1", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "1"),  # already one of the types
    ],
)
def test_values_take_their_schema_type(value, schema, expected):
    out = coerce_value(value, schema)
    assert out == expected and type(out) is type(expected)


@pytest.mark.parametrize(
    "value, schema",
    [
        ("abc", {"type": "integer"}),
        (1.5, {"type": "integer"}),
        ("1.5", {"type": "integer"}),
        ("twelve", {"type": "number"}),
        ("maybe", {"type": "boolean"}),
        (7, {"type": "boolean"}),
        ({"a": 1}, {"type": "string"}),
        ("dest", {"type": "string", "enum": ["origin", "carrier"]}),
        (float("nan"), {"type": "number"}),
    ],
)
def test_values_without_a_form_of_the_type_are_uncoercible(value, schema):
    with pytest.raises(Uncoercible):
        coerce_value(value, schema)


def test_coerce_args_names_tool_and_parameter():
    params = {"genre_id": INT_OR_NULL, "name": {"type": "string"}, "page": {"type": "integer"}}
    assert coerce_args(params, {"genre_id": "1", "name": 42, "page": "2", "extra": "x"}) == {
        "genre_id": 1, "name": "42", "page": 2, "extra": "x"}  # fmt: skip
    with pytest.raises(Uncoercible, match=r"search_tracks\.genre_id"):
        coerce_args(params, {"genre_id": "rock"}, "search_tracks")
    assert "uncoercible_value" in REJECTION_REASONS


def test_schema_types_read_any_of_and_enums():
    assert schema_types(INT_OR_NULL) == ["integer"]
    assert schema_types({"enum": [3, 4]}) == ["integer"]
    assert schema_types({"type": "null"}) == []


ROWS = [
    {"step": 2, "total_count": 12, "records": 10, "sample": [{"name": "Delta"}]},
    {"step": 2, "total_count": 3, "records": 3, "sample": [{"name": "Alaska"}]},
]


def test_cmp_answers_are_typed_and_difference_is_a_number():
    arms = [
        {"kind": "count", "calls": [{"step": 2, "index": 0}]},
        {"kind": "count", "calls": [{"step": 2, "index": 1}]},
    ]
    label = answers.compute({"kind": "cmp", "arms": arms, "labels": [2010, 2015], "order": "more"}, ROWS)
    assert label["value"] == 2010 and label["type"] == "number"  # an int label is a number
    text = answers.compute({"kind": "cmp", "arms": arms, "labels": ["11500", "11110"], "order": "fewer"}, ROWS)
    assert text["value"] == "11110" and text["type"] == "string"  # a string code stays a string
    diff = answers.compute(
        {"kind": "cmp", "arms": arms, "labels": ["A", "B"], "order": "more", "ask": "difference"}, ROWS
    )
    assert diff == {"type": "number", "value": 9, "fields": ["total_count"], "counts": [12, 3]}
    tie = answers.compute({"kind": "cmp", "arms": [arms[0], arms[0]], "labels": ["A", "B"], "ask": "difference"}, ROWS)
    assert tie["value"] is None


@pytest.mark.parametrize(
    "value, stated",
    [
        ("인천광역시", "인천광역시"),  # the last call searched the very name it answers with
        (" Incheon ", "incheon"),
        (["Eric Clapton", 2], "eric clapton"),
    ],
)
def test_a_text_answer_the_question_states_is_caught(value, stated):
    from factory.synthesis.trajectories import _stated_answer

    assert "answer_in_query" in REJECTION_REASONS
    assert _stated_answer(value, [{"tool_id": "t", "param": "q", "value": stated}]) is not None


@pytest.mark.parametrize("value", ["인천광역시 중구", 5, ["Lost, Season 1"]])
def test_an_answer_the_question_does_not_state_passes(value):
    from factory.synthesis.trajectories import _stated_answer

    seeds = [{"tool_id": "t", "param": "q", "value": "인천광역시"}, {"tool_id": "t", "param": "n", "value": 5}]
    assert _stated_answer(value, seeds) is None


def test_most_frequent_is_a_category_operator_never_the_mode_of_numbers():
    from factory.synthesis.junctions import _candidates

    numbers = [{"genre": g, "tracks": n} for g, n in (("Rock", 28), ("World", 28), ("Jazz", 5), ("Metal", 28))]
    assert not [c for c in _candidates(numbers, ["genre"], "tracks", 5) if c["operator"] == "most_frequent"]
    kinds = [{"genre": g, "media": m} for g, m in (("Rock", "MPEG"), ("World", "MPEG"), ("Jazz", "AAC"))]
    modes = [c for c in _candidates(kinds, ["genre"], "media", 5) if c["operator"] == "most_frequent"]
    assert modes == [{"field": "media", "operator": "most_frequent", "threshold": "MPEG"}]


def test_a_call_that_is_sent_the_answer_is_caught_like_a_stated_one():
    from factory.synthesis.trajectories import _stated_answer

    assert "uniform_list" in REJECTION_REASONS
    sent = [{"value": "9E"}, {"value": "N915XJ"}]  # get_airline(9E) answering "9E"
    assert _stated_answer("9E", sent) == "9E"
