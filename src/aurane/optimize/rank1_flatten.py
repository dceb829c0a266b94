"""Level 2: drop ``flatten()`` of a value that is already rank 1 per sample.

Proof: ``torch.flatten(x, 1)`` of a ``(batch, F)`` tensor returns ``x`` itself
(flatten returns the input when there is nothing to merge), so values and
gradients are unchanged. No parameters or buffers. The rank comes from the IR and
must be 1 at every lowering of the step.
"""

from __future__ import annotations

from aurane.ir.graph import Node, Value
from aurane.optimize.shapes import drop_where, same_type
from aurane.syntax import ast


def _rank1(node: Node, inputs: tuple[Value, ...], output: Value) -> bool:
    shape = inputs[0].shape if inputs else None
    return shape is not None and len(shape) == 2 and same_type(node, inputs, output)


def drop_rank1_flatten(program: ast.AuraneProgram) -> ast.AuraneProgram:
    return drop_where(program, "flatten", _rank1)
