"""The one printer of source expressions as Python (backends/torch/pyexpr.py): the text
computes the expression's value, parentheses where Python's precedence needs them."""

from __future__ import annotations

import math

import pytest

from aurane.backends.torch.pyexpr import ATOM, NotPython, python_text
from aurane.semantics.symbolic import PRINTED
from aurane.syntax import ast
from aurane.syntax.parser import parse_program

CASES = {
    "2 ** 3 ** 2": 512,
    "(2 ** 3) ** 2": 64,
    "7 - (3 - 1)": 5,
    "-(2 + 3) * 4": -20,
    "(1 + 2) * (3 + 4) // 5": 4,
    "true or (false and true)": True,
    "not (1 < 2) or 3 >= 3": True,
    "(1 if 2 > 3 else 4) + 1": 5,
    "[1, 2, 3][1 + 1]": 3,
    "(5,)[0] + ceil(2.5) + max(1, 7 // 2)": 11,
    "width * 2 - 1": 15,
}


def _expr(text: str) -> ast.Expr:
    program, diagnostics = parse_program(f"value = {text}\n", "case.aur")
    assert program is not None and not diagnostics, diagnostics
    statement = program.statements[0]
    assert isinstance(statement, ast.Constant)
    return statement.value


def _width(expr: ast.Expr, _text: object) -> tuple[str, int] | None:
    return ("width", ATOM) if isinstance(expr, ast.Name) and expr.id == "width" else None


@pytest.mark.parametrize("source", sorted(CASES))
def test_python_text_computes_the_source_value(source: str) -> None:
    text = python_text(_expr(source), _width, PRINTED)
    assert eval(text, {"math": math, "max": max, "width": 8}) == CASES[source]  # noqa: S307
    # parenthesised where needed only: printing the printed text again changes nothing
    aurane = text.replace("True", "true").replace("False", "false").replace("math.", "")
    assert python_text(_expr(aurane), _width, PRINTED) == text


@pytest.mark.parametrize("source", ["other + 1", "floor(1.5)", "x.shape[2]"])
def test_what_the_caller_cannot_write_is_refused(source: str) -> None:
    with pytest.raises(NotPython):
        python_text(_expr(source), _width, {"ceil": "math.ceil"})
