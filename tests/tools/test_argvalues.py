"""Argument discovery (factory.tools.argvalues): candidates by source, typing per input, probe rounds."""

import random
import re

import pytest

from factory.semtypes import ValueTypes
from factory.tools import argvalues as av
from factory.tools.spec import SourceRef, ToolSpec


def _tool(name, props, required=(), *, description=None, kind="openapi", locator="x", platform="p"):
    return ToolSpec(
        domain="d",
        platform=platform,
        name=name,
        description=description or f"{name} tool",
        input_schema={"type": "object", "properties": props, "required": list(required)},
        source=SourceRef(kind=kind, locator=locator),
    )


def _values(tool, param, pool=None, types=None):
    return [c.value for c in av.candidates(tool, param, pool or av.ValuePool(), types)]


def _strong(tool, param, pool=None, types=None):
    return [c.value for c in av.candidates(tool, param, pool or av.ValuePool(), types) if c.source not in av.WEAK]


def _sources(tool, param, pool=None):
    return {c.source for c in av.candidates(tool, param, pool or av.ValuePool())}


# --------------------------------------------------------------------------- schema


def test_schema_keywords_come_first_then_generated_values_from_format_pattern_and_bounds():
    t = _tool(
        "t",
        {
            "a": {"type": "string", "examples": ["x1", "x2"], "default": "x0"},
            "c": {"const": "fixed"},
            "d": {"type": "string", "format": "date"},
            "u": {"type": "string", "format": "uuid"},
            "m": {"type": "string", "format": "email"},
            "pat": {"type": "string", "pattern": r"^[A-Z]{2}-\d{3}$"},
            "n": {"type": "integer", "minimum": 5, "maximum": 9},
            "x": {"anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}], "default": None},
        },
    )
    assert _values(t, "a") == ["x0", "x1", "x2"]
    assert _values(t, "c") == ["fixed"]
    assert _values(t, "d") == ["2024-01-15"] and _sources(t, "d") == {"generated"}
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", _values(t, "u")[0])
    assert _values(t, "m") == ["probe@example.com"]
    (code,) = _values(t, "pat")
    assert re.fullmatch(r"[A-Z]{2}-\d{3}", code)
    assert _values(t, "n") == [5]
    assert _values(t, "x") == [1]  # nullable anyOf: the integer, above the exclusive minimum


def test_generated_pattern_values_match_or_are_not_made():
    assert av._gen_pattern(r"\d{5}") == "11111"
    assert re.fullmatch(r"(foo|bar)-[a-c]+\w?", av._gen_pattern(r"^(foo|bar)-[a-c]+\w?$") or "")
    assert av._gen_pattern(r"[^abc]{3}") is None  # a negated class: nothing guessed
    assert av._gen_pattern(r"(unclosed") is None


def test_an_enum_input_never_receives_a_free_value():
    pool = av.ValuePool()
    pool.add_records([{"kind": "c"}, {"kind": "a"}], "d/p/list_things")
    t = _tool("by_kind", {"kind": {"type": "string", "enum": ["a", "b"]}}, ["kind"])
    assert _values(t, "kind", pool) == ["a", "b"]
    sets = av.probe_argument_sets(t, pool, 5, random.Random(0))
    assert {s["kind"] for s in sets} <= {"a", "b"}


def test_an_array_input_takes_its_items_default_and_enum_values_as_one_item_lists():
    items = {"type": "string", "enum": ["available", "pending", "sold"], "default": "available"}
    t = _tool("by_status", {"status": {"type": "array", "items": items}}, ["status"])  # the Petstore's findByStatus
    assert _values(t, "status") == [["available"], ["pending"], ["sold"]]
    assert _sources(t, "status") == {"schema"}
    assert av.missing_values(t, av.ValuePool()) == []


def test_an_integer_input_never_takes_a_non_integer_string():
    pool = av.ValuePool()
    pool.add_records([{"album_id": "abc"}, {"album_id": "12"}, {"album_id": 7}, {"album_id": 2.5}])
    t = _tool("get_album", {"album_id": {"type": "integer"}}, ["album_id"])
    assert _strong(t, "album_id", pool) == [12, 7]
    assert pool.lookup("album_id", {"type": "integer"}) == [12, 7]


# --------------------------------------------------------------------------- descriptions


def test_description_literals_example_lists_and_closed_sets():
    t = _tool(
        "git_branch",
        {
            "branch_type": {
                "type": "string",
                "description": "Whether to list local branches ('local'), remote branches ('remote') or all "
                "branches('all').",
            },
            "emdNm": {"type": "string", "description": "검색할 읍면동 이름 (예: 청운동, 기장읍)"},
            "city": {"type": "string", "description": "A city, e.g. Oslo, Bergen or Tromsø."},
            "since": {"type": "string", "description": "Commits after this date (ISO, like 2024-03-01)."},
            "day": {"type": "string", "description": "A day, e.g. 2013-01-05. Days outside 2013 are empty"},
        },
        ["branch_type"],
    )
    assert _values(t, "branch_type") == ["local", "remote", "all"]
    assert _values(t, "emdNm") == ["청운동", "기장읍"]
    assert _values(t, "city") == ["Oslo", "Bergen", "Tromsø"]
    assert "2024-03-01" in _values(t, "since")
    assert _values(t, "day") == ["2013-01-05"]
    # a closed list of quoted literals admits no observed value
    pool = av.ValuePool()
    pool.add_records([{"type": "INTEGER"}, {"type": "TEXT"}], "d/p/describe_table")
    assert _values(t, "branch_type", pool) == ["local", "remote", "all"]


def test_timezones_from_the_description_then_conventional_ones_and_hh_mm_times():
    t = _tool(
        "convert_time",
        {
            "source_timezone": {
                "type": "string",
                "description": "Source IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use "
                "'Europe/Berlin' as local timezone if no source timezone provided by the user.",
            },
            "tz": {"type": "string"},
            "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
        },
        ["source_timezone", "tz", "time"],
    )
    assert _values(t, "source_timezone")[:3] == ["America/New_York", "Europe/London", "Europe/Berlin"]
    assert _values(t, "tz") == av.TIMEZONES
    assert _values(t, "time") == ["12:00"]
    pool = av.ValuePool()
    pool.add_records([{"name": "Oslo"}, {"timezone": "Asia/Seoul"}])
    assert "Oslo" not in _values(t, "tz", pool)  # a timezone input takes zone names only
    assert "Asia/Seoul" in _values(t, "tz", pool)


# --------------------------------------------------------------------------- SQL


def _sqlite_tools():
    locator = "mcp-server-sqlite --db-path /srv/shop.sqlite"
    read = _tool(
        "read_query",
        {"query": {"type": "string", "description": "SELECT SQL query to execute"}},
        ["query"],
        description="Execute a SELECT query on the SQLite database",
        kind="mcp",
        locator=locator,
    )
    create = _tool(
        "create_table",
        {"query": {"type": "string", "description": "CREATE TABLE SQL statement"}},
        ["query"],
        description="Create a new table in the SQLite database",
        kind="mcp",
        locator=locator,
    )
    write = _tool(
        "write_query",
        {"query": {"type": "string", "description": "SQL query to execute"}},
        ["query"],
        description="Execute an INSERT, UPDATE, or DELETE query on the SQLite database",
        kind="mcp",
        locator=locator,
    )
    return read, create, write


def test_sql_inputs_take_statements_and_harvested_table_names_never_bare_names():
    read, create, write = _sqlite_tools()
    empty = av.ValuePool()
    assert _values(read, "query", empty) == ["SELECT name FROM sqlite_master WHERE type='table'", "SELECT 1"]
    assert av.missing_values(write, empty) == ["query"]  # a write without a table: nothing to send
    pool = av.ValuePool()
    pool.add_records([{"text": "[{'name': 'customers'}, {'name': 'orders'}]"}], "d/sqlite/list_tables")
    reads = _values(read, "query", pool)
    assert "SELECT * FROM customers LIMIT 5" in reads and "customers" not in reads
    assert all(av.kind_ok("sql", q) for q in reads)
    assert _values(create, "query", pool) == [
        "CREATE TABLE IF NOT EXISTS factory_probe (id INTEGER PRIMARY KEY, note TEXT)"
    ]
    assert _values(write, "query", pool) == ["DELETE FROM customers WHERE 1 = 0", "DELETE FROM orders WHERE 1 = 0"]
    duck = _tool("query", {"query": {"type": "string", "description": "SQL query to execute"}}, ["query"],
                 description="Execute a query on the DuckDB database", kind="mcp", locator="mcp-server-duckdb")  # fmt: skip
    assert _values(duck, "query")[0] == "SELECT table_name FROM information_schema.tables"


def test_a_search_query_is_not_taken_for_sql():
    t = _tool("search_tracks", {"query": {"type": "string", "description": "Text to find in track names"}}, ["query"])
    assert av.param_kind(t, "query", t.params["query"]) is None


# --------------------------------------------------------------------------- paths


def test_paths_from_the_server_command_line_and_from_output_texts():
    git = _tool(
        "git_status",
        {"repo_path": {"type": "string", "title": "Repo Path"}},
        ["repo_path"],
        kind="mcp",
        locator="/opt/venv/bin/mcp-server-git --db /srv/other.db --repository /srv/repo",
        platform="git",
    )
    assert _values(git, "repo_path")[:2] == ["/srv/repo", "/srv/other.db"]  # the --repository flag first
    assert "/opt/venv/bin/mcp-server-git" not in _values(git, "repo_path")
    fs = _tool(
        "read_text_file",
        {"path": {"type": "string", "description": "Path of the file to read"}},
        ["path"],
        kind="mcp",
        locator="npx -y @modelcontextprotocol/server-filesystem",
    )
    pool = av.ValuePool()
    assert av.missing_values(fs, pool) == ["path"]
    pool.add_records([{"text": "Allowed directories:\n/tmp/work"}], "d/fs/list_allowed_directories")
    pool.add_records(
        [{"text": "[DIR] notes\n[FILE] a.txt\n[FILE] b data.txt"}], "d/fs/list_directory", {"path": "/tmp/work"}
    )
    vals = _values(fs, "path", pool)
    assert vals[0] == "/tmp/work" and "/tmp/work/a.txt" in vals and "/tmp/work/notes" in vals
    assert "/tmp/work/b data.txt" not in vals  # not a single token: not taken for a path


# --------------------------------------------------------------------------- observed values


def test_listing_ids_and_names_feed_id_and_name_inputs_of_the_named_entity_only():
    pool = av.ValuePool()
    pool.add_records([{"id": 10, "name": "Rex"}, {"id": 11, "name": "Tom"}], "d/petstore/list_pets")
    pool.add_records([{"name": "customers"}], "d/sqlite/list_tables")
    get_pet = _tool("get_pet", {"petId": {"type": "integer"}}, ["petId"])
    assert _strong(get_pet, "petId", pool) == [10, 11]
    describe = _tool("describe_table", {"table_name": {"type": "string"}}, ["table_name"])
    assert _values(describe, "table_name", pool) == ["customers"]  # not the pets' names
    pool.add_records(
        [{"name": "id", "type": "INTEGER"}, {"name": "city", "type": "TEXT"}],
        "d/sqlite/describe_table",
        {"table_name": "customers"},
    )
    assert _values(describe, "table_name", pool) == ["customers"]  # its output names columns, not tables
    distinct = _tool("distinct_values", {"column_name": {"type": "string"}}, ["column_name"])
    assert _values(distinct, "column_name", pool) == ["id", "city"]  # a table's columns, not its rows
    checkout = _tool("git_checkout", {"branch_name": {"type": "string"}}, ["branch_name"])
    assert _values(checkout, "branch_name", pool) == []
    pool.add_records([{"text": "* main\n  feature"}], "d/git/git_branch")
    assert _values(checkout, "branch_name", pool) == ["main", "feature"]


def test_typed_values_a_type_mismatch_is_never_used_even_when_names_agree():
    pool = av.ValuePool()
    pool.add_records([{"code": "KR"}], "d/p/list_countries")
    pool.add_records([{"code": "ICN"}], "d/p/list_airports")
    t = _tool("airports_in", {"code": {"type": "string"}}, ["code"])
    types = ValueTypes(
        {
            t.tool_id: {"params": {"code": "country.iso2"}},
            "d/p/list_countries": {"fields": {"code": "country.iso2"}},
            "d/p/list_airports": {"fields": {"code": "airport.iata"}},
        }
    )
    assert _strong(t, "code", pool) == ["KR", "ICN"]  # untyped: by name
    assert _strong(t, "code", pool, types) == ["KR"]


# --------------------------------------------------------------------------- rounds and reasons


def test_rounds_probe_ready_tools_first_then_with_what_they_returned():
    listing = _tool("list_pets", {})
    getter = _tool("get_pet", {"petId": {"type": "integer"}}, ["petId"])
    orphan = _tool("get_plane", {"tailnum": {"type": "string"}}, ["tailnum"])
    weak = _tool("get_day", {"day": {"type": "string", "format": "date"}}, ["day"])
    planner = av.ProbePlanner([listing, getter, orphan, weak], max_rounds=3)
    pool, rng = av.ValuePool(), random.Random(0)
    r1 = planner.next_round(1, pool, rng, 2)
    assert [t.name for t, _a, _s in r1] == ["list_pets"]
    pool.add_records([{"id": 3, "name": "Rex"}], listing.tool_id)
    planner.record("list_pets", True)
    r2 = planner.next_round(2, pool, rng, 2)
    assert [(t.name, a, s) for t, a, s in r2] == [("get_pet", {"petId": 3}, {"petId": "observed"})]
    planner.record("get_pet", False)
    r3 = planner.next_round(3, pool, rng, 2)  # the last round: weak values; no retry without new values
    assert [(t.name, a) for t, a, _s in r3] == [("get_day", {"day": "2024-01-15"})]
    assert planner.unfilled == {"get_plane": ["tailnum"]}
    rows = [
        {"tool": "get_pet", "outcome": "missing_field", "detail": "no pet 3"},
        {"tool": "get_day", "outcome": "schema_mismatch", "detail": "bad day"},
        {"tool": "get_day", "outcome": "missing_field", "detail": ""},
        {"tool": "get_day", "outcome": "schema_mismatch", "detail": ""},
    ]
    reasons = {r["tool"]: r for r in av.no_success_reasons(rows, [t.name for t in planner.tools.values()],
                                                           planner.unfilled, {"list_pets"})}  # fmt: skip
    assert set(reasons) == {"get_pet", "get_plane", "get_day"}
    assert reasons["get_plane"]["reason"] == "no value for tailnum" and reasons["get_plane"]["calls"] == 0
    assert reasons["get_day"]["reason"] == "schema_mismatch"
    assert reasons["get_day"]["outcomes"] == "schema_mismatch ×2, missing_field ×1"
    assert reasons["get_pet"]["detail"] == "no pet 3"


def test_a_failed_tool_is_retried_once_when_new_values_appeared():
    listing = _tool("list_pets", {})
    getter = _tool("get_pet", {"petId": {"type": "integer"}}, ["petId"])
    planner = av.ProbePlanner([listing, getter], max_rounds=4)
    pool, rng = av.ValuePool(), random.Random(0)
    pool.add_records([{"id": 1}], "d/p/other_pets")
    planner.next_round(1, pool, rng, 1)
    planner.record("get_pet", False)
    pool.add_records([{"id": 2}], listing.tool_id)
    r2 = planner.next_round(2, pool, rng, 1)
    assert [(t.name, a) for t, a, _s in r2] == [("get_pet", {"petId": 2})]
    pool.add_records([{"id": 5}], listing.tool_id)
    assert planner.next_round(3, pool, rng, 1) == []  # once only
    state = planner.state()
    again = av.ProbePlanner([listing, getter], max_rounds=4)
    again.restore(state)
    assert again.state() == state


def test_pool_checkpoints_round_trip_and_read_the_older_plain_map():
    pool = av.ValuePool()
    pool.add_records([{"id": 1, "name": "a"}], "d/p/list_x")
    pool.add_records([{"text": "/srv/data"}], "d/p/dirs")
    back = av.ValuePool.from_json(pool.to_json())
    assert back.to_json() == pool.to_json()
    old = av.ValuePool.from_json({"carrier": ["DL"]})
    assert old.lookup("carrier", {"type": "string"}) == ["DL"]


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("sql", "select 1", "customers"),
        ("timezone", "America/Argentina/Buenos_Aires", "Oslo"),
        ("path", "/srv/repo", "hello world"),
        ("date", "2024-02-03", "03/02/2024"),
        ("date-time", "2024-02-03T10:00:00Z", "2024-02-03"),
        ("uri", "https://x.org", "x.org"),
        ("glob", "**/*.txt", "notes.txt"),
    ],
)
def test_kinds_accept_their_values_only(kind, good, bad):
    assert av.kind_ok(kind, good) and not av.kind_ok(kind, bad)


# --------------------------------------------------------------------------- values offered for testing


def test_values_a_description_offers_for_testing():
    """Petstore: "Use user1 for testing" (the input's description) and "Use tag1, tag2, tag3 for testing"
    (the tool's), for the inputs they name; "try integer IDs with value >= 1" offers no value."""
    by_name = _tool("get_user_by_name", {"username": {"type": "string", "description":
                    "The name that needs to be fetched. Use user1 for testing. "}}, ["username"])  # fmt: skip
    assert _values(by_name, "username") == ["user1"] and _sources(by_name, "username") == {"description"}
    by_tags = _tool(
        "find_pets_by_tags",
        {"tags": {"type": "array", "items": {"type": "string"}}, "limit": {"type": "integer"}},
        ["tags"],
        description="Muliple tags can be provided with comma separated strings. Use tag1, tag2, tag3 for testing.",
    )
    assert _values(by_tags, "tags") == [["tag1"], ["tag2"], ["tag3"]]
    assert av.is_ready(by_tags, av.ValuePool())
    assert not any(isinstance(v, str) and v.startswith("tag") for v in _values(by_tags, "limit"))
    order = _tool("get_order_by_id", {"orderId": {"type": "integer", "minimum": 1, "maximum": 10}}, ["orderId"],
                  description="For valid response try integer IDs with value >= 1 and <= 10.")  # fmt: skip
    assert _sources(order, "orderId") == {"generated"}
    assert av.testing_values("Use user1 or user2 to test the login") == ["user1", "user2"]


def test_login_takes_the_username_and_password_a_user_lookup_returned():
    login = _tool("login_user", {"username": {"type": "string", "description": "The user name for login"},
                                 "password": {"type": "string", "description": "The password for login in clear text"}},
                  ["username", "password"])  # fmt: skip
    pool = av.ValuePool()
    assert not av.is_ready(login, pool) and av.missing_values(login, pool) == ["username", "password"]
    pool.add_records([{"id": 10, "username": "theUser", "password": "12345", "email": "john@email.com"}],
                     "d/p.get_user_by_name", {"username": "user1"})  # fmt: skip
    assert _strong(login, "username", pool) == ["theUser"] and _strong(login, "password", pool) == ["12345"]
    assert av.is_ready(login, pool)


def test_a_bounded_number_with_one_good_value_is_probed_across_its_range_too():
    """get-resource-links(count: default 3, 1..10): the default first, the range's own bound later, so
    two calls differ in `count` (a chain or a condition has another seed); an unbounded one keeps its value."""
    links = _tool("get-resource-links", {"count": {"type": "number", "default": 3, "minimum": 1, "maximum": 10}})
    sets = av.probe_argument_sets(links, av.ValuePool(), 3, random.Random(0))
    assert sets[0] == {} and {"count": 3} in sets and {"count": 1} in sets
    free = _tool("t", {"n": {"type": "integer", "default": 3}})
    assert av.probe_argument_sets(free, av.ValuePool(), 3, random.Random(0)) == [{}, {"n": 3}]


@pytest.mark.parametrize("seed", range(8))
def test_the_range_values_are_taken_in_turn_whatever_the_draws(seed):
    links = _tool("get-resource-links", {"count": {"type": "number", "default": 3, "minimum": 1, "maximum": 10}})
    assert av.probe_argument_sets(links, av.ValuePool(), 3, random.Random(seed)) == [{}, {"count": 3}, {"count": 1}]
    # a required input, or one whose good value is not its default (an example id), keeps its value
    need = _tool("t", {"n": {"type": "integer", "default": 3, "minimum": 1, "maximum": 10}}, ["n"])
    assert av.probe_argument_sets(need, av.ValuePool(), 3, random.Random(seed)) == [{"n": 3}]
    ex = _tool("t", {"artist_id": {"type": "integer", "examples": [90], "minimum": 1}})
    assert av.probe_argument_sets(ex, av.ValuePool(), 3, random.Random(seed)) == [{}, {"artist_id": 90}]


def test_a_duration_input_is_probed_with_a_short_wait_before_its_default():
    """trigger-long-running-operation(duration: default 10 s) timed out every probe."""
    op = _tool("trigger-long-running-operation", {
        "duration": {"type": "number", "default": 10, "description": "Duration of the operation in seconds"},
        "steps": {"type": "number", "default": 5, "description": "Number of steps in the operation"},
        "delay_ms": {"type": "integer", "description": "Delay in milliseconds"},
        "wait_s": {"type": "integer", "minimum": 5},
        "sleep": {"type": "string"},
    })  # fmt: skip
    assert _values(op, "duration")[:2] == [1, 10] and av.candidates(op, "duration", av.ValuePool())[0].source == (
        "convention"
    )
    assert _values(op, "steps")[0] == 5  # not a duration
    assert _values(op, "delay_ms")[0] == 100 and _values(op, "wait_s")[0] == 5
    assert _values(op, "sleep") == []  # a text input named like a wait gets no short-wait number


# --------------------------------------------------------------------------- glob patterns

SEARCH_FILES = (  # @modelcontextprotocol/server-filesystem's search_files, as its tools/list gives it
    "Recursively search for files and directories matching a pattern. The patterns should be glob-style "
    "patterns that match paths relative to the working directory. Use pattern like '*.ext' to match files in "
    "current directory, and '**/*.ext' to match files in all subdirectories. Returns full paths to all matching "
    "items. Only searches within allowed directories."
)


def test_a_glob_input_waits_for_the_files_a_listing_showed_and_takes_their_extensions():
    search = _tool(
        "search_files",
        {"path": {"type": "string"}, "pattern": {"type": "string"},
         "excludePatterns": {"type": "array", "items": {"type": "string"}, "default": []}},
        ["path", "pattern"], description=SEARCH_FILES, kind="mcp", locator="mcp-server-filesystem /srv/notes",
    )  # fmt: skip
    listing = _tool("list_directory", {"path": {"type": "string"}}, ["path"], kind="mcp",
                    locator="mcp-server-filesystem /srv/notes")  # fmt: skip
    assert av.param_kind(search, "pattern", {"type": "string"}) == "glob"
    assert av.param_kind(search, "excludePatterns", {"type": "array"}) is None  # what to leave out: never probed
    assert av.param_kind(listing, "pattern", {"type": "string"}) is None  # no word of globs: not a glob
    pool = av.ValuePool()
    # before any listing: only the description's templates (weak), so the search is not ready yet
    assert _values(search, "pattern", pool) == ["**/*.ext", "*.ext", "*"] and _strong(search, "pattern", pool) == []
    assert not av.is_ready(search, pool)
    planner = av.ProbePlanner([listing, search], max_rounds=3)
    rng = random.Random(0)
    r1 = planner.next_round(1, pool, rng, 2)
    assert [t.name for t, _a, _s in r1] == ["list_directory"]
    planner.record("list_directory", True)
    text = "[DIR] sites\n[FILE] README.md\n[FILE] summary.csv\n[FILE] notes.txt\n[FILE] todo.txt"
    pool.add_records([{"text": text}], listing.tool_id, {"path": "/srv/notes"})
    pool.add_records([{"text": "[FILE] harbour.txt"}], listing.tool_id, {"path": "/srv/notes/sites"})
    # the templates filled with the files' extensions (recursive first, the most frequent extension
    # first); a folder adds none
    assert _strong(search, "pattern", pool) == ["**/*.txt", "*.txt", "**/*.md", "*.md", "**/*.csv", "*.csv"]
    r2 = planner.next_round(2, pool, rng, 2)
    assert [t.name for t, _a, _s in r2] == ["search_files", "search_files"]
    assert r2[0][1] == {"path": "/srv/notes", "pattern": "**/*.txt"}  # the first set: every input's best
    assert r2[0][2] == {"path": "server", "pattern": "observed"}
    assert all("excludePatterns" not in a and s["pattern"] == "observed" for _t, a, s in r2)
    # the last round takes a template when no listing showed a file
    lonely = av.ProbePlanner([search], max_rounds=1)
    (only,) = lonely.next_round(1, av.ValuePool(), rng, 1)
    assert only[1]["pattern"] == "**/*.ext" and only[2]["pattern"] == "generated"
