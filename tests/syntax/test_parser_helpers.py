"""Parser plumbing: the paused collector, the program span, ``name = value`` lines."""

from __future__ import annotations

import gc

import pytest

from aurane.frontend import run_front_end
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.gc_pause import paused_gc
from aurane.syntax.parser import parse_program
from aurane.syntax.tokens import tokenize


@pytest.fixture
def collector():  # type: ignore[no-untyped-def]
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.usefixtures("collector")
def test_paused_gc_nests_and_restores() -> None:
    gc.enable()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause found it disabled
    assert gc.isenabled()


@pytest.mark.usefixtures("collector")
def test_paused_gc_keeps_a_disabled_collector_disabled_and_survives_errors() -> None:
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()
    gc.enable()
    with pytest.raises(ValueError), paused_gc():
        raise ValueError
    assert gc.isenabled()


@pytest.mark.usefixtures("collector")
def test_front_end_stages_leave_the_collector_enabled() -> None:
    gc.enable()
    tokenize("x = 1\n")
    parse_program("x = 1\n")
    run_front_end("x = 1\n")
    assert gc.isenabled()


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("", Span(1, 1, 1, 1)),
        ("\ufeff", Span(1, 1, 1, 1)),
        ("\ufeffx = 1", Span(1, 1, 1, 6)),
        ("x = 1\n", Span(1, 1, 2, 1)),
        ("x = 1\r\ny = 22", Span(1, 1, 2, 7)),
        ("x = 1\ry = 2\r", Span(1, 1, 3, 1)),
        ("x = 1\n\ufeffy = 2", Span(1, 1, 2, 7)),  # only a leading BOM is dropped
        ("größe = 1", Span(1, 1, 1, 10)),
    ],
)
def test_program_span_ends_at_the_last_line(text: str, span: Span) -> None:
    program, _ = parse_program(text)
    assert program is not None
    assert program.span == span


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x =\n", "expected a value after 'x =', found the end of the line"),
        ("x = 1 2\n", "unexpected '2' after the value of 'x'; expected the end of the line"),
        (
            "train M on d:\n    lr =\n",
            "expected a value after 'lr =', found the end of the line",
        ),
        (
            "model M:\n    def forward(x):\n        y = x -> relu :\n",
            "unexpected ':' after the value of 'y'; only block headers end in ':'",
        ),
    ],
)
def test_assignment_errors_name_the_assigned_name(source: str, message: str) -> None:
    _, diagnostics = parse_program(source)
    assert [d.message for d in diagnostics if d.code == "P006"] == [message]


def test_constants_fields_and_assignments_share_one_shape() -> None:
    program, diagnostics = parse_program(
        "k = 2\ntrain M on d:\n    lr = k\nmodel M:\n    def forward(x):\n        y = x\n"
    )
    assert diagnostics == [] and program is not None
    constant, train, model = program.statements
    assert constant == ast.Constant("k", Span(1, 1, 1, 2), constant.value, Span(1, 1, 1, 6))
    assert isinstance(train, ast.Train) and train.fields[0].span == Span(3, 5, 3, 11)
    assert isinstance(model, ast.Model) and model.forward is not None
    assign = model.forward.body[0]
    assert isinstance(assign, ast.Assign)
    assert (assign.target, assign.target_span, assign.span) == (
        "y",
        Span(6, 9, 6, 10),
        Span(6, 9, 6, 14),
    )
