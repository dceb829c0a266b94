"""Arithmetic and reductions as catalog operations: ``x + y`` (a number operand becomes
the operation's ``constant``), ``-x``, ``a @ b``, ``x.mean(dim)`` (a mean over every
spatial axis is ``global_avg_pool``). Registered in ``functions.HANDLERS``.
"""

from __future__ import annotations

from typing import Any

from torch import fx

from aurane.lift.functions_common import _arg, _axis, _meta_of, _out, _rank, _tensor, _value
from aurane.lift.layers import Unexpressible
from aurane.lift.lowering import Handler, Lowering
from aurane.lift.refs import BatchTransposed, ConstRef, Py, TensorRef, function_label

# -- arithmetic --------------------------------------------------------------------------------


def _number(ref: Any) -> float | int | None:
    if isinstance(ref, bool):
        return None
    if isinstance(ref, int | float):
        return ref
    if isinstance(ref, Py) and ref.first == ref.second and isinstance(ref.first, int | float):
        return None if isinstance(ref.first, bool) else ref.first
    if isinstance(ref, ConstRef) and ref.tensor.numel() == 1:
        return ref.tensor.item()  # type: ignore[no-any-return]
    return None


def _constant(lw: Lowering, x: TensorRef, value: float | int) -> float | int:
    """A number operand as the catalog takes it: a float, except a whole number with an
    integer tensor, which stays whole so that the result stays integer (``positions - 1``)."""
    integer = not lw.dtype_of(x).startswith(("float", "bfloat"))
    return value if integer and isinstance(value, int) else float(value)


def _align(lw: Lowering, a: TensorRef, b: TensorRef) -> tuple[TensorRef, TensorRef]:
    """Unsqueeze the value of lower rank (per sample) until the ranks agree, as torch's
    right-aligned broadcasting would."""
    while _rank(lw, a) < _rank(lw, b):
        shape = lw.shape_of(a)
        a = lw.emit(
            "unsqueeze", (a.id,), {"dim": 1}, _meta_of(lw, a, (1, *shape)), origin="broadcast"
        )
    while _rank(lw, b) < _rank(lw, a):
        shape = lw.shape_of(b)
        b = lw.emit(
            "unsqueeze", (b.id,), {"dim": 1}, _meta_of(lw, b, (1, *shape)), origin="broadcast"
        )
    return a, b


_TENSOR_OPS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide"}


def _binary(kind: str) -> Handler:
    def handle(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        a, b = _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "other")
        alpha = kwargs.get("alpha")
        if alpha is not None and _number(alpha) != 1:
            raise Unexpressible(what, "alpha is not 1")
        out = _out(lw, node)
        rank = len(out.shape)
        na, nb = _number(a), _number(b)
        if na is None and nb is None:
            ta = _tensor(lw, a, what, rank)
            tb = _tensor(lw, b, what, rank)
            ta, tb = _align(lw, ta, tb)
            args_: dict[str, Any] = {}
            if kind == "add" and lw.shape_of(ta) != lw.shape_of(tb):
                args_["broadcast"] = True
            return lw.emit(_TENSOR_OPS[kind], (ta.id, tb.id), args_, out, origin=what)
        if na is not None and nb is not None:
            return Py(_value(Py(lw.meta(node)[0], lw.meta(node)[1]), what), None)
        if nb is not None:  # tensor (op) number
            x = _tensor(lw, a, what, rank)
            c = _constant(lw, x, nb)
            if kind == "add":
                return lw.emit("subtract", (x.id,), {"constant": -c}, out, origin=what)
            return lw.emit(_TENSOR_OPS[kind], (x.id,), {"constant": c}, out, origin=what)
        x = _tensor(lw, b, what, rank)  # number (op) tensor
        c = _constant(lw, x, na)  # type: ignore[arg-type]
        if kind == "add":
            return lw.emit("subtract", (x.id,), {"constant": -c}, out, origin=what)
        if kind == "mul":
            return lw.emit("multiply", (x.id,), {"constant": c}, out, origin=what)
        if kind == "sub":  # c - x = (x * -1) - (-c)
            minus = _constant(lw, x, -1)
            negated = lw.emit("multiply", (x.id,), {"constant": minus}, out, origin=what)
            return lw.emit("subtract", (negated.id,), {"constant": -c}, out, origin=what)
        raise Unexpressible(what, "a number divided by a tensor has no catalog operation")

    return handle


def _neg(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    x = _tensor(lw, args[0], function_label(node))
    return lw.emit("multiply", (x.id,), {"constant": -1.0}, _out(lw, node), origin="neg")


def _matmul(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    out = _out(lw, node)
    if isinstance(args[1], BatchTransposed):  # a @ b.T over the batch: every pair of samples
        a = _tensor(lw, args[0], what)
        b = args[1].of
        if _rank(lw, a) != 2 or lw.shape_of(a) != lw.shape_of(b):
            raise Unexpressible(what, "only (batch, features) @ (batch, features).T")
        return lw.emit("cross_batch_matmul", (a.id, b.id), {}, out, origin=what)
    a = _tensor(lw, args[0], what, len(out.shape))
    b = _tensor(lw, args[1], what, len(out.shape))
    if _rank(lw, a) != _rank(lw, b):
        raise Unexpressible(what, "the two operands have different ranks")
    return lw.emit("matmul", (a.id, b.id), {}, out, origin=what)


def _einsum(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``torch.einsum`` of two operands that is a batched matrix product: ``...ij,...jk->...ik``
    (``matmul``) or ``...id,...jd->...ij`` (``matmul`` with the second transposed), the
    leading letters shared in order (MaxViT's attention scores and output)."""
    what = function_label(node)
    equation = _value(args[0], what)
    operands = list(args[1]) if len(args) == 2 and isinstance(args[1], list | tuple) else args[1:]
    if not isinstance(equation, str) or len(operands) != 2 or "->" not in equation:
        raise Unexpressible(what, "only an einsum of two operands with an explicit output")
    inputs, output = equation.replace(" ", "").split("->")
    left, right = inputs.split(",")
    if "." in equation or not len(left) == len(right) == len(output) >= 3:
        raise Unexpressible(what, "only an einsum of equal ranks (a batched matrix product)")
    lead = left[:-2]
    if right[:-2] != lead or output[:-2] != lead:
        raise Unexpressible(what, "its leading axes differ (not a batched matrix product)")
    i, j, p, q, o1, o2 = left[-2], left[-1], right[-2], right[-1], output[-2], output[-1]
    out = _out(lw, node)
    a = _tensor(lw, operands[0], what)
    b = _tensor(lw, operands[1], what)
    if (o1, o2) == (i, q) and j == p:  # ...ij,...jk->...ik
        return lw.emit("matmul", (a.id, b.id), {}, out, origin=what)
    if (o1, o2) == (i, p) and j == q:  # ...id,...jd->...ij
        shape = lw.shape_of(b)
        swapped = (*shape[:-2], shape[-1], shape[-2])
        bt = lw.emit(
            "transpose", (b.id,), {"dim0": -2, "dim1": -1}, _meta_of(lw, b, swapped), origin=what
        )
        return lw.emit("matmul", (a.id, bt.id), {}, out, origin=what)
    raise Unexpressible(what, "its contraction is not a matrix product of the last two axes")


def _attribute(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``getattr(x, name)`` that torch.fx records for a tensor property: ``x.T``."""
    name = _value(args[1], function_label(node)) if len(args) > 1 else None
    if name == "T":
        return _numpy_t(lw, node, args[:1], {})
    raise Unexpressible(f"Tensor.{name}", "no catalog operation computes it")


def _numpy_t(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``x.T`` of a ``(batch, features)`` value, for a ``matmul`` to read (``BatchTransposed``);
    of more axes it reverses every axis, the batch one too."""
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    if _rank(lw, x) != 2:
        raise Unexpressible(what, "it reverses every axis, the batch axis too")
    return BatchTransposed(x)


# -- reductions -------------------------------------------------------------------------------


def _reduce(op: str, pool: str | None) -> Handler:
    def handle(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        x = _tensor(lw, args[0], what)
        dim = _value(_arg(args, kwargs, 1, "dim"), what)
        keepdim = bool(_value(_arg(args, kwargs, 2, "keepdim", False), what))
        out = _out(lw, node)
        rank = _rank(lw, x)
        if dim is None:
            raise Unexpressible(what, "it reduces over the batch axis too")
        dims = sorted(
            {_axis(d, rank, what) for d in (dim if isinstance(dim, tuple | list) else [dim])}
        )
        if pool is not None and not keepdim and rank >= 3 and dims == list(range(2, rank)):
            return lw.emit(pool, (x.id,), {}, out, origin=what)
        # one axis as a number, as a person writes it (export gives sum(x, [1]))
        one = isinstance(dim, tuple | list) and len(dim) == 1
        given = dim[0] if one else tuple(dim) if isinstance(dim, list) else dim
        args_: dict[str, Any] = {"dim": given}
        if keepdim:
            args_["keepdim"] = True
        return lw.emit(op, (x.id,), args_, out, origin=what)

    return handle
