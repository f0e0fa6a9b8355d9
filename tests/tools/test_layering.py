"""No module under factory/tools imports a module that imports it back (directly or around a circle).

Imports are read from the source (module level and inside functions; `if TYPE_CHECKING:` blocks
are not imports at run time); an import of a package means its ``__init__``.
"""

import ast
from pathlib import Path

import factory.tools
from tests.test_layering import cycles

TOOLS_DIR = Path(factory.tools.__file__).parent
PACKAGE = "factory.tools"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(TOOLS_DIR).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, known: set[str]) -> set[str]:
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for sub in node.orelse:
                visit(sub)
            return
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in known:  # `from factory.tools import sources`
                    out.add(full)
                elif node.module in known:
                    out.add(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def import_graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in TOOLS_DIR.rglob("*.py")}
    known = set(files)
    return {m: _imports(ast.parse(p.read_text(encoding="utf-8")), known) - {m} for m, p in files.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import circles among the modules (the project-wide cycle finder over this module graph)."""
    return cycles({m: {t: set() for t in targets} for m, targets in graph.items()})


def test_no_import_circle_under_factory_tools() -> None:
    graph = import_graph()
    assert "factory.tools.registry" in graph and "factory.tools.transports.base" in graph
    assert circles(graph) == []


def test_loaders_depend_on_locators_and_schema_never_on_sources() -> None:
    graph = import_graph()
    for loader in ("factory.tools.openapi", "factory.tools.mcp", "factory.tools.schema", "factory.tools.locators"):
        assert "factory.tools.sources" not in graph[loader], loader
    assert not graph["factory.tools.locators"] & {"factory.tools.openapi", "factory.tools.mcp"}
    assert {"factory.tools.openapi", "factory.tools.mcp"} <= graph["factory.tools.sources"]
    transports = [m for m in graph if m.startswith("factory.tools.transports")]
    assert len(transports) >= 4
    for m in transports:
        assert not graph[m] & {"factory.tools.executor", "factory.tools.registry", "factory.tools.sources"}, m
