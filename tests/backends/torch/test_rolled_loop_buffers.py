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

from aurane.tools.roll_check import check_networks, check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    per_call,
    roll_notes,
    rolls_exactly,
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


INIT_BEFORE_A_LOOP = """\
model Loop0(p0: int, p1: str, n):
    def forward(x):
        h2 = buffer(p0, init=p1)
        x = add(x, h2)
        for i in range(n):
            x -> dense(p0)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, "ones", 2) as a -> Loop0(3, "zeros", 3) as b -> dense(2) as head
"""

INIT_FULL = """\
model Loop0(p0: int, p1: str, n):
    def forward(x):
        for i in range(n):
            h2 = buffer(p0, init=p1, value=0.5, persistent=false)
            x = add(x, h2)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, "full", 2) as a -> Loop0(3, "full", 3) as b -> dense(2) as head
"""

INIT_LONG = """\
model Loop0(p0: int, p1: str, n):
    def forward(x):
        for i in range(n):
            h2 = buffer((p0, 2), init=p1, dtype="float16")
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, "ones", 2) as a -> Loop0(4, "zeros", 3) as b -> dense(2) as head
"""

INIT_ARANGE = INIT_GIVEN.replace('"ones"', '"arange"')

# fuzz seed 91000176's form: one call, a sinusoid table of an even literal width
INIT_SINUSOID = """\
model Loop0(p0: int, p1: str, n):
    c0 = max(1, p0 // 2)
    def forward(x):
        for i in range(n):
            h2 = buffer(c0, 8, init=p1, value=none, persistent=false)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(10, "sinusoid", 3) as a -> Loop0(6, "zeros", 2) as b -> dense(2) as head
"""

# a sinusoid table of a width a parameter gives: odd at other values, which the language
# rejects, so the class is not written from the init
INIT_SINUSOID_WIDTH = (
    INIT_SINUSOID.replace("buffer(c0, 8,", "buffer(8, c0,")
    .replace("Loop0(10,", "Loop0(8,")
    .replace("Loop0(6,", "Loop0(12,")
)

NETWORK_BUFFER = """\
use torch

model Net(width, fill, n):
    def forward(x):
        h = buffer(width, init=fill)
        x -> dense(width) as stem
        x = add(x, h)
        for i in range(n):
            x -> dense(width) as layers{i}
        return x -> dense(3) as head

model small = Net(4, "zeros", 2):
    input_shape = (5,)

model wide = Net(6, "ones", 2):
    input_shape = (5,)
"""

NETWORK_LOOP_BUFFER = """\
use torch

model Net(width, fill, n):
    def forward(x):
        x -> dense(width) as stem
        for i in range(n):
            h = buffer(width, init=fill)
            x = add(x, h)
            x -> dense(width) as layers{i}
        return x -> dense(3) as head

model small = Net(4, "zeros", 2):
    input_shape = (5,)

model wide = Net(6, "ones", 3):
    input_shape = (5,)
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


def test_a_buffer_whose_contents_a_parameter_chooses_is_filled_by_it() -> None:
    """``init=p1``: the class writes both fills the parameter may choose among
    (``torch.zeros(p0) if p1 == "zeros" else torch.ones(p0)``) and refuses, by name, any
    other init (``"arange"`` makes int64 contents, a mask or a table its own shape), which
    a class of one call would build otherwise."""
    loop = _rolled(INIT_GIVEN, "init_given")
    assert (
        "        for i in range(n):\n"
        '            if p1 not in ("zeros", "ones"):  # the buffer\'s contents are written for'
        " these inits\n"
        '                raise ValueError(f\'Loop0 is written for p1 in ("zeros", "ones"),'
        " not {p1}')\n"
        "            self.register_buffer(\n"
        '                f"buffer{i + 1}", torch.zeros(p0) if p1 == "zeros" else torch.ones(p0)\n'
        "            )\n"
    ) in loop, loop
    model, _, _ = build(INIT_GIVEN, "init_given_other")
    assert torch.equal(model.Loop0(3, "ones", 2).buffer2, torch.ones(3))
    assert torch.equal(model.Loop0(4, "zeros", 1).buffer1, torch.zeros(4))
    with pytest.raises(ValueError, match=r"Loop0 is written for p1 in .*, not arange"):
        model.Loop0(3, "arange", 2)


def test_a_buffer_filled_by_a_parameter_before_a_loop() -> None:
    """Outside loops the refusal and the buffer are written once, at the top."""
    loop = _rolled(INIT_BEFORE_A_LOOP, "init_before_a_loop")
    assert (
        '        super().__init__()\n        self.n = n\n        if p1 not in ("zeros", "ones"):'
    ) in loop, loop
    assert (
        '        self.register_buffer("buffer1", torch.zeros(p0) if p1 == "zeros" else'
        " torch.ones(p0))\n"
    ) in loop, loop


def test_a_full_buffer_whose_init_a_parameter_gives() -> None:
    """``value=`` goes with ``init="full"`` alone: the class writes ``torch.full`` and
    refuses another init, which the language rejects (S132)."""
    loop = _rolled(INIT_FULL, "init_full")
    assert (
        '            if p1 != "full":  # the buffer\'s contents are written for this init\n'
        "                raise ValueError(f'Loop0 is written for p1 == \"full\", not {p1}')\n"
        '            self.register_buffer(f"buffer{i + 1}", torch.full((p0,), 0.5),'
        " persistent=False)\n"
    ) in loop, loop


def test_a_long_choice_of_fills_chooses_the_function() -> None:
    """Contents too long to write twice on a line: the fill function is chosen and its
    arguments written once."""
    loop = _rolled(INIT_LONG, "init_long")
    assert (
        "            self.register_buffer(\n"
        '                f"buffer{i + 1}",\n'
        '                (torch.zeros if p1 == "zeros" else torch.ones)(p0, 2,'
        " dtype=torch.float16),\n"
        "            )\n"
    ) in loop, loop


def test_inits_of_different_dtypes_keep_their_note() -> None:
    """Calls giving ``"zeros"`` and ``"arange"`` (int64 contents): the IR of one is not
    the other's; a class per call, located."""
    notes, _ = roll_notes(INIT_ARANGE)
    assert notes == [
        "block 'Loop0' at 1:7: the init 'p1' of the buffer at 4:18 gives \"zeros\" and"
        ' "arange", of different dtypes'
    ], notes


def test_a_sinusoid_table_and_a_fill_a_parameter_chooses() -> None:
    """Seed 91000176's form, called with ``"sinusoid"`` and ``"zeros"``: the class writes
    the calls' two inits (``sinusoid_table``, the file's helper, at the even literal
    width 8) and refuses another."""
    loop = _rolled(INIT_SINUSOID, "init_sinusoid")
    assert (
        '            if p1 not in ("sinusoid", "zeros"):'
        "  # the buffer's contents are written for these inits\n"
    ) in loop, loop
    assert (
        "            self.register_buffer(\n"
        '                f"buffer{i + 1}",\n'
        '                sinusoid_table(c0, 8) if p1 == "sinusoid" else torch.zeros(c0, 8),\n'
        "                persistent=False,\n"
        "            )\n"
    ) in loop, loop


def test_a_sinusoid_table_of_a_parameters_width_keeps_its_note() -> None:
    """``buffer(8, c0, init=p1)`` given ``"sinusoid"``: an odd ``c0`` the language
    rejects, which a class built from the init would not; a class per call, located."""
    notes, _ = roll_notes(INIT_SINUSOID_WIDTH)
    assert notes == [
        "block 'Loop0' at 1:7: the init 'p1' of the buffer at 5:18 gives \"sinusoid\", which"
        " other values of the parameters may not fit"
    ], notes


def test_a_network_making_a_buffer_outside_loops_rolls() -> None:
    """``h = buffer(width, init=fill)`` at the top of a network's forward: registered under
    the IR's name and read as forward reads it (``self.buffer1.expand(...)``, no call), so
    the variants roll into one ``Net``; each variant's buffer holds what its own class's
    does (``strict`` loads copy buffers too, so it is compared before any load), and
    ``roll_check`` finds nothing."""
    code = rolls_exactly(NETWORK_BUFFER, "network_buffer", torch.randn(2, 5))
    assert (
        '        if fill not in ("zeros", "ones"):  # the buffer\'s contents are written for'
        " these inits\n"
        '            raise ValueError(f\'Net is written for fill in ("zeros", "ones"),'
        " not {fill}')\n"
        "        self.register_buffer(\n"
        '            "buffer1", torch.zeros(width) if fill == "zeros" else torch.ones(width)\n'
        "        )\n"
    ) in code, code
    assert "        h = self.buffer1.expand(x.shape[0], -1)\n" in code, code
    rolled, _, _ = build(NETWORK_BUFFER, "network_buffer_values")
    unrolled, _, _ = build(NETWORK_BUFFER, "network_buffer_values_flat", roll=False)
    for variant in ("small", "wide"):
        mine, theirs = built_alike(rolled, unrolled, variant)
        torch.testing.assert_close(mine.buffer1, theirs.buffer1, rtol=0, atol=0)
    assert check_networks(NETWORK_BUFFER, Counter()) == []
    assert check_source(NETWORK_BUFFER, Counter()) == []


def test_a_network_loop_making_a_buffer_its_init_parameter_fills() -> None:
    """In a network's loop the buffer is written as in a block's, the refusal naming the
    network's class; each variant built as its own class (``rolls_exactly``) and
    ``roll_check.check_networks`` finds nothing."""
    code = rolls_exactly(NETWORK_LOOP_BUFFER, "network_loop_buffer", torch.randn(2, 5))
    assert (
        "        for i in range(n):\n"
        '            if fill not in ("zeros", "ones"):  # the buffer\'s contents are written for'
        " these inits\n"
        '                raise ValueError(f\'Net is written for fill in ("zeros", "ones"),'
        " not {fill}')\n"
        "            self.register_buffer(\n"
        '                f"buffer{i + 1}", torch.zeros(width) if fill == "zeros" else'
        " torch.ones(width)\n"
        "            )\n"
    ) in code, code
    assert check_networks(NETWORK_LOOP_BUFFER, Counter()) == []
