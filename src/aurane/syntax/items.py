"""Every record, tuple and value inside a piece of syntax, for the stages that look for a
kind of node (the names a body reads, the loops it nests) without a visitor per record."""

from __future__ import annotations

from collections.abc import Iterator

from aurane.source import Span


def syntax_items(node: object) -> Iterator[object]:
    """``node`` and every record, tuple and value inside it, depth first in source order
    (the AST's records are slotted; spans are positions, not syntax)."""
    yield node
    if isinstance(node, tuple):
        for item in node:
            yield from syntax_items(item)
    elif hasattr(node, "__slots__") and not isinstance(node, Span):
        for slot in node.__slots__:
            yield from syntax_items(getattr(node, slot, None))
