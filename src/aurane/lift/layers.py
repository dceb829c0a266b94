"""PyTorch layers as catalog operations: ``nn.Conv2d(3, 64, 7, 2, 3, bias=False)`` is
``conv2d(64, kernel=7, stride=2, padding=3, bias=false)``.

A *leaf* is a module the tracer does not enter: one of the classes below (or a subclass
that keeps its forward), or a third-party class recognised by name and attributes
(torchvision's ``StochasticDepth`` and ``LayerNorm2d``, Hugging Face's activations and
RMS norms, the classes Aurane itself generates). Any other ``torch.nn`` module without
children is a leaf too, so that it is reported as the layer it is rather than as the
functions inside it. A layer whose configuration the catalog cannot express raises
``Unexpressible`` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn


class Unexpressible(Exception):
    """``what`` (a layer or a function) cannot be written in the language, because ``why``."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what}: {why}")
        self.what = what
        self.why = why


# How a leaf takes its inputs and gives its output.
UNARY = "unary"  # one tensor in, one tensor out
ATTENTION = "attention"  # nn.MultiheadAttention: (q, k, v) in, (output, weights) out
RECURRENT = "recurrent"  # nn.LSTM / nn.GRU: (x, state) in, (output, state) out
TABLE = "table"  # an embedding: integer ids in (possibly a constant: positions)


def _single(value: Any) -> Any:
    """``(3, 3)`` -> ``3``; a tuple of different sizes stays a tuple."""
    if isinstance(value, tuple | list):
        items = tuple(value)
        if items and all(item == items[0] for item in items):
            return items[0]
        return items
    return value


def _conv(op: str, transposed: bool = False) -> Callable[[Any], dict[str, Any]]:
    def build(m: Any) -> dict[str, Any]:
        if m.padding_mode != "zeros":
            raise Unexpressible(
                f"{type(m).__name__}(padding_mode={m.padding_mode!r})",
                "the catalog's convolutions pad with zeros only",
            )
        args: dict[str, Any] = {
            "channels": m.out_channels,
            "kernel": _single(m.kernel_size),
            "stride": _single(m.stride),
            "padding": m.padding if isinstance(m.padding, str) else _single(m.padding),
        }
        if transposed:
            args["output_padding"] = _single(m.output_padding)
        args.update(dilation=_single(m.dilation), groups=m.groups, bias=m.bias is not None)
        return args

    return build


def _batchnorm(m: Any) -> dict[str, Any]:
    if m.momentum is None:
        raise Unexpressible(
            f"{type(m).__name__}(momentum=None)",
            "a cumulative moving average has no catalog spelling (batchnorm takes a momentum)",
        )
    return {
        "eps": m.eps,
        "momentum": m.momentum,
        "affine": m.affine,
        "track_running_stats": m.track_running_stats,
    }


def _layer_norm(m: Any) -> dict[str, Any]:
    return {
        "eps": m.eps,
        "elementwise_affine": m.elementwise_affine,
        "bias": getattr(m, "bias", None) is not None or not m.elementwise_affine,
        "axes": len(m.normalized_shape),
    }


def _layer_norm_2d(m: Any) -> dict[str, Any]:
    if len(m.normalized_shape) != 1:
        raise Unexpressible("LayerNorm2d", "it normalises more than the channel axis")
    return {**_layer_norm(m), "axes": 1, "dim": 1}


def _rms_norm(m: Any) -> dict[str, Any]:
    shape = getattr(m, "normalized_shape", None)
    axes = len(shape) if isinstance(shape, tuple | list) else 1
    eps = getattr(m, "eps", None)
    if eps is None:
        eps = getattr(m, "variance_epsilon", None)
    return {"eps": eps, "elementwise_affine": m.weight is not None, "axes": axes}


def _pool_check(m: Any) -> None:
    if _single(getattr(m, "dilation", 1)) != 1:
        raise Unexpressible(f"{type(m).__name__}(dilation=...)", "pooling has no dilation")
    if getattr(m, "return_indices", False):
        raise Unexpressible(f"{type(m).__name__}(return_indices=True)", "pooling gives values only")


def _maxpool(m: Any) -> dict[str, Any]:
    _pool_check(m)
    return {
        "kernel": _single(m.kernel_size),
        "stride": _single(m.stride),
        "padding": _single(m.padding),
        "ceil_mode": m.ceil_mode,
    }


def _avgpool(m: Any) -> dict[str, Any]:
    if getattr(m, "divisor_override", None) is not None:
        raise Unexpressible("AvgPool(divisor_override=...)", "avgpool divides by the window")
    return {
        "kernel": _single(m.kernel_size),
        "stride": _single(m.stride),
        "padding": _single(m.padding),
        "ceil_mode": m.ceil_mode,
        "count_include_pad": m.count_include_pad,
    }


def _adaptive(m: Any) -> dict[str, Any]:
    _pool_check(m)
    size = m.output_size
    if isinstance(size, tuple | list) and any(s is None for s in size):
        raise Unexpressible(
            f"{type(m).__name__}(output_size={size})", "an output size of None keeps the input's"
        )
    # as the module holds it (torch keeps what it was given): ``(7, 7)`` stays a pair
    return {"output_size": tuple(size) if isinstance(size, tuple | list) else size}


def _attention(m: Any) -> dict[str, Any]:
    if not m.batch_first:
        raise Unexpressible(
            "nn.MultiheadAttention(batch_first=False)",
            "the batch axis is the second axis; Aurane's values are batch-first",
        )
    if m.bias_k is not None or m.add_zero_attn:
        raise Unexpressible(
            "nn.MultiheadAttention(add_bias_kv / add_zero_attn)", "no catalog argument for them"
        )
    args: dict[str, Any] = {
        "heads": m.num_heads,
        "dim": m.embed_dim,
        "dropout": m.dropout,
        "bias": m.in_proj_bias is not None,
    }
    if not m._qkv_same_embed_dim:
        args.update(kdim=m.kdim, vdim=m.vdim)
    return args


def _recurrent(m: Any) -> dict[str, Any]:
    if not m.batch_first:
        raise Unexpressible(
            f"nn.{type(m).__name__}(batch_first=False)",
            "the batch axis is the second axis; Aurane's values are batch-first",
        )
    if getattr(m, "proj_size", 0):
        raise Unexpressible("nn.LSTM(proj_size=...)", "no catalog argument for projections")
    return {
        "hidden": m.hidden_size,
        "num_layers": m.num_layers,
        "bidirectional": m.bidirectional,
        "dropout": m.dropout,
        "bias": m.bias,
    }


def _embedding(m: Any) -> dict[str, Any]:
    return {
        "vocabulary": m.num_embeddings,
        "width": m.embedding_dim,
        "padding_idx": m.padding_idx,
        "max_norm": m.max_norm,
        "scale_grad_by_freq": m.scale_grad_by_freq,
        "sparse": m.sparse,
    }


def _gelu(m: Any) -> dict[str, Any]:
    approximate = getattr(m, "approximate", "none")
    return {} if approximate == "none" else {"approximate": approximate}


def _flatten(m: Any) -> dict[str, Any]:
    return {"start_dim": m.start_dim, "end_dim": m.end_dim}


def _pad(m: Any) -> dict[str, Any]:
    return {"padding": tuple(m.padding), "value": float(getattr(m, "value", 0.0))}


def _upsample(m: Any) -> dict[str, Any]:
    return {
        "size": _single(m.size),
        "scale_factor": _single(m.scale_factor),
        "mode": m.mode,
        "align_corners": m.align_corners,
    }


def _none(m: Any) -> dict[str, Any]:
    return {}


Builder = Callable[[Any], dict[str, Any]]

# torch.nn classes: (class, catalog operation, how it is called, argument builder)
TORCH_LAYERS: tuple[tuple[type, str, str, Builder], ...] = (
    (nn.Conv1d, "conv1d", UNARY, _conv("conv1d")),
    (nn.Conv2d, "conv2d", UNARY, _conv("conv2d")),
    (nn.Conv3d, "conv3d", UNARY, _conv("conv3d")),
    (nn.ConvTranspose1d, "conv_transpose1d", UNARY, _conv("conv_transpose1d", True)),
    (nn.ConvTranspose2d, "conv_transpose2d", UNARY, _conv("conv_transpose2d", True)),
    (nn.ConvTranspose3d, "conv_transpose3d", UNARY, _conv("conv_transpose3d", True)),
    (nn.Linear, "dense", UNARY, lambda m: {"features": m.out_features, "bias": m.bias is not None}),
    (nn.BatchNorm1d, "batchnorm", UNARY, _batchnorm),
    (nn.BatchNorm2d, "batchnorm", UNARY, _batchnorm),
    (nn.BatchNorm3d, "batchnorm", UNARY, _batchnorm),
    (nn.LayerNorm, "layer_norm", UNARY, _layer_norm),
    (
        nn.GroupNorm,
        "group_norm",
        UNARY,
        lambda m: {"groups": m.num_groups, "eps": m.eps, "affine": m.affine},
    ),
    (nn.InstanceNorm1d, "instance_norm", UNARY, _batchnorm),
    (nn.InstanceNorm2d, "instance_norm", UNARY, _batchnorm),
    (nn.InstanceNorm3d, "instance_norm", UNARY, _batchnorm),
    (nn.RMSNorm, "rms_norm", UNARY, _rms_norm),
    (nn.Embedding, "embedding", TABLE, _embedding),
    (nn.Dropout, "dropout", UNARY, lambda m: {"p": m.p}),
    (nn.ReLU, "relu", UNARY, _none),
    (nn.ReLU6, "relu6", UNARY, _none),
    (nn.GELU, "gelu", UNARY, _gelu),
    (nn.Sigmoid, "sigmoid", UNARY, _none),
    (nn.Tanh, "tanh", UNARY, _none),
    (nn.SiLU, "silu", UNARY, _none),
    (nn.Mish, "mish", UNARY, _none),
    (nn.SELU, "selu", UNARY, _none),
    (nn.ELU, "elu", UNARY, lambda m: {"alpha": m.alpha}),
    (nn.Hardswish, "hardswish", UNARY, _none),
    (nn.Hardsigmoid, "hardsigmoid", UNARY, _none),
    (nn.LeakyReLU, "leaky_relu", UNARY, lambda m: {"slope": m.negative_slope}),
    (nn.Softplus, "softplus", UNARY, lambda m: {"beta": m.beta, "threshold": m.threshold}),
    (nn.Hardtanh, "hardtanh", UNARY, lambda m: {"min_val": m.min_val, "max_val": m.max_val}),
    (nn.Softmax, "softmax", UNARY, lambda m: {"dim": m.dim}),
    (nn.LogSoftmax, "log_softmax", UNARY, lambda m: {"dim": m.dim}),
    (nn.GLU, "glu", UNARY, lambda m: {"dim": m.dim}),
    (nn.Identity, "identity", UNARY, _none),
    (nn.MaxPool1d, "maxpool", UNARY, _maxpool),
    (nn.MaxPool2d, "maxpool", UNARY, _maxpool),
    (nn.MaxPool3d, "maxpool", UNARY, _maxpool),
    (nn.AvgPool1d, "avgpool", UNARY, _avgpool),
    (nn.AvgPool2d, "avgpool", UNARY, _avgpool),
    (nn.AvgPool3d, "avgpool", UNARY, _avgpool),
    (nn.AdaptiveAvgPool1d, "adaptive_avg_pool", UNARY, _adaptive),
    (nn.AdaptiveAvgPool2d, "adaptive_avg_pool", UNARY, _adaptive),
    (nn.AdaptiveAvgPool3d, "adaptive_avg_pool", UNARY, _adaptive),
    (nn.AdaptiveMaxPool1d, "adaptive_max_pool", UNARY, _adaptive),
    (nn.AdaptiveMaxPool2d, "adaptive_max_pool", UNARY, _adaptive),
    (nn.AdaptiveMaxPool3d, "adaptive_max_pool", UNARY, _adaptive),
    (nn.Flatten, "flatten", UNARY, _flatten),
    (nn.Upsample, "upsample", UNARY, _upsample),
    (
        nn.PixelShuffle,
        "pixel_shuffle",
        UNARY,
        lambda m: {"upscale_factor": m.upscale_factor},
    ),
    (nn.ZeroPad1d, "pad", UNARY, _pad),
    (nn.ZeroPad2d, "pad", UNARY, _pad),
    (nn.ConstantPad1d, "pad", UNARY, _pad),
    (nn.ConstantPad2d, "pad", UNARY, _pad),
    (nn.ConstantPad3d, "pad", UNARY, _pad),
    (nn.MultiheadAttention, "multihead_attention", ATTENTION, _attention),
    (nn.LSTM, "lstm", RECURRENT, _recurrent),
    (nn.GRU, "gru", RECURRENT, _recurrent),
)


def _stochastic_depth(m: Any) -> dict[str, Any]:
    if getattr(m, "mode", "row") != "row":
        raise Unexpressible(
            f"StochasticDepth(mode={m.mode!r})", "drop_path drops whole samples (row mode) only"
        )
    return {"p": float(m.p)}


def _tanh_gelu(m: Any) -> dict[str, Any]:
    return {"approximate": "tanh"}


def _hf_conv1d(m: Any) -> dict[str, Any]:
    """Hugging Face's Conv1D: a linear layer with its weight stored (in, out)."""
    return {"features": int(m.nf), "bias": m.bias is not None, "transposed": True}


def _named(m: Any) -> tuple[str, str, Builder] | None:
    """Third-party classes recognised by name and attributes (never imported here)."""
    name = type(m).__name__
    if name == "StochasticDepth" and hasattr(m, "p"):
        return "drop_path", UNARY, _stochastic_depth
    if name == "DropPath" and hasattr(m, "p"):  # the class Aurane generates for drop_path
        return "drop_path", UNARY, lambda m: {"p": float(m.p)}
    if name == "LayerNorm2d" and isinstance(m, nn.LayerNorm):
        return "layer_norm", UNARY, _layer_norm_2d
    if name in ("GELUActivation",) and not getattr(m, "use_gelu_python", False):
        return "gelu", UNARY, _none
    if name in ("NewGELUActivation", "GELUTanh", "PytorchGELUTanh", "FastGELUActivation"):
        return "gelu", UNARY, _tanh_gelu
    if name in ("SiLUActivation",):
        return "silu", UNARY, _none
    epsilon = getattr(m, "variance_epsilon", None) or getattr(m, "eps", None)
    if (
        name.endswith("RMSNorm")
        and isinstance(getattr(m, "weight", None), torch.Tensor)
        and epsilon
    ):
        return "rms_norm", UNARY, _rms_norm
    if name == "Conv1D" and hasattr(m, "nf"):
        return "dense", UNARY, _hf_conv1d
    return None


def _torch_entry(m: nn.Module) -> tuple[str, str, Builder] | None:
    for cls, op, call, build in TORCH_LAYERS:
        if isinstance(m, cls) and type(m).forward is getattr(cls, "forward", None):
            return op, call, build
    return None


def entry(m: nn.Module) -> tuple[str, str, Builder] | None:
    """(catalog operation, how it is called, argument builder) of a known layer."""
    return _named(m) or _torch_entry(m)


def is_leaf(m: nn.Module) -> bool:
    """Whether the tracer treats ``m`` as one layer instead of entering its forward."""
    if entry(m) is not None:
        return True
    if isinstance(m, nn.Sequential | nn.ModuleList | nn.ModuleDict):
        return False
    module = type(m).__module__
    return module.startswith("torch.nn") and not any(True for _ in m.children())


def layer_call(m: nn.Module) -> tuple[str, str, dict[str, Any]]:
    """(operation, call kind, arguments) of a leaf; ``Unexpressible`` when it has none."""
    found = entry(m)
    if found is None:
        raise Unexpressible(
            f"{type(m).__module__}.{type(m).__qualname__}",
            "no catalog operation is this layer",
        )
    op, call, build = found
    return op, call, build(m)


def class_label(m: nn.Module) -> str:
    module = type(m).__module__
    prefix = "nn." if module.startswith("torch.nn") else ""
    return f"{prefix}{type(m).__name__}"
