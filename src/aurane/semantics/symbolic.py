"""Numbers that remember the block-parameter expression they came from.

Inside a parameterised block (``model BasicBlock(width, stride=1):``) each numeric
parameter is bound to a ``SymInt``/``SymFloat``: it behaves exactly like the number given at
the call (comparisons, hashing, printing, shape rules), and arithmetic on it returns another
symbolic number whose ``expr`` is the Python text of the computation (``4 * width``). The
torch backend prints ``expr`` instead of the value, so the generated class is written in
terms of its constructor parameters. Values that never meet a parameter stay plain numbers.
"""

from __future__ import annotations

from typing import Any

# precedence of the Python text: atoms bind tightest
_ATOM, _POWER, _UNARY, _PRODUCT, _SUM = 5, 4, 3, 2, 1
_PREC = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT, "//": _PRODUCT, "%": _PRODUCT}


class Symbolic:
    """Mixin: ``expr`` (Python text) and its precedence ``prec``."""

    expr: str
    prec: int


def expr_of(value: Any) -> tuple[str, int]:
    """The text of ``value`` and its precedence (a plain number is an atom)."""
    if isinstance(value, Symbolic):
        return value.expr, value.prec
    text = repr(int(value)) if isinstance(value, int) else repr(float(value))
    return text, (_UNARY if text.startswith("-") else _ATOM)


def is_symbolic(value: Any) -> bool:
    return isinstance(value, Symbolic)


def symbol(value: Any, expr: str, prec: int = _ATOM) -> Any:
    """``value`` remembering ``expr``; booleans and strings cannot, and stay plain."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, int):
        return SymInt(value, expr, prec)
    return SymFloat(value, expr, prec)


def plain(value: Any) -> Any:
    """``value`` with every symbolic number replaced by its plain value (tuples too)."""
    if isinstance(value, SymInt):
        return int(value)
    if isinstance(value, SymFloat):
        return float(value)
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _binary(op: str, left: Any, right: Any, result: Any) -> Any:
    if result is NotImplemented or isinstance(result, bool):
        return result
    prec = _PREC[op] if op != "**" else _POWER
    ltext, lprec = expr_of(left)
    rtext, rprec = expr_of(right)
    if lprec < prec or (op == "**" and lprec <= prec):
        ltext = f"({ltext})"
    if rprec < prec or (rprec == prec and op not in ("+", "*")) and op != "**":
        rtext = f"({rtext})"
    return symbol(result, f"{ltext} {op} {rtext}", prec)


def _methods(base: type) -> dict[str, Any]:
    def op(name: str, symbol_: str, reflected: bool) -> Any:
        method = getattr(base, name)

        def apply(self: Any, other: Any) -> Any:
            if not isinstance(other, int | float) or isinstance(other, bool):
                return NotImplemented
            result = method(base(self), other)
            if reflected:
                return _binary(symbol_, other, self, result)
            return _binary(symbol_, self, other, result)

        return apply

    table: dict[str, Any] = {}
    for text, name in (
        ("+", "add"),
        ("-", "sub"),
        ("*", "mul"),
        ("/", "truediv"),
        ("//", "floordiv"),
        ("%", "mod"),
        ("**", "pow"),
    ):
        table[f"__{name}__"] = op(f"__{name}__", text, False)
        table[f"__r{name}__"] = op(f"__r{name}__", text, True)

    def neg(self: Any) -> Any:
        text, prec = expr_of(self)
        return symbol(-base(self), f"-({text})" if prec < _UNARY else f"-{text}", _UNARY)

    table["__neg__"] = neg
    table["__pos__"] = lambda self: self
    return table


class SymInt(int, Symbolic):
    expr: str
    prec: int

    def __new__(cls, value: int, expr: str, prec: int = _ATOM) -> SymInt:
        obj = super().__new__(cls, value)
        obj.expr, obj.prec = expr, prec
        return obj

    def __reduce__(self) -> Any:
        return (SymInt, (int(self), self.expr, self.prec))


class SymFloat(float, Symbolic):
    expr: str
    prec: int

    def __new__(cls, value: float, expr: str, prec: int = _ATOM) -> SymFloat:
        obj = super().__new__(cls, value)
        obj.expr, obj.prec = expr, prec
        return obj

    def __reduce__(self) -> Any:
        return (SymFloat, (float(self), self.expr, self.prec))


for _name, _method in _methods(int).items():
    setattr(SymInt, _name, _method)
for _name, _method in _methods(float).items():
    setattr(SymFloat, _name, _method)


class _WithText:
    """A value that carries the source text it is emitted as (``text``)."""

    text: str

    def __new__(cls, value: Any, text: str) -> Any:
        obj = super().__new__(cls, value)  # type: ignore[call-arg]  # the builtin base's
        obj.text = text
        return obj


class _Shown(_WithText):
    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


class ShownInt(_Shown, int):
    """A number printed as its expression (``str`` and ``repr``): for emission only."""


class ShownFloat(_Shown, float):
    """A float printed as its expression (``str`` and ``repr``): for emission only."""


class ShownBool(_Shown, int):
    """A boolean block parameter printed as its name (an int: ``bool`` cannot be subclassed)."""


class ShownStr(_WithText, str):
    """A string block parameter printed as its name (``lit`` writes ``text``, not a quote)."""


def shown(value: Any, rename: dict[str, str] | None = None) -> Any:
    """``value`` with symbolic numbers turned into numbers printed as their expression."""
    if isinstance(value, SymInt | SymFloat):
        text = value.expr
        for old, new in (rename or {}).items():
            text = text.replace(old, new)
        if isinstance(value, SymInt):
            return ShownInt(int(value), text)
        return ShownFloat(float(value), text)
    if isinstance(value, tuple):
        return tuple(shown(v, rename) for v in value)
    if isinstance(value, list):
        return [shown(v, rename) for v in value]
    if isinstance(value, dict):
        return {k: shown(v, rename) for k, v in value.items()}
    return value
