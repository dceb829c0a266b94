"""What every function handler reads: arguments by position or name, the result's
``Meta``, a tensor operand (a parameter read directly becomes a ``parameter(...)``
operation) and axes checked against the batch axis.

The handlers (``functions_math``, ``functions_tensor``, ``functions_layers``) import this
module; ``functions`` joins their tables.
"""

from __future__ import annotations

from typing import Any

from torch import fx

from aurane.lift.layers import Unexpressible
from aurane.lift.lowering import Handler, Lowering
from aurane.lift.refs import UNKNOWN, ConstRef, ParamRef, Stop, TensorRef, function_label, static
from aurane.lift.values import Meta


def _arg(
    args: list[Any], kwargs: dict[str, Any], index: int, name: str, default: Any = None
) -> Any:
    if index < len(args):
        return args[index]
    return kwargs.get(name, default)


def _value(ref: Any, what: str) -> Any:
    return static(ref, what)


def _out(lw: Lowering, node: fx.Node) -> Meta:
    first, _ = lw.meta(node)
    if not isinstance(first, Meta):
        raise Unexpressible(function_label(node), "its result is not a single tensor")
    return first


def _tensor(lw: Lowering, ref: Any, what: str, batched_rank: int | None = None) -> TensorRef:
    if isinstance(ref, TensorRef):
        if ref.id.startswith(UNKNOWN):
            raise Stop  # downstream of a gap already reported
        return ref
    if isinstance(ref, ParamRef):
        return lw.parameter(ref, batched_rank)
    if isinstance(ref, ConstRef) and ref.buffer is not None:
        return lw.buffer(ref)
    if isinstance(ref, ConstRef):
        return lw.constant(ref, what)
    raise Unexpressible(what, "it takes a value that is not a tensor computed from the input")


def _rank(lw: Lowering, ref: TensorRef) -> int:
    return len(lw.shape_of(ref)) + 1


def _axis(dim: int, rank: int, what: str) -> int:
    """``dim`` as a non-negative axis of a batched value of ``rank``; the batch axis refused."""
    axis = dim % rank
    if axis == 0:
        raise Unexpressible(what, "it works along the batch axis")
    return axis


def _meta_of(lw: Lowering, ref: TensorRef, shape: tuple[int, ...]) -> Meta:
    return Meta((2, *shape), lw.dtype_of(ref))


def _unary(op: str) -> Handler:
    """A function of one tensor and no arguments as the catalog's ``op`` (``torch.exp``,
    ``F.relu``, ``~mask``)."""

    def handler(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        x = _tensor(lw, args[0], what)
        return lw.emit(op, (x.id,), {}, _out(lw, node), origin=what)

    return handler
