"""Regressions found while reviewing the front end against SPEC sections 1-5 and 11."""

from __future__ import annotations

import pytest

from tests.helpers import only_error

MODEL = """
model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> {body}
"""


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("reshape(-1, -1)", "argument 'shape' of reshape may have at most one -1 size"),
        ("reshape(0, 3)", "argument 'shape' of reshape must have sizes that are positive or -1"),
    ],
)
def test_reshape_argument_messages_read_as_sentences(body: str, expected: str) -> None:
    found = only_error(MODEL.format(body=body))
    assert found.code == "S004"
    assert found.message.startswith(expected), found.message


@pytest.mark.parametrize(
    ("forward", "code", "written"),
    [
        ("y = dense(x, 4)\n        return y.relu", "S007", "relu(y)"),
        ("y = dense(x, 4)\n        return y.softmax(dim=-1)", "S001", "softmax(y)"),
        ("x -> x.relu", "S001", "relu(x)"),
    ],
)
def test_suffix_on_a_tensor_name_suggests_the_call_form(
    forward: str, code: str, written: str
) -> None:
    found = only_error(f"""
model Net:
    input_shape = (8,)
    def forward(x):
        {forward}
""")
    assert found.code == code
    assert found.hint is not None and written in found.hint, found.hint


@pytest.mark.parametrize(
    ("body", "hint"),
    [
        ("dense(4).relu(1)", "relu takes no arguments"),
        ("flatten(1)", "flatten takes no arguments"),
        ("dense(4).leaky_relu(0.2, 0.3)", "leaky_relu accepts only slope"),
    ],
)
def test_too_many_positional_arguments_hint_fits_the_operation(body: str, hint: str) -> None:
    found = only_error(MODEL.format(body=body))
    assert found.code == "S006"
    assert found.hint == hint


def test_bare_word_for_a_string_field_suggests_quoting() -> None:
    from tests.helpers import only_error, where

    found = only_error("""
        experiment E:
            precision = fp16
    """)
    assert found.code == "R001" and where(found) == (2, 17)
    assert found.hint == 'quote it: precision = "fp16"'


def test_tuple_elements_keep_their_own_spans() -> None:
    from tests.helpers import only_error

    found = only_error("""
        model M:
            input_shape = (3, 8, 8)
            def forward(x):
                x -> conv2d(4, stride=(1, 0))
    """)
    assert found.span is not None and found.span.line == 4
