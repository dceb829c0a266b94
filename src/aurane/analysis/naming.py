"""How the profile and the diagrams name an IR node's operation."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aurane.ir.graph import Node


def op_text(node: Node) -> str:
    """The catalog op, ``block Name`` for a model call, or ``repeat Name xN``."""
    if node.op == "repeat":
        return f"repeat {node.block} x{node.repeat}"
    if node.op == "block":
        return f"block {node.block}"
    return node.op
