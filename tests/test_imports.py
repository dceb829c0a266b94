"""The package imports downward only: no import cycles in ``src/aurane`` or ``bench/``, and
no module imports from a layer above its own (``docs/architecture.md``, Layers).

The graph is read from the source with Python's ``ast``, so it sees every import statement:
at module level, inside functions (a back-import deferred to a call is still a cycle of the
design, and only hides the loop until the call) and under ``if TYPE_CHECKING:`` (an
annotation naming an upper layer's class ties the layers as surely). ``from p import name``
is an edge to the module ``p.name`` when there is one, else to ``p``, and also to ``p`` when
``p`` is a subpackage (its ``__init__`` runs first); ``import p.q`` an edge to ``p.q``. What it cannot see: modules imported by a string (``importlib.import_module``),
as in ``aurane/__init__.py``'s and ``aurane/runtime/__init__.py``'s lazy tables and
``cli/commands.py``; each of those names modules of its own layer or below.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import REPO

SRC = REPO / "src" / "aurane"
BENCH = REPO / "bench"
ARCHITECTURE = REPO / "docs" / "architecture.md"

# Top to bottom: a module may import from its own layer (without a cycle) and from the layers
# below it, never from one above. A name stands for the module and everything under it; the
# longest name that matches a module decides its layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("command line", ("aurane", "aurane.__main__", "aurane.cli")),
    (
        "tools and editors",
        ("aurane.tools", "aurane.lsp", "aurane.playground", "aurane.incremental", "aurane.lift"),
    ),
    ("trust", ("aurane.verify", "aurane.export", "aurane.trained")),
    ("compile", ("aurane.compile", "aurane.cache", "aurane.frontend", "aurane.stages")),
    (
        "backends and analysis",
        ("aurane.backends", "aurane.analysis", "aurane.optimize", "aurane.sourcemap"),
    ),
    ("IR", ("aurane.ir",)),
    ("semantics", ("aurane.semantics",)),
    ("syntax", ("aurane.syntax",)),
    (
        "foundations",
        (
            "aurane.ops",
            "aurane.codes",
            "aurane.diagnostics",
            "aurane.render",
            "aurane.source",
            "aurane.records",
            "aurane.fs",
            "aurane.version",
            "aurane.project",
            "aurane.data",
            "aurane.runtime",
        ),
    ),
)
# what generated programs import (and --standalone copies): it imports nothing of the compiler
SELF_CONTAINED = ("aurane.runtime",)

Graph = dict[str, set[str]]


def modules(root: Path, package: str) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` under ``root`` (``package`` "" for a folder of
    scripts such as bench/, imported by their stems)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([package, *parts] if package else parts)] = path
    return found


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


@cache
def _import_statements(text: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The import statements of a module's text (cached: the tests that add a deliberate
    bad import parse the whole package again with one file changed)."""
    found = (n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Import | ast.ImportFrom))
    return tuple(found)


def import_graph(found: Mapping[str, Path]) -> Graph:
    """Module -> the modules of ``found`` it imports (every import statement, see above)."""
    graph: Graph = {name: set() for name in found}
    for name, path in found.items():
        is_package = path.name == "__init__.py"
        try:
            statements = _import_statements(path.read_text(encoding="utf-8"))
        except SyntaxError as error:
            raise SyntaxError(f"{path}: {error}") from error
        for node in statements:
            targets = _imported(node, name, is_package)
            if isinstance(node, ast.ImportFrom):
                # ``from p import q``: the submodule p.q when there is one, else p itself
                named = [t for t in targets[:-1] if t in found]
                package = targets[-1]
                # ...and the package p too, whose __init__ runs first: a submodule that takes
                # a sibling through its package while that package's __init__ imports it is a
                # cycle. The root package is exempt: its __init__ imports lazily by name.
                runs_init = "." in package and found.get(package, Path()).name == "__init__.py"
                if len(named) < len(targets) - 1 or runs_init:
                    named.append(package)
                targets = named
            for target in targets:
                while target and target not in found:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """Every set of modules that import each other in a circle (strongly connected
    components of two or more), each sorted, by Tarjan's algorithm without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def circle_edges(graph: Graph, component: Iterable[str]) -> list[str]:
    members = set(component)
    return [f"{a} -> {b}" for a in sorted(members) for b in sorted(graph[a] & members)]


def layer_of(module: str) -> int:
    best: tuple[int, int] | None = None
    for number, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and (
                best is None or len(name) > best[1]
            ):
                best = (number, len(name))
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and the docs' table")
    return best[0]


def upward_imports(graph: Graph) -> list[str]:
    """``a -> b (layer x imports layer y)`` for each import of a higher layer's module."""
    found = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            if layer_of(target) < layer_of(module):
                found.append(
                    f"{module} -> {target} ({LAYERS[layer_of(module)][0]} imports "
                    f"{LAYERS[layer_of(target)][0]})"
                )
    return found


def outside_imports(graph: Graph, package: str) -> list[str]:
    """Imports from ``package`` of modules outside it."""
    inside = [m for m in graph if m == package or m.startswith(package + ".")]
    return [
        f"{m} -> {t}"
        for m in sorted(inside)
        for t in sorted(graph[m])
        if not (t == package or t.startswith(package + "."))
    ]


def layer_table() -> str:
    """The Layers table of docs/architecture.md (a test keeps the two equal)."""
    rows = ["| layer | modules |", "| --- | --- |"]
    for name, members in LAYERS:
        rows.append(f"| {name} | {', '.join(f'`{m}`' for m in members)} |")
    return "\n".join(rows) + "\n"


# -- the package and the benchmarks ---------------------------------------------------------


def test_the_package_has_no_import_cycles() -> None:
    graph = import_graph(modules(SRC, "aurane"))
    assert len(graph) > 150 and "aurane.ir.lower" in graph["aurane.frontend"]
    found = cycles(graph)
    assert found == [], "\n".join(e for c in found for e in circle_edges(graph, c))


def test_every_layer_imports_only_downward() -> None:
    graph = import_graph(modules(SRC, "aurane"))
    assert upward_imports(graph) == []


def test_the_runtime_imports_nothing_of_the_compiler() -> None:
    graph = import_graph(modules(SRC, "aurane"))
    for package in SELF_CONTAINED:
        assert outside_imports(graph, package) == []


def test_the_benchmarks_have_no_import_cycles() -> None:
    graph = import_graph(modules(BENCH, ""))
    assert "_common" in graph["train_speed"]
    found = cycles(graph)
    assert found == [], "\n".join(e for c in found for e in circle_edges(graph, c))


def test_the_architecture_document_draws_these_layers() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert layer_table() in text, "docs/architecture.md: copy tests/test_imports.layer_table()"


# -- the check itself, on deliberate back-imports ---------------------------------------------


def _package(root: Path, files: Mapping[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return modules(root / "pkg", "pkg")


def test_a_back_import_inside_a_function_is_a_cycle(tmp_path: Path) -> None:
    found = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": "def late():\n    from pkg.high import top\n    return top\n",
            "pkg/high.py": "from pkg import low\n\ntop = low\n",
            "pkg/other.py": "from . import low\nimport pkg.high\n",
        },
    )
    graph = import_graph(found)
    assert graph["pkg.other"] == {"pkg.low", "pkg.high"}  # relative and dotted imports
    assert cycles(graph) == [["pkg.high", "pkg.low"]]
    assert circle_edges(graph, ["pkg.high", "pkg.low"]) == [
        "pkg.high -> pkg.low",
        "pkg.low -> pkg.high",
    ]


def test_a_type_checking_back_import_is_a_cycle(tmp_path: Path) -> None:
    found = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/helpers.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
            "    from pkg.main import Engine\n\ndef step(e: 'Engine') -> None: ...\n",
            "pkg/main.py": "from pkg.helpers import step\n\nclass Engine: ...\n",
        },
    )
    assert cycles(import_graph(found)) == [["pkg.helpers", "pkg.main"]]


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of src/aurane to add a deliberate back-import to."""
    copy = tmp_path / "aurane"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "static"))
    return copy


def test_a_back_import_added_to_the_package_is_caught(package_copy: Path) -> None:
    blocks = package_copy / "ir" / "blocks.py"
    assert cycles(import_graph(modules(package_copy, "aurane"))) == []
    blocks.write_text(
        blocks.read_text(encoding="utf-8")
        + "\n\ndef _late() -> object:\n    from aurane.ir.lower import lower_program\n\n"
        "    return lower_program\n",
        encoding="utf-8",
    )
    graph = import_graph(modules(package_copy, "aurane"))
    found = cycles(graph)
    assert len(found) == 1 and {"aurane.ir.blocks", "aurane.ir.lower"} <= set(found[0])
    assert "aurane.ir.blocks -> aurane.ir.lower" in circle_edges(graph, found[0])


def test_an_upward_import_added_to_the_package_is_caught(package_copy: Path) -> None:
    dims = package_copy / "semantics" / "dims.py"
    dims.write_text(
        dims.read_text(encoding="utf-8") + "\n\ndef _late() -> None:\n"
        "    from aurane.ir.graph import Graph  # noqa: F401\n",
        encoding="utf-8",
    )
    graph = import_graph(modules(package_copy, "aurane"))
    assert upward_imports(graph) == [
        "aurane.semantics.dims -> aurane.ir.graph (semantics imports IR)"
    ]
    assert cycles(graph) == []  # a layering fault need not be a cycle: both checks run
    runtime = package_copy / "runtime" / "metrics.py"
    runtime.write_text(
        runtime.read_text(encoding="utf-8") + "\nfrom aurane.ops import CATALOG  # noqa\n",
        encoding="utf-8",
    )
    graph = import_graph(modules(package_copy, "aurane"))
    assert outside_imports(graph, "aurane.runtime") == ["aurane.runtime.metrics -> aurane.ops"]
