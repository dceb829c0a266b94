"""Helper functions of attention, rotary embedding and channel rounding."""

from __future__ import annotations

import torch
from torch import nn


def self_attention(
    attention: nn.MultiheadAttention,
    x: torch.Tensor,
    padding_mask: torch.Tensor | None = None,
    causal: bool = False,
) -> torch.Tensor:
    """Batch-first self-attention; padding_mask is (batch, seq) with True = padding.

    Padded keys are hidden and padded queries output zeros. A padded query attends to
    every key instead of none, so no softmax row is all -inf and outputs and gradients
    stay finite even for fully padded sequences; its output is zeroed afterwards.
    """
    seq_len = x.shape[1]
    attn_mask = None
    if causal:
        attn_mask = torch.ones(seq_len, seq_len, dtype=torch.bool, device=x.device).triu(1)
    if padding_mask is None:
        return attention(x, x, x, attn_mask=attn_mask, need_weights=False)[0]
    hidden = padding_mask[:, None, :].expand(-1, seq_len, -1)  # (batch, query, key)
    if attn_mask is not None:
        hidden = hidden | attn_mask
    hidden = hidden & ~padding_mask[:, :, None]
    hidden = hidden.repeat_interleave(attention.num_heads, dim=0)
    out = attention(x, x, x, attn_mask=hidden, need_weights=False)[0]
    return out.masked_fill(padding_mask[:, :, None], 0.0)


def rotary_embedding(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding over (..., seq, head_dim), rotate-half as in HF Llama."""
    seq_len, head_dim = x.shape[-2], x.shape[-1]
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float32, device=x.device) / head_dim
    inv_freq = 1.0 / base**exponents
    positions = torch.arange(seq_len, dtype=torch.float32, device=x.device)
    angles = torch.outer(positions, inv_freq)
    angles = torch.cat((angles, angles), dim=-1)  # (seq, head_dim)
    x1, x2 = x.chunk(2, dim=-1)
    rotated = torch.cat((-x2, x1), dim=-1)
    return x * angles.cos().to(x.dtype) + rotated * angles.sin().to(x.dtype)


def make_divisible(value: float, divisor: int, min_value: int | None = None) -> int:
    """torchvision's _make_divisible: a multiple of divisor, never 10% below value."""
    floor = divisor if min_value is None else min_value
    rounded = max(floor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded
