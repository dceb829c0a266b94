"""Values of a parameterised block's instance as its generated class writes them.

A symbolic number (``aurane.semantics.symbolic``) becomes a number whose ``repr`` is its
expression tree printed as Python (``4 * width``), each reference written by the scope the
value is shown in: the constructor writes ``width``, a ``forward`` statement
``self.width``. A boolean or string argument a block parameter gave is shown by the
parameter's name the same way. The emitters need no change: they write values with
``repr``/``lit``, and arithmetic on a shown number gives a plain one, which the class then
writes as a literal (folded: classes differ where the literals do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aurane.semantics.symbolic import (
    ATOM,
    UNARY,
    Leaf,
    Ref,
    SymFloat,
    SymInt,
    leaves,
    precedence,
    to_python,
)

Naming = Callable[[Leaf], str]


class _WithText:
    """A value that carries the source text it is emitted as (``text``), written when it
    is printed: the scope's naming then learns which references the class reads."""

    _write: Callable[[], str]
    precedence: int  # of the expression written (symbolic.precedence)

    def __new__(cls, value: Any, write: Callable[[], str], binds: int = ATOM) -> Any:
        obj = super().__new__(cls, value)  # type: ignore[call-arg]  # the builtin base's
        obj._write = write
        obj.precedence = binds
        return obj

    @property
    def text(self) -> str:
        return self._write()


class _Shown(_WithText):
    # the expression tree a number is printed from (None: a parameter's name): a shape
    # comment writes it with names that call nothing (``modules.shape_comment``)
    tree: Any = None

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


# told the block parameters a folded number written as its value dropped (``nn.Linear(8,
# w)`` where the 8 is the width after ``conv_transpose2d(16, kernel=k, padding=p)``: ``k``
# and ``p``; none for one whose tree reads none), each time it is written
Dropped = Callable[[frozenset[str]], None]


class _Folded:
    """A number written as its value although its tree reads block parameters: printing it
    tells ``_dropped`` which, so the class can refuse other values of them."""

    _refs: frozenset[str]
    _dropped: Dropped

    def __new__(cls, value: Any, refs: frozenset[str], dropped: Dropped) -> Any:
        obj = super().__new__(cls, value)  # type: ignore[call-arg]  # the builtin base's
        obj._refs = refs
        obj._dropped = dropped
        return obj

    def __repr__(self) -> str:
        self._dropped(self._refs)
        return super().__repr__()

    __str__ = __repr__


class FoldedInt(_Folded, int):
    """An int written as its value that a parameter changes (``_Folded``)."""


class FoldedFloat(_Folded, float):
    """A float written as its value that a parameter changes (``_Folded``)."""


def show(
    value: Any,
    name: Naming,
    folds: Callable[[Leaf], bool] | None = None,
    dropped: Dropped | None = None,
) -> Any:
    """``value`` with symbolic numbers turned into numbers printed as their expression,
    references written by ``name`` (tuples, lists and dicts item by item); a number whose
    tree has a leaf that ``folds`` is written as its value instead (a spatial size in a
    constructor), telling ``dropped`` the parameters of its tree as it is written."""
    if isinstance(value, SymInt | SymFloat):
        tree = value.tree
        if folds is not None and any(folds(leaf) for leaf in leaves(tree)):
            number = int(value) if isinstance(value, SymInt) else float(value)
            refs = frozenset(leaf.name for leaf in leaves(tree) if isinstance(leaf, Ref))
            if dropped is None:
                return number
            folded = FoldedInt if isinstance(number, int) else FoldedFloat
            return folded(number, refs, dropped)
        kind = ShownInt if isinstance(value, SymInt) else ShownFloat
        shown = kind(value, lambda: to_python(tree, name), precedence(tree))
        shown.tree = tree
        return shown
    if isinstance(value, tuple):
        return tuple(show(v, name, folds, dropped) for v in value)
    if isinstance(value, list):
        return [show(v, name, folds, dropped) for v in value]
    if isinstance(value, dict):
        return {k: show(v, name, folds, dropped) for k, v in value.items()}
    return value


def show_named(value: Any, param: str, name: Naming) -> Any:
    """A boolean or string argument shown as the block parameter that gave it."""
    kind = ShownStr if isinstance(value, str) else ShownBool
    return kind(value, lambda: name(Ref(param)))


def operand(value: Any, text: str, binds: int) -> str:
    """``text`` (the written ``value``) as the right operand of an operator of precedence
    ``binds`` (``x * (4 / (wd - 1))``): parenthesised when the expression binds no tighter
    than the operator. A plain negative number binds as a unary minus."""
    if isinstance(value, _WithText):
        tight = value.precedence
    elif isinstance(value, int | float) and value < 0:
        tight = UNARY
    else:
        tight = ATOM
    return f"({text})" if tight <= binds else text
