"""An AST audit of generated Python (RELIABILITY K-GEN, K-INJ).

``profile(code)`` lists every security-relevant construct: imports, calls of
dangerous builtins, calls through ``os``/``subprocess``/``sys``/``builtins``/
``importlib``/``shutil``, dunder attribute access, and bindings that shadow a builtin
or a module the file imports. A hostile program is audited against its *benign twin*
(the same program with plain names and strings): the profiles must be equal, so
nothing in the output exists because of what the hostile text said, only because of
what the program asked for (a training job's runtime, a ``use`` line, a ``from``).
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from collections import Counter
from collections.abc import Iterable

ALWAYS_ALLOWED_IMPORTS = frozenset(
    {"torch", "torch.nn", "torch.nn.functional", "math", "torchvision", "aurane.data"}
)
DANGEROUS_BUILTINS = frozenset(
    {
        "eval",
        "exec",
        "__import__",
        "open",
        "getattr",
        "setattr",
        "delattr",
        "compile",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "input",
        "memoryview",
    }
)
DANGEROUS_MODULES = frozenset({"os", "subprocess", "sys", "builtins", "importlib", "shutil"})
ALLOWED_DUNDER_BINDINGS = frozenset({"__init__", "__all__"})
ALLOWED_DUNDER_ATTRIBUTES = frozenset({"__init__", "__name__"})
CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
RAW_FORBIDDEN = ("\r", "\x00", "\x0b", "\x0c", "\x85", "\u2028", "\u2029")
_BUILTIN_NAMES = frozenset(dir(builtins)) - {"__name__", "__doc__"}


def imports(tree: ast.AST) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append(node.module or "")
    return found


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else "?"


def _scope_bindings(body: list[ast.stmt]) -> Iterable[tuple[str, str]]:
    """Names bound directly in a module body (not inside functions or classes)."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield type(stmt).__name__, stmt.name
            continue
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                yield "import", alias.asname or alias.name.split(".")[0]
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                yield "assign", node.id


def _function_shadowing(tree: ast.AST, imported: set[str]) -> Iterable[str]:
    """Local names that hide a builtin or an import the same function still relies on.

    A local named like a module is harmless unless the function also uses the module
    (``random.getstate()``) or calls the builtin (``super()``, ``len(...)``) by that name.
    """
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        local: set[str] = set()
        relied: set[str] = set()
        for node in ast.walk(func):
            if isinstance(node, ast.arg):
                local.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in _BUILTIN_NAMES or node.func.id in imported:
                    relied.add(node.func.id)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in imported
            ):
                relied.add(node.value.id)
        for name in sorted(local & relied - {"self"}):
            yield f"{func.name} shadows {name}"


@functools.lru_cache(maxsize=64)
def profile(code: str) -> Counter[str]:
    """Security-relevant constructs of ``code``, as a multiset of short descriptions."""
    return tree_profile(ast.parse(code))


def tree_profile(tree: ast.Module) -> Counter[str]:
    items: Counter[str] = Counter(f"import {name}" for name in imports(tree))
    module_names = list(_scope_bindings(tree.body))
    imported = {name for kind, name in module_names if kind == "import"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in DANGEROUS_BUILTINS:
                items[f"call {func.id}"] += 1
            elif isinstance(func, ast.Attribute) and _root(func) in DANGEROUS_MODULES:
                items[f"call {_dotted(func)}"] += 1
        elif isinstance(node, ast.Attribute):
            dunder = node.attr.startswith("__") and node.attr.endswith("__")
            if dunder and node.attr not in ALLOWED_DUNDER_ATTRIBUTES:
                items[f"attribute {node.attr}"] += 1
    for kind, name in module_names:
        if name.startswith("__") and name not in ALLOWED_DUNDER_BINDINGS:
            items[f"binds dunder {name}"] += 1
        elif name in _BUILTIN_NAMES:
            items[f"binds builtin {name} ({kind})"] += 1
        elif kind != "import" and name in imported:
            items[f"binds imported {name} ({kind})"] += 1
    items.update(_function_shadowing(tree, imported))
    return items


def problems(
    code: str, *, uses: Iterable[str] = (), twin: str | None = None, derived: Iterable[str] = ()
) -> list[str]:
    """Everything wrong with ``code``; empty when it passes the audit.

    ``uses``: modules the program's ``use`` lines (or ``from`` lines) import;
    ``derived``: dotted call names the program itself asked for (a dataset ``from``).
    """
    found = [f"raw {c!r} in output" for c in RAW_FORBIDDEN if c in code]
    found += [
        f"coding cookie on line {i + 1}"
        for i, line in enumerate(code.split("\n")[:2])
        if CODING.match(line)
    ]
    try:
        tree = ast.parse(code)
        compile(tree, "<generated>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return [*found, f"does not compile: {error}"]
    allowed = ALWAYS_ALLOWED_IMPORTS | set(uses)
    mine = tree_profile(tree)
    if twin is None:
        found += [f"unexpected import {name}" for name in imports(tree) if name not in allowed]
        found += [f"unexpected {item}" for item in mine if not item.startswith("import ")]
    else:
        expected = Counter(profile(twin))  # a copy: the cached one stays as it is
        for module in uses:  # the hostile program's own use lines may add imports
            expected[f"import {module}"] += mine[f"import {module}"] - expected[f"import {module}"]
        for name in derived:
            expected[f"call {name}"] = mine[f"call {name}"]
        # Fewer constructs than the twin (a dataset that needs no torchvision) is no risk.
        found += [f"not in the benign twin: {item}" for item in mine - expected]
    return found


def string_round_trips(code: str, value: str, tree: ast.Module | None = None) -> bool:
    """Some string literal in ``code`` evaluates to exactly ``value``, via its own source text."""
    tree = tree or ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value == value:
            segment = ast.get_source_segment(code, node)
            if segment is not None and ast.literal_eval(segment) == value:
                return True
    return False
