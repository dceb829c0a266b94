"""Parametric layers: dense, convolutions, normalization, embedding, positional encoding, dropout.

Parameter counts are those of the PyTorch modules the backend emits (``nn.Linear``,
``nn.Conv1d``/``nn.Conv2d``, ``nn.BatchNorm1d``/``nn.BatchNorm2d``, ``nn.LayerNorm``,
``nn.Embedding``, a learned ``(1, max_len, features)`` parameter, ``nn.Dropout``).
``macs`` counts multiply-accumulates of dense and convolution products only (bias adds are
not MACs, matching ``torch.utils.flop_counter``); ``other_flops`` are rough estimates.
"""

from __future__ import annotations

from aurane.ops.norm import AXES, trailing_axes
from aurane.ops.rules import (
    CONVOLUTION,
    ELEMENTWISE,
    NORMALIZATION,
    PARAMETER_FREE,
    PARAMETRIC,
    POSITIVE,
    POSITIVE_OR_PAIR,
    SHAPE_PRESERVING,
    STOCHASTIC,
    fmt_shape,
    make_spec,
    numel,
    optional,
    padding_check,
    per_element,
    positive_number,
    probability,
    require_min_rank,
    require_rank,
    same_type,
    sample_axis,
    spatial,
    unit_interval,
    window_output,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType

# -- dense --------------------------------------------------------------------------------


def _dense_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    require_min_rank("dense", t, 1, "(..., features)")
    return TensorType((*t.shape[:-1], ctx.args["features"]), t.dtype)


def _dense_parameters(ctx: InferContext, out: TensorType) -> int:
    features: int = ctx.args["features"]
    return ctx.input.shape[-1] * features + (features if ctx.args["bias"] else 0)


def _dense_macs(ctx: InferContext, out: TensorType) -> int:
    return out.numel * ctx.input.shape[-1]


DENSE = make_spec(
    name="dense",
    params=(
        Param("features", ArgKind.INT, check=POSITIVE, doc="output features"),
        Param("bias", ArgKind.BOOL, True, doc="learn an additive bias"),
        Param(
            "transposed",
            ArgKind.BOOL,
            False,
            keyword_only=True,
            doc="store the weight (in, out), as Hugging Face's Conv1D (GPT-2), not (out, in)",
        ),
    ),
    infer=_dense_infer,
    doc="fully connected layer over the last axis (nn.Linear; transposed=true: HF's Conv1D)",
    samples=(
        ({"features": 4}, ((8,),)),
        ({"features": 3, "bias": False}, ((5, 6),)),
        ({"features": 2}, ((2, 3, 4),)),
        ({"features": 3, "transposed": True}, ((2, 5),)),
    ),
    aliases=("linear",),
    kinds={PARAMETRIC},
    parameters=_dense_parameters,
    macs=_dense_macs,
    other_flops=lambda ctx, out: out.numel if ctx.args["bias"] else 0,
)

# -- convolutions -------------------------------------------------------------------------


def check_groups(ctx: InferContext, op: str) -> None:
    """``groups`` must divide both channel counts (convolutions and transposed ones alike)."""
    groups: int = ctx.args["groups"]
    for side, count in (("input", ctx.input.shape[0]), ("output", ctx.args["channels"])):
        if count % groups:
            raise OpError(
                "T007",
                f"{op} groups={groups} does not divide the {count} {side} channels",
                blame="groups",
                hint="groups must divide both the input and the output channel counts",
            )


def _conv_geometry(ctx: InferContext, op: str, dims: int) -> tuple[int, ...]:
    """Validate a convolution's arguments against its input; return the output spatial size."""
    t, a = ctx.input, ctx.args
    check_groups(ctx, op)
    kernel = spatial(op, "kernel", a["kernel"], dims)
    stride = spatial(op, "stride", a["stride"], dims)
    dilation = spatial(op, "dilation", a["dilation"], dims)
    padding = a["padding"]
    if padding == "same":
        if any(s != 1 for s in stride):
            raise OpError(
                "S004",
                f'{op} padding="same" needs stride 1, got stride {fmt_shape(stride)}',
                blame="padding",
                hint="use an explicit padding with strided convolutions",
            )
        return t.shape[1:]
    pads = (0,) * dims if padding == "valid" else spatial(op, "padding", padding, dims)
    return window_output(op, t.shape[1:], kernel, stride, pads, dilation)


def _conv_spec(dims: int) -> OpSpec:
    name = f"conv{dims}d"
    layout = "(channels, length)" if dims == 1 else "(channels, height, width)"
    kind = ArgKind.INT if dims == 1 else ArgKind.INT_OR_PAIR
    sizes = POSITIVE if dims == 1 else POSITIVE_OR_PAIR
    lengths = (1,) if dims == 1 else (1, 2)

    def infer(ctx: InferContext) -> TensorType:
        require_rank(name, ctx.input, (dims + 1,), layout)
        out = _conv_geometry(ctx, name, dims)
        return TensorType((ctx.args["channels"], *out), ctx.input.dtype)

    def weight_per_output(ctx: InferContext) -> int:
        kernel = spatial(name, "kernel", ctx.args["kernel"], dims)
        groups: int = ctx.args["groups"]
        return ctx.input.shape[0] // groups * numel(kernel)

    def parameters(ctx: InferContext, out: TensorType) -> int:
        channels: int = ctx.args["channels"]
        return channels * weight_per_output(ctx) + (channels if ctx.args["bias"] else 0)

    def macs(ctx: InferContext, out: TensorType) -> int:
        return out.numel * weight_per_output(ctx)

    square = {"kernel": 3} if dims == 1 else {"kernel": (2, 3), "stride": (1, 2)}
    return make_spec(
        name=name,
        params=(
            Param("channels", ArgKind.INT, check=POSITIVE, doc="output channels"),
            Param("kernel", kind, 3, sizes, doc="kernel size"),
            Param("stride", kind, 1, sizes, doc="stride"),
            Param(
                "padding",
                ArgKind.INT_OR_STR,
                0,
                padding_check(lengths),
                doc='zero padding or "same"',
            ),
            Param("dilation", kind, 1, sizes, doc="kernel dilation"),
            Param("groups", ArgKind.INT, 1, POSITIVE, doc="channel groups"),
            Param("bias", ArgKind.BOOL, True, doc="learn an additive bias"),
        ),
        infer=infer,
        doc=f"convolution over a {layout} input (nn.Conv{dims}d)",
        samples=(
            ({"channels": 4}, ((3, 10) if dims == 1 else (3, 8, 8),)),
            ({"channels": 6, **square, "bias": False}, ((4, 9) if dims == 1 else (4, 7, 9),)),
            (
                {"channels": 8, "kernel": 5, "stride": 2, "padding": 2},
                ((2, 17) if dims == 1 else (2, 11, 12),),
            ),
            (
                {"channels": 4, "kernel": 3, "dilation": 2, "groups": 2},
                ((4, 12) if dims == 1 else (4, 9, 9),),
            ),
            (
                {"channels": 3, "kernel": 4, "padding": "same", "dilation": 2},
                ((3, 9) if dims == 1 else (3, 6, 7),),
            ),
            ({"channels": 2, "padding": "valid"}, ((1, 5) if dims == 1 else (1, 5, 4),)),
        ),
        kinds={PARAMETRIC},
        family=CONVOLUTION,
        parameters=parameters,
        macs=macs,
        other_flops=lambda ctx, out: out.numel if ctx.args["bias"] else 0,
    )


CONV1D = _conv_spec(1)
CONV2D = _conv_spec(2)

# -- normalization ------------------------------------------------------------------------


def _batchnorm_infer(ctx: InferContext) -> TensorType:
    require_rank(
        "batchnorm",
        ctx.input,
        (1, 2, 3, 4),
        "(features,), (channels, length), (channels, height, width) or "
        "(channels, depth, height, width)",
    )
    return ctx.input


BATCHNORM = make_spec(
    name="batchnorm",
    params=(
        Param("eps", ArgKind.FLOAT, 1e-5, positive_number, doc="added to the variance"),
        Param(
            "momentum",
            ArgKind.OPTIONAL_FLOAT,
            0.1,
            optional(unit_interval),
            doc="running-stat momentum (None: cumulative average)",
        ),
        Param("affine", ArgKind.BOOL, True, doc="learn scale and shift"),
        Param(
            "track_running_stats", ArgKind.BOOL, True, doc="keep running mean and variance buffers"
        ),
    ),
    infer=_batchnorm_infer,
    doc="batch normalization over the first sample axis (nn.BatchNorm1d / 2d / 3d)",
    samples=(
        ({}, ((6,),)),
        ({"affine": False}, ((3, 7),)),
        ({"eps": 1e-3, "momentum": None, "track_running_stats": False}, ((4, 5, 5),)),
        ({}, ((3, 2, 4, 4),)),
    ),
    aliases=("batch_norm",),
    kinds={PARAMETRIC, NORMALIZATION, SHAPE_PRESERVING},
    parameters=lambda ctx, out: 2 * ctx.input.shape[0] if ctx.args["affine"] else 0,
    other_flops=per_element(4),
)


def channel_first(dim: int, rank: int) -> bool:
    """``layer_norm(dim=1)`` on (C, *spatial): normalize the channel axis at each position."""
    return rank > 1 and dim in (1, -rank)


def _layer_norm_shape(ctx: InferContext) -> tuple[int, ...]:
    """The normalized shape: the last ``axes`` axes, or the channel axis with ``dim=1``."""
    t, dim = ctx.input, ctx.args["dim"]
    if dim == -1:
        return trailing_axes("layer_norm", ctx)
    require_min_rank("layer_norm", t, 1, "(..., features)")
    axis = sample_axis("layer_norm", dim, t.rank)
    if 0 < axis < t.rank - 1:
        raise OpError(
            "T004",
            f"layer_norm dim={dim} is neither the first nor the last sample axis of shape "
            f"{fmt_shape(t.shape)}",
            blame="dim",
            hint="use dim=1 (channels first, as torchvision's LayerNorm2d) or dim=-1 (the last)",
        )
    if not channel_first(dim, t.rank):
        return trailing_axes("layer_norm", ctx)
    if ctx.args["axes"] != 1:
        raise OpError(
            "T004",
            f"layer_norm dim={dim} normalizes the channel axis alone; axes="
            f"{ctx.args['axes']} cannot go with it",
            blame="axes",
            hint="drop axes, or normalize the trailing axes with dim=-1",
        )
    return (t.shape[0],)


def _layer_norm_infer(ctx: InferContext) -> TensorType:
    _layer_norm_shape(ctx)
    return ctx.input


def _layer_norm_parameters(ctx: InferContext, out: TensorType) -> int:
    if not ctx.args["elementwise_affine"]:
        return 0
    return numel(_layer_norm_shape(ctx)) * (2 if ctx.args["bias"] else 1)


LAYER_NORM = make_spec(
    name="layer_norm",
    params=(
        # keyword-only: `layer_norm(3)` reads as nn.LayerNorm(3) (a normalized shape, which
        # comes from the input here), never as eps=3
        Param(
            "eps",
            ArgKind.FLOAT,
            1e-5,
            positive_number,
            keyword_only=True,
            doc="added to the variance",
        ),
        Param(
            "elementwise_affine",
            ArgKind.BOOL,
            True,
            keyword_only=True,
            doc="learn a per-feature scale",
        ),
        Param(
            "bias",
            ArgKind.BOOL,
            True,
            keyword_only=True,
            doc="learn a per-feature shift (with elementwise_affine)",
        ),
        AXES,
        Param(
            "dim",
            ArgKind.INT,
            -1,
            keyword_only=True,
            doc="normalized axis, counting the batch axis: -1 (last) or 1 (channels first)",
        ),
    ),
    infer=_layer_norm_infer,
    doc="layer normalization over the last axis, the last axes=n axes (nn.LayerNorm), "
    "or the channel axis with dim=1 (torchvision's LayerNorm2d)",
    samples=(
        ({}, ((10,),)),
        ({"bias": False}, ((4, 6),)),
        ({"elementwise_affine": False, "eps": 1e-6}, ((2, 3, 5),)),
        ({"axes": 3}, ((3, 4, 5),)),
        ({"axes": 2, "bias": False}, ((2, 3, 4),)),
        ({"dim": 1, "eps": 1e-6}, ((6, 4, 5),)),
        ({"dim": 1, "bias": False}, ((4, 7),)),
        ({"dim": 1, "elementwise_affine": False}, ((3, 2, 4, 4),)),
    ),
    aliases=("layernorm",),
    kinds={PARAMETRIC, NORMALIZATION, SHAPE_PRESERVING},
    parameters=_layer_norm_parameters,
    other_flops=per_element(5),
)

# -- embedding and positions ----------------------------------------------------------------


def _embedding_infer(ctx: InferContext) -> TensorType:
    a = ctx.args
    vocabulary: int = a["vocabulary"]
    index = a["padding_idx"]
    if a["sparse"] and a["scale_grad_by_freq"]:
        # forward runs; torch's embedding_backward refuses the pair
        raise OpError(
            "S081",
            "embedding cannot combine sparse=true with scale_grad_by_freq=true: torch's "
            "backward pass refuses it",
            blame="scale_grad_by_freq",
            hint="drop one of the two",
        )
    if index is not None and not -vocabulary <= index < vocabulary:
        raise OpError(
            "S004",
            f"embedding padding_idx={index} is outside the vocabulary of {vocabulary}",
            blame="padding_idx",
            hint=f"use an index in [0, {vocabulary})",
        )
    return TensorType((*ctx.input.shape, a["width"]), ctx.param_dtype)


EMBEDDING = make_spec(
    name="embedding",
    params=(
        Param("vocabulary", ArgKind.INT, check=POSITIVE, doc="number of token ids"),
        Param("width", ArgKind.INT, check=POSITIVE, doc="embedding size"),
        Param("padding_idx", ArgKind.OPTIONAL_INT, None, doc="token id whose vector stays zero"),
        Param(
            "max_norm",
            ArgKind.OPTIONAL_FLOAT,
            None,
            optional(positive_number),
            doc="renormalize vectors above this norm",
        ),
        Param("scale_grad_by_freq", ArgKind.BOOL, False, doc="scale gradients by token frequency"),
        Param("sparse", ArgKind.BOOL, False, doc="sparse gradients"),
    ),
    infer=_embedding_infer,
    doc="token embedding of integer ids (nn.Embedding)",
    samples=(
        ({"vocabulary": 20, "width": 8}, ((5,),)),
        ({"vocabulary": 10, "width": 4, "padding_idx": 0, "max_norm": 1.0}, ((3, 2),)),
        # torch's backward refuses sparse with scale_grad_by_freq (S081): one at a time
        ({"vocabulary": 7, "width": 3, "scale_grad_by_freq": True}, ((),)),
        ({"vocabulary": 7, "width": 3, "sparse": True}, ((),)),
    ),
    input_dtypes="int",
    kinds={PARAMETRIC},
    parameters=lambda ctx, out: ctx.args["vocabulary"] * ctx.args["width"],
)


def _positional_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    require_rank("positional_encoding", t, (2,), "(sequence, features)")
    max_len: int = ctx.args["max_len"]
    if t.shape[0] > max_len:
        raise OpError(
            "T005",
            f"positional_encoding max_len={max_len} is shorter than the sequence length {t.shape[0]}",
            blame="max_len",
            hint=f"use max_len >= {t.shape[0]}",
        )
    return t


POSITIONAL_ENCODING = make_spec(
    name="positional_encoding",
    params=(Param("max_len", ArgKind.INT, check=POSITIVE, doc="longest sequence"),),
    infer=_positional_infer,
    doc="learned positional encoding added to a (sequence, features) input",
    samples=(({"max_len": 8}, ((8, 4),)), ({"max_len": 10}, ((3, 6),))),
    kinds={PARAMETRIC, SHAPE_PRESERVING},
    parameters=lambda ctx, out: ctx.args["max_len"] * ctx.input.shape[1],
    other_flops=per_element(1),
)

DROPOUT = make_spec(
    name="dropout",
    params=(Param("p", ArgKind.FLOAT, check=probability, doc="probability of zeroing an element"),),
    infer=same_type,
    doc="dropout in training, identity in evaluation (nn.Dropout)",
    samples=(({"p": 0.0}, ((5,),)), ({"p": 0.5}, ((2, 3, 4),))),
    kinds={PARAMETER_FREE, SHAPE_PRESERVING, ELEMENTWISE, STOCHASTIC},
    other_flops=per_element(1),
)


DROP_PATH = make_spec(
    name="drop_path",
    params=(Param("p", ArgKind.FLOAT, check=probability, doc="probability of dropping a sample"),),
    infer=same_type,  # a per-sample scalar too: each sample is one value, kept or dropped
    doc="stochastic depth: in training zero whole samples with probability p and scale the "
    "rest by 1 / (1 - p), identity in evaluation (torchvision StochasticDepth, row mode)",
    samples=(({"p": 0.0}, ((5,),)), ({"p": 0.5}, ((2, 3, 4),)), ({"p": 0.2}, ((3, 4, 4),))),
    kinds={PARAMETER_FREE, SHAPE_PRESERVING, STOCHASTIC},
    other_flops=per_element(1),
)

SPECS: tuple[OpSpec, ...] = (
    DENSE,
    CONV1D,
    CONV2D,
    BATCHNORM,
    LAYER_NORM,
    EMBEDDING,
    POSITIONAL_ENCODING,
    DROPOUT,
    DROP_PATH,
)
