"""Functions and tensor methods as catalog operations.

``HANDLERS`` maps a normalised function name (``aurane.lift.refs.call_name``: ``torch.cat``,
``Tensor.view``, ``operator.add`` and ``aten.add.Tensor`` are ``cat``, ``view``, ``add``) to
a handler that emits the operation(s) and returns the reference to the result. Axes are
checked against the batch axis (the catalog's values always carry it first): a function
that reads or moves it across samples (``x.view(-1)``, ``x.permute(1, 0, 2)``) cannot be
written per sample and is a gap.

The handlers live by kind in ``functions_math`` (arithmetic, reductions),
``functions_tensor`` (joining, cutting, indexing, shapes) and ``functions_layers``
(pooling, activations, functional layers), on the helpers of ``functions_common``; this
module joins them into the table the lowerer (``aurane.lift.lower``) reads.
"""

from __future__ import annotations

from aurane.lift.functions_common import _unary
from aurane.lift.functions_index import INDEX_HANDLERS
from aurane.lift.functions_layers import (
    _activation,
    _adaptive,
    _avg_pool,
    _clamp,
    _dropout,
    _embedding,
    _gelu,
    _interpolate,
    _layer_norm,
    _linear,
    _max_pool,
    _pad,
    _repeat_interleave,
    _sdpa,
    _stochastic_depth,
)
from aurane.lift.functions_math import (
    _attribute,
    _binary,
    _einsum,
    _matmul,
    _neg,
    _numpy_t,
    _reduce,
)
from aurane.lift.functions_tensor import (
    TENSOR_INDEX,
    _alias,
    _aten_select,
    _aten_slice,
    _cat,
    _convert,
    _expand,
    _flatten,
    _getitem,
    _permute,
    _pieces,
    _reshape,
    _squeeze,
    _stack,
    _transpose,
    _unsqueeze,
    _view_as,
)
from aurane.lift.lowering import Handler

# activations without arguments: one tensor in, the catalog operation of that name
_PLAIN = ("relu", "sigmoid", "tanh", "silu", "hardswish", "hardsigmoid", "relu6", "mish", "selu")

_ACTIVATIONS: dict[str, Handler] = {
    **{op: _unary(op) for op in _PLAIN},
    "relu_": _unary("relu"),
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
    "axis (x.view(B * windows, ...)), which every Aurane value keeps first; the language has "
    "no per-window attention",
    "_get_relative_position_bias": "Swin's relative position bias: a learned table gathered "
    "by a constant index buffer, inside the windowed attention",
    "_patch_merging_pad": "Swin's patch merging (pad, then four strided slices of the spatial "
    "axes) is one traced function the catalog has no operation for",
    "sqrt": "torch.sqrt has no catalog operation",
    "rsqrt": "torch.rsqrt has no catalog operation (write a norm as rms_norm or layer_norm)",
    "pow": "a power has no catalog operation",
    "index": TENSOR_INDEX,
}

HANDLERS: dict[str, Handler] = {
    **_ACTIVATIONS,
    "add": _binary("add"),
    "sub": _binary("sub"),
    "mul": _binary("mul"),
    "truediv": _binary("truediv"),
    "neg": _neg,
    "matmul": _matmul,
    "numpy_T": _numpy_t,
    "getattr": _attribute,
    "einsum": _einsum,
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
    "long": _convert,
    "half": _convert,
    "bool": _convert,
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
    **INDEX_HANDLERS,
}

__all__ = ["EXPLAINED", "HANDLERS"]
