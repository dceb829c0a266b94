"""``--standalone``: copy the runtime parts a generated program uses into the program.

A default program imports ``aurane.runtime`` as ``rt`` and calls ``rt.NAME``. ``standalone``
rewrites such a program so it needs no Aurane: every ``rt.NAME`` it uses, and everything
those need, is copied from the runtime's own source files (``aurane/runtime/*.py``, read
with ``importlib.resources``) in dependency order; public names gain a leading underscore
(``rt.Run`` becomes ``_Run``) so they cannot meet a model class's name, and the runtime's
imports join the program's. The datasets a program names as ``aurane.data.NAME`` are
copied the same way (from ``aurane/runtime/data.py``), so a standalone program imports
nothing of Aurane. Nothing else changes. ``fill`` expands the job templates.
"""

from __future__ import annotations

import ast as pyast
import functools
import re
from importlib import resources

from aurane.backends.torch.imports import sort_imports
from aurane.records import record

# Runtime modules in dependency order (a module only uses those before it).
MODULES = (
    "version",
    "data",
    "faults",
    "contracts",
    "distributed",
    "rng",
    "checkpoint",
    "sharding",
    "sharded",
    "lock",
    "folders",
    "history",
    "progress",
    "tasks",
    "metrics",
    "schedule",
    "optim",
    "gan",
    "run",
)
RUNTIME_ALIAS = "rt"
DATA_MODULE = "aurane.data"  # the datasets' public name in programs (aurane/runtime/data.py)
_FUTURE = "from __future__ import annotations"


@record(frozen=True)
class Symbol:
    """One top-level statement of a runtime module and what it needs."""

    names: tuple[str, ...]  # what it binds
    module: str
    order: int
    node: pyast.stmt
    source: str  # the module's whole text (positions in ``node`` refer to it)
    uses: frozenset[str]  # names it reads outside annotations
    imports: tuple[tuple[str, str], ...]  # (name, import line) of the external names it reads


def _annotation_free_names(node: pyast.AST) -> set[str]:
    """Names read by ``node``, skipping annotations (never evaluated under PEP 563)."""
    found: set[str] = set()

    def visit(item: pyast.AST) -> None:
        if isinstance(item, pyast.Name) and isinstance(item.ctx, pyast.Load):
            found.add(item.id)
        for field, value in pyast.iter_fields(item):
            if field in ("annotation", "returns"):
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, pyast.AST):
                    visit(child)

    visit(node)
    return found


def _bound(stmt: pyast.stmt) -> tuple[str, ...]:
    """Module-level names a top-level statement binds (not its comprehension variables)."""
    if isinstance(stmt, pyast.FunctionDef | pyast.ClassDef | pyast.AsyncFunctionDef):
        return (stmt.name,)
    if isinstance(stmt, pyast.Assign | pyast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, pyast.Assign) else [stmt.target]
        return tuple(t.id for t in targets if isinstance(t, pyast.Name))
    if isinstance(stmt, pyast.Import | pyast.ImportFrom):
        return tuple((a.asname or a.name).split(".")[0] for a in stmt.names)
    if isinstance(stmt, pyast.Try):
        inner = [*stmt.body, *(s for h in stmt.handlers for s in h.body)]
        return tuple(dict.fromkeys(name for s in inner for name in _bound(s)))
    return ()


@functools.cache
def symbols() -> dict[str, Symbol]:
    """Every inlinable top-level name of the runtime, from its source files."""
    table: dict[str, Symbol] = {}
    order = 0
    package = resources.files("aurane.runtime")
    for module in MODULES:
        source = package.joinpath(f"{module}.py").read_text(encoding="utf-8")
        tree = pyast.parse(source)
        external: dict[str, str] = {}
        for stmt in tree.body:
            if isinstance(stmt, pyast.Import | pyast.ImportFrom):
                if isinstance(stmt, pyast.ImportFrom) and (stmt.module or "").startswith(
                    ("aurane.runtime", "__future__")
                ):
                    continue  # runtime names resolve to their own symbols
                for alias in stmt.names:
                    bound = (alias.asname or alias.name).split(".")[0]
                    if isinstance(stmt, pyast.Import):
                        line = f"import {alias.name}" + (
                            f" as {alias.asname}" if alias.asname else ""
                        )
                    else:
                        line = f"from {stmt.module} import {alias.name}" + (
                            f" as {alias.asname}" if alias.asname else ""
                        )
                    external[bound] = line
        for stmt in tree.body:
            if isinstance(stmt, pyast.Import | pyast.ImportFrom):
                continue
            if isinstance(stmt, pyast.Expr) and isinstance(stmt.value, pyast.Constant):
                continue  # the module docstring
            uses = _annotation_free_names(stmt)
            imports = tuple(sorted((n, external[n]) for n in uses if n in external))
            names = _bound(stmt)
            symbol = Symbol(names, module, order, stmt, source, frozenset(uses), imports)
            order += 1
            for name in names:
                table[name] = symbol
    return table


def closure(names: set[str]) -> list[Symbol]:
    """The symbols ``names`` need, transitively, in source order."""
    table = symbols()
    wanted: dict[int, Symbol] = {}
    stack = [name for name in names if name in table]
    while stack:
        symbol = table[stack.pop()]
        if symbol.order not in wanted:
            wanted[symbol.order] = symbol
            stack += [name for name in symbol.uses if name in table]
    return [wanted[key] for key in sorted(wanted)]


def inlined_name(name: str) -> str:
    """A public runtime name gains a leading underscore; imports (``np``) keep theirs."""
    symbol = symbols().get(name)
    if name.startswith("_") or (symbol is not None and isinstance(symbol.node, pyast.Try)):
        return name
    return "_" + name


def _replace(lines: list[bytes], edits: list[tuple[int, int, int, int, str]]) -> None:
    """Apply (line, col, end_line, end_col, text) edits (1-based lines, byte columns)."""
    for line, col, end_line, end_col, text in sorted(edits, reverse=True):
        head = lines[line - 1][:col]
        tail = lines[end_line - 1][end_col:]
        lines[line - 1 : end_line] = [head + text.encode() + tail]


def symbol_source(symbol: Symbol) -> str:
    """The statement's text with runtime names renamed for inlining."""
    node = symbol.node
    all_lines = symbol.source.encode().split(b"\n")
    first = node.lineno - 1
    if isinstance(node, pyast.FunctionDef | pyast.ClassDef) and node.decorator_list:
        first = node.decorator_list[0].lineno - 1
    end = node.end_lineno or node.lineno
    lines = all_lines[first:end]
    lines[-1] = lines[-1][: node.end_col_offset]
    table = symbols()
    edits = []
    for item in pyast.walk(node):
        if isinstance(item, pyast.Name) and item.id in table and item.id != inlined_name(item.id):
            assert item.end_lineno is not None and item.end_col_offset is not None
            edits.append(
                (
                    item.lineno - first,
                    item.col_offset,
                    item.end_lineno - first,
                    item.end_col_offset,
                    inlined_name(item.id),
                )
            )
    _replace(lines, edits)
    text = b"\n".join(lines).decode()
    if isinstance(node, pyast.FunctionDef | pyast.ClassDef) and node.name != inlined_name(
        node.name
    ):
        keyword = "class" if isinstance(node, pyast.ClassDef) else "def"
        text = re.sub(
            rf"^(\s*{keyword} ){node.name}\b",
            rf"\g<1>{inlined_name(node.name)}",
            text,
            count=1,
            flags=re.M,
        )
    return text


def standalone(code: str) -> str:
    """``code`` (a default generated program) with the runtime it uses copied in."""
    tree = pyast.parse(code)
    lines = code.encode().split(b"\n")
    used: set[str] = set()
    edits: list[tuple[int, int, int, int, str]] = []
    for node in pyast.walk(tree):
        if (
            isinstance(node, pyast.Attribute)
            and isinstance(node.value, pyast.Name)
            and node.value.id == RUNTIME_ALIAS
        ) or (isinstance(node, pyast.Attribute) and pyast.unparse(node.value) == DATA_MODULE):
            used.add(node.attr)
            assert node.end_lineno is not None and node.end_col_offset is not None
            end = (node.end_lineno, node.end_col_offset)
            edits.append((node.lineno, node.col_offset, *end, inlined_name(node.attr)))
    if not used:
        return code
    used.discard("require")
    needed = closure(used)
    import_lines = [_FUTURE]
    for symbol in needed:
        import_lines += [line for _, line in symbol.imports]
    first_import = None
    last_import = 0
    require_at = None
    for stmt in tree.body:
        if isinstance(stmt, pyast.Import | pyast.ImportFrom):
            segment = pyast.get_source_segment(code, stmt)
            assert segment is not None
            ours = isinstance(stmt, pyast.ImportFrom) and stmt.module == "aurane"
            data = isinstance(stmt, pyast.Import) and [a.name for a in stmt.names] == [DATA_MODULE]
            if not (ours or data):
                import_lines.append(segment)
            first_import = stmt.lineno if first_import is None else first_import
            last_import = stmt.end_lineno or stmt.lineno
        elif _is_require(stmt):
            require_at = stmt.lineno
    edits = [e for e in edits if e[0] != require_at]
    _replace(lines, edits)
    runtime = "\n\n\n".join(
        [
            "# The Aurane runtime parts this program uses, copied from aurane/runtime/*.py"
            " (--standalone)",
            *(symbol_source(s) for s in needed),
        ]
    )
    if require_at is not None:
        lines[require_at - 1] = runtime.encode()
    assert first_import is not None
    block = "\n\n".join(sort_imports(import_lines)).encode()
    lines[first_import - 1 : last_import] = [block]
    return b"\n".join(lines).decode()


def _is_require(stmt: pyast.stmt) -> bool:
    return (
        isinstance(stmt, pyast.Expr)
        and isinstance(stmt.value, pyast.Call)
        and isinstance(stmt.value.func, pyast.Attribute)
        and stmt.value.func.attr == "require"
    )


_PLACEHOLDER = re.compile(r"\$(\w+)")


def fill(template: str, flags: set[str], values: dict[str, str]) -> str:
    """Keep the lines whose flags hold, then substitute ``$name`` placeholders."""
    kept = []
    for line in template.split("\n"):
        if line.startswith("["):
            condition, line = line[1:].split("]", 1)
            if not all(_holds(part, flags) for part in condition.split("&")):
                continue
        kept.append(line)
    # One pass, so a substituted value (which may hold user text) is never rescanned.
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], "\n".join(kept))


def _holds(flag: str, flags: set[str]) -> bool:
    return flag[1:] not in flags if flag.startswith("!") else flag in flags
