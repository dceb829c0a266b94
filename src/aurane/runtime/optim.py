"""Optimizer parameter groups: weight decay for weights only.

As in nanoGPT and Hugging Face's ``Trainer``, weight decay is meant for the weights of
linear, convolutional and attention layers: biases, normalization layers' scales and
shifts, and embedding tables are left out by default (decaying a norm's scale towards 0,
or every embedding row each step, fights what the layer is for); one-dimensional
parameters other than biases (scales) count as norms. ``no_weight_decay``
names what is left out: any of ``"bias"``, ``"norm"``, ``"embedding"``; an empty list
decays every parameter (torch's behaviour with ``model.parameters()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

NO_DECAY_DEFAULT = ("bias", "norm", "embedding")
_NORMS = (
    nn.modules.batchnorm._NormBase,
    nn.LayerNorm,
    nn.GroupNorm,
    nn.LocalResponseNorm,
    *((nn.RMSNorm,) if hasattr(nn, "RMSNorm") else ()),
)
_EMBEDDINGS = (nn.Embedding, nn.EmbeddingBag)


def decay_groups(
    model: nn.Module, weight_decay: float, no_weight_decay: Sequence[str] = NO_DECAY_DEFAULT
) -> list[dict[str, Any]]:
    """Two parameter groups for the optimizer: the decayed ones (``weight_decay``) and the
    others (0.0), each in ``model.named_parameters()`` order; an empty group is left out.
    A parameter shared by two modules is placed once, by its first owner."""
    skip = set(no_weight_decay)
    decayed: list[torch.nn.Parameter] = []
    kept: list[torch.nn.Parameter] = []
    seen: set[int] = set()
    for module in model.modules():
        for name, parameter in module.named_parameters(recurse=False):
            if id(parameter) in seen:
                continue
            seen.add(id(parameter))
            excluded = (
                ("bias" in skip and name == "bias")
                # a norm layer's scale and shift, and any other one-dimensional scale (a
                # hand-written RMS norm's, ConvNeXt's layer scale), as nanoGPT and timm do
                or ("norm" in skip and (isinstance(module, _NORMS) or parameter.dim() < 2))
                or ("embedding" in skip and isinstance(module, _EMBEDDINGS))
            )
            (kept if excluded else decayed).append(parameter)
    groups = [
        {"params": decayed, "weight_decay": weight_decay},
        {"params": kept, "weight_decay": 0.0},
    ]
    return [group for group in groups if group["params"]]
