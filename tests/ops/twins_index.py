"""PyTorch twins of ops/index.py and ops/buffer.py, written from torch's own functions (and,
for buffers, from torchvision's Swin and the Transformer paper), not from Aurane's emitters.

Inputs arrive positionally, tensor keywords (``index=``, ``mask=``) after the positional
ones, as the catalog test makes them; constructors take no input and use a batch of 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .twins import Fn

Twin = Callable[[dict[str, Any], tuple[tuple[int, ...], ...]], nn.Module]
BATCH = 2


def _ints(value: Any) -> tuple[int, ...]:
    items = tuple(value) if isinstance(value, tuple | list) else (value,)
    if len(items) == 1 and isinstance(items[0], tuple | list):
        items = tuple(items[0])
    return items


def _fill(value: Any) -> float:
    return {"-inf": -math.inf, "inf": math.inf}.get(value, value)  # type: ignore[arg-type]


def _compare(fn: Callable[[Any, Any], torch.Tensor]) -> Twin:
    def build(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
        if len(s) == 2:
            return Fn(fn)
        return Fn(lambda x: fn(x, a["constant"]))

    return build


def _dtype(name: str | None) -> torch.dtype | None:
    return None if name is None else getattr(torch, name)


def _arange(a: dict[str, Any]) -> torch.Tensor:
    start, end = (0, a["start"]) if a["end"] is None else (a["start"], a["end"])
    return torch.arange(start, end, a["step"], dtype=_dtype(a["dtype"]))


class Const(nn.Module):
    """A tensor made from the arguments, repeated for a batch of 2."""

    def __init__(self, make: Callable[[], torch.Tensor]) -> None:
        super().__init__()
        self.make = make

    def forward(self) -> torch.Tensor:
        value = self.make()
        return value.expand(BATCH, *value.shape)


def swin_relative_position_index(height: int, width: int) -> torch.Tensor:
    """torchvision.models.swin_transformer's ShiftedWindowAttention.define_relative_position_index."""
    coords_h = torch.arange(height)
    coords_w = torch.arange(width)
    coords = torch.stack(torch.meshgrid(coords_h, coords_w, indexing="ij"))  # 2, Wh, Ww
    coords_flatten = torch.flatten(coords, 1)  # 2, Wh*Ww
    relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]  # 2, Wh*Ww, Wh*Ww
    relative_coords = relative_coords.permute(1, 2, 0).contiguous()  # Wh*Ww, Wh*Ww, 2
    relative_coords[:, :, 0] += height - 1  # shift to start from 0
    relative_coords[:, :, 1] += width - 1
    relative_coords[:, :, 0] *= 2 * width - 1
    return relative_coords.sum(-1)


def transformer_sinusoid(positions: int, width: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."""
    pos = torch.arange(positions, dtype=torch.float64)[:, None]
    i = torch.arange(0, width, 2, dtype=torch.float64)[None, :]
    angles = pos / torch.pow(10000.0, i / width)
    table = torch.empty(positions, width, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()


def buffer_contents(a: dict[str, Any]) -> torch.Tensor:
    shape = _ints(a["shape"])
    init = a["init"]
    if init == "arange":
        value = torch.arange(shape[0])
    elif init == "causal_mask":
        value = torch.tril(torch.ones(shape, dtype=torch.bool))
    elif init == "sinusoid":
        value = transformer_sinusoid(*shape)
    elif init == "relative_position_index":
        value = swin_relative_position_index(*_ints(a["window"]))
    elif init == "full":
        value = torch.full(shape, _fill(a["value"]), dtype=torch.float32)
    else:
        value = getattr(torch, init)(shape)
    return value if a["dtype"] is None else value.to(_dtype(a["dtype"]))


def _index_select(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    def fn(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        # per sample: torch.index_select on each batch element
        return torch.stack(
            [
                torch.index_select(x[b], a["dim"] - 1 if a["dim"] > 0 else a["dim"], index[b])
                for b in range(x.shape[0])
            ]
        )

    return Fn(fn)


def _lookup(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    return Fn(
        lambda table, index: torch.stack(
            [nn.functional.embedding(index[b], table[b]) for b in range(table.shape[0])]
        )
    )


def _where(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    if len(s) == 3:
        return Fn(torch.where)
    return Fn(lambda c, x: torch.where(c, x, a["other"]))


INDEX_TWINS: dict[str, Twin] = {
    "eq": _compare(torch.eq),
    "ne": _compare(torch.ne),
    "lt": _compare(torch.lt),
    "le": _compare(torch.le),
    "gt": _compare(torch.gt),
    "ge": _compare(torch.ge),
    "logical_and": lambda a, s: Fn(torch.logical_and),
    "logical_or": lambda a, s: Fn(torch.logical_or),
    "logical_not": lambda a, s: Fn(torch.logical_not),
    "where": _where,
    "masked_fill": lambda a, s: Fn(lambda x, m: x.masked_fill(m, _fill(a["value"]))),
    "abs": lambda a, s: Fn(torch.abs),
    "log": lambda a, s: Fn(torch.log),
    "exp": lambda a, s: Fn(torch.exp),
    "sin": lambda a, s: Fn(torch.sin),
    "cos": lambda a, s: Fn(torch.cos),
    "clamp": lambda a, s: Fn(lambda x: torch.clamp(x, a["min"], a["max"])),
    "to": lambda a, s: Fn(lambda x: x.to(_dtype(a["dtype"]))),
    "cumsum": lambda a, s: Fn(lambda x: torch.cumsum(x, a["dim"])),
    "roll": lambda a, s: Fn(lambda x: torch.roll(x, _ints(a["shifts"]), _ints(a["dims"]))),
    "arange": lambda a, s: Const(lambda: _arange(a)),
    "zeros": lambda a, s: Const(
        lambda: torch.zeros(_ints(a["shape"]), dtype=_dtype(a["dtype"] or "float32"))
    ),
    "ones": lambda a, s: Const(
        lambda: torch.ones(_ints(a["shape"]), dtype=_dtype(a["dtype"] or "float32"))
    ),
    "full": lambda a, s: Const(
        lambda: torch.full(
            _ints(a["shape"]), _fill(a["value"]), dtype=_dtype(a["dtype"] or "float32")
        )
    ),
    "zeros_like": lambda a, s: Fn(lambda x: torch.zeros_like(x, dtype=_dtype(a["dtype"]))),
    "ones_like": lambda a, s: Fn(lambda x: torch.ones_like(x, dtype=_dtype(a["dtype"]))),
    "full_like": lambda a, s: Fn(
        lambda x: torch.full_like(x, _fill(a["value"]), dtype=_dtype(a["dtype"] or "float32"))
    ),
    "gather": lambda a, s: Fn(lambda x, i: torch.gather(x, a["dim"], i)),
    "take_along_dim": lambda a, s: Fn(lambda x, i: torch.take_along_dim(x, i, dim=a["dim"])),
    "index_select": _index_select,
    "lookup": _lookup,
    "buffer": lambda a, s: Const(lambda: buffer_contents(a)),
}
