"""The parameters of a block whose values a class written out for its calls may fold,
beside those its loops count by (``param_blocks.loop_params``): those its ``if`` tests read
(``if act:``), directly or through a constant, and those its source reads at all. Such a
class may take them only if it refuses any other value (``ParamClasses._guards``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aurane.records import fields, is_record
from aurane.source import Span
from aurane.syntax import ast


def names_read(expr: Any) -> set[str]:
    """Every name ``expr`` reads (a list written out included)."""
    if isinstance(expr, ast.Name):
        return {expr.id}
    if isinstance(expr, tuple):
        return {name for item in expr for name in names_read(item)}
    if is_record(expr) and not isinstance(expr, Span):
        return {name for f in fields(expr) for name in names_read(getattr(expr, f.name))}
    return set()


def through_constants(model: ast.Model, names: set[str]) -> set[str]:
    """``names`` with the names the block's constants among them read, in turn."""
    constants = {f.name: f.value for f in model.fields}
    found = set(names)
    pending = list(names & constants.keys())
    while pending:
        value = constants[pending.pop()]
        for name in names_read(value) - found:
            found.add(name)
            if name in constants:
                pending.append(name)
    return found


def branch_params(model: ast.Model) -> frozenset[str]:
    """The block's parameters that its ``if`` tests read, directly or through a constant
    (``if act:``, ``if width > 4:``): a class written for one call keeps one branch."""
    ifs: list[ast.If] = []
    pending = list(model.forward.body if model.forward is not None else ())
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, ast.For):
            pending += stmt.body
        elif isinstance(stmt, ast.If):
            ifs.append(stmt)
            pending += [inner for branch in stmt.branches for inner in branch.body]
    return params_tested(model, ifs)


def params_tested(model: ast.Model, ifs: Iterable[ast.If]) -> frozenset[str]:
    """The block's parameters that the tests of ``ifs`` read, directly or through a
    constant: which branch runs depends on them."""
    found = {name for stmt in ifs for branch in stmt.branches for name in names_read(branch.test)}
    return frozenset(through_constants(model, found) & {p.name for p in model.params})


def branches_on_iterations(model: ast.Model) -> bool:
    """Whether an ``if`` in a loop tests the loop's targets (``if i == n - 1:``): the
    roller numbers a branch's unnamed modules by the iterations its calls take it at,
    which calls agreeing on the count cannot tell apart from another progression."""

    def walk(body: tuple[ast.ForwardStmt, ...], targets: frozenset[str]) -> bool:
        for stmt in body:
            if isinstance(stmt, ast.For):
                names = frozenset(name for name, _ in stmt.target.names())
                if walk(stmt.body, targets | names):
                    return True
            elif isinstance(stmt, ast.If):
                for branch in stmt.branches:
                    if targets & names_read(branch.test) or walk(branch.body, targets):
                        return True
        return False

    return walk(model.forward.body if model.forward is not None else (), frozenset())


def read_params(model: ast.Model) -> frozenset[str]:
    """The block's parameters its forward or constants read at all (one it ignores,
    ``head_dim`` of a block without attention, may take any value)."""
    body = model.forward.body if model.forward is not None else ()
    found = names_read(body) | names_read(tuple(f.value for f in model.fields))
    return frozenset(found & {p.name for p in model.params})


def params_by_call(model: ast.Model) -> dict[Span, frozenset[str]]:
    """Each call in the block's forward, by its span (its node's), with the block's
    parameters its arguments read, directly or through a constant (``layer_norm(axes=k)``:
    ``k``): a class written out for its calls that builds that node's module without
    them folded their values there."""
    params = {p.name for p in model.params}
    found: dict[Span, frozenset[str]] = {}
    pending: list[Any] = list(model.forward.body if model.forward is not None else ())
    while pending:
        item = pending.pop()
        if isinstance(item, tuple):
            pending += item
            continue
        if not is_record(item) or isinstance(item, Span):
            continue
        if isinstance(item, ast.Call):
            # not a call or chain given as an argument (``dense(reshape(h, g, d), d)``):
            # its node's own
            given = (*item.args, *(k.value for k in item.keywords))
            read = names_read(tuple(a for a in given if not isinstance(a, ast.Call | ast.Chain)))
            if names := through_constants(model, read) & params:
                found[item.span] = frozenset(names)
        pending += [getattr(item, f.name) for f in fields(item)]
    return found
