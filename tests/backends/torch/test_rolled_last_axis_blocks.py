"""Issue 24 item 3: a block threading its last axis (token-like ``(seq, features)``
inputs, ``in_features``) that calls an inner block. The walk of the last axis refused
any inner block ('the block 'Unit0' in a block threading its last axis', 6 of 10 fallbacks
at bench seed 85); it now takes one whose class takes the last axis alone (``Unit0(channels,
w0)``), its output width the inner block's expression on that axis (``channels + g``).
Each program runs against its IR and its ``Net`` is built as the build of one class per
call builds it (the same modules in the same order), strict-loads it and computes the
same; ``roll_check`` rebuilds the rolled class at arguments the calls did not give and
compares it with a per-call build. A network's variants threading the last axis take an
inner block alike (``one_class.rolls_exactly``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    rolls_exactly,
    twin,
)

UNITS = """\
model Unit0(w, act = relu):
    def forward(x):
        return x -> dense(w) -> act

model Fam0(w0, n0):
    def forward(x):
        for i in range(n0):
            x -> Unit0(w0) as u{i + 1}
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> Fam0(6, 1) -> Fam0(4, 2)
        return x
"""

GROWS = """\
model Grow(g):
    def forward(x):
        h = dense(x, g)
        x = concat(x, h, dim=-1)
        return x

model Fam(n, g):
    def forward(x):
        for i in range(n):
            x -> Grow(g)
        x -> layernorm()
        return x

model Net:
    input_shape = (3, 5)
    def forward(x):
        x -> Fam(2, 2) -> Fam(1, 3) -> Fam(0, 1)
        return x
"""


def _rolled(source: str, name: str, block: str, calls: int) -> str:
    """The checks of the module docstring; the rolled ``block``."""
    checked = twin(source, name, torch.randn(2, 3, 8 if block == "Fam0" else 5))
    gen, flat, counts = checked.gen, checked.per_call, checked.counts
    inner = CLASS.findall(gen.code)[0]
    assert CLASS.findall(gen.code) == [inner, block, "Net"], gen.code
    assert len(CLASS.findall(flat)) == calls + 2, flat  # the inner block, each call, Net
    assert counts["calls"] == calls, counts
    return block_class(gen, block)


def test_an_inner_block_of_the_last_axis_in_a_loop() -> None:
    """``setattr(self, f"u{i + 1}", Unit0(channels, w0))``, ``channels = w0``; it was
    ``Fam0`` and ``Fam0_2``."""
    fam = _rolled(UNITS, "units_last_axis", "Fam0", 2)
    assert "    def __init__(self, in_features, w0, n0):\n" in fam, fam
    assert (
        "        for i in range(n0):\n"
        '            setattr(self, f"u{i + 1}", Unit0(channels, w0))\n'
        "            channels = w0\n"
    ) in fam, fam


def test_an_inner_block_growing_the_last_axis() -> None:
    """An inner block that concatenates on the last axis: its width after the call is its
    own expression in the call's terms, ``channels = channels + g``."""
    fam = _rolled(GROWS, "grows_last_axis", "Fam", 3)
    assert (
        '            setattr(self, f"grow{i + 1}", Grow(channels, g))\n'
        "            channels = channels + g\n"
        "        self.layer_norm1 = nn.LayerNorm(channels)\n"
    ) in fam, fam


def test_a_network_of_the_last_axis_calling_a_block() -> None:
    """A network's variants threading the last axis, calling a block in a loop."""
    source = """\
model Unit(w):
    def forward(x):
        return x -> dense(w).relu

model Net(width, n):
    def forward(x):
        x -> dense(width)
        for i in range(n):
            x -> Unit(width) as blocks.{i}
        return x -> mean(dim=1) -> dense(2) as head

model small = Net(16, 2):
    input_shape = (5, 8)

model large = Net(32, 3):
    input_shape = (5, 8)
"""
    code = rolls_exactly(source, "network_units_last_axis", torch.randn(2, 5, 8), blocks=("Unit",))
    assert "            stage.append(Unit(channels, width))\n" in code, code
