"""Which operations a layer name (``as NAME``) can hold: one table, read by the IR.

Naming a layer needs a module in the generated ``__init__``: either the operation is a
layer there already (``MODULE_OPS``: convolutions, norms, pools, ``dropout``, ...) or a
function with a module form (``FUNCTION_MODULE_OPS``: ``relu`` -> ``nn.ReLU()``, so that
indices of a named chain match torchvision's ``Conv2dNormActivation``). A named chain's
steps must also be callable as ``module(x)``: ``NOT_CHAINABLE`` lists the modules that
take other inputs or return more. The IR checks names against this table; the torch
backend implements it (its emission table and module forms must cover it exactly, which
``tests/ir/test_layer_table.py`` checks), so the IR never imports a backend.
"""

from __future__ import annotations

from aurane.ops import family
from aurane.ops.rules import CONVOLUTION

MODULE_OPS: frozenset[str] = frozenset(
    {
        "adaptive_avg_pool",
        "adaptive_max_pool",
        "avgpool",
        "batchnorm",
        "block",
        "buffer",
        *family(CONVOLUTION),
        "dense",
        "drop_path",
        "dropout",
        "embedding",
        "group_norm",
        "gru",
        "identity",
        "instance_norm",
        "layer_norm",
        "lstm",
        "maxpool",
        "multihead_attention",
        "parameter",
        "positional_encoding",
        "repeat",
        "rms_norm",
        "upsample",
    }
)

FUNCTION_MODULE_OPS: frozenset[str] = frozenset(
    {
        "elu",
        "flatten",
        "gelu",
        "hardsigmoid",
        "hardswish",
        "identity",
        "leaky_relu",
        "log_softmax",
        "mish",
        "relu",
        "relu6",
        "selu",
        "sigmoid",
        "silu",
        "softmax",
        "softplus",
        "tanh",
    }
)

NOT_CHAINABLE: frozenset[str] = frozenset(
    {"multihead_attention", "lstm", "gru", "positional_encoding", "add", "concat", "buffer"}
)


def nameable(op: str) -> bool:
    """Whether ``op`` can take a layer name: it is, or has the form of, a module."""
    return op in MODULE_OPS or op in FUNCTION_MODULE_OPS


def chainable(op: str) -> bool:
    """Whether ``op`` can be a step of a named chain (an ``nn.Sequential``)."""
    return nameable(op) and op not in NOT_CHAINABLE


__all__ = ["FUNCTION_MODULE_OPS", "MODULE_OPS", "NOT_CHAINABLE", "chainable", "nameable"]
