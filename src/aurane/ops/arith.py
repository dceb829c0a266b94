"""Elementwise arithmetic and matrix products: multiply, subtract, divide, matmul.

Broadcasting is explicit and checked before anything runs. Both operands carry the batch
axis, so they must have the same rank (aligning from the right, as PyTorch does, would
pair one tensor's batch axis with the other's sample axis); on each sample axis the sizes
are equal or one of them is 1, which is stretched. ``(C, 1, 1)`` times ``(C, H, W)`` is a
squeeze-excite gate; ``(C,)`` times ``(C, H, W)`` is refused (unsqueeze first). ``add``
uses the same rule when asked with ``broadcast=true``.

``multiply``, ``subtract`` and ``divide`` take a second tensor or a number:
``multiply(x, 0.5)``, ``x -> multiply(0.5)``.
"""

from __future__ import annotations

import math
from typing import Any

from aurane.ops.rules import (
    ELEMENTWISE,
    FLOAT_DTYPES,
    MERGE,
    PARAMETER_FREE,
    fmt_shape,
    is_number,
    make_spec,
    merged_size,
    numel,
    promote,
    same_dtype,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType

BROADCAST_MISMATCH = "T060"


def _notes(inputs: tuple[TensorType, ...]) -> tuple[tuple[int, str], ...]:
    return tuple((i, fmt_shape(t.shape)) for i, t in enumerate(inputs))


def broadcast_shapes(op: str, inputs: tuple[TensorType, ...]) -> tuple[int, ...]:
    """The common shape of ``inputs`` under the size-1 rule, T060 (or T002 on rank) otherwise."""
    first = inputs[0]
    listed = ", ".join(fmt_shape(t.shape) for t in inputs)
    if any(t.rank != first.rank for t in inputs[1:]):
        raise OpError(
            "T002",
            f"{op} needs inputs of equal rank to broadcast, got {listed}",
            hint="both inputs carry the batch axis, so ranks must agree: unsqueeze or "
            "reshape the smaller one, e.g. (c,) to (c, 1, 1)",
            input_notes=_notes(inputs),
        )
    out: list[int] = []
    for axis, sizes in enumerate(zip(*(t.shape for t in inputs), strict=True)):
        big = [s for s in sizes if s != 1]
        if len(set(big)) > 1:
            raise OpError(
                BROADCAST_MISMATCH,
                f"{op} cannot broadcast {listed}: dim={axis + 1} has sizes "
                + " and ".join(map(str, sizes)),
                hint="broadcasting stretches size-1 axes only; make the sizes equal or 1",
                input_notes=_notes(inputs),
            )
        out.append(merged_size(big) if big else 1)
    return tuple(out)


def _nonzero(value: Any) -> str | None:
    if not is_number(value):
        return "must be a number"
    if value == 0:
        return "must not be zero"
    if not math.isfinite(value):
        return "must be finite"
    return None


def _finite(value: Any) -> str | None:
    if not is_number(value) or not math.isfinite(value):
        return "must be a finite number"
    return None


# torch's result dtype without a float in it: true division and a float constant give the
# default floating dtype, which generated programs leave at float32
DEFAULT_FLOAT = "float32"


def result_dtype(name: str, dtype: str | None, constant: Any) -> str | None:
    """The dtype torch gives ``name`` of ``dtype`` tensors (and a Python number): integer and
    boolean arithmetic stay integer (``int64 * 2`` is int64, ``bool * 2`` int64), true
    division and a float constant give float32 (``int64 / 2``), floats keep their dtype;
    T003 for a subtraction of booleans, which torch refuses."""
    if dtype is None or dtype in FLOAT_DTYPES:
        return dtype
    if name == "subtract" and dtype == "bool":
        raise OpError(
            "T003",
            "subtract of a bool tensor: torch has no subtraction of booleans",
            hint="use logical operations on masks, or convert to a number first",
        )
    if name == "divide" or isinstance(constant, float):
        return DEFAULT_FLOAT
    if dtype == "bool" and constant is not None:
        return "int64"  # a Python int promotes a bool tensor to int64
    return dtype


def _elementwise_spec(name: str, symbol: str, verb: str) -> OpSpec:
    def infer(ctx: InferContext) -> TensorType:
        constant = ctx.args["constant"]
        if len(ctx.inputs) == 2:
            if constant is not None:
                raise OpError(
                    "S004",
                    f"{name} takes a second tensor or a constant, not both",
                    blame="constant",
                    hint=f"write {name}(a, b) or {name}(a, 0.5)",
                )
            shape = broadcast_shapes(name, ctx.inputs)
            return TensorType(shape, result_dtype(name, promote(name, ctx.inputs), None))
        if constant is None:
            raise OpError(
                "S005",
                f"{name} needs a second tensor or a constant",
                hint=f"write {name}(a, b) with two tensors, or {name}(x, 0.5)",
            )
        return TensorType(ctx.input.shape, result_dtype(name, ctx.input.dtype, constant))

    return make_spec(
        name=name,
        params=(
            Param(
                "constant",
                ArgKind.OPTIONAL_FLOAT,
                None,
                _nonzero if name == "divide" else _finite,
                doc=f"a number to {verb} instead of a second tensor",
            ),
        ),
        infer=infer,
        doc=f"elementwise a {symbol} b with explicit size-1 broadcasting, or a {symbol} constant",
        samples=(
            ({}, ((4,), (4,))),
            ({}, ((3, 4, 4), (3, 1, 1))),
            ({}, ((1, 5), (3, 1))),
            ({"constant": 0.5}, ((2, 3),)),
        ),
        input_dtypes="any",
        kinds={PARAMETER_FREE, ELEMENTWISE, MERGE},
        min_inputs=1,
        max_inputs=2,
        other_flops=lambda ctx, out: out.numel,
    )


MULTIPLY = _elementwise_spec("multiply", "*", "multiply by")
SUBTRACT = _elementwise_spec("subtract", "-", "subtract")
DIVIDE = _elementwise_spec("divide", "/", "divide by")

# -- matmul -----------------------------------------------------------------------------------


def _matmul_infer(ctx: InferContext) -> TensorType:
    a, b = ctx.inputs
    if a.rank < 2 or b.rank < 2 or a.rank != b.rank:
        raise OpError(
            "T002",
            f"matmul needs two inputs of equal rank, at least 2 (batch excluded), got "
            f"{fmt_shape(a.shape)} and {fmt_shape(b.shape)}",
            hint="both inputs carry the batch axis; reshape or unsqueeze to (..., n, k) "
            "and (..., k, m)",
            input_notes=_notes(ctx.inputs),
        )
    if a.shape[-1] != b.shape[-2]:
        raise OpError(
            "T001",
            f"matmul inner sizes differ: {fmt_shape(a.shape)} @ {fmt_shape(b.shape)} "
            f"multiplies {a.shape[-1]} columns with {b.shape[-2]} rows",
            hint="the last axis of a must equal the second-to-last of b; transpose b?",
            input_notes=_notes(ctx.inputs),
        )
    leading = broadcast_shapes(
        "matmul", (TensorType(a.shape[:-2], a.dtype), TensorType(b.shape[:-2], b.dtype))
    )
    return TensorType((*leading, a.shape[-2], b.shape[-1]), same_dtype("matmul", ctx.inputs))


MATMUL = make_spec(
    name="matmul",
    params=(),
    infer=_matmul_infer,
    doc="batched matrix product a @ b over the last two axes; leading axes broadcast (size 1)",
    samples=(
        ({}, ((3, 4), (4, 5))),
        ({}, ((2, 3, 8), (2, 8, 3))),
        ({}, ((4, 3, 8), (1, 8, 6))),
    ),
    kinds={PARAMETER_FREE, MERGE},
    min_inputs=2,
    max_inputs=2,
    macs=lambda ctx, out: numel(out.shape) * ctx.inputs[0].shape[-1],
)

SPECS: tuple[OpSpec, ...] = (MULTIPLY, SUBTRACT, DIVIDE, MATMUL)
