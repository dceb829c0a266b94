"""Functions that stand for layers as catalog operations: pooling and resampling
(``F.max_pool2d``, ``F.interpolate``, ``F.pad``), activations and regularisers
(``F.gelu``, ``torch.clamp``, ``F.dropout``) and functional layers on a module's own
parameters (``F.layer_norm(x, s, self.weight, self.bias)``, ``F.linear``,
``F.scaled_dot_product_attention``). Registered in ``functions.HANDLERS``.
"""

from __future__ import annotations

from typing import Any

from torch import fx

from aurane.lift import patterns
from aurane.lift.functions_common import _arg, _axis, _out, _rank, _tensor, _value
from aurane.lift.layers import Unexpressible
from aurane.lift.lowering import Handler, Lowering
from aurane.lift.patterns import REPEAT_HEADS
from aurane.lift.refs import ParamRef, Py, TensorRef, function_label

# -- pooling and resampling -------------------------------------------------------------------


def _adaptive(op: str) -> Handler:
    def handle(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _pool_window(
    lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]
) -> tuple[str, TensorRef, dict[str, Any]]:
    """A pool's input and the window arguments both pools share (a stride of None is the
    kernel, as torch reads it)."""
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    kernel = _pair(_value(_arg(args, kwargs, 1, "kernel_size"), what))
    stride = _pair(_value(_arg(args, kwargs, 2, "stride"), what))
    padding = _pair(_value(_arg(args, kwargs, 3, "padding", 0), what))
    window = {"kernel": kernel, "stride": stride if stride is not None else kernel}
    return what, x, {**window, "padding": padding}


def _avg_pool(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what, x, window = _pool_window(lw, node, args, kwargs)
    ceil = bool(_value(_arg(args, kwargs, 4, "ceil_mode", False), what))
    include = bool(_value(_arg(args, kwargs, 5, "count_include_pad", True), what))
    if _value(_arg(args, kwargs, 6, "divisor_override"), what) is not None:
        raise Unexpressible(what, "divisor_override has no catalog argument")
    pool_args = {**window, "ceil_mode": ceil, "count_include_pad": include}
    return lw.emit("avgpool", (x.id,), pool_args, _out(lw, node), origin=what)


def _max_pool(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what, x, window = _pool_window(lw, node, args, kwargs)
    dilation = _pair(_value(_arg(args, kwargs, 4, "dilation", 1), what))
    ceil = bool(_value(_arg(args, kwargs, 5, "ceil_mode", False), what))
    if dilation not in (1, None):
        raise Unexpressible(what, "maxpool has no dilation")
    pool_args = {**window, "ceil_mode": ceil}
    return lw.emit("maxpool", (x.id,), pool_args, _out(lw, node), origin=what)


def _interpolate(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _pad(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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
    """An activation with arguments (one without: ``functions_common._unary``); ``params``:
    (position, torch name, catalog name, default) of each argument."""

    def handle(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _gelu(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    approximate = _value(_arg(args, kwargs, 1, "approximate", "none"), what)
    x = _tensor(lw, args[0], what)
    given = {} if approximate == "none" else {"approximate": approximate}
    return lw.emit("gelu", (x.id,), given, _out(lw, node), origin=what)


def _clamp(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    low = _value(_arg(args, kwargs, 1, "min"), what)
    high = _value(_arg(args, kwargs, 2, "max"), what)
    out = _out(lw, node)
    if low is None and high is None:
        raise Unexpressible(what, "a clamp without bounds")
    floating = lw.dtype_of(x).startswith(("float", "bfloat"))
    if floating and low == 0 and high is None:
        return lw.emit("relu", (x.id,), {}, out, origin=what)
    if floating and (low, high) == (0, 6):
        return lw.emit("relu6", (x.id,), {}, out, origin=what)
    if floating and low is not None and high is not None:
        given = {"min_val": float(low), "max_val": float(high)}
        return lw.emit("hardtanh", (x.id,), given, out, origin=what)
    # one side, or integers (T5's bucket bounds): the catalog's clamp
    bounds = {key: value for key, value in (("min", low), ("max", high)) if value is not None}
    return lw.emit("clamp", (x.id,), bounds, out, origin=what)


def _dropout(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    p = _value(_arg(args, kwargs, 1, "p", 0.5), what)
    return lw.emit("dropout", (x.id,), {"p": float(p)}, _out(lw, node), origin=what)


def _stochastic_depth(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _layer_norm(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _linear(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
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


def _sdpa(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = function_label(node)
    q = _tensor(lw, args[0], what)
    k = _tensor(lw, args[1], what)
    v = _tensor(lw, args[2], what)
    mask = _arg(args, kwargs, 3, "attn_mask")
    dropout = _value(_arg(args, kwargs, 4, "dropout_p", 0.0), what)
    dropout = dropout or lw.attention_dropout.get(node, 0.0)  # `p if self.training else 0.0`
    causal = bool(_value(_arg(args, kwargs, 5, "is_causal", False), what))
    scale = _value(_arg(args, kwargs, 6, "scale"), what)
    given: dict[str, Any] = {}
    inputs: tuple[str, ...] = (q.id, k.id, v.id)
    if isinstance(mask, TensorRef):  # computed from the inputs: a padding mask, a bias
        inputs += (_tensor(lw, mask, what).id,)
    elif mask is not None and not (isinstance(mask, Py) and mask.first is None):
        kind = patterns.mask_kind(mask, lw.shape_of(q), lw.shape_of(k))
        rebuilt = lw.try_constant(mask, what) if kind != patterns.CAUSAL else None
        if rebuilt is not None:  # a constant the program computes (ones over the batch)
            inputs += (rebuilt.id,)
        elif kind is None:
            raise Unexpressible(
                what, "a constant attention mask other than the causal one or no mask"
            )
        causal = causal or kind == patterns.CAUSAL
    if causal:
        given["causal"] = True
    if dropout:
        given["dropout"] = float(dropout)
    head = lw.shape_of(q)[-1]
    if scale is not None and abs(float(scale) - head**-0.5) > 1e-12:
        given["scale"] = float(scale)
    return lw.emit("scaled_dot_product_attention", inputs, given, _out(lw, node), origin=what)


def _repeat_interleave(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``k.repeat_interleave(n, dim=1)``: heads repeated for grouped-query attention, which
    ``scaled_dot_product_attention`` does itself (``aurane.lift.patterns``); anything else
    is reported when the graph is finished."""
    what = function_label(node)
    x = _tensor(lw, args[0], what)
    repeats = _value(_arg(args, kwargs, 1, "repeats"), what)
    dim = _value(_arg(args, kwargs, 2, "dim"), what)
    if not isinstance(repeats, int) or dim is None:
        raise Unexpressible(what, "it repeats by a tensor, or over every axis")
    return lw.emit(
        REPEAT_HEADS, (x.id,), {"repeats": repeats, "dim": dim}, _out(lw, node), origin=what
    )


def _embedding(lw: Lowering, node: fx.Node, args: list[Any], kwargs: dict[str, Any]) -> Any:
    raise Unexpressible(function_label(node), "a functional embedding lookup outside nn.Embedding")
