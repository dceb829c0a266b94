"""Reductions over sample axes: mean, sum, max, amax, with ``keepdim``.

``dim`` is one axis or a tuple of axes counting the batch axis (``dim=(2, 3)`` averages
height and width of a (C, H, W) sample); None reduces every sample axis. The batch axis is
never reduced. ``max`` is ``amax`` (the values; PyTorch's ``max(dim)`` also returns
indices, which a forward body has no use for); it is kept as its own name because people
write it.
"""

from __future__ import annotations

from typing import Any

from aurane.ops.rules import (
    PARAMETER_FREE,
    POOLING,
    fmt_shape,
    is_int,
    make_spec,
    require_min_rank,
    sample_axis,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType


def _dims(value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    return tuple(value) if isinstance(value, tuple | list) else (value,)


def _dim_check(value: Any) -> str | None:
    dims = _dims(value)
    if dims is not None and (not dims or not all(map(is_int, dims))):
        return "must be an int or a tuple of ints"
    return None


def reduced_axes(op: str, ctx: InferContext) -> tuple[int, ...]:
    """Sample-axis indices a reduction removes (T004 on the batch, a repeat or a bad axis)."""
    t = ctx.input
    require_min_rank(op, t, 1, "non-scalar")
    dims = _dims(ctx.args["dim"])
    if dims is None:
        return tuple(range(t.rank))
    axes: list[int] = []
    for dim in dims:
        try:
            axes.append(sample_axis(op, dim, t.rank))
        except OpError as error:
            error.blame = "dim"
            raise
    if len(set(axes)) != len(axes):
        raise OpError(
            "T004",
            f"{op} dim={fmt_shape(dims)} names an axis twice",
            blame="dim",
            hint="name each axis once",
        )
    return tuple(sorted(axes))


def _reduce_spec(name: str, torch_name: str, dtypes: str, what: str) -> OpSpec:
    def infer(ctx: InferContext) -> TensorType:
        axes = reduced_axes(name, ctx)
        t = ctx.input
        if ctx.args["keepdim"]:
            shape = tuple(1 if i in axes else s for i, s in enumerate(t.shape))
        else:
            shape = tuple(s for i, s in enumerate(t.shape) if i not in axes)
        dtype = t.dtype
        if name == "sum" and dtype is not None and not dtype.startswith(("float", "bfloat")):
            dtype = "int64"  # torch.sum promotes integer (and bool) inputs to int64
        return TensorType(shape, dtype)

    return make_spec(
        name=name,
        params=(
            Param(
                "dim",
                ArgKind.INT_OR_TUPLE,
                None,
                _dim_check,
                doc="axis or axes, counting the batch axis (None: every sample axis)",
            ),
            Param("keepdim", ArgKind.BOOL, False, doc="keep reduced axes with size 1"),
        ),
        infer=infer,
        doc=f"{what} over sample axes (Tensor.{torch_name}); dim counts the batch axis",
        samples=(
            ({"dim": 1}, ((3, 4),)),
            ({"dim": (2, 3), "keepdim": True}, ((4, 5, 6),)),
            ({}, ((2, 3),)),
            ({"dim": -1}, ((5,),)),
        ),
        input_dtypes=dtypes,
        kinds={PARAMETER_FREE, POOLING},
        other_flops=lambda ctx, out: ctx.input.numel,
    )


MEAN = _reduce_spec("mean", "mean", "float", "average")
SUM = _reduce_spec("sum", "sum", "any", "sum")
AMAX = _reduce_spec("amax", "amax", "any", "maximum")
MAX = _reduce_spec("max", "amax", "any", "maximum (the values, as amax)")

SPECS: tuple[OpSpec, ...] = (MEAN, SUM, MAX, AMAX)
