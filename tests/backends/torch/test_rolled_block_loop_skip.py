"""Issue 24 item 3: a block's skip saved at the start of each iteration and read after the
loop (``for i in range(n): s = x; ...`` then ``x = add(x, s)``), in calls that run the loop
a different number of times. ``__init__`` kept a class per call with the note "the tensor
's' is not joined back" (``block_walk.py`` took ``s = x`` for an alias joined in the
body); the skip is now joined after the loop as a later input is (no module, the width
kept), and forward writes it in the loop as a network's (``test_network_loop_skip.py``).
A skip concatenated after the loop adds its width, the running width as the last
iteration starts (``s_width = channels`` in the loop).
Each program is compiled both ways (rolled, and one class per call), the same modules
built in the same order, a strict load and equal outputs (``one_class.one_class_alike``,
``one_class.rolls_exactly``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    one_class_alike,
    rolls_exactly,
)
from tests.backends.torch.test_network_loop_skip import SKIP as NETWORK_SKIP  # noqa: E402

SKIP = """
model Skip(width, n):
    def forward(x):
        for i in range(n):
            s = x
            x -> dense(width).relu
        x = add(x, s)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Skip(6, 2) as a -> Skip(6, 3) as b
        return x
"""

TWICE = SKIP.replace(
    "        x = add(x, s)\n", "        x = add(x, s)\n        x = multiply(x, s)\n"
)


def test_a_skip_read_after_a_block_loop_is_one_class() -> None:
    """The per-call forwards end ``relu2 = F.relu(dense2)``, ``x = relu2 + x``."""
    gen, flat = one_class_alike(SKIP, "block_skip", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Skip", "Net"], gen.code
    assert CLASS.findall(flat) == ["Skip", "Skip_2", "Net"], flat
    assert (
        "        for i in range(self.n):\n"
        "            s = x\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            x = F.relu(x)\n"
        "        return x + s\n"
    ) in block_class(gen, "Skip"), gen.code


def test_a_skip_read_twice_after_a_block_loop_is_one_class() -> None:
    """``x = add(x, s)``, then ``x = multiply(x, s)``: both joins keep the width."""
    gen, flat = one_class_alike(TWICE, "block_skip_twice", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Skip", "Net"], gen.code
    assert CLASS.findall(flat) == ["Skip", "Skip_2", "Net"], flat
    assert "            s = x\n" in block_class(gen, "Skip"), gen.code
    assert "        add1 = x + s\n        x = add1 * s\n" in block_class(gen, "Skip"), gen.code


def test_a_skip_read_twice_after_a_network_loop_is_one_class() -> None:
    """The network's form of the same (it rolled before the block's did)."""
    source = NETWORK_SKIP.replace(
        "        x = add(x, s)\n", "        x = add(x, s)\n        x = multiply(x, s)\n"
    )
    code = rolls_exactly(source, "network_skip_twice", torch.randn(2, 3, 8, 8))
    assert (
        "        for i in range(self.n):\n"
        "            s = x\n"
        '            x = getattr(self, f"convs{i}")(x)\n'
        "        add1 = x + s\n"
        "        x = add1 * s\n"
    ) in code, code


# The width after ``x = concat(x, s, dim=-1)`` is the loop's last width plus the skip's,
# the running width as the last iteration starts: the input's where the loop runs once
# (``Skip(8, 1)``: 6), the width before where it runs more (``Skip(8, 3)``: 8). A loop of
# no iteration leaves ``s`` unbound, which the compiler refuses.
CONCAT = """
model Skip(width, n):
    def forward(x):
        for i in range(n):
            s = x
            x -> dense(width).relu
        x = concat(x, s, dim=-1)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Skip(8, 1) as a -> Skip(8, 3) as b
        return x
"""

HEAD = CONCAT.replace(
    "        return x\n\nmodel Net", "        x -> dense(4) as head\n        return x\n\nmodel Net"
)


def test_a_skip_concatenated_after_a_block_loop_is_one_class() -> None:
    """Was one class per call: "'concat' of a later input changes the width"."""
    gen, flat = one_class_alike(CONCAT, "block_skip_concat", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Skip", "Net"], gen.code
    assert CLASS.findall(flat) == ["Skip", "Skip_2", "Net"], flat
    assert "        return torch.cat([x, s], dim=-1)\n" in block_class(gen, "Skip"), gen.code
    assert "s_width" not in gen.code  # no module reads the width after the concat
    assert check_source(CONCAT) == []


def test_a_module_after_a_skip_concatenated_after_a_block_loop_reads_both_widths() -> None:
    """``head`` is ``nn.Linear(8 + 6, 4)`` in one call's class, ``nn.Linear(8 + 8, 4)`` in
    the other's: the skip's width is the running width as the last iteration starts."""
    gen, flat = one_class_alike(HEAD, "block_skip_concat_head", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Skip", "Net"], gen.code
    assert CLASS.findall(flat) == ["Skip", "Skip_2", "Net"], flat
    init = block_class(gen, "Skip")
    assert "            s_width = channels\n" in init, gen.code
    assert "        self.head = nn.Linear(channels + s_width, 4)\n" in init, gen.code
    assert check_source(HEAD) == []


def test_a_skip_concatenated_first_after_a_block_loop_is_one_class() -> None:
    """``concat(s, x, dim=-1)``: the same sum, the skip's features first."""
    source = HEAD.replace("concat(x, s, dim=-1)", "concat(s, x, dim=-1)")
    gen, flat = one_class_alike(source, "block_skip_concat_first", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Skip", "Net"], gen.code
    assert CLASS.findall(flat) == ["Skip", "Skip_2", "Net"], flat
    assert "        x = torch.cat([s, x], dim=-1)\n" in block_class(gen, "Skip"), gen.code
    assert check_source(source) == []
