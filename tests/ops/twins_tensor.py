"""PyTorch twins of the tensor operations (ops/arith.py, ops/shape.py, ops/pad.py,
ops/parameter.py, ops/reduce.py).

Written from PyTorch's own functions, not from Aurane's emitters, with axis arguments as
Aurane gives them (they count the batch axis, as PyTorch's do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .twins import Fn

Twin = Callable[[dict[str, Any], tuple[tuple[int, ...], ...]], nn.Module]


def _flat(value: Any) -> tuple[int, ...]:
    items = tuple(value) if isinstance(value, tuple | list) else (value,)
    if len(items) == 1 and isinstance(items[0], tuple | list):
        items = tuple(items[0])
    return items


def _binary(fn: Callable[[Any, Any], torch.Tensor]) -> Twin:
    def build(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
        if len(s) == 2:
            return Fn(fn)
        return Fn(lambda x: fn(x, a["constant"]))

    return build


def _permute(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    dims = _flat(a["dims"])
    if len(dims) == len(s[0]):
        dims = (0, *dims)
    return Fn(lambda x: x.permute(*dims))


def _reduce(name: str) -> Twin:
    def build(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
        dim = a["dim"] if a["dim"] is not None else tuple(range(1, len(s[0]) + 1))

        def fn(x: torch.Tensor) -> torch.Tensor:
            if name == "max" and isinstance(dim, int):
                return torch.max(x, dim=dim, keepdim=a["keepdim"]).values
            if name == "max":
                return torch.amax(x, dim=dim, keepdim=a["keepdim"])
            return getattr(torch, name)(x, dim=dim, keepdim=a["keepdim"])  # type: ignore[no-any-return]

        return Fn(fn)

    return build


def _piece(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    if "size" in a:
        size = a["size"] if isinstance(a["size"], int) else list(a["size"])
        return Fn(lambda x: torch.split(x, size, dim=a["dim"])[a["index"]])
    return Fn(lambda x: torch.chunk(x, a["chunks"], dim=a["dim"])[a["index"]])


def _slice(a: dict[str, Any], s: tuple[tuple[int, ...], ...]) -> nn.Module:
    def fn(x: torch.Tensor) -> torch.Tensor:
        index: list[Any] = [slice(None)] * x.dim()
        index[a["dim"]] = slice(a["start"], a["end"], a["step"])
        return x[tuple(index)]

    return Fn(fn)


class Parameter(nn.Module):
    """A learned tensor expanded over a batch of 2 (the catalog test's batch)."""

    def __init__(self, a: dict[str, Any]) -> None:
        super().__init__()
        shape = _flat(a["shape"])
        self.shape = shape
        stored = (1, *shape) if a["batch_axis"] else shape
        self.value = nn.Parameter(torch.zeros(stored))

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        batch = xs[0].shape[0] if xs else 2
        value = self.value if torch.is_grad_enabled() else self.value.detach()
        # (FlopCounterMode's module hooks reject a grad-requiring view made under no_grad)
        return value.expand(batch, *self.shape)


TENSOR_TWINS: dict[str, Twin] = {
    "multiply": _binary(torch.mul),
    "subtract": _binary(torch.sub),
    "divide": _binary(torch.div),
    "matmul": lambda a, s: Fn(torch.matmul),
    "cross_batch_matmul": lambda a, s: Fn(lambda x, y: x @ y.t()),
    "permute": _permute,
    "transpose": lambda a, s: Fn(lambda x: torch.transpose(x, a["dim0"], a["dim1"])),
    "unsqueeze": lambda a, s: Fn(lambda x: torch.unsqueeze(x, a["dim"])),
    "squeeze": lambda a, s: Fn(lambda x: torch.squeeze(x, a["dim"])),
    "select": lambda a, s: Fn(lambda x: torch.select(x, a["dim"], a["index"])),
    "slice": _slice,
    "expand": lambda a, s: Fn(lambda x: x.expand(x.shape[0], *_flat(a["sizes"]))),
    "split": _piece,
    "chunk": _piece,
    "pad": lambda a, s: Fn(
        lambda x: F.pad(
            x,
            _flat(a["padding"]),
            mode=a["mode"],
            # torch refuses a non-zero value in the other modes: the twin passes it on
            value=a["value"] if a["mode"] == "constant" or a["value"] else None,
        )
    ),
    "pixel_shuffle": lambda a, s: nn.PixelShuffle(a["upscale_factor"]),
    "identity": lambda a, s: nn.Identity(),
    "mean": _reduce("mean"),
    "sum": _reduce("sum"),
    "max": _reduce("max"),
    "amax": _reduce("amax"),
    "parameter": lambda a, s: Parameter(a),
}
