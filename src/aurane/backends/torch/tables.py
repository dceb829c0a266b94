"""Constant tables a class indexes by a parameter, as module constants (issue 24 item 3).

An item of a table of numbers at an index a block parameter gives (``dense(sizes[k])``
of ``sizes = [4, 8, 16, 32]``) is a size whose tree is the table indexed by the index's
tree (``symbolic.Item``), printed with the table written out: ``nn.Linear(in_features,
[4, 8, 16, 32][k])``. Where the source names the table (a global constant or a block's),
the file defines it once as a module constant, as a PyTorch engineer writes a
configuration table, and the classes read it by that name: ``SIZES = [4, 8, 16, 32]``,
``nn.Linear(in_features, SIZES[k])``, ``enumerate(CFG)``. The name is given as an item
(or the loop roller's name of the table) is printed (``TableNames``, through
``symbolic.tables_named``), from the record, not by rewriting finished text.
"""

from __future__ import annotations

import ast as pyast
from collections.abc import Callable, Mapping
from typing import Any

from aurane.semantics.symbolic import TableNamer
from aurane.syntax import ast
from aurane.syntax.items import syntax_items


def program_tables(program: ast.AuraneProgram) -> dict[str, str]:
    """Each table of numbers a constant of ``program`` writes out (a global one or a
    block's), as Python (``symbolic.Item``'s text), by the constant's name; a table two
    names write alike is left out (which one a class means is not known)."""
    found: dict[str, set[str]] = {}
    named = [(c.name, c.value) for c in program.constants]
    named += [(f.name, f.value) for m in program.models for f in m.fields]
    for name, expr in named:
        value = _table(expr)
        if isinstance(value, list | tuple):
            found.setdefault(repr(value), set()).add(name)
    return {text: next(iter(names)) for text, names in found.items() if len(names) == 1}


def _table(expr: ast.Expr) -> Any:
    """The value of a list or tuple of numbers written out (nested alike), else None."""
    if isinstance(expr, ast.Number) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, ast.Number):
        value = expr.operand.value
        return -value if expr.op == "-" else value
    if isinstance(expr, ast.ListExpr | ast.TupleExpr) and expr.items:
        items = [_table(item) for item in expr.items]
        if any(item is None for item in items):
            return None
        return items if isinstance(expr, ast.ListExpr) else tuple(items)
    return None


class TableNames(TableNamer):
    """The module constants of a file's tables, each named when an item first prints it
    (``symbolic.tables_named``): ``SIZES`` for the source's ``sizes``, from ``allocate``,
    which gives a name no class of the file binds (F2: a constructor parameter ``SIZES``
    would hide the constant)."""

    def __init__(self, tables: Mapping[str, str], allocate: Callable[[str, str], str]) -> None:
        self.tables = tables  # a table's text -> the source's name for it (``program_tables``)
        self.allocate = allocate
        self.names: dict[str, str] = {}  # a table's text -> its constant, as first printed
        self.values: dict[str, Any] = {}  # a constant -> its table's value, for evaluations

    def __call__(self, text: str) -> str:
        """The constant a table written ``text`` is read by, or ``text`` for a table the
        source does not name."""
        source = self.tables.get(text)
        if source is None:
            return text
        found = self.names.get(text)
        if found is None:
            found = self.names[text] = self.allocate(source.upper(), source)
            self.values[found] = pyast.literal_eval(text)
        return found

    def constants(self) -> Mapping[str, Any]:
        return self.values

    def definitions(self, code: str) -> list[str]:
        """``SIZES = [4, 8, 16, 32]``: each constant ``code`` reads, in the order ``code``
        first reads them (a class tried and not kept may have named one it never reads)."""
        by_name = {name: text for text, name in self.names.items()}
        first: dict[str, tuple[int, int]] = {}
        for node in pyast.walk(pyast.parse(code)):
            if isinstance(node, pyast.Name) and node.id in by_name:
                at = (node.lineno, node.col_offset)
                first[node.id] = min(first.get(node.id, at), at)
        return [f"{name} = {by_name[name]}" for name in sorted(first, key=first.__getitem__)]


def source_identifiers(program: ast.AuraneProgram) -> frozenset[str]:
    """Every identifier the source writes (a parameter, a local, a field, a model, a
    loop's target...): a generated class may bind any of them, so no constant takes one."""
    return frozenset(
        item for item in syntax_items(program) if isinstance(item, str) and item.isidentifier()
    )
