"""Issue 24 item 3: the inner modules of a rolled block named as the IR names them. A
block whose name ends in a digit (``Unit0``) is numbered after its lower-cased name,
``unit0``, then the count (``unit01``, ``unit02``: ``builder.fresh``); the rolled class
wrote ``f"unit{i + 1}"`` (``unit1``), so its state-dict keys were not the per-call build's
(fuzz seeds 18000034, 18000079, 18000086). Each program runs against its IR and its ``Net``
is built as the build of one class per call builds it (the same modules in the same
order), strict-loads it and computes the same; ``roll_check`` rebuilds the rolled class
at arguments the calls did not give and compares it with a per-call build."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.backends.torch.rolled import number_splits  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    twin,
)

ROWS = """\
model Unit0(w):
    def forward(x):
        x -> dense(w).relu
        return x

model Fam(rows):
    def forward(x):
        for c in rows:
            x -> Unit0(c)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam([4, 2]) -> Fam([8])
        return x
"""


def _rolled(source: str, name: str, calls: int) -> str:
    """The checks of the module docstring; the rolled ``Fam``."""
    checked = twin(source, name, torch.randn(2, 3))
    gen, flat, counts = checked.gen, checked.per_call, checked.counts
    assert CLASS.findall(flat) == ["Unit0", "Fam", "Fam_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Unit0", "Fam", "Net"], gen.code
    assert counts["calls"] == calls, counts
    return block_class(gen, "Fam")


def test_a_block_named_with_a_digit_in_a_loop_over_rows() -> None:
    """``setattr(self, f"unit0{i + 1}", Unit0(channels, c))``: ``unit01``, ``unit02``."""
    fam = _rolled(ROWS, "unit_rows", 2)
    assert 'setattr(self, f"unit0{i + 1}", Unit0(channels, c))' in fam, fam
    assert 'x = getattr(self, f"unit0{i + 1}")(x)' in fam, fam


def test_a_block_named_with_a_digit_after_a_counted_loop() -> None:
    """A call of ``Unit0`` after a loop of them, numbered on from the loop's count:
    ``f"unit0{n + 1}"`` (``unit03`` after two, ``unit02`` after one)."""
    source = """\
model Unit0(w):
    def forward(x):
        x -> dense(w).relu
        return x

model Fam(n):
    def forward(x):
        for i in range(n):
            x -> Unit0(4)
        x -> Unit0(2)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam(2) -> Fam(1)
        return x
"""
    fam = _rolled(source, "unit_after", 2)
    assert 'setattr(self, f"unit0{i + 1}", Unit0(channels, 4))' in fam, fam
    assert 'f"unit0{n + 1}"' in fam, fam


def test_the_ways_an_id_is_numbered() -> None:
    """A count never starts with a zero: ``unit01`` is ``unit0``'s first; ``dense11``
    is ``dense``'s eleventh or ``dense1``'s first."""
    assert number_splits("unit01") == [("unit0", 1)]
    assert number_splits("dense11") == [("dense", 11), ("dense1", 1)]
    assert number_splits("relu61") == [("relu", 61), ("relu6", 1)]
    assert number_splits("fc") == []


AFTER_AGREED = """\
model Fam0(g0, n0, w1, n1):
    def forward(x):
        for i in range(n0):
            h = dense(x, g0)
            x = concat(x, h, dim=-1)
        x -> dense(w1)
        for i in range(n1):
            h = x -> dense(2 * w1).gelu -> dense(w1)
            x = add(x, h)
        return x

model Net:
    input_shape = (3, 4)
    def forward(x):
        x -> Fam0(3, 2, 4, 3) -> Fam0(3, 2, w1=2, n1=2)
        return x
"""


def test_modules_after_a_loop_the_calls_run_alike() -> None:
    """Unnamed modules after a loop whose count every call gives alike (``n0 = 2``) are
    numbered on from that count, which a class built at another ``n0`` runs otherwise:
    ``f"dense{n0 + 1}"``, ``f"dense{n0 + 2 * i + 2}"``. The class wrote ``self.dense3``
    and ``f"dense{2 * i + 4}"``, so ``Fam0(.., 3, ..)`` overwrote ``dense3`` (fuzz seed
    56000038)."""
    checked = twin(AFTER_AGREED, "after_agreed", torch.randn(2, 3, 4))
    gen = checked.gen
    assert CLASS.findall(gen.code) == ["Fam0", "Net"], gen.code
    fam = block_class(gen, "Fam0")
    assert 'setattr(self, f"dense{n0 + 1}", ' in fam, fam
    assert 'f"dense{n0 + 2 * i + 2}"' in fam, fam
    assert 'x = getattr(self, f"dense{self.n0 + 1}")(x)' in fam, fam
    counts = checked.counts  # roll_check's, at arguments no call gives
    assert counts["calls"] == 2, counts
