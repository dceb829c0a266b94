"""Issue 24 item 3: a block returning a tensor its loop binds last from the threaded one
without a module (``for i in range(n): h1 = global_avg_pool(x)``, ``h1 -> glu()``, then
``return h1``; fuzz seed 91000204) kept a class per call with the note 'the returned 'h1'
has a width the walk does not know': its width (half the threaded tensor's) is not the
threaded tensor's. The walk now takes the width its last binding gave it, from the
threaded tensor's there (``block_walk.BlockWalk._returned_width``), so the calls at
different counts and input widths share one class. Each program runs against its IR,
builds the same modules as the builds with a class per call, strict-loads and computes
the same; ``roll_check`` rebuilds the class at arguments no call gives. A width no text
gives (a flatten's) keeps the located note; a call running no iteration leaves the
tensor unbound, which the compiler refuses (S007), so no class is built for one."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, block_class, roll_notes, twin  # noqa: E402

LOOP = """\
model Loop0(n):
    def forward(x):
        for i in range(n):
            h1 = global_avg_pool(x)
            h1 -> glu()
        return h1

model Net:
    input_shape = (4, 3, 2)
    def forward(x):
        a = x -> Loop0(n=3)
        y = x -> conv2d(2, 1) as narrow
        b = y -> Loop0(n=2)
        return concat(a, b, dim=1)
"""


def test_a_returned_tensor_bound_last_in_the_loop_rolls() -> None:
    """Half the threaded width at 4 and at 2 channels, at counts 3 and 2: one class."""
    checked = twin(LOOP, "returned_width", torch.randn(2, 4, 3, 2))
    assert CLASS.findall(checked.code) == ["Loop0", "Net"], checked.code
    text = block_class(checked.gen, "Loop0")
    assert (
        "    def forward(self, x):\n"
        "        for i in range(self.n):\n"
        "            h1 = x.mean(dim=(2, 3))\n"
        "            h1 = F.glu(h1)\n"
        "        return h1\n"
    ) in text, text
    assert checked.counts["calls"] == 2, checked.counts


def test_the_fuzz_program_at_two_counts() -> None:
    """Fuzz seed 91000204's block, called at one input with two counts."""
    source = LOOP.replace("y = x -> conv2d(2, 1) as narrow\n        b = y", "b = x").replace(
        "concat(a, b, dim=1)", "add(a, b)"
    )
    checked = twin(source, "returned_width_fuzz", torch.randn(2, 4, 3, 2))
    assert CLASS.findall(checked.code) == ["Loop0", "Net"], checked.code


def test_a_returned_width_no_text_gives_keeps_its_note() -> None:
    """``flatten(x)``: six times the threaded width, neither half nor twice it nor one
    number at both calls: the located note stays, each call its class."""
    source = LOOP.replace("h1 = global_avg_pool(x)", "h1 = flatten(x)").replace(
        "h1 -> glu()", "h1 -> relu()"
    )
    notes, code = roll_notes(source)
    assert notes == [
        "block 'Loop0' at 1:7: the returned 'h1' has a width the walk does not know"
    ], notes
    assert "class Loop0_2(nn.Module):" in code
