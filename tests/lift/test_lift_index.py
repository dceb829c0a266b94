"""``aurane import`` of the index, shift and accumulation functions (issue 26, the catalog
operations of issue 23): ``gather``, ``take_along_dim``, ``index_select``, ``roll``,
``cumsum``, ``exp``, ``log``, ``where``, ``masked_fill``, comparisons and casts, an
``einsum`` that is a batched matrix product (``matmul``), and a persistent buffer read
directly (``buffer(...)``, its contents named by the catalog's init). Each import is exact
(the original's state dict loads strictly, outputs agree) and writes the operation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from aurane.backends.torch.buffer_helpers import relative_position_index  # noqa: E402
from aurane.lift.pipeline import lift_module  # noqa: E402
from aurane.lift.spec import call_recording  # noqa: E402


class Apply(nn.Module):
    """A linear layer (so that there is a weight to load), then ``fn``."""

    def __init__(self, fn: Callable[..., torch.Tensor], width: int = 6) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(self, self.proj(x))


class Windowed(nn.Module):
    """MaxViT's bias lookup as Aurane writes it: a relative-position index buffer expanded
    over the batch picks rows of a learned table with ``gather``."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("relative_position_index", relative_position_index(2, 2))
        self.table = nn.Parameter(torch.randn(9, 3))
        self.proj = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 4, 4, 3)
        index = self.relative_position_index.expand(x.shape[0], -1, -1)
        table = self.table.expand(x.shape[0], -1, -1)
        rows = index.flatten(1)[..., None].expand(-1, -1, 3)
        bias = table.gather(1, rows).reshape(x.shape[0], 4, 4, 3)
        return self.proj(x) + bias


class Indexed(nn.Module):
    """Picks along the last axis at positions computed from the input (0 or 1: a cast
    comparison), or at a buffer's positions (``arange``)."""

    def __init__(self, op: str) -> None:
        super().__init__()
        self.register_buffer("positions", torch.arange(6), persistent=op == "index_select")
        self.proj = nn.Linear(6, 6)
        self.op = op

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 4, 6)
        h = self.proj(x)
        if self.op == "index_select":  # (the identity, but only along the axis of 6)
            return torch.index_select(h, 2, self.positions)
        index = torch.roll((h > 0).long(), 1, 2)
        if self.op == "gather":
            return torch.gather(h, 2, index)
        return torch.take_along_dim(h, index, dim=2)


class Sinusoid(nn.Module):
    """A timestep embedding as diffusers and the zoo's U-Net write it: a frequency table
    computed without the input (``arange`` spread over the batch, scaled, ``exp``) times the
    input, then ``cos`` and ``sin``. The table is rebuilt as the operations computing it."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, t: torch.Tensor) -> torch.Tensor:  # t: (B, 1)
        freq = torch.arange(4, dtype=torch.float32, device=t.device).expand(t.shape[0], -1)
        freq = (freq * -2.3).exp()
        arg = t * freq
        return self.proj(torch.cat([arg.cos(), arg.sin()], dim=1))


class Triangle(nn.Module):
    """A constant the catalog has no operations for (``ones(...).tril()``): still a gap."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 4, 4)
        mask = torch.ones(4, 4, device=x.device).tril().expand(x.shape[0], -1, -1)
        return self.proj(x) * mask


CASES: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...], str]] = {
    "gather": (lambda: Indexed("gather"), (4, 6), "gather("),
    "take_along_dim": (lambda: Indexed("take_along_dim"), (4, 6), "take_along_dim("),
    "index_select": (lambda: Indexed("index_select"), (4, 6), "index_select("),
    "roll": (
        lambda: Apply(lambda m, h: torch.roll(h, shifts=(1, -2), dims=(1, 2))),
        (4, 6),
        "roll(",
    ),
    "roll-flattened": (
        lambda: Apply(lambda m, h: torch.roll(h, 5)),
        (4, 6),
        "roll(shifts=5, dims=())",
    ),
    "cumsum": (lambda: Apply(lambda m, h: h.cumsum(dim=1)), (4, 6), "cumsum("),
    "to": (lambda: Apply(lambda m, h: h.to(torch.float16).float()), (4, 6), "to("),
    "einsum-scores": (
        lambda: Apply(lambda m, h: torch.einsum("b i d, b j d -> b i j", h, h * 2)),
        (4, 6),
        "matmul(",
    ),
    "einsum-product": (
        lambda: Apply(lambda m, h: torch.einsum("bij,bjk->bik", h, h.transpose(1, 2))),
        (4, 6),
        "matmul(",
    ),
    "exp": (lambda: Apply(lambda m, h: h.exp()), (4, 6), "exp("),
    "log": (lambda: Apply(lambda m, h: (h * h + 1).log()), (4, 6), "log("),
    "where-tensor": (lambda: Apply(lambda m, h: torch.where(h > 0, h, -h)), (4, 6), "where("),
    "where-number": (lambda: Apply(lambda m, h: torch.where(h > 0, h, 0.5)), (4, 6), "where("),
    "masked_fill": (lambda: Apply(lambda m, h: h.masked_fill(h < 0, -1.0)), (4, 6), "masked_fill("),
    "buffer-gather": (Windowed, (4, 4, 3), "gather("),
    "cos": (lambda: Apply(lambda m, h: h.cos()), (4, 6), "cos("),
    "sin": (lambda: Apply(lambda m, h: torch.sin(h)), (4, 6), "sin("),
    "arange-frequencies": (lambda: Sinusoid(), (1,), 'arange(4, dtype="float32")'),
}


def _lift(build: Callable[[], nn.Module], shape: tuple[int, ...]) -> str:
    torch.manual_seed(0)
    model, recorder = call_recording(build)
    result = lift_module(model, input_shape=shape, constructors=recorder.arguments)
    assert result.exact and result.text is not None, result.problem
    return result.text


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_function_imports_exactly_as_its_operation(name: str) -> None:
    build, shape, written = CASES[name]
    text = _lift(build, shape)
    assert written in text, text


def test_a_constant_no_operation_computes_stays_a_gap() -> None:
    torch.manual_seed(0)
    model, recorder = call_recording(Triangle)
    result = lift_module(model, input_shape=(4, 4), constructors=recorder.arguments)
    assert not result.exact
    assert any("constant tensor" in gap.why for gap in result.gaps), result.gaps


def test_a_relative_position_buffer_is_a_buffer_with_its_window() -> None:
    text = _lift(Windowed, (4, 4, 3))
    assert 'init="relative_position_index"' in text and "window=(2, 2)" in text, text
    assert "as relative_position_index" in text, text  # the state dict's key
