"""Hand-written PyTorch twins of catalog entries, built from bound argument values.

Each twin takes the plain arguments (defaults filled in) and the per-sample input shapes
and returns an ``nn.Module`` whose ``forward`` takes the batched inputs positionally.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

Twin = Callable[[dict[str, Any], tuple[tuple[int, ...], ...]], nn.Module]


class Fn(nn.Module):
    """A parameter-free function as a module."""

    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        return self.fn(*xs)


class Positional(nn.Module):
    def __init__(self, max_len: int, features: int) -> None:
        super().__init__()
        self.pe = nn.Parameter(torch.zeros(1, max_len, features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.pe[:, : x.size(1)]


class Attention(nn.Module):
    """Self-attention on one input; cross-attention ``mha(x, memory, memory)`` on two."""

    def __init__(
        self,
        a: dict[str, Any],
        shapes: tuple[tuple[int, ...], ...] = (),
        need_weights: bool = False,
    ) -> None:
        super().__init__()
        masks = {a[k].index for k in ("attn_mask", "key_padding_mask") if a.get(k)}
        positional = [s for i, s in enumerate(shapes) if i not in masks]
        width = positional[1][-1] if len(positional) == 2 else a["dim"]
        self.mha = nn.MultiheadAttention(
            a["dim"],
            a["heads"],
            dropout=a["dropout"],
            bias=a["bias"],
            batch_first=True,
            kdim=width,
            vdim=width,
        )
        self.causal = a["causal"]
        self.need_weights = need_weights

        self.masks = {k: a[k].index for k in ("attn_mask", "key_padding_mask") if a.get(k)}
        self.heads = a["heads"]

    def forward(self, x: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        xs = (x, *rest)
        memory = [t for i, t in enumerate(xs[1:], 1) if i not in self.masks.values()]
        kv = memory[0] if memory else x
        mask = None
        if self.causal:
            mask = torch.triu(torch.ones(x.size(1), kv.size(1), dtype=torch.bool), diagonal=1)
        if "attn_mask" in self.masks:  # (batch, heads|1, L|1, S|1) -> (batch * heads, L, S)
            given = xs[self.masks["attn_mask"]]
            mask = given.expand(-1, self.heads, x.size(1), kv.size(1)).reshape(
                -1, x.size(1), kv.size(1)
            )
        padding = xs[self.masks["key_padding_mask"]] if "key_padding_mask" in self.masks else None
        return self.mha(
            x,
            kv,
            kv,
            attn_mask=mask,
            key_padding_mask=padding,
            need_weights=self.need_weights,
        )[0]


class ManualAttention(nn.Module):
    """softmax(q k^T * scale) v written out, key/value heads repeated for grouped queries."""

    def __init__(self, a: dict[str, Any]) -> None:
        super().__init__()
        self.a = a

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        groups = q.size(1) // k.size(1)
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        scale = self.a["scale"] if self.a["scale"] is not None else q.size(-1) ** -0.5
        scores = q @ k.transpose(-2, -1) * scale
        if self.a["causal"]:
            hidden = torch.ones(q.size(2), k.size(2), dtype=torch.bool).triu(1)
            scores = scores.masked_fill(hidden, float("-inf"))
        if mask is not None and mask.dtype == torch.bool:  # true = takes part
            scores = scores.masked_fill(~mask, float("-inf"))
        elif mask is not None:  # added to the scores
            scores = scores + mask
        weights = F.dropout(scores.softmax(dim=-1), self.a["dropout"], self.training)
        return weights @ v


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class HFRotary(nn.Module):
    """Hugging Face Llama's rotary embedding (LlamaRotaryEmbedding + apply_rotary_pos_emb)."""

    def __init__(self, base: float, dim: int) -> None:
        super().__init__()
        exponents = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
        self.register_buffer("inv_freq", 1.0 / (base**exponents), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[-2])[None].float()  # (1, seq)
        inv_freq: torch.Tensor = self.inv_freq  # type: ignore[assignment]
        # HF writes this outer product as a matmul with inner size 1: the same numbers, but
        # FlopCounterMode would count it; elementwise here so the twin has no MACs
        freqs = (inv_freq[None, :, None] * positions[:, None, :]).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)  # (1, seq, dim)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        return x * cos + rotate_half(x) * sin


class Recurrent(nn.Module):
    def __init__(self, cls: type[nn.RNNBase], a: dict[str, Any], features: int) -> None:
        super().__init__()
        self.rnn = cls(
            features,
            a["hidden"],
            num_layers=a["num_layers"],
            bias=a["bias"],
            batch_first=True,
            dropout=a["dropout"],
            bidirectional=a["bidirectional"],
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x)[0]


def _conv(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    cls = {2: nn.Conv1d, 3: nn.Conv2d, 4: nn.Conv3d}[len(s[0])]  # (C, *spatial)
    return cls(
        s[0][0],
        a["channels"],
        a["kernel"],
        stride=a["stride"],
        padding=a["padding"],
        dilation=a["dilation"],
        groups=a["groups"],
        bias=a["bias"],
    )


def _batchnorm(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    cls = nn.BatchNorm2d if len(s[0]) == 3 else nn.BatchNorm1d
    return cls(
        s[0][0],
        eps=a["eps"],
        momentum=a["momentum"],
        affine=a["affine"],
        track_running_stats=a["track_running_stats"],
    )


def _fn(fn: Callable[..., torch.Tensor]) -> Twin:
    return lambda a, s: Fn(fn)


class TransposedDense(nn.Module):
    """Hugging Face's Conv1D (GPT-2): a linear layer with its weight stored (in, out)."""

    def __init__(self, inputs: int, features: int, bias: bool) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(inputs, features))
        self.bias = nn.Parameter(torch.zeros(features)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x @ self.weight
        return y + self.bias if self.bias is not None else y


def _act(fn: Callable[..., torch.Tensor], *names: str) -> Twin:
    return lambda a, s: Fn(lambda x: fn(x, *(a[n] for n in names)))


TWINS: dict[str, Twin] = {
    "dense": lambda a, s: (
        TransposedDense(s[0][-1], a["features"], a["bias"])
        if a["transposed"]
        else nn.Linear(s[0][-1], a["features"], bias=a["bias"])
    ),
    "conv1d": _conv,
    "conv2d": _conv,
    "batchnorm": _batchnorm,
    "layer_norm": lambda a, s: nn.LayerNorm(
        s[0][-1], eps=a["eps"], elementwise_affine=a["elementwise_affine"], bias=a["bias"]
    ),
    "embedding": lambda a, s: nn.Embedding(
        a["vocabulary"],
        a["width"],
        padding_idx=a["padding_idx"],
        max_norm=a["max_norm"],
        scale_grad_by_freq=a["scale_grad_by_freq"],
        sparse=a["sparse"],
    ),
    "positional_encoding": lambda a, s: Positional(a["max_len"], s[0][1]),
    "dropout": lambda a, s: nn.Dropout(a["p"]),
    "flatten": lambda a, s: nn.Flatten(),
    "reshape": lambda a, s: Fn(lambda x: x.reshape(x.size(0), *a["shape"])),
    "global_avg_pool": _fn(lambda x: x.flatten(2).mean(-1)),
    "upsample": lambda a, s: Fn(
        lambda x: F.interpolate(
            x,
            size=a["size"],
            scale_factor=a["scale_factor"],
            mode=a["mode"],
            align_corners=a["align_corners"],
        )
    ),
    "add": _fn(lambda *xs: sum(xs[1:], xs[0])),
    "concat": lambda a, s: Fn(lambda *xs: torch.cat(xs, dim=a["dim"])),
    "multihead_attention": lambda a, s: Attention(a, s),
    "scaled_dot_product_attention": lambda a, s: ManualAttention(a),
    "rotary_embedding": lambda a, s: HFRotary(a["base"], s[0][-1]),
    "lstm": lambda a, s: Recurrent(nn.LSTM, a, s[0][1]),
    "gru": lambda a, s: Recurrent(nn.GRU, a, s[0][1]),
    "relu": _act(F.relu),
    "gelu": lambda a, s: Fn(lambda x: F.gelu(x, approximate=a["approximate"])),
    "sigmoid": _act(torch.sigmoid),
    "tanh": _act(torch.tanh),
    "softmax": _act(F.softmax, "dim"),
    "log_softmax": _act(F.log_softmax, "dim"),
    "leaky_relu": _act(F.leaky_relu, "slope"),
    "silu": _act(F.silu),
    "mish": _act(F.mish),
    "elu": _act(F.elu, "alpha"),
    "selu": _act(F.selu),
    "hardswish": _act(F.hardswish),
}


def unrolled_flops(cls: type[nn.RNNBase], a: dict[str, Any], shape: tuple[int, ...]) -> int:
    """FLOPs of an LSTM/GRU unrolled into cells, which FlopCounterMode can see (batch 1)."""
    from torch.utils.flop_counter import FlopCounterMode

    cell_cls = nn.LSTMCell if cls is nn.LSTM else nn.GRUCell
    hidden, directions = a["hidden"], 2 if a["bidirectional"] else 1
    x = torch.randn(shape[0], shape[1])
    with FlopCounterMode(display=False) as counter:
        for layer in range(a["num_layers"]):
            outputs = []
            for direction in range(directions):
                cell = cell_cls(x.size(1), hidden, bias=a["bias"])
                state: Any = None
                steps = range(x.size(0)) if direction == 0 else reversed(range(x.size(0)))
                out = [torch.empty(0)] * x.size(0)
                for t in steps:
                    state = cell(x[t : t + 1], state)
                    out[t] = state[0] if isinstance(state, tuple) else state
                outputs.append(torch.cat(out))
            x = torch.cat(outputs, dim=1)
            del layer
    return int(counter.get_total_flops())


def _register_tensor_twins() -> None:
    # twins of ops/arith.py, shape.py, reduce.py live in twins_tensor.py (it imports Fn)
    from .twins_tensor import TENSOR_TWINS

    TWINS.update(TENSOR_TWINS)
    from .twins_layers import LAYER_TWINS

    TWINS.update(LAYER_TWINS)
    from .twins_index import INDEX_TWINS

    TWINS.update(INDEX_TWINS)


_register_tensor_twins()
