"""``fast_new``: the parser's fast constructors build exactly what the dataclass would."""

from __future__ import annotations

import dataclasses

import pytest

from aurane.source import Span
from aurane.syntax import ast, blocks, exprs
from aurane.syntax.exprs import fast_new

S = Span(1, 2, 3, 4)
N = ast.Name("x", S)
CASES = [
    (exprs.new_span, Span, (1, 2, 3, 4)),
    (exprs._NAME_NODE, ast.Name, ("x", S)),
    (exprs._NUMBER_NODE, ast.Number, (1.5, "1.5", S)),
    (exprs._BINOP, ast.BinOp, ("+", N, N, S)),
    (exprs._CALL, ast.Call, ("f", S, (N,), (), (), S)),
    (exprs._SUFFIX, ast.Suffix, ("relu", S, (), (), False, S)),
    (exprs._KEYWORD, ast.Keyword, ("k", S, N, S)),
    (exprs._CHAIN, ast.Chain, (N, (), S)),
    (blocks._ASSIGN, ast.Assign, ("a", S, N, S)),
    (blocks._CHAIN_STMT, ast.ChainStmt, (ast.Chain(N, (), S), S)),
    (blocks._FIELD, ast.Field, ("a", S, N, S)),
]


@pytest.mark.parametrize(("make", "cls", "args"), CASES, ids=[c[1].__name__ for c in CASES])
def test_same_object_as_the_dataclass(make: object, cls: type, args: tuple[object, ...]) -> None:
    assert callable(make)
    made, built = make(*args), cls(*args)
    assert type(made) is cls
    assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
    fields = dataclasses.fields(cls)
    assert [getattr(made, f.name) for f in fields] == list(args)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, fields[0].name, None)


def test_refuses_classes_with_init_logic() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            assert self.a >= 0

    @dataclasses.dataclass(slots=True)
    class Mutable:
        a: int

    with pytest.raises(TypeError):
        fast_new(Checked)
    with pytest.raises(TypeError):
        fast_new(Mutable)
