"""The refusals a generated class opens ``__init__`` with, written in one place
(``backends/torch/refusals.py``), and three defects around them: a row's block that none
of the calls' rows give raised ``AttributeError`` (now a named ``ValueError``); a
network's branch no variant takes was written ``elif mode == 2: pass`` beside the refusal
of its arguments (now it goes); a lowering at arguments no call gives swallowed every
exception as "no phantom" (now a bug surfaces)."""

from __future__ import annotations

import ast as pyast

import pytest

torch = pytest.importorskip("torch")

from aurane.backends.torch.modules import INDENT, LINE_LIMIT  # noqa: E402
from aurane.backends.torch.refusals import refusal  # noqa: E402


def _refused(lines: list[str], **given: object) -> str:
    """The message ``lines`` (a refusal, at the top of ``__init__``) raise at ``given``."""
    params = ", ".join(given)
    source = "\n".join([f"{INDENT}def __init__(self, {params}):", *lines])
    namespace: dict[str, object] = {}
    exec(f"class Fam:\n{source}\n", namespace)  # noqa: S102 - the lines written here
    with pytest.raises(ValueError) as raised:
        namespace["Fam"](**given)  # type: ignore[operator]
    return str(raised.value)


def test_a_value_refused_reads_as_hand_written() -> None:
    lines = refusal("Fam0", "n != 2", "for n == 2", "its loops are written out for this value", "n")
    assert lines == [
        "        if n != 2:  # its loops are written out for this value",
        '            raise ValueError(f"Fam0 is written for n == 2, not {n}")',
    ]
    assert _refused(lines, n=3) == "Fam0 is written for n == 2, not 3"


def test_a_body_refused_says_what_the_class_is_written_without() -> None:
    """No arguments shown: a plain string, not an f-string."""
    said = "without the branch at 6:9, which no call takes"
    lines = refusal("Fam", "mode == 2", said, "no call takes it: not written")
    assert lines[1] == (
        '            raise ValueError("Fam is written without the branch at 6:9, which no call takes")'
    )
    assert _refused(lines, mode=2) == f"Fam is written {said}"


def test_a_long_refusal_wraps_as_black_does() -> None:
    """A test and message too long for one line: the comment above the test, the message
    on a line of its own (a value set's was one line of 120 characters, as fuzz seed
    91000225 shows)."""
    rows = "((8, nn.Sigmoid), (2, nn.Tanh), (3, nn.SiLU))"
    lines = refusal("Fam0_3", f"tuple(rows1) != {rows}", f"for rows1 == {rows}", "x" * 40, "rows1")
    assert lines[0] == f"        # {'x' * 40}"
    assert lines[2] == "            raise ValueError("
    assert lines[-1] == "            )"
    # black leaves a string too long as it is; every other line fits
    assert all(len(line) <= LINE_LIMIT for line in lines if "is written" not in line), lines
    pyast.parse("def f(rows1):\n" + "\n".join(lines))


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ('for act == "relu"', "gelu"),  # double quotes: in single ones
        ("for act in ('relu', \"gelu\")", "tanh"),  # both: the double ones escaped
        ("for rows == {1: 2}", "x"),  # braces: the f-string's own doubled
    ],
)
def test_a_message_holding_quotes_or_braces_is_python(said: str, value: str) -> None:
    lines = refusal("Fam", "True", said, "written out for this value", "act")
    assert _refused(lines, act=value) == f"Fam is written {said}, not {value}"
