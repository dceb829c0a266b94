"""Level 2: drop a ``reshape`` step whose target is the shape its input already has.

Proof: ``Tensor.reshape`` to the same shape returns a tensor with the same values
(a view, or the input itself); its backward reshapes the gradient back to the same
shape, i.e. the identity. No parameters or buffers. The shape fact comes from the
IR and must hold at every lowering of the step (see ``shapes.spans_where``).
"""

from __future__ import annotations

from aurane.optimize.chains import drop_steps, map_program, plain_call
from aurane.optimize.shapes import same_type, spans_where
from aurane.syntax import ast


def drop_identity_reshape(program: ast.AuraneProgram) -> ast.AuraneProgram:
    spans = spans_where(program, "reshape", same_type)
    if not spans:
        return program

    def identity(previous: ast.Call | None, step: ast.Call) -> bool:
        return plain_call(step, "reshape") and step.span in spans

    return map_program(program, steps=lambda steps: drop_steps(steps, identity))
