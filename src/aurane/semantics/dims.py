"""Declared symbolic sizes: ``seq = dim(1, 2048)`` and their use in ``input_shape``.

A constant (global or in a model) whose value is a ``dim(min=1, max=None)`` call declares a
size symbol. Constant resolution leaves references to it in place (``input_shape = (seq,
512)`` keeps the name ``seq``, ``(2 * seq, 512)`` the arithmetic); lowering turns them into
``aurane.semantics.sizes.SizeExpr`` values, or into plain ints when a size is bound
(``profile --at seq=128``). Any other use of a symbol is an error: the size there must be
concrete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.semantics.sizes import Size, SizeExpr, Symbol, symbol
from aurane.syntax import ast

__all__ = [
    "DIM",
    "declared_dims",
    "dim_declaration",
    "has_symbols",
    "is_dim_call",
    "parse_bindings",
    "shape_value",
]

DIM = "dim"


def is_dim_call(expr: ast.Expr) -> bool:
    """``dim(...)``: the value of a size-symbol declaration."""
    return isinstance(expr, ast.Call) and expr.func == DIM and not expr.suffixes


def dim_declaration(name: str, call: ast.Call) -> tuple[Symbol | None, list[Diagnostic]]:
    """The symbol a resolved ``dim(min, max)`` call declares, or S110 diagnostics."""
    problems: list[Diagnostic] = []
    given: dict[str, ast.Expr] = {}
    for key, expr in zip(("min", "max"), call.args, strict=False):
        given[key] = expr
    if len(call.args) > 2:
        problems.append(
            diag("S110", "dim takes at most two values: min and max", call.args[2].span)
        )
    for keyword in call.keywords:
        if keyword.name not in ("min", "max"):
            problems.append(
                diag(
                    "S110",
                    f"dim has no argument '{keyword.name}'",
                    keyword.span,
                    hint="write dim(), dim(min, max) or dim(max=2048)",
                )
            )
        elif keyword.name in given:
            problems.append(diag("S110", f"dim got '{keyword.name}' twice", keyword.span))
        else:
            given[keyword.name] = keyword.value
    bounds: dict[str, int | None] = {"min": 1, "max": None}
    for key, expr in given.items():
        value = expr.value if isinstance(expr, ast.Number) else None
        if isinstance(expr, ast.NoneLit) and key == "max":
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            problems.append(
                diag(
                    "S110",
                    f"dim {key} must be a positive integer",
                    expr.span,
                    hint="sizes run from 1: write dim(1, 2048)",
                )
            )
            continue
        bounds[key] = value
    low, high = bounds["min"] or 1, bounds["max"]
    if high is not None and high < low:
        problems.append(diag("S110", f"dim max {high} is below its min {low}", call.span))
    if problems:
        return None, problems
    return Symbol(name, low, high), []


def declared_dims(program: ast.AuraneProgram, model: ast.Model | None = None) -> dict[str, Symbol]:
    """Symbols declared globally, shadowed by constants of ``model`` when given."""
    found: dict[str, Symbol] = {}
    sources: list[tuple[str, ast.Expr]] = [(c.name, c.value) for c in program.constants]
    if model is not None:
        for name, _ in list(sources):
            if any(f.name == name for f in model.fields):
                found.pop(name, None)
        sources = [s for s in sources if not any(f.name == s[0] for f in model.fields)]
        sources += [(f.name, f.value) for f in model.fields]
    for name, value in sources:
        if isinstance(value, ast.Call) and is_dim_call(value):
            declared, _ = dim_declaration(name, value)
            if declared is not None:
                found[name] = declared
    return found


def has_symbols(expr: ast.Expr) -> bool:
    """Whether a resolved value still holds a name or arithmetic (a symbolic size)."""
    match expr:
        case ast.Name() | ast.BinOp() | ast.UnaryOp():
            return True
        case ast.TupleExpr(items=items) | ast.ListExpr(items=items):
            return any(has_symbols(item) for item in items)
    return False


def shape_value(
    expr: ast.Expr, dims: Mapping[str, Symbol], env: Mapping[str, int] | None = None
) -> Any:
    """The value of a resolved ``input_shape`` with symbols as ``SizeExpr`` (or from ``env``).

    Raises ``KeyError`` for a name that is not a declared symbol.
    """
    env = env or {}
    match expr:
        case ast.Number(value=value):
            return value
        case ast.Name(id=name):
            if name in env:
                return env[name]
            declared = dims[name]
            return symbol(declared.name, declared.low, declared.high)
        case ast.TupleExpr(items=items):
            return tuple(shape_value(item, dims, env) for item in items)
        case ast.UnaryOp(op="-", operand=operand):
            return -_size(shape_value(operand, dims, env))
        case ast.BinOp(op=op, left=left, right=right):
            lhs = _size(shape_value(left, dims, env))
            rhs = _size(shape_value(right, dims, env))
            match op:
                case "+":
                    return lhs + rhs
                case "-":
                    return lhs - rhs
                case "*":
                    return lhs * rhs
                case "//":
                    return lhs // rhs
    raise KeyError(getattr(expr, "id", type(expr).__name__))


def _size(value: Any) -> Size:
    if isinstance(value, SizeExpr) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise KeyError(repr(value))


def parse_bindings(items: list[str] | tuple[str, ...]) -> dict[str, int]:
    """``["seq=128", "n=4"]`` (the ``--at`` option) as a mapping; ValueError when malformed."""
    env: dict[str, int] = {}
    for item in items:
        for part in item.split(","):
            name, sep, value = part.partition("=")
            if not sep or not name.strip().isidentifier() or not value.strip().isdigit():
                raise ValueError(f"expected NAME=SIZE (e.g. seq=128), got {part!r}")
            env[name.strip()] = int(value.strip())
    return env
