"""Issue 24 item 3: an ``if`` in a block's loop whose branches make no module (``if act:
x -> relu()``) is left out of ``__init__``: it was written there with no body, so the
generated file did not compile (``IndentationError``). Forward keeps it (``if self.act:
x = F.relu(x)``). The program is run against its IR, its ``Net`` compared with the build
of one class per call, and the rolled class rebuilt at arguments no call gives
(``roll_check``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, block_class, one_class_alike  # noqa: E402

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
