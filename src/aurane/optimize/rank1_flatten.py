"""Level 2: drop ``flatten()`` of a value that is already rank 1 per sample.

Proof: ``torch.flatten(x, 1)`` of a ``(batch, F)`` tensor returns ``x`` itself
(flatten returns the input when there is nothing to merge), so values and
gradients are unchanged. No parameters or buffers. The rank comes from the IR and
must be 1 at every lowering of the step.
"""

from __future__ import annotations

from aurane.ir.graph import Node, Value
from aurane.optimize.chains import drop_steps, map_program, plain_call
from aurane.optimize.shapes import same_type, spans_where
from aurane.syntax import ast


def _rank1(node: Node, inputs: tuple[Value, ...], output: Value) -> bool:
    shape = inputs[0].shape if inputs else None
    return shape is not None and len(shape) == 2 and same_type(node, inputs, output)


def drop_rank1_flatten(program: ast.AuraneProgram) -> ast.AuraneProgram:
    spans = spans_where(program, "flatten", _rank1)
    if not spans:
        return program

    def identity(previous: ast.Call | None, step: ast.Call) -> bool:
        return plain_call(step, "flatten") and step.span in spans

    return map_program(program, steps=lambda steps: drop_steps(steps, identity))
