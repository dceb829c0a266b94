"""Issue 24 item 3: the channel/feature sizes of a block's inputs after the first are
constructor arguments (``skip_channels``) where its calls give them differently, so a block
called with different skip widths is one class; a size every call gives alike stays a
number. The generated code is executed and strict-loaded into hand-written twins."""

from __future__ import annotations

import pytest

from aurane.verify import Generated

torch = pytest.importorskip("torch")
nn = torch.nn

from tests.backends.torch.one_class import CLASS, block_class, generated, same  # noqa: E402


def _generated(source: str) -> Generated:
    return generated(source, "later_inputs.aur")


_block_class, _same = block_class, same


FUSE = """
model Fuse(width):
    def forward(x, skip):
        concat(x, skip, dim=1) -> conv2d(width, kernel=1)

model Net:
    input_shape = {x: (3, 8, 8), a: (4, 8, 8), b: (6, 8, 8)}
    def forward(x, a, b):
        h = Fuse(x, a, 5) as fuse1
        return Fuse(h, b, 7) as fuse2
"""


class _FuseTwin(nn.Module):
    def __init__(self, in_channels: int, skip_channels: int, width: int) -> None:
        super().__init__()
        self.conv2d1 = nn.Conv2d(in_channels + skip_channels, width, kernel_size=1)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        return self.conv2d1(torch.cat([x, skip], dim=1))


class _FuseNetTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fuse1 = _FuseTwin(3, 4, 5)
        self.fuse2 = _FuseTwin(5, 6, 7)

    def forward(self, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.fuse2(self.fuse1(x, a), b)


def test_a_block_called_with_two_skip_widths_is_one_class() -> None:
    gen = _generated(FUSE)
    assert CLASS.findall(gen.code) == ["Fuse", "Net"], gen.code
    text = _block_class(gen, "Fuse")
    assert "def __init__(self, in_channels, skip_channels, width):" in text, text
    assert "nn.Conv2d(in_channels + skip_channels, width, kernel_size=1)" in text, text
    assert "self.fuse1 = Fuse(3, 4, 5)" in gen.code and "self.fuse2 = Fuse(5, 6, 7)" in gen.code
    torch.manual_seed(0)
    x, a, b = torch.randn(2, 3, 8, 8), torch.randn(2, 4, 8, 8), torch.randn(2, 6, 8, 8)
    _same(gen.module.Net(), _FuseNetTwin(), x, a, b)


def test_a_later_size_every_call_gives_alike_stays_a_number() -> None:
    """Both calls take a 4-channel skip: no constructor argument, the class as before."""
    gen = _generated(FUSE.replace("b: (6, 8, 8)", "b: (4, 8, 8)"))
    assert CLASS.findall(gen.code) == ["Fuse", "Net"], gen.code
    text = _block_class(gen, "Fuse")
    assert "def __init__(self, in_channels, width):" in text, text
    assert "nn.Conv2d(in_channels + 4, width, kernel_size=1)" in text, text


MIX = """
model Mix(out):
    def forward(x, cond):
        return add(dense(x, out), dense(cond, out))

model Net:
    input_shape = {x: (6,), c1: (3,), c2: (5,)}
    def forward(x, c1, c2):
        h = Mix(x, c1, 4) as mix1
        return Mix(h, c2, 2) as mix2
"""


class _MixTwin(nn.Module):
    def __init__(self, in_features: int, cond_features: int, out: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_features, out)
        self.dense2 = nn.Linear(cond_features, out)

    def forward(self, x: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        return self.dense1(x) + self.dense2(cond)


class _MixNetTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mix1 = _MixTwin(6, 3, 4)
        self.mix2 = _MixTwin(4, 5, 2)

    def forward(self, x: torch.Tensor, c1: torch.Tensor, c2: torch.Tensor) -> torch.Tensor:
        return self.mix2(self.mix1(x, c1), c2)


def test_feature_sizes_of_a_later_input_are_named_after_it() -> None:
    gen = _generated(MIX)
    assert CLASS.findall(gen.code) == ["Mix", "Net"], gen.code
    text = _block_class(gen, "Mix")
    assert "def __init__(self, in_features, cond_features, out):" in text, text
    assert "nn.Linear(cond_features, out)" in text, text
    torch.manual_seed(0)
    x, c1, c2 = torch.randn(2, 6), torch.randn(2, 3), torch.randn(2, 5)
    _same(gen.module.Net(), _MixNetTwin(), x, c1, c2)


# a block's output width that depends on its later input, used inside another block: the
# caller's class writes it in its own terms (``w + skip_channels``), one class per block
NESTED = """
model Up(width):
    def forward(x, skip):
        h = conv2d(x, width, kernel=1)
        return concat(h, skip, dim=1)

model Stage(w):
    def forward(x, skip):
        Up(x, skip, w) -> conv2d(w, kernel=3, padding=1)

model Net:
    input_shape = {x: (3, 8, 8), a: (2, 8, 8), b: (5, 8, 8)}
    def forward(x, a, b):
        h = Stage(x, a, 4) as stage1
        return Stage(h, b, 6) as stage2
"""


class _UpTwin(nn.Module):
    def __init__(self, in_channels: int, width: int) -> None:
        super().__init__()
        self.conv2d1 = nn.Conv2d(in_channels, width, kernel_size=1)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.conv2d1(x), skip], dim=1)


class _StageTwin(nn.Module):
    def __init__(self, in_channels: int, skip_channels: int, w: int) -> None:
        super().__init__()
        self.up1 = _UpTwin(in_channels, w)
        self.conv2d1 = nn.Conv2d(w + skip_channels, w, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        return self.conv2d1(self.up1(x, skip))


class _StageNetTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stage1 = _StageTwin(3, 2, 4)
        self.stage2 = _StageTwin(4, 5, 6)

    def forward(self, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.stage2(self.stage1(x, a), b)


def test_an_output_width_from_a_later_input_is_rebased_at_the_call() -> None:
    gen = _generated(NESTED)
    assert CLASS.findall(gen.code) == ["Up", "Stage", "Net"], gen.code
    stage = _block_class(gen, "Stage")
    assert "def __init__(self, in_channels, skip_channels, w):" in stage, stage
    assert "nn.Conv2d(w + skip_channels, w, kernel_size=3, padding=1)" in stage, stage
    # Up's skip width differs between its calls but no layer of Up is built from it
    up = _block_class(gen, "Up")
    assert "def __init__(self, in_channels, width):" in up, up
    torch.manual_seed(0)
    x, a, b = torch.randn(2, 3, 8, 8), torch.randn(2, 2, 8, 8), torch.randn(2, 5, 8, 8)
    _same(gen.module.Net(), _StageNetTwin(), x, a, b)


def test_a_constructor_name_taken_by_a_parameter_gets_an_underscore() -> None:
    gen = _generated(
        """
        model Fuse(skip_channels):
            def forward(x, skip):
                concat(x, skip, dim=1) -> conv2d(skip_channels, kernel=1)

        model Net:
            input_shape = {x: (3, 8, 8), a: (4, 8, 8), b: (6, 8, 8)}
            def forward(x, a, b):
                h = Fuse(x, a, 5)
                return Fuse(h, b, 7)
        """
    )
    assert CLASS.findall(gen.code) == ["Fuse", "Net"], gen.code
    text = _block_class(gen, "Fuse")
    assert "def __init__(self, in_channels, skip_channels_, skip_channels):" in text, text
    assert "nn.Conv2d(in_channels + skip_channels_, skip_channels, kernel_size=1)" in text
    net = gen.module.Net()
    out = net(torch.randn(2, 3, 8, 8), torch.randn(2, 4, 8, 8), torch.randn(2, 6, 8, 8))
    assert out.shape == (2, 7, 8, 8)


class _PlainFuseNetTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fuse1 = _FuseTwin(3, 4, 8)
        self.fuse2 = _FuseTwin(8, 6, 8)

    def forward(self, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.fuse2(self.fuse1(x, a), b)


def test_a_block_without_parameters_takes_its_later_input_sizes_too() -> None:
    """A parameterless block called at several input shapes is resolved per call as a
    parameterised one (docs/codegen.md): one class for both skip widths."""
    gen = _generated(
        """
        model Fuse:
            def forward(x, skip):
                concat(x, skip, dim=1) -> conv2d(8, kernel=1)

        model Net:
            input_shape = {x: (3, 8, 8), a: (4, 8, 8), b: (6, 8, 8)}
            def forward(x, a, b):
                h = Fuse(x, a)
                return Fuse(h, b)
        """
    )
    assert CLASS.findall(gen.code) == ["Fuse", "Net"], gen.code
    assert "def __init__(self, in_channels, skip_channels):" in _block_class(gen, "Fuse")
    assert "self.fuse1 = Fuse(3, 4)" in gen.code and "self.fuse2 = Fuse(8, 6)" in gen.code
    torch.manual_seed(0)
    x, a, b = torch.randn(2, 3, 8, 8), torch.randn(2, 4, 8, 8), torch.randn(2, 6, 8, 8)
    _same(gen.module.Net(), _PlainFuseNetTwin(), x, a, b)
