"""Path inputs typed by kind (issue 13: the filesystem server): a file reader never gets a folder.

The probes learn what a path is from listings (``[FILE]``/``[DIR]`` entries, a JSON tree's ``type``) and
what a path input takes from its calls (successes with files, EISDIR for a folder); argument discovery,
the registry's specs, junctions and SEM pairs read that."""

from types import SimpleNamespace

from factory.graph import plan as plans
from factory.synthesis.execute import of_path_kind
from factory.synthesis.trajectories import _same_path_kind
from factory.tools import argvalues as av
from factory.tools.registry import ToolRegistry
from factory.tools.spec import SourceRef, ToolSpec

ROOT = "/srv/survey"
LOCATOR = f"mcp-server-filesystem {ROOT}"
LISTING = [
    {"type": "file", "name": "README.md", "path": f"{ROOT}/README.md"},
    {"type": "directory", "name": "sites", "path": f"{ROOT}/sites"},
    {"type": "file", "name": "summary.csv", "path": f"{ROOT}/summary.csv"},
]
EISDIR = "EISDIR: illegal operation on a directory, read"


def _tool(name: str, params: tuple[str, ...] = ("path",)) -> ToolSpec:
    return ToolSpec(
        domain="files",
        platform="files",
        name=name,
        description=f"{name} tool",
        method="MCP",
        input_schema={"type": "object", "properties": {p: {"type": "string"} for p in params}, "required": [*params]},
        source=SourceRef(kind="mcp", locator=LOCATOR),
    )


def _listed_pool() -> av.ValuePool:
    pool = av.ValuePool()
    pool.add_records(LISTING, "files/files/list_directory", {"path": ROOT})
    pool.note_path_call("list_directory", {"path": ROOT}, True)
    return pool


def test_listings_and_errors_say_what_a_path_is_and_what_an_input_takes() -> None:
    pool = _listed_pool()
    assert pool.path_kinds == {
        f"{ROOT}/README.md": "file", f"{ROOT}/sites": "directory", ROOT: "directory", f"{ROOT}/summary.csv": "file"
    }  # fmt: skip
    assert pool.path_kind("list_directory", "path") == "directory"  # it listed a folder, never a file
    pool.note_path_call("read_text_file", {"path": ROOT}, False, EISDIR)
    assert pool.path_kind("read_text_file", "path") == "file"  # a folder was refused: it reads files
    pool.note_path_call("read_text_file", {"path": f"{ROOT}/summary.csv"}, True)
    assert pool.input_path_kinds() == {"list_directory": {"path": "directory"}, "read_text_file": {"path": "file"}}
    assert av.ValuePool().path_kind("read_text_file", "path") is None  # nothing known
    # a text listing ([FILE]/[DIR] lines under the folder the call named) types its entries too
    text = av.ValuePool()
    text.add_records([{"text": "[DIR] sites\n[FILE] notes.txt"}], "files/files/ls", {"path": ROOT})
    assert text.path_kinds == {f"{ROOT}/sites": "directory", f"{ROOT}/notes.txt": "file"}
    # both kinds worked: the input takes any path
    pool.note_path_call("get_file_info", {"path": ROOT}, True)
    pool.note_path_call("get_file_info", {"path": f"{ROOT}/README.md"}, True)
    assert pool.path_kind("get_file_info", "path") is None
    # a success that reports one path's error in its text (read_multiple_files): that path was refused
    answer = [f"{ROOT}: Error - EISDIR: illegal operation on a directory, read"]
    pool.note_path_call("read_multiple_files", {"paths": [ROOT]}, True, "", answer)
    assert pool.path_kind("read_multiple_files", "paths") == "file"
    # ENOTDIR: a file given to a folder lister
    pool.note_path_call("directory_tree", {"path": f"{ROOT}/README.md"}, False, "ENOTDIR: not a directory, scandir")
    assert pool.path_kind("directory_tree", "path") == "directory"
    assert av.ValuePool.from_json(pool.to_json()).input_path_kinds() == pool.input_path_kinds()


def test_a_file_reader_is_never_offered_a_folder_once_a_folder_was_refused() -> None:
    read = _tool("read_text_file")
    pool = _listed_pool()
    before = [c.value for c in av.candidates(read, "path", pool)]
    assert ROOT in before and f"{ROOT}/sites" in before  # nothing known yet about what it takes
    pool.note_path_call("read_text_file", {"path": ROOT}, False, EISDIR)
    after = [c.value for c in av.candidates(read, "path", pool)]
    assert after and ROOT not in after and f"{ROOT}/sites" not in after
    assert {f"{ROOT}/README.md", f"{ROOT}/summary.csv"} <= set(after)
    lister = _tool("list_directory")
    assert f"{ROOT}/README.md" not in [c.value for c in av.candidates(lister, "path", pool)]


def test_the_registry_gives_specs_the_probed_kinds_and_the_inventory_never_stores_them() -> None:
    inv = {"files": {"tools": [_tool("read_text_file").model_dump(mode="json"), _tool("list_directory").model_dump()]}}
    probes = {"files": {"rows": [], "path_kinds": {"read_text_file": {"path": "file"}}}}
    reg = ToolRegistry.from_inventories(inv, probes)
    assert reg["files/files/read_text_file"].path_kinds == {"path": "file"}
    assert reg["files/files/list_directory"].path_kinds == {}
    assert "path_kinds" not in reg["files/files/read_text_file"].model_dump()


def test_a_junction_into_a_file_reader_keeps_the_listing_files() -> None:
    read = _tool("read_text_file").model_copy(update={"path_kinds": {"path": "file"}})
    edge = SimpleNamespace(plan={"path": {"kind": plans.UPSTREAM, "field": "path"}})
    kept, kind = of_path_kind(LISTING, edge, read)  # type: ignore[arg-type]
    assert kind == "file" and [r["name"] for r in kept] == ["README.md", "summary.csv"]
    lister = _tool("list_directory").model_copy(update={"path_kinds": {"path": "directory"}})
    kept, kind = of_path_kind(LISTING, edge, lister)  # type: ignore[arg-type]
    assert kind == "directory" and [r["name"] for r in kept] == ["sites"]
    # an input of unknown kind, or records that are no listing entries: unchanged
    assert of_path_kind(LISTING, edge, _tool("get_file_info")) == (LISTING, None)  # type: ignore[arg-type]
    plain = [{"path": ROOT}]
    assert of_path_kind(plain, edge, read) == (plain, None)  # type: ignore[arg-type]
    # SEM never gives a file reader and a folder lister one value
    assert not _same_path_kind(read, "path", lister, "path")
    assert _same_path_kind(read, "path", _tool("get_file_info"), "path")
