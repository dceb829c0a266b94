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


_OPTIONAL = frozenset({"targets", "layer", "layer_span", "params", "budgets"})  # omitted when empty


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
