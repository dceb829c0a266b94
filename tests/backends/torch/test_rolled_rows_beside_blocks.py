"""Issue 24 item 3: a block whose rows give blocks (``for c, b in rows0: x = b(x, c)``)
and that also calls a block by name in a loop (``for c, a in rows1: x -> Unit2(c, a)``)
kept a class per call with the note 'the name 'unit21' takes a block's numbering beside
the rows' blocks' (fuzz seed 91000225). The IR numbers each block's modules over the
instance, the rows' and the loop's together (rows giving ``Unit2`` number the loop's
``unit2`` modules on), so the rolled class counts both with one counter
(``made[Unit2] = made.get(Unit2, 0) + 1``). Each program runs against its IR, its
``Net`` is built as the build of one class per call builds it (the same modules in the
same order), strict-loads it and computes the same; ``roll_check`` rebuilds the rolled
class at arguments the calls did not give."""

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

BLOCKS = """\
model Unit0(w):
    def forward(x):
        return x -> dense(w).relu

model Unit2(w, act = relu):
    def forward(x):
        return x -> dense(w) -> act

"""

ROWS_THEN_LOOP = (
    BLOCKS
    + """\
model Fam(rows0, rows1):
    def forward(x):
        for c, b in rows0:
            x = b(x, c)
        for c, a in rows1:
            x -> Unit2(c, a)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam([(4, Unit0), (3, Unit2)], [(3, relu), (8, silu)]) as f1 -> Fam([(5, Unit0)], [(4, tanh)]) as f2 -> dense(2) as head
"""
)

LOOP_THEN_ROWS = ROWS_THEN_LOOP.replace(
    "        for c, b in rows0:\n            x = b(x, c)\n"
    "        for c, a in rows1:\n            x -> Unit2(c, a)\n",
    "        for c, a in rows1:\n            x -> Unit2(c, a)\n"
    "        for c, b in rows0:\n            x = b(x, c)\n",
)


def _rolled(source: str, name: str) -> str:
    """The checks of the module docstring; the rolled ``Fam``."""
    checked = twin(source, name, torch.randn(3, 4))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Unit0", "Unit2", "Fam", "Fam_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Unit0", "Unit2", "Fam", "Net"], gen.code
    notes, _ = roll_notes(source)
    assert notes == []
    model, _, _ = build(source, f"{name}_modules")
    theirs, _ = per_call(source, f"{name}_names")
    names = [n for n, _ in model.Net().named_modules()]
    assert names == [n for n, _ in theirs.Net().named_modules()], names
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["calls"] == 2, counts
    return block_class(gen, "Fam")


def test_a_block_called_in_a_loop_after_the_rows_counts_with_them() -> None:
    """The first call's rows give ``Unit2``, so its loop builds ``unit22`` and ``unit23``;
    the second's build ``unit21``: one count writes both."""
    fam = _rolled(ROWS_THEN_LOOP, "rows_then_loop")
    assert (
        "        made = {}\n        for c, b in rows0:\n"
        "            if b not in (Unit0, Unit2):  # the blocks the calls' rows give\n"
        '                raise ValueError(f"Fam is written for b in (Unit0, Unit2), not {b.__name__}")\n'
        "            made[b] = made.get(b, 0) + 1\n"
    ) in fam, fam
    assert (
        "        for c, a in rows1:\n"
        "            made[Unit2] = made.get(Unit2, 0) + 1\n"
        '            setattr(self, f"unit2{made[Unit2]}", Unit2(channels, c, a))\n'
    ) in fam, fam
    assert (
        "            made[Unit2] = made.get(Unit2, 0) + 1\n"
        '            x = getattr(self, f"unit2{made[Unit2]}")(x)\n'
    ) in fam, fam
    model, _, _ = build(ROWS_THEN_LOOP, "rows_then_loop_keys")
    keys = [k for k in model.Net().state_dict() if k.startswith("f1.")]
    assert [k.split(".")[1] for k in keys[::2]] == ["unit01", "unit21", "unit22", "unit23"]


def test_a_block_called_in_a_loop_before_the_rows_counts_with_them() -> None:
    """The loop first: its ``Unit2`` modules take ``unit21`` and ``unit22``, the rows'
    ``Unit2`` ``unit23``; the first walk of the calls finds the rows only after it."""
    fam = _rolled(LOOP_THEN_ROWS, "loop_then_rows")
    assert '            setattr(self, f"unit2{made[Unit2]}", Unit2(channels, c, a))\n' in fam
    assert "        made = {}\n        for c, a in rows1:\n" in fam, fam
