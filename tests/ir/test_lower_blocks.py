"""Errors inside a block name the call whose input shape produced them."""

from __future__ import annotations

from tests.helpers import errors


def test_error_inside_a_block_gets_a_label_at_the_call() -> None:
    found = errors(
        """
        model Bad:
            def forward(x):
                x -> conv2d(3, 3)

        model Net:
            input_shape = (8,)
            def forward(x):
                return x -> Bad
    """
    )
    assert len(found) == 1, found
    error = found[0]
    assert (error.code, error.stage, error.severity) == ("T002", "type", "error")
    assert error.span is not None and error.span.line == 3
    assert [label.message for label in error.labels] == [
        "input (8,) from the call at 8:21",
        "block called here with input (8,)",
    ]
    assert (error.labels[-1].span.line, error.labels[-1].span.column) == (8, 21)
