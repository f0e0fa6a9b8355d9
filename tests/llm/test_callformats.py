"""Tool calls in each model family's native format, and what is (not) a format violation."""

import json

import pytest

from factory.llm.callformats import FORMATS, parse_content, parse_reply

CALL = ("get_customer", {"customer_id": 3})


def _one(text: str, fmt: str) -> None:
    r = parse_content(text)
    assert not r.violations, r.violations
    assert [(c.name, c.arguments, c.format) for c in r.calls] == [(*CALL, fmt)]


def test_openai_tool_calls() -> None:
    msg = {
        "content": "Let me look.",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_customer", "arguments": '{"customer_id": 3}'}},
            {"id": "c2", "type": "function", "function": {"name": "list_genres", "arguments": ""}},
        ],
    }
    r = parse_reply(msg)
    assert [(c.name, c.arguments, c.id, c.format) for c in r.calls] == [
        ("get_customer", {"customer_id": 3}, "c1", "openai"),
        ("list_genres", {}, "c2", "openai"),
    ]
    assert r.text == "Let me look." and not r.is_final


def test_openai_bad_arguments_and_missing_name() -> None:
    r = parse_reply(
        {
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{customer_id: 3"}},
                {"id": "b", "type": "function", "function": {"name": "", "arguments": "{}"}},
                {"id": "c", "type": "function", "function": {"name": "g", "arguments": "[1, 2]"}},
            ],
        }
    )
    assert not r.calls
    assert [v.kind for v in r.violations] == ["malformed_json", "missing_name", "bad_arguments_shape"]


def test_hermes_qwen_tags() -> None:
    _one('<tool_call>\n{"name": "get_customer", "arguments": {"customer_id": 3}}\n</tool_call>', "hermes")
    r = parse_content(
        'I will call two tools.\n<tool_call>{"name": "a", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "b", "arguments": "{\\"x\\": 1}"}'  # unclosed last tag, arguments as a JSON string
    )
    assert [(c.name, c.arguments) for c in r.calls] == [("a", {}), ("b", {"x": 1})]
    assert r.text == "I will call two tools."


def test_qwen3_coder_xml_parameters() -> None:
    _one(
        "<tool_call>\n<function=get_customer>\n<parameter=customer_id>\n3\n</parameter>\n</function>\n</tool_call>",
        "hermes",
    )


def test_llama3_python_tag_json_and_builtin_call() -> None:
    _one('<|python_tag|>{"name": "get_customer", "parameters": {"customer_id": 3}}<|eom_id|>', "llama_python_tag")
    r = parse_content('<|python_tag|>{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"q": "x"}}')
    assert [c.name for c in r.calls] == ["a", "b"]
    r = parse_content('<|python_tag|>brave_search.call(query="Seoul weather")')
    assert [(c.name, c.arguments) for c in r.calls] == [("brave_search", {"query": "Seoul weather"})]


def test_llama3_bare_json() -> None:
    _one('{"name": "get_customer", "parameters": {"customer_id": 3}}', "bare_json")
    _one('{"type": "function", "function": {"name": "get_customer", "arguments": {"customer_id": 3}}}', "bare_json")
    r = parse_content('[{"name": "a", "parameters": {}}, {"name": "b", "parameters": {"y": 2}}]')
    assert [c.name for c in r.calls] == ["a", "b"] and all(c.format == "bare_json" for c in r.calls)


def test_llama31_function_tag() -> None:
    _one('<function=get_customer>{"customer_id": 3}</function>', "llama_function_tag")


def test_mistral_both_generations() -> None:
    _one('[TOOL_CALLS][{"name": "get_customer", "arguments": {"customer_id": 3}}]', "mistral")
    r = parse_content('[TOOL_CALLS]get_customer[ARGS]{"customer_id": 3}[TOOL_CALLS]list_genres[ARGS]{}')
    assert [(c.name, c.arguments, c.format) for c in r.calls] == [
        ("get_customer", {"customer_id": 3}, "mistral"),
        ("list_genres", {}, "mistral"),
    ]


def test_fenced_json_block() -> None:
    _one('Sure:\n```json\n{"name": "get_customer", "arguments": {"customer_id": 3}}\n```', "fenced_json")
    _one('```\n[{"name": "get_customer", "arguments": {"customer_id": 3}}]\n```', "fenced_json")


def test_gemma_tool_code_block() -> None:
    _one("```tool_code\nget_customer(customer_id=3)\n```", "tool_code")
    r = parse_content("```tool_code\nget_customer(3)\n```")
    assert not r.calls and [v.kind for v in r.violations] == ["bad_arguments_shape"]  # positional: no names


def test_granite_phi_deepseek_glaive() -> None:
    _one('<|tool_call|>[{"name": "get_customer", "arguments": {"customer_id": 3}}]', "granite")
    _one('functools[{"name": "get_customer", "arguments": {"customer_id": 3}}]', "functools")
    _one(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_customer\n```json\n"
        '{"customer_id": 3}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        "deepseek",
    )
    _one(
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_customer<｜tool▁sep｜>{"customer_id": 3}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "deepseek",
    )
    _one('<functioncall> {"name": "get_customer", "arguments": \'{"customer_id": 3}\'}', "glaive")


@pytest.mark.parametrize(
    ("text", "kind", "fmt"),
    [
        ('<tool_call>{"name": "get_customer", "arguments": {customer_id: 3}}</tool_call>', "malformed_json", "hermes"),
        ('<tool_call>{"arguments": {"customer_id": 3}}</tool_call>', "missing_name", "hermes"),
        ('<tool_call>{"name": "a", "arguments": [1, 2]}</tool_call>', "bad_arguments_shape", "hermes"),
        ("<tool_call></tool_call>", "unparsable_call", "hermes"),
        ('[TOOL_CALLS][{"name": "a", "arguments": {]', "malformed_json", "mistral"),
        ('{"name": "get_customer", "parameters": {"customer_id": 3}', "malformed_json", "bare_json"),
        ('```json\n{"name": "a", "arguments": {"x": }\n```', "malformed_json", "fenced_json"),
        ("<|python_tag|>get_customer(customer_id=", "unparsable_call", "llama_python_tag"),
    ],
)
def test_violations(text: str, kind: str, fmt: str) -> None:
    r = parse_content(text)
    assert not r.calls and [(v.kind, v.format) for v in r.violations] == [(kind, fmt)]
    assert not r.is_final


@pytest.mark.parametrize(
    "text",
    [
        "ANSWER: Boris The Spider",
        "The total is \\boxed{92}.",
        'Here is the data:\n```json\n{"answer": 3, "unit": "tracks"}\n```',  # JSON, but not a call
        'Use {curly} braces {"sparingly"}',
        '{"answer": 42}',
        '<think>maybe call {"name": "x", "arguments": {}}</think>ANSWER: 42',  # reasoning is dropped
    ],
)
def test_plain_answers_are_final(text: str) -> None:
    r = parse_content(text)
    assert r.is_final and not r.calls and not r.violations


def test_every_format_is_listed() -> None:
    samples = {
        "hermes": '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
        "llama_python_tag": '<|python_tag|>{"name": "f", "parameters": {}}',
        "llama_function_tag": "<function=f>{}</function>",
        "bare_json": json.dumps({"name": "f", "parameters": {}}),
        "mistral": '[TOOL_CALLS][{"name": "f", "arguments": {}}]',
        "fenced_json": '```json\n{"name": "f", "arguments": {}}\n```',
        "tool_code": "```tool_code\nf()\n```",
        "granite": '<|tool_call|>[{"name": "f", "arguments": {}}]',
        "functools": 'functools[{"name": "f", "arguments": {}}]',
        "deepseek": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
        "glaive": '<functioncall> {"name": "f", "arguments": {}}',
    }
    assert set(samples) | {"openai"} == set(FORMATS)
    for fmt, text in samples.items():
        r = parse_content(text)
        assert r.formats == [fmt] and [c.name for c in r.calls] == ["f"], (fmt, r)
