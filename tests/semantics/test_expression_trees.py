"""Block-parameter expression trees (issue 22 item 3): symbolic numbers record their
computation as a typed tree that is evaluated for the value and printed as Python with
correct precedence; the printed text computes exactly the value the compiler used."""

from __future__ import annotations

import math
import pickle
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aurane.semantics.symbolic import (
    Apply,
    BinOp,
    InputSize,
    Leaf,
    Lit,
    Neg,
    Ref,
    SymFloat,
    SymInt,
    evaluate,
    leaves,
    plain,
    sym_max,
    sym_min,
    symbol,
    to_python,
)

ENV = {"a": 7, "b": 3, "c": -2, "w": 2.5}


def _name(leaf: Leaf) -> str:
    return leaf.name if isinstance(leaf, Ref) else f"in{leaf.axis}"


def _value(leaf: Leaf) -> Any:
    return ENV[leaf.name] if isinstance(leaf, Ref) else 5


def _symbols() -> dict[str, Any]:
    return {name: symbol(value, name) for name, value in ENV.items()}


numbers = st.one_of(st.integers(-6, 9), st.sampled_from([0.5, -1.5, 2.0]))
leaf_trees = st.one_of(
    st.sampled_from([Ref("a"), Ref("b"), Ref("c"), Ref("w"), InputSize(0)]),
    numbers.map(Lit),
)
trees = st.recursive(
    leaf_trees,
    lambda inner: st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "/", "//", "%"]), inner, inner).map(
            lambda t: BinOp(*t)
        ),
        # a power's exponent is a small literal: 9 ** (9 ** 9) is a 370-million-digit integer
        # (a test worker grew to 15 GB on one), which the compiler's constants refuse first
        st.tuples(inner, st.integers(-2, 3)).map(lambda t: BinOp("**", t[0], Lit(t[1]))),
        inner.map(Neg),
        st.tuples(st.sampled_from(["min", "max", "abs"]), inner, inner).map(
            lambda t: Apply(t[0], (t[1],) if t[0] == "abs" else (t[1], t[2]))
        ),
    ),
    max_leaves=8,
)


def _safe(compute: Any) -> Any:
    try:
        value = compute()
    except (ZeroDivisionError, OverflowError, ValueError, TypeError):
        assume(False)
    assume(not isinstance(value, complex))
    assume(isinstance(value, int) or math.isfinite(value))
    assume(abs(value) < 1e12)
    return value


@settings(max_examples=400, deadline=None)
@given(trees)
def test_printed_tree_computes_its_value(tree: Any) -> None:
    expected = _safe(lambda: evaluate(tree, _value))
    text = to_python(tree, _name)
    scope = {**ENV, "in0": 5, "min": min, "max": max, "abs": abs}
    got = _safe(lambda: eval(text, {"__builtins__": {}}, scope))  # noqa: S307
    assert type(got) is type(expected) and got == expected, text


@settings(max_examples=300, deadline=None)
@given(trees)
def test_symbolic_arithmetic_records_a_tree_that_reevaluates(tree: Any) -> None:
    """Computing with symbolic numbers gives the plain result, and its tree evaluates
    (through the printer too) to that result."""
    symbols = _symbols()

    def value_of(leaf: Leaf) -> Any:
        return symbols[leaf.name] if isinstance(leaf, Ref) else symbol(5, InputSize(0))

    result = _safe(lambda: evaluate(tree, value_of))
    assert plain(result) == _safe(lambda: evaluate(tree, _value))
    if isinstance(result, SymInt | SymFloat):
        again = _safe(lambda: evaluate(result.tree, _value))
        assert again == plain(result) and type(again) is type(plain(result))


@pytest.mark.parametrize(
    ("compute", "text"),
    [
        (lambda s: 2 * (s["a"] // 2), "2 * (a // 2)"),  # issue 22: padding=k // 2 doubled
        (lambda s: 2 * s["a"] // 2, "2 * a // 2"),
        (lambda s: s["a"] - (s["b"] - 1), "a - (b - 1)"),
        (lambda s: s["a"] - s["b"] - 1, "a - b - 1"),
        (lambda s: 4 / (s["a"] - 1), "4 / (a - 1)"),
        (lambda s: 4 / s["a"] - 1, "4 / a - 1"),
        (lambda s: (-s["a"]) ** 2, "(-a) ** 2"),
        (lambda s: -(s["a"] ** 2), "-a ** 2"),
        (lambda s: s["a"] ** (s["b"] ** 2), "a ** b ** 2"),
        (lambda s: (s["a"] ** s["b"]) ** 2, "(a ** b) ** 2"),
        (lambda s: -s["a"].__neg__(), "-(-a)"),
        (lambda s: sym_max(8, s["a"] // 4), "max(8, a // 4)"),
        (lambda s: sym_min(s["a"], s["b"]) * 2, "min(a, b) * 2"),
        (lambda s: s["a"] * 1 + 0, "a"),  # neutral terms of shape rules are dropped
        (lambda s: (s["a"] + 2 * 1 - 1 * (3 - 1) - 1) // 1 + 1, "a"),  # offsets combined
        (lambda s: s["a"] - 2 - 1 + 4, "a + 1"),
        (lambda s: s["w"] - 1 + 1, "w - 1 + 1"),  # floats: not exact, kept
        (lambda s: s["a"] * 1.0, "a * 1.0"),  # the type changes: kept
        (lambda s: s["w"] // 1, "w // 1"),  # a float floor-divided: kept
    ],
)
def test_precedence_cases(compute: Any, text: str) -> None:
    result = compute(_symbols())
    assert to_python(result.tree, _name) == text
    assert eval(text, {"min": min, "max": max}, dict(ENV)) == plain(result)  # noqa: S307


def test_plain_numbers_stay_plain_and_bools_never_carry_a_tree() -> None:
    assert type(sym_max(2, 3)) is int
    assert symbol(True, "flag") is True
    assert symbol("x", "mode") == "x"
    a = symbol(7, "a")
    assert type(a > 3) is bool and hash(a) == hash(7) and repr(a) == "7"
    assert list(leaves((a + symbol(1, InputSize(0))).tree)) == [Ref("a"), InputSize(0)]


def test_symbolic_numbers_pickle_with_their_tree() -> None:
    value = symbol(7, "a") * 2 + symbol(2.5, "w")
    back = pickle.loads(pickle.dumps(value))
    assert back == value and back.tree == value.tree and type(back) is SymFloat


def test_a_symbolic_size_is_the_ops_layers_symbolic_size_by_its_own_class() -> None:
    """``ops.rules.smallest_size`` asks a symbolic size for ``min(...)`` through the
    ``SymbolicSize`` protocol it declares; ``SymInt`` and ``SymFloat`` define
    ``smallest`` in their own bodies (it was set on the classes from outside at import)."""
    from aurane.ops.rules import SymbolicSize, smallest_size

    for cls in (SymInt, SymFloat):
        assert "smallest" in vars(cls), cls
    symbols = _symbols()
    a, b = symbols["a"], symbols["b"]
    assert isinstance(a, SymbolicSize) and not isinstance(7, SymbolicSize)
    smallest = smallest_size(4, a, b)
    assert to_python(smallest.tree, _name) == "min(4, a, b)" and smallest == 3
    assert smallest_size(4, 2) == 2
