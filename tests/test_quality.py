"""The code base stays ruff- and mypy-clean (the same commands a developer runs)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _tool(name: str) -> list[str]:
    found = shutil.which(name, path=str(REPO / ".venv" / "bin")) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return [found]


def test_ruff_check_and_format() -> None:
    ruff = _tool("ruff")
    check = subprocess.run(
        [*ruff, "check", "src", "tests", "bench"], cwd=REPO, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = subprocess.run(
        [*ruff, "format", "--check", "src", "tests", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict() -> None:
    _tool("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
