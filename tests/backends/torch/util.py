"""Helpers for torch backend tests: compile inline sources, load generated code."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

from aurane.backends.torch import TorchCodeGenerator
from aurane.frontend import FrontEnd
from tests.conftest import VALID, corpus_files
from tests.helpers import front


def front_end(source: str, filename: str = "t.aur") -> FrontEnd:
    fe = front(source, filename)
    errors = [str(d.message) for d in fe.diagnostics if d.is_error]
    assert not errors, errors
    return fe


def generate(source: str, filename: str = "t.aur") -> tuple[FrontEnd, TorchCodeGenerator, str]:
    fe = front_end(source, filename)
    assert fe.resolved is not None
    generator = TorchCodeGenerator(fe.resolved, fe.graphs, filename=filename)
    return fe, generator, generator.generate()


def load(code: str, name: str = "aurane_generated") -> types.ModuleType:
    """Execute generated code in a fresh module namespace."""
    module = types.ModuleType(name)
    exec(compile(code, f"<{name}>", "exec"), module.__dict__)
    return module


def corpus_sources() -> list[str]:
    return corpus_files("valid")


def corpus_path(name: str) -> Path:
    return VALID / name


def aur_literal(value: Any) -> str:
    """An Aurane literal for a Python value (test programs are built from catalog samples)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "None"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, tuple | list):
        items = ", ".join(aur_literal(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    return repr(value)


def numel(shape: tuple[int, ...]) -> int:
    total = 1
    for dim in shape:
        total *= dim
    return total
