"""How ``aurane import`` writes the sizes of a block (issue 26 item 4): a size that is the
product of two constructor arguments (DenseNet's ``growth * bn_size``), one that follows
the block's input channels (a transition that halves them: ``x.shape[1] // 2``), and an
adaptive pool's output size as the module holds it (``(7, 7)`` stays a pair). Each import
is checked exact (strict load, equal outputs) and the text compiled back."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from aurane.frontend import run_front_end  # noqa: E402
from aurane.lift.pipeline import lift_module  # noqa: E402
from aurane.lift.spec import call_recording  # noqa: E402


def _lifted(builder: type, shape: tuple[int, ...]) -> str:
    torch.manual_seed(0)
    model, recorder = call_recording(builder)
    result = lift_module(model, input_shape=shape, constructors=recorder.arguments)
    assert result.exact and result.text is not None, result.problem
    assert run_front_end(result.text, "imported.aur").ok
    return result.text


class Dense(nn.Module):
    def __init__(self, channels: int, growth: int, bn_size: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, bn_size * growth, 1)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, self.conv2(self.conv1(x).relu())], 1)


class Halve(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels // 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x).relu()


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer1 = Dense(4, 4, 2)
        self.layer2 = Dense(8, 4, 2)
        self.halve1 = Halve(12)
        self.layer3 = Dense(6, 2, 3)
        self.halve2 = Halve(8)
        self.pool = nn.AdaptiveAvgPool2d((2, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.halve1(self.layer2(self.layer1(x)))
        return self.pool(self.halve2(self.layer3(x)))


def test_sizes_read_as_the_constructor_and_the_input_give_them() -> None:
    text = _lifted(Net, (4, 6, 6))
    assert "model DenseBlock(growth, bn_size):" in text, text  # (dense is an operation)
    assert "conv2d(growth * bn_size, kernel=1)" in text, text
    assert "model Halve:" in text and "conv2d(x.shape[1] // 2, kernel=1)" in text, text
    assert "Halve() as halve1" in text and "DenseBlock(2, 3) as layer3" in text, text
    assert "adaptive_avg_pool((2, 2))" in text, text


class Fold(nn.Module):
    """Halved, cut into two pieces, summed, then back to the input's channels: the last
    size reads the input's channels, so the input's name is not rebound before."""

    def __init__(self, shape: tuple[int, int]) -> None:
        super().__init__()
        channels = shape[0]
        self.a = nn.Conv2d(channels, channels // 2, 1)
        self.c = nn.Conv2d(channels // 4, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p, q = self.a(x).chunk(2, dim=1)
        return self.c(p + q)


class Folding(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.one = Fold((4, 1))
        self.two = Fold((8, 1))
        self.widen = nn.Conv2d(4, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.two(self.widen(self.one(x)))


def test_a_block_sized_by_its_input_keeps_the_input_name() -> None:
    text = _lifted(Folding, (4, 4, 4))
    assert "model Fold:" in text, text
    assert "conv2d(x.shape[1], kernel=1) as c" in text, text
    assert "h = x -> conv2d(x.shape[1] // 2, kernel=1) as a" in text, text  # not `x -> ...`


@pytest.mark.parametrize(
    ("count", "std", "written"),
    [
        (9, 0.0125, None),  # 9 values of N(0, 0.02) read 0.0125 often: still the default
        (10_000, 0.0125, 0.0125),  # 10,000 values say it is another std
        (10_000, 0.02, None),
        (9, 0.2, 0.2),  # ten times the default, whatever the count
    ],
)
def test_a_parameter_init_says_std_only_when_its_values_show_it(
    count: int, std: float, written: float | None
) -> None:
    from aurane.lift.lowering import _init_of

    values = torch.randn(count, generator=torch.Generator().manual_seed(0))
    values = (values - values.mean()) / values.std() * std  # exactly that sample std
    args = _init_of(values)
    assert args["init"] == "normal" and args.get("std") == written, args
