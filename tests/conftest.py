"""Shared fixtures: the ../shared corpus (skipped with a reason when absent) and helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
EXAMPLES = REPO / "examples"
UPDATE_GOLDEN = os.environ.get("AURANE_UPDATE_GOLDEN") == "1"


def corpus_dir(kind: str) -> Path:
    path = CORPUS / kind
    if not path.is_dir():
        pytest.skip(f"../shared/corpus/{kind} not present (CI has it beside the checkout)")
    return path


def corpus_expected(kind: str) -> dict:  # type: ignore[type-arg]
    return json.loads((corpus_dir(kind) / "expected.json").read_text())


def corpus_files(kind: str) -> list[str]:
    path = CORPUS / kind
    if not path.is_dir():
        return []
    return sorted(p.name for p in path.glob("*.aur"))


def env(**extra: str) -> dict[str, str]:
    """The environment for a child interpreter: this checkout's ``src`` first on the path.

    An existing ``PYTHONPATH`` is kept after it; ``extra`` overrides any variable.
    """
    paths = [str(REPO / "src"), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p), **extra}


def run_python(
    code: str, cwd: Path, timeout: float = 120, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter in ``cwd`` (where the compiled program lives)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=env(**(extra_env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


_child_env = env  # run_cli's ``env`` argument shadows the function


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    full_env = _child_env(**(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "aurane", *args],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        env=full_env,
        input=input_text,
        timeout=120,
    )
