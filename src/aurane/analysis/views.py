"""Tensors as PyTorch lays them out, for the memory walk (``aurane.analysis.saved``): a
storage, a shape and strides, and PyTorch's rules for when a reshape is a view, which
axis order an elementwise kernel writes, and whether a layout is channels-last."""

from __future__ import annotations

from collections.abc import Sequence

from aurane.ops.rules import numel
from aurane.records import record

PARAMETER = -1  # the storage of a parameter or constant: never an activation
GRAD_NONE = -1


@record(frozen=True, slots=True)
class View:
    """A tensor as PyTorch holds it: a storage, a shape and strides (batch axis first)."""

    storage: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str
    grad: bool  # requires grad: the value depends on a parameter
    grad_id: int = GRAD_NONE  # the buffer its gradient accumulates in, during backward


def plain(shape: Sequence[int] | None) -> tuple[int, ...]:
    """A shape as plain ints: IR sizes computed from constants carry their expression's
    text (``semantics.symbolic``), whose arithmetic builds ever longer strings."""
    return tuple(int(size) for size in shape or ())


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * max(shape[d + 1], 1)
    return tuple(strides)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """PyTorch's rule: size-1 axes are skipped."""
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def view_strides(
    shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]
) -> tuple[int, ...] | None:
    """The strides of ``reshape(new_shape)`` as a view, or None when it must copy
    (``at::detail::computeStride``)."""
    if numel(tuple(shape)) == 0:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = strides[-1] if strides else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (
            shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def dense_order(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...] | None:
    """The axes from outermost to innermost when the view is dense and non-overlapping."""
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], -d))
    expected = 1
    for d in reversed(order):
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return None
        expected *= shape[d]
    return tuple(order)


def stride_order(view: View) -> tuple[int, ...]:
    """The axes from the largest stride to the smallest (ties in axis order)."""
    return tuple(sorted(range(len(view.shape)), key=lambda d: (-view.strides[d], d)))


def strides_in_order(shape: Sequence[int], order: Sequence[int]) -> tuple[int, ...]:
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def like(source: View | None, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides PyTorch's elementwise kernels give an output: the first input's axis order
    when it has the output's shape and is dense, else contiguous."""
    if source is not None and source.shape == shape:
        order = dense_order(source.shape, source.strides)
        if order is not None:
            return strides_in_order(shape, order)
    return contiguous_strides(shape)


def channels_last(view: View) -> bool:
    if len(view.shape) != 4 or is_contiguous(view.shape, view.strides):
        return False
    return view.strides == strides_in_order(view.shape, (0, 2, 3, 1))
