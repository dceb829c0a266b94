"""Models for the ``aurane import`` tests, built cheaply and the same way every time.

``build`` records constructor arguments (as ``aurane import SPEC`` does) and, where the
builder allows, builds on the ``meta`` device and fills the weights with seeded random
values: a 300M-parameter ViT-L builds in a second instead of ten (its default init is a
truncated normal). The lift's faithfulness check does not care where the weights came from;
constant tensors (norm weights, running statistics) get values near their usual ones.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from aurane.lift.spec import Recorder, call_recording

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download: models come from configs


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
            tensor.zero_()
            continue
        if tensor.dim() >= 2:
            bound = 1.0 / math.sqrt(max(1, tensor[0].numel()))
            if tensor.numel() > 4 * PERIOD:
                flat = tensor.view(-1)
                repeats = -(-flat.numel() // PERIOD)
                flat.copy_(block.repeat(repeats)[: flat.numel()] * bound)
            else:
                tensor.uniform_(-bound, bound, generator=generator)
        elif name.endswith("running_var"):
            tensor.copy_(torch.rand(tensor.shape, generator=generator) + 0.5)
        elif name.endswith("weight"):
            tensor.copy_(1 + 0.1 * torch.randn(tensor.shape, generator=generator))
        else:
            tensor.copy_(0.1 * torch.randn(tensor.shape, generator=generator))


def _only_float_state(model: nn.Module) -> bool:
    """Every buffer is in the state dict and floating (or a batch counter): filling it is
    harmless. Index buffers (Swin's relative positions) must keep their computed values."""
    persistent = set(model.state_dict())
    for name, buffer in model.named_buffers():
        if name not in persistent:
            return False
        if not buffer.is_floating_point() and not name.endswith("num_batches_tracked"):
            return False
    return True


def build(builder: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[nn.Module, Recorder]:
    """``builder(*args, **kwargs)`` in eval mode, with its constructors' arguments."""
    torch.manual_seed(0)
    try:
        with torch.device("meta"):
            model, recorder = call_recording(builder, *args, **kwargs)
    except Exception:  # builders that compute with tensors (RegNet's widths) need real ones
        model = None
    if model is None or not _only_float_state(model):
        model, recorder = call_recording(builder, *args, **kwargs)
        return model.eval(), recorder
    shared: dict[int, list[tuple[nn.Module, str]]] = {}  # tied weights (GPT-2's head)
    for module in model.modules():
        for name, parameter in module.named_parameters(recurse=False):
            shared.setdefault(id(parameter), []).append((module, name))
    model.to_empty(device="cpu")  # gives each holder its own tensor: tie them again
    for holders in shared.values():
        first, name = holders[0]
        for module, other in holders[1:]:
            setattr(module, other, getattr(first, name))
    fill(model)
    return model.eval(), recorder
