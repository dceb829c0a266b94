"""Rules shared by catalog entries: argument checks, kind sets, shape and dtype helpers.

Every catalog module builds its specs from these helpers so that one rule (a sliding
window size, an axis that counts the batch, a dtype requirement) is written once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from aurane.ops.spec import InferContext, OpError, OpSpec, TensorType

# kind sets: rules that apply to a whole family of operations key on these
ACTIVATION = "activation"
ELEMENTWISE = "elementwise"
PARAMETER_FREE = "parameter_free"
SHAPE_PRESERVING = "shape_preserving"
PARAMETRIC = "parametric"
NORMALIZATION = "normalization"
POOLING = "pooling"
RESHAPING = "reshaping"
MERGE = "merge"
RECURRENT = "recurrent"
ATTENTION = "attention"
STOCHASTIC = "stochastic"
COMPOSITION = "composition"
# operation families (``OpSpec.family``): convolutions are the layers with a weight and an
# optional bias over 1-3 spatial axes (conv1d ... conv_transpose3d)
CONVOLUTION = "convolution"

FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
INT_DTYPES = frozenset({"uint8", "int8", "int16", "int32", "int64"})

Check = Callable[[Any], "str | None"]
Samples = tuple[tuple[dict[str, Any], tuple[tuple[int, ...], ...]], ...]


# -- argument checks (return a lowercase message or None) --------------------------------


def is_int(value: Any) -> bool:
    """An int that is not a bool (``true`` is no count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ints(value: Any, lengths: tuple[int, ...]) -> tuple[int, ...] | None:
    """``value`` as a tuple of ints when it is an int or a tuple of an allowed length."""
    if is_int(value):
        return (value,)
    if isinstance(value, tuple | list) and len(value) in lengths and all(map(is_int, value)):
        return tuple(value)
    return None


def ints_at_least(low: int, *, lengths: tuple[int, ...] = (1,)) -> Check:
    """An int (or, with ``lengths``, a tuple of that many ints), each ``>= low``."""
    shape = "an int" if lengths == (1,) else "an int or a pair of ints"

    def check(value: Any) -> str | None:
        items = _ints(value, lengths)
        if items is None:
            return f"must be {shape}"
        if any(item < low for item in items):
            return "must be positive" if low == 1 else f"must be at least {low}"
        return None

    return check


POSITIVE = ints_at_least(1)
POSITIVE_OR_PAIR = ints_at_least(1, lengths=(1, 2))
NON_NEGATIVE_OR_PAIR = ints_at_least(0, lengths=(1, 2))


def optional(check: Check) -> Check:
    def wrapped(value: Any) -> str | None:
        return None if value is None else check(value)

    return wrapped


def probability(value: Any) -> str | None:
    """Probabilities and rates such as dropout or label smoothing: ``0 <= p < 1``."""
    if not is_number(value) or not 0 <= value < 1:
        return "must be in [0, 1)"
    return None


def positive_number(value: Any) -> str | None:
    if not is_number(value) or value <= 0:
        return "must be positive"
    return None


def unit_interval(value: Any) -> str | None:
    if not is_number(value) or not 0 <= value <= 1:
        return "must be in [0, 1]"
    return None


def padding_check(lengths: tuple[int, ...]) -> Check:
    """Convolution padding: non-negative int(s), or "same" / "valid"."""
    ints = ints_at_least(0, lengths=lengths)

    def check(value: Any) -> str | None:
        if isinstance(value, str):
            return None if value in ("same", "valid") else 'must be an int, "same" or "valid"'
        return ints(value)

    return check


# -- shapes -------------------------------------------------------------------------------


def fmt_shape(shape: Sequence[int | str] | None) -> str:
    """Python tuple notation, as users write input_shape: (8,), (3, 32, 32); ? when unknown.

    The one shape formatter: diagnostics, IR text, profile tables, diagrams and the shape
    comments of generated code all print shapes through it.
    """
    if shape is None:
        return "?"
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def merged_size(sizes: Sequence[Any]) -> Any:
    """The one of equal ``sizes`` an elementwise merge's result keeps (``add(x, h)``): the
    first, unless a later one reads fewer of a block's input sizes. Inside a block the
    sizes are symbolic numbers whose ``input_reads`` counts those reads
    (``semantics.symbolic``); a residual's output is then the width the block's parameters
    give (``out``), not its input's (``in_channels``), which equals it only at the calls
    that skip a shortcut, so a block whose calls take different branches states one output
    width and its callers stay one class (issue 24 item 3)."""
    best = sizes[0]
    reads = getattr(best, "input_reads", None)
    if reads is None:  # a plain number: kept, as before sizes were symbolic
        return best
    for other in sizes[1:]:
        count = getattr(other, "input_reads", None)
        if count is not None and count < reads:
            best, reads = other, count
    return best


@runtime_checkable
class SymbolicSize(Protocol):
    """A size that is an expression of the block's arguments (``semantics.symbolic``'s
    ``SymInt`` and ``SymFloat``, which this layer does not import): it writes the smallest
    of sizes as ``min(...)`` of their expressions."""

    @staticmethod
    def smallest(*sizes: Any) -> Any: ...


def smallest_size(*sizes: Any) -> Any:
    """The smallest of ``sizes``. The builtin ``min`` of symbolic sizes returns the one
    smallest at the call's values, its expression then wrong where another is smaller: a
    ``SymbolicSize`` hands the choice to its own ``smallest``."""
    for size in sizes:
        if isinstance(size, SymbolicSize):
            return size.smallest(*sizes)
    return min(sizes)


def same_everywhere(a: Any, b: Any) -> bool:
    """Whether two sizes are equal at any block arguments: equal plain numbers, or symbolic
    ones with one expression (``stride`` defaulting to ``kernel``)."""
    return bool(getattr(a, "tree", a) == getattr(b, "tree", b))


def is_symbolic_size(value: Any) -> bool:
    """Whether ``value`` is a symbolic number (``semantics.symbolic``): its value may
    differ at other block arguments."""
    return hasattr(value, "tree")


INT64_MAX = 2**63 - 1


def check_int64(op: str, out: TensorType, parameters: int) -> None:
    """T090 when a size, an element count or a parameter count is past torch's int64."""
    elements = numel(out.shape)
    if isinstance(elements, int) and elements > INT64_MAX:  # a symbolic count is unbounded
        raise OpError(
            "T090",
            f"{op} gives a sample of shape {fmt_shape(out.shape)}: {elements} elements, more "
            "than torch can index (2**63 - 1)",
            hint="check the sizes: torch stores every size as a 64-bit integer",
        )
    if parameters > INT64_MAX:
        raise OpError(
            "T090",
            f"{op} would hold {parameters} parameters, more than torch can index (2**63 - 1)",
            hint="check the sizes: torch stores every size as a 64-bit integer",
        )


def require_rank(op: str, t: TensorType, ranks: Sequence[int], what: str) -> None:
    """T002 unless the input rank is one of ``ranks``; ``what`` names the expected layout."""
    if t.rank not in ranks:
        raise OpError(
            "T002",
            f"{op} expects a {what} input, got shape {fmt_shape(t.shape)}",
            hint=f"{op} needs an input of rank {' or '.join(map(str, ranks))} (batch excluded)",
        )


def require_min_rank(op: str, t: TensorType, low: int, what: str) -> None:
    if t.rank < low:
        raise OpError(
            "T002",
            f"{op} expects a {what} input, got shape {fmt_shape(t.shape)}",
            hint=f"{op} needs at least {low} axes (batch excluded)",
        )


def spatial(op: str, name: str, value: Any, count: int) -> tuple[int, ...]:
    """An int or tuple argument as one value per spatial axis (T002 on a length mismatch)."""
    # an int is repeated; a tuple is taken as written, as torch does: _pair((3,)) is (3,),
    # so conv2d(kernel=(3,)) builds a 1-D kernel that a 2-D input refuses
    items = (value,) * count if is_int(value) else tuple(value)
    if len(items) != count:
        raise OpError(
            "T002",
            f"{op} got {len(items)} values for {name} but its input has {count} spatial "
            f"{'axis' if count == 1 else 'axes'}",
            blame=name,
            hint=f"pass one int or a tuple of {count}",
        )
    return items


def window_output(
    op: str,
    sizes: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> tuple[int, ...]:
    """PyTorch's sliding-window output size, floor mode, with T005 when nothing is left."""
    out: list[int] = []
    for size, k, s, p, d in zip(sizes, kernel, stride, padding, dilation, strict=True):
        reach = d * (k - 1) + 1
        if size + 2 * p < reach:
            padded = [n + 2 * q for n, q in zip(sizes, padding, strict=True)]
            dilated = (
                f" with dilation {fmt_shape(dilation)}" if any(x > 1 for x in dilation) else ""
            )
            raise OpError(
                "T005",
                f"{op} kernel {fmt_shape(kernel)}{dilated} is larger than its padded input "
                f"{fmt_shape(padded)}",
                blame="kernel",
                hint="use a smaller kernel or add padding",
            )
        out.append((size + 2 * p - reach) // s + 1)
    return tuple(out)


def sample_axis(op: str, dim: int, rank: int) -> int:
    """A ``dim`` argument counting the runtime batch axis, as an index into the sample shape."""
    full = rank + 1
    if dim == 0 or dim == -full:
        raise OpError(
            "T004",
            f"{op} dim={dim} is the batch axis; dims count the batch axis first",
            blame="dim",
            hint=f"use dim=1 for the first sample axis or dim=-1 for the last (rank {rank})",
        )
    if not -full < dim < full:
        raise OpError(
            "T004",
            f"{op} dim={dim} is out of range for a sample of rank {rank} "
            f"(with the batch axis, dims run from {-full} to {full - 1})",
            blame="dim",
            hint="use dim=1 for the first sample axis or dim=-1 for the last",
        )
    return dim - 1 if dim > 0 else rank + dim


# -- dtypes -------------------------------------------------------------------------------


_DTYPE_FAMILIES = {"float": FLOAT_DTYPES, "int": INT_DTYPES}


def check_input_dtypes(op: str, inputs: Sequence[TensorType], accepted: str) -> None:
    """T003 when a known input dtype is not of the ``accepted`` family ("float", "int", "any")."""
    family = _DTYPE_FAMILIES.get(accepted)
    if family is None:
        return
    for index, t in enumerate(inputs):
        if t.dtype is not None and t.dtype not in family:
            wanted = "a floating" if accepted == "float" else "an integer"
            hint = (
                "embedding takes integer token ids: set input_dtype = int64"
                if accepted == "int"
                else "floating layers need float16, bfloat16, float32 or float64 inputs"
            )
            raise OpError(
                "T003",
                f"{op} needs {wanted} input dtype, got {t.dtype}",
                blame=f"input{index}" if len(inputs) > 1 else None,
                hint=hint,
            )


def check_param_dtype(op: str, ctx: InferContext) -> None:
    """T003 when a floating input of a layer differs from its parameters' dtype (a cast
    with ``to`` or a constructor made another float precision): torch would refuse it."""
    for index, t in enumerate(ctx.inputs):
        if t.dtype in FLOAT_DTYPES and t.dtype != ctx.param_dtype:
            raise OpError(
                "T003",
                f"{op} has {ctx.param_dtype} parameters but a {t.dtype} input",
                blame=f"input{index}" if len(ctx.inputs) > 1 else None,
                hint=f'cast the input: to(x, "{ctx.param_dtype}")',
            )


def same_dtype(op: str, inputs: Sequence[TensorType]) -> str | None:
    """The common dtype of merge inputs (unknown ones are compatible), T003 when they differ."""
    known = {t.dtype for t in inputs if t.dtype is not None}
    if len(known) > 1:
        raise OpError(
            "T003",
            f"{op} inputs have different dtypes: {', '.join(str(t.dtype) for t in inputs)}",
            hint="merged tensors need one dtype; Aurane never casts silently",
            input_notes=tuple((i, str(t.dtype)) for i, t in enumerate(inputs)),
        )
    return known.pop() if known else None


# -- spec construction --------------------------------------------------------------------


def make_spec(**fields: Any) -> OpSpec:
    """An OpSpec whose infer first enforces ``input_dtypes`` (default "float") on every input."""
    infer: Callable[[InferContext], TensorType] = fields["infer"]
    accepted: str = fields.setdefault("input_dtypes", "float")
    name: str = fields["name"]

    parametric = PARAMETRIC in fields.get("kinds", ())

    def checked(ctx: InferContext) -> TensorType:
        check_input_dtypes(name, ctx.inputs, accepted)
        if parametric and accepted == "float":
            check_param_dtype(name, ctx)
        return infer(ctx)

    fields["infer"] = checked
    fields["kinds"] = frozenset(fields.get("kinds", ()))
    return OpSpec(**fields)


def same_type(ctx: InferContext) -> TensorType:
    return ctx.input


def per_element(cost: int) -> Callable[[InferContext, TensorType], int]:
    """An ``other_flops`` rule: ``cost`` operations per output element (an estimate)."""

    def count(ctx: InferContext, out: TensorType) -> int:
        return cost * out.numel

    return count


# -- dtype promotion (PyTorch's rules for tensors of different kinds) -----------------------

_INT_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


def _kind(dtype: str) -> int:
    """0 for bool, 1 for integers, 2 for floats (torch promotes up this order)."""
    return 0 if dtype == "bool" else 2 if dtype in FLOAT_DTYPES else 1


def _promote_ints(a: str, b: str) -> str:
    """torch.promote_types of two integer dtypes: uint8 with int8 is int16, else the wider
    (a signed type when one of them is uint8)."""
    if {a, b} == {"uint8", "int8"}:
        return "int16"
    if "uint8" in (a, b):
        return b if a == "uint8" else a
    return a if _INT_BITS[a] >= _INT_BITS[b] else b


def promote(op: str, inputs: Sequence[TensorType]) -> str | None:
    """The result dtype of combining tensors as torch does: bool < integers < floats, the
    wider integer, the float of an integer and a float (``int64 * float32`` is float32).
    Two different floating dtypes stay an error (T003): Aurane never casts between float
    precisions silently. Unknown dtypes are compatible with any (as in ``same_dtype``)."""
    dtypes = [t.dtype for t in inputs if t.dtype is not None]
    if not dtypes:
        return None
    floats = {d for d in dtypes if d in FLOAT_DTYPES}
    if len(floats) > 1:
        raise OpError(
            "T003",
            f"{op} inputs have different floating dtypes: {', '.join(dtypes)}",
            hint="cast one of them with to(x, dtype=...): Aurane never changes a float "
            "precision silently",
            input_notes=tuple((i, d) for i, d in enumerate(dtypes)),
        )
    if floats:
        return floats.pop()
    result = dtypes[0]
    for dtype in dtypes[1:]:
        if _kind(dtype) > _kind(result):
            result = dtype
        elif _kind(dtype) == _kind(result) == 1:
            result = _promote_ints(result, dtype)
    return result
