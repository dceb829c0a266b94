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
    same_type,
    sample_axis,
)
from aurane.ops.spec import ArgKind, InferContext, OpSpec, Param, TensorType

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
GELU = _activation("gelu", "gaussian error linear unit, exact erf form (F.gelu)", 8)
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
