"""Issue 24 item 3: a network skip saved at the start of each iteration and read after
the loop (``for i in range(n): s = x; ...`` then ``x = add(x, s)``), in variants that
run the loop a different number of times. Each variant's own forward drops the alias and
keeps the skip in ``x``, threading the last iteration under another local (``add3 = x +
h``, then ``x = add3 + x``), so the variants' forwards differed ('the iterations of 'i'
differ'). Forward written with the loop writes the alias (``s = x``) and the source's
names (``x = x + s``). Each variant builds the modules of its class written out
(``roll_networks=False``), strict-loads its weights and computes the same
(``one_class.rolls_exactly``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import build, rolls_exactly  # noqa: E402
from tests.backends.torch.test_network_roll_forms import RESIDUAL  # noqa: E402

SKIP = """\
use torch

model Net(width, n):
    def forward(x):
        x -> conv2d(width, 3, padding=1) as stem
        for i in range(n):
            s = x
            x -> conv2d(width, 3, padding=1) as convs{i}
        x = add(x, s)
        return x -> flatten() -> dense(3) as head

model small = Net(4, 2):
    input_shape = (3, 8, 8)

model wide = Net(6, 3):
    input_shape = (3, 8, 8)
"""


def test_a_skip_saved_in_a_network_loop_is_written_in_it() -> None:
    """The per-call forwards end ``conv2d3 = self.convs1(x)``, ``x = conv2d3 + x``."""
    code = rolls_exactly(SKIP, "skip", torch.randn(2, 3, 8, 8))
    assert (
        "        for i in range(self.n):\n"
        "            s = x\n"
        '            x = getattr(self, f"convs{i}")(x)\n'
        "        x = x + s\n"
    ) in code, code


RESIDUAL_SKIP = (
    RESIDUAL.replace("Net(6, 2)", "Net(6, 3)")
    .replace("        for i in range(n):\n", "        for i in range(n):\n            s = x\n")
    .replace("        x -> flatten()", "        x = add(x, s)\n        x -> flatten()")
)


def test_a_skip_around_a_residual_loop_body_is_written_in_it() -> None:
    """A residual in the body (``h = x -> ...``, ``x = add(x, h)``): the last iteration's
    join is ``add3 = x + h`` in the per-call forward, ``x = x + h`` here."""
    code = rolls_exactly(RESIDUAL_SKIP, "residual_skip", torch.randn(2, 3, 8, 8))
    assert (
        "        for i in range(self.n):\n"
        "            s = x\n"
        '            h = getattr(self, f"convs{i}")(x)\n'
        "            h = F.relu(h)\n"
        "            x = x + h\n"
        "        x = x + s\n"
    ) in code, code


def test_a_skip_joined_under_a_new_name_after_the_loop() -> None:
    """``y = add(x, s)``, ``x = multiply(y, x)``: ``x`` of the per-call forward is the
    skip until it is bound again, its own local (``add3``) the loop's tensor."""
    source = RESIDUAL_SKIP.replace(
        "        x = add(x, s)\n", "        y = add(x, s)\n        x = multiply(y, x)\n"
    )
    code = rolls_exactly(source, "renamed_skip", torch.randn(2, 3, 8, 8))
    assert "            s = x\n" in code, code
    assert "        y = x + s\n        x = y * x\n" in code, code


def test_a_skip_also_joined_in_the_loop_falls_back() -> None:
    """``s`` read in the body too (``x = add(x, s)`` there): not a skip for after the
    loop only; the variants keep their classes, with the note."""
    source = SKIP.replace(
        "            x -> conv2d(width, 3, padding=1) as convs{i}\n",
        "            x -> conv2d(width, 3, padding=1) as convs{i}\n            x = add(x, s)\n",
    )
    _, _, notes = build(source, "joined_twice")
    assert notes == [
        "network 'Net' at 3:7: the variants' forward methods differ; with the source's loops,"
        " the iterations of 'i' differ"
    ], notes


def test_a_loop_before_the_skip_is_joined_falls_back() -> None:
    """A second loop reads the skip: its statements keep the per-call forward's names
    (``x`` the skip there, the loop's tensor under its own local), which no renaming
    after the first loop reaches, so forward is not written with the loops."""
    source = SKIP.replace(
        "        x = add(x, s)\n",
        "        for j in range(n):\n"
        "            x -> conv2d(width, 3, padding=1) as more{j}\n"
        "            x = add(x, s)\n",
    )
    _, _, notes = build(source, "second_loop")
    assert notes == [
        "network 'Net' at 3:7: the variants' forward methods differ; with the source's loops,"
        " a loop after the skip 's' before it is joined"
    ], notes


CHAIN = """\
model Net(width, n):
    def forward(x):
        x -> dense(width) as stem
        for i in range(n):
            s = x
            x -> dense(width) as fc{i} -> relu() -> layer_norm() as norms{i}
        x = add(x, s)
        return x -> dense(3) as head

model small = Net(4, 2):
    input_shape = (5,)

model wide = Net(6, 3):
    input_shape = (5,)
"""


def test_a_skip_around_a_chain_renames_each_local_of_the_last_iteration() -> None:
    """The last iteration threads the tensor through three locals of its own
    (``dense3``, ``relu2``, ``layer_norm2``), each read only by the next: all are ``x``."""
    code = rolls_exactly(CHAIN, "chain_skip", torch.randn(2, 5))
    assert (
        "        for i in range(self.n):\n"
        "            s = x\n"
        '            x = getattr(self, f"fc{i}")(x)\n'
        "            x = F.relu(x)\n"
        '            x = getattr(self, f"norms{i}")(x)\n'
        "        x = x + s\n"
    ) in code, code
