"""Level 2: drop a ``reshape`` step whose target is the shape its input already has.

Proof: ``Tensor.reshape`` to the same shape returns a tensor with the same values
(a view, or the input itself); its backward reshapes the gradient back to the same
shape, i.e. the identity. No parameters or buffers. The shape fact comes from the
IR and must hold at every lowering of the step (see ``shapes.spans_where``).
"""

from __future__ import annotations

from aurane.optimize.shapes import drop_where, same_type
from aurane.syntax import ast


def drop_identity_reshape(program: ast.AuraneProgram) -> ast.AuraneProgram:
    return drop_where(program, "reshape", same_type)
