"""Compile .aur sources to Python for the training tests and run the result."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from aurane.backends.torch import generate_torch
from aurane.compiler import run_front_end

REPO = Path(__file__).resolve().parents[2]


def compile_text(source: str, filename: str = "job.aur") -> str:
    front = run_front_end(textwrap.dedent(source).lstrip("\n"), filename)
    errors = [d for d in front.diagnostics if d.is_error]
    assert not errors, errors
    assert front.resolved is not None
    return generate_torch(front.resolved, front.graphs, filename=filename)


def write_program(folder: Path, source: str, name: str = "job") -> Path:
    path = folder / f"{name}.py"
    path.write_text(compile_text(source, f"{name}.aur"))
    return path


def env() -> dict[str, str]:
    paths = [str(REPO / "src"), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def run_python(
    code: str, cwd: Path, timeout: float = 120, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter in ``cwd`` (where the compiled program lives)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env={**env(), **(extra_env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
