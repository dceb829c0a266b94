"""Level 1: collapse a ReLU applied to a ReLU's output (``.relu.relu`` -> ``.relu``).

Proof: ``relu(relu(x)) == relu(x)`` exactly (max(max(x, 0), 0) = max(x, 0), no
rounding). Gradients: PyTorch's ReLU backward is ``grad * (out > 0)``; through two
ReLUs that is ``grad * (relu(x) > 0) * (x > 0) = grad * (x > 0)``, the same mask,
including at ``x == 0`` where both give 0. ReLU has no parameters or buffers.

Only a ReLU whose input is *directly* another ReLU's output is removed: a
``.residual`` between them (``dense(4).relu.residual -> relu()``) breaks the chain.
"""

from __future__ import annotations

from aurane import records
from aurane.optimize.chains import canonical_op, drop_steps, map_program, plain_call
from aurane.syntax import ast


def _relu_suffix(suffix: ast.Suffix) -> bool:
    return canonical_op(suffix.name) == "relu" and not suffix.args and not suffix.keywords


def _relu_call(call: ast.Call) -> bool:
    return plain_call(call, "relu") and not call.args and not call.keywords


def _relu_main(call: ast.Call) -> bool:
    # In graph form the first positional argument is the input tensor, so
    # ``relu(x)`` still has one argument; what matters is that it is relu itself.
    return plain_call(call, "relu") and not call.keywords


def ends_in_relu(call: ast.Call) -> bool:
    if call.suffixes:
        return _relu_suffix(call.suffixes[-1])
    return _relu_main(call)


def collapse_suffixes(call: ast.Call) -> ast.Call:
    """Drop each ``.relu`` suffix that directly follows relu (the op itself or a suffix)."""
    kept: list[ast.Suffix] = []
    for suffix in call.suffixes:
        previous_relu = _relu_suffix(kept[-1]) if kept else _relu_main(call)
        if previous_relu and _relu_suffix(suffix):
            continue
        kept.append(suffix)
    if len(kept) == len(call.suffixes):
        return call
    return records.replace(call, suffixes=tuple(kept))


def is_repeated_relu(previous: ast.Call | None, step: ast.Call) -> bool:
    return previous is not None and ends_in_relu(previous) and _relu_call(step)


def collapse_repeated_relu(program: ast.AuraneProgram) -> ast.AuraneProgram:
    return map_program(
        program,
        call=collapse_suffixes,
        steps=lambda steps: drop_steps(steps, is_repeated_relu),
    )
