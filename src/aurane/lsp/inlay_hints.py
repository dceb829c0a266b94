"""Inlay hints: the output shape after each chain step and graph statement."""

from __future__ import annotations

from lsprotocol import types as lsp

from aurane.lsp.document import Document, walk_graphs
from aurane.lsp.hover import value_of
from aurane.lsp.text import shape_text


def inlay_hints(doc: Document, start: int, end: int) -> list[lsp.InlayHint]:
    """The output shape after each chain step and graph statement, lines start..end (1-based)."""
    at: dict[tuple[int, int], list[str]] = {}
    for graph, node in walk_graphs(doc.graphs):
        span = node.span
        if not start <= span.end_line <= end:
            continue
        values = [value_of(graph, name) for name in node.outputs or (node.output,)]
        if any(value is None for value in values):
            continue
        key = (span.end_line, span.end_column)
        shapes = at.setdefault(key, [])
        # a block with several outputs: each one's shape, in the return's order
        text = ", ".join(shape_text(value.shape) for value in values if value is not None)
        if node.suffix_of is not None and shapes:
            shapes[-1] = text  # the suffix's output is the step's output
        elif text not in shapes:
            shapes.append(text)
    hints = []
    for (line, column), shapes in sorted(at.items()):
        label = " | ".join(shapes)
        hints.append(
            lsp.InlayHint(
                position=doc.lines.position(line, column),
                label=f": {label}",
                kind=lsp.InlayHintKind.Type,
                padding_left=True,
            )
        )
    return hints
