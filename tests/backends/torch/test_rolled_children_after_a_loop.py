"""Issue 24 item 3: a block whose loop fills a container's next child (``as stack.*``)
after an earlier loop filled it too: the child's index in forward is the loop's count
plus the earlier loop's (``self.stack[j + self.n]``), and after both loops their counts
(``self.stack[2 * self.n]``). It was the number at the calls' count (``j + 2``), so calls of different counts fell back ('the iterations of 'j'
differ') and a class built at another count applied the wrong children. The program is
run against its IR, its ``Net`` compared with the build of one class per call, and the
rolled class rebuilt at arguments no call gives (``roll_check``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, block_class, one_class_alike  # noqa: E402

STACK = """
model Stack(width, n: int):
    def forward(x):
        for i in range(n):
            x -> dense(width) as stack.*
        x -> relu()
        for j in range(n):
            x -> dense(width) as stack.*
        x -> dense(width) as stack.*
        return x

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Stack(5, 2) as a -> Stack(6, 3) as b -> Stack(6, 2) as c
        return x
"""


def test_the_next_child_after_a_loop_is_numbered_on_from_its_count() -> None:
    gen, flat = one_class_alike(STACK, "children_after", torch.randn(2, 5))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    text = block_class(gen, "Stack")
    assert (
        "        for j in range(self.n):\n"
        "            x = self.stack[j + self.n](x)\n"
        "        x = self.stack[2 * self.n](x)\n"
    ) in text, text
    assert check_source(STACK) == []
