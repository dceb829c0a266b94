"""The shared value predicates and element counts of ops.rules."""

from __future__ import annotations

import pytest

from aurane.ops.rules import is_int, is_number, numel
from aurane.ops.spec import TensorType


@pytest.mark.parametrize(
    ("value", "integer", "number"),
    [
        (3, True, True),
        (-1, True, True),
        (2.5, False, True),
        (True, False, False),
        ("3", False, False),
        (None, False, False),
    ],
)
def test_booleans_are_neither_ints_nor_numbers(value: object, integer: bool, number: bool) -> None:
    assert is_int(value) is integer
    assert is_number(value) is number


@pytest.mark.parametrize(("shape", "count"), [((), 1), ((7,), 7), ((3, 4, 5), 60), ((2, 0), 0)])
def test_numel(shape: tuple[int, ...], count: int) -> None:
    assert numel(shape) == count
    assert TensorType(shape, None).numel == count
