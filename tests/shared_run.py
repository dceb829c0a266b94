"""One costly run (a torchrun launch, a training) shared by the tests that check it.

A module-scoped fixture runs once per pytest-xdist worker, and ``--dist worksteal`` may hand
a module's tests to several workers: ``run_once`` fills its folder once per session, under
a file lock in the folder the workers share (pytest-xdist's recipe for session fixtures),
and the other workers read the files it left.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def run_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, fill: Callable[[Path], None]
) -> Path:
    """The folder ``name`` after ``fill(folder)`` ran in it, once in this test session."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER") is not None:
        root = root.parent  # the session's folder, above each worker's own
    folder = root / name
    with FileLock(str(root / f"{name}.lock")):
        if not (folder / ".done").exists():
            if folder.exists():  # a try that failed in another worker: start again
                shutil.rmtree(folder)
            folder.mkdir()
            fill(folder)
            (folder / ".done").touch()
    return folder
