"""Level 1: drop ``dropout(0)`` chain steps.

Proof: ``nn.Dropout(p=0)`` has no parameters or buffers; in eval mode it is the
identity; in train mode ATen's dropout returns its input unchanged when ``p == 0``
(``_dropout_impl``: ``if (p == 0 || !train || numel == 0) return input``), without
drawing random numbers, so the RNG stream seen by later stochastic layers is the
same. The gradient of the identity is the identity.
"""

from __future__ import annotations

from aurane.optimize.chains import drop_steps, map_program, plain_call
from aurane.syntax import ast


def is_zero_dropout(previous: ast.Call | None, step: ast.Call) -> bool:
    if not plain_call(step, "dropout") or len(step.args) + len(step.keywords) != 1:
        return False
    if step.args:
        value = step.args[0]
    elif step.keywords[0].name == "p":
        value = step.keywords[0].value
    else:
        return False
    # Only a literal zero (after constant resolution): a name or an expression is
    # not proven here, and a boolean is not a probability.
    return isinstance(value, ast.Number) and type(value.value) in (int, float) and value.value == 0


def drop_zero_dropout(program: ast.AuraneProgram) -> ast.AuraneProgram:
    return map_program(program, steps=lambda steps: drop_steps(steps, is_zero_dropout))
