"""Issue 24 item 3: a network class takes its loop counts as constructor arguments, so its
forward runs the loops its ``__init__`` runs even where every variant agrees on the count.
Written out for the variants' one count, a class built with another (an edited entry
class, a new variant) made modules its forward never applied."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import build, rolls_exactly, same  # noqa: E402

COUNT = """\
use torch

model Net(width, n):
    def forward(x):
        x -> conv2d(width, 3, padding=1) as stem
        for i in range(n):
            x -> conv2d(width, 3, padding=1) as convs{i}
        return x -> flatten() -> dense(3) as head

model small = Net(4, 2):
    input_shape = (3, 8, 8)

model wide = Net(6, 2):
    input_shape = (3, 8, 8)
"""

ITEMS = """\
use torch

model Net(widths):
    def forward(x):
        for w in widths:
            x -> dense(w).relu
        return x -> dense(2) as head

model small = Net([8, 6]):
    input_shape = (4,)

model wide = Net([16, 12]):
    input_shape = (4,)
"""


@pytest.mark.parametrize(
    ("source", "loop", "other", "sample"),
    [
        (COUNT, "for i in range(self.n):", "Net(4, 3)", (3, 8, 8)),
        (ITEMS, "for i in range(len(self.widths)):", "Net([8, 6, 5])", (4,)),
    ],
    ids=["range", "items"],
)
def test_a_count_the_variants_agree_on_is_a_loop_in_forward(
    source: str, loop: str, other: str, sample: tuple[int, ...]
) -> None:
    x = torch.randn(2, *sample)
    code = rolls_exactly(source, "agree", x)
    assert loop in code, code
    rolled, _, _ = build(source, "agree_rolled")
    deeper = source + f"\nmodel deeper = {other}:\n    input_shape = {sample!r}\n"
    written_out, _, _ = build(deeper, "agree_deeper", roll=False)
    torch.manual_seed(0)
    mine = eval(other, {"Net": rolled.Net})  # the class built by hand at another count
    torch.manual_seed(0)
    same(mine, written_out.deeper(), x)
