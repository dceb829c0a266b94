"""Aurane constant expressions as Python source text (issue 24 item 3).

One printer for the generator's two writers of source expressions: the ``if`` tests of a
block joined over its branches (``branches.py``) and the rolled network's loops and
arguments (``rolled.py``). Each says how it writes names (``leaf``) and which functions it
can call; the operators, their parentheses and literals are written here once.
"""

from __future__ import annotations

import ast as pyast
from collections.abc import Callable, Mapping

from aurane.backends.torch.kinds import (
    differs,
    equal_text,
    identity_text,
    is_flag,
    is_number,
    kinds_equal_text,
    member_text,
)
from aurane.syntax import ast


class NotPython(Exception):
    """The expression reads something the caller cannot write in Python (the message says
    what)."""


# Python's binding strength of each operator, for parentheses
PRECEDENCE = {"or": 3, "and": 4, "not": 5, "cmp": 6, "+": 11, "-": 11, "*": 12, "/": 12}
PRECEDENCE.update({"//": 12, "%": 12, "unary": 13, "**": 14})
ATOM = 20
CONDITIONAL = 1  # ``a if test else b``
# the comparison ``not (a op b)`` is, written as one writes it (``q not in (0, 5)``)
_FLIPPED = {"==": "!=", "!=": "==", "in": "not in", "not in": "in"}

Printed = tuple[str, int]  # an expression's text and how tightly it binds
# the caller's writing of ``expr`` (a name, ``x.shape[1]``), given the printer for the parts
# it reads, or None where the printer writes it
Leaf = Callable[[ast.Expr, Callable[[ast.Expr], Printed]], "Printed | None"]


def python_text(expr: ast.Expr, leaf: Leaf, functions: Mapping[str, str]) -> str:
    """``expr`` as Python; ``leaf`` writes names (and anything else it takes over),
    ``functions`` maps each language function the caller can call to its Python name."""
    return _Printer(leaf, functions).text(expr)[0]


class _Printer:
    def __init__(self, leaf: Leaf, functions: Mapping[str, str]) -> None:
        self.leaf = leaf
        self.functions = functions

    def text(self, expr: ast.Expr) -> Printed:
        """The text and its binding strength (``PRECEDENCE``, ``ATOM``)."""
        own = self.leaf(expr, self.text)
        if own is not None:
            return own
        if isinstance(expr, ast.Number):
            return repr(expr.value), ATOM if expr.value >= 0 else PRECEDENCE["unary"]
        if isinstance(expr, ast.Bool | ast.String):
            return repr(expr.value), ATOM
        if isinstance(expr, ast.NoneLit):
            return "None", ATOM
        if isinstance(expr, ast.TupleExpr):
            items = [self.text(i)[0] for i in expr.items]
            return ("(" + items[0] + ",)" if len(items) == 1 else f"({', '.join(items)})"), ATOM
        if isinstance(expr, ast.ListExpr):
            return f"[{', '.join(self.text(i)[0] for i in expr.items)}]", ATOM
        if isinstance(expr, ast.BinOp):
            binds = PRECEDENCE[expr.op]
            right_assoc = expr.op == "**"
            left = self.operand(expr.left, binds, strict=right_assoc)
            right = self.operand(expr.right, binds, strict=not right_assoc)
            return f"{left} {expr.op} {right}", binds
        if isinstance(expr, ast.UnaryOp):
            binds = PRECEDENCE["unary"]
            return f"{expr.op}{self.operand(expr.operand, binds, strict=False)}", binds
        if isinstance(expr, ast.Compare):
            binds = PRECEDENCE["cmp"]
            left = self.operand(expr.left, binds, strict=True)
            right = self.operand(expr.right, binds, strict=True)
            return f"{left} {expr.op} {right}", binds
        if isinstance(expr, ast.BoolOp):
            binds = PRECEDENCE[expr.op]
            left = self.operand(expr.left, binds, strict=False)
            right = self.operand(expr.right, binds, strict=True)
            return f"{left} {expr.op} {right}", binds
        if isinstance(expr, ast.Not):
            flipped = (
                _FLIPPED.get(expr.operand.op) if isinstance(expr.operand, ast.Compare) else None
            )
            if flipped is not None and isinstance(expr.operand, ast.Compare):  # q not in (0, 5)
                return self.text(
                    ast.Compare(flipped, expr.operand.left, expr.operand.right, expr.operand.span)
                )
            binds = PRECEDENCE["not"]
            if isinstance(expr.operand, ast.BoolOp):  # negated part by part where it reads so
                negated = negation(self.text(expr.operand)[0])
                return negated, _binding(negated)
            return f"not {self.operand(expr.operand, binds, strict=False)}", binds
        if isinstance(expr, ast.IfExp):
            body = self.operand(expr.body, CONDITIONAL + 1, strict=True)
            test = self.operand(expr.test, CONDITIONAL + 1, strict=True)
            orelse = self.operand(expr.orelse, CONDITIONAL, strict=False)
            return f"{body} if {test} else {orelse}", CONDITIONAL
        if isinstance(expr, ast.Subscript):
            value = self.operand(expr.value, ATOM, strict=False)
            return f"{value}[{self.text(expr.index)[0]}]", ATOM
        if isinstance(expr, ast.Call) and not expr.suffixes and expr.layer is None:
            func = self.functions.get(expr.func)
            if func is None:
                # repeat(Res(w), n + i): a block built inside an argument, not a number
                raise NotPython(
                    f"'{expr.func}(...)' at {expr.span} is called inside an argument, where"
                    " only functions of numbers are written; call it in a chain of its own"
                    f" ('x -> {expr.func}(...)'), in a loop to repeat it"
                )
            args = [self.text(a)[0] for a in expr.args]
            args += [f"{k.name}={self.text(k.value)[0]}" for k in expr.keywords]
            return f"{func}({', '.join(args)})", ATOM
        if isinstance(expr, ast.Name):
            raise NotPython(f"the name '{expr.id}' has no Python value here")
        raise NotPython(f"the expression {type(expr).__name__} is not written in Python here")

    def operand(self, expr: ast.Expr, binds: int, *, strict: bool) -> str:
        text, tight = self.text(expr)
        return f"({text})" if tight < binds or (strict and tight == binds) else text


def kind_compare(
    expr: ast.Expr, text: Callable[[ast.Expr], Printed], kinded: frozenset[str]
) -> Printed | None:
    """``p == 1`` or ``p == true`` as the language compares them, for a parameter a boolean
    and a number may both reach (``untaken.kind_blind``): a boolean never equals a number,
    where Python's ``True == 1`` holds (a class built with ``p=True`` took the branch of 1).
    Decided by the value the other side has (a literal, a constant, ``1 - 1``), or the
    kinds compared too where it is another such parameter; ``p == 0 or p == 5`` as one
    membership test (``kinds.member_text``). None for any other expression: Python's
    comparison is the language's there (``p == 4``). The texts are ``kinds``'s."""
    if isinstance(expr, ast.BoolOp):
        return _kind_member(expr, text, kinded)
    if not isinstance(expr, ast.Compare) or expr.op not in ("==", "!="):
        return None
    equal = expr.op == "=="
    for side, other in ((expr.left, expr.right), (expr.right, expr.left)):
        if not (isinstance(side, ast.Name) and side.id in kinded):
            continue
        subject = text(side)[0]
        value = _constant_value(text(other)[0])
        if is_flag(value):  # p is True: True is neither 1 nor 1.0
            return identity_text(subject, value, equal), PRECEDENCE["cmp"]
        if differs(value):  # 0 or 1, which False and True equal
            number = _operand(text(other), PRECEDENCE["cmp"])
            typed, joined = equal_text(subject, number, value, equal)
            return typed, PRECEDENCE[joined]
        if isinstance(other, ast.Name) and other.id in kinded and other.id != side.id:
            typed, joined = kinds_equal_text(subject, text(other)[0], equal)
            return typed, PRECEDENCE[joined]
    return None


def _kind_member(
    expr: ast.BoolOp, text: Callable[[ast.Expr], Printed], kinded: frozenset[str]
) -> Printed | None:
    """``p == 0 or p == 5`` (every operand an equality of one such parameter with a
    number, one of them 0 or 1) as ``p in (0, 5) and p is not False``; else None."""
    if expr.op != "or":
        return None
    operands: list[ast.Expr] = []
    pending: list[ast.Expr] = [expr]
    while pending:  # the or's operands, left to right
        part = pending.pop()
        if isinstance(part, ast.BoolOp) and part.op == "or":
            pending += [part.right, part.left]
        else:
            operands.append(part)
    subjects: dict[str, ast.Expr] = {}
    numbers: list[str] = []
    values: list[object] = []
    for part in operands:
        if not (isinstance(part, ast.Compare) and part.op == "=="):
            return None
        side, other = (
            (part.left, part.right) if isinstance(part.left, ast.Name) else (part.right, part.left)
        )
        if not (isinstance(side, ast.Name) and side.id in kinded):
            return None
        value = _constant_value(text(other)[0])
        if not is_number(value):
            return None
        subjects[side.id] = side
        numbers.append(_operand(text(other), PRECEDENCE["cmp"]))
        values.append(value)
    if len(subjects) != 1 or not any(differs(v) for v in values):
        return None
    member, joined = member_text(text(next(iter(subjects.values())))[0], numbers, values)
    return member, PRECEDENCE[joined]


def _constant_value(text: str) -> object:
    """The value of a printed expression that reads no name (``1 - 1``), else None."""
    if "**" in text:  # a power may take long to evaluate: not told
        return None
    try:
        return eval(text, {"__builtins__": {}}, {})  # noqa: S307 (literals and operators only)
    except Exception:  # a name, a function: not a constant here
        return None


def _operand(printed: Printed, binds: int) -> str:
    text, tight = printed
    return f"({text})" if tight <= binds else text


_OPPOSITES: dict[type[pyast.cmpop], str] = {
    pyast.Eq: "!=",
    pyast.NotEq: "==",
    pyast.In: "not in",
    pyast.NotIn: "in",
    pyast.Is: "is not",
    pyast.IsNot: "is",
}


def negation(condition: str) -> str:
    """``k not in [5, 1]`` for ``k in [5, 1]``, as one writes it; an ``and`` or ``or`` of
    such tests each negated (``p != 1 or p is True`` for ``p == 1 and p is not True``,
    ``kinds.equal_text``); ``not (...)`` otherwise (an order comparison keeps its
    ``not``: its operands need not be ordered numbers)."""
    test = pyast.parse(condition, mode="eval").body
    if isinstance(test, pyast.UnaryOp) and isinstance(test.op, pyast.Not):
        return pyast.get_source_segment(condition, test.operand) or f"not ({condition})"
    if isinstance(test, pyast.BoolOp):
        parts = [pyast.get_source_segment(condition, value) or "" for value in test.values]
        negated = [_flipped(part) for part in parts]
        if all(negated):  # each an atom or a comparison: no parentheses needed
            return (" or " if isinstance(test.op, pyast.And) else " and ").join(map(str, negated))
        return f"not ({condition})"
    return _flipped(condition) or f"not ({condition})"


def _flipped(condition: str) -> str | None:
    """``condition`` negated without ``not (...)`` and binding as tightly as a
    comparison: a comparison flipped (``!=`` for ``==``), ``not f(x)`` for a name or
    call, ``x`` for ``not x`` where ``x`` is such; None otherwise."""
    test = pyast.parse(condition, mode="eval").body
    if isinstance(test, pyast.UnaryOp) and isinstance(test.op, pyast.Not):
        if isinstance(test.operand, pyast.BoolOp | pyast.IfExp | pyast.Lambda):
            return None
        return pyast.get_source_segment(condition, test.operand)
    if isinstance(test, pyast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPPOSITES:
        left = pyast.get_source_segment(condition, test.left)
        right = pyast.get_source_segment(condition, test.comparators[0])
        return f"{left} {_OPPOSITES[type(test.ops[0])]} {right}"
    if isinstance(test, pyast.Name | pyast.Attribute | pyast.Call | pyast.Subscript):
        return f"not {condition}"
    return None


def _binding(text: str) -> int:
    """How tightly the Python expression ``text`` binds (``PRECEDENCE``): an ``or``, an
    ``and``, a ``not``, a comparison, else an atom's."""
    tree = pyast.parse(text, mode="eval").body
    if isinstance(tree, pyast.BoolOp):
        return PRECEDENCE["or" if isinstance(tree.op, pyast.Or) else "and"]
    if isinstance(tree, pyast.UnaryOp) and isinstance(tree.op, pyast.Not):
        return PRECEDENCE["not"]
    return PRECEDENCE["cmp"] if isinstance(tree, pyast.Compare) else ATOM
