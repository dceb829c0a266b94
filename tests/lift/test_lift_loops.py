"""How ``aurane import`` writes runs of one block (issue 26 item 1): calls named with
consecutive numbers become a compile-time loop with a templated name
(``for i in range(n): x -> Unit(8) as layers.{i + 1}``), instances of a class that differ
only in such a count are one block taking it, and a DenseNet-like block whose layers take
the list of every earlier feature map becomes a loop of one layer block that returns
``concat(x, new)``. Every import is checked exact (the program compiles, the original's
state dict loads with ``strict=True``, equal outputs), formatted and lint-clean."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from aurane.lift.pipeline import lift_module  # noqa: E402
from aurane.lift.spec import call_recording  # noqa: E402
from aurane.tools.format import format_text  # noqa: E402
from aurane.tools.lint import lint_source  # noqa: E402
from tests.lift.models import Unit  # noqa: E402


def _lifted(builder: type, shape: tuple[int, ...], *args: object) -> str:
    torch.manual_seed(0)
    model, recorder = call_recording(builder, *args)
    result = lift_module(model, input_shape=shape, constructors=recorder.arguments)
    assert result.exact and result.text is not None, result.problem
    assert format_text(result.text) == result.text
    assert not lint_source(result.text, "imported.aur"), result.text
    return result.text


class Stem(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(3, width)
        self.scale = nn.Parameter(torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * self.scale


class Continued(nn.Module):
    """A numbered container whose first child differs (ResNet's downsampling block): the
    rest is a loop (a continuing ``repeat`` would be other IR nodes, docs/import.md)."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(Stem(8), Unit(8), Unit(8), Unit(8))
        self.head = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.layers(x))


def test_the_rest_of_a_numbered_container_after_its_first_child_is_a_loop() -> None:
    text = _lifted(Continued, (3,))
    assert "x -> Stem(8) as layers.0\n" in text and "for i in range(3):" in text, text
    assert "x -> Unit(8) as layers.{i + 1}\n" in text and "repeat(" not in text, text


class Numbered(nn.Module):
    """A numbered container with a different child after the run: no ``repeat`` (it must
    end the container), a loop over ``layers.1..3``."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(Stem(8), Unit(8), Unit(8), Unit(8), nn.Linear(8, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def test_a_numbered_container_of_identical_blocks_is_a_loop() -> None:
    text = _lifted(Numbered, (3,))
    assert "for i in range(3):\n" in text, text
    assert "x -> Unit(8) as layers.{i + 1}\n" in text, text
    assert "as layers.1" not in text and "as layers.4" in text and "repeat(" not in text, text


class Named(nn.Module):
    """Word-named children with numbers (``block1..3``) whose input is read again after
    them: the loop runs on a name of its own, the input keeps its."""

    def __init__(self) -> None:
        super().__init__()
        self.block1, self.block2, self.block3 = Unit(6), Unit(6), Unit(6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block3(self.block2(self.block1(x))) + x


def test_numbered_names_are_a_loop_and_the_input_read_again_keeps_its_name() -> None:
    text = _lifted(Named, (6,))
    assert "h = x\n" in text and "for i in range(3):" in text, text
    assert "h -> Unit(6) as block{i + 1}" in text, text


class TwoCalls(nn.Module):
    """Two calls chain as well as a loop: they stay a chain at the top."""

    def __init__(self) -> None:
        super().__init__()
        self.block1, self.block2 = Unit(6), Unit(6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block2(self.block1(x))


def test_two_calls_at_the_top_stay_a_chain() -> None:
    text = _lifted(TwoCalls, (6,))
    assert "for " not in text and "as block1" in text and "as block2" in text, text


class Stage(nn.Module):
    def __init__(self, depth: int, width: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*[Unit(width) for _ in range(depth)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


class Stages(nn.Module):
    """Stages that differ only in how many blocks they repeat: one ``Stage(depth)``."""

    def __init__(self) -> None:
        super().__init__()
        self.stage1, self.stage2 = Stage(2, 5), Stage(3, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.stage2(self.stage1(x))


def test_blocks_that_differ_only_in_a_repeat_count_take_it() -> None:
    text = _lifted(Stages, (5,))
    assert text.count("\nmodel Stage(") == 1, text
    assert "model Stage(depth, width):" in text, text
    assert "repeat(Unit(width), depth) as blocks" in text, text
    assert "Stage(2, 5) as stage1" in text and "Stage(3, 5) as stage2" in text, text


class ListLayer(nn.Module):
    """torchvision's ``_DenseLayer``: takes the list of every earlier feature map."""

    def __init__(self, channels: int, growth: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(channels)
        self.conv = nn.Conv2d(channels, growth, 3, padding=1, bias=False)

    def forward(self, features: list[torch.Tensor]) -> torch.Tensor:
        return self.conv(torch.relu(self.norm(torch.cat(features, 1))))


class ListBlock(nn.ModuleDict):
    """torchvision's ``_DenseBlock``: each layer sees all before it; the block returns
    them all, concatenated."""

    def __init__(self, layers: int, channels: int, growth: int) -> None:
        super().__init__()
        for i in range(layers):
            self.add_module(f"layer{i + 1}", ListLayer(channels + i * growth, growth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = [x]
        for layer in self.values():
            features.append(layer(features))
        return torch.cat(features, 1)


class ListNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block1 = ListBlock(2, 4, 2)
        self.down = nn.Conv2d(8, 5, 1)
        self.block2 = ListBlock(4, 5, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block2(self.down(self.block1(x)))


def test_layers_of_a_list_of_features_are_one_block_in_a_loop() -> None:
    text = _lifted(ListNet, (4, 5, 5))
    assert text.count("\nmodel ") == 3, text  # ListLayer, ListBlock and ListNet
    assert "return concat(x, h)" in text, text  # the layer grows its input
    assert "model ListBlock(layers, growth):" in text, text
    assert "for i in range(layers):" in text, text
    assert "x -> ListLayer(growth) as layer{i + 1}" in text, text
    assert "ListBlock(2, 2) as block1" in text and "ListBlock(4, 2) as block2" in text, text
    assert "conv2d(growth, kernel=3, padding=1, bias=false) as conv" in text, text
    assert "concat(x, h, " not in text, text  # no layer inline
