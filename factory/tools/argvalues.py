"""Argument discovery (pure): which values may fill a tool's inputs, for probes and chain starts.

EDGE's Table 17 asks a model for the arguments of a first call; here rules do that job, and a
model (the `source_arguments` role) may add proposals where the project maps one. Candidates
of one input come from, in this order of preference:

- ``schema``: ``example``/``examples``/``default``/``const``/``enum`` of its JSON Schema;
- ``description``: literals its description quotes, "e.g."/"for example"/"such as" lists, IANA
  timezones and ISO dates written there;
- ``server``: paths on the MCP server's own command line (``--repository /srv/repo``) for an
  input that takes a path;
- ``observed``: values other tools returned in earlier probe rounds (a listing's ids and names
  feed ``{id}`` and ``*_name`` inputs), matched by value type where both sides are typed
  (`factory.semtypes.ValueTypes`) and by name otherwise; paths listed in output texts
  (``list_allowed_directories``, ``[FILE] name`` lines) feed path inputs;
- ``convention``: what an input of a known kind takes whatever the server (SQL statements for
  an SQL input, with harvested table names once a listing returned them; an IANA zone; an
  ``HH:MM`` time its description asks for; ``HEAD`` for a git revision);
- ``made_up``: for an input that takes objects (``create_entities(entities: [{name, entityType,
  observations}]``), a small object built from its schema (`factory.tools.made_values`); not weak,
  so a creating tool is probed in the first round and the readers after it see what it made;
- ``generated`` (weak): a value made from ``format``, ``pattern`` or ``minimum``/``maximum``.

Every candidate is typed against its input (`coerce`): an enum (or a closed list of quoted
literals such as "'local', 'remote' or 'all'") never receives a free value, an integer input
never a non-integer string, a pattern or format must match, an SQL input takes statements only.

A tool is *ready* when every required input has a non-weak candidate; probe rounds probe the
ready tools first, so round 2 uses what round 1 returned (`ProbePlanner`), and a tool whose
probes failed is tried once more when new values for it appeared. `missing_values` names the
required inputs without any candidate: "no value for X" in the probe report.
"""

import ast
import json
import random
import re
import shlex
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from factory.tools.identifiers import singular, words
from factory.tools.made_values import object_values
from factory.tools.spec import ToolSpec


class TypeLookup(Protocol):
    """What argument discovery reads of the value types (`factory.semtypes.ValueTypes`; this module
    sits below semtypes in the layering, so it names the three methods instead of importing it)."""

    def param_type(self, tid: str, name: str) -> str | None: ...

    def field_type(self, tid: str, name: str) -> str | None: ...

    def accepts(self, param_type: str | None, value_type: str | None) -> str | None: ...


# entity words that name the same thing (semtypes.ALIASES, the ones a tool name may use)
ALIASES = {"carrier": "airline", "carriers": "airline", "plane": "aircraft", "tz": "timezone"}


SOURCES = ("schema", "description", "server", "observed", "convention", "made_up", "model", "generated")
WEAK = frozenset({"generated"})
NO_SUCCESS_MISSING = "no value for"


def _dumps(v: Any) -> str:
    return json.dumps(v, sort_keys=True, ensure_ascii=False, default=str)


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z가-힣]", "", name.lower())


@dataclass(frozen=True)
class Candidate:
    value: Any
    source: str


# --------------------------------------------------------------------------- schema helpers


def effective_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema of a value: a nullable ``anyOf``/``oneOf`` [X, null] is X (its own keys kept)."""
    out = dict(schema)
    for key in ("anyOf", "oneOf"):
        alts = schema.get(key)
        if isinstance(alts, list):
            real = [a for a in alts if isinstance(a, Mapping) and a.get("type") != "null"]
            if len(real) == 1:
                out.pop(key)
                out = {**real[0], **out}
    t = out.get("type")
    if isinstance(t, list):
        real_t = [x for x in t if x != "null"]
        out["type"] = real_t[0] if len(real_t) == 1 else real_t
    return out


def _closed_set(schema: Mapping[str, Any]) -> list[Any] | None:
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return list(schema["enum"])
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, Mapping):
        return _closed_set(effective_schema(items))
    return None


def schema_values(schema: Mapping[str, Any]) -> list[Any]:
    """``example``, ``default``, ``examples``, ``const`` and ``enum`` values, distinct, in that order."""
    out: list[Any] = []
    for k in ("example", "default"):
        if k in schema and schema[k] is not None:
            out.append(schema[k])
    ex = schema.get("examples")
    out += list(ex) if isinstance(ex, list) else []
    if "const" in schema:
        out.append(schema["const"])
    out += list(schema.get("enum") or [])
    return list({_dumps(v): v for v in out}.values())


# --------------------------------------------------------------------------- kinds of inputs

_IANA = re.compile(r"\b(?:UTC|(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)"
                   r"/[A-Z][A-Za-z_+-]+(?:/[A-Z][A-Za-z_+-]+)?)\b")  # fmt: skip
_ISO_DATE = re.compile(r"\b(?:19|20)\d{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:T\d{2}:\d{2}(?::\d{2})?Z?)?\b")
_SQL_START = re.compile(r"^\s*(select|with|show|describe|pragma|explain|create|insert|update|delete)\b", re.I)
_PATH_WORDS = {"path", "paths", "dir", "dirs", "directory", "directories", "folder", "file", "files", "filename"}
_TZ_WORDS = {"timezone", "tz", "zone", "timezones"}
_SQL_WORDS = {"sql", "query", "statement", "stmt"}
_GLOB_WORDS = {"pattern", "patterns", "glob", "globs", "wildcard"}
_GLOB_TEXT = re.compile(r"\bglob|\bwildcard", re.I)
_GLOB_CHARS = re.compile(r"[*?\[]")
_REVISION_WORDS = {"revision", "rev", "ref", "commit", "sha", "target"}
_FORMAT_TOKENS = [
    (re.compile(r"\bHH:MM:SS\b"), "12:00:00"),
    (re.compile(r"\bHH:MM\b"), "12:00"),
    (re.compile(r"\bYYYY-MM-DD\b", re.I), "2024-01-15"),
    (re.compile(r"\bYYYYMMDD\b", re.I), "20240115"),
]
TIMEZONES = ["UTC", "America/New_York", "Europe/London"]


def _text(schema: Mapping[str, Any]) -> str:
    return " ".join(str(schema.get(k) or "") for k in ("description", "title"))


def param_kind(tool: ToolSpec, name: str, schema: Mapping[str, Any]) -> str | None:
    """What an input takes beyond its JSON type: sql, timezone, glob, path, date, date-time, time,
    email, uri, uuid (None: nothing special). A glob is an input named like a pattern (``pattern``,
    ``glob``) whose own or tool's description speaks of glob/wildcard patterns."""
    ws = set(words(name))
    desc = _text(schema)
    low = desc.lower()
    tool_text = f"{tool.name} {tool.description}"
    fmt = str(effective_schema(schema).get("format") or "")
    if fmt in ("date", "date-time", "time", "email", "uuid"):
        return fmt
    if fmt in ("uri", "url", "uri-reference", "iri"):
        return "uri"
    if "sql" in ws or (ws & _SQL_WORDS and re.search(r"\bsql\b|\bselect\b|\bstatement\b", f"{desc} {tool_text}", re.I)):
        return "sql"
    if ws & _TZ_WORDS or re.search(r"\biana\b|\btime ?zone\b", low):
        return "timezone"
    if (
        ws & _GLOB_WORDS
        and not ws & {"exclude", "excluded", "ignore", "skip"}  # what to leave out: no probe value
        and (ws & {"glob", "globs"} or _GLOB_TEXT.search(f"{desc} {tool_text}"))
    ):
        return "glob"
    if ws & _PATH_WORDS or re.search(r"\b(?:path|directory|folder)\b", low):
        return "path"
    return None


def kind_ok(kind: str | None, v: Any) -> bool:
    if kind is None:
        return True
    if not isinstance(v, str):
        return False
    s = v.strip()
    if kind == "sql":
        return bool(_SQL_START.match(s))
    if kind == "timezone":
        return bool(_IANA.fullmatch(s))
    if kind == "glob":  # a wildcard pattern (a bare name would be a lookup, not a search)
        return bool(_GLOB_CHARS.search(s)) and not any(c.isspace() for c in s)
    if kind == "path":
        return bool(s) and not any(c.isspace() for c in s.strip("/")) and ("/" in s or "\\" in s or "." in s)
    if kind == "date":
        return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", s))
    if kind == "date-time":
        return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?", s))
    if kind == "time":
        return bool(re.fullmatch(r"\d{2}:\d{2}(:\d{2})?", s))
    if kind == "email":
        return bool(re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", s))
    if kind == "uri":
        return bool(re.match(r"^[a-z][a-z0-9+.-]*:", s, re.I))
    if kind == "uuid":
        return bool(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", s, re.I))
    return True


# --------------------------------------------------------------------------- typing a value


def coerce(value: Any, schema: Mapping[str, Any], kind: str | None = None) -> tuple[bool, Any]:
    """(True, the value as the input takes it) or (False, None): enum/const membership, JSON type,
    bounds, pattern and the input's kind are checked; a digit string fills an integer input."""
    s = effective_schema(schema)
    closed = _closed_set(s) if s.get("type") != "array" else None
    if closed is not None:
        for c in closed:
            if c == value or (not isinstance(c, bool) and str(c) == str(value)):
                return True, c
        return False, None
    t = s.get("type")
    if t == "array":
        items = effective_schema(s.get("items") or {})
        vals = value if isinstance(value, list) else [value]
        out = []
        for v in vals:
            ok, cv = coerce(v, items, kind)
            if not ok:
                return False, None
            out.append(cv)
        return (True, out) if out else (False, None)
    if t == "object":
        return (True, value) if isinstance(value, dict) else (False, None)
    if t == "boolean":
        if isinstance(value, bool):
            return True, value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return True, value.lower() == "true"
        return False, None
    if t in ("integer", "number"):
        num: Any = None
        if isinstance(value, bool):
            return False, None
        if isinstance(value, int):
            num = value
        elif isinstance(value, float):
            num = int(value) if value.is_integer() and t == "integer" else value
        elif isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            num = int(value.strip())
        elif isinstance(value, str) and t == "number" and re.fullmatch(r"-?\d+\.\d+", value.strip()):
            num = float(value)
        if num is None or (t == "integer" and not isinstance(num, int)):
            return False, None
        lo, hi = s.get("minimum"), s.get("maximum")
        if isinstance(lo, int | float) and not isinstance(lo, bool) and num < lo:
            return False, None
        if isinstance(hi, int | float) and not isinstance(hi, bool) and num > hi:
            return False, None
        return True, num
    # strings (and untyped inputs)
    if isinstance(value, bool) or isinstance(value, dict | list) or value is None:
        return False, None
    if isinstance(value, int | float):
        if t != "string" and t is not None:
            return False, None
        if kind is not None:
            return False, None
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        return False, None
    if not kind_ok(kind, value):
        return False, None
    pattern = s.get("pattern")
    if isinstance(pattern, str):
        try:
            if not re.search(pattern, value):
                return False, None
        except re.error:
            pass
    for bound, cmp in (("minLength", lambda n, b: n >= b), ("maxLength", lambda n, b: n <= b)):
        b = s.get(bound)
        if isinstance(b, int) and not cmp(len(value), b):
            return False, None
    return True, value


# --------------------------------------------------------------------------- descriptions

_QUOTED = re.compile(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"|`([^`\n]{1,80})`|‘([^’\n]{1,80})’|“([^”\n]{1,80})”")
_EXAMPLE_LIST = re.compile(r"(?:\be\.g\.|\beg\.|\bfor example\b|\bsuch as\b|\bfor instance\b|예:|예시:|\bex\.)\s*:?,?\s*"
                           r"([^)\n;]+)", re.I)  # fmt: skip
# "Use tag1, tag2, tag3 for testing." / "Use user1 for testing": values a document offers to try
_TESTING_LIST = re.compile(
    r"\b(?:use|try)\s+([^.;\n]{1,120}?)\s+(?:for testing|to test|when testing|for a test)\b", re.I
)
_CLOSED_HINT = re.compile(r"\bwhether\b|\bone of\b|\beither\b|\bor\b|\bmust be\b|\ballowed\b|\bvalid values\b", re.I)
_EXAMPLE_HINT = re.compile(r"\be\.g\.|\beg\.|\bexample\b|\bsuch as\b|\bfor instance\b|예:|예시", re.I)


def quoted_literals(text: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(text)]


def described_values(text: str) -> list[str]:
    """Values a description writes down: quoted literals, "e.g." list items, IANA zones, ISO dates."""
    out: list[str] = list(quoted_literals(text))
    for m in _EXAMPLE_LIST.finditer(text):
        listed = re.split(r"\.\s", m.group(1))[0]  # the list ends with its sentence
        for item in re.split(r",|\bor\b|\band\b|/(?=\s)|、", listed):
            item = item.strip().strip("'\"`‘’“” .")
            if item and len(item) <= 60 and len(item.split()) <= 4:
                out.append(item)
    out += testing_values(text)
    out += _IANA.findall(text)
    out += _ISO_DATE.findall(text)
    return list(dict.fromkeys(v for v in out if v))


def testing_values(text: str) -> list[str]:
    """The values a description offers for testing: "Use tag1, tag2, tag3 for testing" → tag1, tag2, tag3."""
    out: list[str] = []
    for m in _TESTING_LIST.finditer(text):
        for item in re.split(r",|\bor\b|\band\b", m.group(1)):
            item = item.strip().strip("'\"`‘’“” ")
            if item and len(item) <= 60 and len(item.split()) == 1:
                out.append(item)
    return out


def tool_described_values(tool: ToolSpec, param: str) -> list[str]:
    """Values the tool's own description offers for testing ("Use tag1, tag2, tag3 for testing") that
    name input `param`: a value's word stem is a word of the input's name, singular (tag1 → `tags`),
    or begins or ends it (user1 → `username`)."""
    pws = {singular(w) for w in words(param)}
    key = _norm(param)
    out = []
    for v in testing_values(tool.description or ""):
        stems = [w for w in words(v) if not w.isdigit() and len(w) >= 3]
        if any(w in pws or key.startswith(w) or key.endswith(w) for w in stems):
            out.append(v)
    return out


def described_closed_set(text: str) -> list[str] | None:
    """Quoted literals that read as the only allowed values ("'local', 'remote' or 'all'")."""
    lits = list(dict.fromkeys(quoted_literals(text)))
    if len(lits) >= 2 and _CLOSED_HINT.search(text) and not _EXAMPLE_HINT.search(text):
        return lits
    return None


# --------------------------------------------------------------------------- generated values


def _gen_pattern(pattern: str) -> str | None:
    """A short string matching a simple regex (literals, classes, repeats, groups); None otherwise."""
    import re._parser as sre  # the stdlib's own regex parser (Python >= 3.11)

    try:
        parsed = sre.parse(pattern)
    except (re.error, ValueError, TypeError):
        return None

    def one_of(items: list) -> str | None:
        for op, av in items:
            name = str(op)
            if name == "LITERAL":
                return chr(av)
            if name == "RANGE":
                return chr(av[0])
            if name == "CATEGORY":
                c = str(av)
                return {"CATEGORY_DIGIT": "1", "CATEGORY_WORD": "a", "CATEGORY_SPACE": " "}.get(c, "a")
            if name == "NEGATE":
                return None
        return None

    def gen(seq: Any) -> str | None:
        out = []
        for op, av in seq:
            name = str(op)
            if name == "LITERAL":
                out.append(chr(av))
            elif name == "NOT_LITERAL":
                out.append("a" if av != ord("a") else "b")
            elif name == "ANY":
                out.append("a")
            elif name == "IN":
                ch = one_of(av)
                if ch is None:
                    return None
                out.append(ch)
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                lo, hi, sub = av
                n = lo if lo > 0 else 1 if hi != 0 else 0
                piece = gen(sub)
                if piece is None:
                    return None
                out.append(piece * min(n, 64))
            elif name == "SUBPATTERN":
                piece = gen(av[-1])
                if piece is None:
                    return None
                out.append(piece)
            elif name == "BRANCH":
                piece = gen(av[1][0])
                if piece is None:
                    return None
                out.append(piece)
            elif name == "AT":
                continue
            else:
                return None
        return "".join(out)

    text = gen(parsed)
    if text is None:
        return None
    try:
        return text if re.search(pattern, text) else None
    except re.error:
        return None


_FORMAT_VALUES = {
    "date": "2024-01-15",
    "date-time": "2024-01-15T12:00:00Z",
    "time": "12:00:00",
    "email": "probe@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": str(uuid.UUID(int=0x4000 << 64 | 0x8000 << 48, version=4)),
    "ipv4": "127.0.0.1",
    "hostname": "example.com",
}


def generated_values(schema: Mapping[str, Any]) -> list[Any]:
    """Weak candidates from ``format``, ``pattern`` and bounds (integers/numbers/booleans)."""
    s = effective_schema(schema)
    t = s.get("type")
    out: list[Any] = []
    fmt = s.get("format")
    if isinstance(fmt, str) and fmt in _FORMAT_VALUES:
        out.append(_FORMAT_VALUES[fmt])
    if isinstance(s.get("pattern"), str) and (g := _gen_pattern(s["pattern"])) is not None:
        out.append(g)
    if t in ("integer", "number"):
        lo = s.get("minimum")
        if isinstance(s.get("exclusiveMinimum"), int | float) and not isinstance(s.get("exclusiveMinimum"), bool):
            lo = s["exclusiveMinimum"] + 1
        hi = s.get("maximum")
        if isinstance(lo, int | float) and not isinstance(lo, bool):
            out.append(lo)
        elif isinstance(hi, int | float) and not isinstance(hi, bool):
            out.append(min(hi, 1) if hi >= 1 else hi)
        else:
            out.append(1)
    if t == "boolean":
        out += [True, False]
    return out


# --------------------------------------------------------------------------- observed values


def _records_in_text(text: str) -> list[dict[str, Any]]:
    """Records a text holds as JSON or a Python literal (never evaluated beyond literals)."""
    s = text.strip()
    if not s or s[0] not in "[{(":
        return []
    for parse in (json.loads, ast.literal_eval):
        try:
            body = parse(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        items = body if isinstance(body, list | tuple) else [body]
        return [r for r in items if isinstance(r, dict)]
    return []


_ABS_PATH = re.compile(r"(?<![\w.:/])(/(?:[\w.@+~-]+/)*[\w.@+~-]+/?)")
_LISTED = re.compile(r"^\s*\[(FILE|DIR)\]\s+(.+?)\s*$", re.M)


def paths_in_text(text: str, base: str | None = None) -> list[str]:
    """Absolute paths written in a text, and ``[FILE] name`` / ``[DIR] name`` entries under `base`."""
    out = [p for p in _ABS_PATH.findall(text) if len(p) > 1]
    if base:
        for _kind, name in _LISTED.findall(text):
            out.append(f"{base.rstrip('/')}/{name}")
    return list(dict.fromkeys(out))


def listed_lines(text: str) -> list[str]:
    """A text that is a short listing (one short token per line, an optional `*` marker): its items."""
    lines = [ln.strip().lstrip("*").strip() for ln in text.splitlines() if ln.strip()]
    if not 1 <= len(lines) <= 100 or any(len(ln) > 80 or " " in ln or ":" in ln for ln in lines):
        return []
    return lines


PATH_KINDS = ("file", "directory")
_WRONG_KIND = (
    (re.compile(r"\beisdir\b|is a directory|illegal operation on a directory", re.I), "directory"),
    (re.compile(r"\benotdir\b|not a directory", re.I), "file"),
)


def entry_kind(record: Mapping[str, Any]) -> str | None:
    """``file`` or ``directory`` for a listing entry (``{type: file|directory, ...}``: `observed`'s
    ``[FILE]``/``[DIR]`` records, a JSON directory tree), else None."""
    kind = record.get("type") if isinstance(record, Mapping) else None
    return kind if kind in PATH_KINDS else None


def wrong_path_kind(detail: str) -> str | None:
    """The kind the path of a failed call turned out to be, from its error (EISDIR → ``directory``,
    ENOTDIR → ``file``), else None."""
    for pattern, kind in _WRONG_KIND:
        if pattern.search(detail or ""):
            return kind
    return None


def input_path_kind(evidence: Mapping[str, int]) -> str | None:
    """The kind of path an input takes from the evidence `ValuePool.note_path_call` gathered: ``file``
    when calls succeeded with files or failed because a directory was given, and never succeeded with
    a directory (``directory`` the reverse); None when both kinds worked or nothing is known."""
    takes = {k for k in PATH_KINDS if evidence.get(f"ok:{k}")}
    other = {"file": "directory", "directory": "file"}
    takes |= {other[k] for k in PATH_KINDS if evidence.get(f"wrong:{k}")}
    refuses = {k for k in PATH_KINDS if evidence.get(f"wrong:{k}")}
    kinds = takes - refuses
    return next(iter(kinds)) if len(kinds) == 1 and len(takes) == 1 else None


def tool_entity_words(tool_name: str) -> set[str]:
    """Nouns of a tool's name, singular (``list_tables`` → {list, table}; ``git_branch`` → {git, branch})."""
    return {singular(w) for w in words(tool_name)}


class ValuePool:
    """Values observed in tool outputs: by normalized field name (`values`), by producing tool and
    field (`by_tool`, for typed matching), and paths seen in output texts (`paths`)."""

    def __init__(self, per_field: int = 20):
        self.per_field = per_field
        self.values: dict[str, list[Any]] = {}
        self.by_tool: dict[str, dict[str, list[Any]]] = {}
        self.paths: list[str] = []
        self.inputs: dict[str, list[str]] = {}  # tool → the inputs it was called with
        self.path_kinds: dict[str, str] = {}  # path → file | directory (a listing's entry type, a listed folder)
        # tool → path input → kind → how often a call with a path of that kind succeeded (`ok:<kind>`) or failed
        # because the path was of the other kind (`wrong:<kind>`: EISDIR says the path was a directory)
        self.path_evidence: dict[str, dict[str, dict[str, int]]] = {}

    # ------------------------------------------------------------ adding
    def _keep(self, bucket: list[Any], v: Any) -> bool:
        if v not in bucket and len(bucket) < self.per_field:
            bucket.append(v)
            return True
        return False

    def add_records(
        self, records: list[dict[str, Any]], tool: str | None = None, args: Mapping[str, Any] | None = None
    ) -> int:
        """Add the scalar values of `records` (returned by `tool` called with `args`); returns how
        many were new. A record that is only a text (``{"text": ...}``) is read for embedded
        records, listed items and paths."""
        new = 0
        if tool and args:
            known = self.inputs.setdefault(tool, [])
            known += [_norm(a) for a in args if _norm(a) not in known]
        base = next((v for k, v in (args or {}).items() if isinstance(v, str) and "path" in k.lower()), None)
        for rec in records:
            if set(rec) == {"text"} and isinstance(rec["text"], str):
                text = rec["text"]
                new += self.add_records(_records_in_text(text), tool, None)
                for p in paths_in_text(text, base):
                    new += self._keep(self.paths, p)
                if tool and (items := listed_lines(text)):
                    field = "|".join(sorted(tool_entity_words(tool.rsplit("/", 1)[-1])))
                    for it in items:
                        new += self._keep(self.by_tool.setdefault(tool, {}).setdefault(f"lines:{field}", []), it)
                continue
            for k, v in rec.items():
                if v is None or isinstance(v, dict | list) or (isinstance(v, str) and not v.strip()):
                    continue
                if v == "<KEY>":
                    continue
                new += self._keep(self.values.setdefault(_norm(k), []), v)
                if tool:
                    self._keep(self.by_tool.setdefault(tool, {}).setdefault(k, []), v)
                if isinstance(v, str) and v.startswith("/") and ("path" in k.lower() or "dir" in k.lower()):
                    self._keep(self.paths, v)
            if (kind := entry_kind(rec)) is not None and isinstance(rec.get("path"), str):
                self.path_kinds.setdefault(rec["path"], kind)
                if base:  # the folder a listing listed
                    self.path_kinds.setdefault(base, "directory")
        listed = _LISTED.findall("\n".join(r["text"] for r in records if isinstance(r.get("text"), str)))
        for kind, name in listed:
            if base:
                self.path_kinds.setdefault(f"{base.rstrip('/')}/{name}", "directory" if kind == "DIR" else "file")
        return new

    # ------------------------------------------------------------ path kinds
    def note_path_call(
        self, tool: str, args: Mapping[str, Any], ok: bool, detail: str = "", texts: Iterable[str] = ()
    ) -> None:
        """What one call says about the kind of path its path inputs take: a success with a path of a
        known kind (`ok:file`), or a wrong-kind failure (EISDIR: the path given was a directory, so
        the input takes files; ENOTDIR: the reverse), also one that a successful answer reports for
        one of several paths (``/a/sub: Error - EISDIR: ...`` in read_multiple_files' text); the
        failing path's own kind is learnt too."""
        lines = [ln for t in texts for ln in str(t).splitlines() if wrong_path_kind(ln)] if ok else []
        for p, v in (args or {}).items():
            vals = [x for x in (v if isinstance(v, list) else [v]) if isinstance(x, str) and x.startswith("/")]
            if not vals:
                continue
            ev = self.path_evidence.setdefault(tool, {}).setdefault(p, {})
            for x in vals:
                said = next((ln for ln in lines if x in ln), None)  # this path's own error inside an answer
                wrong = wrong_path_kind(said) if said else (None if ok or len(vals) > 1 else wrong_path_kind(detail))
                if wrong is not None:
                    self.path_kinds.setdefault(x, wrong)
                    ev[f"wrong:{wrong}"] = ev.get(f"wrong:{wrong}", 0) + 1
                elif ok and (k := self.path_kinds.get(x)) is not None:
                    ev[f"ok:{k}"] = ev.get(f"ok:{k}", 0) + 1

    def input_path_kinds(self) -> dict[str, dict[str, str]]:
        """tool → path input → the kind of path it takes, for the inputs whose kind the calls showed."""
        out: dict[str, dict[str, str]] = {}
        for tool, params in sorted(self.path_evidence.items()):
            for p in sorted(params):
                if (k := self.path_kind(tool, p)) is not None:
                    out.setdefault(tool, {})[p] = k
        return out

    def path_kind(self, tool: str, param: str) -> str | None:
        """The kind of path an input takes (`input_path_kind` of what the calls showed), None when unknown."""
        return input_path_kind((self.path_evidence.get(tool) or {}).get(param) or {})

    # ------------------------------------------------------------ checkpoints
    def to_json(self) -> dict[str, Any]:
        return {
            "values": self.values,
            "by_tool": self.by_tool,
            "paths": self.paths,
            "inputs": self.inputs,
            "path_kinds": self.path_kinds,
            "path_evidence": self.path_evidence,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ValuePool":
        pool = cls()
        if "values" in data and isinstance(data.get("values"), dict):
            pool.values = {k: list(v) for k, v in data["values"].items()}
            pool.by_tool = {t: {f: list(v) for f, v in fs.items()} for t, fs in (data.get("by_tool") or {}).items()}
            pool.paths = list(data.get("paths") or [])
            pool.inputs = {t: list(v) for t, v in (data.get("inputs") or {}).items()}
            pool.path_kinds = dict(data.get("path_kinds") or {})
            pool.path_evidence = {
                t: {p: dict(ev) for p, ev in ps.items()} for t, ps in (data.get("path_evidence") or {}).items()
            }
        else:  # an older checkpoint: the name → values map alone
            pool.values = {k: list(v) for k, v in data.items()}
        return pool

    def size(self) -> int:
        return (
            sum(len(v) for v in self.values.values())
            + len(self.paths)
            + sum(len(v) for fs in self.by_tool.values() for f, v in fs.items() if f.startswith("lines:"))
        )

    # ------------------------------------------------------------ looking up
    def lookup(
        self,
        param: str,
        schema: Mapping[str, Any],
        *,
        tool: ToolSpec | None = None,
        types: TypeLookup | None = None,
        kind: str | None = None,
    ) -> list[Any]:
        """Observed values that may fill input `param` (of `tool`), typed (see the module doc)."""
        key = _norm(param)
        s = effective_schema(schema)
        found: list[Any] = []
        tid = tool.tool_id if tool is not None else None
        pws = [w for w in words(param)]
        ent = {singular(w) for w in pws if w not in ("name", "names", "id", "ids", "path", "key", "code", "nm")}
        # 1. typed matches: both sides typed and accepted; a typed mismatch is never used
        mismatched: set[tuple[str, str]] = set()
        if types and tid is not None and types.param_type(tid, param):
            pt = types.param_type(tid, param)
            for src, fields in self.by_tool.items():
                for f, vals in fields.items():
                    ft = types.field_type(src, f)
                    verdict = types.accepts(pt, ft)
                    if verdict in ("equal", "subtype"):
                        found += vals
                    elif verdict == "mismatch":
                        mismatched.add((src, f))
        # 2. by name: the same field name anywhere; else a field whose name ends the input's (or
        # the reverse), where a bare role word (`name`, `id`) counts only from a tool whose name
        # names the input's entity (`id` of list_pets fills `petId`; `name` of git_branch, `branch_name`)
        if key in self.values:
            found += self._unless(key, self.values[key], mismatched)
        else:
            named: list[Any] = []
            other: list[Any] = []
            attributed: set[str] = set()
            for src, fields in self.by_tool.items():
                # a tool called with this very input (describe_table with table_name) returns
                # something else under `name` (its columns)
                of_entity = self._names_entity(src, ent) and key not in self.inputs.get(src, [])
                for f, vals in fields.items():
                    if f.startswith("lines:"):
                        continue
                    nf = _norm(f)
                    attributed.add(nf)
                    if not self._name_match(key, nf) or (nf in _ROLE_FIELDS and ent and not of_entity):
                        continue
                    if (src, f) not in mismatched:
                        (named if of_entity else other).extend(vals)
            for field, vals in self.values.items():  # values added without their tool
                if field not in attributed and self._name_match(key, field) and not (field in _ROLE_FIELDS and ent):
                    other.extend(vals)
            found += named or other
        # 3. listed lines of a tool whose name names the input's entity (git_branch → branch_name)
        for fields in self.by_tool.values():
            for f, vals in fields.items():
                if f.startswith("lines:") and ent and ent <= set(f.removeprefix("lines:").split("|")):
                    found += vals
        # 4. search inputs: the first word of observed names and titles
        if not found and key in _SEARCH_PARAMS:
            for field, vals in self.values.items():
                if "name" in field or "title" in field or "nm" == field[-2:]:
                    found += [str(v).split()[0] for v in vals if isinstance(v, str) and v.split()]
        if kind == "path":
            found = self.paths + found
        elif kind in ("timezone", "date"):  # values of the kind, whatever field returned them
            found += [v for vals in self.values.values() for v in vals if kind_ok(kind, v)]
        out: list[Any] = []
        for v in found:
            ok, cv = coerce(v, s, kind)
            if ok and cv not in out:
                out.append(cv)
        return out

    def _unless(self, field: str, vals: list[Any], mismatched: set[tuple[str, str]]) -> list[Any]:
        if not mismatched:
            return vals
        bad = {_dumps(v) for src, f in mismatched if _norm(f) == field for v in self.by_tool[src][f]}
        return [v for v in vals if _dumps(v) not in bad]

    @staticmethod
    def _name_match(key: str, field: str) -> bool:
        if len(key) >= 3 and len(field) >= 3 and (field.endswith(key) or key.endswith(field)):
            return True
        return field in _ROLE_FIELDS and key.endswith(field) and key != field

    @staticmethod
    def _names_entity(tool: str, ent: set[str]) -> bool:
        """The tool's name names one of the entities `ent` (aliases count: carrier ~ airline)."""
        if not ent:
            return False
        ent = ent | {ALIASES.get(e, e) for e in ent}
        named = tool_entity_words(tool.rsplit("/", 1)[-1])
        if named & _SCHEMA_TOOL_WORDS:  # describe_table / get_schema list a table's columns
            named = named | {"column", "field"}
        return bool(ent & (named | {ALIASES.get(w, w) for w in named}))


_SCHEMA_TOOL_WORDS = {"describe", "schema", "column"}
_ROLE_FIELDS = {"id", "name", "key", "code", "title", "nm", "cd"}
_SEARCH_PARAMS = {"q", "query", "name", "keyword", "search", "title", "term"}


# --------------------------------------------------------------------------- conventions


def server_paths(tool: ToolSpec, param: str) -> list[str]:
    """Absolute paths on the MCP server's command line; those after a flag that shares a word
    stem with `param` (``--repository`` for ``repo_path``) first; the command itself left out."""
    if tool.source.kind != "mcp":
        return []
    try:
        argv = shlex.split(tool.source.locator)
    except ValueError:
        argv = tool.source.locator.split()
    stems = {w[:4] for w in words(param) if len(w) >= 3 and w not in _PATH_WORDS}
    first: list[str] = []
    rest: list[str] = []
    for i, tok in enumerate(argv[1:], start=1):
        val = tok.split("=", 1)[1] if tok.startswith("-") and "=" in tok else tok
        if not val.startswith("/") or val == argv[0]:
            continue
        flag = tok.split("=", 1)[0] if tok.startswith("-") else (argv[i - 1] if argv[i - 1].startswith("-") else "")
        flag_stems = {w[:4] for w in words(flag)}
        (first if stems & flag_stems else rest).append(val)
    return list(dict.fromkeys(first + rest))


def _sql_dialect(tool: ToolSpec) -> str:
    text = f"{tool.platform} {tool.name} {tool.description} {tool.source.locator}".lower()
    for d in ("duckdb", "sqlite", "postgres", "mysql"):
        if d in text:
            return d
    return "generic"


_LIST_TABLES = {
    "sqlite": "SELECT name FROM sqlite_master WHERE type='table'",
    "duckdb": "SELECT table_name FROM information_schema.tables",
    "postgres": "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
    "mysql": "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()",
}


def sql_statements(tool: ToolSpec, schema: Mapping[str, Any], tables: list[str]) -> list[str]:
    """Statements an SQL input of `tool` accepts: reading ones (a table listing of the dialect, a
    look into harvested tables, ``SELECT 1``), a ``CREATE TABLE IF NOT EXISTS`` for a tool that
    only creates tables, a no-op ``DELETE ... WHERE 1 = 0`` for one that only writes."""
    text = f"{tool.name} {tool.description} {_text(schema)}"
    safe = [t for t in tables if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", t)]
    if re.search(r"\bcreate table\b", text, re.I):
        return ["CREATE TABLE IF NOT EXISTS factory_probe (id INTEGER PRIMARY KEY, note TEXT)"]
    reads = bool(re.search(r"\bselect\b", text, re.I))
    if not reads and re.search(r"\b(insert|update|delete)\b", text, re.I):
        return [f"DELETE FROM {t} WHERE 1 = 0" for t in safe[:3]]
    dialect = _sql_dialect(tool)
    out = [_LIST_TABLES[dialect]] if dialect in _LIST_TABLES else []
    out += [f"SELECT * FROM {t} LIMIT 5" for t in safe[:3]]
    out.append("SELECT 1")
    return out


def convention_values(tool: ToolSpec, param: str, schema: Mapping[str, Any], kind: str | None, pool: ValuePool) -> list:
    if kind == "sql":
        tables = [
            str(v)
            for v in pool.lookup("table_name", {"type": "string"}) + pool.lookup("table", {"type": "string"})
            if isinstance(v, str)
        ]
        return sql_statements(tool, schema, list(dict.fromkeys(tables)))
    if kind == "timezone":
        return list(TIMEZONES)
    desc = _text(schema)
    for rx, v in _FORMAT_TOKENS:
        if rx.search(desc):
            return [v]
    gitty = "git" in f"{tool.platform} {tool.name}".lower()
    if gitty and set(words(param)) & _REVISION_WORDS:
        return ["HEAD"]
    return []


_GLOB_TAIL = re.compile(r"\*\.([A-Za-z0-9]{1,8})$")  # a template's file-name part: `*.ext`, `**/*.ext`
_GLOB_TEMPLATES = ["**/*.ext", "*.ext"]


def observed_extensions(pool: ValuePool) -> list[str]:
    """File-name extensions of the files seen in outputs (listing entries, paths in texts), most
    frequent first (ties: first seen); a directory's name never counts."""
    counts: dict[str, int] = {}
    for p in list(pool.path_kinds) + [p for p in pool.paths if p not in pool.path_kinds]:
        if pool.path_kinds.get(p, "file") != "file":
            continue
        m = re.search(r"(?<=[^/.])\.([A-Za-z0-9]{1,8})$", p.rstrip("/"))
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return sorted(counts, key=lambda e: -counts[e])


def glob_candidates(tool: ToolSpec, schema: Mapping[str, Any], pool: ValuePool, limit: int = 6) -> list[Candidate]:
    """Patterns for a glob input (`param_kind` "glob"): the glob-shaped literals the input's and the
    tool's descriptions write (``'**/*.ext'``) are templates whose extension is a placeholder; filled
    with the extensions of the files other tools' outputs showed (``**/*.txt``: a pattern that finds
    something) they are observed values. The templates themselves (and ``*``) are weak: a pattern
    that may match nothing (``*.ext`` answers "No matches found") is tried only where nothing better
    exists, so a search tool waits for a listing's files instead of passing its probe on an empty
    answer. Recursive templates (``**/``) come first."""
    texts = [_text(schema), tool.description or ""]
    templates = [v for t in texts for v in quoted_literals(t) if kind_ok("glob", v)] or list(_GLOB_TEMPLATES)
    # a recursive template first: it finds the files of every sub-folder (the top-level `*.txt` may match none)
    templates = sorted(dict.fromkeys(templates), key=lambda t: "**" not in t)
    filled: list[str] = []
    for ext in observed_extensions(pool):
        for tpl in templates:
            m = _GLOB_TAIL.search(tpl)
            if m is not None:
                filled.append(tpl[: m.start(1)] + ext)
    out = [Candidate(v, "observed") for v in dict.fromkeys(filled)][:limit]
    return out + [Candidate(v, "generated") for v in [*templates, "*"]]


# --------------------------------------------------------------------------- per-tool plans


_WAIT_WORDS = {"duration", "delay", "sleep", "wait", "pause"}


def wait_values(param: str, schema: Mapping[str, Any]) -> list[Any]:
    """How long a probe lets a tool wait: an input that sets a duration (``duration``, ``delay``,
    ``sleep``...: a number) takes the shortest sensible one, 1 second (100 when its description
    counts milliseconds; its minimum when that is longer), before its default: trigger-long-running-
    operation's default of 10 s outlasts a probe's timeout."""
    s = effective_schema(schema)
    if s.get("type") not in ("integer", "number") or not set(words(param)) & _WAIT_WORDS:
        return []
    v: int | float = 100 if re.search(r"\bms\b|millisecond", _text(s), re.I) else 1
    lo = s.get("minimum")
    if isinstance(lo, int | float) and not isinstance(lo, bool) and lo > v:
        v = lo
    return [v]


def generic_value(tool: ToolSpec, param: str, schema: Mapping[str, Any]) -> Any | None:
    """The value of a paging/format input (the DEFAULT branch of a source plan)."""
    g = tool.generic_params
    if param == g.page:
        return 1
    if param == g.page_size:
        return min(10, int(schema.get("maximum", 10)))
    if param in g.format:
        vals = schema_values(schema)
        return "json" if "json" in vals or not vals else vals[0]
    return None


def candidates(
    tool: ToolSpec,
    param: str,
    pool: ValuePool,
    types: TypeLookup | None = None,
    extra: Iterable[Candidate] = (),
) -> list[Candidate]:
    """Typed candidates of one input, best sources first, distinct values."""
    schema = tool.params.get(param, {})
    s = effective_schema(schema)
    kind = param_kind(tool, param, schema)
    desc = _text(schema)
    closed = described_closed_set(desc) if _closed_set(s) is None else None
    raw: list[Candidate] = [Candidate(v, "convention") for v in wait_values(param, s)]  # a short wait first
    raw += [Candidate(v, "schema") for v in schema_values(s)]
    if s.get("type") == "array" and isinstance(s.get("items"), Mapping):  # an item's enum/default: a one-item list
        raw += [Candidate([v], "schema") for v in schema_values(effective_schema(s["items"]))]
    raw += [Candidate(v, "description") for v in described_values(desc)]
    raw += [Candidate(v, "description") for v in tool_described_values(tool, param)]
    if kind == "path":
        raw += [Candidate(v, "server") for v in server_paths(tool, param)]
    raw += [Candidate(v, "observed") for v in pool.lookup(param, schema, tool=tool, types=types, kind=kind)]
    raw += [Candidate(v, "convention") for v in convention_values(tool, param, schema, kind, pool)]
    if kind == "glob":
        raw += glob_candidates(tool, schema, pool)
    raw += [Candidate(v, "made_up") for v in object_values(s, param)]
    raw += list(extra)
    raw += [Candidate(v, "generated") for v in generated_values(s)]
    out: list[Candidate] = []
    seen: set[str] = set()
    want = pool.path_kind(tool.name, param) if kind == "path" else None
    for c in raw:
        if want is not None and any(pool.path_kinds.get(x, want) != want for x in _strings(c.value)):
            continue  # a directory for an input that reads files (EISDIR), a file for one that lists folders
        ok, v = coerce(c.value, s, kind)
        if not ok or (closed is not None and (not isinstance(v, str) or v not in closed)):
            continue
        if s.get("type") == "array" and c.source == "server" and not set(words(param)) & {"path", "paths"}:
            continue
        k = _dumps(v)
        if k not in seen:
            seen.add(k)
            out.append(Candidate(v, c.source))
    return out


def _strings(value: Any) -> list[str]:
    return [x for x in (value if isinstance(value, list) else [value]) if isinstance(x, str)]


def missing_values(tool: ToolSpec, pool: ValuePool, types: TypeLookup | None = None) -> list[str]:
    """Required inputs (not generic, not the key) with no candidate at all."""
    generic = tool.generic_params.names()
    return [p for p in tool.required_params if p not in generic and not candidates(tool, p, pool, types)]


def is_ready(tool: ToolSpec, pool: ValuePool, types: TypeLookup | None = None) -> bool:
    """Every required input has a candidate better than a generated one."""
    generic = tool.generic_params.names()
    for p in tool.required_params:
        if p in generic:
            continue
        if not any(c.source not in WEAK for c in candidates(tool, p, pool, types)):
            return False
    return True


def _bounded_variety(schema: Mapping[str, Any], strong: list[Candidate], cands: list[Candidate]) -> list[Candidate]:
    """For an optional number input with a declared range whose only good candidate is its default
    (``count``: default 3, 1..10), the range's own bound as an alternative: a call with the default is
    the call without it, so nothing else would vary it, while every value in the range is valid and
    calls that differ there (3 links, then 1) are what chains and conditions start from."""
    s = effective_schema(schema)
    if len(strong) != 1 or s.get("type") not in ("integer", "number") or strong[0].value != s.get("default"):
        return []
    if not any(isinstance(s.get(k), int | float) and not isinstance(s.get(k), bool) for k in ("minimum", "maximum")):
        return []
    return [c for c in cands if c.source in WEAK and c.value != strong[0].value]


def probe_argument_sets(
    tool: ToolSpec,
    pool: ValuePool,
    n: int,
    rng: random.Random,
    types: TypeLookup | None = None,
    *,
    extra: Mapping[str, list[Candidate]] | None = None,
) -> list[dict[str, Any]]:
    """Up to `n` distinct argument sets. The first takes every input's best candidate; later ones
    draw among the non-weak candidates (weak ones only where nothing better exists). Optional
    inputs are set in every other set, and only with a non-weak candidate."""
    return [args for args, _src in probe_argument_plans(tool, pool, n, rng, types, extra=extra)]


def probe_argument_plans(
    tool: ToolSpec,
    pool: ValuePool,
    n: int,
    rng: random.Random,
    types: TypeLookup | None = None,
    *,
    extra: Mapping[str, list[Candidate]] | None = None,
) -> list[tuple[dict[str, Any], dict[str, str]]]:
    """`probe_argument_sets` with the source of every value ({param: source})."""
    required = set(tool.required_params)
    generic = tool.generic_params.names()
    fixed: dict[str, Any] = {}
    options: dict[str, list[Candidate]] = {}
    cycled: set[str] = set()  # inputs whose values are taken in turn (a range's values), not drawn
    for p, schema in tool.params.items():
        if p == tool.generic_params.key:
            continue  # injected by the executor
        if p in generic:
            v = generic_value(tool, p, schema)
            if v is not None:
                fixed[p] = v
            continue
        cands = candidates(tool, p, pool, types, (extra or {}).get(p, ()))
        strong = [c for c in cands if c.source not in WEAK]
        if strong:
            options[p] = strong + (_bounded_variety(schema, strong, cands) if p not in required else [])
            if len(options[p]) > len(strong):
                cycled.add(p)
        elif cands and p in required:
            options[p] = cands
    sets: list[tuple[dict[str, Any], dict[str, str]]] = []
    seen: set[str] = set()
    turns = dict.fromkeys(cycled, 0)
    for i in range(n * 4):
        args = dict(fixed)
        sources = dict.fromkeys(fixed, "generic")
        for p, cands in options.items():
            if p in required or i % 2 == 1:  # optional filters in every other attempt
                if p in cycled:
                    c, turns[p] = cands[turns[p] % len(cands)], turns[p] + 1
                else:
                    c = cands[0] if i == 0 else rng.choice(cands)
                args[p] = c.value
                sources[p] = c.source
        key = _dumps(args)
        if key not in seen:
            seen.add(key)
            sets.append((args, sources))
        if len(sets) >= n:
            break
    return sets


# --------------------------------------------------------------------------- probe rounds


class ProbePlanner:
    """Which tools a probe round calls, with which arguments.

    Round by round: the tools not yet probed that are *ready* (`is_ready`), plus (once) each
    probed tool without a success for which new argument sets exist since; the last round
    (`max_rounds`) takes every tool left, with generated values where nothing better exists.
    A tool with a required input that has no candidate at all is not called: it is reported as
    "no value for X". `state()`/`restore()` checkpoint the planner between rounds.
    """

    def __init__(self, tools: list[ToolSpec], max_rounds: int = 4):
        self.tools = {t.name: t for t in tools}
        self.order = [t.name for t in tools]
        self.max_rounds = max_rounds
        self.pending: list[str] = list(self.order)
        self.tried: dict[str, list[str]] = {}
        self.retried: set[str] = set()
        self.succeeded: set[str] = set()
        self.unfilled: dict[str, list[str]] = {}

    def next_round(
        self, round_no: int, pool: ValuePool, rng: random.Random, n: int, types: TypeLookup | None = None
    ) -> list[tuple[ToolSpec, dict[str, Any], dict[str, str]]]:
        """The calls of round `round_no`: (tool, args, sources), tools in inventory order."""
        last = round_no >= self.max_rounds
        calls: list[tuple[ToolSpec, dict[str, Any], dict[str, str]]] = []
        called: set[str] = set()
        for name in self.order:
            t = self.tools[name]
            if name in self.pending:
                if not (last or is_ready(t, pool, types)):
                    continue
                missing = missing_values(t, pool, types)
                if missing:
                    if last:
                        self.unfilled[name] = missing
                        self.pending.remove(name)
                    continue
                plans = probe_argument_plans(t, pool, n, rng, types)
            elif name in self.tried and name not in self.succeeded and name not in self.retried:
                done = set(self.tried[name])
                plans = [
                    p for p in probe_argument_plans(t, pool, n + len(done), rng, types) if _dumps(p[0]) not in done
                ][:n]
                if not plans or not (last or is_ready(t, pool, types)):
                    continue
                self.retried.add(name)
            else:
                continue
            for args, src in plans:
                calls.append((t, args, src))
                self.tried.setdefault(name, []).append(_dumps(args))
            called.add(name)
        self.pending = [p for p in self.pending if p not in called]
        return calls

    def record(self, tool: str, success: bool) -> None:
        if success:
            self.succeeded.add(tool)

    def done(self) -> bool:
        return not self.pending and all(
            n in self.succeeded or n in self.retried or n not in self.tried for n in self.order
        )

    def state(self) -> dict[str, Any]:
        return {
            "pending": self.pending,
            "tried": self.tried,
            "retried": sorted(self.retried),
            "succeeded": sorted(self.succeeded),
            "unfilled": self.unfilled,
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        self.pending = [n for n in self.order if n in set(state.get("pending") or [])]
        self.tried = {k: list(v) for k, v in (state.get("tried") or {}).items()}
        self.retried = set(state.get("retried") or [])
        self.succeeded = set(state.get("succeeded") or [])
        self.unfilled = {k: list(v) for k, v in (state.get("unfilled") or {}).items()}


# --------------------------------------------------------------------------- why no success


def no_success_reasons(
    rows: Sequence[Mapping[str, Any]], tool_names: list[str], unfilled: Mapping[str, list[str]], success: set[str]
) -> list[dict[str, Any]]:
    """Per tool without a successful probe: why. "no value for X" when it was not called for want
    of a value, else the outcome classes of its failures (most frequent first) and the first detail."""
    out = []
    for name in tool_names:
        if name in success:
            continue
        mine = [r for r in rows if r.get("tool") == name]
        if name in unfilled and not mine:
            out.append(
                {
                    "tool": name,
                    "reason": f"{NO_SUCCESS_MISSING} {', '.join(unfilled[name])}",
                    "calls": 0,
                    "outcomes": "",
                    "detail": "",
                }
            )
            continue
        counts: dict[str, int] = {}
        for r in mine:
            counts[str(r.get("outcome"))] = counts.get(str(r.get("outcome")), 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        detail = next((str(r.get("detail") or "") for r in mine if r.get("detail")), "")
        reason = ranked[0][0] if ranked else "not probed"
        out.append(
            {
                "tool": name,
                "reason": reason,
                "calls": len(mine),
                "outcomes": ", ".join(f"{k} ×{v}" for k, v in ranked),
                "detail": detail[:160],
            }
        )
    return out
