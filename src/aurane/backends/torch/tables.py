"""Constant tables a class indexes by a parameter, as module constants (issue 24 item 3).

An item of a table of numbers at an index a block parameter gives (``dense(sizes[k])``
of ``sizes = [4, 8, 16, 32]``) is a size whose tree is the table indexed by the index's
tree (``symbolic.Item``), printed with the table written out: ``nn.Linear(in_features,
[4, 8, 16, 32][k])``. Where the source names the table (a global constant or a block's),
the file defines it once as a module constant, as a PyTorch engineer writes a
configuration table, and the classes read it by that name: ``SIZES = [4, 8, 16, 32]``,
``nn.Linear(in_features, SIZES[k])``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from aurane.syntax import ast


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


def named_tables(
    classes: list[str], tables: Mapping[str, str], allocate: Callable[[str, str], str]
) -> tuple[list[str], list[str]]:
    """``classes`` with each indexed table of ``tables`` (``[4, 8, 16, 32][k]``) read by
    its module constant's name (``SIZES[k]``), and the lines defining the constants they
    read (``SIZES = [4, 8, 16, 32]``), in the order first read; ``allocate`` gives a
    table (its text and the source's name) its module name."""
    defined: dict[str, str] = {}
    written: list[str] = []
    for index, text in enumerate(classes):
        for table, name in tables.items():
            # the table itself, not the tail of a call's arguments or a subscript
            pattern = re.compile(r"(?<![\w\]).])" + re.escape(table) + r"(?=\[)")
            if pattern.search(text) is None:
                continue
            if table not in defined:
                defined[table] = allocate(table, name)
                written.append(f"{defined[table]} = {table}")
            text = pattern.sub(defined[table], text)
        classes[index] = text
    return classes, written
