"""Issue 24 item 3, two of the bench's leftovers. A module whose argument is a tuple
display reading a parameter (``adaptive_max_pool((none, min(p, 8)))``, bench seed
91000209) kept a class per call ('... is not a number'; in a loop no call runs, 'no
phantom call that runs it could be lowered and read'): the tuple is written item by
item (``nn.AdaptiveMaxPool2d((None, min(p, 8)))``), each item checked to reach the
module as written (``rolled._written_as_given``). And a list of rows empty at every call
(``for c, k in rows: x -> conv2d(c, k, padding=k // 2)``) before a block-valued
parameter's calls (bench seed 91000113): every phantom row tried had an even kernel,
which changes the sizes the later block reads, so none could be read; a small odd
kernel is tried last (``untaken._list_tries``). Each program runs against its IR, builds
the modules of the build with one class per call in the same order, strict-loads its
weights and computes the same; ``roll_check`` rebuilds the class at arguments no call
gives."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import block_class, twin  # noqa: E402

POOL = """\
model Pool(p, n):
    def forward(x):
        for i in range(n):
            x -> conv2d(4, 3, padding=1) -> adaptive_max_pool((none, min(p, 8)))
        return x

model Net:
    input_shape = (4, 8, 5)
    def forward(x):
        x -> Pool(5, 1) -> Pool(3, 2) -> flatten() -> dense(2) as head
"""


def test_a_tuple_argument_reading_a_parameter_is_written_item_by_item() -> None:
    checked = twin(POOL, "tuple_argument", torch.randn(2, 4, 8, 5))
    text = block_class(checked.gen, "Pool")
    assert "nn.AdaptiveMaxPool2d((None, min(p, 8)))" in text, text


ROWS = """\
model Unit(w):
    def forward(x):
        return x -> conv2d(w, 3, padding=1).relu

model Fam(w0, rows, w1, n):
    def forward(x):
        x -> conv2d(w0, 3, padding=1)
        for c, k in rows:
            x -> conv2d(c, k, padding=k // 2)
        for i in range(n):
            x -> Unit(w1) as b{i + 1}
        return x

model Net:
    input_shape = (6, 5, 4)
    def forward(x):
        x -> Fam(8, [], 2, 2) -> Fam(6, [], 4, 1) -> flatten() -> dense(2) as head
"""


def test_rows_no_call_gives_are_read_from_a_phantom_with_an_odd_kernel() -> None:
    checked = twin(ROWS, "odd_kernel_rows", torch.randn(2, 6, 5, 4))
    text = block_class(checked.gen, "Fam")
    assert (
        '            setattr(self, f"conv2d{j + 2}", nn.Conv2d(channels, c, kernel_size=k,'
        " padding=k // 2))\n"
    ) in text, text
