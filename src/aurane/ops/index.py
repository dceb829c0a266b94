"""Index arithmetic and masks: comparisons, logical operations, where, masked_fill, casts,
cumsum, roll, tensor constructors and the index operations (gather, index_select,
take_along_dim, lookup).

Every value of a forward carries the batch axis, so a constructor without a tensor input
(``arange(16)``, ``zeros((4, 4))``) is one tensor per sample, the same for every sample
(the generated forward expands one tensor over the batch, a view without a copy), like
``parameter``. Axis arguments count the batch axis, as elsewhere in the catalog.

Dtypes follow PyTorch: comparisons and logical operations give ``bool``; ``cumsum`` of
integers or booleans gives ``int64``; a tensor combined with a tensor of another kind is
promoted (``rules.promote``: bool < integers < floats). Index tensors are integers
(``int64`` or ``int32``); masks and conditions are ``bool`` (T123).

``gather`` and ``take_along_dim`` are torch's own on the batched tensors. ``index_select``
picks the same positions of one axis for every element (an index of shape ``(n,)`` per
sample) and ``lookup(table, index=i)`` is an embedding lookup: rows of a ``(T, D)`` table
(a ``parameter`` or ``buffer``) at integer positions ``(...)`` give ``(..., D)``.
"""

from __future__ import annotations

import math
from typing import Any

from aurane.ops.arith import broadcast_shapes
from aurane.ops.rules import (
    ELEMENTWISE,
    FLOAT_DTYPES,
    MERGE,
    PARAMETER_FREE,
    RESHAPING,
    SHAPE_PRESERVING,
    fmt_shape,
    is_int,
    is_number,
    make_spec,
    promote,
    require_min_rank,
    sample_axis,
)
from aurane.ops.shape import int_items
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorArg, TensorType

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", *sorted(FLOAT_DTYPES))
INDEX_DTYPES = frozenset({"int64", "int32"})
NOT_BOOL = "T123"
NOT_INDEX = "T121"
INDEX_SHAPE = "T122"
CONSTRUCTOR = "constructor"  # kind: no tensor input, the same values for every sample


def _finite(value: Any) -> str | None:
    if not is_number(value) or not math.isfinite(value):
        return "must be a finite number"
    return None


def _fill_value(value: Any) -> str | None:
    """A number, or "-inf" / "inf" (attention masks fill with minus infinity)."""
    if value in ("-inf", "inf"):
        return None
    return _finite(value)


def fill_number(value: Any) -> float | int:
    """The Python number of a fill value (``"-inf"`` is ``-math.inf``)."""
    if value == "-inf":
        return -math.inf
    if value == "inf":
        return math.inf
    return value  # type: ignore[no-any-return]


def fill_argument(value: float | int) -> float | int | str:
    """A Python fill number as the catalog writes it (``-math.inf`` is ``"-inf"``): the
    inverse of ``fill_number``."""
    if isinstance(value, float) and math.isinf(value):
        return "-inf" if value < 0 else "inf"
    return value


def require_bool(op: str, t: TensorType | None, what: str, blame: str | None) -> None:
    if t is not None and t.dtype is not None and t.dtype != "bool":
        raise OpError(
            NOT_BOOL,
            f"{op} {what} must be a bool tensor, got {t.dtype}",
            blame=blame,
            hint='make a mask with a comparison (ne(ids, 0)) or convert with to(m, dtype="bool")',
        )


def require_index(op: str, t: TensorType | None, blame: str | None) -> None:
    if t is not None and t.dtype is not None and t.dtype not in INDEX_DTYPES:
        raise OpError(
            NOT_INDEX,
            f"{op} index must be an int64 or int32 tensor, got {t.dtype}",
            blame=blame,
            hint='positions are integers: build them with arange, or to(i, dtype="int64")',
        )


def _tensor(ctx: InferContext, name: str) -> TensorType:
    t = ctx.tensor(name)
    if t is None:
        raise OpError(
            "S005",
            f"{name}= of this operation is a tensor of the body, and it is missing",
            blame=name,
            hint=f"pass a named tensor: {name}=m",
        )
    return t


# -- comparisons and logical operations ------------------------------------------------------

_COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _comparison_spec(name: str, symbol: str) -> OpSpec:
    def infer(ctx: InferContext) -> TensorType:
        constant = ctx.args["constant"]
        if len(ctx.inputs) == 2:
            if constant is not None:
                raise OpError(
                    "S004",
                    f"{name} compares with a second tensor or a constant, not both",
                    blame="constant",
                    hint=f"write {name}(a, b) or {name}(a, 0)",
                )
            promote(name, ctx.inputs)  # two float precisions are refused as in arithmetic
            return TensorType(broadcast_shapes(name, ctx.inputs), "bool")
        if constant is None:
            raise OpError(
                "S005",
                f"{name} needs a second tensor or a constant",
                hint=f"write {name}(a, b) or {name}(ids, 0)",
            )
        return TensorType(ctx.input.shape, "bool")

    return make_spec(
        name=name,
        params=(
            Param(
                "constant", ArgKind.OPTIONAL_FLOAT, None, _finite, doc="a number to compare with"
            ),
        ),
        infer=infer,
        doc=f"elementwise a {symbol} b as a bool tensor, with size-1 broadcasting, or a "
        f"{symbol} constant",
        samples=(({}, ((4,), (4,))), ({}, ((3, 4), (1, 4))), ({"constant": 0}, ((2, 3),))),
        input_dtypes="any",
        kinds={PARAMETER_FREE, ELEMENTWISE, MERGE},
        min_inputs=1,
        max_inputs=2,
        other_flops=lambda ctx, out: out.numel,
    )


COMPARISONS: tuple[OpSpec, ...] = tuple(_comparison_spec(n, s) for n, s in _COMPARISONS.items())


def _logical_spec(name: str, symbol: str, inputs: int) -> OpSpec:
    def infer(ctx: InferContext) -> TensorType:
        for index, t in enumerate(ctx.inputs):
            require_bool(name, t, "input" if inputs == 1 else f"input {index}", None)
        shape = broadcast_shapes(name, ctx.inputs) if inputs == 2 else ctx.input.shape
        return TensorType(shape, "bool")

    shapes = ((4,), (4,)) if inputs == 2 else ((4,),)
    return make_spec(
        name=name,
        params=(),
        infer=infer,
        doc=f"elementwise {symbol} of bool masks"
        + (" with size-1 broadcasting" if inputs == 2 else ""),
        samples=(({}, shapes), ({}, ((3, 4), (3, 1)) if inputs == 2 else ((2, 3),))),
        input_dtypes="any",
        kinds={PARAMETER_FREE, ELEMENTWISE} | ({MERGE} if inputs == 2 else {SHAPE_PRESERVING}),
        min_inputs=inputs,
        max_inputs=inputs,
        other_flops=lambda ctx, out: out.numel,
        extra={"sample_dtypes": ("bool",) * inputs},
    )


LOGICAL_AND = _logical_spec("logical_and", "and (a & b)", 2)
LOGICAL_OR = _logical_spec("logical_or", "or (torch.logical_or)", 2)
LOGICAL_NOT = _logical_spec("logical_not", "not (~a)", 1)

# -- where and masked_fill --------------------------------------------------------------------


def _where_infer(ctx: InferContext) -> TensorType:
    other = ctx.args["other"]
    cond = ctx.inputs[0]
    require_bool("where", cond, "condition (first input)", "input0")
    if len(ctx.inputs) == 3:
        if other is not None:
            raise OpError(
                "S004",
                "where takes a third tensor or other=, not both",
                blame="other",
                hint="write where(c, a, b) or where(c, a, other=0.0)",
            )
        dtype = promote("where", ctx.inputs[1:])
        return TensorType(broadcast_shapes("where", ctx.inputs), dtype)
    if len(ctx.inputs) < 2 or other is None:
        raise OpError(
            "S005",
            "where needs a condition, a tensor and a second tensor or other=",
            hint="write where(c, a, b) or where(c, a, other=0.0)",
        )
    a = ctx.inputs[1]
    dtype = a.dtype
    if isinstance(other, float) and dtype is not None and dtype not in FLOAT_DTYPES:
        dtype = "float32"  # torch.where(c, int_tensor, 0.5) is float32
    return TensorType(broadcast_shapes("where", ctx.inputs), dtype)


WHERE = make_spec(
    name="where",
    params=(
        Param(
            "other",
            ArgKind.OPTIONAL_FLOAT,
            None,
            _finite,
            keyword_only=True,
            doc="the value where the condition is false, instead of a third tensor",
        ),
    ),
    infer=_where_infer,
    doc="elementwise condition ? a : b (torch.where) with size-1 broadcasting; the "
    "condition is a bool tensor",
    samples=(
        ({}, ((4,), (4,), (4,))),
        ({}, ((3, 1), (3, 4), (1, 4))),
        ({"other": 0.0}, ((2, 3), (2, 3))),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, ELEMENTWISE, MERGE},
    min_inputs=2,
    max_inputs=3,
    other_flops=lambda ctx, out: out.numel,
    extra={"sample_dtypes": ("bool", "float32", "float32")},
)


def _masked_fill_infer(ctx: InferContext) -> TensorType:
    x = ctx.input
    mask = _tensor(ctx, "mask")
    require_bool("masked_fill", mask, "mask", "mask")
    shape = broadcast_shapes("masked_fill", (x, mask))
    if shape != x.shape:
        raise OpError(
            "T060",
            f"masked_fill mask {fmt_shape(mask.shape)} would enlarge the input "
            f"{fmt_shape(x.shape)}: the mask broadcasts to the input's shape, never past it",
            blame="mask",
            hint="give the mask size 1 (or the input's size) on every axis",
        )
    value = ctx.args["value"]
    if (
        x.dtype is not None
        and x.dtype not in FLOAT_DTYPES
        and not (is_int(value) or (x.dtype == "bool" and isinstance(value, bool)))
    ):
        raise OpError(
            "T003",
            f"masked_fill of a {x.dtype} tensor with {value}: the value must be an integer",
            blame="value",
            hint="fill an integer tensor with an integer, or cast it to a float first",
        )
    return x


MASKED_FILL = make_spec(
    name="masked_fill",
    params=(
        Param("mask", ArgKind.TENSOR, doc="bool tensor of the body, broadcast to the input"),
        Param(
            "value",
            ArgKind.ANY,
            check=_fill_value,
            doc='the fill value: a number, or "-inf" / "inf"',
        ),
    ),
    infer=_masked_fill_infer,
    doc="the input with value where the bool mask is true (Tensor.masked_fill); the mask "
    "broadcasts over size-1 axes",
    samples=(
        ({"mask": TensorArg(1), "value": 0.0}, ((4, 5), (4, 5))),
        ({"mask": TensorArg(1), "value": "-inf"}, ((2, 3, 4), (1, 1, 4))),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, SHAPE_PRESERVING},
    other_flops=lambda ctx, out: out.numel,
    extra={"sample_dtypes": ("float32", "bool")},
)

# -- abs, log, clamp (the bucket arithmetic of relative positions) ----------------------------


def _abs_infer(ctx: InferContext) -> TensorType:
    if ctx.input.dtype == "bool":
        raise OpError("T003", "abs of a bool tensor: torch has none", hint="cast it first")
    return ctx.input


def _log_infer(ctx: InferContext) -> TensorType:
    dtype = ctx.input.dtype
    return TensorType(
        ctx.input.shape, dtype if dtype is None or dtype in FLOAT_DTYPES else "float32"
    )


def _clamp_infer(ctx: InferContext) -> TensorType:
    low, high = ctx.args["min"], ctx.args["max"]
    if low is None and high is None:
        raise OpError("S005", "clamp needs min= or max=", hint="e.g. clamp(x, max=31)")
    dtype = ctx.input.dtype
    if dtype is not None and dtype not in FLOAT_DTYPES:
        if any(isinstance(v, float) for v in (low, high)):
            dtype = "float32"  # torch.clamp(int_tensor, max=0.5) is float32
        elif dtype == "bool":
            dtype = "int64"  # torch.clamp(bool_tensor, max=1) is int64
    return TensorType(ctx.input.shape, dtype)


ABS = make_spec(
    name="abs",
    params=(),
    infer=_abs_infer,
    doc="elementwise absolute value (torch.abs), any numeric dtype",
    samples=(({}, ((4,),)), ({}, ((2, 3),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, SHAPE_PRESERVING, ELEMENTWISE},
    other_flops=lambda ctx, out: out.numel,
)

LOG = make_spec(
    name="log",
    params=(),
    infer=_log_infer,
    doc="elementwise natural logarithm (torch.log); integers give float32",
    samples=(({}, ((4,),)), ({}, ((2, 3),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, SHAPE_PRESERVING, ELEMENTWISE},
    other_flops=lambda ctx, out: out.numel,
)


def _float_unary(name: str, doc: str) -> OpSpec:
    """An elementwise function of floats (torch.exp, torch.sin, ...): integers give float32."""
    return make_spec(
        name=name,
        params=(),
        infer=_log_infer,
        doc=doc,
        samples=(({}, ((4,),)), ({}, ((2, 3),))),
        input_dtypes="any",
        kinds={PARAMETER_FREE, SHAPE_PRESERVING, ELEMENTWISE},
        other_flops=lambda ctx, out: out.numel,
    )


# the sinusoidal timestep embedding of diffusion models (diffusers' get_timestep_embedding)
EXP = _float_unary("exp", "elementwise exponential (torch.exp); integers give float32")
SIN = _float_unary("sin", "elementwise sine (torch.sin); integers give float32")
COS = _float_unary("cos", "elementwise cosine (torch.cos); integers give float32")


CLAMP = make_spec(
    name="clamp",
    params=(
        Param("min", ArgKind.OPTIONAL_FLOAT, None, keyword_only=True, doc="lower bound"),
        Param("max", ArgKind.OPTIONAL_FLOAT, None, keyword_only=True, doc="upper bound"),
    ),
    infer=_clamp_infer,
    doc="elementwise bounds (torch.clamp): min(max(x, min), max)",
    samples=(({"max": 0.5}, ((4,),)), ({"min": -1, "max": 1}, ((2, 3),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, SHAPE_PRESERVING, ELEMENTWISE},
    other_flops=lambda ctx, out: out.numel,
)

# -- casts, cumsum, roll ----------------------------------------------------------------------


def _to_infer(ctx: InferContext) -> TensorType:
    return TensorType(ctx.input.shape, ctx.args["dtype"])


TO = make_spec(
    name="to",
    params=(Param("dtype", ArgKind.STR, choices=DTYPES, doc="the dtype to convert to"),),
    infer=_to_infer,
    doc="the input converted to another dtype (Tensor.to(dtype)); floats to integers "
    "truncate toward zero",
    samples=(({"dtype": "int64"}, ((4,),)), ({"dtype": "float64"}, ((2, 3),))),
    aliases=("cast",),
    input_dtypes="any",
    kinds={PARAMETER_FREE, SHAPE_PRESERVING, ELEMENTWISE},
)


def _axis(op: str, ctx: InferContext, name: str = "dim") -> int:
    try:
        return sample_axis(op, ctx.args[name], ctx.input.rank)
    except OpError as error:
        error.blame = name
        raise


def _cumsum_infer(ctx: InferContext) -> TensorType:
    require_min_rank("cumsum", ctx.input, 1, "non-scalar")
    _axis("cumsum", ctx)
    dtype = ctx.input.dtype
    if dtype is not None and dtype not in FLOAT_DTYPES:
        dtype = "int64"  # torch.cumsum of integers and booleans is int64
    return TensorType(ctx.input.shape, dtype)


CUMSUM = make_spec(
    name="cumsum",
    params=(Param("dim", ArgKind.INT, doc="the axis to sum along (counting the batch axis)"),),
    infer=_cumsum_infer,
    doc="running sum along one axis (torch.cumsum); integers and booleans sum as int64",
    samples=(({"dim": 1}, ((5,),)), ({"dim": -1}, ((2, 4),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, SHAPE_PRESERVING},
    other_flops=lambda ctx, out: out.numel,
)


def _roll_infer(ctx: InferContext) -> TensorType:
    shifts, dims = int_items(ctx.args["shifts"]), int_items(ctx.args["dims"])
    if not dims and len(shifts) != 1:
        raise OpError(
            "T002",
            f"roll of the flattened tensor (dims=()) takes one shift, got {len(shifts)}",
            blame="shifts",
            hint="give one shift, or one axis per shift in dims",
        )
    if dims and len(shifts) != len(dims):
        raise OpError(
            "T002",
            f"roll got {len(shifts)} shifts for {len(dims)} dims",
            blame="shifts",
            hint="give one shift per axis",
        )
    for dim in dims:
        try:
            sample_axis("roll", dim, ctx.input.rank)
        except OpError as error:
            error.blame = "dims"
            raise
    return ctx.input


def _int_items(value: Any) -> str | None:
    items = int_items(value)
    return None if items and all(map(is_int, items)) else "must be an int or a tuple of ints"


def _axis_items(value: Any) -> str | None:
    # torch.roll takes dims=() (or none) to mean the flattened tensor
    items = int_items(value)
    return None if all(map(is_int, items)) else "must be an int or a tuple of ints (() for none)"


ROLL = make_spec(
    name="roll",
    params=(
        Param("shifts", ArgKind.INT_OR_TUPLE, check=_int_items, doc="positions to shift by"),
        Param(
            "dims",
            ArgKind.INT_OR_TUPLE,
            check=_axis_items,
            doc="axes (counting the batch); () rolls the flattened tensor",
        ),
    ),
    infer=_roll_infer,
    doc="cyclic shift along axes (torch.roll), as Swin's shifted windows use it",
    samples=(
        ({"shifts": 1, "dims": 1}, ((5,),)),
        ({"shifts": (-2, 3), "dims": (1, 2)}, ((4, 6),)),
        ({"shifts": 2, "dims": ()}, ((2, 3),)),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, SHAPE_PRESERVING},
)

# -- constructors -----------------------------------------------------------------------------


def _no_input(op: str, ctx: InferContext) -> None:
    if ctx.inputs:
        raise OpError(
            "T065",
            f"{op} takes no input tensor: it makes a tensor of the given size",
            hint=f"write it as a graph statement: t = {op}(...)",
        )


def _sizes(value: Any) -> str | None:
    items = int_items(value)
    if not items or not all(map(is_int, items)):
        return "must be one or more ints"
    if any(i < 1 for i in items):
        return "must have positive sizes"
    return None


def _arange_infer(ctx: InferContext) -> TensorType:
    _no_input("arange", ctx)
    a = ctx.args
    start, end, step = (
        (a["start"], a["end"], a["step"]) if a["end"] is not None else (0, a["start"], a["step"])
    )
    if step == 0:
        raise OpError("S004", "arange step must not be zero", blame="step")
    count = math.ceil((end - start) / step)
    if count < 1:
        raise OpError(
            "T005",
            f"arange({start}, {end}, step={step}) is empty",
            blame="start",
            hint="the end must lie past the start in the step's direction",
        )
    dtype = a["dtype"]
    if dtype == "bool":
        raise OpError(
            "S004",
            'arange makes numbers, not booleans: dtype="bool" is refused (as torch does)',
            blame="dtype",
            hint="compare the positions instead: lt(arange(8), 4)",
        )
    if dtype is None:
        dtype = "int64" if all(map(is_int, (start, end, step))) else "float32"
    return TensorType((count,), dtype)


ARANGE = make_spec(
    name="arange",
    params=(
        Param("start", ArgKind.FLOAT, doc="the end (one argument) or the start (two)"),
        Param("end", ArgKind.OPTIONAL_FLOAT, None, doc="the end (excluded)"),
        Param("step", ArgKind.FLOAT, 1, check=_finite, keyword_only=True, doc="the step"),
        Param(
            "dtype",
            ArgKind.STR,
            None,
            choices=DTYPES,
            keyword_only=True,
            doc="int64 for integer bounds, float32 otherwise (as torch.arange)",
        ),
    ),
    infer=_arange_infer,
    doc="positions start, start + step, ... below end (torch.arange), the same for every sample",
    samples=(
        ({"start": 6}, ()),
        ({"start": 2, "end": 9, "step": 3}, ()),
        ({"start": 0.5, "end": 2.0, "step": 0.5}, ()),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, CONSTRUCTOR},
    min_inputs=0,
    max_inputs=0,
)


def _fill_spec(name: str, fill: str | None) -> OpSpec:
    params: tuple[Param, ...] = (
        Param("shape", ArgKind.INT_OR_TUPLE, check=_sizes, variadic=True, doc="per-sample shape"),
    )
    if fill is None:
        params += (
            Param("value", ArgKind.ANY, check=_fill_value, keyword_only=True, doc="the fill value"),
        )
    params += (
        Param(
            "dtype",
            ArgKind.STR,
            None,
            choices=DTYPES,
            keyword_only=True,
            doc="the element dtype (default: the model's float dtype)",
        ),
    )

    def infer(ctx: InferContext) -> TensorType:
        _no_input(name, ctx)
        return TensorType(tuple(int_items(ctx.args["shape"])), ctx.args["dtype"] or ctx.param_dtype)

    samples: tuple[tuple[dict[str, Any], tuple[tuple[int, ...], ...]], ...] = (
        ({"shape": (2, 3)}, ()),
        ({"shape": (4,), "dtype": "int64"}, ()),
    )
    if fill is None:
        samples = tuple(({**a, "value": 7}, s) for a, s in samples)
    return make_spec(
        name=name,
        params=params,
        infer=infer,
        doc=f"a tensor of {fill or 'one value'} (torch.{name}), the same for every sample",
        samples=samples,
        input_dtypes="any",
        kinds={PARAMETER_FREE, CONSTRUCTOR},
        min_inputs=0,
        max_inputs=0,
    )


ZEROS = _fill_spec("zeros", "zeros")
ONES = _fill_spec("ones", "ones")
FULL = _fill_spec("full", None)


def _like_spec(name: str, fill: str | None) -> OpSpec:
    params: tuple[Param, ...] = ()
    if fill is None:
        params += (Param("value", ArgKind.ANY, check=_fill_value, doc="the fill value"),)
    params += (
        Param(
            "dtype",
            ArgKind.STR,
            None,
            choices=DTYPES,
            keyword_only=True,
            doc="the element dtype (default: the input's)",
        ),
    )

    def infer(ctx: InferContext) -> TensorType:
        return TensorType(ctx.input.shape, ctx.args["dtype"] or ctx.input.dtype)

    samples: tuple[tuple[dict[str, Any], tuple[tuple[int, ...], ...]], ...] = (
        ({}, ((2, 3),)),
        ({"dtype": "bool"}, ((4,),)),
    )
    if fill is None:
        samples = tuple(({**a, "value": 1}, s) for a, s in samples)
    return make_spec(
        name=name,
        params=params,
        infer=infer,
        doc=f"a tensor of {fill or 'one value'} with the input's shape (torch.{name})",
        samples=samples,
        input_dtypes="any",
        kinds={PARAMETER_FREE, SHAPE_PRESERVING},
    )


ZEROS_LIKE = _like_spec("zeros_like", "zeros")
ONES_LIKE = _like_spec("ones_like", "ones")
FULL_LIKE = _like_spec("full_like", None)

# -- gather, take_along_dim, index_select, lookup ---------------------------------------------


def _gather_infer(ctx: InferContext) -> TensorType:
    x, index = ctx.input, _tensor(ctx, "index")
    require_index("gather", index, "index")
    axis = _axis("gather", ctx)
    if index.rank != x.rank or any(
        i > s for k, (i, s) in enumerate(zip(index.shape, x.shape, strict=True)) if k != axis
    ):
        raise OpError(
            INDEX_SHAPE,
            f"gather index {fmt_shape(index.shape)} does not fit the input "
            f"{fmt_shape(x.shape)}: torch.gather needs the same rank and, off dim, sizes no "
            "larger than the input's",
            blame="index",
            hint="use take_along_dim to broadcast the index, or reshape it",
        )
    return TensorType(index.shape, x.dtype)


GATHER = make_spec(
    name="gather",
    params=(
        Param("dim", ArgKind.INT, doc="the axis to pick along (counting the batch axis)"),
        Param("index", ArgKind.TENSOR, doc="integer positions, a tensor of the body"),
    ),
    infer=_gather_infer,
    doc="out[..., i, ...] = x[..., index[..., i, ...], ...] along dim (torch.gather)",
    samples=(
        ({"dim": 1, "index": TensorArg(1)}, ((6,), (4,))),
        ({"dim": -1, "index": TensorArg(1)}, ((3, 5), (3, 2))),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE},
    extra={"sample_dtypes": ("float32", "int64")},
)


def _take_infer(ctx: InferContext) -> TensorType:
    x, index = ctx.input, _tensor(ctx, "index")
    require_index("take_along_dim", index, "index")
    axis = _axis("take_along_dim", ctx)
    if index.rank != x.rank:
        raise OpError(
            INDEX_SHAPE,
            f"take_along_dim index {fmt_shape(index.shape)} and input {fmt_shape(x.shape)} "
            "differ in rank",
            blame="index",
            hint="give the index the input's rank (size 1 on axes it broadcasts over)",
        )
    rest = tuple(1 if k == axis else s for k, s in enumerate(x.shape))
    others = tuple(1 if k == axis else s for k, s in enumerate(index.shape))
    shape = broadcast_shapes(
        "take_along_dim", (TensorType(rest, x.dtype), TensorType(others, None))
    )
    return TensorType(
        tuple(index.shape[k] if k == axis else s for k, s in enumerate(shape)), x.dtype
    )


TAKE_ALONG_DIM = make_spec(
    name="take_along_dim",
    params=(
        Param("dim", ArgKind.INT, doc="the axis to pick along (counting the batch axis)"),
        Param("index", ArgKind.TENSOR, doc="integer positions, broadcast off dim"),
    ),
    infer=_take_infer,
    doc="gather along dim with the index broadcast over the other axes (torch.take_along_dim)",
    samples=(
        ({"dim": 1, "index": TensorArg(1)}, ((6, 3), (2, 1))),
        ({"dim": 2, "index": TensorArg(1)}, ((3, 5), (1, 4))),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE},
    extra={"sample_dtypes": ("float32", "int64")},
)


def _index_select_infer(ctx: InferContext) -> TensorType:
    x, index = ctx.input, _tensor(ctx, "index")
    require_index("index_select", index, "index")
    axis = _axis("index_select", ctx)
    if index.rank != 1:
        raise OpError(
            INDEX_SHAPE,
            f"index_select index must be one axis of positions per sample, got "
            f"{fmt_shape(index.shape)}",
            blame="index",
            hint="flatten the index first, or use gather / take_along_dim",
        )
    return TensorType(
        tuple(index.shape[0] if k == axis else s for k, s in enumerate(x.shape)), x.dtype
    )


INDEX_SELECT = make_spec(
    name="index_select",
    params=(
        Param("dim", ArgKind.INT, doc="the axis to pick along (counting the batch axis)"),
        Param("index", ArgKind.TENSOR, doc="(n,) integer positions per sample"),
    ),
    infer=_index_select_infer,
    doc="the positions index of one axis (torch.index_select), per sample",
    samples=(
        ({"dim": 1, "index": TensorArg(1)}, ((6, 3), (4,))),
        ({"dim": -1, "index": TensorArg(1)}, ((2, 5), (7,))),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE},
    extra={"sample_dtypes": ("float32", "int64")},
)


def _lookup_infer(ctx: InferContext) -> TensorType:
    table, index = ctx.input, _tensor(ctx, "index")
    require_index("lookup", index, "index")
    if table.rank != 2:
        raise OpError(
            "T002",
            f"lookup expects a (rows, features) table, got shape {fmt_shape(table.shape)}",
            hint="a lookup table is a parameter or buffer of shape (rows, features)",
        )
    return TensorType((*index.shape, table.shape[1]), table.dtype)


LOOKUP = make_spec(
    name="lookup",
    params=(Param("index", ArgKind.TENSOR, doc="integer row numbers, any shape"),),
    infer=_lookup_infer,
    doc="rows of a (rows, features) table at integer positions: (...) gives (..., features) "
    "(an embedding lookup in a parameter or buffer)",
    samples=(
        ({"index": TensorArg(1)}, ((6, 3), (4,))),
        ({"index": TensorArg(1)}, ((5, 2), (3, 4))),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
    extra={"sample_dtypes": ("float32", "int64")},
)

SPECS: tuple[OpSpec, ...] = (
    *COMPARISONS,
    LOGICAL_AND,
    LOGICAL_OR,
    LOGICAL_NOT,
    WHERE,
    MASKED_FILL,
    ABS,
    LOG,
    EXP,
    SIN,
    COS,
    CLAMP,
    TO,
    CUMSUM,
    ROLL,
    ARANGE,
    ZEROS,
    ONES,
    FULL,
    ZEROS_LIKE,
    ONES_LIKE,
    FULL_LIKE,
    GATHER,
    TAKE_ALONG_DIM,
    INDEX_SELECT,
    LOOKUP,
)
