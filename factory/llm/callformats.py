"""Tool calls in each model family's native format, parsed from one chat reply (pure).

A model emits calls in the format it was trained on; a harness that assumes one
format scores every other family as a total failure (kotraj-bench card: one model
went from 0/50 to usable once its format was parsed).  `parse_reply` reads:

| format | what the reply looks like |
| --- | --- |
| ``openai`` | the API's structured ``tool_calls`` (arguments a JSON string) |
| ``hermes`` | Hermes / Qwen: ``<tool_call>{"name": .., "arguments": {..}}</tool_call>`` (one tag per call; an unclosed last tag is accepted); Qwen3-Coder's ``<tool_call><function=f><parameter=p>v</parameter></function></tool_call>`` |
| ``llama_python_tag`` | Llama 3.x: ``<|python_tag|>`` + JSON objects (``;``-separated) or ``tool.call(k=v)`` |
| ``llama_function_tag`` | Llama 3.1 custom tools: ``<function=name>{..}</function>`` |
| ``bare_json`` | Llama 3.x zero-shot: the whole reply is ``{"name": .., "parameters": {..}}`` (or a list of them) |
| ``mistral`` | ``[TOOL_CALLS][{"name": .., "arguments": {..}}]`` and the newer ``[TOOL_CALLS]name[ARGS]{..}`` |
| ``fenced_json`` | a fenced code block (json or untagged) holding a call object or a list of them |
| ``tool_code`` | Gemma / Python-style: a fenced ``tool_code`` / ``python`` block with ``name(k=v, ..)`` |
| ``granite`` | IBM Granite: ``<|tool_call|>[{..}]`` |
| ``functools`` | Phi-4-mini: ``functools[{..}]`` |
| ``deepseek`` | DeepSeek: ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>name`` + a JSON fence (V3) or ``name<｜tool▁sep｜>{..}`` (V3.1) |
| ``glaive`` | ``<functioncall> {"name": .., "arguments": '{..}'}`` |

A call object may say ``arguments``, ``parameters``, ``args`` or ``input``, as an object
or as a JSON string, and may be wrapped as ``{"type": "function", "function": {..}}``.
Reasoning blocks (``<think>…</think>``) are dropped first.

Anything that is clearly an attempt at a call but cannot be read becomes a
`FormatViolation` (``malformed_json``, ``missing_name``, ``bad_arguments_shape``,
``unparsable_call``) instead of being silently ignored; plain prose that merely
contains braces is not a violation.
"""

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

ViolationKind = Literal["malformed_json", "missing_name", "bad_arguments_shape", "unparsable_call"]

FORMATS: tuple[str, ...] = (
    "openai",
    "hermes",
    "llama_python_tag",
    "llama_function_tag",
    "bare_json",
    "mistral",
    "fenced_json",
    "tool_code",
    "granite",
    "functools",
    "deepseek",
    "glaive",
)

_ARG_KEYS = ("arguments", "parameters", "args", "input")
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL)
_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|(?=<tool_call>)|$)", re.DOTALL)
_FUNCTION_TAG = re.compile(r"<function=([^>\s]+)>\s*(.*?)\s*(?:</function>|$)", re.DOTALL)
_XML_PARAM = re.compile(r"<parameter=([^>\s]+)>\s*(.*?)\s*</parameter>", re.DOTALL)
_FENCE = re.compile(r"```[ \t]*([A-Za-z_]*)[ \t]*\n?(.*?)```", re.DOTALL)
_PY_TAG = "<|python_tag|>"
_LLAMA_END = re.compile(r"<\|eom_id\|>|<\|eot_id\|>")
_MISTRAL = "[TOOL_CALLS]"
_MISTRAL_NAMED = re.compile(r"\[TOOL_CALLS\]\s*([A-Za-z_][\w.\-]*)\s*(?:\[CALL_ID\]\s*\w+\s*)?\[ARGS\]")
_GRANITE = "<|tool_call|>"
_FUNCTOOLS = "functools["
_DS_BEGIN = "<｜tool▁call▁begin｜>"
_DS_SEP = "<｜tool▁sep｜>"
_DS_END = "<｜tool▁call▁end｜>"
_DS_BLOCK = re.compile(r"<｜tool▁calls▁begin｜>.*?(?:<｜tool▁calls▁end｜>|$)", re.DOTALL)
_DS_CALL = re.compile(r"<｜tool▁call▁begin｜>(.*?)(?:<｜tool▁call▁end｜>|$)", re.DOTALL)
_GLAIVE = re.compile(r"<functioncall>\s*(.*?)\s*(?:</functioncall>|<\|endoftext\|>|$)", re.DOTALL)
_GLAIVE_STR_ARGS = re.compile(r"(\"arguments\"\s*:\s*)'(.*)'(\s*})\s*$", re.DOTALL)


@dataclass(frozen=True)
class ParsedCall:
    """One tool call read from a reply."""

    name: str
    arguments: dict[str, Any]
    format: str
    id: str | None = None
    raw: str = ""


@dataclass(frozen=True)
class FormatViolation:
    """An attempt at a tool call that could not be read."""

    kind: ViolationKind
    format: str
    detail: str
    raw: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "format": self.format, "detail": self.detail, "raw": self.raw[:300]}


@dataclass
class ParsedReply:
    """Calls and violations of one reply, and its text with reasoning and call markup removed."""

    calls: list[ParsedCall] = field(default_factory=list)
    violations: list[FormatViolation] = field(default_factory=list)
    text: str = ""
    formats: list[str] = field(default_factory=list)

    @property
    def is_final(self) -> bool:
        """No call and no failed attempt at one: the reply is the model's answer."""
        return not self.calls and not self.violations

    def _add(self, fmt: str, items: list["ParsedCall | FormatViolation"]) -> None:
        for it in items:
            if isinstance(it, ParsedCall):
                self.calls.append(it)
            else:
                self.violations.append(it)
        if items and fmt not in self.formats:
            self.formats.append(fmt)


# --------------------------------------------------------------------------- call objects


def _call_from_obj(obj: Any, fmt: str, raw: str, call_id: str | None = None) -> "ParsedCall | FormatViolation":
    """A call object (any of the accepted spellings) → ParsedCall, or the reason it is not one."""
    if not isinstance(obj, dict):
        return FormatViolation("unparsable_call", fmt, f"a call must be a JSON object, got {type(obj).__name__}", raw)
    if isinstance(obj.get("function"), dict):
        call_id = call_id or (obj.get("id") if isinstance(obj.get("id"), str) else None)
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return FormatViolation("missing_name", fmt, "the call has no tool name", raw)
    args: Any = {}
    for k in _ARG_KEYS:
        if k in obj:
            args = obj[k]
            break
    if isinstance(args, str):
        if not args.strip():
            args = {}
        else:
            try:
                args = json.loads(args)
            except json.JSONDecodeError as e:
                return FormatViolation("malformed_json", fmt, f"arguments of {name!r} are not valid JSON: {e}", raw)
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return FormatViolation(
            "bad_arguments_shape", fmt, f"arguments of {name!r} must be an object, got {type(args).__name__}", raw
        )
    return ParsedCall(name=name.strip(), arguments=args, format=fmt, id=call_id, raw=raw)


def _looks_like_call(obj: Any) -> bool:
    """An object a model meant as a call: a name plus arguments, or an OpenAI-style function wrapper."""
    if isinstance(obj, list):
        return bool(obj) and all(_looks_like_call(o) for o in obj)
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("function"), dict):
        return True
    return "name" in obj and any(k in obj for k in _ARG_KEYS)


def _json_values(text: str) -> tuple[list[Any], str | None]:
    """Every JSON value in `text` separated by whitespace, ',' or ';' → (values, error or None)."""
    dec = json.JSONDecoder()
    out: list[Any] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n,;":
            i += 1
        if i >= n:
            return out, None
        try:
            value, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            return out, str(e)
        out.append(value)


def _objects_to_calls(values: list[Any], fmt: str, raw: str) -> list["ParsedCall | FormatViolation"]:
    items: list[ParsedCall | FormatViolation] = []
    for v in values:
        for obj in v if isinstance(v, list) else [v]:
            items.append(_call_from_obj(obj, fmt, raw))
    return items


def _json_calls(body: str, fmt: str) -> list["ParsedCall | FormatViolation"]:
    """Calls from a body that must hold JSON call objects (after an explicit call marker)."""
    values, err = _json_values(body)
    items = _objects_to_calls(values, fmt, body)
    if err is not None:
        items.append(FormatViolation("malformed_json", fmt, f"not valid JSON: {err}", body))
    elif not values:
        items.append(FormatViolation("unparsable_call", fmt, "the call marker is followed by nothing", body))
    return items


# --------------------------------------------------------------------------- python-style calls


def _py_call(node: ast.expr, fmt: str, raw: str) -> "ParsedCall | FormatViolation":
    if not isinstance(node, ast.Call):
        return FormatViolation("unparsable_call", fmt, "expected a function call like name(arg=value)", raw)
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "call" and isinstance(func.value, ast.Name):
        name = func.value.id  # Llama 3 built-in style: brave_search.call(query=...)
    elif isinstance(func, ast.Name):
        name = func.id
    elif isinstance(func, ast.Attribute):
        name = ast.unparse(func)
    else:
        return FormatViolation("missing_name", fmt, "the call has no tool name", raw)
    if node.args:
        return FormatViolation(
            "bad_arguments_shape", fmt, f"{name}: positional arguments; pass every argument by name", raw
        )
    args: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            return FormatViolation("bad_arguments_shape", fmt, f"{name}: **kwargs are not allowed", raw)
        try:
            args[kw.arg] = ast.literal_eval(kw.value)
        except (ValueError, SyntaxError, TypeError):
            return FormatViolation("malformed_json", fmt, f"{name}: value of {kw.arg!r} is not a literal", raw)
    return ParsedCall(name=name, arguments=args, format=fmt, raw=raw)


def _python_calls(body: str, fmt: str) -> list["ParsedCall | FormatViolation"]:
    body = body.strip()
    if not body:
        return []
    try:
        tree = ast.parse(body, mode="exec")
    except SyntaxError as e:
        return [FormatViolation("unparsable_call", fmt, f"not a Python call: {e.msg}", body)]
    items: list[ParsedCall | FormatViolation] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Expr):
            items.append(FormatViolation("unparsable_call", fmt, "expected only call expressions", body))
            continue
        nodes = stmt.value.elts if isinstance(stmt.value, ast.List | ast.Tuple) else [stmt.value]
        items.extend(_py_call(n, fmt, ast.unparse(n)) for n in nodes)
    return items


# --------------------------------------------------------------------------- formats


def _xml_param_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _function_tag_calls(body: str, fmt: str) -> list["ParsedCall | FormatViolation"]:
    items: list[ParsedCall | FormatViolation] = []
    for m in _FUNCTION_TAG.finditer(body):
        name, inner = m.group(1), m.group(2)
        if "<parameter=" in inner:  # Qwen3-Coder XML parameters
            args = {p.group(1): _xml_param_value(p.group(2)) for p in _XML_PARAM.finditer(inner)}
            items.append(ParsedCall(name=name, arguments=args, format=fmt, raw=m.group(0)))
            continue
        if not inner.strip():
            items.append(ParsedCall(name=name, arguments={}, format=fmt, raw=m.group(0)))
            continue
        values, err = _json_values(inner)
        if err is not None or len(values) != 1:
            items.append(
                FormatViolation("malformed_json", fmt, f"arguments of {name!r} are not one JSON object", m.group(0))
            )
        else:
            items.append(_call_from_obj({"name": name, "arguments": values[0]}, fmt, m.group(0)))
    return items


def _hermes(text: str, reply: ParsedReply) -> str:
    items: list[ParsedCall | FormatViolation] = []
    for m in _HERMES.finditer(text):
        body = m.group(1)
        if body.lstrip().startswith("<function="):
            items.extend(_function_tag_calls(body, "hermes"))
        else:
            items.extend(_json_calls(body, "hermes"))
    reply._add("hermes", items)
    return _HERMES.sub("", text)


def _mistral(text: str, reply: ParsedReply) -> str:
    items: list[ParsedCall | FormatViolation] = []
    if _MISTRAL_NAMED.search(text):  # [TOOL_CALLS]name[ARGS]{...} (repeated)
        pos = 0
        for m in _MISTRAL_NAMED.finditer(text):
            if m.start() < pos:
                continue
            values, err = _json_values_first(text, m.end())
            if err is not None:
                items.append(
                    FormatViolation(
                        "malformed_json", "mistral", f"arguments of {m.group(1)!r}: {err}", text[m.start() :]
                    )
                )
                pos = len(text)
                continue
            value, pos = values
            items.append(_call_from_obj({"name": m.group(1), "arguments": value}, "mistral", text[m.start() : pos]))
        reply._add("mistral", items)
        return text[: text.index(_MISTRAL)]
    head, _, body = text.partition(_MISTRAL)
    reply._add("mistral", _json_calls(body, "mistral"))
    return head


def _json_values_first(text: str, start: int) -> tuple[tuple[Any, int], str | None]:
    i = start
    while i < len(text) and text[i].isspace():
        i += 1
    try:
        value, end = json.JSONDecoder().raw_decode(text, i)
    except json.JSONDecodeError as e:
        return (None, start), str(e)
    return (value, end), None


def _python_tag(text: str, reply: ParsedReply) -> str:
    head, _, body = text.partition(_PY_TAG)
    body = _LLAMA_END.split(body, 1)[0].strip()
    if body.startswith(("{", "[")):
        reply._add("llama_python_tag", _json_calls(body, "llama_python_tag"))
    else:
        reply._add("llama_python_tag", _python_calls(body, "llama_python_tag"))
    return head


def _granite(text: str, reply: ParsedReply) -> str:
    head, _, body = text.partition(_GRANITE)
    reply._add("granite", _json_calls(_LLAMA_END.split(body, 1)[0], "granite"))
    return head


def _functools(text: str, reply: ParsedReply) -> str:
    start = text.index(_FUNCTOOLS)
    (value, end), err = _json_values_first(text, start + len(_FUNCTOOLS) - 1)
    if err is not None:
        reply._add("functools", [FormatViolation("malformed_json", "functools", err, text[start:])])
        return text[:start]
    reply._add("functools", _objects_to_calls([value], "functools", text[start:end]))
    return text[:start] + text[end:]


def _deepseek(text: str, reply: ParsedReply) -> str:
    items: list[ParsedCall | FormatViolation] = []
    for m in _DS_CALL.finditer(text):
        inner = m.group(1)
        if _DS_SEP not in inner:
            items.append(FormatViolation("unparsable_call", "deepseek", "a call without the tool separator", inner))
            continue
        left, _, right = inner.partition(_DS_SEP)
        left = left.strip()
        if left == "function":  # V3: function<sep>name\n```json\n{...}\n```
            name, _, rest = right.partition("\n")
            fence = _FENCE.search(rest)
            body = fence.group(2) if fence else rest
        else:  # V3.1: name<sep>{...}
            name, body = left, right
        name = name.strip()
        values, err = _json_values(body)
        if err is not None or len(values) != 1:
            items.append(
                FormatViolation("malformed_json", "deepseek", f"arguments of {name!r} are not one JSON object", inner)
            )
        else:
            items.append(_call_from_obj({"name": name, "arguments": values[0]}, "deepseek", inner))
    reply._add("deepseek", items)
    return _DS_BLOCK.sub("", _DS_CALL.sub("", text))


def _glaive(text: str, reply: ParsedReply) -> str:
    items: list[ParsedCall | FormatViolation] = []
    for m in _GLAIVE.finditer(text):
        body = m.group(1)
        values, err = _json_values(body)
        if err is not None:
            fixed = _GLAIVE_STR_ARGS.sub(lambda g: g.group(1) + json.dumps(g.group(2)) + g.group(3), body)
            values, err = _json_values(fixed)
        if err is not None or not values:
            items.append(FormatViolation("malformed_json", "glaive", f"not valid JSON: {err}", body))
        else:
            items.extend(_objects_to_calls(values, "glaive", body))
    reply._add("glaive", items)
    return _GLAIVE.sub("", text)


def _fences(text: str, reply: ParsedReply) -> str:
    """Fenced blocks: json/untagged blocks holding call objects, tool_code/python blocks holding calls."""
    keep: list[str] = []
    pos = 0
    for m in _FENCE.finditer(text):
        lang, body = m.group(1).lower(), m.group(2).strip()
        items: list[ParsedCall | FormatViolation] = []
        fmt = "tool_code" if lang in ("tool_code", "python", "py", "tool_call") else "fenced_json"
        if fmt == "tool_code":
            if body.startswith(("{", "[")):
                values, err = _json_values(body)
                if err is None and _looks_like_call(values[0] if len(values) == 1 else values):
                    items = _objects_to_calls(values, fmt, body)
            else:
                items = _python_calls(body, fmt)
        elif lang in ("", "json", "jsonc", "json5"):
            values, err = _json_values(body)
            if err is None and values and all(_looks_like_call(v) for v in values):
                items = _objects_to_calls(values, fmt, body)
            elif err is not None and re.match(r'\s*\[?\s*\{\s*"(name|function)"', body):
                items = [FormatViolation("malformed_json", fmt, f"not valid JSON: {err}", body)]
        if items:
            reply._add(fmt, items)
            keep.append(text[pos : m.start()])
            pos = m.end()
    keep.append(text[pos:])
    return "".join(keep)


def _bare_json(text: str, reply: ParsedReply) -> str:
    body = text.strip()
    if not body.startswith(("{", "[")):
        return text
    values, err = _json_values(body)
    if err is None and values and all(_looks_like_call(v) for v in values):
        reply._add("bare_json", _objects_to_calls(values, "bare_json", body))
        return ""
    if err is not None and re.match(r'\s*\[?\s*\{\s*"(name|function|type)"', body):
        # clearly an attempt at a call object that is not valid JSON
        reply._add("bare_json", [FormatViolation("malformed_json", "bare_json", f"not valid JSON: {err}", body)])
        return ""
    return text


def parse_content(content: str | None) -> ParsedReply:
    """Calls written in the text of a reply (every non-OpenAI format)."""
    reply = ParsedReply()
    text = _THINK.sub("", content or "")
    if "<tool_call>" in text:
        text = _hermes(text, reply)
    if _MISTRAL in text:
        text = _mistral(text, reply)
    if _PY_TAG in text:
        text = _python_tag(text, reply)
    if _GRANITE in text:
        text = _granite(text, reply)
    if _DS_BEGIN in text:
        text = _deepseek(text, reply)
    if "<functioncall>" in text:
        text = _glaive(text, reply)
    if "<function=" in text:
        reply._add("llama_function_tag", _function_tag_calls(text, "llama_function_tag"))
        text = _FUNCTION_TAG.sub("", text)
    if _FUNCTOOLS in text:
        text = _functools(text, reply)
    if not reply.calls and not reply.violations and "```" in text:
        text = _fences(text, reply)
    if not reply.calls and not reply.violations:
        text = _bare_json(text, reply)
    reply.text = _LLAMA_END.sub("", text).strip()
    return reply


def parse_openai_tool_calls(tool_calls: list[Any]) -> ParsedReply:
    """The API's structured tool_calls: [{'id', 'type': 'function', 'function': {'name', 'arguments'}}]."""
    reply = ParsedReply()
    items: list[ParsedCall | FormatViolation] = []
    for tc in tool_calls:
        raw = json.dumps(tc, ensure_ascii=False, default=str)
        if not isinstance(tc, dict) or not isinstance(tc.get("function"), dict):
            items.append(FormatViolation("unparsable_call", "openai", "a tool call without a function", raw))
            continue
        items.append(_call_from_obj(tc["function"], "openai", raw, call_id=tc.get("id")))
    reply._add("openai", items)
    return reply


def parse_reply(message: dict[str, Any]) -> ParsedReply:
    """Every call in one assistant message: structured tool_calls first, else calls written in the content.

    `message` is `ChatBackend.chat`'s reply ({'content', 'tool_calls'?}). Structured calls win;
    the content's text (reasoning and markup removed) is kept as `text` either way.
    """
    content = message.get("content") or ""
    if message.get("tool_calls"):
        reply = parse_openai_tool_calls(list(message["tool_calls"]))
        reply.text = _THINK.sub("", content).strip()
        return reply
    return parse_content(content)
