"""Shared fixtures: the ../shared corpus (skipped with a reason when absent) and helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(REPO / "src"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "aurane", *args],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        env=full_env,
        input=input_text,
        timeout=120,
    )
