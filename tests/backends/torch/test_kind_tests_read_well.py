"""tidy92: the tests a generated class writes where a boolean may reach a number read as one
writes them (issue 24 item 3), each as correct as before: ``q not in (...)`` rather than
``not q in (...)``, ``p is not True`` rather than ``not p is True``; ``p == 1 and p is not
True`` (the one boolean Python lets through excluded) rather than ``not isinstance(p,
bool) and p == 1``; an ``or`` of equalities as one membership test, whose negation needs no
``not (...)``; no kind test after a refusal that leaves a parameter numbers alone.
``kinds.py`` owns the rule and the texts."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.backends.torch.kinds import (  # noqa: E402
    differs,
    equal_text,
    member_text,
    same_value,
    without_kind_tests,
)
from aurane.backends.torch.pyexpr import negation  # noqa: E402
from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    build,
    choice,
    loads_and_computes_alike,
)


def _as_called(source: str, calls: str, call: str, name: str, *args: object) -> None:
    """``P`` of ``source`` built at ``args`` (after the input width 8) builds and computes
    what the class of the same program calling ``call`` in place of ``calls`` does."""
    module, _, _ = build(source, name)
    alone, _, _ = build(source.replace(f"x -> {calls}\n", f"x -> {call}\n"), f"{name}_alone")
    mine, theirs = module.P(8, *args), alone.P(8, *args)
    loads_and_computes_alike(mine, theirs, torch.randn(2, 3, 8))


@pytest.mark.parametrize(
    ("test", "calls", "written"),
    [
        ("not (p in (0, 5))", "P(0, 4) -> P(2, 4)", "if p not in (0, 5):"),
        ("not (p == true)", "P(true, 4) -> P(false, 4)", "if p is not True:"),
        ("not (p == 1)", "P(1, 4) -> P(2, 4)", "if p != 1 or p is True:"),
    ],
)
def test_a_negated_comparison_is_written_as_one(test: str, calls: str, written: str) -> None:
    """The printer wrote ``not p in (0, 5)`` and ``not p is True``."""
    source = choice(test, calls)
    _, code, notes = build(source, "negated")
    assert notes == [], notes
    assert f"        {written}\n" in code, code
    assert check_source(source) == []


# the branch of ``dense(w)`` only: the joined class writes the other's module under the
# negation of the test (``pyexpr.negation``)
ONE_SIDED = """\
model P(p, w: int):
    def forward(x):
        if p == 0 or p == 5:
            x -> dense(w)
        else:
            x -> dense(w) -> dense(w + 1)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(0, 4) -> P(true, 4)
        return x
"""


def test_an_or_of_equalities_is_one_membership_and_its_negation_needs_no_not() -> None:
    """``if not (not isinstance(p, bool) and p == 0 or p == 5):`` read as ``p not in (0,
    5) or p is False``: ``False`` takes the other branch, as the language's ``false == 0``
    is false."""
    _, code, notes = build(ONE_SIDED, "one_sided")
    assert notes == [], notes
    assert "        if p not in (0, 5) or p is False:\n" in code, code
    assert "        if self.p not in (0, 5) or self.p is False:\n" in code, code
    assert "isinstance" not in code, code
    calls = "P(0, 4) -> P(true, 4)"
    for value, call in ((False, "P(false, 4)"), (0, "P(0, 4)"), (5, "P(5, 4)"), (1, "P(1, 4)")):
        _as_called(ONE_SIDED, calls, call, f"one_sided_{value}", value, 4)
    assert check_source(ONE_SIDED) == []


def test_an_or_of_equalities_in_an_elif_after_a_loop_is_one_membership() -> None:
    """The rolled class's ``elif``: ``p in (0, 5) and p is not False``."""
    source = """\
model P(n, p, w: int):
    def forward(x):
        for i in range(n):
            x -> dense(w)
        if p == 3:
            x -> dense(w + 2)
        elif p == 0 or p == 5:
            x -> dense(w)
        else:
            x -> dense(w + 1)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 0, 4) -> P(2, 2, 4)
        return x
"""
    module, code, notes = build(source, "rolled_member")
    assert notes == [], notes
    assert "        elif p in (0, 5) and p is not False:\n" in code, code
    assert module.P(8, 1, False, 4).dense2.out_features == 5  # false is not 0: the else
    assert module.P(8, 1, 0, 4).dense2.out_features == 4
    assert check_source(source) == []


def test_the_rule_and_its_texts() -> None:
    """``kinds``: where Python's comparison differs, and the texts that keep the
    language's (each checked against every kind of value)."""
    assert [differs(v) for v in (0, 1, 1.0, True, 2, "1")] == [True] * 4 + [False] * 2
    assert not same_value(True, 1) and same_value(1, 1.0) and not same_value((1,), [1])
    assert equal_text("p", "1", 1, True) == ("p == 1 and p is not True", "and")
    assert equal_text("p", "0", 0, False) == ("p != 0 or p is False", "or")
    assert member_text("p", ["0", "1"], [0, 1]) == (
        "p in (0, 1) and not isinstance(p, bool)",
        "and",
    )
    for test, numbers in (
        ("p == 1 and p is not True", (1,)),
        ("p != 1 or p is True", (0, 5, 2)),  # not 1 as the language means it
        ("p in (0, 5) and p is not False", (0, 5)),
        ("p in (0, 1) and not isinstance(p, bool)", (0, 1)),
    ):
        for p in (True, False, 0, 1, 1.0, 5, 2):
            language = not isinstance(p, bool) and p in numbers
            if test.startswith("p != 1"):  # the language's p != 1: a boolean too
                language = isinstance(p, bool) or p != 1
            assert eval(test, {"p": p}) == language, (test, p)
            assert eval(negation(test), {"p": p}) == (not language), (test, p)


def test_a_refusal_leaving_numbers_drops_the_exclusions_alone() -> None:
    """``without_kind_tests``: the exclusions a refused parameter no longer needs go, and
    parentheses left around a lone comparison with them; other tests stay."""
    lines = [
        "        if mode == 1 and mode is not True:",
        "        elif self.mode not in (0, 5) or self.mode is False:",
        "        if (mode != 1 or mode is True) and flag:",
        "        if flag or mode is True and w > 2:",  # not an exclusion: kept
        "        if mode2 == 1 and mode2 is not True:",  # another parameter
    ]
    assert without_kind_tests(lines, {"mode"}) == [
        "        if mode == 1:",
        "        elif self.mode not in (0, 5):",
        "        if mode != 1 and flag:",
        "        if flag or mode is True and w > 2:",
        "        if mode2 == 1 and mode2 is not True:",
    ]


def test_negation_of_an_and_or_an_or_of_comparisons() -> None:
    """``pyexpr.negation``: De Morgan where each part negates to a comparison or an
    atom; ``not (...)`` where one does not (an order comparison, a nested ``or``)."""
    assert negation("p == 1 and p is not True") == "p != 1 or p is True"
    assert negation("a in (1, 2) or not f(x)") == "a not in (1, 2) and f(x)"
    assert negation("a < 1 and b == 2") == "not (a < 1 and b == 2)"
    assert negation("a == 1 and (b or c)") == "not (a == 1 and (b or c))"
    assert negation("not (a or b)") == "a or b"


def test_two_parameters_compared_by_kind_need_no_not() -> None:
    """``p != q`` where a boolean and a number may reach each: ``not (isinstance(p, bool)
    == isinstance(q, bool)) or p != q`` read as ``isinstance(p, bool) != isinstance(q,
    bool) or p != q``."""
    source = """\
model P(p, q, w: int):
    def forward(x):
        if p != q:
            x -> dense(w)
        else:
            x -> dense(w + 1)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(0, true, 4) -> P(1, 1, 4)
        return x
"""
    module, code, notes = build(source, "two_kinded")
    assert notes == [], notes
    assert "        if isinstance(p, bool) != isinstance(q, bool) or p != q:\n" in code, code
    assert module.P(8, True, 1, 4).dense1.out_features == 4  # true != 1: the if branch
    assert module.P(8, 1, 1.0, 4).dense1.out_features == 5
    assert check_source(source) == []
