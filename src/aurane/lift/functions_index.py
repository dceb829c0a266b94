"""Functions that pick, shift and accumulate along an axis, as the catalog's operations of
issue 23 (``aurane.ops.index``): ``torch.gather``, ``take_along_dim``, ``index_select``,
a table indexed by a tensor (``table[index]``: ``lookup``), ``torch.roll``,
``torch.cumsum``, ``torch.where``, ``masked_fill``, ``torch.exp``, ``torch.log`` and the comparisons that make masks
(``h > 0``). The
index and mask tensors are values of the program: computed from the input, or a persistent
buffer (``buffer(..., init="relative_position_index")``); a constant tensor computed
in the forward has no literal and stays a gap. Registered in ``functions.HANDLERS``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx

from aurane.lift.functions_common import _arg, _axis, _out, _rank, _tensor, _unary, _value
from aurane.lift.layers import Unexpressible
from aurane.lift.lowering import Handler, Lowering
from aurane.lift.refs import ConstRef, Py, function_label
from aurane.lift.values import dtype_name
from aurane.ops.index import fill_argument


def _along(op: str, dim_at: int, index_at: int) -> Handler:
    """``gather(x, dim, index)``, ``index_select(x, dim, index)`` and
    ``take_along_dim(x, index, dim)``: the index is a tensor argument, ``dim`` no batch axis."""

    def handler(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        x = _tensor(lw, args[0], what)
        dim = _value(_arg(args, kwargs, dim_at, "dim"), what)
        if dim is None:
            raise Unexpressible(what, "it picks from the flattened tensor (no dim)")
        index_ref = _arg(args, kwargs, index_at, "index" if op != "take_along_dim" else "indices")
        index = _tensor(lw, index_ref, what)
        if lw.dtype_of(index) not in ("int64", "int32"):
            raise Unexpressible(what, f"its index is {lw.dtype_of(index)}, not integers")
        _axis(dim, _rank(lw, x), what)
        return lw.emit(op, (x.id, index.id), {"dim": dim}, _out(lw, node), origin=what)

    return handler


def _roll(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    shifts = _value(_arg(args, kwargs, 1, "shifts"), what)
    dims = _value(_arg(args, kwargs, 2, "dims"), what)
    if dims is None:
        dims = ()
    rank = _rank(lw, x)
    for dim in dims if isinstance(dims, list | tuple) else (dims,):
        _axis(dim, rank, what)
    shifts_ = tuple(shifts) if isinstance(shifts, list | tuple) else shifts
    dims_ = tuple(dims) if isinstance(dims, list | tuple) else dims
    args_ = {"shifts": shifts_, "dims": dims_}
    return lw.emit("roll", (x.id,), args_, _out(lw, node), origin=what)


def _cumsum(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    dim = _value(_arg(args, kwargs, 1, "dim"), what)
    _axis(dim, _rank(lw, x), what)
    out = _out(lw, node)
    dtype = kwargs.get("dtype")
    if isinstance(dtype, Py) and dtype.first is not None:
        raise Unexpressible(what, "it accumulates in another dtype (dtype=)")
    return lw.emit("cumsum", (x.id,), {"dim": dim}, out, origin=what)


def _where(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    if len(args) < 3:
        raise Unexpressible(what, "torch.where(condition) gives indices (data-dependent)")
    condition = _tensor(lw, args[0], what)
    a, b = args[1], args[2]
    if _number(a) is not None:
        raise Unexpressible(what, "its value where true is a number (the catalog takes a tensor)")
    x = _tensor(lw, a, what)
    out = _out(lw, node)
    other = _number(b)
    if other is not None:
        return lw.emit("where", (condition.id, x.id), {"other": other}, out, origin=what)
    y = _tensor(lw, b, what)
    return lw.emit("where", (condition.id, x.id, y.id), {}, out, origin=what)


def _masked_fill(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    mask_ref = _arg(args, kwargs, 1, "mask")
    if isinstance(mask_ref, ConstRef) and mask_ref.buffer is None:
        raise Unexpressible(
            what,
            "its mask is a constant computed in the forward (no tensor literal; a causal "
            "mask into attention is recognised as causal=true)",
        )
    mask = _tensor(lw, mask_ref, what)
    value = _number(_arg(args, kwargs, 2, "value"))
    if value is None:
        raise Unexpressible(what, "its fill value is not a number")
    args_ = {"value": fill_argument(value)}
    return lw.emit("masked_fill", (x.id, mask.id), args_, _out(lw, node), origin=what)


def _number(ref: Any) -> float | None:
    """A plain number argument (as given, or observed), else None."""
    value = ref.first if isinstance(ref, Py) else ref
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


_FLIPPED = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge", "eq": "eq", "ne": "ne"}


def _compare(op: str) -> Handler:
    """``a > b`` of two tensors, or of a tensor and a number (either side)."""

    def handler(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        a, b = args[0], args[1]
        out = _out(lw, node)
        name = op
        if _number(a) is not None:  # 0 < h is h > 0
            a, b, name = b, a, _FLIPPED[op]
        x = _tensor(lw, a, what)
        number = _number(b)
        if number is not None:
            return lw.emit(name, (x.id,), {"constant": number}, out, origin=what)
        y = _tensor(lw, b, what)
        return lw.emit(name, (x.id, y.id), {}, out, origin=what)

    return handler


def _logical(op: str, bitwise: bool) -> Handler:
    """``a & b`` (``and_``, ``bitwise_and``) of two boolean masks, or ``torch.logical_and``
    of any two tensors: the catalog's ``logical_and`` / ``logical_or``."""

    def handler(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        a = _tensor(lw, args[0], what)
        b = _tensor(lw, args[1], what)
        if bitwise and not lw.dtype_of(a) == lw.dtype_of(b) == "bool":
            raise Unexpressible(what, "a bitwise operation of integers has no catalog operation")
        return lw.emit(op, (a.id, b.id), {}, _out(lw, node), origin=what)

    return handler


def _inverted(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``~mask`` of a boolean mask: ``logical_not`` (of integers it is ``-x - 1``)."""
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    if lw.dtype_of(x) != "bool":
        raise Unexpressible(what, "a bitwise not of integers has no catalog operation")
    return lw.emit("logical_not", (x.id,), {}, _out(lw, node), origin=what)


def _like(op: str, filled: bool = False) -> Handler:
    """``torch.ones_like(x)``, ``zeros_like``, ``full_like(x, value)``: the catalog's
    operation of that name, ``dtype=`` written where the call gives one."""

    def handler(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        x = _tensor(lw, args[0], what)
        given: dict[str, Any] = {}
        if filled:
            value = _value(_arg(args, kwargs, 1, "fill_value"), what)
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise Unexpressible(what, "its fill value is not a number")
            given["value"] = fill_argument(value)
        dtype = kwargs.get("dtype")
        dtype = dtype.first if isinstance(dtype, Py) else dtype
        if isinstance(dtype, torch.dtype):
            given["dtype"] = dtype_name(dtype)
        return lw.emit(op, (x.id,), given, _out(lw, node), origin=what)

    return handler


def _rows(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``gather_rows(table, index)``, the helper a generated file writes for ``lookup``."""
    what = function_label(node)
    table = _tensor(lw, _arg(args, kwargs, 0, "table"), what)
    index = _tensor(lw, _arg(args, kwargs, 1, "index"), what)
    if lw.dtype_of(index) not in ("int64", "int32"):
        raise Unexpressible(what, f"its index is {lw.dtype_of(index)}, not integers")
    return lw.emit("lookup", (table.id, index.id), {}, _out(lw, node), origin=what)


INDEX_HANDLERS: dict[str, Handler] = {
    **{op: _compare(op) for op in _FLIPPED},
    "logical_not": _unary("logical_not"),
    **{name: _inverted for name in ("bitwise_not", "invert")},
    "gather": _along("gather", 1, 2),
    "index_select": _along("index_select", 1, 2),
    "take_along_dim": _along("take_along_dim", 2, 1),
    "roll": _roll,
    "gather_rows": _rows,
    "cumsum": _cumsum,
    **{op: _unary(op) for op in ("exp", "log", "cos", "sin", "abs")},
    "and_": _logical("logical_and", bitwise=True),
    "bitwise_and": _logical("logical_and", bitwise=True),
    "logical_and": _logical("logical_and", bitwise=False),
    "or_": _logical("logical_or", bitwise=True),
    "bitwise_or": _logical("logical_or", bitwise=True),
    "logical_or": _logical("logical_or", bitwise=False),
    "ones_like": _like("ones_like"),
    "zeros_like": _like("zeros_like"),
    "full_like": _like("full_like", filled=True),
    "where": _where,
    "masked_fill": _masked_fill,
    "masked_fill_": _masked_fill,
}

__all__ = ["INDEX_HANDLERS"]
