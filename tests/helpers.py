"""Small helpers for tests that run the front end on inline sources."""

from __future__ import annotations

import textwrap

from aurane.compiler import FrontEnd, run_front_end
from aurane.diagnostics import Diagnostic

# Words the parser reserves: generated identifiers must avoid them.
RESERVED_WORDS = frozenset(
    {
        "true",
        "false",
        "none",
        "null",
        "return",
        "def",
        "from",
        "use",
        "model",
        "dataset",
        "experiment",
        "train",
        "train_gan",
        "and",
        "on",
        "as",
        "True",
        "False",
        "None",
    }
)


def front(source: str, filename: str = "t.aur") -> FrontEnd:
    return run_front_end(textwrap.dedent(source).lstrip("\n"), filename)


def errors(source: str) -> list[Diagnostic]:
    return [d for d in front(source).diagnostics if d.is_error]


def only_error(source: str) -> Diagnostic:
    found = errors(source)
    assert len(found) == 1, found
    return found[0]


def codes(source: str) -> list[str]:
    return [d.code for d in front(source).diagnostics]


def where(diagnostic: Diagnostic) -> tuple[int, int]:
    assert diagnostic.span is not None
    return diagnostic.span.line, diagnostic.span.column
