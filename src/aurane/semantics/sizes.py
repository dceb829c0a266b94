"""Symbolic sizes: integer expressions over declared size symbols (``seq = dim(1, 2048)``).

A ``SizeExpr`` is a frozen, canonical polynomial with integer coefficients over atoms; an
atom is a declared ``Symbol`` (a name with a range) or a ``FloorDiv`` of an expression by a
positive integer that does not divide it exactly. Arithmetic (``+ - * // %`` with ints and
other expressions) simplifies as it goes and gives back a plain ``int`` whenever the result
is a constant, so shape rules written for ints work on symbolic sizes unchanged:
``(seq + 2 * 1 - 3) // 1 + 1`` is ``seq``, ``(seq - 3) // 2 + 1`` stays a floor division.

Comparisons are decided over the symbols' ranges (interval bounds): ``seq + 2 >= 3`` holds
for every ``seq >= 1``. A comparison that holds for some sizes in the range and fails for
others raises ``UndecidedSize``; ``int()`` / indexing raise ``ConcreteSizeNeeded``. Lowering
turns both into a located diagnostic saying the size must be concrete (or the range
narrower).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Union  # noqa: UP035

from aurane.records import record

__all__ = [
    "ConcreteSizeNeeded",
    "FloorDiv",
    "SizeExpr",
    "Symbol",
    "UndecidedSize",
    "bounds",
    "evaluate",
    "example_sizes",
    "free_symbols",
    "is_symbolic",
    "jsonable",
    "symbol",
]


class ConcreteSizeNeeded(Exception):
    """A rule needs a concrete size where a symbolic one was given."""


class UndecidedSize(ConcreteSizeNeeded):
    """A comparison of sizes holds for part of the symbols' ranges only."""


@record(frozen=True, order=True)
class Symbol:
    """A declared size: ``seq`` with ``low <= seq <= high`` (``high`` None: unbounded)."""

    name: str
    low: int = 1
    high: int | None = None

    def __str__(self) -> str:
        return self.name


@record(frozen=True)
class FloorDiv:
    """``expr // divisor`` where the divisor (> 1) does not divide ``expr`` exactly."""

    expr: SizeExpr
    divisor: int

    def __str__(self) -> str:
        inner = str(self.expr)
        if len(self.expr.terms) > 1 or self.expr.terms[0][1] != 1:
            inner = f"({inner})"
        return f"{inner} // {self.divisor}"


Atom = Symbol | FloorDiv
Monomial = tuple[Atom, ...]  # sorted by _atom_key; () is the constant term
Size = Union[int, "SizeExpr"]


def _atom_key(atom: Atom) -> tuple[int, str]:
    return (0, atom.name) if isinstance(atom, Symbol) else (1, str(atom))


def _mono_key(item: tuple[Monomial, int]) -> tuple[int, list[tuple[int, str]]]:
    mono = item[0]
    return (-len(mono) if mono else 1, [_atom_key(a) for a in mono])


@record(frozen=True)
class SizeExpr:
    """A polynomial: ``terms`` maps monomials (sorted atom tuples) to non-zero coefficients."""

    terms: tuple[tuple[Monomial, int], ...]

    # -- construction ---------------------------------------------------------------

    @staticmethod
    def make(terms: Mapping[Monomial, int]) -> Size:
        """The canonical value of ``terms``: a plain int when no symbol is left."""
        kept = tuple(sorted(((m, c) for m, c in terms.items() if c != 0), key=_mono_key))
        if not kept:
            return 0
        if len(kept) == 1 and kept[0][0] == ():
            return kept[0][1]
        return SizeExpr(kept)

    @staticmethod
    def of(value: Size) -> dict[Monomial, int]:
        if isinstance(value, SizeExpr):
            return dict(value.terms)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"not a size: {value!r}")
        return {(): value} if value else {}

    # -- arithmetic -----------------------------------------------------------------

    def __add__(self, other: Any) -> Size:
        if not _is_size(other):
            return NotImplemented
        terms = SizeExpr.of(self)
        for mono, coeff in SizeExpr.of(other).items():
            terms[mono] = terms.get(mono, 0) + coeff
        return SizeExpr.make(terms)

    __radd__ = __add__

    def __neg__(self) -> Size:
        return SizeExpr.make({m: -c for m, c in self.terms})

    def __pos__(self) -> SizeExpr:
        return self

    def __sub__(self, other: Any) -> Size:
        if not _is_size(other):
            return NotImplemented
        result: Size = self + (-other)
        return result

    def __rsub__(self, other: Any) -> Size:
        if not _is_size(other):
            return NotImplemented
        result: Size = (-self) + other
        return result

    def __mul__(self, other: Any) -> Size:
        if not _is_size(other):
            return NotImplemented
        terms: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in SizeExpr.of(other).items():
                mono = tuple(sorted(m1 + m2, key=_atom_key))
                terms[mono] = terms.get(mono, 0) + c1 * c2
        return SizeExpr.make(terms)

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Size:
        if isinstance(other, SizeExpr):
            raise ConcreteSizeNeeded(f"cannot divide {self} by the symbolic size {other}")
        if not _is_size(other):
            return NotImplemented
        return _floordiv(self, other)

    def __rfloordiv__(self, other: Any) -> Size:
        if not _is_size(other):
            return NotImplemented
        raise ConcreteSizeNeeded(f"cannot divide {other} by the symbolic size {self}")

    def __mod__(self, other: Any) -> Size:
        if not _is_size(other):
            return NotImplemented
        result: Size = self - other * (self // other)
        return result

    def __rmod__(self, other: Any) -> Size:
        if not _is_size(other):
            return NotImplemented
        raise ConcreteSizeNeeded(f"cannot take {other} modulo the symbolic size {self}")

    def __truediv__(self, other: Any) -> Any:
        raise ConcreteSizeNeeded(f"cannot divide the symbolic size {self} exactly")

    __rtruediv__ = __truediv__

    # -- comparisons (decided over the symbols' ranges) ------------------------------

    def _decide(self, other: Any, holds: str) -> bool:
        if not _is_size(other):
            return NotImplemented  # type: ignore[no-any-return]
        low, high = bounds(self - other)
        # the difference d = self - other; each relation is "d OP 0"
        always, never = {
            "<": (high < 0, low >= 0),
            "<=": (high <= 0, low > 0),
            ">": (low > 0, high <= 0),
            ">=": (low >= 0, high < 0),
        }[holds]
        if always:
            return True
        if never:
            return False
        raise UndecidedSize(
            f"whether {self} {holds} {other} depends on "
            + ", ".join(_range_text(s) for s in sorted(free_symbols(self - other)))
            + _threshold(self - other, holds)
        )

    def __lt__(self, other: Any) -> bool:
        return self._decide(other, "<")

    def __le__(self, other: Any) -> bool:
        return self._decide(other, "<=")

    def __gt__(self, other: Any) -> bool:
        return self._decide(other, ">")

    def __ge__(self, other: Any) -> bool:
        return self._decide(other, ">=")

    def __int__(self) -> int:
        raise ConcreteSizeNeeded(f"the size {self} is symbolic")

    __index__ = __int__

    def __float__(self) -> float:
        raise ConcreteSizeNeeded(f"the size {self} is symbolic")

    # -- text -----------------------------------------------------------------------

    def __str__(self) -> str:
        parts: list[str] = []
        for mono, coeff in self.terms:
            magnitude = abs(coeff)
            wrap = len(mono) > 1 or magnitude != 1
            body = "*".join(f"({a})" if wrap and isinstance(a, FloorDiv) else str(a) for a in mono)
            if not mono:
                text = str(magnitude)
            elif magnitude == 1:
                text = body
            else:
                text = f"{magnitude}*{body}"
            if not parts:
                parts.append(f"-{text}" if coeff < 0 else text)
            else:
                parts.append(f"- {text}" if coeff < 0 else f"+ {text}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"SizeExpr({self})"

    def __format__(self, spec: str) -> str:
        # tables format counts with "{:,}" or widths: a formula prints as itself, padded
        align = next((c for c in "<>^" if c in spec), None)
        width = "".join(ch for ch in spec if ch.isdigit())
        return format(str(self), f"{align or '>'}{width}") if width else str(self)

    def to_json(self) -> str:
        return str(self)


def _is_size(value: Any) -> bool:
    return isinstance(value, SizeExpr) or (isinstance(value, int) and not isinstance(value, bool))


def _floordiv(expr: SizeExpr, k: int) -> Size:
    if k == 0:
        raise ZeroDivisionError("integer division by zero")
    if k < 0:
        raise ConcreteSizeNeeded(f"cannot divide the symbolic size {expr} by a negative number")
    if k == 1:
        return expr
    exact: dict[Monomial, int] = {}
    rest: dict[Monomial, int] = {}
    for mono, coeff in expr.terms:
        if mono == ():
            exact[()] = coeff // k  # move whole multiples of k out of the remainder
            if coeff % k:
                rest[()] = coeff % k
        elif coeff % k == 0:
            exact[mono] = coeff // k
        else:
            exact[mono] = coeff // k
            rest[mono] = coeff % k
    remainder = SizeExpr.make(rest)
    quotient = SizeExpr.make(exact)
    if isinstance(remainder, int):
        return quotient + remainder // k
    return quotient + SizeExpr.make({(FloorDiv(remainder, k),): 1})  # type: ignore[dict-item]


def symbol(name: str, low: int = 1, high: int | None = None) -> SizeExpr:
    """The expression of one declared symbol."""
    return SizeExpr((((Symbol(name, low, high),), 1),))


def is_symbolic(value: Any) -> bool:
    return isinstance(value, SizeExpr)


def free_symbols(value: Any) -> set[Symbol]:
    """Every symbol in a size, a shape or a nested tuple of them."""
    found: set[Symbol] = set()
    if isinstance(value, SizeExpr):
        for mono, _ in value.terms:
            for atom in mono:
                if isinstance(atom, Symbol):
                    found.add(atom)
                else:
                    found |= free_symbols(atom.expr)
    elif isinstance(value, tuple | list):
        for item in value:
            found |= free_symbols(item)
    return found


def evaluate(value: Any, env: Mapping[str, int]) -> Any:
    """``value`` (a size, shape or nested tuple) with every symbol replaced from ``env``.

    A symbol missing from ``env`` stays symbolic.
    """
    if isinstance(value, tuple):
        return tuple(evaluate(v, env) for v in value)
    if isinstance(value, list):
        return [evaluate(v, env) for v in value]
    if not isinstance(value, SizeExpr):
        return value
    total: Size = 0
    for mono, coeff in value.terms:
        product: Size = coeff
        for atom in mono:
            if isinstance(atom, Symbol):
                product = product * (env[atom.name] if atom.name in env else _expr(atom))
            else:
                product = product * (evaluate(atom.expr, env) // atom.divisor)
        total = total + product
    return total


def _expr(atom: Symbol) -> SizeExpr:
    return SizeExpr((((atom,), 1),))


_RELATIONS: dict[str, Callable[[Any], bool]] = {
    "<": lambda d: d < 0,
    "<=": lambda d: d <= 0,
    ">": lambda d: d > 0,
    ">=": lambda d: d >= 0,
}


def _threshold(difference: Size, holds: str) -> str:
    """For one symbol: where the relation starts or stops holding (a bisection over the
    declared range, assuming the usual monotone size formulas)."""
    symbols = free_symbols(difference)
    if len(symbols) != 1:
        return ""
    sym = next(iter(symbols))
    test = _RELATIONS[holds]

    def at(value: int) -> bool:
        return bool(test(evaluate(difference, {sym.name: value})))

    low, high = sym.low, sym.high if sym.high is not None else max(sym.low * 2, 1 << 20)
    first = at(low)
    if at(high) == first:
        return ""
    lo, hi = low, high  # at(lo) == first, at(hi) != first
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid) == first:
            lo = mid
        else:
            hi = mid
    if first:
        return f": true up to {sym.name} = {lo}, false from {hi}"
    return f": false up to {sym.name} = {lo}, true from {hi}"


def _range_text(s: Symbol) -> str:
    return f"{s.name} (declared {s.low}..{s.high if s.high is not None else 'unbounded'})"


def bounds(value: Size) -> tuple[float, float]:
    """Lower and upper bound of a size over its symbols' ranges (``math.inf`` unbounded)."""
    if not isinstance(value, SizeExpr):
        return value, value
    low, high = 0.0, 0.0
    for mono, coeff in value.terms:
        lo, hi = float(coeff), float(coeff)
        for atom in mono:
            a_lo, a_hi = _atom_bounds(atom)
            lo, hi = _mul_interval((lo, hi), (a_lo, a_hi))
        low, high = low + lo, high + hi
    return low, high


def _atom_bounds(atom: Atom) -> tuple[float, float]:
    if isinstance(atom, Symbol):
        return float(atom.low), (math.inf if atom.high is None else float(atom.high))
    lo, hi = bounds(atom.expr)
    return (
        math.floor(lo / atom.divisor) if math.isfinite(lo) else lo,
        math.floor(hi / atom.divisor) if math.isfinite(hi) else hi,
    )


def _mul_interval(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    products = [_mul(x, y) for x in a for y in b]
    return min(products), max(products)


def _mul(x: float, y: float) -> float:
    if x == 0 or y == 0:
        return 0.0
    return x * y


def jsonable(value: Any) -> Any:
    """``value`` (a JSON payload) with every ``SizeExpr`` replaced by its formula text."""
    if isinstance(value, SizeExpr):
        return str(value)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


EXAMPLE_SIZES = (17, 29)  # run-time sizes for symbols: neither 0/1 nor a trace's batch


def example_sizes(value: Any, index: int = 0) -> dict[str, int]:
    """A concrete size for every symbol in ``value`` (a shape), inside its declared range:
    ``index`` 0 for tracing and verifying, 1 for a second, different check size."""
    sizes: dict[str, int] = {}
    for sym in free_symbols(value):
        wanted = EXAMPLE_SIZES[index % len(EXAMPLE_SIZES)]
        high = sym.high if sym.high is not None else wanted
        sizes[sym.name] = max(sym.low, min(wanted, high))
        if index and sym.high is not None and sizes[sym.name] == example_sizes(value)[sym.name]:
            sizes[sym.name] = max(sym.low, sym.high - 1) if sym.high > sym.low else sym.low
    return sizes
