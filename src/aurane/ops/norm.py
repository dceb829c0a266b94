"""Normalizations beyond batchnorm/layer_norm: group, instance and RMS normalization.

``group_norm`` follows ``nn.GroupNorm`` (statistics per sample over each group of channels
and every spatial position; a per-channel scale and shift with ``affine``).
``instance_norm`` follows ``nn.InstanceNorm1d/2d/3d`` with PyTorch's defaults (no affine
parameters, no running statistics). ``rms_norm`` follows ``nn.RMSNorm`` over the last
``axes`` axes (``eps=None``: the dtype's machine epsilon, as PyTorch). Parameter counts
are those of the modules; ``other_flops`` are rough per-element estimates; no MACs.
"""

from __future__ import annotations

from aurane.ops.rules import (
    NORMALIZATION,
    PARAMETRIC,
    POSITIVE,
    SHAPE_PRESERVING,
    fmt_shape,
    make_spec,
    numel,
    optional,
    per_element,
    positive_number,
    require_min_rank,
    require_rank,
    unit_interval,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, Param, TensorType

_EPS = Param("eps", ArgKind.FLOAT, 1e-5, positive_number, doc="added to the variance")
NORM_KINDS = frozenset({PARAMETRIC, NORMALIZATION, SHAPE_PRESERVING})


def trailing_axes(op: str, ctx: InferContext) -> tuple[int, ...]:
    """The sample axes normalized together: the last ``axes`` ones (T002 when too many)."""
    t = ctx.input
    axes: int = ctx.args["axes"]
    require_min_rank(op, t, 1, "(..., features)")
    if axes > t.rank:
        raise OpError(
            "T002",
            f"{op} axes={axes} needs at least {axes} sample axes, got shape {fmt_shape(t.shape)}",
            blame="axes",
            hint=f"normalize at most the {t.rank} sample axes (the batch axis is never one)",
        )
    return t.shape[t.rank - axes :]


AXES = Param(
    "axes",
    ArgKind.INT,
    1,
    POSITIVE,
    keyword_only=True,
    doc="trailing axes normalized together (1: the last axis)",
)

# -- group_norm -----------------------------------------------------------------------------


def _group_norm_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    require_min_rank("group_norm", t, 1, "(channels, *spatial)")
    groups: int = ctx.args["groups"]
    if t.shape[0] % groups:
        raise OpError(
            "T007",
            f"group_norm groups={groups} does not divide the {t.shape[0]} channels",
            blame="groups",
            hint="use a number of groups that divides the channel count",
        )
    return t


GROUP_NORM = make_spec(
    name="group_norm",
    params=(
        Param("groups", ArgKind.INT, check=POSITIVE, doc="channel groups; must divide channels"),
        _EPS,
        Param("affine", ArgKind.BOOL, True, doc="learn a per-channel scale and shift"),
    ),
    infer=_group_norm_infer,
    doc="group normalization over groups of channels (nn.GroupNorm)",
    samples=(
        ({"groups": 2}, ((4, 5, 5),)),
        ({"groups": 1, "eps": 1e-6}, ((3, 4),)),
        ({"groups": 3, "affine": False}, ((6, 2, 3, 3),)),
        ({"groups": 4}, ((8,),)),
    ),
    kinds=NORM_KINDS,
    parameters=lambda ctx, out: 2 * ctx.input.shape[0] if ctx.args["affine"] else 0,
    other_flops=per_element(5),
)

# -- instance_norm --------------------------------------------------------------------------


def _instance_norm_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    require_rank(
        "instance_norm",
        t,
        (2, 3, 4),
        "(channels, length), (channels, height, width) or (channels, depth, height, width)",
    )
    if numel(t.shape[1:]) == 1:
        raise OpError(
            "T005",
            f"instance_norm needs more than one spatial element per channel, got shape "
            f"{fmt_shape(t.shape)}",
            hint="instance statistics over a single element are undefined; use group_norm",
        )
    return t


INSTANCE_NORM = make_spec(
    name="instance_norm",
    params=(
        _EPS,
        Param(
            "momentum",
            ArgKind.OPTIONAL_FLOAT,
            0.1,
            optional(unit_interval),
            doc="running-stat momentum (None: cumulative average)",
        ),
        Param("affine", ArgKind.BOOL, False, doc="learn a per-channel scale and shift"),
        Param(
            "track_running_stats",
            ArgKind.BOOL,
            False,
            doc="keep running mean and variance buffers",
        ),
    ),
    infer=_instance_norm_infer,
    doc="instance normalization per sample and channel (nn.InstanceNorm1d / 2d / 3d)",
    samples=(
        ({}, ((3, 6, 6),)),
        ({"affine": True}, ((4, 7),)),
        ({"eps": 1e-3, "track_running_stats": True, "momentum": 0.2}, ((2, 3, 4, 5),)),
    ),
    kinds=NORM_KINDS,
    parameters=lambda ctx, out: 2 * ctx.input.shape[0] if ctx.args["affine"] else 0,
    other_flops=per_element(4),
)

# -- rms_norm -------------------------------------------------------------------------------


def _rms_norm_infer(ctx: InferContext) -> TensorType:
    trailing_axes("rms_norm", ctx)
    return ctx.input


RMS_NORM = make_spec(
    name="rms_norm",
    params=(
        Param(
            "eps",
            ArgKind.OPTIONAL_FLOAT,
            None,
            optional(positive_number),
            doc="added to the mean square (None: the dtype's machine epsilon)",
        ),
        Param("elementwise_affine", ArgKind.BOOL, True, doc="learn a per-feature scale"),
        AXES,
    ),
    infer=_rms_norm_infer,
    doc="root-mean-square normalization over trailing axes (nn.RMSNorm)",
    samples=(
        ({}, ((10,),)),
        ({"eps": 1e-6}, ((4, 6),)),
        ({"elementwise_affine": False}, ((2, 5),)),
        ({"axes": 2}, ((3, 4, 5),)),
    ),
    kinds=NORM_KINDS,
    parameters=lambda ctx, out: (
        numel(trailing_axes("rms_norm", ctx)) if ctx.args["elementwise_affine"] else 0
    ),
    other_flops=per_element(4),
)

SPECS = (GROUP_NORM, INSTANCE_NORM, RMS_NORM)
