"""Functions that join, cut, index and reshape tensors as catalog operations: ``torch.cat``,
``torch.chunk``, ``x[:, 0]``, ``x.view(x.size(0), -1)``, ``x.permute(0, 2, 1)``. Each is
written per sample, so one that reads or moves the batch axis is a gap. Registered in
``functions.HANDLERS``.
"""

from __future__ import annotations

from typing import Any

from torch import fx

from aurane.lift.functions_common import (
    _arg,
    _axis,
    _meta_of,
    _out,
    _rank,
    _tensor,
    _value,
)
from aurane.lift.layers import Unexpressible
from aurane.lift.lowering import Handler, Lowering
from aurane.lift.refs import (
    BATCH,
    BIG,
    ConstRef,
    ParamRef,
    Pieces,
    Py,
    TensorRef,
    function_label,
    size,
)
from aurane.lift.values import Meta

# -- joining and cutting -----------------------------------------------------------------------


def _cat(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    items = _arg(args, kwargs, 0, "tensors")
    dim = _value(_arg(args, kwargs, 1, "dim", 0), what)
    out = _out(lw, node)
    rank = len(out.shape)
    _axis(dim, rank, what)
    refs = [_tensor(lw, item, what, rank) for item in items]
    if len(refs) == 1:
        return refs[0]
    return lw.emit("concat", tuple(r.id for r in refs), {"dim": dim}, out, origin=what)


def _stack(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    items = _arg(args, kwargs, 0, "tensors")
    dim = _value(_arg(args, kwargs, 1, "dim", 0), what)
    out = _out(lw, node)
    _axis(dim, len(out.shape), what)
    lifted = []
    for item in items:
        ref = _tensor(lw, item, what, len(out.shape) - 1)
        shape = list(lw.shape_of(ref))
        axis = dim % len(out.shape)
        shape.insert(axis - 1, 1)
        lifted.append(
            lw.emit(
                "unsqueeze", (ref.id,), {"dim": dim}, _meta_of(lw, ref, tuple(shape)), origin=what
            )
        )
    return lw.emit("concat", tuple(r.id for r in lifted), {"dim": dim}, out, origin=what)


def _pieces(op: str) -> Handler:
    def handle(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        x = _tensor(lw, args[0], what)
        first, _ = lw.meta(node)
        amount = _value(
            _arg(args, kwargs, 1, "chunks" if op == "chunk" else "split_size", None), what
        )
        if amount is None:
            amount = _value(kwargs.get("split_size_or_sections", kwargs.get("sections")), what)
        dim = _value(_arg(args, kwargs, 2, "dim", 0), what)
        _axis(dim, _rank(lw, x), what)
        lw.groups += 1
        group = f"g{lw.groups}"
        key = "chunks" if op == "chunk" else "size"
        if isinstance(amount, list):
            amount = tuple(amount)
        refs = []
        for index, meta in enumerate(first):
            refs.append(
                lw.emit(
                    op,
                    (x.id,),
                    {key: amount, "dim": dim, "index": index},
                    meta,
                    origin=what,
                    group=group,
                    pieces=len(first),
                )
            )
        return Pieces(tuple(refs))

    return handle


TENSOR_INDEX = (
    "indexing by a tensor (x[index]): write it as gather or index_select, whose index is a "
    "value with the batch axis; a table indexed by a buffer outside the batch (torchvision "
    "MaxViT's relative position bias, then viewed without the batch axis) is not followed"
)


def _getitem(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    container, index = args[0], args[1]
    if isinstance(container, Pieces):
        return container.items[_value(index, what)]
    if isinstance(container, tuple | list):
        return container[_value(index, what)]
    items = index if isinstance(index, tuple | list) else (index,)
    tensor_index = any(isinstance(item, TensorRef | ConstRef) for item in items)
    if tensor_index and isinstance(container, TensorRef | ParamRef):  # (constants: observed)
        raise Unexpressible("tensor indexing", TENSOR_INDEX)
    if isinstance(container, ParamRef):
        container = lw.parameter(container, None)
    if not isinstance(container, TensorRef):
        first, second = lw.meta(node)
        return Py(first, second)
    return _index(lw, node, container, _value(index, what))


def _index(lw: Lowering, node: fx.Node, x: TensorRef, index: Any) -> Any:
    what = "tensor indexing"
    items = list(index) if isinstance(index, tuple) else [index]
    rank = _rank(lw, x)
    if any(item is Ellipsis for item in items):
        at = items.index(Ellipsis)
        used = sum(1 for item in items if item is not None and item is not Ellipsis)
        items[at : at + 1] = [slice(None)] * (rank - used)
    current = x
    axis = 0
    final = _out(lw, node)
    steps = [(a, item) for a, item in enumerate(items)]
    for position, (_, item) in enumerate(steps):
        last = position == len(steps) - 1
        if item is None:
            shape = list(lw.shape_of(current))
            shape.insert(axis, 1) if axis > 0 else None
            if axis == 0:
                raise Unexpressible(what, "it adds an axis before the batch axis")
            current = lw.emit(
                "unsqueeze",
                (current.id,),
                {"dim": axis},
                _meta_of(lw, current, tuple(shape)),
                origin=what,
            )
            axis += 1
        elif isinstance(item, slice):
            start, stop, step = item.start, item.stop, item.step
            if stop is not None and stop >= BIG:
                stop = None
            if start in (0, None) and stop is None and step in (1, None):
                axis += 1
                continue
            start = None if start == 0 else start
            if axis == 0:
                raise Unexpressible(what, "it slices the batch axis")
            length = lw.shape_of(current)[axis - 1]
            kept = len(range(*slice(start, stop, step).indices(length)))
            shape = list(lw.shape_of(current))
            shape[axis - 1] = kept
            args: dict[str, Any] = {"dim": axis, "start": start, "end": stop}
            if step not in (1, None):
                args["step"] = step
            current = lw.emit(
                "slice", (current.id,), args, _meta_of(lw, current, tuple(shape)), origin=what
            )
            axis += 1
        elif isinstance(item, int) and not isinstance(item, bool):
            if axis == 0:
                raise Unexpressible(what, "it picks samples of the batch (indexes the batch axis)")
            shape = list(lw.shape_of(current))
            del shape[axis - 1]
            current = lw.emit(
                "select",
                (current.id,),
                {"dim": axis, "index": item},
                _meta_of(lw, current, tuple(shape)),
                origin=what,
            )
        else:
            raise Unexpressible(what, f"an index of {type(item).__name__} has no catalog form")
        del last
    if lw.shape_of(current) != final.shape[1:]:
        raise Unexpressible(what, "indexing gave an unexpected shape")
    return current


def _aten_slice(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    dim = _value(_arg(args, kwargs, 1, "dim", 0), what)
    start = _value(_arg(args, kwargs, 2, "start"), what)
    end = _value(_arg(args, kwargs, 3, "end"), what)
    step = _value(_arg(args, kwargs, 4, "step", 1), what)
    index = [slice(None)] * (dim % _rank(lw, x)) + [slice(start, end, step)]
    return _index(lw, node, x, tuple(index))


def _aten_select(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    dim = _value(_arg(args, kwargs, 1, "dim"), what)
    position = _value(_arg(args, kwargs, 2, "index"), what)
    index = [slice(None)] * (dim % _rank(lw, x)) + [position]
    return _index(lw, node, x, tuple(index))


# -- shapes -----------------------------------------------------------------------------------


def _sizes(args: list[Any]) -> list[Any]:
    if len(args) == 1:
        only = args[0]
        if isinstance(only, tuple | list):
            return list(only)
        if isinstance(only, Py) and isinstance(only.first, tuple | list):
            return [Py(a, b) for a, b in zip(only.first, only.second, strict=True)]
    return list(args)


def _reshape(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    first, second = lw.meta(node)
    if not isinstance(first, Meta) or first.shape[:1] != (2,) or second.shape[:1] != (3,):
        raise Unexpressible(what, "it folds the batch axis into another axis")
    raw = _sizes(args[1:] or [kwargs.get("shape")])
    sizes = [size(s, what) for s in raw]
    if not sizes or sizes[0] not in (BATCH, -1):
        raise Unexpressible(what, "its first size is not the batch size")
    rest = sizes[1:]
    if any(s is BATCH for s in rest):
        raise Unexpressible(what, "the batch size appears on a sample axis")
    shape = tuple(
        -1 if s == -1 and sizes[0] is BATCH else int(out)
        for s, out in zip(rest, first.shape[1:], strict=False)
    )
    if len(shape) != len(first.shape) - 1:
        shape = first.shape[1:]
    if shape == lw.shape_of(x):
        return x
    return lw.emit("reshape", (x.id,), {"shape": shape}, first, origin=what)


def _view_as(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    out = _out(lw, node)
    if out.shape[1:] == lw.shape_of(x):
        return x
    return lw.emit("reshape", (x.id,), {"shape": out.shape[1:]}, out, origin=what)


def _flatten(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    start = _value(_arg(args, kwargs, 1, "start_dim", 0), what)
    end = _value(_arg(args, kwargs, 2, "end_dim", -1), what)
    return lw._flatten(x, start, end, _out(lw, node), what)


def _permute(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    dims = [int(d) for d in _value(_sizes(args[1:] or [kwargs.get("dims")]), what)]
    rank = _rank(lw, x)
    dims = [d % rank for d in dims]
    if dims[0] != 0:
        raise Unexpressible(what, "it moves the batch axis")
    if dims == list(range(rank)):
        return x
    return lw.emit("permute", (x.id,), {"dims": tuple(dims)}, _out(lw, node), origin=what)


def _transpose(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    d0 = _value(_arg(args, kwargs, 1, "dim0"), what)
    d1 = _value(_arg(args, kwargs, 2, "dim1"), what)
    rank = _rank(lw, x)
    _axis(d0, rank, what)
    _axis(d1, rank, what)
    if d0 % rank == d1 % rank:
        return x
    return lw.emit("transpose", (x.id,), {"dim0": d0, "dim1": d1}, _out(lw, node), origin=what)


def _unsqueeze(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    dim = _value(_arg(args, kwargs, 1, "dim"), what)
    if dim % (_rank(lw, x) + 1) == 0:
        raise Unexpressible(what, "it adds an axis before the batch axis")
    return lw.emit("unsqueeze", (x.id,), {"dim": dim}, _out(lw, node), origin=what)


def _squeeze(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    dim = _value(_arg(args, kwargs, 1, "dim"), what)
    shape = lw.shape_of(x)
    if dim is None:
        dims = [i + 1 for i, s in enumerate(shape) if s == 1]
    elif isinstance(dim, tuple | list):
        dims = [d % (len(shape) + 1) for d in dim]
    else:
        dims = [dim % (len(shape) + 1)]
    dims = [d for d in dims if d != 0 and shape[d - 1] == 1]
    current = x
    for d in sorted(dims, reverse=True):
        new = list(lw.shape_of(current))
        del new[d - 1]
        current = lw.emit(
            "squeeze", (current.id,), {"dim": d}, _meta_of(lw, current, tuple(new)), origin=what
        )
    return current


def _expand(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    source = args[0]
    out = _out(lw, node)
    raw = _sizes(args[1:] or [kwargs.get("size")])
    sizes = [size(s, what) for s in raw]
    if isinstance(source, ConstRef) and source.buffer is not None:  # a buffer over the batch
        if sizes[0] is not BATCH or len(sizes) != source.tensor.dim() + 1:
            raise Unexpressible(what, "it expands a buffer other than over the batch")
        x = lw.buffer(source)
        rest = sizes[1:]
    elif isinstance(source, ParamRef):
        stored = tuple(source.tensor.shape)
        if sizes[0] is not BATCH:
            raise Unexpressible(what, "it expands a parameter without a batch axis")
        if len(sizes) == len(stored) and stored[:1] == (1,):
            x = lw.parameter(source, len(stored))
        elif len(sizes) == len(stored) + 1:
            x = lw.parameter(source, None)
        else:
            raise Unexpressible(what, "it expands a parameter to another rank")
        rest = sizes[1:]
    else:
        x = _tensor(lw, source, what)
        if len(sizes) != _rank(lw, x) or sizes[0] not in (BATCH, -1):
            raise Unexpressible(what, "it expands the batch axis or adds axes")
        rest = sizes[1:]
    # a size written out stays, even where it keeps the size (MaxViT's expand(-1, -1, heads)
    # at one head): the block then reads alike at every size
    per_sample = tuple(-1 if s == -1 or s is BATCH else s for s in rest)
    if all(s == -1 for s in per_sample):
        return x
    return lw.emit("expand", (x.id,), {"sizes": per_sample}, out, origin=what)


def _alias(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    return _tensor(lw, args[0], function_label(node))


def _convert(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    out = _out(lw, node)
    if out.dtype != lw.dtype_of(x):  # .long(), .to(torch.float16): the catalog's to()
        return lw.emit("to", (x.id,), {"dtype": out.dtype}, out, origin=what)
    return x
