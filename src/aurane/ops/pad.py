"""Padding and rearranging: ``pad`` (constant, reflect, replicate or circular, last axis
first, as ``F.pad``), ``pixel_shuffle`` (channels to space) and ``identity``. Axis
arguments count the batch axis, as in ``ops/shape.py``."""

from __future__ import annotations

import math
from typing import Any

from aurane.ops.rules import (
    PARAMETER_FREE,
    POSITIVE,
    RESHAPING,
    SHAPE_PRESERVING,
    fmt_shape,
    is_int,
    is_number,
    make_spec,
)
from aurane.ops.shape import int_items
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType


def _padding_check(value: Any) -> str | None:
    items = int_items(value)
    if not items or not all(map(is_int, items)):
        return "must be a tuple of ints"
    if len(items) % 2:
        return "must have an even length: (left, right) per axis, last axis first"
    return None


def _pad_infer(ctx: InferContext) -> TensorType:
    t, a = ctx.input, ctx.args
    pads = int_items(a["padding"])
    axes = len(pads) // 2
    if axes > t.rank:
        raise OpError(
            "T004",
            f"pad gives {axes} (left, right) pairs but the sample {fmt_shape(t.shape)} has "
            f"{t.rank} axes; the batch axis is never padded",
            blame="padding",
            hint="give at most one pair per sample axis, last axis first",
        )
    mode = a["mode"]
    if mode != "constant":
        if a["value"] != 0:
            raise OpError(
                "S004",
                f'pad value applies to mode="constant" only, not mode="{mode}"',
                blame="value",
                hint="drop value or use mode=constant",
            )
        # F.pad pads 1 to 3 trailing axes in these modes, of a (batch, channels, *axes)
        # input or, taking the batch axis as channels, of every sample axis: both keep
        # the samples apart (nothing is read across the channel axis)
        if not (1 <= axes <= 3 and axes in (t.rank - 1, t.rank)):
            raise OpError(
                "T002",
                f'pad mode="{mode}" pads 1 to 3 axes: every axis after the channels of a '
                "(channels, *spatial) sample, or every axis of the sample; got "
                f"{axes} pairs for {fmt_shape(t.shape)}",
                blame="padding",
                hint=f"give {max(min(t.rank - 1, 3), 1)} (left, right) pairs",
            )
        if mode in ("reflect", "replicate") and t.dtype == "bool":
            raise OpError(
                "T003",
                f'pad mode="{mode}" needs a numeric input, got bool (torch has no {mode} '
                "padding of booleans)",
                hint='use mode="constant" or "circular", or convert the mask to a number first',
            )
    shape = list(t.shape)
    for pair in range(axes):
        axis = t.rank - 1 - pair
        left, right = pads[2 * pair], pads[2 * pair + 1]
        if mode == "reflect" and max(left, right) >= shape[axis]:
            raise OpError(
                "T005",
                f"reflect padding {max(left, right)} needs an axis longer than it, "
                f"dim={axis + 1} has size {shape[axis]}",
                blame="padding",
                hint="use smaller padding or mode=replicate",
            )
        if mode == "circular" and max(left, right) > shape[axis]:
            raise OpError(
                "T005",
                f"circular padding {max(left, right)} wraps around more than once: "
                f"dim={axis + 1} has size {shape[axis]}",
                blame="padding",
                hint="pad by at most the axis size, or use mode=replicate",
            )
        shape[axis] += left + right
        if shape[axis] < 1:
            raise OpError(
                "T005",
                f"pad leaves nothing of dim={axis + 1} (size {t.shape[axis]})",
                blame="padding",
                hint="negative padding crops; crop less",
            )
    return TensorType(tuple(shape), t.dtype)


def _number(value: Any) -> str | None:
    return None if is_number(value) and math.isfinite(value) else "must be a finite number"


PAD = make_spec(
    name="pad",
    params=(
        Param(
            "padding",
            ArgKind.INT_OR_TUPLE,
            check=_padding_check,
            doc="(left, right) per axis, last axis first, as F.pad",
        ),
        Param(
            "mode",
            ArgKind.STR,
            "constant",
            choices=("constant", "reflect", "replicate", "circular"),
            doc="how new positions are filled",
        ),
        Param("value", ArgKind.FLOAT, 0.0, _number, doc="fill value for mode=constant"),
    ),
    infer=_pad_infer,
    doc="pad the trailing axes (F.pad); pairs run from the last axis backwards",
    samples=(
        ({"padding": (1, 2)}, ((3, 5),)),
        ({"padding": (1, 1, 2, 0), "value": 0.5}, ((2, 4, 4),)),
        ({"padding": (2, 2, 1, 1), "mode": "reflect"}, ((3, 5, 5),)),
        ({"padding": (1, 1), "mode": "circular"}, ((2, 6),)),
        ({"padding": (-1, 0)}, ((2, 6),)),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE},
    other_flops=lambda ctx, out: out.numel,
)


def _pixel_shuffle_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    if t.rank < 3:  # torch would read the batch axis as channels and mix the samples
        raise OpError(
            "T002",
            "pixel_shuffle expects a (channels, height, width) input (leading axes kept), "
            f"got shape {fmt_shape(t.shape)}",
            hint="pixel_shuffle needs an input of rank 3 or more (batch excluded)",
        )
    r = ctx.args["upscale_factor"]
    *lead, channels, height, width = t.shape
    if channels % (r * r):
        raise OpError(
            "T007",
            f"pixel_shuffle upscale_factor={r} needs channels divisible by {r * r}, got {channels}",
            blame="upscale_factor",
            hint=f"use a multiple of {r * r} channels",
        )
    return TensorType((*lead, channels // (r * r), height * r, width * r), t.dtype)


PIXEL_SHUFFLE = make_spec(
    name="pixel_shuffle",
    params=(Param("upscale_factor", ArgKind.INT, check=POSITIVE, doc="spatial multiplier r"),),
    infer=_pixel_shuffle_infer,
    doc="rearrange (..., c * r * r, h, w) into (..., c, h * r, w * r) (nn.PixelShuffle)",
    samples=(
        ({"upscale_factor": 2}, ((8, 3, 4),)),
        ({"upscale_factor": 3}, ((9, 2, 2),)),
        ({"upscale_factor": 2}, ((2, 8, 3, 4),)),  # leading axes kept, as torch does
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)

IDENTITY = make_spec(
    name="identity",
    params=(),
    infer=lambda ctx: ctx.input,
    doc="return the input unchanged (nn.Identity), a placeholder layer",
    samples=(({}, ((4,),)), ({}, ((2, 3, 3),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, SHAPE_PRESERVING},
)


SPECS: tuple[OpSpec, ...] = (PAD, PIXEL_SHUFFLE, IDENTITY)
