"""What a traced node stands for while it is lowered, and the names its calls go by.

The lowerer (``aurane.lift.lower``) keeps one reference per node: a tensor value of the
lifted graph (``TensorRef``), a Python value observed in both runs (``Py``), a parameter or
buffer read directly (``ParamRef``), a constant tensor (``ConstRef``) or several of these
(``Pieces``). The handlers of functions, patterns and outputs read the same references, so
they live here, below all of them, with ``call_name`` (the normalised name a handler is
registered under) and ``static``/``size`` (a Python argument as a catalog number).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx

from aurane.lift.layers import Unexpressible
from aurane.lift.values import FIRST, SECOND
from aurane.records import record

# -- references: what a traced node stands for -------------------------------------------------


@record(frozen=True)
class TensorRef:
    id: str  # a value of the lifted graph


@record(frozen=True)
class Py:
    """A Python value as observed at batch FIRST and SECOND."""

    first: Any
    second: Any


@record(frozen=True)
class ParamRef:
    path: str  # attribute path from the root (``encoder.pos_embedding``)
    tensor: torch.Tensor


@record(frozen=True)
class ConstRef:
    tensor: torch.Tensor  # the value at batch FIRST
    meta: Any  # the Meta at batch SECOND (its batch axis, if any)
    buffer: str | None = None  # a registered buffer read directly: its path
    persistent: bool = True  # (a buffer's) whether the state dict holds it
    node: fx.Node | None = None  # the node computing it (rebuilt as operations where needed)


@record(frozen=True)
class BatchTransposed:
    """``x.T`` of a ``(batch, features)`` value: the batch axis moved last, which only
    ``a @ x.T`` reads (the catalog's ``cross_batch_matmul``: CLIP's logits)."""

    of: TensorRef


@record(frozen=True)
class Pieces:
    items: tuple[Any, ...]


Ref = TensorRef | Py | ParamRef | ConstRef | Pieces

BIG = 1 << 62  # slice ends at least this large mean "to the end"


class Batch:
    """Marker: a size that is the batch size in both runs."""

    def __repr__(self) -> str:
        return "batch"


BATCH = Batch()


def _aliases() -> dict[str, str]:
    table = {
        "iadd": "add",
        "isub": "sub",
        "imul": "mul",
        "itruediv": "truediv",
        "div": "truediv",
        "multiply": "mul",
        "subtract": "sub",
        "true_divide": "truediv",
        "swapaxes": "transpose",
        "swapdims": "transpose",
        "concat": "cat",
        "concatenate": "cat",
        "_unsafe_view": "view",
        "matmul": "matmul",
        "bmm": "matmul",
        "scaled_dot_product_attention": "sdpa",
        "_native_batch_norm_legit_no_training": "batch_norm",
        "reshape_as": "view_as",
        "__and__": "and_",
        "and": "and_",
        "__or__": "or_",
        "__invert__": "invert",
    }
    return table


ALIASES = _aliases()


def call_name(node: fx.Node) -> str:
    if node.op == "call_method":
        name = str(node.target)
    else:
        target = node.target
        if isinstance(target, torch._ops.OpOverload):
            name = target.overloadpacket.__name__
        elif isinstance(target, torch._ops.OpOverloadPacket):
            name = target.__name__
        else:
            name = getattr(target, "__name__", str(target))
    return ALIASES.get(name, name)


def function_label(node: fx.Node) -> str:
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    target = node.target
    if isinstance(target, torch._ops.OpOverload | torch._ops.OpOverloadPacket):
        return f"aten.{call_name(node)}"
    module = getattr(target, "__module__", "") or ""
    name = getattr(target, "__name__", str(target))
    if module in ("_operator", "operator"):
        return f"operator.{name}"
    if module.startswith("torch.nn.functional") or module == "torch._C._nn":
        return f"F.{name}"
    if module == "torch" or module.startswith("torch."):
        return f"torch.{name}"
    return f"{module}.{name}" if module else name


class Stop(Exception):
    """The node reads a value lost to a gap already reported: its result is unknown too."""


UNKNOWN = "unknown_"  # the id prefix of a value lost to a gap


def static(ref: Any, what: str) -> Any:
    """The Python value of ``ref``, the same in both runs; ``Unexpressible`` otherwise."""
    if isinstance(ref, Py):
        if ref.first == ref.second:
            return ref.first
        raise Unexpressible(what, "an argument depends on the batch size")
    if isinstance(ref, tuple | list):
        return type(ref)(static(r, what) for r in ref)
    if isinstance(ref, TensorRef | ParamRef | ConstRef):
        raise Unexpressible(what, "an argument is a tensor where the catalog takes a number")
    return ref


def size(ref: Any, what: str) -> Any:
    """An int size, or BATCH when it is the batch size in both runs."""
    if isinstance(ref, Py):
        if ref.first == ref.second:
            return ref.first
        if (ref.first, ref.second) == (FIRST, SECOND):
            return BATCH
        raise Unexpressible(what, "a size depends on the batch size (not as the batch axis)")
    return static(ref, what)


__all__ = [
    "ALIASES",
    "BATCH",
    "BIG",
    "UNKNOWN",
    "ConstRef",
    "ParamRef",
    "Pieces",
    "Py",
    "Ref",
    "Stop",
    "TensorRef",
    "call_name",
    "function_label",
    "size",
    "static",
]
