"""Helper modules of the operations whose PyTorch form is not a single ``nn`` class."""

from __future__ import annotations

import torch
from torch import nn


class DropPath(nn.Module):
    """Stochastic depth (torchvision's StochasticDepth, "row" mode): in training, zero each
    sample with probability p and scale the kept ones by 1 / (1 - p); identity in eval."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        keep = 1.0 - self.p
        noise = torch.empty((x.shape[0],) + (1,) * (x.ndim - 1), dtype=x.dtype, device=x.device)
        return x * noise.bernoulli_(keep).div_(keep)


class LayerNorm2d(nn.LayerNorm):
    """Layer normalization over the channel axis of (N, C, *spatial) at every position
    (torchvision's LayerNorm2d): channels last, normalize, channels first again."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.movedim(1, -1)).movedim(-1, 1)


class TransposedLinear(nn.Module):
    """A linear layer whose weight is stored (in, out), as Hugging Face's Conv1D (GPT-2)."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features, dtype=dtype))
        self.bias = nn.Parameter(torch.zeros(out_features, dtype=dtype)) if bias else None
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        if self.bias is None:
            out = flat @ self.weight
        else:
            out = torch.addmm(self.bias, flat, self.weight)
        return out.reshape(*x.shape[:-1], -1)
