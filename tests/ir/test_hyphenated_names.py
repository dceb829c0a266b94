"""Container keys with hyphens (``as trunk_output.block1.block1-0``): torchvision's RegNet
names its stages' blocks ``block1-0``, which no attribute can be but an ``nn.ModuleDict``
key can, so its state dict loads into a program only if ``as`` accepts them."""

from __future__ import annotations

import types
from collections import OrderedDict

import pytest

from aurane.compile import compile_detailed
from aurane.tools.format import format_source
from tests.helpers import front

torch = pytest.importorskip("torch")
nn = torch.nn

SOURCE = """\
use torch

model Stage(width):
    def forward(x):
        x -> conv2d(width, kernel=1, bias=false) as proj -> batchnorm() as bn

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Stage(4) as trunk.block1.block1-0
          -> Stage(4) as trunk.block1.block1-1
          -> conv2d(5, kernel=1) as trunk.block2.b-a.proj
"""


class _Stage(nn.Module):
    def __init__(self, channels: int, width: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(channels, width, 1, bias=False)
        self.bn = nn.BatchNorm2d(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.proj(x))


def _reference() -> nn.Module:
    inner = nn.Sequential(OrderedDict([("proj", nn.Conv2d(4, 5, 1))]))
    blocks = OrderedDict(
        [
            (
                "block1",
                nn.Sequential(
                    OrderedDict([("block1-0", _Stage(3, 4)), ("block1-1", _Stage(4, 4))])
                ),
            ),
            ("block2", nn.Sequential(OrderedDict([("b-a", inner)]))),
        ]
    )
    net = nn.Module()
    net.trunk = nn.Sequential(blocks)
    return net


def test_hyphenated_container_keys_compile_and_load_a_reference_state_dict() -> None:
    result = compile_detailed(SOURCE, validate=True, filename="keys.aur")
    assert 'self.trunk.block1["block1-0"](x)' in result.output
    module = types.ModuleType("keys")
    exec(compile(result.output, "<keys>", "exec"), module.__dict__)
    net = module.Net().eval()
    reference = _reference().eval()
    net.load_state_dict(reference.state_dict(), strict=True)
    assert "trunk.block1.block1-0.proj.weight" in net.state_dict()
    x = torch.randn(2, 3, 8, 8)
    expected = reference.trunk(x)
    torch.testing.assert_close(net(x), expected)


def test_a_hyphen_needs_both_neighbours_touching_and_a_container() -> None:
    spaced = SOURCE.replace("block1-0", "block1 - 0")
    assert [d.code for d in front(spaced).diagnostics if d.is_error] == ["P006"]
    first = SOURCE.replace("as trunk.block1.block1-0", "as block1-0")
    assert [d.code for d in front(first).diagnostics if d.is_error] == ["P006"]


def test_the_formatter_keeps_hyphenated_keys() -> None:
    result = format_source(SOURCE, "keys.aur")
    assert result.error is None
    assert "as trunk.block1.block1-0" in (result.output or SOURCE)
