"""Models for the ``aurane import`` tests, built cheaply and the same way every time.

``build`` records constructor arguments (as ``aurane import SPEC`` does), skips the
builder's weight initialisation and fills the weights with seeded random values instead: a
300M-parameter ViT-L builds in a second instead of ten (its default init is a truncated
normal). The lift's faithfulness check does not care where the weights came from; constant
tensors (norm weights, running statistics) get values near their usual ones.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from aurane.lift.spec import Recorder, call_recording

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download: models come from configs


class Unit(nn.Module):
    """A block of one dense layer and a relu: the repeated child of the structure tests."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


PERIOD = 65_521  # a prime: the tiled values of a big weight repeat out of step with its rows


@torch.no_grad()
def fill(model: nn.Module, seed: int = 0) -> None:
    """Seeded values: weights uniform in +-1/sqrt(fan_in) (big ones tiled from one random
    block of PERIOD values, at copying speed), norm weights near 1, biases and means near
    0, variances in [0.5, 1.5)."""
    generator = torch.Generator().manual_seed(seed)
    block = torch.rand(PERIOD, generator=generator) * 2 - 1
    for name, tensor in model.state_dict(keep_vars=True).items():
        if not tensor.is_floating_point():
            continue  # counters, index tables (Swin's relative positions): as built
        if tensor.dim() >= 2:
            bound = 1.0 / math.sqrt(max(1, tensor[0].numel()))
            if tensor.numel() > 4 * PERIOD:
                flat, scaled = tensor.view(-1), block * bound
                rows = flat.numel() // PERIOD
                flat[: rows * PERIOD].view(rows, PERIOD).copy_(scaled.expand(rows, PERIOD))
                flat[rows * PERIOD :].copy_(scaled[: flat.numel() - rows * PERIOD])
            else:
                tensor.uniform_(-bound, bound, generator=generator)
        elif name.endswith("running_var"):
            tensor.copy_(torch.rand(tensor.shape, generator=generator) + 0.5)
        elif name.endswith("weight"):
            tensor.copy_(1 + 0.1 * torch.randn(tensor.shape, generator=generator))
        else:
            tensor.copy_(0.1 * torch.randn(tensor.shape, generator=generator))


_INIT_FUNCTIONS = (
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
)


@contextlib.contextmanager
def _no_initialisation() -> Iterator[None]:
    """``torch.nn.init``'s functions and the tensors' own ``normal_``/``uniform_`` as
    no-ops while a model is built: its weights are filled afterwards, much faster (RegNet
    computes its widths with tensors, so building on the meta device is no option)."""
    saved_init = {name: getattr(nn.init, name) for name in _INIT_FUNCTIONS}
    saved_tensor = {name: getattr(torch.Tensor, name) for name in ("normal_", "uniform_")}

    def keep(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        return tensor

    try:
        for name in _INIT_FUNCTIONS:
            setattr(nn.init, name, keep)
        for name in saved_tensor:
            setattr(torch.Tensor, name, keep)
        yield
    finally:
        for name, function in saved_init.items():
            setattr(nn.init, name, function)
        for name, method in saved_tensor.items():
            setattr(torch.Tensor, name, method)


def build(builder: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[nn.Module, Recorder]:
    """``builder(*args, **kwargs)`` in eval mode, with its constructors' arguments."""
    torch.manual_seed(0)
    with _no_initialisation():
        model, recorder = call_recording(builder, *args, **kwargs)
    fill(model)
    return model.eval(), recorder
