"""Drop the locals a rolled class's ``__init__`` assigns and never reads.

A block's constants (``c0 = -p0``) and the walk's running width (``channels =
in_channels``) are written as locals of ``__init__`` before the modules that may size
themselves with them. Where forward reads a constant through its parameters instead and
no module is sized by it, the line is dead code a reader would delete: it is deleted here,
on the finished class, where every read can be seen. Only a line that cannot change what
``__init__`` builds goes: a plain name assigned arithmetic of names and constants, or of
the pure builtins below (never a module's constructor, which draws from the RNG).
"""

from __future__ import annotations

import ast

__all__ = ["without_unread_locals"]

# calls that only compute a number from numbers: dropping one changes nothing else
_PURE = frozenset({"abs", "int", "float", "len", "max", "min", "round"})


def without_unread_locals(lines: list[str]) -> list[str]:
    """``lines`` (one class) without ``__init__``'s unread pure local assignments; the
    same lines where there are none or the class does not parse."""
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return lines
    init = _init_of(tree)
    if init is None:
        return lines
    dropped: set[int] = set()
    bodies = _bodies(init.body)
    while True:
        reads = {
            node.id
            for statement in init.body
            if statement.lineno not in dropped
            for node in ast.walk(statement)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        }
        dead = {
            statement.lineno for body in bodies for statement in _droppable(body, dropped, reads)
        }
        if not dead:
            break
        dropped |= dead
    return [line for number, line in enumerate(lines, 1) if number not in dropped]


def _bodies(body: list[ast.stmt]) -> list[list[ast.stmt]]:
    """``body`` and the bodies of its loops and branches (``s_width = channels`` at the
    start of an iteration: ``block_walk``), at any depth."""
    found = [body]
    for statement in body:
        if isinstance(statement, ast.For | ast.If):
            found += _bodies(statement.body) + _bodies(statement.orelse)
    return found


def _droppable(body: list[ast.stmt], dropped: set[int], reads: set[str]) -> list[ast.stmt]:
    """The unread pure locals of ``body``, where one statement of it stays (a loop or a
    branch of no statement would not parse)."""
    kept = [statement for statement in body if statement.lineno not in dropped]
    dead = [statement for statement in kept if _pure_local(statement, reads)]
    return dead if len(dead) < len(kept) else []


def _init_of(tree: ast.Module) -> ast.FunctionDef | None:
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef):
            for method in cls.body:
                if isinstance(method, ast.FunctionDef) and method.name == "__init__":
                    return method
    return None


def _pure_local(statement: ast.stmt, reads: set[str]) -> bool:
    """A one-line ``name = <pure expression>`` whose name nothing reads."""
    if not isinstance(statement, ast.Assign) or statement.end_lineno != statement.lineno:
        return False
    if len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
        return False
    if statement.targets[0].id in reads:
        return False
    return all(
        not isinstance(node, ast.Call)
        or (isinstance(node.func, ast.Name) and node.func.id in _PURE)
        for node in ast.walk(statement.value)
    ) and not any(
        isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr))
        for node in ast.walk(statement.value)
    )
