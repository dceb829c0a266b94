"""Issue 24 item 3: the width after an inner block in a rolled block's loop. Every call
of ``Fam`` gives its inner blocks an input worth ``w0`` and gets back ``w0``, so the
first text worth the number (``channels``, unchanged) was written: ``Fam(4, 7, 2)``
by hand then built ``Keep(6, 7)`` after a ``Unit`` giving 7 (``roll_check``: ``Fam
with w0=7 (at 'b'): no strict load``). The roller now asks what the block computes:
its own expression (``w0``, ``2 * w0``) where its instance keeps one, else what
probes say (the block lowered again at another input width and each argument changed
alone): the input's (a residual block), an argument's, or a number (``dense(6)``,
inside loops too). Where no probe tells them apart it keeps one class per call, with
a located note. Each program's rolled build matches the build with one class per
call (the same modules in the same order, a strict load, equal outputs), and
``roll_check`` builds the class at arguments the calls do not give."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    roll_notes,
    twin,
)

UNIT_KEEP = """\
model Unit(w):
    def forward(x):
        return x -> dense(w).relu

model Keep(w):
    def forward(x):
        return x -> dense(w) -> dense(6)

model Fam(w0, n0):
    def forward(x):
        for i in range(n0):
            x -> Unit(w0) as u{i + 1}
            x -> Keep(w0) as k{i + 1}
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> dense(6) -> Fam(6, 1) as a -> Fam(6, 2) as b -> dense(2) as head
"""

AFTER_DENSE = """\
model Keep(w):
    def forward(x):
        return x -> dense(w) -> dense(6)

model Fam(w0, n0):
    def forward(x):
        for i in range(n0):
            x -> dense(w0) as d{i + 1}
            x -> Keep(w0) as k{i + 1}
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> dense(6) -> Fam(6, 1) as a -> Fam(6, 2) as b -> dense(2) as head
"""

RESIDUAL = """\
model Res(h):
    def forward(x):
        y = x -> dense(h).relu -> dense(h)
        return add(x, y)

model Fam(w0, n0):
    def forward(x):
        for i in range(n0):
            x -> dense(w0) as d{i + 1}
            x -> Res(w0) as r{i + 1}
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam(6, 1) as a -> Fam(6, 2) as b -> dense(2) as head
"""

DOUBLED = """\
model Wide(w):
    def forward(x):
        return x -> dense(2 * w).relu

model Fam(w0, n0):
    def forward(x):
        for i in range(n0):
            x -> Wide(w0) as u{i + 1}
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> dense(6) -> Fam(3, 1) as a -> Fam(3, 2) as b -> dense(2) as head
"""

# ``sizes`` is a list no probe changes, and the width after ``Pick`` is 6 as the number
# and the input's: what it follows cannot be told
UNTOLD = """\
model Pick(w, sizes):
    def forward(x):
        return x -> dense(w) -> dense(sizes[0])

model Fam(w0, s0, n0):
    def forward(x):
        for i in range(n0):
            x -> Pick(w0, s0) as p{i + 1}
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> dense(6) -> Fam(6, [6, 2], 1) as a -> Fam(6, [6, 2], 2) as b -> dense(2) as head
"""


def _twin(source: str, name: str, loop: str) -> None:
    """One ``Fam`` class whose loop reads ``loop``, built as the build with one class per
    call builds it, computing the same, and right at arguments no call gives."""
    checked = twin(source, name, torch.randn(2, 4), against=("flat",))
    gen, flat, counts = checked.gen, checked.flat, checked.counts
    assert CLASS.findall(gen.code).count("Fam") == 1, gen.code
    assert CLASS.findall(flat).count("Fam_2") == 1, flat  # one class per call before
    assert loop in block_class(gen, "Fam"), gen.code
    assert counts["other arguments"] > 0, counts


def test_a_constant_width_after_an_inner_block_is_its_number_inside_the_loop() -> None:
    """``Unit`` gives ``w0`` (its own expression), ``Keep`` gives 6 whatever its input
    and ``w``: the local holds each, as the source says."""
    _twin(
        UNIT_KEEP,
        "unit_keep",
        "        for i in range(n0):\n"
        '            setattr(self, f"u{i + 1}", Unit(channels, w0))\n'
        "            channels = w0\n"
        '            setattr(self, f"k{i + 1}", Keep(channels, w0))\n'
        "            channels = 6\n",
    )


def test_the_rolled_class_at_another_width_builds_what_the_calls_build() -> None:
    """``Fam(6, 7, 2)`` by hand builds the modules a call ``Fam(7, 2)`` builds, which
    strict-load into it and compute the same."""
    mine, _, _ = build(UNIT_KEEP, "unit_keep_other")
    source = UNIT_KEEP.replace("Fam(6, 2) as b", "Fam(7, 2) as b")
    theirs, _, _ = build(source, "unit_keep_other_flat", roll=False)
    torch.manual_seed(0)
    one = mine.Fam(6, 7, 2)
    torch.manual_seed(0)
    per_call = theirs.Fam_2(6, 7, 2)  # the class of the call Fam(7, 2)
    assert list(one.state_dict()) == list(per_call.state_dict())
    one.load_state_dict(per_call.state_dict(), strict=True)
    x = torch.randn(2, 6)
    with torch.no_grad():
        torch.testing.assert_close(one(x), per_call(x), rtol=0, atol=0)


def test_a_constant_width_after_a_block_after_a_layer_in_the_loop() -> None:
    _twin(
        AFTER_DENSE,
        "after_dense",
        '            setattr(self, f"d{i + 1}", nn.Linear(channels, w0))\n'
        "            channels = w0\n"
        '            setattr(self, f"k{i + 1}", Keep(channels, w0))\n'
        "            channels = 6\n",
    )


def test_a_residual_inner_block_keeps_its_input_width() -> None:
    """``Res(h)`` adds its input: built only where ``h`` is the input's width, so the
    probes change them together and the local holds on (no line after it)."""
    _twin(
        RESIDUAL,
        "residual",
        '            setattr(self, f"r{i + 1}", Res(channels, w0))\n\n',
    )


def test_an_inner_block_doubling_its_argument_writes_its_expression() -> None:
    """``Wide(3)`` at an input of 6 gives 6 = ``2 * w0``: its own expression, not the
    input's."""
    _twin(
        DOUBLED,
        "doubled",
        '            setattr(self, f"u{i + 1}", Wide(channels, w0))\n            channels = 2 * w0\n',
    )


def test_a_width_no_probe_tells_keeps_one_class_per_call_with_a_note() -> None:
    notes, code = roll_notes(UNTOLD)
    assert notes == [
        "block 'Fam' at 5:7: the width after 'Pick' at 8:18 is 6 ('6'), and 'Pick' could"
        " not be lowered again with another 'sizes' to tell what it follows"
    ], notes
    assert CLASS.findall(code).count("Fam_2") == 1, code
    rolled, _, _ = build(UNTOLD, "untold")
    unrolled, _, _ = build(UNTOLD, "untold_flat", roll=False)
    one, per_call = built_alike(rolled, unrolled, "Net")
    x = torch.randn(2, 4)
    with torch.no_grad():
        torch.testing.assert_close(one(x), per_call(x), rtol=0, atol=0)
