"""Compile .aur sources to Python for the training tests and run the result."""

from __future__ import annotations

from pathlib import Path

from aurane.backends.torch import generate_torch
from aurane.backends.torch.runtime import standalone as make_standalone
from tests.conftest import env, run_python
from tests.helpers import front

__all__ = ["compile_text", "env", "run_python", "write_program"]


def compile_text(source: str, filename: str = "job.aur", *, standalone: bool = False) -> str:
    """The generated program; ``standalone`` copies the runtime in (``--standalone``)."""
    result = front(source, filename)
    errors = [d for d in result.diagnostics if d.is_error]
    assert not errors, errors
    assert result.resolved is not None
    code = generate_torch(result.resolved, result.graphs, filename=filename)
    return make_standalone(code) if standalone else code


def write_program(
    folder: Path, source: str, name: str = "job", *, standalone: bool = False
) -> Path:
    path = folder / f"{name}.py"
    path.write_text(compile_text(source, f"{name}.aur", standalone=standalone))
    return path
