"""Functions and tensor methods as catalog operations.

``HANDLERS`` maps a normalised function name (``aurane.lift.lower.call_name``: ``torch.cat``,
``Tensor.view``, ``operator.add`` and ``aten.add.Tensor`` are ``cat``, ``view``, ``add``) to
a handler that emits the operation(s) and returns the reference to the result. Axes are
checked against the batch axis (the catalog's values always carry it first): a function
that reads or moves it across samples (``x.view(-1)``, ``x.permute(1, 0, 2)``) cannot be
written per sample and is a gap.
"""

from __future__ import annotations

from typing import Any

from torch import fx

from aurane.lift.layers import Unexpressible
from aurane.lift.lower import (
    BATCH,
    BIG,
    UNKNOWN,
    ConstRef,
    Handler,
    Lowerer,
    ParamRef,
    Pieces,
    Py,
    Stop,
    TensorRef,
    function_label,
    size,
    static,
)
from aurane.lift.values import Meta


def _arg(
    args: list[Any], kwargs: dict[str, Any], index: int, name: str, default: Any = None
) -> Any:
    if index < len(args):
        return args[index]
    return kwargs.get(name, default)


def _value(ref: Any, what: str) -> Any:
    return static(ref, what)


def _out(lw: Lowerer, node: fx.Node) -> Meta:
    first, _ = lw.meta(node)
    if not isinstance(first, Meta):
        raise Unexpressible(function_label(node), "its result is not a single tensor")
    return first


def _tensor(lw: Lowerer, ref: Any, what: str, batched_rank: int | None = None) -> TensorRef:
    if isinstance(ref, TensorRef):
        if ref.id.startswith(UNKNOWN):
            raise Stop  # downstream of a gap already reported
        return ref
    if isinstance(ref, ParamRef):
        return lw.parameter(ref, batched_rank)
    if isinstance(ref, ConstRef):
        raise Unexpressible(what, "it uses a constant tensor (the language has no tensor literals)")
    raise Unexpressible(what, "it takes a value that is not a tensor computed from the input")


def _rank(lw: Lowerer, ref: TensorRef) -> int:
    return len(lw.shape_of(ref)) + 1


def _axis(dim: int, rank: int, what: str) -> int:
    """``dim`` as a non-negative axis of a batched value of ``rank``; the batch axis refused."""
    axis = dim % rank
    if axis == 0:
        raise Unexpressible(what, "it works along the batch axis")
    return axis


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


def _align(lw: Lowerer, a: TensorRef, b: TensorRef) -> tuple[TensorRef, TensorRef]:
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


def _meta_of(lw: Lowerer, ref: TensorRef, shape: tuple[int, ...]) -> Meta:
    return Meta((2, *shape), lw.dtype_of(ref))


_TENSOR_OPS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide"}


def _binary(kind: str) -> Handler:
    def handle(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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
            c = float(nb)
            if kind == "add":
                return lw.emit("subtract", (x.id,), {"constant": -c}, out, origin=what)
            return lw.emit(_TENSOR_OPS[kind], (x.id,), {"constant": c}, out, origin=what)
        x = _tensor(lw, b, what, rank)  # number (op) tensor
        c = float(na)  # type: ignore[arg-type]
        if kind == "add":
            return lw.emit("subtract", (x.id,), {"constant": -c}, out, origin=what)
        if kind == "mul":
            return lw.emit("multiply", (x.id,), {"constant": c}, out, origin=what)
        if kind == "sub":  # c - x = (x * -1) - (-c)
            negated = lw.emit("multiply", (x.id,), {"constant": -1.0}, out, origin=what)
            return lw.emit("subtract", (negated.id,), {"constant": -c}, out, origin=what)
        raise Unexpressible(what, "a number divided by a tensor has no catalog operation")

    return handle


def _neg(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    x = _tensor(lw, args[0], function_label(node))
    return lw.emit("multiply", (x.id,), {"constant": -1.0}, _out(lw, node), origin="neg")


def _matmul(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    out = _out(lw, node)
    a = _tensor(lw, args[0], what, len(out.shape))
    b = _tensor(lw, args[1], what, len(out.shape))
    if _rank(lw, a) != _rank(lw, b):
        raise Unexpressible(what, "the two operands have different ranks")
    return lw.emit("matmul", (a.id, b.id), {}, out, origin=what)


# -- joining and cutting -----------------------------------------------------------------------


def _cat(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _stack(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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
    def handle(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _getitem(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    container, index = args[0], args[1]
    if isinstance(container, Pieces):
        return container.items[_value(index, what)]
    if isinstance(container, tuple | list):
        return container[_value(index, what)]
    if isinstance(container, ParamRef):
        container = lw.parameter(container, None)
    if not isinstance(container, TensorRef):
        first, second = lw.meta(node)
        return Py(first, second)
    return _index(lw, node, container, _value(index, what))


def _index(lw: Lowerer, node: fx.Node, x: TensorRef, index: Any) -> Any:
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


def _aten_slice(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    dim = _value(_arg(args, kwargs, 1, "dim", 0), what)
    start = _value(_arg(args, kwargs, 2, "start"), what)
    end = _value(_arg(args, kwargs, 3, "end"), what)
    step = _value(_arg(args, kwargs, 4, "step", 1), what)
    index = [slice(None)] * (dim % _rank(lw, x)) + [slice(start, end, step)]
    return _index(lw, node, x, tuple(index))


def _aten_select(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _reshape(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _view_as(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    out = _out(lw, node)
    if out.shape[1:] == lw.shape_of(x):
        return x
    return lw.emit("reshape", (x.id,), {"shape": out.shape[1:]}, out, origin=what)


def _flatten(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    start = _value(_arg(args, kwargs, 1, "start_dim", 0), what)
    end = _value(_arg(args, kwargs, 2, "end_dim", -1), what)
    return lw._flatten(x, start, end, _out(lw, node), what)


def _permute(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _transpose(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _unsqueeze(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    dim = _value(_arg(args, kwargs, 1, "dim"), what)
    if dim % (_rank(lw, x) + 1) == 0:
        raise Unexpressible(what, "it adds an axis before the batch axis")
    return lw.emit("unsqueeze", (x.id,), {"dim": dim}, _out(lw, node), origin=what)


def _squeeze(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _expand(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    source = args[0]
    out = _out(lw, node)
    raw = _sizes(args[1:] or [kwargs.get("size")])
    sizes = [size(s, what) for s in raw]
    if isinstance(source, ParamRef):
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
    per_sample = tuple(
        -1 if s == -1 or s == have else s for s, have in zip(rest, lw.shape_of(x), strict=False)
    )
    if all(s == -1 for s in per_sample):
        return x
    return lw.emit("expand", (x.id,), {"sizes": per_sample}, out, origin=what)


def _alias(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    return _tensor(lw, args[0], function_label(node))


def _convert(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    out = _out(lw, node)
    if out.dtype != lw.dtype_of(x):
        raise Unexpressible(
            what, f"it converts {lw.dtype_of(x)} to {out.dtype} (no cast operation)"
        )
    return x


# -- reductions and pooling -------------------------------------------------------------------


def _reduce(op: str, pool: str | None) -> Handler:
    def handle(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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
        given = dim if not isinstance(dim, list) else tuple(dim)
        args_: dict[str, Any] = {"dim": given}
        if keepdim:
            args_["keepdim"] = True
        return lw.emit(op, (x.id,), args_, out, origin=what)

    return handle


def _adaptive(op: str) -> Handler:
    def handle(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        x = _tensor(lw, args[0], what)
        size_ = _value(_arg(args, kwargs, 1, "output_size"), what)
        if isinstance(size_, list):
            size_ = tuple(size_)
        if isinstance(size_, tuple) and size_ and all(s == size_[0] for s in size_):
            size_ = size_[0]
        return lw.emit(op, (x.id,), {"output_size": size_}, _out(lw, node), origin=what)

    return handle


def _pair(value: Any) -> Any:
    if isinstance(value, list | tuple):
        items = tuple(value)
        if not items:
            return None
        return items[0] if all(i == items[0] for i in items) else items
    return value


def _avg_pool(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    kernel = _pair(_value(_arg(args, kwargs, 1, "kernel_size"), what))
    stride = _pair(_value(_arg(args, kwargs, 2, "stride"), what))
    padding = _pair(_value(_arg(args, kwargs, 3, "padding", 0), what))
    ceil = bool(_value(_arg(args, kwargs, 4, "ceil_mode", False), what))
    include = bool(_value(_arg(args, kwargs, 5, "count_include_pad", True), what))
    if _value(_arg(args, kwargs, 6, "divisor_override"), what) is not None:
        raise Unexpressible(what, "divisor_override has no catalog argument")
    return lw.emit(
        "avgpool",
        (x.id,),
        {
            "kernel": kernel,
            "stride": stride if stride is not None else kernel,
            "padding": padding,
            "ceil_mode": ceil,
            "count_include_pad": include,
        },
        _out(lw, node),
        origin=what,
    )


def _max_pool(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    kernel = _pair(_value(_arg(args, kwargs, 1, "kernel_size"), what))
    stride = _pair(_value(_arg(args, kwargs, 2, "stride"), what))
    padding = _pair(_value(_arg(args, kwargs, 3, "padding", 0), what))
    dilation = _pair(_value(_arg(args, kwargs, 4, "dilation", 1), what))
    ceil = bool(_value(_arg(args, kwargs, 5, "ceil_mode", False), what))
    if dilation not in (1, None):
        raise Unexpressible(what, "maxpool has no dilation")
    return lw.emit(
        "maxpool",
        (x.id,),
        {
            "kernel": kernel,
            "stride": stride if stride is not None else kernel,
            "padding": padding,
            "ceil_mode": ceil,
        },
        _out(lw, node),
        origin=what,
    )


def _interpolate(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    size_ = _pair(_value(_arg(args, kwargs, 1, "size"), what))
    scale = _pair(_value(_arg(args, kwargs, 2, "scale_factor"), what))
    mode = _value(_arg(args, kwargs, 3, "mode", "nearest"), what)
    corners = _value(_arg(args, kwargs, 4, "align_corners"), what)
    if _value(kwargs.get("antialias", False), what):
        raise Unexpressible(what, "antialias has no catalog argument")
    return lw.emit(
        "upsample",
        (x.id,),
        {"size": size_, "scale_factor": scale, "mode": mode, "align_corners": corners},
        _out(lw, node),
        origin=what,
    )


def _pad(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    padding = tuple(_value(_arg(args, kwargs, 1, "pad"), what))
    mode = _value(_arg(args, kwargs, 2, "mode", "constant"), what)
    value = _value(_arg(args, kwargs, 3, "value"), what)
    return lw.emit(
        "pad",
        (x.id,),
        {"padding": padding, "mode": mode, "value": float(value or 0.0)},
        _out(lw, node),
        origin=what,
    )


# -- activations and regularisers ---------------------------------------------------------------


def _activation(op: str, params: tuple[tuple[int, str, str, Any], ...] = ()) -> Handler:
    """``params``: (position, torch name, catalog name, default) of each argument."""

    def handle(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
        what = function_label(node)
        x = _tensor(lw, args[0], what)
        given: dict[str, Any] = {}
        for position, torch_name, name, default in params:
            value = _value(_arg(args, kwargs, position, torch_name, default), what)
            if value != default:
                given[name] = value
        if op in ("softmax", "log_softmax", "glu"):
            dim = given.get("dim", -1 if op == "glu" else None)
            if dim is None:
                raise Unexpressible(what, "softmax without dim")
            _axis(dim, _rank(lw, x), what)
            given["dim"] = dim
        return lw.emit(op, (x.id,), given, _out(lw, node), origin=what)

    return handle


def _gelu(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    approximate = _value(_arg(args, kwargs, 1, "approximate", "none"), what)
    x = _tensor(lw, args[0], what)
    given = {} if approximate == "none" else {"approximate": approximate}
    return lw.emit("gelu", (x.id,), given, _out(lw, node), origin=what)


def _clamp(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    low = _value(_arg(args, kwargs, 1, "min"), what)
    high = _value(_arg(args, kwargs, 2, "max"), what)
    out = _out(lw, node)
    if low == 0 and high is None:
        return lw.emit("relu", (x.id,), {}, out, origin=what)
    if low is None or high is None:
        raise Unexpressible(what, "a one-sided clamp other than at 0 has no catalog operation")
    if (low, high) == (0, 6):
        return lw.emit("relu6", (x.id,), {}, out, origin=what)
    return lw.emit(
        "hardtanh", (x.id,), {"min_val": float(low), "max_val": float(high)}, out, origin=what
    )


def _dropout(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    p = _value(_arg(args, kwargs, 1, "p", 0.5), what)
    return lw.emit("dropout", (x.id,), {"p": float(p)}, _out(lw, node), origin=what)


def _stochastic_depth(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    p = _value(_arg(args, kwargs, 1, "p"), what)
    mode = _value(_arg(args, kwargs, 2, "mode", "row"), what)
    if mode != "row":
        raise Unexpressible(
            f"{what}(mode={mode!r})", "drop_path drops whole samples (row mode) only"
        )
    return lw.emit("drop_path", (x.id,), {"p": float(p)}, _out(lw, node), origin=what)


# -- functional layers on a module's own parameters ----------------------------------------------


def _none(ref: Any) -> bool:
    return ref is None or (isinstance(ref, Py) and ref.first is None)


def _owner(ref: Any, name: str) -> str | None:
    if isinstance(ref, ParamRef) and ref.path.endswith(f".{name}"):
        return ref.path[: -len(name) - 1]
    if isinstance(ref, ParamRef) and ref.path == name:
        return ""
    return None


def _layer_norm(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    shape = _value(_arg(args, kwargs, 1, "normalized_shape"), what)
    weight, bias = _arg(args, kwargs, 2, "weight"), _arg(args, kwargs, 3, "bias")
    eps = _value(_arg(args, kwargs, 4, "eps", 1e-5), what)
    axes = len(shape) if isinstance(shape, tuple | list) else 1
    given: dict[str, Any] = {"eps": eps, "axes": axes}
    if _none(weight) and _none(bias):
        given["elementwise_affine"] = False
        return lw.emit("layer_norm", (x.id,), given, _out(lw, node), origin=what)
    owner = _owner(weight, "weight")
    if owner is None or owner == "" or (not _none(bias) and _owner(bias, "bias") != owner):
        raise Unexpressible(what, "its weight and bias are not one module's weight and bias")
    if _none(bias):
        given["bias"] = False
    return lw.emit("layer_norm", (x.id,), given, _out(lw, node), origin=what, layer=owner)


def _linear(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    weight, bias = _arg(args, kwargs, 1, "weight"), _arg(args, kwargs, 2, "bias")
    owner = _owner(weight, "weight")
    if owner is None or owner == "" or not isinstance(weight, ParamRef):
        raise Unexpressible(what, "its weight is not a module's weight parameter")
    none = _none(bias)
    if not none and _owner(bias, "bias") != owner:
        raise Unexpressible(what, "its bias is not the same module's bias")
    features = int(weight.tensor.shape[0])
    return lw.emit(
        "dense",
        (x.id,),
        {"features": features, "bias": not none},
        _out(lw, node),
        origin=what,
        layer=owner,
    )


def _sdpa(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    q = _tensor(lw, args[0], what)
    k = _tensor(lw, args[1], what)
    v = _tensor(lw, args[2], what)
    mask = _arg(args, kwargs, 3, "attn_mask")
    dropout = _value(_arg(args, kwargs, 4, "dropout_p", 0.0), what)
    causal = bool(_value(_arg(args, kwargs, 5, "is_causal", False), what))
    scale = _value(_arg(args, kwargs, 6, "scale"), what)
    given: dict[str, Any] = {}
    if mask is not None and not (isinstance(mask, Py) and mask.first is None):
        from aurane.lift import patterns

        kind = patterns.mask_kind(mask, lw.shape_of(q), lw.shape_of(k))
        if kind is None:
            raise Unexpressible(
                what, "an attention mask other than the causal one (a bias, or padding)"
            )
        causal = causal or kind == patterns.CAUSAL
    if causal:
        given["causal"] = True
    if dropout:
        given["dropout"] = float(dropout)
    head = lw.shape_of(q)[-1]
    if scale is not None and abs(float(scale) - head**-0.5) > 1e-12:
        given["scale"] = float(scale)
    return lw.emit(
        "scaled_dot_product_attention", (q.id, k.id, v.id), given, _out(lw, node), origin=what
    )


def _repeat_interleave(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``k.repeat_interleave(n, dim=1)``: heads repeated for grouped-query attention, which
    ``scaled_dot_product_attention`` does itself (``aurane.lift.patterns``); anything else
    is reported when the graph is finished."""
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    repeats = _value(_arg(args, kwargs, 1, "repeats"), what)
    dim = _value(_arg(args, kwargs, 2, "dim"), what)
    if not isinstance(repeats, int) or dim is None:
        raise Unexpressible(what, "it repeats by a tensor, or over every axis")
    from aurane.lift.patterns import REPEAT_HEADS

    return lw.emit(
        REPEAT_HEADS, (x.id,), {"repeats": repeats, "dim": dim}, _out(lw, node), origin=what
    )


def _embedding(lw: Lowerer, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    raise Unexpressible(function_label(node), "a functional embedding lookup outside nn.Embedding")


_ACTIVATIONS: dict[str, Handler] = {
    "relu": _activation("relu"),
    "relu_": _activation("relu"),
    "sigmoid": _activation("sigmoid"),
    "tanh": _activation("tanh"),
    "silu": _activation("silu"),
    "hardswish": _activation("hardswish"),
    "hardsigmoid": _activation("hardsigmoid"),
    "relu6": _activation("relu6"),
    "mish": _activation("mish"),
    "selu": _activation("selu"),
    "elu": _activation("elu", ((1, "alpha", "alpha", 1.0),)),
    "leaky_relu": _activation("leaky_relu", ((1, "negative_slope", "slope", 0.01),)),
    "softplus": _activation(
        "softplus", ((1, "beta", "beta", 1.0), (2, "threshold", "threshold", 20.0))
    ),
    "hardtanh": _activation(
        "hardtanh", ((1, "min_val", "min_val", -1.0), (2, "max_val", "max_val", 1.0))
    ),
    "softmax": _activation("softmax", ((1, "dim", "dim", None),)),
    "_softmax": _activation("softmax", ((1, "dim", "dim", None),)),
    "log_softmax": _activation("log_softmax", ((1, "dim", "dim", None),)),
    "_log_softmax": _activation("log_softmax", ((1, "dim", "dim", None),)),
    "glu": _activation("glu", ((1, "dim", "dim", -1),)),
    "gelu": _gelu,
}

# why a function no handler takes cannot be written, where there is more to say than
# "no catalog operation computes it" (docs/import.md lists them)
EXPLAINED: dict[str, str] = {
    "shifted_window_attention": "Swin's windowed attention folds the windows into the batch "
    "axis, shifts them with torch.roll and adds a relative position bias gathered from a "
    "table; the catalog has no per-window attention, roll or gather",
    "_get_relative_position_bias": "a learned table gathered by a constant index buffer: "
    "the catalog has no gather",
    "_patch_merging_pad": "Swin's patch merging (pad, then four strided slices of the spatial "
    "axes) is one traced function the catalog has no operation for",
    "einsum": "torch.einsum has no catalog operation (matmul covers a product of two "
    "operands over their last two axes)",
    "roll": "torch.roll (a cyclic shift) has no catalog operation",
    "exp": "torch.exp has no catalog operation",
    "log": "torch.log has no catalog operation",
    "sqrt": "torch.sqrt has no catalog operation",
    "rsqrt": "torch.rsqrt has no catalog operation (write a norm as rms_norm or layer_norm)",
    "pow": "a power has no catalog operation",
    "where": "torch.where selects by a tensor's values: the language has no conditionals",
    "masked_fill": "masked_fill with a mask computed from the input: only causal masks are "
    "recognised (scaled_dot_product_attention's causal=true)",
    "cumsum": "torch.cumsum has no catalog operation",
    "gather": "torch.gather has no catalog operation",
    "index": "indexing by a tensor (a gather) has no catalog operation",
}

HANDLERS: dict[str, Handler] = {
    **_ACTIVATIONS,
    "add": _binary("add"),
    "sub": _binary("sub"),
    "mul": _binary("mul"),
    "truediv": _binary("truediv"),
    "neg": _neg,
    "matmul": _matmul,
    "cat": _cat,
    "stack": _stack,
    "chunk": _pieces("chunk"),
    "split": _pieces("split"),
    "split_with_sizes": _pieces("split"),
    "getitem": _getitem,
    "slice": _aten_slice,
    "select": _aten_select,
    "view": _reshape,
    "reshape": _reshape,
    "view_as": _view_as,
    "flatten": _flatten,
    "permute": _permute,
    "transpose": _transpose,
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "expand": _expand,
    "contiguous": _alias,
    "clone": _alias,
    "detach": _alias,
    "alias": _alias,
    "to": _convert,
    "type_as": _convert,
    "float": _convert,
    "_to_copy": _convert,
    "mean": _reduce("mean", "global_avg_pool"),
    "sum": _reduce("sum", None),
    "amax": _reduce("amax", "global_max_pool"),
    "adaptive_avg_pool1d": _adaptive("adaptive_avg_pool"),
    "adaptive_avg_pool2d": _adaptive("adaptive_avg_pool"),
    "adaptive_avg_pool3d": _adaptive("adaptive_avg_pool"),
    "adaptive_max_pool1d": _adaptive("adaptive_max_pool"),
    "adaptive_max_pool2d": _adaptive("adaptive_max_pool"),
    "avg_pool1d": _avg_pool,
    "avg_pool2d": _avg_pool,
    "avg_pool3d": _avg_pool,
    "max_pool1d": _max_pool,
    "max_pool2d": _max_pool,
    "max_pool3d": _max_pool,
    "interpolate": _interpolate,
    "pad": _pad,
    "clamp": _clamp,
    "dropout": _dropout,
    "stochastic_depth": _stochastic_depth,
    "layer_norm": _layer_norm,
    "linear": _linear,
    "sdpa": _sdpa,
    "embedding": _embedding,
    "repeat_interleave": _repeat_interleave,
}

__all__ = ["HANDLERS", "Pieces"]
