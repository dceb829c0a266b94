"""Parameter-free tensor operations: flatten, reshape, pooling, upsample, add, concat.

Pooling lives in ops/pool.py (re-exported here); ``upsample`` follows ``F.interpolate``
(output size floor(size * scale)). Their work is counted in ``other_flops`` (estimates); none of them has MACs.
"""

from __future__ import annotations

import math
from typing import Any

from aurane.ops.pool import AVGPOOL, GLOBAL_AVG_POOL, MAXPOOL
from aurane.ops.rules import (
    ELEMENTWISE,
    INT64_MAX,
    MERGE,
    PARAMETER_FREE,
    RESHAPING,
    SHAPE_PRESERVING,
    fmt_shape,
    ints_at_least,
    is_int,
    make_spec,
    merged_size,
    numel,
    optional,
    positive_number,
    promote,
    require_min_rank,
    require_rank,
    same_dtype,
    sample_axis,
    spatial,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType

# -- flatten and reshape ----------------------------------------------------------------------


def _flatten_infer(ctx: InferContext) -> TensorType:
    require_min_rank("flatten", ctx.input, 1, "non-scalar")
    return TensorType((ctx.input.numel,), ctx.input.dtype)


FLATTEN = make_spec(
    name="flatten",
    params=(),
    infer=_flatten_infer,
    doc="flatten every sample axis into one, keeping the batch axis (nn.Flatten)",
    samples=(({}, ((3, 4, 5),)), ({}, ((7,),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)


def _reshape_sizes(value: Any) -> tuple[Any, ...]:
    items = tuple(value) if isinstance(value, tuple | list) else (value,)
    if len(items) == 1 and isinstance(items[0], tuple | list):
        items = tuple(items[0])  # reshape((6, -1)) as well as reshape(6, -1)
    return items


def _reshape_check(value: Any) -> str | None:
    items = _reshape_sizes(value)
    if not items or not all(map(is_int, items)):
        return "must be one or more ints"
    if any(i < 1 and i != -1 for i in items):
        return "must have sizes that are positive or -1"
    if items.count(-1) > 1:
        return "may have at most one -1 size"
    return None


def _reshape_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    sizes: tuple[int, ...] = _reshape_sizes(ctx.args["shape"])
    known = numel([s for s in sizes if s != -1])
    fits = t.numel % known == 0 if -1 in sizes else t.numel == known
    if not fits:
        raise OpError(
            "T006",
            f"reshape to {fmt_shape(sizes)} does not preserve the element count: the input "
            f"{fmt_shape(t.shape)} has {t.numel} elements per sample",
            hint=f"pick sizes whose product is {t.numel}",
        )
    shape = tuple(t.numel // known if s == -1 else s for s in sizes)
    return TensorType(shape, t.dtype)


RESHAPE = make_spec(
    name="reshape",
    params=(
        Param(
            "shape",
            ArgKind.INT_OR_TUPLE,
            check=_reshape_check,
            variadic=True,
            doc="new sample shape; one size may be -1",
        ),
    ),
    infer=_reshape_infer,
    doc="reshape each sample, keeping the batch axis and the element count",
    samples=(
        ({"shape": (6, -1)}, ((4, 3),)),
        ({"shape": (1, 4, 4)}, ((16,),)),
        ({"shape": (-1,)}, ((2, 5),)),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)

# -- pooling: ops/pool.py (re-exported here) --------------------------------------------------

# -- upsample ---------------------------------------------------------------------------------

_MODE_RANKS = {
    "nearest": (2, 3, 4),
    "nearest-exact": (2, 3, 4),
    "linear": (2,),
    "bilinear": (3,),
    "bicubic": (3,),
    "trilinear": (4,),
}
_LINEAR_MODES = ("linear", "bilinear", "bicubic", "trilinear")
_MODE_COST = {
    "nearest": 1,
    "nearest-exact": 1,
    "linear": 3,
    "bilinear": 7,
    "bicubic": 31,
    "trilinear": 15,
}
_LAYOUTS = {
    2: "(channels, length)",
    3: "(channels, height, width)",
    4: "(channels, depth, height, width)",
}


def _upsample_args(ctx: InferContext) -> None:
    a = ctx.args
    if (a["size"] is None) == (a["scale_factor"] is None):
        both = a["size"] is not None
        raise OpError(
            "S004" if both else "S005",
            "upsample takes exactly one of size and scale_factor"
            + (", got both" if both else ", got neither"),
            blame="scale_factor" if both else None,
            hint="pass size=... or scale_factor=...",
        )
    if a["align_corners"] is not None and a["mode"] not in _LINEAR_MODES:
        raise OpError(
            "S004",
            f'upsample align_corners applies to linear modes only, not mode="{a["mode"]}"',
            blame="align_corners",
            hint="drop align_corners or use a linear, bilinear, bicubic or trilinear mode",
        )


def _upsample_infer(ctx: InferContext) -> TensorType:
    _upsample_args(ctx)
    t, a = ctx.input, ctx.args
    mode: str = a["mode"]
    ranks = _MODE_RANKS[mode]
    require_rank(f'upsample mode="{mode}"', t, ranks, " or ".join(_LAYOUTS[r] for r in ranks))
    dims = t.rank - 1
    if a["size"] is not None:
        out = spatial("upsample", "size", a["size"], dims)
    else:
        scale = a["scale_factor"]
        factors = (
            (scale,) * dims
            if isinstance(scale, int | float)
            else spatial("upsample", "scale_factor", scale, dims)
        )
        scaled = [n * f for n, f in zip(t.shape[1:], factors, strict=True)]
        if not all(math.isfinite(v) and v <= INT64_MAX for v in scaled):
            raise OpError(
                "T090",
                f"upsample scale_factor={scale} gives a size past torch's int64 sizes",
                blame="scale_factor",
                hint="use a smaller scale_factor",
            )
        out = tuple(int(v) for v in scaled)
        if min(out) < 1:
            raise OpError(
                "T005",
                f"upsample scale_factor={scale} leaves an empty output {fmt_shape(out)}",
                blame="scale_factor",
                hint="use a larger scale_factor",
            )
    return TensorType((t.shape[0], *out), t.dtype)


_SIZES = ints_at_least(1, lengths=(1, 2, 3))


def _positive_floats(value: Any) -> str | None:
    items = value if isinstance(value, tuple | list) else (value,)
    return (
        next((m for m in map(positive_number, items) if m), None) if items else "must not be empty"
    )


UPSAMPLE = make_spec(
    name="upsample",
    params=(
        Param("size", ArgKind.INT_OR_TUPLE, None, optional(_SIZES), doc="output spatial size"),
        Param(
            "scale_factor",
            ArgKind.FLOAT_OR_TUPLE,
            None,
            optional(_positive_floats),
            doc="spatial multiplier",
        ),
        Param("mode", ArgKind.STR, "nearest", choices=tuple(_MODE_RANKS), doc="interpolation mode"),
        Param("align_corners", ArgKind.BOOL, None, doc="align corner pixels (linear modes only)"),
    ),
    infer=_upsample_infer,
    doc="spatial resize by size or scale factor (F.interpolate)",
    samples=(
        ({"scale_factor": 2}, ((3, 4, 5),)),
        ({"size": (7, 9), "mode": "bilinear", "align_corners": True}, ((2, 4, 4),)),
        ({"scale_factor": 1.5, "mode": "linear"}, ((2, 5),)),
        ({"size": 6, "mode": "nearest-exact"}, ((1, 3, 2, 4),)),
        ({"scale_factor": (2, 0.5), "mode": "bicubic"}, ((1, 3, 6),)),
        ({"scale_factor": 2, "mode": "trilinear", "align_corners": False}, ((1, 2, 3, 2),)),
    ),
    kinds={PARAMETER_FREE},
    other_flops=lambda ctx, out: _MODE_COST[ctx.args["mode"]] * out.numel,
)

# -- merges -----------------------------------------------------------------------------------


def _shape_notes(inputs: tuple[TensorType, ...]) -> tuple[tuple[int, str], ...]:
    return tuple((i, fmt_shape(t.shape)) for i, t in enumerate(inputs))


def _add_infer(ctx: InferContext) -> TensorType:
    first = ctx.inputs[0]
    broadcast = ctx.args.values.get("broadcast")  # the residual suffix binds no arguments
    if broadcast is not None and broadcast.value:
        from aurane.ops.arith import broadcast_shapes

        return TensorType(broadcast_shapes("add", ctx.inputs), promote("add", ctx.inputs))
    if any(t.shape != first.shape for t in ctx.inputs[1:]):
        raise OpError(
            "T001",
            "add needs inputs of equal shapes, got "
            + ", ".join(fmt_shape(t.shape) for t in ctx.inputs),
            hint=f"{agree_hint(ctx.inputs)}; add never broadcasts unless asked: "
            "add(a, b, broadcast=true) stretches size-1 axes",
            input_notes=_shape_notes(ctx.inputs),
        )
    shape = tuple(merged_size(s) for s in zip(*(t.shape for t in ctx.inputs), strict=True))
    return TensorType(shape, promote("add", ctx.inputs))


def agree_hint(inputs: tuple[TensorType, ...]) -> str:
    """How to make the shapes of a sum agree, by the layout they differ in: a dense layer
    for features, a 1x1 convolution for the channels of an image or sequence (a residual's
    shortcut), pooling or a strided convolution for spatial sizes."""
    first = inputs[0]
    if any(t.rank != first.rank for t in inputs[1:]) or first.rank == 0:
        return "make the shapes agree, e.g. with a reshape or unsqueeze"
    differ = {
        axis for t in inputs[1:] for axis in range(first.rank) if t.shape[axis] != first.shape[axis]
    }
    if first.rank == 1 or (first.rank == 2 and differ == {1}):
        return "make the shapes agree, e.g. with a dense layer on one of them"
    if differ == {0} and first.rank <= 4:
        size = max(t.shape[0] for t in inputs)
        conv = f"conv{first.rank - 1}d({size}, kernel=1)"
        return f"make the channels agree, e.g. with a 1x1 convolution on the shortcut: {conv}"
    return (
        "make the sizes agree, e.g. with pooling or a strided 1x1 convolution on the "
        "shortcut, or padding"
    )


ADD = make_spec(
    name="add",
    params=(
        Param(
            "broadcast",
            ArgKind.BOOL,
            False,
            keyword_only=True,
            doc="stretch size-1 axes (equal ranks), as multiply does",
        ),
    ),
    infer=_add_infer,
    doc="elementwise sum of tensors of equal shape; broadcast=true stretches size-1 axes",
    samples=(
        ({}, ((4,), (4,))),
        ({}, ((2, 3), (2, 3), (2, 3))),
        ({"broadcast": True}, ((2, 3), (1, 3))),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, MERGE, ELEMENTWISE, SHAPE_PRESERVING},
    min_inputs=2,
    max_inputs=None,
    other_flops=lambda ctx, out: (len(ctx.inputs) - 1) * out.numel,
)


def _concat_infer(ctx: InferContext) -> TensorType:
    first = ctx.inputs[0]
    if any(t.rank != first.rank for t in ctx.inputs[1:]):
        raise OpError(
            "T002",
            "concat needs inputs of equal rank, got "
            + ", ".join(fmt_shape(t.shape) for t in ctx.inputs),
            hint="reshape or flatten the inputs first",
            input_notes=_shape_notes(ctx.inputs),
        )
    axis = sample_axis("concat", ctx.args["dim"], first.rank)

    def others(t: TensorType) -> tuple[int, ...]:
        return t.shape[:axis] + t.shape[axis + 1 :]

    if any(others(t) != others(first) for t in ctx.inputs[1:]):
        raise OpError(
            "T001",
            f"concat along dim={ctx.args['dim']} needs the other axes to match, got "
            + ", ".join(fmt_shape(t.shape) for t in ctx.inputs),
            hint="only the joined axis may differ",
            input_notes=_shape_notes(ctx.inputs),
        )
    joined = sum(t.shape[axis] for t in ctx.inputs)
    shape = first.shape[:axis] + (joined,) + first.shape[axis + 1 :]
    return TensorType(shape, same_dtype("concat", ctx.inputs))


CONCAT = make_spec(
    name="concat",
    params=(
        Param("dim", ArgKind.INT, 1, keyword_only=True, doc="joined axis, counting the batch axis"),
    ),
    infer=_concat_infer,
    doc="join tensors along one axis (torch.cat); dim counts the batch axis",
    samples=(
        ({}, ((4,), (2,))),
        ({"dim": 1}, ((3, 4, 4), (5, 4, 4))),
        ({"dim": -1}, ((2, 3), (2, 1), (2, 2))),
        ({"dim": 2}, ((2, 3, 4), (2, 1, 4))),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, MERGE},
    min_inputs=2,
    max_inputs=None,
)

SPECS: tuple[OpSpec, ...] = (
    FLATTEN,
    RESHAPE,
    MAXPOOL,
    AVGPOOL,
    GLOBAL_AVG_POOL,
    UPSAMPLE,
    ADD,
    CONCAT,
)
