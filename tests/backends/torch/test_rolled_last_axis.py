"""Issue 24 item 3: a rolled block whose layers read the last axis of a sequence (dense
layers on (seq, features), DenseNet's growth by ``concat(x, h, dim=-1)``) is one class whose
constructor takes ``in_features``, the last axis; the channels' walk wrote the feature size
as a number per call and kept a class per call. Each program is executed (every shape and
the parameter count checked against the IR), strict-loads the state dict of the build with
one class per call and computes the same."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, block_class, build, generated, same  # noqa: E402

GROW = """\
use torch

model Grow(g, n):
    def forward(x):
        for i in range(n):
            h = dense(x, g) as dl{i + 1}
            x = concat(x, h, dim=-1)
        return x

model Net:
    input_shape = (3, 5)
    def forward(x):
        x -> Grow(2, 2) as a -> Grow(3, 1) as b -> Grow(1, 0) as c -> dense(4) as head
"""

STACK = """\
use torch

model Stack(width, n):
    def forward(x):
        for i in range(n):
            x -> layernorm() as norms{i} -> dense(width).gelu as layers{i}
        return x

model Net:
    input_shape = (6, 8)
    def forward(x):
        x -> Stack(16, 2) as a -> Stack(12, 3) as b -> dense(2) as head
"""


@pytest.mark.parametrize(
    ("source", "block", "calls"),
    [
        (GROW, "Grow", ["Grow(5, 2, 2)", "Grow(9, 3, 1)", "Grow(12, 1, 0)"]),
        (STACK, "Stack", ["Stack(8, 16, 2)", "Stack(16, 12, 3)"]),
    ],
    ids=["concat-last-axis", "dense-stack"],
)
def test_a_block_of_the_last_axis_is_one_class(source: str, block: str, calls: list[str]) -> None:
    gen = generated(source, f"{block.lower()}.aur")
    assert len(CLASS.findall(gen.code)) == 2, gen.code  # the block and Net
    text = block_class(gen, block)
    assert text.startswith(f"class {block}(nn.Module):\n    def __init__(self, in_features,")
    assert "for i in range(self.n):" in text and "channels = in_features" in text
    for call in calls:
        assert f"= {call}\n" in gen.code, call
    x = torch.randn(2, *((3, 5) if block == "Grow" else (6, 8)))
    torch.manual_seed(0)
    rolled = gen.module.Net()
    per_call, code, _ = build(source, f"{block.lower()}_per_call", roll=False)
    assert f"class {block}_2(nn.Module):" in code  # one class per call without the roller
    same(per_call.Net(), rolled, x)


def test_the_concat_block_grows_by_its_argument_on_the_last_axis() -> None:
    gen = generated(GROW, "grow.aur")
    text = block_class(gen, "Grow")
    assert "nn.Linear(channels, g)" in text
    assert "channels = channels + g" in text
    assert "x = torch.cat([x, h], dim=-1)" in text
    net = gen.module.Net()
    assert net(torch.randn(2, 3, 5)).shape == (2, 3, 4)
    assert net.a.dl2.in_features == 7 and net.b.dl1.in_features == 9
    assert not hasattr(net.c, "dl1")  # Grow(1, 0): the identity


def test_a_channels_block_keeps_in_channels() -> None:
    """An image block still takes its channels (the last axis is tried only where the
    channels' walk fails)."""
    source = """\
    use torch

    model Stage(width, n):
        def forward(x):
            for i in range(n):
                x -> conv2d(width, 3, padding=1).relu as convs{i}
            return x

    model Net:
        input_shape = (3, 6, 5)
        def forward(x):
            x -> Stage(4, 2) as a -> Stage(6, 1) as b -> global_avg_pool() -> dense(2) as head
    """
    gen = generated(textwrap.dedent(source), "stage.aur")
    text = block_class(gen, "Stage")
    assert text.startswith("class Stage(nn.Module):\n    def __init__(self, in_channels,")
    assert "= Stage(3, 4, 2)\n" in gen.code and "= Stage(4, 6, 1)\n" in gen.code
