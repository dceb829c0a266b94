"""Activations: shape-preserving, parameter-free, usable as calls or suffixes (``.relu``).

``swish`` is an alias of ``silu`` (the same function, ``F.silu``). ``softmax`` and
``log_softmax`` normalize along ``dim``, which counts the batch axis as PyTorch does
(the batch axis itself is refused); they are not elementwise. ``other_flops`` are rough
per-element estimates; activations have no MACs.
"""

from __future__ import annotations

from collections.abc import Callable

from aurane.ops.rules import (
    ACTIVATION,
    ELEMENTWISE,
    PARAMETER_FREE,
    SHAPE_PRESERVING,
    Samples,
    make_spec,
    per_element,
    positive_number,
    same_type,
    sample_axis,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType

ACTIVATION_KINDS = frozenset({ACTIVATION, ELEMENTWISE, PARAMETER_FREE, SHAPE_PRESERVING})

_DEFAULT_SAMPLES: Samples = (({}, ((6,),)), ({}, ((2, 3, 4),)))


def _activation(
    name: str,
    doc: str,
    cost: int,
    *,
    params: tuple[Param, ...] = (),
    samples: Samples = _DEFAULT_SAMPLES,
    infer: Callable[[InferContext], TensorType] = same_type,
    aliases: tuple[str, ...] = (),
    elementwise: bool = True,
) -> OpSpec:
    return make_spec(
        name=name,
        params=params,
        infer=infer,
        doc=doc,
        samples=samples,
        aliases=aliases,
        kinds=ACTIVATION_KINDS if elementwise else ACTIVATION_KINDS - {ELEMENTWISE},
        other_flops=per_element(cost),
    )


def _normalizing(name: str, doc: str) -> OpSpec:
    """softmax / log_softmax: validate ``dim`` against the input rank."""

    def infer(ctx: InferContext) -> TensorType:
        sample_axis(name, ctx.args["dim"], ctx.input.rank)
        return ctx.input

    return _activation(
        name,
        doc,
        5,
        params=(Param("dim", ArgKind.INT, -1, doc="normalized axis, counting the batch axis"),),
        samples=(({}, ((5,),)), ({"dim": 1}, ((3, 4),)), ({"dim": -2}, ((2, 3, 4),))),
        infer=infer,
        elementwise=False,
    )


RELU = _activation("relu", "rectified linear unit max(x, 0) (F.relu)", 1)
GELU = _activation(
    "gelu",
    "gaussian error linear unit, exact erf form or its tanh approximation (F.gelu)",
    8,
    params=(
        Param(
            "approximate",
            ArgKind.STR,
            "none",
            choices=("none", "tanh"),
            doc='"tanh": the tanh approximation (GPT-2\'s gelu_new)',
        ),
    ),
    samples=(({}, ((6,),)), ({}, ((2, 3, 4),)), ({"approximate": "tanh"}, ((2, 3),))),
)
SIGMOID = _activation("sigmoid", "logistic sigmoid 1 / (1 + exp(-x)) (torch.sigmoid)", 4)
TANH = _activation("tanh", "hyperbolic tangent (torch.tanh)", 5)
SOFTMAX = _normalizing("softmax", "softmax along dim (F.softmax)")
LOG_SOFTMAX = _normalizing("log_softmax", "log of softmax along dim (F.log_softmax)")
LEAKY_RELU = _activation(
    "leaky_relu",
    "leaky rectifier with negative slope (F.leaky_relu)",
    2,
    params=(Param("slope", ArgKind.FLOAT, 0.01, doc="slope for negative inputs"),),
    samples=(({}, ((6,),)), ({"slope": 0.2}, ((2, 3),))),
)
SILU = _activation(
    "silu", "sigmoid linear unit x * sigmoid(x), also called swish (F.silu)", 5, aliases=("swish",)
)
MISH = _activation("mish", "mish x * tanh(softplus(x)) (F.mish)", 10)
ELU = _activation(
    "elu",
    "exponential linear unit (F.elu)",
    4,
    params=(Param("alpha", ArgKind.FLOAT, 1.0, doc="saturation value for negative inputs"),),
    samples=(({}, ((6,),)), ({"alpha": 0.5}, ((2, 3),))),
)
SELU = _activation("selu", "scaled exponential linear unit (F.selu)", 5)
HARDSWISH = _activation("hardswish", "hard swish x * relu6(x + 3) / 6 (F.hardswish)", 4)

SPECS: tuple[OpSpec, ...] = (
    RELU,
    GELU,
    SIGMOID,
    TANH,
    SOFTMAX,
    LOG_SOFTMAX,
    LEAKY_RELU,
    SILU,
    MISH,
    ELU,
    SELU,
    HARDSWISH,
)

# -- issue 10 additions -----------------------------------------------------------------------


SOFTPLUS = _activation(
    "softplus",
    "smooth rectifier log(1 + exp(beta * x)) / beta, linear above threshold (F.softplus)",
    4,
    params=(
        Param("beta", ArgKind.FLOAT, 1.0, positive_number, doc="sharpness"),
        Param("threshold", ArgKind.FLOAT, 20.0, doc="beta * x above which the output is x"),
    ),
    samples=(({}, ((6,),)), ({"beta": 2.0, "threshold": 1.0}, ((2, 3, 4),))),
)
RELU6 = _activation("relu6", "rectifier clipped at 6, min(max(x, 0), 6) (F.relu6)", 2)


def _hardtanh_infer(ctx: InferContext) -> TensorType:
    low, high = ctx.args["min_val"], ctx.args["max_val"]
    if high <= low:
        raise OpError(
            "S004",
            f"hardtanh max_val={high} must be larger than min_val={low}",
            blame="max_val",
            hint="pick min_val < max_val",
        )
    return ctx.input


HARDTANH = _activation(
    "hardtanh",
    "clip to [min_val, max_val] (F.hardtanh)",
    2,
    params=(
        Param("min_val", ArgKind.FLOAT, -1.0, doc="lower clip value"),
        Param("max_val", ArgKind.FLOAT, 1.0, doc="upper clip value"),
    ),
    samples=(({}, ((6,),)), ({"min_val": 0.0, "max_val": 6.0}, ((2, 3),))),
    infer=_hardtanh_infer,
)
HARDSIGMOID = _activation("hardsigmoid", "hard sigmoid relu6(x + 3) / 6 (F.hardsigmoid)", 3)


def _glu_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    axis = sample_axis("glu", ctx.args["dim"], t.rank)
    if t.shape[axis] % 2:
        raise OpError(
            "T007",
            f"glu halves dim={ctx.args['dim']}, whose size {t.shape[axis]} is odd",
            blame="dim",
            hint="glu splits the axis into a value half and a gate half; use an even size",
        )
    shape = (*t.shape[:axis], t.shape[axis] // 2, *t.shape[axis + 1 :])
    return TensorType(shape, t.dtype)


GLU = make_spec(
    name="glu",
    params=(Param("dim", ArgKind.INT, -1, doc="halved axis, counting the batch axis"),),
    infer=_glu_infer,
    doc="gated linear unit a * sigmoid(b) of the two halves of dim (F.glu); halves the axis",
    samples=(({}, ((6,),)), ({"dim": 1}, ((4, 3),)), ({"dim": -2}, ((2, 6, 3),))),
    kinds={ACTIVATION, PARAMETER_FREE},  # an activation (a suffix too) that halves an axis
    other_flops=lambda ctx, out: 5 * out.numel,
)

SPECS += (SOFTPLUS, RELU6, HARDTANH, HARDSIGMOID, GLU)
