"""Axis operations: permute, transpose, unsqueeze, squeeze, select, slice, expand, split,
chunk.

Every axis argument counts the runtime batch axis, as PyTorch does: ``dim=1`` is the first
sample axis, negative dims count from the end, and the batch axis itself is refused.

``split`` and ``chunk`` have several outputs. The IR stays single-output: the statement
``a, b = chunk(x, 2, dim=-1)`` lowers to one node per bound name, each with an ``index``
argument naming its piece; the torch backend groups the siblings back into one unpacking
statement.

``pad``, ``pixel_shuffle`` and ``identity`` are in ``ops/pad.py``; the learned ``parameter``
tensor in ``ops/parameter.py``.
"""

from __future__ import annotations

from typing import Any

from aurane.ops.rules import (
    PARAMETER_FREE,
    POSITIVE,
    RESHAPING,
    fmt_shape,
    is_int,
    make_spec,
    require_min_rank,
    sample_axis,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType

SQUEEZE_SIZE = "T062"
INDEX_RANGE = "T063"
UNBOUND_PIECES = "T064"
NO_INPUT = "T065"


def int_items(value: Any) -> tuple[Any, ...]:
    """The items of a shape-like argument: ``(2, 1)`` of ``permute(2, 1)`` and of
    ``permute((2, 1))``, ``(4,)`` of a lone ``4``."""
    items = tuple(value) if isinstance(value, tuple | list) else (value,)
    if len(items) == 1 and isinstance(items[0], tuple | list):
        items = tuple(items[0])  # permute((2, 1)) as well as permute(2, 1)
    return items


def _int_list(value: Any) -> str | None:
    items = int_items(value)
    if not items or not all(map(is_int, items)):
        return "must be one or more ints"
    return None


def _axis(op: str, dim: int, rank: int, name: str = "dim") -> int:
    try:
        return sample_axis(op, dim, rank)
    except OpError as error:
        error.blame = name
        raise


def _dim_axis(ctx: InferContext, op: str) -> int:
    """The sample axis that ``dim`` names, for ops that index one axis of a non-scalar."""
    require_min_rank(op, ctx.input, 1, "non-scalar")
    return _axis(op, ctx.args["dim"], ctx.input.rank)


def _without(t: TensorType, axis: int) -> TensorType:
    """``t`` with sample axis ``axis`` removed."""
    return TensorType(t.shape[:axis] + t.shape[axis + 1 :], t.dtype)


# -- permute, transpose, unsqueeze, squeeze ----------------------------------------------------


def _permute_order(ctx: InferContext) -> tuple[int, ...]:
    """The full permutation (batch axis 0 first) that ``dims`` asks for."""
    t = ctx.input
    dims = int_items(ctx.args["dims"])
    if len(dims) == t.rank + 1 and dims[0] == 0:
        dims = dims[1:]  # permute(0, 2, 1): the batch axis written in place
    if len(dims) != t.rank:
        raise OpError(
            "T004",
            f"permute got {len(dims)} dims for a sample of rank {t.rank} {fmt_shape(t.shape)}",
            blame="dims",
            hint=f"name every sample axis once, 1 to {t.rank}: e.g. "
            f"permute({', '.join(map(str, range(t.rank, 0, -1)))})",
        )
    axes = [_axis("permute", d, t.rank, "dims") for d in dims]
    if sorted(axes) != list(range(t.rank)):
        raise OpError(
            "T004",
            f"permute dims {fmt_shape(dims)} name an axis twice",
            blame="dims",
            hint="each sample axis appears exactly once",
        )
    return (0, *(a + 1 for a in axes))


def _permute_infer(ctx: InferContext) -> TensorType:
    order = _permute_order(ctx)
    return TensorType(tuple(ctx.input.shape[i - 1] for i in order[1:]), ctx.input.dtype)


def _permute_canonical(args: dict[str, Any]) -> dict[str, Any]:
    """The sample axes alone: a leading 0 (the batch axis, which stays first) dropped."""
    dims = args.get("dims")
    if isinstance(dims, tuple) and len(dims) > 1 and dims[0] == 0:
        return {**args, "dims": dims[1:]}
    return args


PERMUTE = make_spec(
    name="permute",
    params=(
        Param(
            "dims",
            ArgKind.INT_OR_TUPLE,
            check=_int_list,
            variadic=True,
            doc="new order of the sample axes (1 = first); a leading 0 may name the batch",
        ),
    ),
    infer=_permute_infer,
    doc="reorder the sample axes (Tensor.permute); the batch axis stays first",
    samples=(
        ({"dims": (2, 3, 1)}, ((3, 4, 5),)),
        ({"dims": (0, 2, 1)}, ((3, 4),)),
        ({"dims": (-1, 1, 2)}, ((2, 3, 4),)),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
    canonical=_permute_canonical,
)


def _transpose_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    a = _axis("transpose", ctx.args["dim0"], t.rank, "dim0")
    b = _axis("transpose", ctx.args["dim1"], t.rank, "dim1")
    shape = list(t.shape)
    shape[a], shape[b] = shape[b], shape[a]
    return TensorType(tuple(shape), t.dtype)


TRANSPOSE = make_spec(
    name="transpose",
    params=(
        Param("dim0", ArgKind.INT, doc="first axis, counting the batch axis"),
        Param("dim1", ArgKind.INT, doc="second axis, counting the batch axis"),
    ),
    infer=_transpose_infer,
    doc="swap two sample axes (Tensor.transpose); dims count the batch axis",
    samples=(({"dim0": 1, "dim1": 2}, ((3, 4),)), ({"dim0": -2, "dim1": -1}, ((2, 3, 5),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)


def _unsqueeze_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    axis = _axis("unsqueeze", ctx.args["dim"], t.rank + 1)  # a dim of the output
    return TensorType((*t.shape[:axis], 1, *t.shape[axis:]), t.dtype)


UNSQUEEZE = make_spec(
    name="unsqueeze",
    params=(Param("dim", ArgKind.INT, doc="position of the new size-1 axis in the output"),),
    infer=_unsqueeze_infer,
    doc="insert a size-1 axis (Tensor.unsqueeze); dim counts the batch axis of the output",
    samples=(({"dim": 1}, ((4,),)), ({"dim": -1}, ((3, 4),)), ({"dim": 2}, ((3, 4),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)


def _squeeze_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    axis = _dim_axis(ctx, "squeeze")
    if t.shape[axis] != 1:
        raise OpError(
            SQUEEZE_SIZE,
            f"squeeze dim={ctx.args['dim']} has size {t.shape[axis]}, not 1, "
            f"in {fmt_shape(t.shape)}",
            blame="dim",
            hint="squeeze removes a size-1 axis; pytorch would silently do nothing",
        )
    return _without(t, axis)


SQUEEZE = make_spec(
    name="squeeze",
    params=(Param("dim", ArgKind.INT, doc="the size-1 axis to remove, counting the batch axis"),),
    infer=_squeeze_infer,
    doc="remove one size-1 axis (Tensor.squeeze); refuses an axis whose size is not 1",
    samples=(({"dim": 1}, ((1, 4),)), ({"dim": -1}, ((3, 1),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)

# -- select, slice, expand ----------------------------------------------------------------------


def _select_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    axis = _dim_axis(ctx, "select")
    index, size = ctx.args["index"], t.shape[axis]
    if not -size <= index < size:
        raise OpError(
            INDEX_RANGE,
            f"select index={index} is out of range for dim={ctx.args['dim']} of size {size}",
            blame="index",
            hint=f"use an index from {-size} to {size - 1}",
        )
    return _without(t, axis)


SELECT = make_spec(
    name="select",
    params=(
        Param("dim", ArgKind.INT, doc="the axis to index, counting the batch axis"),
        Param("index", ArgKind.INT, doc="position on that axis (negative from the end)"),
    ),
    infer=_select_infer,
    doc="take one position of an axis and drop the axis (x[:, 0], the class token)",
    samples=(({"dim": 1, "index": 0}, ((5, 8),)), ({"dim": -1, "index": -1}, ((3, 4),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)


def _slice_range(ctx: InferContext) -> tuple[int, range]:
    t = ctx.input
    axis = _dim_axis(ctx, "slice")
    a = ctx.args
    picked = range(t.shape[axis])[slice(a["start"], a["end"], a["step"])]
    if len(picked) == 0:
        raise OpError(
            "T005",
            f"slice start={a['start']} end={a['end']} leaves nothing of dim={a['dim']} "
            f"(size {t.shape[axis]})",
            blame="start" if a["start"] is not None else "end",
            hint="pick a start before the end, within the axis",
        )
    return axis, picked


def _slice_infer(ctx: InferContext) -> TensorType:
    axis, picked = _slice_range(ctx)
    shape = list(ctx.input.shape)
    shape[axis] = len(picked)
    return TensorType(tuple(shape), ctx.input.dtype)


SLICE = make_spec(
    name="slice",
    params=(
        Param("dim", ArgKind.INT, doc="the axis to slice, counting the batch axis"),
        Param("start", ArgKind.OPTIONAL_INT, None, doc="first position (None: 0)"),
        Param("end", ArgKind.OPTIONAL_INT, None, doc="position after the last (None: the size)"),
        Param("step", ArgKind.INT, 1, POSITIVE, doc="stride"),
    ),
    infer=_slice_infer,
    doc="a range of one axis, as x[:, start:end:step] (Python slice rules)",
    samples=(
        ({"dim": 1, "start": 1}, ((5, 8),)),
        ({"dim": -1, "start": 0, "end": 4, "step": 2}, ((3, 7),)),
        ({"dim": 2, "end": -1}, ((2, 6, 3),)),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)


def _expand_sizes(value: Any) -> str | None:
    items = int_items(value)
    if not items or not all(map(is_int, items)):
        return "must be one or more ints"
    if any(i < 1 and i != -1 for i in items):
        return "must have sizes that are positive or -1"
    return None


def _expand_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    sizes = int_items(ctx.args["sizes"])
    if len(sizes) != t.rank:
        raise OpError(
            "T002",
            f"expand got {len(sizes)} sizes for a sample of rank {t.rank} {fmt_shape(t.shape)}",
            blame="sizes",
            hint="give one size per sample axis (-1 keeps it); unsqueeze to add an axis",
        )
    out = []
    for axis, (old, new) in enumerate(zip(t.shape, sizes, strict=True)):
        if new != -1 and new != old and old != 1:
            raise OpError(
                "T060",
                f"expand cannot stretch dim={axis + 1} of size {old} to {new} "
                f"in {fmt_shape(t.shape)}",
                blame="sizes",
                hint="only size-1 axes expand; write -1 to keep an axis",
            )
        out.append(old if new == -1 else new)
    return TensorType(tuple(out), t.dtype)


EXPAND = make_spec(
    name="expand",
    params=(
        Param(
            "sizes",
            ArgKind.INT_OR_TUPLE,
            check=_expand_sizes,
            variadic=True,
            doc="new size of each sample axis; -1 keeps it, only size-1 axes grow",
        ),
    ),
    infer=_expand_infer,
    doc="stretch size-1 sample axes without copying (Tensor.expand); -1 keeps an axis",
    samples=(({"sizes": (4, -1)}, ((1, 8),)), ({"sizes": (-1, 3, 5)}, ((2, 1, 5),))),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)

# -- split and chunk ---------------------------------------------------------------------------


MAX_PIECES = 65536  # split/chunk pieces a program may ask for (each is a tensor at run time)


def piece_sizes(ctx: InferContext) -> tuple[int, tuple[int, ...]]:
    """(axis index, size of each piece) of a split or chunk node."""
    t, a = ctx.input, ctx.args
    op = "split" if "size" in a.values else "chunk"
    axis = _dim_axis(ctx, op)
    length = t.shape[axis]
    if op == "split":
        size = a["size"]
        if is_int(size):
            if size >= 1 and -(-length // size) > MAX_PIECES:  # never build a huge tuple
                raise OpError(
                    "T007",
                    f"split({size}) of dim={a['dim']} with size {length} gives "
                    f"{-(-length // size)} pieces, more than {MAX_PIECES}",
                    blame="size",
                    hint="split into fewer, larger pieces",
                )
            sizes = tuple(min(size, length - s) for s in range(0, length, size))
        else:
            sizes = tuple(size)
            if sum(sizes) != length:
                raise OpError(
                    "T006",
                    f"split sizes {fmt_shape(sizes)} add up to {sum(sizes)}, but dim={a['dim']} "
                    f"has size {length}",
                    blame="size",
                    hint=f"pick sizes whose sum is {length}",
                )
    else:
        chunks = a["chunks"]
        if chunks > MAX_PIECES:
            raise OpError(
                "T007",
                f"chunk({chunks}) asks for more than {MAX_PIECES} pieces",
                blame="chunks",
                hint="chunk into fewer pieces",
            )
        step = -(-length // chunks)  # integer ceil: exact for any int64 size
        sizes = tuple(min(step, length - s) for s in range(0, length, step))
        if len(sizes) != chunks:
            raise OpError(
                "T007",
                f"chunk({chunks}) of dim={a['dim']} with size {length} gives {len(sizes)} "
                f"pieces, not {chunks}",
                blame="chunks",
                hint="pytorch returns fewer chunks here; pick a count that fits the axis",
            )
    return axis, sizes


def _piece_infer(ctx: InferContext) -> TensorType:
    axis, sizes = piece_sizes(ctx)
    op = "split" if "size" in ctx.args.values else "chunk"
    index = ctx.args["index"]
    if index is None:
        raise OpError(
            UNBOUND_PIECES,
            f"{op} gives {len(sizes)} pieces; bind each to a name",
            hint=f"write {', '.join('abcdefgh'[: min(len(sizes), 8)])}{', ...' if len(sizes) > 8 else ''}"
            f" = {op}(...), or pick one piece with index=...",
        )
    if not -len(sizes) <= index < len(sizes):
        raise OpError(
            INDEX_RANGE,
            f"{op} index={index} is out of range for {len(sizes)} pieces",
            blame="index",
            hint=f"use an index from 0 to {len(sizes) - 1}",
        )
    shape = list(ctx.input.shape)
    shape[axis] = sizes[index]
    return TensorType(tuple(shape), ctx.input.dtype)


def _split_size(value: Any) -> str | None:
    if is_int(value):
        return None if value >= 1 else "must be positive"
    if isinstance(value, tuple | list) and value and all(map(is_int, value)):
        return None if all(v >= 1 for v in value) else "must have positive sizes"
    return "must be an int or a tuple of ints"


_INDEX = Param(
    "index",
    ArgKind.OPTIONAL_INT,
    None,
    keyword_only=True,
    doc="the piece this node is (set by `a, b = ...`; write it to pick one piece)",
)

SPLIT = make_spec(
    name="split",
    params=(
        Param(
            "size", ArgKind.INT_OR_TUPLE, check=_split_size, doc="piece size, or each piece's size"
        ),
        Param("dim", ArgKind.INT, -1, doc="the axis to split, counting the batch axis"),
        _INDEX,
    ),
    infer=_piece_infer,
    doc="cut an axis into pieces of a size (torch.split), bound as `q, k, v = split(...)`",
    samples=(
        ({"size": 4, "index": 0}, ((3, 12),)),
        ({"size": 5, "dim": 1, "index": 2}, ((12, 2),)),
        ({"size": (2, 6), "dim": -1, "index": 1}, ((3, 8),)),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)

CHUNK = make_spec(
    name="chunk",
    params=(
        Param("chunks", ArgKind.INT, check=POSITIVE, doc="number of pieces"),
        Param("dim", ArgKind.INT, -1, doc="the axis to cut, counting the batch axis"),
        _INDEX,
    ),
    infer=_piece_infer,
    doc="cut an axis into n nearly equal pieces (torch.chunk), bound as `a, b = chunk(...)`",
    samples=(
        ({"chunks": 2, "index": 1}, ((3, 8),)),
        ({"chunks": 3, "dim": 1, "index": 2}, ((7, 4),)),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, RESHAPING},
)


SPECS: tuple[OpSpec, ...] = (
    PERMUTE,
    TRANSPOSE,
    UNSQUEEZE,
    SQUEEZE,
    SELECT,
    SLICE,
    EXPAND,
    SPLIT,
    CHUNK,
)
