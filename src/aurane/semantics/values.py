"""Conversions between resolved AST literals and Python values."""

from __future__ import annotations

from typing import Any

from aurane.source import Span
from aurane.syntax import ast


class OpValue:
    """An operation or model as a constant value: ``act = relu``, ``block = Bottleneck``.

    Applied as a step ``-> act()``, a suffix ``.act`` or a call ``block(64)`` (constant
    resolution replaces the name by ``name``); in a resolved program it is an ``ast.OpRef``.
    """

    __slots__ = ("is_model", "name")

    def __init__(self, name: str, is_model: bool) -> None:
        self.name = name
        self.is_model = is_model

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpValue) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("op", self.name))

    def __repr__(self) -> str:
        return self.name


class NotLiteral(Exception):
    def __init__(self, expr: ast.Expr) -> None:
        super().__init__("not a literal")
        self.expr = expr


def literal_value(expr: ast.Expr) -> Any:
    """The Python value of a resolved literal expression (tuples stay tuples, lists lists)."""
    match expr:
        case ast.Number(value=value) | ast.String(value=value) | ast.Bool(value=value):
            return value
        case ast.NoneLit():
            return None
        case ast.TupleExpr(items=items):
            return tuple(literal_value(item) for item in items)
        case ast.ListExpr(items=items):
            return [literal_value(item) for item in items]
        case ast.OpRef(name=name, is_model=is_model):
            return OpValue(name, is_model)
    raise NotLiteral(expr)


def to_node(value: Any, span: Span) -> ast.Expr:
    """A literal AST node holding ``value``, located at ``span`` (the reference's span)."""
    if isinstance(value, bool):
        return ast.Bool(value, span)
    if isinstance(value, int | float):
        return ast.Number(value, repr(value), span)
    if isinstance(value, str):
        return ast.String(value, span)
    if value is None:
        return ast.NoneLit(span)
    if isinstance(value, tuple):
        return ast.TupleExpr(tuple(to_node(v, span) for v in value), span)
    if isinstance(value, list):
        return ast.ListExpr(tuple(to_node(v, span) for v in value), span)
    if isinstance(value, OpValue):
        return ast.OpRef(value.name, span, value.is_model)
    raise TypeError(f"cannot represent {value!r}")


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "None"
    if isinstance(value, tuple):
        return "tuple"
    if isinstance(value, list):
        return "list"
    if isinstance(value, OpValue):
        return "model" if value.is_model else "operation"
    if isinstance(value, range):
        return "range"
    return type(value).__name__


def show(value: Any) -> str:
    """Render a value as Aurane source text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        inner = ", ".join(show(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return repr(value)
