"""AST dumps: ``dump_ast`` (JSON-able, with spans, for ``aurane inspect --export``) and
``strip_spans`` (a span-free structural form for "same program" checks, e.g. the formatter's).

Both walk the frozen dataclasses generically, so a field added to the AST appears here without
an edit. Recursion depth is bounded by the parser's nesting limit.
"""

from __future__ import annotations

import math
from typing import TypeAlias

from aurane import records
from aurane.source import Span
from aurane.syntax import ast

JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"


def dump_ast(node: object) -> dict[str, JSON]:
    """A JSON-able dict of an AST node (usually an ``AuraneProgram``), spans included.

    Every node becomes ``{"node": <class name>, <field>: ..., "span": {...}}``; numbers keep
    their source text; non-finite floats are written as strings ("inf", "nan").
    """
    dumped = _dump(node, keep_spans=True)
    assert isinstance(dumped, dict)
    return dumped


def strip_spans(node: object) -> JSON:
    """The structure of ``node`` without spans, number spellings or the file name.

    Two parses are "the same program" when their ``strip_spans`` are equal. Numbers record
    their kind so that ``1`` and ``1.0`` differ; comments are kept (text and placement).
    """
    return _dump(node, keep_spans=False)


def _dump(value: object, *, keep_spans: bool) -> JSON:
    match value:
        case Span():  # also the spans inside tuples (the names of `q, k = chunk(...)`)
            if not keep_spans:
                return None
            span: dict[str, JSON] = {**value.to_json()}
            return span
        case bool() | str() | None:
            return value
        case int():
            return value
        case float():
            return value if math.isfinite(value) else repr(value)
        case tuple() | list():
            return [_dump(item, keep_spans=keep_spans) for item in value]
    if records.is_record(value) and not isinstance(value, type):
        return _dump_node(value, keep_spans=keep_spans)
    raise TypeError(f"not an AST value: {type(value).__name__}")


def _dump_node(node: object, *, keep_spans: bool) -> dict[str, JSON]:
    out: dict[str, JSON] = {"node": type(node).__name__}
    if not keep_spans and isinstance(node, ast.Number):
        out["kind"] = type(node.value).__name__
    for field in records.fields(node):  # type: ignore[arg-type]
        name = field.name
        if not keep_spans and _presentation_only(node, name):
            continue
        if name in _OPTIONAL and not getattr(node, name):
            continue  # Assign of one name: the dump predates `a, b = ...`
        out[name] = _dump(getattr(node, name), keep_spans=keep_spans)
    return out


_OPTIONAL = frozenset(
    {
        "targets",
        "layer",
        "layer_span",
        "layer_holes",
        "splice",
        "origin",
        "params",
        "budgets",
        "base",
        "inits",
    }
)  # omitted when empty


def _presentation_only(node: object, name: str) -> bool:
    """Fields that formatting may change without changing the program."""
    if name.endswith("span"):
        return True
    match node:
        case ast.Number():
            return name == "text"  # 1_000 and 1000 are the same number
        case ast.AuraneProgram():
            return name == "filename"
    return False


def expr_text(expr: ast.Expr) -> str:
    """A short, readable rendering of an expression for messages (``width > 64``).

    Not the formatter's layout (``aurane.tools.layout``): parentheses only where Python's
    precedence needs them, strings in double quotes.
    """
    match expr:
        case ast.Number():
            return expr.text
        case ast.String():
            return '"' + expr.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        case ast.Bool():
            return "true" if expr.value else "false"
        case ast.NoneLit():
            return "none"
        case ast.Name():
            return expr.id
        case ast.OpRef():
            return expr.name
        case ast.TupleExpr():
            inner = ", ".join(expr_text(item) for item in expr.items)
            return f"({inner},)" if len(expr.items) == 1 else f"({inner})"
        case ast.ListExpr():
            return "[" + ", ".join(expr_text(item) for item in expr.items) + "]"
        case ast.DictExpr():
            pairs = zip(expr.keys, expr.values, strict=True)
            return "{" + ", ".join(f"{k.id}: {expr_text(v)}" for k, v in pairs) + "}"
        case ast.Call():
            args = [expr_text(a) for a in expr.args]
            args += [f"{k.name}={expr_text(k.value)}" for k in expr.keywords]
            return f"{expr.func}({', '.join(args)})"
        case ast.BinOp() | ast.Compare() | ast.BoolOp():
            own = _level(expr)
            right_assoc = isinstance(expr, ast.BinOp) and expr.op == "**"
            left = _at(expr.left, own + 1 if right_assoc else own)
            right = _at(expr.right, own if right_assoc else own + 1)
            return f"{left} {expr.op} {right}"
        case ast.UnaryOp():
            return expr.op + _at(expr.operand, _level(expr))
        case ast.Not():
            return "not " + _at(expr.operand, _level(expr))
        case ast.IfExp():
            return f"{_at(expr.body, 2)} if {_at(expr.test, 2)} else {_at(expr.orelse, 1)}"
        case ast.Subscript():
            return f"{_at(expr.value, _ATOM)}[{expr_text(expr.index)}]"
        case ast.Chain():
            return " -> ".join([expr_text(expr.source), *(expr_text(s) for s in expr.steps)])
    return "..."


_ATOM = 10
_BINARY_LEVELS = {"+": 6, "-": 6, "*": 7, "/": 7, "//": 7, "%": 7, "**": 9}


def _level(expr: ast.Expr) -> int:
    """Python's precedence, loosest first: conditional 1 ... power 9, atoms 10."""
    match expr:
        case ast.IfExp():
            return 1
        case ast.BoolOp():
            return 2 if expr.op == "or" else 3
        case ast.Not():
            return 4
        case ast.Compare():
            return 5
        case ast.BinOp():
            return _BINARY_LEVELS.get(expr.op, 6)
        case ast.UnaryOp():
            return 8
        case ast.Chain():
            return 0
    return _ATOM


def _at(expr: ast.Expr, needed: int) -> str:
    text = expr_text(expr)
    return f"({text})" if _level(expr) < needed else text
