"""Layering of factory/: no import cycle between packages, the config never loads the model layer, and
Dagster is imported only by the modules that face it."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FACTORY = ROOT / "factory"


def _unit(module: str) -> str:
    """The layering unit of a module: its subpackage (`factory.llm`), or the top-level module itself."""
    return ".".join(module.split(".")[:2])


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_imports() -> dict[str, dict[str, set[str]]]:
    """unit → imported unit → the module-level edges behind it; function-level imports count too."""
    out: dict[str, dict[str, set[str]]] = {}
    for path in sorted(FACTORY.rglob("*.py")):
        mod = _module(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from factory import prompts` imports the module factory.prompts
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            for t in targets:
                if not t.startswith("factory.") or _unit(t) == _unit(mod):
                    continue
                out.setdefault(_unit(mod), {}).setdefault(_unit(t), set()).add(f"{mod} → {t}")
    return out


def cycles(graph: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Strongly connected components with more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_planted_cycle() -> None:
    g = {"a": {"b": {"a.x → b.y"}}, "b": {"c": {"b.y → c.z"}}, "c": {"a": {"c.z → a.x"}}, "d": {"a": {"d → a"}}}
    assert cycles(g) == [["a", "b", "c"]]


def test_no_import_cycle_between_packages() -> None:
    graph = package_imports()
    assert "factory.llm" in graph and "factory.eval" in graph  # the scan sees the packages
    found = cycles(graph)
    detail = [
        f"{' ↔ '.join(c)}: " + "; ".join(sorted(e for a in c for b in c for e in graph.get(a, {}).get(b, ())))
        for c in found
    ]
    assert not found, detail


def test_model_layer_does_not_import_eval() -> None:
    assert "factory.eval" not in package_imports().get("factory.llm", {})


def test_config_does_not_load_the_model_layer() -> None:
    code = (
        "import sys, factory.config; "
        "print(sorted(m for m in sys.modules if m == 'openai' or m.startswith(('openai.', 'factory.llm'))))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert res.stdout.strip() == "[]", res.stdout


# The Dagster-facing modules of the library (AGENTS.md): the code location, the resources and IO
# manager, the model resources, the executor choice, and the two CLI-side readers of the instance (inside functions).
DAGSTER_FACING = {
    "factory.definitions",
    "factory.resources",
    "factory.executors",
    "factory.llm.resource",
    "factory.lineage",
    "factory.cli",
}


def test_only_the_dagster_facing_modules_import_dagster() -> None:
    importers = set()
    for path in sorted(FACTORY.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            if any(n == "dagster" or n.startswith("dagster.") for n in names):
                importers.add(_module(path))
    assert "factory.definitions" in importers  # the scan sees them
    assert importers <= DAGSTER_FACING, sorted(importers - DAGSTER_FACING)
