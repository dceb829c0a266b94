"""The width after a ``chunk``, ``split`` or ``reshape`` on the axis a roller threads, as
an expression of the source's arguments and the running width (issue 24 item 3): a
rolled class built at other arguments computes it as ``torch.chunk`` / ``torch.split`` /
``Tensor.reshape`` cut the axis there. ``chunk(x, 2, dim=-1, index=0)`` of ``channels``
is ``(channels + 1) // 2`` (torch's pieces are ``ceil(size / chunks)`` long, the last
shorter), ``index=1`` of two is ``channels // 2``; ``split(x, (a, b), index=1)`` is
``b``; ``reshape(x, (width, 8, 4))`` of a channel axis is ``width``. The walk still checks
the text against the IR's width at every visit (``rolled._Walk._choose``)."""

from __future__ import annotations

import re
from collections.abc import Callable

from aurane.ir.graph import Node
from aurane.ops import lookup
from aurane.semantics.symbolic import plain
from aurane.syntax import ast

_ATOMIC = re.compile(r"[\w.]+(\[[\w.]+\])?")


def _operand(text: str) -> str:
    return text if _ATOMIC.fullmatch(text) else f"({text})"


def _arguments(step: ast.Call, node: Node) -> dict[str, tuple[ast.Expr, ...]]:
    """The source's expressions of the step's arguments, by the operation's parameter (a
    variadic one, ``reshape(x, 4, width)``, holds every positional argument left)."""
    spec = lookup(node.op)
    if spec is None:
        return {}
    found: dict[str, tuple[ast.Expr, ...]] = {}
    args = list(step.args)
    for param in spec.params:
        if not args:
            break
        if param.variadic:
            found[param.name] = tuple(args)
            args = []
        else:
            found[param.name] = (args.pop(0),)
    for keyword in step.keywords:
        found[keyword.name] = (keyword.value,)
    return found


def _items(given: tuple[ast.Expr, ...]) -> tuple[ast.Expr, ...] | None:
    """The sizes of a tuple or list written out (``(4, width)``), or those given one by
    one (``reshape(x, 4, width)``); None for a size that is one expression (``split(x,
    width)``)."""
    if len(given) == 1 and isinstance(given[0], ast.TupleExpr | ast.ListExpr):
        return given[0].items
    return given if len(given) > 1 else None


def piece_width(
    step: ast.Call, node: Node, size: str, axis: int, rank: int, text: Callable[[ast.Expr], str]
) -> str | None:
    """The width after ``step`` (``node`` in the IR, of an input of ``rank`` axes, the
    batch's included) on the walk's ``axis`` (1, or -1: the last), its input's width
    being ``size``; None where ``step`` is no ``chunk``, ``split`` or ``reshape``, cuts
    another axis (the width is then ``size``), or has no such expression (a piece
    counted from the end, a reshape's ``-1`` or one to another rank). ``text``: an
    argument as Python."""
    given = _arguments(step, node)
    if node.op == "reshape":
        items = _items(given.get("shape", ()))
        if items is None or len(items) + 1 != rank:
            return None  # another rank: the axis the walk threads is another
        at = items[axis - 1] if axis > 0 else items[axis]
        if isinstance(at, ast.UnaryOp) or (isinstance(at, ast.Number) and at.value == -1):
            return None  # inferred from the element count
        return text(at)
    if node.op not in ("chunk", "split"):
        return None
    dim, index = plain(node.args.get("dim")), plain(node.args.get("index"))
    if not isinstance(dim, int) or not isinstance(index, int) or index < 0 or rank < 1:
        return None
    if dim % rank != axis % rank:
        return None
    whole = _operand(size)
    if node.op == "split":
        sizes = given.get("size", ())
        items = _items(sizes)
        if items is not None:
            return text(items[index]) if index < len(items) else None
        if len(sizes) != 1:
            return None
        piece = _operand(text(sizes[0]))  # pieces of that size, the last shorter
        before = piece if index == 1 else f"{index} * {piece}"
        return f"min({piece}, {whole})" if index == 0 else f"min({piece}, {whole} - {before})"
    counts = given.get("chunks", ())
    if len(counts) != 1:
        return None
    chunks = _operand(text(counts[0]))
    if chunks.isdigit():
        if int(chunks) == 1:
            return size
        if int(chunks) == 2 and index == 1:
            return f"{whole} // 2"  # the size less its first half rounded up
        piece = f"({whole} + {int(chunks) - 1}) // {chunks}"
    else:
        piece = f"({whole} + {chunks} - 1) // {chunks}"
    if index == 0:
        return piece
    before = f"({piece})" if index == 1 else f"{index} * ({piece})"
    return f"min({piece}, {whole} - {before})"
