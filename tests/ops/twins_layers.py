"""PyTorch twins of the convolution, pooling, normalization and activation ops of issue 10.

Written from PyTorch's (and torchvision's) own modules and functions, not from Aurane's
emitters. ``maxpool``, ``avgpool``, ``batchnorm`` and ``layer_norm`` replace the twins of
twins.py, which predate 3-D inputs, ``ceil_mode`` and ``axes``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .twins import Fn, _conv

Twin = Callable[[dict[str, Any], tuple[tuple[int, ...], ...]], nn.Module]


def _dims(s: tuple[tuple[int, ...], ...]) -> int:
    return len(s[0]) - 1


def _transpose(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    cls = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}[_dims(s)]
    return cls(
        s[0][0],
        a["channels"],
        a["kernel"],
        stride=a["stride"],
        padding=a["padding"],
        output_padding=a["output_padding"],
        groups=a["groups"],
        bias=a["bias"],
        dilation=a["dilation"],
    )


def _pool(kind: str) -> Twin:
    def build(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
        cls = getattr(nn, f"{kind}{_dims(s)}d")
        extra = {"count_include_pad": a["count_include_pad"]} if kind == "AvgPool" else {}
        return cls(  # type: ignore[no-any-return]
            a["kernel"], stride=a["stride"], padding=a["padding"], ceil_mode=a["ceil_mode"], **extra
        )

    return build


def _adaptive(kind: str) -> Twin:
    def build(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
        return getattr(nn, f"Adaptive{kind}Pool{_dims(s)}d")(a["output_size"])  # type: ignore[no-any-return]

    return build


def _batchnorm(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    cls = {1: nn.BatchNorm1d, 2: nn.BatchNorm1d, 3: nn.BatchNorm2d, 4: nn.BatchNorm3d}[len(s[0])]
    return cls(
        s[0][0],
        eps=a["eps"],
        momentum=a["momentum"],
        affine=a["affine"],
        track_running_stats=a["track_running_stats"],
    )


def _instance_norm(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    cls = {1: nn.InstanceNorm1d, 2: nn.InstanceNorm2d, 3: nn.InstanceNorm3d}[_dims(s)]
    return cls(
        s[0][0],
        eps=a["eps"],
        momentum=a["momentum"],
        affine=a["affine"],
        track_running_stats=a["track_running_stats"],
    )


def _trailing(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    return s[0][len(s[0]) - a["axes"] :]


class _ChannelsLast(nn.Module):
    """A norm of the last axis applied to the channel axis (N, C, *spatial)."""

    def __init__(self, norm: nn.Module) -> None:
        super().__init__()
        self.norm = norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dims = (0, *range(2, x.ndim), 1)
        back = (0, x.ndim - 1, *range(1, x.ndim - 1))
        return self.norm(x.permute(dims)).permute(back)  # type: ignore[no-any-return]


def _layer_norm(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    options = {"eps": a["eps"], "elementwise_affine": a["elementwise_affine"], "bias": a["bias"]}
    if a["dim"] in (1, -len(s[0])) and len(s[0]) > 1:
        if len(s[0]) == 3:
            from torchvision.models.convnext import LayerNorm2d

            module: nn.Module = LayerNorm2d(s[0][0], **options)
            return module
        return _ChannelsLast(nn.LayerNorm(s[0][0], **options))
    return nn.LayerNorm(_trailing(a, s), **options)


def _stochastic_depth(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    from torchvision.ops import StochasticDepth

    module: nn.Module = StochasticDepth(a["p"], "row")
    return module


LAYER_TWINS: dict[str, Twin] = {
    "conv3d": _conv,
    "conv_transpose1d": _transpose,
    "conv_transpose2d": _transpose,
    "conv_transpose3d": _transpose,
    "maxpool": _pool("MaxPool"),
    "avgpool": _pool("AvgPool"),
    "adaptive_avg_pool": _adaptive("Avg"),
    "adaptive_max_pool": _adaptive("Max"),
    "global_max_pool": lambda a, s: Fn(lambda x: x.flatten(2).max(-1).values),
    "batchnorm": _batchnorm,
    "layer_norm": _layer_norm,
    "group_norm": lambda a, s: nn.GroupNorm(a["groups"], s[0][0], eps=a["eps"], affine=a["affine"]),
    "instance_norm": _instance_norm,
    "rms_norm": lambda a, s: nn.RMSNorm(
        _trailing(a, s), eps=a["eps"], elementwise_affine=a["elementwise_affine"]
    ),
    "softplus": lambda a, s: nn.Softplus(a["beta"], a["threshold"]),
    "relu6": lambda a, s: nn.ReLU6(),
    "hardtanh": lambda a, s: nn.Hardtanh(a["min_val"], a["max_val"]),
    "hardsigmoid": lambda a, s: nn.Hardsigmoid(),
    "glu": lambda a, s: nn.GLU(a["dim"]),
    "drop_path": _stochastic_depth,
}
