"""Issue 24 item 3: an unnamed module in a loop nested in another (``for i in
range(a): for j in range(b): x -> dense(w).relu``). Its IR name numbers on over both
loops (``dense1`` to ``dense6`` at ``a = 2``, ``b = 3``), so it fell back ('an unnamed
'dense' module in a loop'); the rolled class names it by both targets and the inner
count (``setattr(self, f"dense{i * b + j + 1}", ...)``, read as ``getattr(self,
f"dense{i * self.b + j + 1}")``), and one after the loops by the product of the
counts (``dense{a * b + 1}``), keeping the state-dict keys of the build with one class
per call (``roll_networks=False``). Each program runs against its IR, strict-loads
that build's state dict and computes the same. An inner count that reads the outer
target (``range(i + b)``): ``test_rolled_triangle_loops.py``."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    rolled,
    rolls_exactly,
)

BLOCK = """\
model Tower(w, a, b):
    def forward(x):
        x -> dense(w)
        for i in range(a):
            for j in range(b):
                x -> dense(w).relu -> layer_norm() -> dense(w)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1, 2) as t1 -> Tower(8, 2, 3) as t2 -> dense(2) as head
"""


def test_unnamed_modules_in_nested_block_loops_are_named_by_both_targets() -> None:
    """Two ``dense`` an inner iteration after one before the loops: ``dense{2 * (i * b
    + j) + 2}`` and ``dense{2 * (i * b + j) + 3}``; the one ``layer_norm``,
    ``layer_norm{i * b + j + 1}``."""
    gen, flat = rolled(BLOCK, "nested_block", torch.randn(2, 6))
    assert CLASS.findall(flat) == ["Tower", "Tower_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Tower", "Net"], gen.code
    text = block_class(gen, "Tower")
    assert (
        "        for i in range(a):\n"
        "            for j in range(b):\n"
        '                setattr(self, f"dense{2 * (i * b + j) + 2}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        '                setattr(self, f"layer_norm{i * b + j + 1}", nn.LayerNorm(channels))\n'
        '                setattr(self, f"dense{2 * (i * b + j) + 3}", nn.Linear(channels, w))\n'
    ) in text, text
    assert (
        "        for i in range(self.a):\n"
        "            for j in range(self.b):\n"
        '                x = getattr(self, f"dense{2 * (i * self.b + j) + 2}")(x)\n'
        "                x = F.relu(x)\n"
        '                x = getattr(self, f"layer_norm{i * self.b + j + 1}")(x)\n'
        '                x = getattr(self, f"dense{2 * (i * self.b + j) + 3}")(x)\n'
    ) in text, text
    one, _, _ = build(BLOCK, "nested_block_one")
    per_call, _, _ = build(BLOCK, "nested_block_flat", roll=False)
    mine, _ = built_alike(one, per_call, "Net")
    assert "t2.dense13.weight" in mine.state_dict()


AFTER = BLOCK.replace("        return x\n", "        return x -> dense(3)\n")


def test_an_unnamed_module_after_nested_loops_is_named_by_both_counts() -> None:
    """Its number counts both loops' iterations: ``dense{2 * a * b + 2}``, two per inner
    iteration after the one before the loops (was a class per call, with the note
    'an unnamed 'dense' module after nested loops')."""
    gen, flat = rolled(AFTER, "after_nested", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Tower", "Net"], gen.code
    assert CLASS.findall(flat) == ["Tower", "Tower_2", "Net"], flat
    text = block_class(gen, "Tower")
    assert '        setattr(self, f"dense{2 * a * b + 2}", nn.Linear(channels, 3))\n' in text
    assert '        return getattr(self, f"dense{2 * self.a * self.b + 2}")(x)\n' in text, text
    one, _, _ = build(AFTER, "after_nested_one")
    per_call, _, _ = build(AFTER, "after_nested_flat", roll=False)
    mine, theirs = built_alike(one, per_call, "Net")
    assert "t1.dense6.weight" in mine.state_dict()
    assert "t2.dense14.weight" in mine.state_dict()
    assert check_source(AFTER) == []  # built with another a or b: that call's class
    x = torch.randn(2, 6)
    with torch.no_grad():
        torch.testing.assert_close(mine.eval()(x), theirs.eval()(x), rtol=0, atol=0)


MLP = """\
model MLP(width, a, b):
    def forward(x):
        for i in range(a):
            for j in range(b):
                x -> dense(width).relu
        return x -> dense(4)

model Net:
    input_shape = (8,)
    def forward(x):
        x -> MLP(16, 1, 2) as m1 -> MLP(16, 2, 3) as m2 -> dense(2) as head
"""


def test_the_head_of_a_nested_loop_mlp_is_dense_a_times_b_plus_one() -> None:
    gen, flat = rolled(MLP, "nested_mlp", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["MLP", "Net"], gen.code
    assert CLASS.findall(flat) == ["MLP", "MLP_2", "Net"], flat
    text = block_class(gen, "MLP")
    assert '        setattr(self, f"dense{a * b + 1}", nn.Linear(channels, 4))\n' in text, text
    assert '        return getattr(self, f"dense{self.a * self.b + 1}")(x)\n' in text, text
    one, _, _ = build(MLP, "nested_mlp_one")
    per_call, _, _ = build(MLP, "nested_mlp_flat", roll=False)
    mine, _ = built_alike(one, per_call, "Net")
    assert "m2.dense7.weight" in mine.state_dict()
    counts: Counter[str] = Counter()  # built with another a or b: that call's class
    assert check_source(MLP, counts) == []
    assert counts["other arguments"] > 0, counts


NETWORK = """\
model Net(w, a, b):
    def forward(x):
        x -> dense(w) as stem
        for i in range(a):
            for j in range(b):
                x -> dense(w).relu
        return x -> dense(3) as head

model small = Net(4, 1, 2):
    input_shape = (5,)

model wide = Net(6, 2, 3):
    input_shape = (5,)
"""


def test_unnamed_modules_in_nested_network_loops_roll_with_the_loops() -> None:
    """The variants run the loops a different number of times: forward is written with
    them, naming the module as ``__init__`` does."""
    code = rolls_exactly(NETWORK, "nested_network", torch.randn(2, 5))
    assert (
        "        for i in range(a):\n"
        "            for j in range(b):\n"
        '                setattr(self, f"dense{i * b + j + 2}", nn.Linear(channels, w))\n'
    ) in code, code
    assert (
        "        for i in range(self.a):\n"
        "            for j in range(self.b):\n"
        '                x = getattr(self, f"dense{i * self.b + j + 2}")(x)\n'
    ) in code, code
