"""The pure functions constant expressions may call, evaluated at compile time.

``len range enumerate zip min max abs round ceil floor sqrt int float make_divisible``:
Python's meaning, on the constant values Aurane has (numbers, strings, booleans, None,
tuples, lists, ranges). ``make_divisible(v, divisor, min_value=None)`` is torchvision's
``_make_divisible``. Sequences built here are bounded (``MAX_SEQUENCE``) so that no
expression fills memory; a ``range`` stays lazy until something lists it. Nothing else is
ever called: the table is the whole list.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from aurane.ops.rules import is_int, is_number
from aurane.semantics.symbolic import plain
from aurane.semantics.values import show, type_name

MAX_SEQUENCE = 100_000  # items a constant list, enumerate or zip may hold


class FunctionError(Exception):
    """A call with values the function does not take; the message says why."""


def _sequence(name: str, value: Any) -> list[Any] | range:
    if isinstance(value, range):
        return value
    if isinstance(value, list | tuple | str):
        return list(value)
    raise FunctionError(f"{name}() needs a list, tuple or range, got {type_name(value)}")


def _number(name: str, value: Any) -> Any:
    if not is_number(value):
        raise FunctionError(f"{name}() needs a number, got {type_name(value)} {show(plain(value))}")
    return value


def _integer(name: str, value: Any) -> int:
    if not is_int(value):
        raise FunctionError(
            f"{name}() needs an integer, got {type_name(value)} {show(plain(value))}"
        )
    return int(value)


def _bounded(items: list[Any]) -> list[Any]:
    if len(items) > MAX_SEQUENCE:
        raise FunctionError(f"the result has {len(items)} items; the limit is {MAX_SEQUENCE}")
    return items


def _len(value: Any) -> int:
    return len(_sequence("len", value))


def _range(*args: Any) -> range:
    if not 1 <= len(args) <= 3:
        raise FunctionError(f"range() takes 1 to 3 arguments, got {len(args)}")
    numbers = [_integer("range", a) for a in args]
    if len(numbers) == 3 and numbers[2] == 0:
        raise FunctionError("range() step must not be zero")
    return range(*numbers)


def _enumerate(value: Any, start: Any = 0) -> list[tuple[Any, Any]]:
    items = _sequence("enumerate", value)
    if len(items) > MAX_SEQUENCE:
        raise FunctionError(f"enumerate() of {len(items)} items; the limit is {MAX_SEQUENCE}")
    first = _integer("enumerate", start)
    return [(first + index, item) for index, item in enumerate(items)]


def _zip(*values: Any) -> list[tuple[Any, ...]]:
    sequences = [_sequence("zip", v) for v in values]
    if not sequences:
        return []
    count = min(len(s) for s in sequences)
    if count > MAX_SEQUENCE:
        raise FunctionError(f"zip() of {count} items; the limit is {MAX_SEQUENCE}")
    return [tuple(s[index] for s in sequences) for index in range(count)]


def _extreme(name: str, pick: Callable[..., Any]) -> Callable[..., Any]:
    def apply(*args: Any) -> Any:
        items = list(_sequence(name, args[0])) if len(args) == 1 else list(args)
        if not items:
            raise FunctionError(f"{name}() of an empty sequence")
        for item in items:
            _number(name, item)
        return pick(items)

    return apply


def _abs(value: Any) -> Any:
    return abs(_number("abs", value))


def _round(value: Any, digits: Any = None) -> Any:
    _number("round", value)
    if digits is None:
        return round(plain(value))
    return round(plain(value), _integer("round", digits))


def _ceil(value: Any) -> int:
    return int(math.ceil(plain(_number("ceil", value))))


def _floor(value: Any) -> int:
    return int(math.floor(plain(_number("floor", value))))


def _sqrt(value: Any) -> float:
    number = _number("sqrt", value)
    if number < 0:
        raise FunctionError(f"sqrt() of a negative number ({show(plain(number))})")
    return math.sqrt(plain(number))


def _int(value: Any) -> int:
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise FunctionError(f"int() cannot read {value!r} as a number") from None
    return int(plain(_number("int", value)))


def _float(value: Any) -> float:
    if isinstance(value, str):
        try:
            result = float(value)
        except ValueError:
            raise FunctionError(f"float() cannot read {value!r} as a number") from None
        if not math.isfinite(result):
            raise FunctionError("float() must give a finite number")
        return result
    return float(plain(_number("float", value)))


def make_divisible(value: Any, divisor: Any, min_value: Any = None) -> int:
    """torchvision's ``_make_divisible``: ``value`` rounded to a multiple of ``divisor``,
    at least ``min_value`` (``divisor`` when None) and never 10% below ``value``."""
    number = plain(_number("make_divisible", value))
    step = _integer("make_divisible", divisor)
    if step <= 0:
        raise FunctionError("make_divisible() needs a positive divisor")
    floor = step if min_value is None else _integer("make_divisible", min_value)
    rounded = max(floor, int(number + step / 2) // step * step)
    if rounded < 0.9 * number:
        rounded += step
    return rounded


_TABLE: dict[str, Callable[..., Any]] = {
    "len": _len,
    "range": _range,
    "enumerate": _enumerate,
    "zip": _zip,
    "min": _extreme("min", min),
    "max": _extreme("max", max),
    "abs": _abs,
    "round": _round,
    "ceil": _ceil,
    "floor": _floor,
    "sqrt": _sqrt,
    "int": _int,
    "float": _float,
    "make_divisible": make_divisible,
}
# the keyword arguments each function takes (Python's names)
_KEYWORDS: dict[str, frozenset[str]] = {
    "make_divisible": frozenset({"min_value", "divisor"}),
    "enumerate": frozenset({"start"}),
    "round": frozenset({"ndigits"}),
}
_ARITY: dict[str, tuple[int, int]] = {
    "len": (1, 1),
    "abs": (1, 1),
    "ceil": (1, 1),
    "floor": (1, 1),
    "sqrt": (1, 1),
    "int": (1, 1),
    "float": (1, 1),
    "round": (1, 2),
    "enumerate": (1, 2),
    "make_divisible": (2, 3),
    "range": (1, 3),
    "min": (1, 1 << 16),
    "max": (1, 1 << 16),
    "zip": (1, 1 << 16),
}

FUNCTION_NAMES: tuple[str, ...] = tuple(_TABLE)


def is_function(name: str) -> bool:
    return name in _TABLE


def call_function(name: str, args: list[Any], keywords: dict[str, Any]) -> Any:
    """``name(*args, **keywords)``; raises ``FunctionError`` with the reason it cannot."""
    allowed = _KEYWORDS.get(name, frozenset())
    for key in keywords:
        if key not in allowed:
            raise FunctionError(f"{name}() takes no argument '{key}'")
    if name == "round" and "ndigits" in keywords:
        args = [*args, keywords.pop("ndigits")]
    low, high = _ARITY[name]
    count = len(args) + len(keywords)
    if not low <= count <= high:
        expected = str(low) if low == high else f"{low} to {high}"
        raise FunctionError(f"{name}() takes {expected} arguments, got {count}")
    try:
        result = _TABLE[name](*args, **keywords)
    except (OverflowError, ValueError) as error:
        raise FunctionError(f"{name}(): {error}") from None
    except TypeError as error:
        raise FunctionError(f"{name}() cannot take these values: {error}") from None
    if isinstance(result, list):
        return _bounded(result)
    return result
