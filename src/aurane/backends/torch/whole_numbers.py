"""Parameters the source uses as a table's index (``sizes[k]``), where Python also takes a
boolean (issue 24 item 3).

The language refuses ``true`` there (R004: ``an index must be an integer``); Python's
``True`` is the integer 1, so a class built with ``k=True`` would index item 1,
computing what no source program does. Where a boolean may reach such a parameter (the
source leaves it without an annotation), the class opens its ``__init__`` by refusing
one, by name::

    if isinstance(k, bool):  # a table's index is no boolean
        raise ValueError(f"P is written for a whole number k, not {k}")

A parameter annotated ``int`` (or ``float``) is refused a boolean by the language at the
call, and no guard is written for it; nor where a call gives it a boolean. A loop's
count (``range(n)``, which the language refuses a boolean too) gets none: ``range(True)``
runs the one iteration ``range(1)`` does, and the guard would open nearly every rolled
class with a loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aurane.backends.torch.kinds import is_number
from aurane.backends.torch.refusals import refusal
from aurane.semantics.symbolic import plain
from aurane.syntax import ast
from aurane.syntax.items import syntax_items

_WHY = "a table's index is no boolean"


def indexing_params(model: ast.Model) -> list[str]:
    """The unannotated parameters of ``model`` the source reads as a table's index, by
    themselves (``sizes[k]``; not ``sizes[k + 1]``), in the order of the signature, each
    with why a boolean is refused. A name the forward binds again is left out."""
    unannotated = [p.name for p in model.params if p.annotation is None]
    if not unannotated:
        return []
    roots: list[object] = [field.value for field in model.fields]
    if model.forward is not None:
        roots.append(model.forward.body)
    read: set[str] = set()
    bound: set[str] = set()
    for node in syntax_items(tuple(roots)):
        if isinstance(node, ast.Subscript) and isinstance(node.index, ast.Name):
            read.add(node.index.id)
        elif isinstance(node, ast.Assign):
            bound.add(node.target)
        elif isinstance(node, ast.For):
            bound.update(name for name, _ in node.target.names())
    return [name for name in unannotated if name in read and name not in bound]


def number_names(model: ast.Model) -> frozenset[str]:
    """The names of ``model`` no boolean reaches: its parameters annotated ``int`` or
    ``float`` (the language refuses a boolean at the call) and the targets of its loops
    over ``range``."""
    names = {p.name for p in model.params if p.annotation in ("int", "float")}
    if model.forward is not None:
        for node in syntax_items(model.forward.body):
            if not isinstance(node, ast.For) or not isinstance(node.iterable, ast.Call):
                continue
            if node.iterable.func == "range":
                names.update(name for name, _ in node.target.names())
    return frozenset(names)


def boolean_refusals(
    model: ast.Model, class_name: str, given: Sequence[Mapping[str, Any]]
) -> list[str]:
    """The lines refusing a boolean for each of ``indexing_params`` the class takes,
    where each of the calls' (or variants') arguments ``given`` is a number (none given:
    the class does not take it)."""
    out: list[str] = []
    for name in indexing_params(model):
        values = [plain(args[name]) for args in given if name in args]
        if not values or not all(is_number(value) for value in values):
            continue
        test = f"isinstance({name}, bool)"
        out += refusal(class_name, test, f"for a whole number {name}", _WHY, name)
    return out
