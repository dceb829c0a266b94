"""Issue 24 item 3: a block's class built with a boolean where its calls gave numbers (or
with a number where they gave booleans) compares it as the language does.

The language's ``==`` never finds a boolean equal to a number (``true == 1`` is false);
Python's does (``True == 1``). fix77 wrote the typed comparison only where the calls mixed
kinds and the other side was a literal number, so (review82 F0, F1) ``if p == zero`` (a
constant), ``if p == 1 - 1``, and any ``if p == 1`` whose calls all gave numbers kept
Python's ``==``: ``P(8, True, 4)`` took the branch of 1, where a program calling
``P(true, 4)`` builds the other one. Each test builds the class at the arguments by hand and
compares it with the class of a program whose call gives them. Also review82's F4 (a guard
compares kinds, not exact types) and F3 (an item a parameter indexes, folded to a number).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import build, choice, loads_and_computes_alike  # noqa: E402


def _as_called(source: str, calls: str, call: str, name: str, *args: object) -> None:
    """``P`` of ``source`` built at ``args`` (after the input width 8) builds and computes
    what the class of the same program calling ``call`` in place of ``calls`` does."""
    module, _, _ = build(source, name)
    alone, _, _ = build(source.replace(f"x -> {calls}\n", f"x -> {call}\n"), f"{name}_alone")
    mine, theirs = module.P(8, *args), alone.P(8, *args)
    loads_and_computes_alike(mine, theirs, torch.randn(2, 3, 8))


@pytest.mark.parametrize(
    ("fields", "test", "written"),
    [
        ("    zero = 0\n", "p == zero", "p == 0 and p is not False"),
        ("", "p == 1 - 1", "p == 1 - 1 and p is not False"),
    ],
)
def test_a_number_that_is_no_literal_is_compared_by_kind(
    fields: str, test: str, written: str
) -> None:
    """F0: the calls mix kinds, the other side is a constant or an expression."""
    source = choice(test, "P(0, 4) -> P(true, 4)", fields)
    _, code, notes = build(source, "no_literal")
    assert notes == [], notes
    assert f"        if {written}:\n" in code, code
    _as_called(
        source, "P(0, 4) -> P(true, 4)", "P(false, 4)", "no_literal_false", False, 4
    )  # false == 0 is false
    assert check_source(source) == []


def test_a_boolean_is_not_1_where_every_call_gives_a_number() -> None:
    """F1: calls ``P(1, 4)`` and ``P(2, 4)``: built with ``True``, the class took the
    ``p == 1`` branch (the language's ``true == 1`` is false)."""
    source = choice("p == 1", "P(1, 4) -> P(2, 4)")
    module, code, notes = build(source, "numbers_only")
    assert notes == [], notes
    assert "        if p == 1 and p is not True:\n" in code, code
    assert module.P(8, True, 4).dense1.out_features == 5
    _as_called(source, "P(1, 4) -> P(2, 4)", "P(true, 4)", "numbers_only_true", True, 4)
    assert check_source(source) == []


def test_a_number_is_not_true_where_every_call_gives_a_boolean() -> None:
    """F1: ``if p == true`` with boolean calls was written ``if p == True:`` (``1 ==
    True``); an identity test reads as hand-written and tells 1 from ``True``."""
    source = choice("p == true", "P(true, 4) -> P(false, 4)")
    module, code, notes = build(source, "booleans_only")
    assert notes == [], notes
    assert "        if p is True:\n" in code, code
    assert module.P(8, 1, 4).dense1.out_features == 5
    _as_called(source, "P(true, 4) -> P(false, 4)", "P(1, 4)", "booleans_only_one", 1, 4)
    assert check_source(source) == []


def test_tests_after_a_loop_tell_a_boolean_from_0_and_1() -> None:
    """F1 in a rolled class: ``mode == 0 / 1 / 2`` after a loop, calls giving numbers."""
    source = """\
model P(n, mode, w: int):
    def forward(x):
        for i in range(n):
            x -> dense(w)
        if mode == 0:
            x -> dense(w + 1)
        elif mode == 1:
            x -> dense(w + 2)
        elif mode == 2:
            x -> dense(w + 3)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 2, 4) -> P(2, 1, 4)
        return x
"""
    module, code, notes = build(source, "after_loop")
    assert notes == [], notes
    assert "        elif mode == 1 and mode is not True:\n" in code, code
    assert "        elif mode == 2:\n" in code, code  # True is not 2 in Python either
    _as_called(source, "P(1, 2, 4) -> P(2, 1, 4)", "P(1, true, 4)", "after_loop_true", 1, True, 4)
    assert check_source(source) == []


def test_a_parameter_no_boolean_reaches_keeps_pythons_comparison() -> None:
    """A stride given to ``conv2d`` is a number (a boolean is refused there, S003), as is
    a parameter annotated ``int``: their tests read as before (the zoo's ``stride == 1``)."""
    source = """\
model P(s, k: int, w: int):
    def forward(x):
        x -> conv2d(w, 3, stride=s, padding=1)
        if s == 1 and k == 0:
            x -> conv2d(w, 1)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> P(1, 0, 4) -> P(2, 0, 4) -> P(1, 1, 4)
        return x
"""
    _, code, notes = build(source, "numbers_by_use")
    assert notes == [], notes
    assert "if s == 1 and k == 0:" in code, code
    assert "isinstance" not in code, code
    assert check_source(source) == []


def test_a_guard_compares_the_kind_not_the_exact_type() -> None:
    """F4: a class written out for ``P(false, 4)`` and ``P(1, 5)`` guarded ``(p,
    type(p)) not in ((False, bool), (1, int))``, refusing NumPy's 1 and ``1.0`` (the
    language's 1) as "written for p in (False, 1), not 1". It compares the kind: only a
    boolean that is not ``False`` is refused."""
    np = pytest.importorskip("numpy")
    source = choice("p != true", "P(false, 4) -> P(1, 5)")
    module, code, _ = build(source, "kind_guard")
    guard = "        if (p, isinstance(p, bool)) not in ((False, True), (1, False)):\n"
    assert f"        # written out for these values\n{guard}" in code, code
    for one in (np.int64(1), 1.0):
        assert module.P(8, one, 4).dense1.out_features == 4  # 1 != true: w
    _as_called(source, "P(false, 4) -> P(1, 5)", "P(1.0, 4)", "kind_guard_float", 1.0, 4)
    with pytest.raises(ValueError, match=r"P is written for p in \(False, 1\), not True"):
        module.P(8, True, 4)
    assert check_source(source) == []


def test_an_item_a_parameter_indexes_is_not_its_calls_number_at_another_value() -> None:
    """F3: ``dense(sizes[k])`` under ``if k > 1`` with calls ``P(1, 4)`` and ``P(2, 5)``:
    the class joined over the branch wrote ``nn.Linear(in_features, 16)``, ``sizes[2]``,
    with no guard on ``k``, so ``P(8, 3, 5)`` built 16 where the source builds 32. Then
    each call kept a class refusing another ``k``; now the item is the table indexed by
    ``k`` (``SIZES[k]``, ``test_rolled_indexed_tables.py``): one class, 32 at ``k = 3``,
    and an ``IndexError`` at ``k = 4`` where the source refuses the item."""
    source = """\
model P(k: int, w: int):
    sizes = [4, 8, 16, 32]
    def forward(x):
        if k > 1:
            x -> dense(sizes[k])
        x -> dense(w)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5)
        return x
"""
    module, code, notes = build(source, "indexed")
    assert notes == [], notes
    assert "            self.dense1 = nn.Linear(in_features, SIZES[k])\n" in code, code
    assert module.P(8, 3, 5).dense1.out_features == 32
    with pytest.raises(IndexError):
        module.P(8, 4, 5)
    assert check_source(source) == []
