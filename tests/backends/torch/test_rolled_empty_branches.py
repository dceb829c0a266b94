"""Issue 24 item 3: an ``if`` in a block's loop whose branches make no module (``if act:
x -> relu()``) is left out of ``__init__``: it was written there with no body, so the
generated file did not compile (``IndentationError``). Forward keeps it (``if self.act:
x = F.relu(x)``). The program is run against its IR, its ``Net`` compared with the build
of one class per call, and the rolled class rebuilt at arguments no call gives
(``roll_check``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_networks, check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    one_class_alike,
    rolls_exactly,
)

GATED = """
model Stack(width, n: int, act: bool):
    def forward(x):
        for i in range(n):
            x -> dense(width)
            if act:
                x -> relu()
        return x

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Stack(5, 2, true) as a -> Stack(6, 3, false) as b
        return x
"""


def test_an_if_that_makes_no_module_is_only_in_forward() -> None:
    gen, flat = one_class_alike(GATED, "gated", torch.randn(2, 5))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    text = block_class(gen, "Stack")
    init = text[: text.index("    def forward")]
    assert "if act" not in init, text
    assert "            if self.act:\n                x = F.relu(x)\n" in text, text
    assert check_source(GATED) == []


LOOPED_IF = """
model B(w, n, act):
    def forward(x):
        x -> dense(w)
        for i in range(n):
            if act:
                x -> relu()
            else:
                x -> tanh()
        return x -> dense(w)

model Net:
    input_shape = (4,)
    def forward(x):
        x -> B(8, 2, true) as p -> B(6, 3, false) as q -> dense(2) as head
"""


def test_a_loop_whose_only_statement_is_such_an_if_is_only_in_forward() -> None:
    """The ``if`` left out, its loop was left with no body (``for i in range(n):``, an
    ``IndentationError``, "internal error"): the loop goes too, as a loop of bare
    activations does."""
    gen, flat = one_class_alike(LOOPED_IF, "looped_if", torch.randn(2, 4))
    assert CLASS.findall(gen.code) == ["B", "Net"], gen.code
    assert CLASS.findall(flat) == ["B", "B_2", "Net"], flat
    text = block_class(gen, "B")
    init = text[: text.index("    def forward")]
    assert "for i" not in init and "if act" not in init, text
    assert (
        "        for i in range(self.n):\n"
        "            if self.act:\n"
        "                x = F.relu(x)\n"
        "            else:\n"
        "                x = torch.tanh(x)\n"
    ) in text, text
    assert check_source(LOOPED_IF) == []


LOOPED_IF_NETWORK = """
use torch

model Net(width, n, act: bool):
    def forward(x):
        x -> dense(width) as stem
        for i in range(n):
            if act:
                x -> relu()
            else:
                x -> tanh()
        return x -> dense(3) as head

model small = Net(4, 2, true):
    input_shape = (5,)

model wide = Net(6, 3, false):
    input_shape = (5,)
"""


def test_a_network_loop_whose_only_statement_is_such_an_if_is_only_in_forward() -> None:
    code = rolls_exactly(LOOPED_IF_NETWORK, "looped_if_network", torch.randn(2, 5))
    init = code[code.index("class Net") : code.index("    def forward")]
    assert "for i" not in init and "if act" not in init, code
    assert "        for i in range(self.n):\n            if self.act:\n" in code, code
    assert check_networks(LOOPED_IF_NETWORK) == []
