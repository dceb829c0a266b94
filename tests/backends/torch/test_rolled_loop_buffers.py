"""Issue 24 item 3: a block making a buffer (``buffer(c0, persistent=true)``, state of
its own made from no tensor) kept a class per call with the note 'an assignment to 'h2'
the roller does not write' (fuzz seed 85000070: ``for i in range(n): h1 = multiply(x,
x); h2 = buffer(c0, persistent=true).tanh``). The rolled class registers each buffer
where the class of one call does, in a loop once per iteration under the IR's name
(``self.register_buffer(f"buffer{i + 1}", torch.zeros(c0))``), its shape written as the
source's, so the state dicts match; forward reads it as ``getattr(self, f"buffer{i +
1}")``. Each program runs against its IR, its ``Net`` is built as the build of one class
per call builds it (the same modules and buffers in the same order), strict-loads it
and computes the same; ``roll_check`` rebuilds the rolled class at arguments the calls
did not give."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    per_call,
    roll_notes,
    twin,
)

UNREAD = """\
model Loop0(p0: int, n):
    c0 = p0
    def forward(x):
        for i in range(n):
            h1 = multiply(x, x)
            h2 = buffer(c0, persistent=true).tanh
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, 2) as a -> Loop0(5, 3) as b -> dense(2) as head
"""

JOINED = """\
model Loop0(p0: int, n):
    def forward(x):
        for i in range(n):
            h2 = buffer(p0, init="ones", persistent=false).tanh
            x = add(x, h2)
            x -> dense(p0)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, 2) as a -> Loop0(3, 3) as b -> dense(2) as head
"""

BEFORE_A_LOOP = """\
model Loop0(p0: int, n):
    def forward(x):
        h2 = buffer(p0).tanh
        x = add(x, h2)
        for i in range(n):
            x -> dense(p0)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, 2) as a -> Loop0(3, 3) as b -> dense(2) as head
"""

INIT_GIVEN = """\
model Loop0(p0: int, p1: str, n):
    def forward(x):
        for i in range(n):
            h2 = buffer(p0, init=p1, persistent=true)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, "zeros", 2) as a -> Loop0(3, "ones", 3) as b -> dense(2) as head
"""


def _rolled(source: str, name: str) -> str:
    """The checks of the module docstring; the rolled ``Loop0``."""
    checked = twin(source, name, torch.randn(2, 3))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Loop0", "Loop0_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Loop0", "Net"], gen.code
    notes, _ = roll_notes(source)
    assert notes == []
    model, _, _ = build(source, f"{name}_modules")
    theirs, _ = per_call(source, f"{name}_names")
    mine, other = model.Net(), theirs.Net()
    assert [n for n, _ in mine.named_buffers()] == [n for n, _ in other.named_buffers()]
    for (_, a), (_, b) in zip(mine.named_buffers(), other.named_buffers(), strict=True):
        assert torch.equal(a, b)
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["calls"] == 2, counts
    return block_class(gen, "Loop0")


def test_a_buffer_nothing_reads_is_registered_per_iteration() -> None:
    """Seed 85000070's form: the buffer's tensor is read by nothing, but the class of one
    call registers ``buffer1``, ``buffer2`` (persistent: in the state dict), and so does
    the rolled class, at any count."""
    loop = _rolled(UNREAD, "unread")
    assert (
        "        for i in range(n):\n"
        '            self.register_buffer(f"buffer{i + 1}", torch.zeros(c0))\n'
    ) in loop, loop
    assert (
        "        for i in range(self.n):\n"
        "            h1 = x * x\n"
        '            h2 = getattr(self, f"buffer{i + 1}").expand(x.shape[0], -1)\n'
        "            h2 = torch.tanh(h2)\n"
    ) in loop, loop
    model, _, _ = build(UNREAD, "unread_keys")
    assert [k for k in model.Net().state_dict() if k.startswith("b.")] == [
        "b.buffer1",
        "b.buffer2",
        "b.buffer3",
    ]


def test_a_buffer_joined_in_a_loop_beside_its_modules() -> None:
    """``x = add(x, h2)``: the buffer's width is its shape's text (``p0``), which the
    join keeps; the loop's ``dense`` modules are numbered as before."""
    loop = _rolled(JOINED, "joined")
    assert (
        '            self.register_buffer(f"buffer{i + 1}", torch.ones(p0), persistent=False)\n'
    ) in loop, loop
    assert '            setattr(self, f"dense{i + 1}", nn.Linear(channels, p0))\n' in loop, loop


def test_a_buffer_outside_loops_is_registered_once() -> None:
    """Before the loop: ``self.register_buffer("buffer1", torch.zeros(p0))``."""
    loop = _rolled(BEFORE_A_LOOP, "before_a_loop")
    assert '        self.register_buffer("buffer1", torch.zeros(p0))\n' in loop, loop


def test_a_buffer_whose_contents_a_parameter_chooses_keeps_its_note() -> None:
    """``init=p1``: the contents are written where the class is (``torch.zeros``), so a
    class built with another ``p1`` would register other contents; it keeps a class
    per call, located."""
    notes, _ = roll_notes(INIT_GIVEN)
    assert notes == ["block 'Loop0' at 1:7: the init 'p1' of the buffer at 4:18 is no literal"], (
        notes
    )
