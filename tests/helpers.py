"""Small helpers for tests that run the front end on inline sources."""

from __future__ import annotations

import cProfile
import importlib
import pstats
import re
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

from aurane.diagnostics import Diagnostic
from aurane.frontend import FrontEnd, run_front_end

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
        "or",
        "not",
        "in",
        "if",
        "elif",
        "else",
        "for",
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


def calls_made(work: Callable[[], object]) -> int:
    """The Python and builtin function calls ``work()`` makes: a measure of work, not of time,
    so a limit on it holds on a busy machine (tests bound it instead of wall-clock seconds)."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        work()
    finally:
        profiler.disable()
    return int(pstats.Stats(profiler).total_calls)  # type: ignore[attr-defined]


def resized(text: str, sizes: Mapping[str, str], label: str) -> str:
    """``text`` with each top-level constant ``NAME = ...`` of ``sizes`` set to its value,
    and each other key (a literal such as ``(3, 224, 224)``) replaced where it occurs."""
    for key, value in sizes.items():
        if not key.isidentifier():
            assert key in text, (label, key)
            text = text.replace(key, value)
            continue
        text, count = re.subn(rf"^{re.escape(key)} = .*$", f"{key} = {value}", text, flags=re.M)
        assert count == 1, (label, key)
    return text


class LazyModule:
    """A module imported on its first attribute read. A heavy reference library that a
    few tests compare with (scikit-learn, torchmetrics: about 2 s each) is otherwise
    imported by every pytest-xdist worker at collection, whether or not it runs them."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):  # pytest's collection asks each name for __test__ and
            raise AttributeError(attr)  # its own markers; the libraries' API is public names
        return getattr(importlib.import_module(self._name), attr)
