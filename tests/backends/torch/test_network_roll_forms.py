"""Issue 24 item 3: a network used through variants whose loops thread a second tensor
(an inline residual, an alias joined back, a concat join, a tensor bound before the loop
joined without a module), whose top level makes a residual (``h = x -> ...``, ``s = x``),
or whose ``flatten`` feeds a ``dense`` at widths that differ between variants, is one
class written from the source (``backends/torch/network_walk.py``, ``rolled.py``). Each
rolled variant builds the modules (keys, initial weights) of its class written out
(``roll_networks=False``), strict-loads its weights and computes the same; what the roller
still cannot write keeps one class per variant with a located note."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import build, rolls_exactly  # noqa: E402

RESIDUAL = """\
use torch

model Net(width, n):
    def forward(x):
        x -> conv2d(width, 3, padding=1) as stem
        for i in range(n):
            h = x -> conv2d(width, 3, padding=1) as convs{i} -> relu()
            x = add(x, h)
        x -> flatten() -> dense(10) as head
        return x

model small = Net(4, 2):
    input_shape = (3, 8, 8)

model wide = Net(6, 2):
    input_shape = (3, 8, 8)
"""


def test_inline_residual_in_a_network_loop_rolls() -> None:
    """``h = x -> ...`` then ``x = add(x, h)`` in the loop: the block roller's form."""
    code = rolls_exactly(RESIDUAL, "residual", torch.randn(2, 3, 8, 8))
    assert (
        "        channels = width\n"
        "        for i in range(n):\n"
        '            setattr(self, f"convs{i}", nn.Conv2d(channels, width, kernel_size=3,'
        " padding=1))\n"
        "        self.head = nn.Linear(channels * 8 * 8, 10)\n"
    ) in code, code


# an alias joined back, a tensor bound before the loop joined without a module, and a
# concatenation that grows the width, in one network of two inputs
JOINS = """\
use torch

model Net(width, growth, n):
    def forward(x, cond):
        e = dense(cond, width) as proj
        x -> dense(width) as stem
        for i in range(n):
            r = x
            x -> layernorm() as norms{i} -> dense(width).gelu as fc{i}
            x = add(x, r)
        for i in range(n):
            x -> dense(width) as mix{i}
            x = add(x, e)
        for i in range(n):
            h = x -> dense(growth) as grow{i} -> relu()
            x = concat(x, h, dim=1)
        return x -> dense(3) as head

model small = Net(4, 2, 2):
    input_shape = {x: (5,), cond: (6,)}

model wide = Net(6, 3, 2):
    input_shape = {x: (5,), cond: (6,)}
"""


def test_alias_tensor_and_concat_joins_in_network_loops_roll() -> None:
    code = rolls_exactly(JOINS, "joins", torch.randn(2, 5), torch.randn(2, 6))
    assert '            setattr(self, f"norms{i}", nn.LayerNorm(channels))\n' in code, code
    assert '            setattr(self, f"mix{i}", nn.Linear(channels, width))\n' in code
    assert (
        '            setattr(self, f"grow{i}", nn.Linear(channels, growth))\n'
        "            channels = channels + growth\n"
        "        self.head = nn.Linear(channels, 3)\n"
    ) in code


# a second tensor made by a block the network names, by a block given as a parameter
# (going on by a chain), and the threaded tensor going on under another name first
BLOCKS = """\
use torch

model Unit(width):
    def forward(x):
        return x -> dense(width).relu as fc

model Net(width, n, block):
    def forward(x):
        x -> dense(width) as stem
        for i in range(n):
            h = Unit(x, width) as units{i}
            x = add(x, h)
        for i in range(n):
            h = block(x, width) as blocks{i}
            h = h -> relu()
            x = add(x, h)
        for i in range(n):
            h = x -> dense(width) as pre{i}
            y = x -> dense(width) as skips{i} -> relu()
            x = add(y, h)
        return x -> dense(3) as head

model small = Net(4, 2, Unit):
    input_shape = (5,)

model wide = Net(6, 2, Unit):
    input_shape = (5,)
"""


def test_block_made_second_tensors_in_network_loops_roll() -> None:
    code = rolls_exactly(BLOCKS, "blocks", torch.randn(2, 5), blocks=("Unit",))
    assert '            setattr(self, f"units{i}", Unit(channels, width))\n' in code, code
    assert (
        "            layer = block(channels, width)\n"
        '            setattr(self, f"blocks{i}", layer)\n'
        "            channels = layer.out_channels\n"
    ) in code
    assert '            setattr(self, f"skips{i}", nn.Linear(channels, width))\n' in code


# DenseNet's growing loop at network level, its layer a block given as a parameter
DENSE = """\
use torch

model Layer(growth):
    def forward(x):
        return x -> batchnorm().relu as norm -> conv2d(growth, 3, padding=1) as conv

model Net(growth, n, block):
    def forward(x):
        x -> conv2d(2 * growth, 3, padding=1) as stem
        for i in range(n):
            h = block(x, growth) as layers{i}
            x = concat(x, h, dim=1)
        x -> global_avg_pool()
        return x -> dense(3) as head

model small = Net(4, 2, Layer):
    input_shape = (3, 8, 8)

model wide = Net(6, 2, Layer):
    input_shape = (3, 8, 8)
"""


def test_growing_network_loop_of_a_block_parameter_rolls() -> None:
    code = rolls_exactly(DENSE, "dense", torch.randn(2, 3, 8, 8), blocks=("Layer",))
    assert (
        "            layer = block(channels, growth)\n"
        '            setattr(self, f"layers{i}", layer)\n'
        "            channels = channels + layer.out_channels\n"
        "        self.head = nn.Linear(channels, 3)\n"
    ) in code, code


# a residual outside loops: a chain bound to another name, and an alias joined back
TOP_LEVEL = """\
use torch

model Net(width):
    def forward(x):
        x -> dense(width) as stem
        h = x -> dense(width) as fc -> relu()
        x = add(x, h)
        s = x
        x -> dense(width) as mid
        x = add(x, s)
        return x -> dense(3) as head

model small = Net(4):
    input_shape = (5,)

model wide = Net(6):
    input_shape = (5,)
"""


def test_residual_outside_network_loops_rolls() -> None:
    code = rolls_exactly(TOP_LEVEL, "top", torch.randn(2, 5))
    assert "        self.fc = nn.Linear(width, width)\n" in code, code
    assert "        self.mid = nn.Linear(width, width)\n" in code
    assert "        self.head = nn.Linear(width, 3)\n" in code


FLATTEN = """\
use torch

model Net(width):
    def forward(x):
        x -> conv2d(width, 3, padding=1) as stem
        FLAT
        return x -> dense(10) as head

model small = Net(3):
    input_shape = (3, 8, 8)

model wide = Net(4):
    input_shape = (3, 8, 8)
"""


@pytest.mark.parametrize(
    "flat", ["x -> flatten()", "x = flatten(x)", "f = flatten(x)\n        x = f"]
)
def test_flatten_of_widths_that_differ_is_written_from_the_width(flat: str) -> None:
    """Issue 24 item 3: an 8x8 map 3 channels wide in one variant, 4 in the other (equal
    to the input's in the first, so a first walk's texts read the number 3 until the
    conv's settle): ``nn.Linear(width * 8 * 8, 10)``, not 192 and 256 (which fell back)."""
    code = rolls_exactly(FLATTEN.replace("FLAT", flat), "flat", torch.randn(2, 3, 8, 8))
    assert "        self.head = nn.Linear(width * 8 * 8, 10)\n" in code, code


# 2 and 3 iterations of a clamp whose lower bound a list gives: at the iteration where it
# is 1.0, the number stands twice (``x.clamp(min=1.0, max=1.0)``), so the looped forward's
# iterations differ
CLAMPED = """\
use torch

model Net(width, lows, n):
    def forward(x):
        x -> dense(width) as stem
        for i in range(n):
            x -> dense(width) as fc{i} -> clamp(min=lows[i], max=1.0)
        return x -> dense(3) as head

model small = Net(4, [0.5, 1.0, 2.0], 2):
    input_shape = (5,)

model wide = Net(6, [1.5, -1.0, 2.5], 3):
    input_shape = (5,)
"""


SKIP_READ_TWICE = (
    RESIDUAL.replace("Net(6, 2)", "Net(6, 3)")
    .replace("        for i in range(n):\n", "        for i in range(n):\n            s = x\n")
    .replace(
        "        x -> flatten()",
        "        x = add(x, s)\n        x = multiply(x, s)\n        x -> flatten()",
    )
)


def test_a_skip_read_twice_after_the_loop_is_one_class() -> None:
    """2 and 3 iterations, a skip saved at an iteration's start read twice after the loop:
    the per-call forwards keep the first join under a local numbered by the loop's joins
    (``add3`` in one, ``add4`` in the other), which is one local ``add`` here (it fell
    back with 'the calls' forward methods differ')."""
    code = rolls_exactly(SKIP_READ_TWICE, "skip_twice", torch.randn(2, 3, 8, 8))
    assert "        add = x + s\n        x = add * s\n" in code, code


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (  # the looped forward's own reason follows the variants' (it was dropped)
            CLAMPED,
            "the variants' forward methods differ; with the source's loops, the iterations"
            " of 'i' differ",
        ),
    ],
    ids=["looped-reason"],
)
def test_network_loops_that_still_fall_back_say_why(source: str, reason: str) -> None:
    _, code, _ = build(source, "fallback", roll=False)
    _, rolled_code, reasons = build(source, "fallback")
    assert reasons == [f"network 'Net' at 3:7: {reason}"], reasons
    assert rolled_code == code
    assert "class Net(" not in rolled_code


@pytest.mark.parametrize(
    ("source", "traced"),
    [(RESIDUAL, False), (JOINS, False), (BLOCKS, False), (DENSE, False), (TOP_LEVEL, True)],
    ids=["residual", "joins", "blocks", "dense", "top"],
)
def test_verify_traces_each_variant_of_the_rolled_forms(source: str, traced: bool) -> None:
    """Where no loop reads a parameter the variants' forwards are their own (unrolled), so
    ``aurane verify`` maps every statement of the shared forward with each variant's graph;
    a forward with the source's loops over ``self.n`` is named "not traced" and checked by
    its parameters, with no diagnostic either way."""
    from aurane.verify import load_generated, verify_model

    gen = load_generated(source, "forms.aur")
    for variant in ("small", "wide"):
        report = verify_model(gen, variant, device="meta")
        assert not report.diagnostics, report.diagnostics
        if traced:
            assert not report.unmapped_classes, report.unmapped_classes
            assert report.values_checked >= 8, report
        else:
            assert sorted(report.unmapped_classes) == ["small", "wide"], report
            assert "for i in range(self.n):" in gen.code, gen.code
            assert report.parameters_checked >= 1, report
