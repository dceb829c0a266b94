"""Issue 24 item 3: a block that builds a layer from an axis of its input other than the
channels is one class whatever size its calls give that axis: the size is a constructor
argument (``in_features`` for the last axis, ``in_height``/``in_width`` for an image's
where the constructor reads a height), not a number per call. A spatial size every call
gives alike stays a number, as before. The generated code is executed (``run_accepted``
compares every shape and the parameter count with the IR's) and strict-loaded into
hand-written twins."""

from __future__ import annotations

import pytest

from aurane.verify import Generated

torch = pytest.importorskip("torch")
nn = torch.nn

from tests.backends.torch.one_class import CLASS, block_class, generated, same  # noqa: E402


def _generated(source: str) -> Generated:
    return generated(source, "input_axes.aur")


_block_class, _same = block_class, same


UNIT = """
model Unit0(w):
    def forward(x):
        return x -> dense(w, bias=false)

model Net:
    input_shape = SHAPE
    def forward(x):
        x -> Unit0(5) -> Unit0(4)
        return x
"""


class _UnitTwin(nn.Module):
    def __init__(self, in_features: int, w: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_features, w, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense1(x)


class _UnitNetTwin(nn.Module):
    def __init__(self, last: int) -> None:
        super().__init__()
        self.unit01 = _UnitTwin(last, 5)
        self.unit02 = _UnitTwin(5, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.unit02(self.unit01(x))


@pytest.mark.parametrize(
    "shape",
    [(6, 8), (3, 8, 8), (2, 3, 4, 8)],
    ids=["rank2-length-features", "rank3-image", "rank4-volume"],
)
def test_a_dense_on_the_last_axis_is_one_class(shape: tuple[int, ...]) -> None:
    gen = _generated(UNIT.replace("SHAPE", str(shape)))
    assert CLASS.findall(gen.code) == ["Unit0", "Net"], gen.code
    text = _block_class(gen, "Unit0")
    assert "def __init__(self, in_features, w):" in text, text
    assert "nn.Linear(in_features, w, bias=False)" in text, text
    assert f"self.unit01 = Unit0({shape[-1]}, 5)" in gen.code, gen.code
    assert "self.unit02 = Unit0(5, 4)" in gen.code, gen.code
    torch.manual_seed(0)
    _same(gen.module.Net(), _UnitNetTwin(shape[-1]), torch.randn(2, *shape))


HEAD = """
model Head(w):
    def forward(x):
        return x -> flatten -> dense(w)

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        a = x -> Head(5)
        b = x -> maxpool(2) -> Head(5)
        return concat(a, b, dim=1)
"""


class _HeadTwin(nn.Module):
    def __init__(self, in_channels: int, in_height: int, in_width: int, w: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_channels * in_height * in_width, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense1(torch.flatten(x, 1))


class _HeadNetTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head1 = _HeadTwin(3, 8, 8, 5)
        self.maxpool1 = nn.MaxPool2d(2)
        self.head2 = _HeadTwin(3, 4, 4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.head1(x), self.head2(self.maxpool1(x))], dim=1)


def test_an_image_read_whole_takes_its_height_and_width() -> None:
    gen = _generated(HEAD)
    assert CLASS.findall(gen.code) == ["Head", "Net"], gen.code
    text = _block_class(gen, "Head")
    assert "def __init__(self, in_channels, in_height, in_width, w):" in text, text
    assert "nn.Linear(in_channels * in_height * in_width, w)" in text, text
    assert "Head(3, 8, 8, 5)" in gen.code and "Head(3, 4, 4, 5)" in gen.code, gen.code
    torch.manual_seed(0)
    _same(gen.module.Net(), _HeadNetTwin(), torch.randn(2, 3, 8, 8))


def test_a_last_axis_every_call_gives_alike_stays_a_number() -> None:
    """Both calls see a last axis of 8: no constructor argument, the class as before."""
    gen = _generated(UNIT.replace("SHAPE", "(3, 8, 8)").replace("Unit0(5)", "Unit0(8)"))
    assert CLASS.findall(gen.code) == ["Unit0", "Net"], gen.code
    text = _block_class(gen, "Unit0")
    assert "def __init__(self, w):" in text, text
    assert "nn.Linear(8, w, bias=False)" in text, text
    assert "Unit0(8)" in gen.code and "Unit0(4)" in gen.code, gen.code


PROJ = """
model Proj:
    def forward(x):
        return x -> dense(4)

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        return x -> Proj as a -> maxpool(2) -> Proj as b
"""


class _ProjTwin(nn.Module):
    def __init__(self, in_features: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_features, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense1(x)


class _ProjNetTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = _ProjTwin(8)
        self.maxpool1 = nn.MaxPool2d(2)
        self.b = _ProjTwin(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.maxpool1(self.a(x)))


def test_a_block_without_parameters_reading_only_the_last_axis_takes_in_features() -> None:
    """Height and width both differ between the calls, but the constructor reads only the
    last axis: it is ``in_features``, not ``in_width``."""
    gen = _generated(PROJ)
    assert CLASS.findall(gen.code) == ["Proj", "Net"], gen.code
    text = _block_class(gen, "Proj")
    assert "def __init__(self, in_features):" in text, text
    assert "self.a = Proj(8)" in gen.code and "self.b = Proj(2)" in gen.code, gen.code
    torch.manual_seed(0)
    _same(gen.module.Net(), _ProjNetTwin(), torch.randn(2, 3, 8, 8))
