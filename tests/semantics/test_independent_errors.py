"""One run, every independent error (issue 11 item 2): a stage's errors do not hide those
of later stages in parts that do not depend on them, and nothing is reported twice."""

from __future__ import annotations

from aurane.diagnostics import Diagnostic
from tests.helpers import errors, front


def located(found: list[Diagnostic]) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.column) for d in found if d.span is not None]


ISSUE_EXAMPLE = """\
model Net:
    input_shape = (4,)
    def forward(x):
        h = dense(x, widht)
        h = densee(h, 4)
        return dense(h, 2, biass=false)
train Net on nowhere:
    epochs = 1
"""


def test_undefined_constant_misspelt_operation_keyword_and_dataset() -> None:
    """The issue's example: only the first (R001) was reported."""
    result = front(ISSUE_EXAMPLE)
    assert located(result.diagnostics) == [
        ("R001", 4, 22),
        ("S001", 5, 13),
        ("S002", 6, 28),
        ("S012", 7, 14),
    ]
    assert result.failed_stage == "resolve"


def test_resolve_errors_do_not_hide_shape_errors_of_other_models() -> None:
    source = """\
width = 8
model A:
    input_shape = (4,)
    def forward(x):
        return dense(x, undefined_width)
model B:
    input_shape = (4,)
    def forward(x):
        h = dense(x, width)
        return add(h, x)
model C:
    input_shape = (4,)
    def forward(x):
        return A(x)
"""
    assert located(errors(source)) == [("R001", 5, 25), ("T001", 10, 16)]


def test_an_unresolved_value_is_reported_once() -> None:
    """dense(x, widht) was R001 and S003 'must be a literal' on the same argument."""
    source = "model Net:\n    input_shape = (4,)\n    def forward(x):\n        return dense(x, w)\n"
    assert located(errors(source)) == [("R001", 4, 25)]


def test_a_constant_that_failed_is_not_reported_where_it_is_used() -> None:
    source = (
        "a = b + 1\n"
        "model Net:\n    input_shape = (4,)\n    def forward(x):\n        return dense(x, a)\n"
    )
    assert located(errors(source)) == [("R001", 1, 5)]


def test_unresolved_job_fields_are_reported_once_each() -> None:
    source = """\
dataset d:
    from aurane.data.SyntheticImages
    size = nsize
    batch = bsz
model Net:
    input_shape = (1, 28, 28)
    def forward(x):
        return dense(flatten(x), 10)
train Net on d:
    epochs = nepochs
    checkpoint_dir = somewhere
    optimizer = adam(lr=rate)
"""
    assert [c for c, _, _ in located(errors(source))] == ["R001"] * 5


def test_unknown_operation_leaves_its_arguments_unchecked() -> None:
    """`multiply(a, b)` with multiply unknown reported "undefined name 'b'" (issue 11).

    multiply has since become a catalog operation, so a made-up name stands in for it."""
    source = (
        "model Net:\n    input_shape = (4,)\n    def forward(x):\n"
        "        a = dense(x, 4)\n        return multiplyy(a, b)\n"
    )
    found = errors(source)
    assert located(found) == [("S001", 5, 16)]
    assert "multiply" in (found[0].hint or "")


def test_unknown_operation_keywords_and_nested_calls_are_unchecked() -> None:
    source = (
        "model Net:\n    input_shape = (4,)\n    def forward(x):\n"
        "        return multiplyy(x, c=b, d=dense(q, 3))\n"
    )
    assert located(errors(source)) == [("S001", 4, 16)]


def test_unknown_operation_in_a_chain() -> None:
    source = (
        "model Net:\n    input_shape = (4,)\n    def forward(x):\n"
        "        x -> densse(units) -> dense(2, biass=true)\n"
    )
    assert [c for c, _, _ in located(errors(source))] == ["S001", "S002"]
