"""Numbers that remember the block-parameter expression they came from, as a typed tree.

Inside a parameterised block (``model BasicBlock(width, stride=1):``) each numeric
parameter is bound to a ``SymInt``/``SymFloat``: it behaves exactly like the number given at
the call (comparisons, hashing, printing, shape rules), and arithmetic on it returns another
symbolic number whose ``tree`` records the computation (``4 * width``). The channel/feature
sizes of each of the block's inputs are symbolic the same way (``InputSize``). Values that
never meet a parameter stay plain numbers.

The tree is a small, frozen expression: ``Ref`` (a block parameter), ``InputSize`` (an axis
of one block input), ``Lit`` (a number), ``BinOp``, ``Neg`` and ``Apply`` (a pure function:
``min``, ``max``, ``abs``, ``int``, ``round``, ``math.ceil``/``floor``/``sqrt``,
``make_divisible``). It is

- evaluated (``evaluate``) with other values for its references: the caller's values
  re-express a nested block's sizes in the caller's own parameters;
- printed as Python (``to_python``) with the precedence of each node, each reference
  written by a function the printer is given (``width`` in a constructor, ``self.width``
  in ``forward``): code generation never concatenates the text of sub-expressions.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Union

from aurane.records import record

# -- the tree --------------------------------------------------------------------------------


@record(frozen=True, slots=True)
class Ref:
    """A block parameter, by name."""

    name: str


@record(frozen=True, slots=True)
class InputSize:
    """An axis of one of the block's inputs (per-sample, batch excluded): 0
    channels/features; ``input`` counts the forward's inputs, 0 the first."""

    axis: int
    input: int = 0


@record(frozen=True, slots=True)
class Lit:
    """A plain number (never a bool)."""

    value: int | float


@record(frozen=True, slots=True)
class BinOp:
    """``left op right`` with Python's ``+ - * / // % **``."""

    op: str
    left: Expr
    right: Expr


@record(frozen=True, slots=True)
class Neg:
    operand: Expr


@record(frozen=True, slots=True)
class Apply:
    """A call of a pure function of numbers (``FUNCTIONS``)."""

    func: str
    args: tuple[Expr, ...]


@record(frozen=True, slots=True)
class Item:
    """An item of a constant table of numbers (``sizes[k]``, ``cfg[k][1]``): ``table``
    indexed by each of ``indices`` in turn, as Python indexes (a negative index counts from
    the end, as the language's does; one out of range raises ``IndexError``). ``text``:
    the table as Python, a list or tuple as the source wrote it."""

    table: tuple[Any, ...]  # nested tuples of plain numbers
    text: str
    indices: tuple[Expr, ...]


Expr = Union[Ref, InputSize, Lit, BinOp, Neg, Apply, Item]  # noqa: UP007 (a runtime alias)
Leaf = Union[Ref, InputSize]  # noqa: UP007

_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
}


def evaluate(tree: Expr, value_of: Callable[[Leaf], Any]) -> Any:
    """The value of ``tree`` with ``value_of`` giving each reference's value (numbers or
    symbolic numbers, so the result may be symbolic itself). Raises ``KeyError`` for a
    reference ``value_of`` does not know."""
    match tree:
        case Lit(value=value):
            return value
        case Ref() | InputSize():
            return value_of(tree)
        case BinOp(op=op, left=left, right=right):
            return _OPERATORS[op](evaluate(left, value_of), evaluate(right, value_of))
        case Neg(operand=operand):
            return -evaluate(operand, value_of)
        case Apply(func=func, args=args):
            return FUNCTIONS[func](*(evaluate(a, value_of) for a in args))
        case Item(table=table, text=text, indices=indices):
            return _item_at(table, text, [evaluate(i, value_of) for i in indices])
    raise TypeError(f"not an expression tree: {tree!r}")


def leaves(tree: Expr) -> Iterator[Leaf]:
    """The references of ``tree``, left to right (repeats included)."""
    match tree:
        case Ref() | InputSize():
            yield tree
        case BinOp(left=left, right=right):
            yield from leaves(left)
            yield from leaves(right)
        case Neg(operand=operand):
            yield from leaves(operand)
        case Apply(args=args) | Item(indices=args):
            for arg in args:
                yield from leaves(arg)


def input_reads(tree: Expr) -> int:
    """How many references to the block's input sizes ``tree`` makes."""
    return sum(isinstance(leaf, InputSize) for leaf in leaves(tree))


# precedence of Python's grammar: a higher number binds tighter
SUM, PRODUCT, UNARY, POWER, ATOM = 1, 2, 3, 4, 5
PREC = {"+": SUM, "-": SUM, "*": PRODUCT, "/": PRODUCT, "//": PRODUCT, "%": PRODUCT}


def precedence(tree: Expr) -> int:
    """How tightly the printed ``tree`` binds (``SUM`` < ``PRODUCT`` < ``UNARY`` < ``POWER`` <
    ``ATOM``): an operator of precedence p needs parentheses around a right operand of
    precedence p or lower."""
    match tree:
        case BinOp(op=op):
            return PREC.get(op, POWER)
        case Neg():
            return UNARY
        case Lit(value=value):
            return UNARY if value < 0 else ATOM
    return ATOM


class TableNamer:
    """How an item's table is written: the table itself (``[4, 8, 16, 32][k]``), as here;
    while a file's classes are planned and written, the module constant the file defines
    it as (``SIZES[k]``, ``tables.TableNames``)."""

    def __call__(self, text: str) -> str:
        return text

    def constants(self) -> Mapping[str, Any]:
        """The constants named so far, by name, with their values: what a check that
        evaluates generated text needs (``SIZES[k] > 8``)."""
        return {}


_AS_WRITTEN = TableNamer()
_TABLE_NAMER: ContextVar[TableNamer] = ContextVar("table_namer", default=_AS_WRITTEN)


@contextmanager
def tables_named(namer: TableNamer) -> Iterator[None]:
    """Within the block, an ``Item`` prints its table as ``namer`` names it."""
    token = _TABLE_NAMER.set(namer)
    try:
        yield
    finally:
        _TABLE_NAMER.reset(token)


def table_name(text: str) -> str:
    """How a table written ``text`` is read here (``TableNamer``): ``SIZES`` or ``text``."""
    return _TABLE_NAMER.get()(text)


def table_constants() -> Mapping[str, Any]:
    """The module constants of tables printed so far (``TableNamer.constants``)."""
    return _TABLE_NAMER.get().constants()


def to_python(tree: Expr, name: Callable[[Leaf], str]) -> str:
    """``tree`` as a Python expression; ``name`` writes each reference (an atom, such as
    ``width`` or ``self.width``). Parentheses exactly where Python's precedence and
    associativity need them, so the text computes the tree's value."""
    match tree:
        case Lit(value=value):
            return repr(value)
        case Ref() | InputSize():
            return name(tree)
        case Neg(operand=operand):
            inner = to_python(operand, name)
            return f"-({inner})" if precedence(operand) <= UNARY else f"-{inner}"
        case Apply(func=func, args=args):
            return f"{func}({', '.join(to_python(a, name) for a in args)})"
        case Item(text=text, indices=indices):
            table = _TABLE_NAMER.get()(text)
            return table + "".join(f"[{to_python(i, name)}]" for i in indices)
        case BinOp(op=op, left=left, right=right):
            prec = precedence(tree)
            ltext, rtext = to_python(left, name), to_python(right, name)
            lprec, rprec = precedence(left), precedence(right)
            if op == "**":  # right-associative, and tighter than a unary minus on its left
                left_parens, right_parens = lprec <= prec, rprec < UNARY
            else:  # left-associative: a right operand of the same precedence keeps its
                left_parens, right_parens = lprec < prec, rprec <= prec  # parentheses
            ltext = f"({ltext})" if left_parens else ltext
            rtext = f"({rtext})" if right_parens else rtext
            return f"{ltext} {op} {rtext}"
    raise TypeError(f"not an expression tree: {tree!r}")


# -- numbers that carry a tree ---------------------------------------------------------------


class SymInt(int):
    """An int that remembers the expression it came from (``tree``)."""

    tree: Expr

    def __new__(cls, value: int, tree: Expr) -> SymInt:
        obj = super().__new__(cls, value)
        obj.tree = tree
        return obj

    def __reduce__(self) -> Any:
        return (SymInt, (int(self), self.tree))

    @property
    def input_reads(self) -> int:
        """How many of the block's input sizes the tree reads (``ops.rules.merged_size``)."""
        return input_reads(self.tree)

    @staticmethod
    def smallest(*sizes: Any) -> Any:
        """The min of ``sizes`` as ``min(...)`` of their trees, right at any arguments
        (``ops.rules.smallest_size``, whose ``SymbolicSize`` this is; the builtin ``min``
        keeps the one smallest at the call's values)."""
        return sym_min(*sizes)


class SymFloat(float):
    """A float that remembers the expression it came from (``tree``)."""

    tree: Expr

    def __new__(cls, value: float, tree: Expr) -> SymFloat:
        obj = super().__new__(cls, value)
        obj.tree = tree
        return obj

    def __reduce__(self) -> Any:
        return (SymFloat, (float(self), self.tree))

    @property
    def input_reads(self) -> int:
        return input_reads(self.tree)

    @staticmethod
    def smallest(*sizes: Any) -> Any:
        """As ``SymInt.smallest``."""
        return sym_min(*sizes)


def is_symbolic(value: Any) -> bool:
    return isinstance(value, SymInt | SymFloat)


def tree_of(value: Any) -> Expr:
    """The tree of a symbolic number, or a ``Lit`` of a plain one."""
    if isinstance(value, SymInt | SymFloat):
        return value.tree
    return Lit(int(value) if isinstance(value, int) else float(value))


def symbol(value: Any, tree: Expr | str) -> Any:
    """``value`` remembering ``tree`` (a name stands for ``Ref(name)``); booleans and
    strings cannot, and stay plain."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(tree, str):
        tree = Ref(tree)
    if isinstance(value, int):
        return SymInt(int(value), tree)
    return SymFloat(float(value), tree)


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


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _simplified(op: str, left: Any, right: Any, result: Any) -> Expr | None:
    """The operand the result equals exactly (``x * 1``, ``x + 0``, ``x // 1``), keeping
    the generated expressions free of the rules' neutral terms; None otherwise."""
    for keep, other, on_left in ((left, right, True), (right, left, False)):
        if (other != 0 and other != 1) or is_symbolic(other):  # cheap test first: hot path
            continue
        if type(plain(keep)) is not type(result):
            continue
        neutral = (
            (op == "*" and other == 1)
            or (op == "+" and other == 0)
            or (on_left and op == "-" and other == 0)
            or (on_left and op in ("//", "**") and other == 1)
        )
        if neutral and (op != "//" or isinstance(result, int)):
            return tree_of(keep)
    return None


def _offset(op: str, left: Any, right: Any) -> Expr | None:
    """``x - 1 + 1`` as ``x``, ``k - 2 - 1`` as ``k - 3``: integer offsets of a sum
    combined (exact for ints; the rules' ``d * (k - 1) + 1`` otherwise piles them up)."""
    if not (op in ("+", "-") and isinstance(left, SymInt) and type(right) is int):
        return None
    tree = left.tree
    if not (
        isinstance(tree, BinOp)
        and tree.op in ("+", "-")
        and isinstance(tree.right, Lit)
        and type(tree.right.value) is int
    ):
        return None
    offset = (tree.right.value if tree.op == "+" else -tree.right.value) + (
        right if op == "+" else -right
    )
    if offset == 0:
        return tree.left
    return BinOp("+" if offset > 0 else "-", tree.left, Lit(abs(offset)))


def _raw(value: Any) -> Any:
    """A number's plain value (``plain`` for the operands of one operator: no containers)."""
    kind = type(value)
    if kind is SymInt:
        return int(value)
    if kind is SymFloat:
        return float(value)
    return value


def _binary(op: str, left: Any, right: Any) -> Any:
    result = _OPERATORS[op](_raw(left), _raw(right))
    if isinstance(result, bool) or not _number(result):
        return result
    tree = (
        _simplified(op, left, right, result)
        or _offset(op, left, right)
        or BinOp(op, tree_of(left), tree_of(right))
    )
    return symbol(result, tree)


def _install(cls: type) -> None:
    def method(op: str, reflected: bool) -> Any:
        def apply(self: Any, other: Any) -> Any:
            if not _number(other):
                return NotImplemented
            return _binary(op, other, self) if reflected else _binary(op, self, other)

        return apply

    for op, name in (
        ("+", "add"),
        ("-", "sub"),
        ("*", "mul"),
        ("/", "truediv"),
        ("//", "floordiv"),
        ("%", "mod"),
        ("**", "pow"),
    ):
        setattr(cls, f"__{name}__", method(op, False))
        setattr(cls, f"__r{name}__", method(op, True))
    base = int if cls is SymInt else float
    setattr(cls, "__neg__", lambda self: symbol(-base(self), Neg(self.tree)))  # noqa: B010
    setattr(cls, "__pos__", lambda self: self)  # noqa: B010
    setattr(cls, "__abs__", lambda self: sym_abs(self))  # noqa: B010


_install(SymInt)
_install(SymFloat)


def _function(name: str, compute: Callable[..., Any]) -> Callable[..., Any]:
    def call(*values: Any) -> Any:
        result = compute(*(plain(v) for v in values))
        if not any(is_symbolic(v) for v in values) or not _number(result):
            return result
        return symbol(result, Apply(name, tuple(tree_of(v) for v in values)))

    call.__name__ = f"sym_{name}"
    return call


def _make_divisible(value: Any, divisor: int, min_value: Any = None) -> int:
    """torchvision's ``_make_divisible`` (``semantics.functions.make_divisible``; the
    generated file defines the same function)."""
    floor = divisor if min_value is None else min_value
    rounded = max(floor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _item_at(table: tuple[Any, ...], text: str, positions: list[Any]) -> Any:
    """``table`` indexed by ``positions`` in turn, symbolic where a position is (its tree
    an ``Item``). A position must be an int, not a bool (the language's rule: ``True`` is
    no index), else ``TypeError``; one out of range raises ``IndexError``."""
    found: Any = table
    for position in positions:
        if isinstance(position, bool) or not isinstance(position, int):
            raise TypeError(f"an index must be an integer, not {type(position).__name__}")
        found = found[int(position)]
    if not any(is_symbolic(p) for p in positions) or not _number(found):
        return found
    return symbol(found, Item(table, text, tuple(tree_of(p) for p in positions)))


def table_of(container: Any) -> tuple[Any, ...] | None:
    """A list or tuple of plain numbers, or of such lists and tuples each as long as the
    others (a row's length is the same at every index), as nested tuples; None for any
    other (a string, a boolean, a symbolic number among the items)."""
    if not isinstance(container, list | tuple) or not container:
        return None
    if all(type(item) in (int, float) for item in container):
        return tuple(container)
    rows = [table_of(item) for item in container]
    if any(row is None for row in rows) or len({_shape(row) for row in rows}) != 1:
        return None
    return tuple(rows)


def _shape(table: Any) -> tuple[int, ...]:
    """A table's lengths, outer first; an item's shape is ()."""
    if isinstance(table, tuple):
        return (len(table), *(_shape(table[0]) if table else ()))
    return ()


def item(container: Any, position: Any) -> Any:
    """``container[position]`` as the constant evaluator reads an item (the position
    checked an in-range int): where the position is symbolic and the container a table of
    numbers (``table_of``), the item remembers the table and the position's tree (a row:
    each of its numbers), so ``dense(sizes[k])`` is ``[4, 8, 16, 32][k]`` at every ``k``
    rather than the call's number."""
    found = container[int(position)]
    if not is_symbolic(position):
        return found
    table = table_of(container)
    if table is None:
        return found
    return _rows(found, table, repr(plain(container)), (tree_of(position),))


def _rows(found: Any, table: tuple[Any, ...], text: str, indices: tuple[Expr, ...]) -> Any:
    if isinstance(found, list | tuple):
        items = [_rows(v, table, text, (*indices, Lit(j))) for j, v in enumerate(found)]
        return type(found)(items)
    return symbol(found, Item(table, text, indices))


sym_min = _function("min", min)
sym_max = _function("max", max)
sym_abs = _function("abs", abs)

# the pure functions a tree may call, by the name it prints (issue 24 item 3: a size that
# rounds a parameter, ``int(planes * (base_width / 64)) * groups`` or torchvision's
# ``_make_divisible(ratio * cin, 8)``, stays an expression so the block stays one class)
FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "min": sym_min,
    "max": sym_max,
    "abs": sym_abs,
    "int": _function("int", int),
    "round": _function("round", round),
    "math.ceil": _function("math.ceil", math.ceil),
    "math.floor": _function("math.floor", math.floor),
    "math.sqrt": _function("math.sqrt", math.sqrt),
    "make_divisible": _function("make_divisible", _make_divisible),
}
# a constant function of the language -> the name its tree prints (one argument each, but
# make_divisible's 2 or 3 and min/max's any number)
PRINTED: Mapping[str, str] = {
    "min": "min",
    "max": "max",
    "abs": "abs",
    "int": "int",
    "round": "round",
    "ceil": "math.ceil",
    "floor": "math.floor",
    "sqrt": "math.sqrt",
    "make_divisible": "make_divisible",
}
