"""Convolutions beyond conv1d/conv2d: ``conv3d`` and the transposed convolutions.

``conv3d`` follows ``nn.Conv3d`` with the same geometry rule as conv1d/conv2d (layers.py).
``conv_transpose1d/2d/3d`` follow ``nn.ConvTranspose1d/2d/3d``: the output size per axis is
``(size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1`` and
``output_padding`` must be smaller than the stride or the dilation of its axis, as PyTorch
requires. The weight is ``(in, out / groups, *kernel)``.

MACs are those ``torch.utils.flop_counter`` counts: for a convolution, output elements x
(input channels / groups) x kernel elements; for a transposed convolution, input elements
x (output channels / groups) x kernel elements (every input element is scattered into a
kernel window of each output channel of its group, products that land in the cropped
``padding`` included). Bias adds are not MACs; they are in ``other_flops``.
"""

from __future__ import annotations

from typing import Any

from aurane.ops.layers import _conv_geometry, check_groups
from aurane.ops.rules import (
    CONVOLUTION,
    PARAMETRIC,
    POSITIVE,
    Check,
    fmt_shape,
    is_int,
    make_spec,
    numel,
    padding_check,
    require_rank,
    spatial,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType

LAYOUTS = {
    1: "(channels, length)",
    2: "(channels, height, width)",
    3: "(channels, depth, height, width)",
}


def sizes_at_least(low: int, dims: int) -> Check:
    """An int or a tuple of 1 or ``dims`` ints, each ``>= low`` (kernel, stride, padding)."""
    lengths = (1, dims)

    def check(value: Any) -> str | None:
        items = (value,) if is_int(value) else value
        ok = isinstance(items, tuple | list) and len(items) in lengths and all(map(is_int, items))
        if not ok:
            return "must be an int" if dims == 1 else f"must be an int or a tuple of {dims} ints"
        if any(item < low for item in items):
            return "must be positive" if low == 1 else f"must be at least {low}"
        return None

    return check


def _kind(dims: int) -> ArgKind:
    return ArgKind.INT if dims == 1 else ArgKind.INT_OR_TUPLE


def _conv_bias_flops(ctx: InferContext, out: TensorType) -> int:
    return out.numel if ctx.args["bias"] else 0


# -- conv3d ---------------------------------------------------------------------------------


def _conv3d_infer(ctx: InferContext) -> TensorType:
    require_rank("conv3d", ctx.input, (4,), LAYOUTS[3])
    out = _conv_geometry(ctx, "conv3d", 3)
    return TensorType((ctx.args["channels"], *out), ctx.input.dtype)


def _conv3d_weight_per_output(ctx: InferContext) -> int:
    kernel = spatial("conv3d", "kernel", ctx.args["kernel"], 3)
    groups: int = ctx.args["groups"]
    return ctx.input.shape[0] // groups * numel(kernel)


def _conv3d_parameters(ctx: InferContext, out: TensorType) -> int:
    channels: int = ctx.args["channels"]
    bias = channels if ctx.args["bias"] else 0
    return channels * _conv3d_weight_per_output(ctx) + bias


CONV3D = make_spec(
    name="conv3d",
    params=(
        Param("channels", ArgKind.INT, check=POSITIVE, doc="output channels"),
        Param("kernel", ArgKind.INT_OR_TUPLE, 3, sizes_at_least(1, 3), doc="kernel size"),
        Param("stride", ArgKind.INT_OR_TUPLE, 1, sizes_at_least(1, 3), doc="stride"),
        Param(
            "padding", ArgKind.INT_OR_STR, 0, padding_check((1, 3)), doc='zero padding or "same"'
        ),
        Param("dilation", ArgKind.INT_OR_TUPLE, 1, sizes_at_least(1, 3), doc="kernel dilation"),
        Param("groups", ArgKind.INT, 1, POSITIVE, doc="channel groups"),
        Param("bias", ArgKind.BOOL, True, doc="learn an additive bias"),
    ),
    infer=_conv3d_infer,
    doc=f"convolution over a {LAYOUTS[3]} input (nn.Conv3d)",
    samples=(
        ({"channels": 4}, ((3, 5, 6, 7),)),
        ({"channels": 6, "kernel": (1, 2, 3), "stride": (1, 2, 1), "bias": False}, ((2, 4, 6, 5),)),
        ({"channels": 4, "kernel": 3, "stride": 2, "padding": 1, "groups": 2}, ((4, 7, 8, 9),)),
        ({"channels": 2, "kernel": 2, "padding": "same", "dilation": 2}, ((2, 4, 5, 3),)),
    ),
    kinds={PARAMETRIC},
    family=CONVOLUTION,
    parameters=_conv3d_parameters,
    macs=lambda ctx, out: out.numel * _conv3d_weight_per_output(ctx),
    other_flops=_conv_bias_flops,
)

# -- transposed convolutions -------------------------------------------------------------------


def transpose_geometry(ctx: InferContext, op: str, dims: int) -> tuple[int, ...]:
    """Validate a transposed convolution against its input; return the output spatial size."""
    t, a = ctx.input, ctx.args
    require_rank(op, t, (dims + 1,), LAYOUTS[dims])
    check_groups(ctx, op)
    kernel = spatial(op, "kernel", a["kernel"], dims)
    stride = spatial(op, "stride", a["stride"], dims)
    padding = spatial(op, "padding", a["padding"], dims)
    extra = spatial(op, "output_padding", a["output_padding"], dims)
    dilation = spatial(op, "dilation", a["dilation"], dims)
    if any(e >= s and e >= d for e, s, d in zip(extra, stride, dilation, strict=True)):
        raise OpError(
            "S004",
            f"{op} output_padding {fmt_shape(extra)} must be smaller than the stride "
            f"{fmt_shape(stride)} or the dilation {fmt_shape(dilation)} of each axis",
            blame="output_padding",
            hint="output_padding only picks among the output sizes a stride > 1 makes possible",
        )
    out = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + e + 1
        for n, k, s, p, e, d in zip(
            t.shape[1:], kernel, stride, padding, extra, dilation, strict=True
        )
    )
    if min(out) < 1:
        raise OpError(
            "T005",
            f"{op} padding {fmt_shape(padding)} leaves an empty output {fmt_shape(out)} "
            f"from the input {fmt_shape(t.shape[1:])}",
            blame="padding",
            hint="use less padding or a larger kernel",
        )
    return out


def _transpose_spec(dims: int) -> OpSpec:
    name = f"conv_transpose{dims}d"
    kind = _kind(dims)
    positive = sizes_at_least(1, dims)
    non_negative = sizes_at_least(0, dims)

    def infer(ctx: InferContext) -> TensorType:
        out = transpose_geometry(ctx, name, dims)
        return TensorType((ctx.args["channels"], *out), ctx.input.dtype)

    def weight_per_input(ctx: InferContext) -> int:
        """Weights each input channel owns: (output channels / groups) x kernel elements."""
        kernel = spatial(name, "kernel", ctx.args["kernel"], dims)
        groups: int = ctx.args["groups"]
        channels: int = ctx.args["channels"]
        return channels // groups * numel(kernel)

    def parameters(ctx: InferContext, out: TensorType) -> int:
        bias: int = ctx.args["channels"] if ctx.args["bias"] else 0
        return ctx.input.shape[0] * weight_per_input(ctx) + bias

    samples: dict[int, Any] = {
        1: (
            ({"channels": 4}, ((3, 6),)),
            ({"channels": 2, "kernel": 4, "stride": 2, "padding": 1, "bias": False}, ((4, 5),)),
            (
                {"channels": 6, "kernel": 3, "stride": 3, "output_padding": 2, "groups": 2},
                ((4, 4),),
            ),
            ({"channels": 3, "kernel": 3, "dilation": 2, "output_padding": 1}, ((2, 5),)),
        ),
        2: (
            ({"channels": 4}, ((3, 5, 6),)),
            ({"channels": 8, "kernel": 4, "stride": 2, "padding": 1, "bias": False}, ((4, 4, 4),)),
            (
                {"channels": 4, "kernel": (3, 2), "stride": (2, 3), "output_padding": (1, 2)},
                ((2, 3, 4),),
            ),
            ({"channels": 6, "kernel": 2, "stride": 2, "groups": 3, "dilation": 2}, ((3, 3, 5),)),
            ({"channels": 2, "kernel": 4, "stride": 1, "padding": 0}, ((8, 1, 1),)),
        ),
        3: (
            ({"channels": 2}, ((3, 2, 3, 4),)),
            (
                {"channels": 4, "kernel": (2, 3, 3), "stride": 2, "padding": (0, 1, 1)},
                ((2, 3, 3, 2),),
            ),
            (
                {"channels": 2, "kernel": 3, "stride": 2, "output_padding": 1, "groups": 2},
                ((2, 2, 2, 3),),
            ),
        ),
    }
    return make_spec(
        name=name,
        params=(
            Param("channels", ArgKind.INT, check=POSITIVE, doc="output channels"),
            Param("kernel", kind, 3, positive, doc="kernel size"),
            Param("stride", kind, 1, positive, doc="stride"),
            Param("padding", kind, 0, non_negative, doc="rows cropped from each output side"),
            Param(
                "output_padding",
                kind,
                0,
                non_negative,
                doc="extra size on one side of each axis; smaller than the stride or dilation",
            ),
            Param("dilation", kind, 1, positive, doc="kernel dilation"),
            Param("groups", ArgKind.INT, 1, POSITIVE, doc="channel groups"),
            Param("bias", ArgKind.BOOL, True, doc="learn an additive bias"),
        ),
        infer=infer,
        doc=f"transposed convolution over a {LAYOUTS[dims]} input (nn.ConvTranspose{dims}d)",
        samples=samples[dims],
        kinds={PARAMETRIC},
        family=CONVOLUTION,
        parameters=parameters,
        macs=lambda ctx, out: ctx.input.numel * weight_per_input(ctx),
        other_flops=_conv_bias_flops,
    )


CONV_TRANSPOSE1D = _transpose_spec(1)
CONV_TRANSPOSE2D = _transpose_spec(2)
CONV_TRANSPOSE3D = _transpose_spec(3)

SPECS: tuple[OpSpec, ...] = (CONV3D, CONV_TRANSPOSE1D, CONV_TRANSPOSE2D, CONV_TRANSPOSE3D)
